//! The real HAProxy kept on the ring by `ringd sync`: HAProxy in
//! master-worker mode (as Debian's unit runs it) reading its main file and
//! the backend file the agent writes, checked with `haproxy -c` and
//! reloaded with SIGUSR2 to the master, in front of loopback servers that
//! answer with their own address. Every version the agent acks is checked
//! key by key through it.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::backends::{synced_over_http, HttpBackends};
use super::haproxy::keys;
use super::loopback::{answers_of, free_port, one_test_at_a_time, KeyClient, Running};
use super::sync_cases;
use super::sync_driver::{drive, reload_script, Proxy, Synced, KEYS};

/// `haproxy -W` on loopback.
pub(crate) struct Haproxy {
    dir: PathBuf,
    front: SocketAddrV4,
    process: Option<Running>,
}

impl Haproxy {
    fn new(dir: &Path) -> Self {
        let dir = dir.join("haproxy");
        std::fs::create_dir_all(&dir).expect("a directory");
        Self {
            dir,
            front: SocketAddrV4::new(Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST)),
            process: None,
        }
    }

    fn main_file(&self) -> PathBuf {
        self.dir.join("haproxy.cfg")
    }
}

impl Proxy for Haproxy {
    fn format(&self) -> &'static str {
        "haproxy"
    }

    fn export_args(&self) -> Vec<String> {
        Vec::new()
    }

    fn check_command(&self) -> String {
        format!(
            "haproxy -c -f {} -f \"$RINGD_FILE\"",
            self.main_file().display()
        )
    }

    fn reload_command(&self) -> String {
        format!("sh {}/reload.sh", self.dir.display())
    }

    fn start(&mut self, file: &Path) {
        let config = format!(
            "global\n  maxconn 512\ndefaults\n  mode http\n  timeout connect 5s\n  \
             timeout client 30s\n  timeout server 30s\n\
             frontend keys\n  bind {}\n  default_backend cache\n",
            self.front
        );
        std::fs::write(self.main_file(), config).expect("the main file");
        let pid = self.dir.join("haproxy.pid");
        let reload = reload_script(&pid, "kill -USR2 \"$master\"", "haproxy");
        std::fs::write(self.dir.join("reload.sh"), reload).expect("the reload script");
        let mut cmd = Command::new("haproxy");
        cmd.arg("-W")
            .arg("-p")
            .arg(&pid)
            .arg("-f")
            .arg(self.main_file())
            .arg("-f")
            .arg(file);
        let log = self.dir.join("haproxy.log");
        let mut process = Running::start("haproxy (see .ci/setup)", cmd, &log);
        process.wait_listening(&[self.front], &log);
        self.process = Some(process);
    }

    fn keys(&self, seed: u64) -> Vec<Vec<u8>> {
        keys(seed, KEYS)
    }

    fn reaches(&mut self, key: &[u8], address: &str) -> Option<bool> {
        let answer = KeyClient::new(self.front, "X-Ringd-Key").try_ask(key)?;
        Some(answer == address)
    }

    fn answers(&mut self, keys: &[Vec<u8>]) -> Vec<String> {
        answers_of(self.front, "X-Ringd-Key", keys)
    }
}

/// A synced HAProxy on the first of 42 backends: see [`synced_over_http`].
pub(crate) fn synced(reload_prefix: &str) -> (Synced<Haproxy>, HttpBackends, Vec<String>) {
    synced_over_http(Haproxy::new, reload_prefix)
}

#[test]
fn haproxy_follows_every_version_ringd_sync_acks() {
    let _one = one_test_at_a_time();
    let (mut s, _backends, addresses) = synced("");
    // HAProxy places a server by its id: the replacement takes over n08's
    // id through its `hash_key`, at a new address.
    drive(
        &mut s,
        &addresses,
        (addresses[40].clone(), Some("n08".into())),
    );
    sync_cases::bad_nodes_change_nothing(
        &mut s,
        &[
            ("address", json!("10.0.0.9:80 backup")),
            ("address", json!("10.0.0.9:80\nserver evil 10.0.0.10:80")),
            ("weight", json!(300)),
            ("hash_key", json!("a\nb")),
        ],
    );
    println!(
        "haproxy through ringd sync: {} keys, 0 disagreements",
        s.checked
    );
}

#[test]
fn haproxy_refusing_a_version_keeps_the_old_file_and_a_killed_agent_leaves_a_whole_one() {
    let _one = one_test_at_a_time();
    let (mut s, _backends, addresses) = synced("");
    sync_cases::failing_check(
        &mut s,
        &addresses,
        "could not resolve address 'cache-x.invalid'",
    );
    sync_cases::killed_agents(&mut s, &addresses);
}

#[test]
fn a_rollout_step_waits_for_haproxy_to_reload() {
    let _one = one_test_at_a_time();
    let (hold, prefix) = sync_cases::reload_hold("haproxy");
    let (mut s, _backends, addresses) = synced(&prefix);
    sync_cases::gated_rollout(&mut s, &addresses, &hold);
}
