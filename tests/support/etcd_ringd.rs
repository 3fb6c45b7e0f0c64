//! Test harness: a `ringd serve` child process, killed when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A `ringd serve` on a store; killed when dropped.
pub struct Ringd {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
}

impl Ringd {
    /// Starts `ringd serve` on `store` with `--etcd-prefix prefix`.
    pub fn start(store: &str, prefix: &str) -> Self {
        Self::start_with(store, prefix, &[])
    }

    /// Like [`Ringd::start`], with extra `serve` arguments.
    pub fn start_with(store: &str, prefix: &str, extra: &[&str]) -> Self {
        Self::start_with_env(store, prefix, extra, &[])
    }

    /// Like [`Ringd::start_with`], with environment variables for the
    /// child only (tests run in parallel threads of one process, so the
    /// process environment must not be changed).
    pub fn start_with_env(store: &str, prefix: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ringd"))
            .args(["serve", "--listen", "127.0.0.1:0", "--store", store])
            .args(["--etcd-prefix", prefix])
            .args(extra)
            .env_remove("RINGD_STORE")
            .env_remove("RINGD_ADMIN_TOKEN")
            .env_remove("RINGD_READ_TOKEN")
            .env_remove("RINGD_ETCD_USER")
            .env_remove("RINGD_ETCD_PASSWORD")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ringd");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ringd prints its URL");
        let url = line
            .trim()
            .strip_prefix("ringd listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Ringd { child, url }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Ringd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
