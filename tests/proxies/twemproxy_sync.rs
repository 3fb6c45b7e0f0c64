//! The real nutcracker (twemproxy 0.5) kept on the ring by `ringd sync`:
//! the agent writes the whole YAML file, checks it with `nutcracker -t`
//! and, since nutcracker cannot reload, restarts it. In front of 42 real
//! memcached processes, half on port 11211 of their own loopback address
//! (nutcracker names them by the host alone), half on other ports (named
//! `host:port`). After each ack every key is `set` through nutcracker and
//! each memcached is asked which keys it holds: each key must be on
//! exactly one, the owner ringd names.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::backends::{host_with_11211_free, memcached, Memcache};
use super::loopback::{free_port, one_test_at_a_time, Running};
use super::sync_cases;
use super::sync_driver::{drive, node, Proxy, Synced};
use super::twemproxy::keys;

/// nutcracker, started and restarted by the reload script, as a daemon.
pub(crate) struct Nutcracker {
    dir: PathBuf,
    listen: SocketAddrV4,
    /// Every memcached, by address.
    servers: Vec<SocketAddr>,
}

impl Nutcracker {
    fn pid_file(&self) -> PathBuf {
        self.dir.join("nutcracker.pid")
    }
}

impl Drop for Nutcracker {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.pid_file()) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

impl Proxy for Nutcracker {
    fn format(&self) -> &'static str {
        "twemproxy"
    }

    fn export_args(&self) -> Vec<String> {
        vec!["--listen".into(), self.listen.to_string()]
    }

    fn check_command(&self) -> String {
        "nutcracker -t -c \"$RINGD_FILE\"".into()
    }

    fn reload_command(&self) -> String {
        format!("sh {}/restart.sh", self.dir.display())
    }

    fn start(&mut self, file: &Path) {
        // Stops the running nutcracker (if any) and waits for its exit,
        // starts one on the file and waits until it listens. The daemon's
        // parent is the machine's init, which may reap it late: a zombie
        // has exited and holds no port, so it counts as gone.
        let stats = free_port(Ipv4Addr::LOCALHOST);
        let script = format!(
            "pid_file={d}/nutcracker.pid\n\
             if [ -s \"$pid_file\" ]; then\n\
             \x20 pid=$(cat \"$pid_file\"); kill \"$pid\" 2>/dev/null\n\
             \x20 for _ in $(seq 1000); do ps -o stat= -p \"$pid\" | grep -qv Z || break; sleep 0.01; done\n\
             fi\n\
             nutcracker -d -c {file} -p \"$pid_file\" -o {d}/nutcracker.log \
             -a 127.0.0.1 -s {stats} || exit 1\n\
             for _ in $(seq 1000); do\n\
             \x20 ss -Hltn 'sport = :{port}' | grep -q . && exit 0\n\
             \x20 sleep 0.01\n\
             done\n\
             echo 'nutcracker is not listening on {listen}' >&2; exit 1\n",
            d = self.dir.display(),
            file = file.display(),
            port = self.listen.port(),
            listen = self.listen,
        );
        let restart = self.dir.join("restart.sh");
        std::fs::write(&restart, script).expect("the restart script");
        let started = Command::new("sh").arg(&restart).status().expect("sh runs");
        assert!(started.success(), "nutcracker did not start");
    }

    fn keys(&self, seed: u64) -> Vec<Vec<u8>> {
        keys(seed)
    }

    fn reaches(&mut self, key: &[u8], address: &str) -> Option<bool> {
        // Stored through nutcracker, then looked for on that server alone.
        if !Memcache::try_connect(self.listen.into())?.try_set(key) {
            return None;
        }
        let server: SocketAddr = address.parse().expect("a socket address");
        let held = Memcache::connect(server).held(&[key.to_vec()]);
        Some(!held.is_empty())
    }

    fn answers(&mut self, keys: &[Vec<u8>]) -> Vec<String> {
        for &server in &self.servers {
            Memcache::connect(server).flush_all();
        }
        Memcache::connect(self.listen.into()).set_all(keys);
        let index: HashMap<&[u8], usize> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_slice(), i))
            .collect();
        let mut held: Vec<Option<SocketAddr>> = vec![None; keys.len()];
        for &server in &self.servers {
            for k in Memcache::connect(server).held(keys) {
                let i = index[k.as_slice()];
                assert_eq!(held[i], None, "a key on {server} and {:?}", held[i]);
                held[i] = Some(server);
            }
        }
        held.into_iter()
            .map(|s| s.map_or_else(|| "nowhere".to_owned(), |s| s.to_string()))
            .collect()
    }
}

