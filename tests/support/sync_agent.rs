//! A running `ringd -o json sync`, its JSON lines read on a thread, and
//! the entry its acks make in `ringd clients`: what the CLI's tests (with
//! shell commands for a proxy) and the proxies' tests (with the real
//! nginx, HAProxy and nutcracker) drive.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cli::{command, ok};

/// Far above any wait these tests expect, so only a broken agent (or a
/// proxy that never comes up) trips it.
pub(crate) const LIMIT: Duration = Duration::from_secs(30);

/// A running `ringd -o json sync …`, killed when dropped.
pub(crate) struct SyncAgent {
    child: Child,
    lines: Receiver<Value>,
}

impl SyncAgent {
    /// Starts `ringd -o json sync ARGS` against the server at `url`.
    pub(crate) fn start(url: &str, args: &[&str]) -> Self {
        let all: Vec<&str> = ["-o", "json", "sync"].iter().chain(args).copied().collect();
        let mut child = command(url, &all).spawn().expect("ringd sync starts");
        let stdout = BufReader::new(child.stdout.take().expect("a stdout pipe"));
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line).expect("a JSON line");
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Self { child, lines }
    }

    /// The next line, within [`LIMIT`].
    pub(crate) fn next(&self) -> Value {
        self.lines
            .recv_timeout(LIMIT)
            .expect("a line from ringd sync")
    }

    /// Skips lines until one with `event` about `version`.
    pub(crate) fn until(&self, event: &str, version: u64) -> Value {
        loop {
            let line = self.next();
            if line["event"] == event && line["version"] == version {
                return line;
            }
        }
    }

    /// Sends `signal` (`-TERM`, `-KILL`) and waits for the exit.
    pub(crate) fn signal(&mut self, signal: &str) -> ExitStatus {
        let sent = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "ringd sync did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for SyncAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Client `id` of `ring`, as `ringd -o json clients` lists it, if listed.
pub(crate) fn client_entry(url: &str, ring: &str, id: &str) -> Option<Value> {
    let list: Value =
        serde_json::from_str(&ok(url, &["-o", "json", "clients", ring])).expect("JSON");
    list["clients"]
        .as_array()
        .expect("a client list")
        .iter()
        .find(|c| c["client_id"] == id)
        .cloned()
}

/// Waits until client `id` of `ring` satisfies `done` (acks are sent in
/// the background, just after the agent prints its line).
pub(crate) fn client_when(url: &str, ring: &str, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        let c = client_entry(url, ring, id);
        if let Some(c) = c.as_ref().filter(|c| done(c)) {
            return c.clone();
        }
        assert!(
            Instant::now() < deadline,
            "client {id} never got there: {c:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
