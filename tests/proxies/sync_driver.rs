//! `ringd sync` in front of a real proxy, driven through a ring's life.
//!
//! A [`Synced`] is a ringd server on a fresh SQLite file, a ring `cache`
//! of the proxy's mode, the proxy started on the file `ringd export`
//! writes, and a `ringd sync` agent keeping that file on the latest
//! version with the proxy's own check and reload commands. Every change
//! goes through `POST …/changes`; once the agent has acked the new
//! version, 20,000 keys go through the proxy and each must be answered by
//! the backend that version names as its owner. Each proxy's module says
//! how to start, check and reload it and which backend answered a key.

use std::path::{Path, PathBuf};

use ringd::client::RingView;
use ringd::ring::Snapshot;
use ringd::wire::SnapshotView;
use serde_json::{json, Value};

use crate::support::cli::ok;
use crate::support::ringd::{Ringd, Server};
use crate::support::sync_agent::{client_when, SyncAgent};

/// The ring every test syncs.
pub(crate) const RING: &str = "cache";
/// The id its agent acks under.
pub(crate) const CLIENT: &str = "proxy-1";
/// Keys checked through the proxy after each ack.
pub(crate) const KEYS: usize = 20_000;

/// What the driver needs of a proxy.
pub(crate) trait Proxy {
    /// The ring's algorithm and the export format: `nginx`, `haproxy`
    /// or `twemproxy`.
    fn format(&self) -> &'static str;
    /// The export flags the agent and `ringd export` get.
    fn export_args(&self) -> Vec<String>;
    /// The shell command that checks the proxy's configuration.
    fn check_command(&self) -> String;
    /// The shell command that makes the proxy load the file: it returns
    /// once the proxy serves the new file and nothing older.
    fn reload_command(&self) -> String;
    /// Starts the proxy on `file`, as `ringd export` first wrote it.
    fn start(&mut self, file: &Path);
    /// The keys sent at one version, from `seed`.
    fn keys(&self, seed: u64) -> Vec<Vec<u8>>;
    /// The address (`host:port`) of the backend that answered each key.
    fn answers(&mut self, keys: &[Vec<u8>]) -> Vec<String>;
    /// Whether `key`, sent through the proxy on a new connection now,
    /// reaches the backend at `address`; `None` when the proxy refused
    /// the connection or the request (a restart).
    #[allow(
        dead_code,
        reason = "benches/load/proxy_sync.rs times the switch with it; the tests check whole key sets"
    )]
    fn reaches(&mut self, key: &[u8], address: &str) -> Option<bool>;
}

/// A reload script for a proxy run as a master process with workers:
/// `signal` (a shell command that may use `$master`) makes the master
/// load the new file, and the script returns once every worker of the
/// previous configuration has exited (10 s at most). The reload signal
/// returns before the new workers take over; waiting for the old ones
/// makes an ack mean that no answer comes from an older file.
pub(crate) fn reload_script(pid_file: &Path, signal: &str, proxy: &str) -> String {
    format!(
        "master=$(cat {pid}) || exit 1\n\
         old=$(pgrep -P \"$master\")\n\
         {signal} || exit 1\n\
         for _ in $(seq 1000); do\n\
         \x20 left=''; for w in $old; do kill -0 \"$w\" 2>/dev/null && left=\"$left $w\"; done\n\
         \x20 [ -z \"$left\" ] && exit 0\n\
         \x20 sleep 0.01\n\
         done\n\
         echo \"{proxy} workers$left still serve the previous configuration\" >&2; exit 1\n",
        pid = pid_file.display()
    )
}

/// A node as a change upserts it.
pub(crate) fn node(id: &str, address: &str, weight: u32) -> Value {
    json!({"op": "upsert", "node": {"id": id, "address": address, "weight": weight}})
}

/// A change op removing node `id`.
pub(crate) fn remove(id: &str) -> Value {
    json!({"op": "remove", "id": id})
}

/// The server, the agent and the proxy of one test.
pub(crate) struct Synced<P: Proxy> {
    pub(crate) proxy: P,
    pub(crate) server: Server,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) agent: Option<SyncAgent>,
    http: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    /// Keys checked through the proxy, and how many disagreed (always 0
    /// when a test passes; printed for the benchmarks page).
    pub(crate) checked: usize,
    /// A command put before the reload: the rollout test holds reloads.
    reload_prefix: String,
}