/// 42 memcached: even slots on port 11211 of 127.0.0.x, odd ones on
/// another port of 127.0.0.1.
fn memcached_fleet(dir: &Path) -> (Vec<Running>, Vec<SocketAddr>) {
    let mut next_host = 2;
    let mut processes = Vec::new();
    let mut addresses = Vec::new();
    for i in 0..42 {
        let addr = if i % 2 == 0 {
            let ip = host_with_11211_free(next_host);
            next_host = ip.octets()[3] + 1;
            SocketAddr::from((ip, 11211))
        } else {
            SocketAddr::from((Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST)))
        };
        processes.push(memcached(addr, &dir.join(format!("memcached-{i}.log"))));
        addresses.push(addr);
    }
    (processes, addresses)
}

/// The memcached processes and the directory of them and nutcracker.
pub(crate) type Backends = (Vec<Running>, tempfile::TempDir);

/// A synced nutcracker on the first memcached (`n00`, weight 3), with
/// `{}` hash tags; the backends and their addresses, which outlive it.
pub(crate) fn synced(reload_prefix: &str) -> (Synced<Nutcracker>, Backends, Vec<String>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (processes, servers) = memcached_fleet(dir.path());
    let addresses: Vec<String> = servers.iter().map(ToString::to_string).collect();
    let proxy = Nutcracker {
        dir: dir.path().to_owned(),
        listen: SocketAddrV4::new(Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST)),
        servers,
    };
    let s = Synced::start(
        proxy,
        json!({"hash_tag": "{}"}),
        vec![node("n00", &addresses[0], 3)],
        reload_prefix,
    );
    (s, (processes, dir), addresses)
}

#[test]
fn nutcracker_follows_every_version_ringd_sync_acks() {
    let _one = one_test_at_a_time();
    let (mut s, _backends, addresses) = synced("");
    // n08 is on port 11211, so nutcracker names it by its host: the
    // replacement at another address takes that name as its `hash_key`.
    let name = addresses[8].trim_end_matches(":11211").to_owned();
    drive(&mut s, &addresses, (addresses[41].clone(), Some(name)));
    sync_cases::bad_nodes_change_nothing(
        &mut s,
        &[
            ("hash_key", json!("cache 1")),
            ("hash_key", json!("a\nb")),
            ("address", json!("10.0.0.9:11211\n  - 10.0.0.10:11211:1")),
            ("address", json!("cache-1:11211:1 evil")),
        ],
    );
    println!(
        "twemproxy through ringd sync: {} keys, 0 disagreements",
        s.checked
    );
}

#[test]
fn a_killed_nutcracker_agent_leaves_a_whole_file() {
    let _one = one_test_at_a_time();
    let (mut s, _backends, addresses) = synced("");
    sync_cases::killed_agents(&mut s, &addresses);
}

#[test]
fn a_rollout_step_waits_for_nutcracker_to_restart() {
    let _one = one_test_at_a_time();
    let (hold, prefix) = sync_cases::reload_hold("nutcracker");
    let (mut s, _backends, addresses) = synced(&prefix);
    sync_cases::gated_rollout(&mut s, &addresses, &hold);
}
