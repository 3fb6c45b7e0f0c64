//! The HTTP side of the benchmark's set-up: the ring, its policy and its
//! nodes, added in a few batched changes rather than one version per node.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response};
use serde_json::{json, Value};

use crate::Options;

/// A request that has not answered within this is counted as an error,
/// so one stuck connection shows up instead of stalling the node.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The id of simulated node `i`.
pub(crate) fn node_id(i: usize) -> String {
    format!("node-{i:05}")
}

/// The address of simulated node `i`: unique, never dialled.
pub(crate) fn address(i: usize) -> String {
    format!(
        "10.{}.{}.{}:11211",
        (i >> 16) & 255,
        (i >> 8) & 255,
        i & 255
    )
}

/// The instances, the ring and the one HTTP client every request shares.
#[derive(Clone)]
pub(crate) struct Api {
    http: reqwest::Client,
    urls: Vec<String>,
    token: Option<String>,
    /// The ring's path, `/v1/rings/{ring}`.
    pub(crate) ring_path: String,
}

impl Api {
    pub(crate) fn new(o: &Options) -> Self {
        let http = reqwest::Client::builder()
            // At most `connections + register_connections` requests are in
            // flight at once (two semaphores), so this many idle connections per instance are
            // all that is ever reused.
            .pool_max_idle_per_host(o.connections + o.register_connections)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .expect("an HTTP client");
        Self {
            http,
            urls: o
                .urls
                .iter()
                .map(|u| u.trim_end_matches('/').to_string())
                .collect(),
            token: o.token.clone(),
            ring_path: format!("/v1/rings/{}", o.ring),
        }
    }

    /// How many instances there are.
    pub(crate) fn instances(&self) -> usize {
        self.urls.len()
    }

    /// A request to instance `i` (modulo their number) for `path`.
    pub(crate) fn request(&self, method: Method, i: usize, path: &str) -> RequestBuilder {
        let url = format!("{}{path}", self.urls[i % self.urls.len()]);
        let r = self.http.request(method, url);
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    /// The body of `url` (a metrics page), or `None` if it cannot be read.
    pub(crate) async fn text(&self, url: &str) -> Option<String> {
        let r = self.http.get(url).send().await.ok()?;
        r.error_for_status().ok()?.text().await.ok()
    }

    /// The ring's version as instance `i` serves it.
    pub(crate) async fn version(&self, i: usize) -> u64 {
        let r = self.request(Method::GET, i, &self.ring_path).send().await;
        let body: Value = ok(r, "read the ring")
            .await
            .json()
            .await
            .expect("ring JSON");
        body["version"].as_u64().expect("the ring's version")
    }

    /// Creates the ring, with `drain_after` in its membership policy when
    /// asked. `Ok(Some(d))`: the ring has `drain_after` `d`; `Ok(None)`:
    /// none was asked; `Err(why)`: the server refused the policy, and the
    /// ring was created without it.
    pub(crate) async fn create_ring(&self, o: &Options) -> Result<Option<String>, String> {
        let mut config = serde_json::Map::new();
        if let Some(a) = &o.algorithm {
            config.insert("algorithm".into(), json!(a));
        }
        let Some(drain_after) = &o.drain_after else {
            self.put_ring(Value::Object(config))
                .await
                .expect("create the ring");
            return Ok(None);
        };
        let mut with_policy = config.clone();
        with_policy.insert("membership".into(), json!({ "drain_after": drain_after }));
        match self.put_ring(Value::Object(with_policy)).await {
            Ok(ring) if ring["config"]["membership"]["drain_after"].is_string() => {
                Ok(Some(drain_after.clone()))
            }
            Ok(ring) => Err(format!(
                "the ring was created but its config has no membership.drain_after: {}",
                ring["config"]
            )),
            Err(refusal) => {
                self.put_ring(Value::Object(config))
                    .await
                    .expect("create the ring");
                Err(refusal)
            }
        }
    }

    /// `PUT` the ring with `config`: its body, or the refusal's status
    /// and detail.
    async fn put_ring(&self, config: Value) -> Result<Value, String> {
        let r = self
            .request(Method::PUT, 0, &self.ring_path)
            .json(&config)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = r.status();
        let body: Value = r.json().await.map_err(|e| e.to_string())?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(format!("{status}: {}", body["detail"]))
        }
    }

    /// Adds every node in changes of `o.batch` upserts through the first
    /// instance; returns the ring's version before and after.
    pub(crate) async fn add_nodes(&self, o: &Options) -> (u64, u64) {
        let before = self.version(0).await;
        let ids: Vec<usize> = (0..o.nodes).collect();
        for chunk in ids.chunks(o.batch.max(1)) {
            let ops: Vec<Value> = chunk
                .iter()
                .map(
                    |&i| json!({"op": "upsert", "node": {"id": node_id(i), "address": address(i)}}),
                )
                .collect();
            let r = self
                .request(Method::POST, 0, &format!("{}/changes", self.ring_path))
                .json(&json!({ "ops": ops, "reason": "lease benchmark set-up" }))
                .send()
                .await;
            ok(r, "add a batch of nodes").await;
        }
        (before, self.version(0).await)
    }
}

/// The response if it is a success; otherwise the tool stops, naming
/// `what` failed and the server's answer, since nothing after a failed
/// set-up would measure what it claims to.
pub(crate) async fn ok(r: reqwest::Result<Response>, what: &str) -> Response {
    let r = r.unwrap_or_else(|e| panic!("{what}: {e}"));
    if r.status().is_success() {
        return r;
    }
    let status = r.status();
    let body = r.text().await.unwrap_or_default();
    panic!("{what}: {status}: {body}");
}