impl<P: Proxy> Synced<P> {
    /// A ring `cache` with `config` (its algorithm is the proxy's) and
    /// `first` as its first change; the proxy started on that version's
    /// export; an agent following the ring, and the version checked.
    pub(crate) fn start(proxy: P, config: Value, first: Vec<Value>, reload_prefix: &str) -> Self {
        let server = Ringd::sqlite().start();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let mut synced = Self {
            proxy,
            server,
            dir: tempfile::tempdir().expect("a temporary directory"),
            agent: None,
            http: reqwest::Client::new(),
            runtime,
            checked: 0,
            reload_prefix: reload_prefix.to_owned(),
        };
        let mut config = config;
        config["algorithm"] = synced.proxy.format().into();
        let created = synced.call(reqwest::Method::PUT, "", config);
        assert_eq!(created.0, 201, "{}", created.1);
        let version = synced.change(first);
        // What a deployment does before the proxy's first start (an
        // ExecStartPre): the file the agent will keep, for the proxy to
        // include.
        let text = synced.export(version);
        std::fs::write(synced.file(), text).expect("the first file");
        let file = synced.file();
        synced.proxy.start(&file);
        synced.start_agent();
        synced.acked(version);
        synced.check(version);
        synced
    }

    /// The file the agent keeps.
    pub(crate) fn file(&self) -> PathBuf {
        self.dir.path().join(match self.proxy.format() {
            "twemproxy" => "cache.yml",
            "haproxy" => "cache.cfg",
            _ => "cache.conf",
        })
    }

    pub(crate) fn url(&self) -> &str {
        &self.server.url
    }

    /// Starts (or restarts) the agent.
    pub(crate) fn start_agent(&mut self) {
        let file = self.file();
        let reload = format!("{}{}", self.reload_prefix, self.proxy.reload_command());
        let check = self.proxy.check_command();
        let mut args: Vec<String> = [
            RING,
            "--format",
            self.proxy.format(),
            "--out",
            file.to_str().expect("a UTF-8 path"),
            "--check",
            &check,
            "--reload",
            &reload,
            "--client-id",
            CLIENT,
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(self.proxy.export_args());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.agent = Some(SyncAgent::start(self.url(), &args));
    }

    pub(crate) fn agent(&self) -> &SyncAgent {
        self.agent.as_ref().expect("a running agent")
    }

    /// `method /v1/rings/cache{path}` with a JSON body: status and body.
    pub(crate) fn call(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let url = format!("{}/v1/rings/{RING}{path}", self.url());
        self.runtime.block_on(async {
            let mut request = self.http.request(method, &url);
            if !body.is_null() {
                request = request.json(&body);
            }
            let r = request.send().await.expect("the server answers");
            let status = r.status().as_u16();
            let text = r.text().await.expect("a body");
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        })
    }

    /// Commits `ops` as one change; the new version.
    pub(crate) fn change(&self, ops: Vec<Value>) -> u64 {
        let (status, body) = self.call(reqwest::Method::POST, "/changes", json!({"ops": ops}));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["changed"], true, "{body}");
        body["version"].as_u64().expect("a version")
    }

    /// The ring's current version.
    pub(crate) fn version(&self) -> u64 {
        let (status, body) = self.call(reqwest::Method::GET, "", Value::Null);
        assert_eq!(status, 200, "{body}");
        body["version"].as_u64().expect("a version")
    }

    /// `ringd export` of `version`, as the agent writes it.
    pub(crate) fn export(&self, version: u64) -> String {
        let version = version.to_string();
        let format = self.proxy.format();
        let mut args = vec!["export", RING, "--format", format, "--version", &version];
        let extra = self.proxy.export_args();
        args.extend(extra.iter().map(String::as_str));
        ok(self.url(), &args)
    }

    /// Version `version`, verified as a client verifies it.
    pub(crate) fn view(&self, version: u64) -> RingView {
        let url = format!("{}/v1/rings/{RING}/snapshots/{version}", self.url());
        let view: SnapshotView = self.runtime.block_on(async {
            let r = self.http.get(&url).send().await.expect("an answer");
            assert_eq!(r.status(), 200);
            r.json().await.expect("a snapshot")
        });
        RingView::verify(Snapshot::try_from(view).expect("a snapshot")).expect("verified")
    }

