//! The client library as applications build it, without the server
//! (`cargo test --release --no-default-features --features client --test
//! client_only`), against a real `ringd` process on a temporary SQLite
//! database. That build has no `ringd` binary of its own: the server is
//! the one cargo built for this test (the default build) or the one
//! `RINGD_BIN` names (built beforehand with `cargo build --release`).

#[allow(
    dead_code,
    reason = "this build uses only the launcher and the client helpers"
)]
mod support;

use std::time::Duration;

use ringd::client::{Transport, WatchMode};
use support::api::TestApi;
use support::client::{client, Events, GUARD};
use support::ringd::Ringd;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_only_build_follows_a_live_ring() {
    let s = Ringd::sqlite().start();
    let api = TestApi::new(&s.url, "web");
    assert_eq!(api.create().await, 1);
    assert_eq!(api.add_each(&["a", "b", "c"]).await, 4);
    let c = client(&[&s.url], "web", WatchMode::Auto, "client-only");
    let view = c.ready(GUARD).await.expect("ready");
    assert_eq!(view.version(), 4);
    let mut ev = Events::after_ready(&c, 4);
    api.assert_routes_like_server(&c, 4).await;

    assert_eq!(api.upsert("d", 2).await, 5);
    assert_eq!(api.remove("a").await, 6);
    ev.run(&api, 4, 6).await;
    api.assert_routes_like_server(&c, 6).await;
    c.wait_for_ack(6, GUARD).await.expect("ack of v6");
    api.assert_acked("client-only", 6).await;
    let st = c.status();
    assert_eq!(st.transport, Transport::Sse);
    assert_eq!(st.server.as_deref(), Some(s.url.as_str()));
    assert_eq!(
        (st.version, st.acked, st.deleted),
        (Some(6), Some(6), false)
    );
    assert_eq!(st.last_error, None);
    ev.none_within(Duration::from_millis(300)).await;
}
