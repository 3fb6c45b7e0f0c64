//! Helpers for the client-library tests: plain HTTP against a live ringd
//! (the reference every client answer is compared with), a recorder of the
//! client's events, and a client with short backoffs. Uses only what the
//! client-only build has (reqwest, serde_json, tokio, `ringd::client`).
#![allow(dead_code)]

use std::time::Duration;

use reqwest::StatusCode;
use ringd::client::{RingClient, RingEvent, Status, VersionChange, WatchMode};
use serde_json::{json, Value};
use tokio::sync::broadcast::{self, error::RecvError};

/// Failure guard for anything awaited: never a measurement.
pub const GUARD: Duration = Duration::from_secs(20);

/// The keys every routing comparison looks up.
pub fn keys() -> Vec<String> {
    (0..24).map(|i| format!("user:{i}")).collect()
}

/// A client of `ring` on `urls` with short backoffs, acking as `id`.
pub fn client(urls: &[&str], ring: &str, mode: WatchMode, id: &str) -> RingClient {
    RingClient::builder(urls, ring)
        .client_id(id)
        .watch_mode(mode)
        .backoff(Duration::from_millis(20), Duration::from_millis(300))
        .long_poll_wait(Duration::from_secs(5))
        .start()
        .expect("client starts")
}

/// Plain HTTP requests to one ringd about one ring.
#[derive(Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub ring: String,
}

impl Api {
    pub fn new(base: &str, ring: &str) -> Self {
        Self {
            http: reqwest::Client::builder()
                .timeout(GUARD)
                .build()
                .expect("http client"),
            base: base.to_owned(),
            ring: ring.to_owned(),
        }
    }

    /// The same ring through another instance.
    pub fn on(&self, base: &str) -> Self {
        Self::new(base, &self.ring)
    }

    fn url(&self, rest: &str) -> String {
        format!("{}/v1/rings/{}{rest}", self.base, self.ring)
    }

