//! Helpers for the tests of self-registered nodes (`client::Member`,
//! `ringd node join`): a node's entry in `GET …/nodes`, polled until it
//! says what a test waits for, and a URL nothing listens on.

use std::time::Duration;

use serde_json::Value;

use super::api::TestApi;

/// Node `id`'s entry in ring `api.ring`'s node list, if it is there.
pub(crate) async fn node_entry(api: &TestApi, id: &str) -> Option<Value> {
    let list = api.get_ok(&format!("/v1/rings/{}/nodes", api.ring)).await;
    list["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["id"] == id)
        .cloned()
}

/// Polls node `id`'s entry every 50 ms until `done` holds for it (`None`
/// when the node is not listed); panics with the last entry after `limit`.
pub(crate) async fn wait_node(
    api: &TestApi,
    id: &str,
    what: &str,
    limit: Duration,
    done: impl Fn(Option<&Value>) -> bool,
) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let entry = node_entry(api, id).await;
        if done(entry.as_ref()) {
            return entry;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "node {id} not {what} within {limit:?}: {entry:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls until node `id` has `health`; returns its entry.
pub(crate) async fn wait_health(api: &TestApi, id: &str, health: &str, limit: Duration) -> Value {
    wait_node(api, id, health, limit, |n| {
        n.is_some_and(|n| n["health"] == health)
    })
    .await
    .expect("listed")
}

/// `http://127.0.0.1:<port>` of a port that was free a moment ago and is
/// closed now, so connecting to it is refused at once.
pub(crate) fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}
