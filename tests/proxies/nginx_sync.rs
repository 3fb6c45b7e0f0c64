//! The real nginx kept on the ring by `ringd sync`: an nginx whose
//! `http` block includes the file the agent writes, checked with `nginx
//! -t` and reloaded with SIGHUP, in front of loopback servers that answer
//! with their own address. Every version the agent acks is checked key
//! by key through it.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::backends::{synced_over_http, HttpBackends};
use super::loopback::{answers_of, free_port, one_test_at_a_time, KeyClient, Rng, Running};
use super::nginx::key;
use super::sync_cases;
use super::sync_driver::{drive, reload_script, Proxy, Synced};

/// nginx in master-worker mode, as a distribution runs it, on loopback.
pub(crate) struct Nginx {
    prefix: PathBuf,
    front: SocketAddrV4,
    process: Option<Running>,
}

impl Nginx {
    fn new(dir: &Path) -> Self {
        let prefix = dir.join("proxy");
        std::fs::create_dir_all(&prefix).expect("a prefix");
        Self {
            prefix,
            front: SocketAddrV4::new(Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST)),
            process: None,
        }
    }

    /// `nginx` with this prefix and configuration, then `args`.
    fn command_line(&self, args: &str) -> String {
        let p = self.prefix.display();
        format!("nginx -p {p} -c {p}/nginx.conf -e {p}/error.log {args}")
    }
}

impl Proxy for Nginx {
    fn format(&self) -> &'static str {
        "nginx"
    }

    fn export_args(&self) -> Vec<String> {
        vec!["--keepalive".into(), "16".into()]
    }

    fn check_command(&self) -> String {
        self.command_line("-t -q")
    }

    fn reload_command(&self) -> String {
        format!("sh {}/reload.sh", self.prefix.display())
    }

    fn start(&mut self, file: &Path) {
        let p = self.prefix.display();
        let conf = format!(
            "daemon off;\nworker_processes 2;\npid {p}/nginx.pid;\n\
             error_log {p}/error.log warn;\nevents {{ worker_connections 1024; }}\n\
             http {{\n    access_log off;\n    client_body_temp_path {p}/body;\n\
             proxy_temp_path {p}/proxy;\n    fastcgi_temp_path {p}/fastcgi;\n\
             uwsgi_temp_path {p}/uwsgi;\n    scgi_temp_path {p}/scgi;\n\
             include {file};\n    server {{ listen {front}; location / {{ proxy_pass http://cache; \
             proxy_http_version 1.1; proxy_set_header Connection \"\"; \
             proxy_next_upstream off; }} }}\n}}\n",
            file = file.display(),
            front = self.front,
        );
        std::fs::write(self.prefix.join("nginx.conf"), conf).expect("the config");
        let reload = reload_script(
            &self.prefix.join("nginx.pid"),
            &self.command_line("-s reload"),
            "nginx",
        );
        std::fs::write(self.prefix.join("reload.sh"), reload).expect("the reload script");
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!("exec {}", self.command_line("")));
        let log = self.prefix.join("output.log");
        let mut process = Running::start("proxy nginx (see .ci/setup)", cmd, &log);
        process.wait_listening(&[self.front], &self.prefix.join("error.log"));
        self.process = Some(process);
    }

    fn keys(&self, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = Rng::new(seed);
        (0..super::sync_driver::KEYS)
            .map(|_| key(&mut rng))
            .collect()
    }

    fn reaches(&mut self, key: &[u8], address: &str) -> Option<bool> {
        let answer = KeyClient::new(self.front, "X-Ringd-Key").try_ask(key)?;
        Some(answer == address)
    }

    fn answers(&mut self, keys: &[Vec<u8>]) -> Vec<String> {
        answers_of(self.front, "X-Ringd-Key", keys)
    }
}

/// A synced nginx on the first of 42 backends: see [`synced_over_http`].
pub(crate) fn synced(reload_prefix: &str) -> (Synced<Nginx>, HttpBackends, Vec<String>) {
    synced_over_http(Nginx::new, reload_prefix)
}

#[test]
fn nginx_follows_every_version_ringd_sync_acks() {
    let _one = one_test_at_a_time();
    let (mut s, _backends, addresses) = synced("");
    // nginx knows a server by its address alone: the replacement that
    // keeps n08's keys takes over its address.
    drive(&mut s, &addresses, (addresses[8].clone(), None));
    sync_cases::bad_nodes_change_nothing(
        &mut s,
        &[
            ("address", json!("cache x:80")),
            ("address", json!("10.0.0.9:80; server evil:80")),
            ("address", json!("unix:/run/cache.sock")),
            ("hash_key", json!("a\nb")),
        ],
    );
    println!(
        "nginx through ringd sync: {} keys, 0 disagreements",
        s.checked
    );
}

#[test]
fn nginx_refusing_a_version_keeps_the_old_file_and_a_killed_agent_leaves_a_whole_one() {
    let _one = one_test_at_a_time();
    let (mut s, _backends, addresses) = synced("");
    sync_cases::failing_check(
        &mut s,
        &addresses,
        "host not found in upstream \"cache-x.invalid:80\"",
    );
    sync_cases::killed_agents(&mut s, &addresses);
}

#[test]
fn a_rollout_step_waits_for_nginx_to_reload() {
    let _one = one_test_at_a_time();
    let (hold, prefix) = sync_cases::reload_hold("nginx");
    let (mut s, _backends, addresses) = synced(&prefix);
    sync_cases::gated_rollout(&mut s, &addresses, &hold);
}