    async fn json(resp: reqwest::Response, want: StatusCode, what: &str) -> Value {
        let status = resp.status();
        let text = resp.text().await.expect("body");
        assert_eq!(status, want, "{what}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"))
    }

    /// Creates the ring with `config`; returns its version (1).
    pub async fn create_with(&self, config: Value) -> u64 {
        let r = self.http.put(self.url("")).json(&config).send().await;
        let body = Self::json(r.expect("PUT ring"), StatusCode::CREATED, "create").await;
        body["version"].as_u64().expect("version")
    }

    /// Creates the ring with the default config; returns its version (1).
    pub async fn create(&self) -> u64 {
        self.create_with(json!({})).await
    }

    /// Applies `ops` as one change; returns the new version.
    pub async fn change(&self, ops: Value) -> u64 {
        let r = self
            .http
            .post(self.url("/changes"))
            .json(&json!({ "ops": ops }))
            .send()
            .await;
        let body = Self::json(r.expect("POST changes"), StatusCode::OK, "change").await;
        body["version"].as_u64().expect("version")
    }

    /// Adds (or replaces) node `id` with `weight`; returns the new version.
    pub async fn upsert(&self, id: &str, weight: u32) -> u64 {
        self.change(json!([{"op": "upsert", "node": {"id": id, "weight": weight}}]))
            .await
    }

    /// Adds nodes with weight 1, one change each; returns the last version.
    pub async fn add_each(&self, ids: &[&str]) -> u64 {
        let mut v = 0;
        for id in ids {
            v = self.upsert(id, 1).await;
        }
        v
    }

    /// Removes node `id`; returns the new version.
    pub async fn remove(&self, id: &str) -> u64 {
        self.change(json!([{"op": "remove", "id": id}])).await
    }

    /// Deletes the ring.
    pub async fn delete_ring(&self) {
        let r = self.http.delete(self.url("")).send().await.expect("DELETE");
        assert_eq!(r.status(), StatusCode::NO_CONTENT, "delete ring");
    }

    /// `GET …/lookup` of `key` at `version` with `replicas`: the owner and
    /// the preference list.
    pub async fn lookup(
        &self,
        key: &str,
        version: u64,
        replicas: usize,
    ) -> (Option<String>, Vec<String>) {
        let r = self
            .http
            .get(self.url("/lookup"))
            .query(&[
                ("key", key.to_owned()),
                ("version", version.to_string()),
                ("replicas", replicas.to_string()),
            ])
            .send()
            .await;
        let body = Self::json(r.expect("lookup"), StatusCode::OK, "lookup").await;
        assert_eq!(body["version"], version, "{body}");
        let owner = body["owner"].as_str().map(str::to_owned);
        let list = body["replicas"]
            .as_array()
            .expect("replicas")
            .iter()
            .map(|n| n.as_str().expect("node id").to_owned())
            .collect();
        (owner, list)
    }

    /// `GET …/snapshots/{v}`.
    pub async fn snapshot(&self, v: u64) -> Value {
        let r = self
            .http
            .get(self.url(&format!("/snapshots/{v}")))
            .send()
            .await;
        Self::json(r.expect("snapshot"), StatusCode::OK, "snapshot").await
    }

    /// `GET …/clients`.
    pub async fn clients(&self) -> Value {
        let r = self.http.get(self.url("/clients")).send().await;
        Self::json(r.expect("clients"), StatusCode::OK, "clients").await
    }

    /// Asserts the server lists `id` on `version`, matching the server's
    /// fingerprint for it and current.
    pub async fn assert_acked(&self, id: &str, version: u64) {
        let body = self.clients().await;
        let entry = body["clients"]
            .as_array()
            .expect("clients")
            .iter()
            .find(|c| c["client_id"] == id)
            .unwrap_or_else(|| panic!("{id} is not listed: {body}"))
            .clone();
        let fingerprint = self.snapshot(version).await["fingerprint"].clone();
        assert_eq!(body["version"], version, "{body}");
        assert_eq!(entry["version"], version, "{body}");
        assert_eq!(entry["fingerprint"], fingerprint, "{body}");
        assert_eq!(entry["matches"], true, "{body}");
        assert_eq!(entry["divergent"], false, "{body}");
        assert_eq!(entry["lag"], 0, "{body}");
        assert_eq!(entry["on_latest"], true, "{body}");
    }

    /// Polls the listing until `id` is on `version` (for when the client's
    /// own `wait_for_ack` cannot be trusted), then asserts the entry.
    pub async fn wait_listed(&self, id: &str, version: u64) {
        let deadline = tokio::time::Instant::now() + GUARD;
        loop {
            let body = self.clients().await;
            let listed = body["clients"]
                .as_array()
                .expect("clients")
                .iter()
                .any(|c| c["client_id"] == id && c["version"] == version);
            if listed {
                return self.assert_acked(id, version).await;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{id} never listed on v{version}: {body}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asserts that the client routes on `version` and that its owner and
    /// preference list (through the client and through a router) equal the
    /// server's lookup answers at that version for every test key.
    pub async fn assert_routes_like_server(&self, client: &RingClient, version: u64) {
        assert_eq!(client.version(), Some(version));
        let mut router = client.router();
        assert_eq!(router.version(), Some(version));
        for key in keys() {
            let (owner, list) = self.lookup(&key, version, 3).await;
            assert!(owner.is_some(), "{key}: the test ring must have nodes");
            let mine = client.owner(key.as_bytes()).map(|n| n.to_string());
            assert_eq!(mine, owner, "owner of {key} at v{version}");
            let mine: Vec<String> = client
                .preference_list(key.as_bytes(), 3)
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(mine, list, "preference list of {key} at v{version}");
            let routed = router.owner(key.as_bytes()).map(|n| n.id.to_string());
            assert_eq!(routed, owner, "router's owner of {key} at v{version}");
        }
    }
}

/// Records a client's events and asserts on them in order.
pub struct Events {
    rx: broadcast::Receiver<RingEvent>,
    /// A first `Applied` from nothing to this version is dropped: see
    /// [`Events::after_ready`].
    skip: Option<u64>,
}

impl Events {
    /// Subscribes; only events from now on are seen.
    pub fn of(client: &RingClient) -> Self {
        Self {
            rx: client.subscribe(),
            skip: None,
        }
    }

    /// Subscribes to a client that already routes on `version`. The
    /// client swaps the view in before it checks for subscribers, so the
    /// `Applied` of that first version may still arrive; it is dropped if
    /// it is the very first event, and only then.
    pub fn after_ready(client: &RingClient, version: u64) -> Self {
        assert_eq!(client.version(), Some(version));
        Self {
            rx: client.subscribe(),
            skip: Some(version),
        }
    }

    /// The next event; fails after [`GUARD`] or if events were lost.
    pub async fn next(&mut self) -> RingEvent {
        loop {
            let e = self.recv().await;
            let skip = self.skip.take();
            match &e {
                RingEvent::Applied(c) if c.from.is_none() && Some(c.to) == skip => continue,
                _ => return e,
            }
        }
    }

    /// The next event; fails if events were lost.
    pub async fn next_event(&mut self) -> RingEvent {
        self.recv().await
    }

    async fn recv(&mut self) -> RingEvent {
        match tokio::time::timeout(GUARD, self.rx.recv()).await {
            Ok(Ok(e)) => e,
            Ok(Err(RecvError::Lagged(n))) => panic!("{n} events lost"),
            Ok(Err(RecvError::Closed)) => panic!("the client closed"),
            Err(_) => panic!("no event within {GUARD:?}"),
        }
    }

    /// Asserts that the next event is `Applied` with exactly these fields.
    pub async fn applied(&mut self, from: Option<u64>, to: u64, reset: bool) -> VersionChange {
        match self.next().await {
            RingEvent::Applied(c) => {
                assert_eq!((c.from, c.to, c.reset), (from, to, reset), "{c:?}");
                assert_eq!(c.view.version(), to);
                assert_eq!(c.diff.is_some(), from.is_some(), "{c:?}");
                c
            }
            other => panic!("expected Applied {from:?} → {to} (reset {reset}), got {other:?}"),
        }
    }

    /// Asserts one `Applied` per version after `from` up to `to`, in order,
    /// each carrying the fingerprint `api` serves for it.
    pub async fn run(&mut self, api: &Api, from: u64, to: u64) {
        for v in from + 1..=to {
            let c = self.applied(Some(v - 1), v, false).await;
            let stated = api.snapshot(v).await["fingerprint"].clone();
            assert_eq!(json!(c.view.fingerprint().to_string()), stated, "v{v}");
        }
    }

    /// Asserts that the next event is `Deleted`.
    pub async fn deleted(&mut self) {
        match self.next().await {
            RingEvent::Deleted => {}
            other => panic!("expected Deleted, got {other:?}"),
        }
    }

    /// Asserts that nothing more arrives within `d` (a check that nothing
    /// extra was sent, not a measurement).
    pub async fn none_within(&mut self, d: Duration) {
        match tokio::time::timeout(d, self.rx.recv()).await {
            Err(_) => {}
            Ok(e) => panic!("unexpected event {e:?}"),
        }
    }
}

/// Polls the client's status until `done` holds; fails after [`GUARD`].
pub async fn wait_status(
    client: &RingClient,
    what: &str,
    done: impl Fn(&Status) -> bool,
) -> Status {
    let deadline = tokio::time::Instant::now() + GUARD;
    loop {
        let s = client.status();
        if done(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "status never reached {what}: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
