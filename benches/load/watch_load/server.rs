//! The server under load: a fresh ringd (on a temporary SQLite file or a
//! fresh one-member etcd), its rings, the changes made to them, and what
//! it reports about itself.

use std::time::Duration;

use super::support::etcd::Etcd;
use super::support::ringd::{Ringd, Server};
use super::Store;

pub(crate) struct Bench {
    server: Server,
    client: reqwest::Client,
    // Dropped after the server, which is killed first.
    _etcd: Option<Etcd>,
}

/// Raises this process's open-file limits to what `watchers` need (one
/// descriptor each here, one in the server, which inherits the limits and
/// raises its soft limit to the hard one). Raising the hard limit takes
/// root; without it the run stops here if the limit is too low.
fn raise_open_file_limit(watchers: usize) {
    let need = watchers as u64 + 512;
    let (soft, hard) = rlimit::Resource::NOFILE.get().expect("RLIMIT_NOFILE");
    let hard = if hard < need {
        match rlimit::Resource::NOFILE.set(soft.min(need), need) {
            Ok(()) => need,
            Err(e) => panic!(
                "{watchers} watchers need {need} open files per process; the hard limit is {hard} and raising it failed ({e}): run as root or raise it (ulimit -Hn)"
            ),
        }
    } else {
        hard
    };
    rlimit::Resource::NOFILE
        .set(need.min(hard).max(soft), hard)
        .expect("raise the soft limit");
    eprintln!(
        "open-file limit: {} (needed: {need})",
        need.min(hard).max(soft)
    );
}

impl Bench {
    pub(crate) async fn start(store: Store, watchers: usize) -> Self {
        raise_open_file_limit(watchers);
        let etcd = match store {
            Store::Sqlite => None,
            Store::Etcd => Some(Etcd::start().await),
        };
        let ringd = match &etcd {
            None => Ringd::sqlite(),
            Some(etcd) => Ringd::on(&etcd.store_url()),
        };
        // Room for the warm-up's watchers, which may not all be gone yet.
        let cap = (watchers + 1_000).to_string();
        let server = ringd.args(&["--max-watchers", &cap]).start();
        Self {
            server,
            client: reqwest::Client::new(),
            _etcd: etcd,
        }
    }

    /// `127.0.0.1:<port>`.
    pub(crate) fn addr(&self) -> String {
        self.server.url.trim_start_matches("http://").to_owned()
    }

    /// The server's resident set size in bytes.
    pub(crate) fn rss(&self) -> u64 {
        let pid = self.server.pid();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("VmRSS")
            * 1024
    }

    /// Creates `rings`, each with `nodes` nodes in one change; returns
    /// their version (the same for all).
    pub(crate) async fn create_rings(&self, rings: &[String], nodes: usize) -> u64 {
        let base = &self.server.url;
        let mut version = 0;
        for ring in rings {
            self.send(
                self.client
                    .put(format!("{base}/v1/rings/{ring}"))
                    .json(&serde_json::json!({})),
            )
            .await;
            let ops: Vec<_> = (0..nodes)
                .map(
                    |i| serde_json::json!({"op": "upsert", "node": {"id": format!("node-{i:02}")}}),
                )
                .collect();
            let body = serde_json::json!({"ops": ops, "reason": "load"});
            version = self
                .send(
                    self.client
                        .post(format!("{base}/v1/rings/{ring}/changes"))
                        .json(&body),
                )
                .await;
        }
        version
    }

    /// Change `j` of the run: one more node in `ring`; returns its version.
    pub(crate) async fn change(&self, ring: &str, j: usize) -> u64 {
        let url = format!("{}/v1/rings/{ring}/nodes/extra-{j:04}", self.server.url);
        self.send(self.client.put(url).json(&serde_json::json!({})))
            .await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> u64 {
        let r = request.send().await.expect("request");
        assert!(
            r.status().is_success(),
            "setup request failed: {}",
            r.status()
        );
        let v: serde_json::Value = r.json().await.expect("JSON body");
        v["version"].as_u64().expect("version")
    }

    /// Waits until the server has `n` long-polls waiting; whether it did
    /// within `deadline`.
    pub(crate) async fn wait_parked(&self, n: u64, deadline: Duration) -> bool {
        let until = std::time::Instant::now() + deadline;
        while std::time::Instant::now() < until {
            if self.long_polls_waiting().await >= n {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    async fn long_polls_waiting(&self) -> u64 {
        let Ok(r) = self
            .client
            .get(format!("{}/metrics", self.server.url))
            .send()
            .await
        else {
            return 0;
        };
        let text = r.text().await.unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("ringd_long_polls_waiting "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }
}
