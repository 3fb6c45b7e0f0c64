//! [`TestApi`]: typed HTTP requests to one running ringd, at the server
//! level (`get`, `put`, `ring_with`, `metric`, …) and about one ring
//! (`create`, `change`, `upsert`, `snapshot`, `clients`, …). Every
//! launched [`Server`] exposes one as `s.api()` (and derefs to it, so
//! `s.get_ok(…)` reads as the request it is).

use std::ops::Deref;
use std::time::Duration;

use reqwest::{Client, Method, RequestBuilder, Response, StatusCode};
use ringd::client::RingClient;
use serde_json::{json, Value};

use super::client::GUARD;
use super::ringd::Server;

/// Plain HTTP requests to one ringd, about ring [`TestApi::ring`] where a
/// method names none.
#[derive(Clone)]
pub(crate) struct TestApi {
    /// The HTTP client every request goes through.
    pub http: Client,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The ring the ring-level methods act on.
    pub ring: String,
}

impl TestApi {
    /// Requests to `base` about `ring`, each failing after [`GUARD`].
    pub(crate) fn new(base: &str, ring: &str) -> Self {
        Self::with_timeout(base, ring, GUARD)
    }

    /// The API of a launched server: ring `r` (`in_process::setup`'s), with a
    /// longer timeout for the long polls and slow pages the server tests
    /// ask for.
    pub(super) fn of_server(base: &str) -> Self {
        Self::with_timeout(base, "r", Duration::from_secs(60))
    }

    fn with_timeout(base: &str, ring: &str, timeout: Duration) -> Self {
        Self {
            http: Client::builder()
                .timeout(timeout)
                .build()
                .expect("http client"),
            base: base.to_owned(),
            ring: ring.to_owned(),
        }
    }

    /// The same server, about another ring.
    pub(crate) fn for_ring(&self, ring: &str) -> Self {
        Self {
            ring: ring.to_owned(),
            ..self.clone()
        }
    }

