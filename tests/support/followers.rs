//! Real client processes for the rollout tests: `ringd follow` children,
//! each running the client library as an application would and acking
//! under its own id. [`Followers`] kills every child when dropped, so a
//! test that panics leaves no process behind, and prints their stderr.
//!
//! ```ignore
//! let f = Followers::start(&format!("{},{}", a.url, b.url), "cache", &["follower-1", "follower-2"]);
//! f.signal("follower-2", "STOP");
//! let seen: Vec<Applied> = f.applied("follower-1");
//! ```

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use super::cli::command;

/// One version a follower printed (`ringd -o json follow`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// The version applied.
    pub version: u64,
    /// The fingerprint the follower computed for it.
    pub fingerprint: String,
}

struct Follower {
    id: String,
    child: Child,
    /// Every stdout line so far.
    lines: Arc<Mutex<Vec<String>>>,
}

/// Running `ringd follow` processes, by client id; killed when dropped.
pub(crate) struct Followers {
    followers: Vec<Follower>,
    /// Their stderr files.
    dir: TempDir,
}

impl Followers {
    /// Starts `ringd -o json follow RING --client-id ID` for each id, on
    /// the servers `addr` (a comma-separated list fails over).
    pub(crate) fn start(addr: &str, ring: &str, ids: &[&str]) -> Self {
        let each: Vec<(&str, &str)> = ids.iter().map(|id| (addr, *id)).collect();
        Self::start_each(ring, &each)
    }

    /// Starts one follower per `(addr, id)`, each on its own servers.
    pub(crate) fn start_each(ring: &str, each: &[(&str, &str)]) -> Self {
        let dir = TempDir::new().expect("temp dir");
        let followers = each
            .iter()
            .map(|(addr, id)| {
                let log =
                    std::fs::File::create(dir.path().join(format!("{id}.log"))).expect("log file");
                let mut child = command(addr, &["-o", "json", "follow", ring, "--client-id", id])
                    .stderr(Stdio::from(log))
                    .spawn()
                    .expect("spawn ringd follow");
                let stdout = child.stdout.take().expect("stdout");
                let lines = Arc::new(Mutex::new(Vec::new()));
                let sink = lines.clone();
                std::thread::spawn(move || {
                    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                        sink.lock().unwrap().push(line);
                    }
                });
                Follower {
                    id: (*id).to_owned(),
                    child,
                    lines,
                }
            })
            .collect();
        Self { followers, dir }
    }

    fn get(&self, id: &str) -> &Follower {
        self.followers
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no follower {id}"))
    }

    /// Sends `signal` (a `kill` signal name: `STOP`, `CONT`, `TERM`) to
    /// follower `id`.
    pub(crate) fn signal(&self, id: &str, signal: &str) {
        let pid = self.get(id).child.id();
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {pid}: {status}");
    }

    /// The versions follower `id` printed so far, in order; panics on a
    /// line that is not an `applied` event.
    pub(crate) fn applied(&self, id: &str) -> Vec<Applied> {
        let lines = self.get(id).lines.lock().unwrap().clone();
        lines
            .iter()
            .map(|line| {
                let v: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{id}: not JSON ({e}): {line}"));
                assert_eq!(
                    (&v["event"], &v["client_id"]),
                    (&Value::from("applied"), &Value::from(id)),
                    "{id}: {line}"
                );
                Applied {
                    version: v["version"].as_u64().expect("version"),
                    fingerprint: v["fingerprint"].as_str().expect("fingerprint").to_owned(),
                }
            })
            .collect()
    }

    /// Polls until follower `id` has printed `version`; panics after
    /// `limit`.
    pub(crate) async fn wait_applied(&self, id: &str, version: u64, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.applied(id).iter().any(|a| a.version == version) {
            assert!(
                Instant::now() < deadline,
                "{id} never applied v{version}: {:?}",
                self.applied(id)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGTERMs every follower and asserts each exits 0 within 10 s.
    pub(crate) fn terminate(&mut self) {
        for id in self
            .followers
            .iter()
            .map(|f| f.id.clone())
            .collect::<Vec<_>>()
        {
            self.signal(&id, "CONT");
            self.signal(&id, "TERM");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        for f in &mut self.followers {
            let status = loop {
                if let Some(status) = f.child.try_wait().expect("try_wait") {
                    break status;
                }
                assert!(Instant::now() < deadline, "{} ignored SIGTERM", f.id);
                std::thread::sleep(Duration::from_millis(20));
            };
            assert!(status.success(), "{} exited with {status}", f.id);
        }
    }
}

impl Drop for Followers {
    fn drop(&mut self) {
        for f in &mut self.followers {
            // SIGKILL ends a stopped process too.
            let _ = f.child.kill();
            let _ = f.child.wait();
        }
        if std::thread::panicking() {
            for f in &self.followers {
                let log = std::fs::read_to_string(self.dir.path().join(format!("{}.log", f.id)))
                    .unwrap_or_default();
                let out = f.lines.lock().map(|l| l.join("\n")).unwrap_or_default();
                eprintln!(
                    "--- {} stderr ---\n{log}--- {} stdout ---\n{out}",
                    f.id, f.id
                );
            }
        }
    }
}