    /// Waits until the agent has acked `version` and applied it.
    pub(crate) fn acked(&self, version: u64) {
        client_when(self.url(), RING, CLIENT, |c| {
            c["version"] == version && c["failure"].is_null()
        });
    }

    /// Commits `ops`, waits for the agent to apply and ack the version,
    /// then checks every key through the proxy; the version.
    pub(crate) fn step(&mut self, ops: Vec<Value>) -> u64 {
        let version = self.change(ops);
        let line = self.agent().until("applied", version);
        assert_eq!(line["client_id"], CLIENT);
        self.acked(version);
        self.check(version);
        version
    }

    /// Sends [`KEYS`] keys through the proxy; each must be answered by the
    /// owner `version` names.
    pub(crate) fn check(&mut self, version: u64) {
        let view = self.view(version);
        let keys = self.proxy.keys(0x7379_6e63 ^ version);
        assert!(keys.len() >= KEYS);
        let answers = self.proxy.answers(&keys);
        let wrong: Vec<String> = keys
            .iter()
            .zip(&answers)
            .filter_map(|(k, answered)| {
                let owner = view.owner(k).expect("an owner");
                let address = owner.address.as_ref().expect("an address").as_str();
                (answered != address).then(|| {
                    format!(
                        "{:?}: {answered} answered, ringd names {} ({address})",
                        String::from_utf8_lossy(&k[..k.len().min(40)]),
                        owner.id
                    )
                })
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{} at version {version}: {} of {} keys answered by another backend, first: {:#?}",
            self.proxy.format(),
            wrong.len(),
            keys.len(),
            &wrong[..wrong.len().min(5)]
        );
        self.checked += keys.len();
    }

    /// The file's bytes now.
    pub(crate) fn file_text(&self) -> String {
        std::fs::read_to_string(self.file()).expect("the file")
    }

    /// Runs the proxy's own check on the file as it is.
    pub(crate) fn proxy_accepts_file(&self) -> bool {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(self.proxy.check_command())
            .env("RINGD_FILE", self.file())
            // Its verdict is the exit status; a passing check's words are noise.
            .stdout(std::process::Stdio::null())
            .status()
            .expect("sh runs")
            .success()
    }
}

/// The ring's life that every proxy goes through, one version per step,
/// each checked key by key once acked: 1 server (the first change), then
/// 5, 17 and 40 at weights 1 to 10, re-weights, drains, removals, a
/// replacement, and back down to 3 (`n00`, `n17`, `r08`). `addresses` are the backends, at
/// least 42; `replace` gives the node that replaces `n08` (its address
/// and `hash_key`), which each proxy takes over differently.
pub(crate) fn drive<P: Proxy>(
    s: &mut Synced<P>,
    addresses: &[String],
    replacement: (String, Option<String>),
) {
    assert!(addresses.len() >= 42);
    let weight = |i: usize| (i % 10) as u32 + 1;
    let adds = |range: std::ops::Range<usize>| -> Vec<Value> {
        range
            .map(|i| node(&format!("n{i:02}"), &addresses[i], weight(i)))
            .collect()
    };
    s.step(adds(1..5));
    s.step(adds(5..17));
    s.step(adds(17..40));
    s.step(
        [(3, 10), (7, 1), (12, 6), (20, 2), (33, 9)]
            .iter()
            .map(|&(i, w)| node(&format!("n{i:02}"), &addresses[i], w))
            .collect(),
    );
    s.step(
        [5, 11, 30]
            .iter()
            .map(|&i| {
                let mut n = node(&format!("n{i:02}"), &addresses[i], weight(i));
                n["node"]["state"] = "draining".into();
                n
            })
            .collect(),
    );
    s.step(["n05", "n11", "n01", "n14", "n25"].map(remove).to_vec());
    let (address, hash_key) = replacement;
    let mut r08 = node("r08", &address, weight(8));
    if let Some(k) = hash_key {
        r08["node"]["hash_key"] = k.into();
    }
    s.step(vec![remove("n08"), r08]);
    let removed = ["n01", "n05", "n08", "n11", "n14", "n25"];
    let gone: Vec<Value> = (1..40)
        .map(|i| format!("n{i:02}"))
        .filter(|id| id != "n17" && !removed.contains(&id.as_str()))
        .map(|id| remove(&id))
        .collect();
    s.step(gone);
}