    /// A request to `path` (which starts with `/`).
    pub(crate) fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base))
    }

    /// GET `path`.
    pub(crate) async fn get(&self, path: &str) -> Response {
        self.req(Method::GET, path).send().await.expect("GET")
    }

    /// `method` `path` with a JSON body.
    pub(crate) async fn send_json(&self, method: Method, path: &str, body: &Value) -> Response {
        self.req(method, path)
            .json(body)
            .send()
            .await
            .expect("request")
    }

    /// PUT `path` with a JSON body.
    pub(crate) async fn put(&self, path: &str, body: Value) -> Response {
        self.send_json(Method::PUT, path, &body).await
    }

    /// POST `path` with a JSON body.
    pub(crate) async fn post(&self, path: &str, body: Value) -> Response {
        self.send_json(Method::POST, path, &body).await
    }

    /// DELETE `path`.
    pub(crate) async fn delete(&self, path: &str) -> Response {
        self.req(Method::DELETE, path).send().await.expect("DELETE")
    }

    /// GET `path`, asserting 200, as JSON.
    pub(crate) async fn get_ok(&self, path: &str) -> Value {
        expect_json(self.get(path).await, StatusCode::OK).await
    }

    /// Creates ring `ring` (default config) and registers `nodes`.
    pub(crate) async fn ring_with(&self, ring: &str, nodes: &[&str]) -> u64 {
        let r = self.put(&format!("/v1/rings/{ring}"), json!({})).await;
        expect_json(r, StatusCode::CREATED).await;
        let mut version = 1;
        for n in nodes {
            let r = self
                .put(&format!("/v1/rings/{ring}/nodes/{n}"), json!({}))
                .await;
            version = expect_json(r, StatusCode::CREATED).await["version"]
                .as_u64()
                .unwrap();
        }
        version
    }

    /// The value of an unlabelled metric from `/metrics`.
    pub(crate) async fn metric(&self, name: &str) -> u64 {
        let text = self.get("/metrics").await.text().await.expect("metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .parse()
            .expect("a whole number")
    }

    /// Polls `/readyz` until 200; panics after `limit`.
    pub(crate) async fn wait_ready(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let ok = self
                .req(Method::GET, "/readyz")
                .send()
                .await
                .is_ok_and(|r| r.status() == StatusCode::OK);
            if ok {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "ringd not ready within {limit:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The ring's current version and fingerprint.
    pub(crate) async fn state_of(&self, ring: &str) -> (u64, String) {
        let v = self.get_ok(&format!("/v1/rings/{ring}")).await;
        (
            v["version"].as_u64().unwrap(),
            v["fingerprint"].as_str().unwrap().to_owned(),
        )
    }

    /// The same ring through another instance.
    pub(crate) fn on(&self, base: &str) -> Self {
        Self::new(base, &self.ring)
    }

    fn url(&self, rest: &str) -> String {
        format!("{}/v1/rings/{}{rest}", self.base, self.ring)
    }

    async fn json_as(resp: reqwest::Response, want: StatusCode, what: &str) -> Value {
        let status = resp.status();
        let text = resp.text().await.expect("body");
        assert_eq!(status, want, "{what}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"))
    }

    /// Creates the ring with `config`; returns its version (1).
    pub(crate) async fn create_with(&self, config: Value) -> u64 {
        let r = self.http.put(self.url("")).json(&config).send().await;
        let body = Self::json_as(r.expect("PUT ring"), StatusCode::CREATED, "create").await;
        body["version"].as_u64().expect("version")
    }

    /// Creates the ring with the default config; returns its version (1).
    pub(crate) async fn create(&self) -> u64 {
        self.create_with(json!({})).await
    }

    /// Applies `ops` as one change; returns the new version.
    pub(crate) async fn change(&self, ops: Value) -> u64 {
        let r = self
            .http
            .post(self.url("/changes"))
            .json(&json!({ "ops": ops }))
            .send()
            .await;
        let body = Self::json_as(r.expect("POST changes"), StatusCode::OK, "change").await;
        body["version"].as_u64().expect("version")
    }

    /// Adds (or replaces) node `id` with `weight`; returns the new version.
    pub(crate) async fn upsert(&self, id: &str, weight: u32) -> u64 {
        self.change(json!([{"op": "upsert", "node": {"id": id, "weight": weight}}]))
            .await
    }

    /// Adds nodes with weight 1, one change each; returns the last version.
    pub(crate) async fn add_each(&self, ids: &[&str]) -> u64 {
        let mut v = 0;
        for id in ids {
            v = self.upsert(id, 1).await;
        }
        v
    }

    /// Removes node `id`; returns the new version.
    pub(crate) async fn remove(&self, id: &str) -> u64 {
        self.change(json!([{"op": "remove", "id": id}])).await
    }

    /// Deletes the ring.
    pub(crate) async fn delete_ring(&self) {
        let r = self.http.delete(self.url("")).send().await.expect("DELETE");
        assert_eq!(r.status(), StatusCode::NO_CONTENT, "delete ring");
    }

    /// `GET …/lookup` of `key` at `version` with `replicas`: the owner and
    /// the preference list.
    pub(crate) async fn lookup(
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
        let body = Self::json_as(r.expect("lookup"), StatusCode::OK, "lookup").await;
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
    pub(crate) async fn snapshot(&self, v: u64) -> Value {
        let r = self
            .http
            .get(self.url(&format!("/snapshots/{v}")))
            .send()
            .await;
        Self::json_as(r.expect("snapshot"), StatusCode::OK, "snapshot").await
    }

    /// `POST …/clients/{client}/ack` of `version` and `fingerprint`,
    /// asserting 200; the body.
    pub(crate) async fn ack(&self, client: &str, version: u64, fingerprint: &str) -> Value {
        let r = self
            .http
            .post(self.url(&format!("/clients/{client}/ack")))
            .json(&json!({"version": version, "fingerprint": fingerprint}))
            .send()
            .await;
        Self::json_as(r.expect("POST ack"), StatusCode::OK, "ack").await
    }

    /// `GET …/clients`.
    pub(crate) async fn clients(&self) -> Value {
        let r = self.http.get(self.url("/clients")).send().await;
        Self::json_as(r.expect("clients"), StatusCode::OK, "clients").await
    }

    /// Asserts the server lists `id` on `version`, matching the server's
    /// fingerprint for it and current.
    pub(crate) async fn assert_acked(&self, id: &str, version: u64) {
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
    pub(crate) async fn wait_listed(&self, id: &str, version: u64) {
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
    pub(crate) async fn assert_routes_like_server(&self, client: &RingClient, version: u64) {
        assert_eq!(client.version(), Some(version));
        let mut router = client.router();
        assert_eq!(router.version(), Some(version));
        for key in super::client::keys() {
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

impl Server {
    /// Typed requests to this server.
    pub(crate) fn api(&self) -> &TestApi {
        &self.api
    }
}

impl Deref for Server {
    type Target = TestApi;

    fn deref(&self) -> &TestApi {
        &self.api
    }
}

/// Asserts the status and returns the body as JSON.
pub(crate) async fn expect_json(r: Response, status: StatusCode) -> Value {
    let got = r.status();
    let text = r.text().await.expect("body");
    assert_eq!(got, status, "unexpected status; body: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The names of every ring.
pub(crate) async fn rings(s: &TestApi) -> Vec<String> {
    s.get_ok("/v1/rings").await["rings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ring"].as_str().unwrap().to_owned())
        .collect()
}
