//! Helpers for the tests of self-registered nodes (`client::Member`,
//! `ringd node join`, the membership policy): a node's entry in
//! `GET …/nodes`, polled until it says what a test waits for, proof that
//! the decision-maker has looked again, and a URL nothing listens on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

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

/// Waits until the decision-maker has gone on deciding for at least
/// `activate_after`'s minimum (1 s, four of its 250 ms ticks) since the
/// call, over every ring: a node registered now as `joining` in a ring of
/// its own becomes active only then.
///
/// A test that has seen the last automatic version it expects calls this,
/// then checks that nothing followed: every tick of that second could have
/// committed a stray one. Unlike a fixed sleep it fails, after `limit`,
/// when the decision-maker has stopped deciding.
pub(crate) async fn decider_looked_again(api: &TestApi, limit: Duration) {
    static MARKERS: AtomicU64 = AtomicU64::new(0);
    let marker = api.for_ring(&format!(
        "marker-{}",
        MARKERS.fetch_add(1, Ordering::Relaxed)
    ));
    let policy = json!({"on_join": "joining", "activate_after": "1s"});
    let created = marker
        .put(
            &format!("/v1/rings/{}", marker.ring),
            json!({"membership": policy}),
        )
        .await;
    assert_eq!(created.status().as_u16(), 201, "create {}", marker.ring);
    let joined = marker
        .put(
            &format!("/v1/rings/{}/nodes/m/lease", marker.ring),
            json!({"address": "10.0.0.1:1", "ttl": "1h"}),
        )
        .await;
    assert_eq!(joined.status().as_u16(), 201, "register in {}", marker.ring);
    wait_node(&marker, "m", "activated", limit, |n| {
        n.is_some_and(|n| n["state"] == "active")
    })
    .await;
}

/// `http://127.0.0.1:<port>` of a port that was free a moment ago and is
/// closed now, so connecting to it is refused at once.
pub(crate) fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}
