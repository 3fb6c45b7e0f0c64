//! A ring deleted and created again while the client could not hear of
//! it, up to the very version number the client holds: the same number,
//! another placement. Over SSE the server says so (the keep-alive a
//! resumed, current stream gets at once carries the newest fingerprint),
//! so the client must end up on the new placement.
#![cfg(feature = "server")]

use crate::support::api::TestApi;
use crate::support::client::{client, wait_status, Events, GUARD};
use crate::support::ringd::Ringd;
use ringd::client::{Transport, WatchMode};

/// After resuming with `after=4` on a ring that is again at version 4, the
/// keep-alive's fingerprint differs from the one held: the client must
/// replace its view with the new ring's version 4 (a reset), not keep
/// routing on the old ring's until the next change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ring_recreated_up_to_the_held_version_is_noticed_over_sse() {
    let mut s = Ringd::sqlite().start();
    let port = s.url.rsplit(':').next().expect("port").to_owned();
    let api = TestApi::new(&s.url, "cache");
    let c = client(&[&s.url], "cache", WatchMode::Sse, "same-number");
    let mut ev = Events::of(&c);
    wait_status(&c, "a refusal", |st| st.last_error.is_some()).await;
    assert_eq!(api.create().await, 1);
    ev.applied(None, 1, false).await;
    assert_eq!(api.add_each(&["n1", "n2", "n3"]).await, 4);
    ev.run(&api, 1, 4).await;
    c.wait_for_ack(4, GUARD).await.expect("ack of v4");
    let old = c.current().unwrap().fingerprint().to_string();

    s.kill();
    wait_status(&c, "disconnected", |st| {
        st.transport == Transport::Connecting
    })
    .await;
    // Meanwhile, through another instance on the same database: a new
    // ring of the same name, with other nodes, again at version 4.
    let side = Ringd::sqlite_in(&s.dir).start();
    let side_api = api.on(&side.url);
    side_api.delete_ring().await;
    assert_eq!(side_api.create().await, 1);
    assert_eq!(side_api.add_each(&["m1", "m2", "m3"]).await, 4);
    let new = side_api.snapshot(4).await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old);
    drop(side);

    let addr = format!("127.0.0.1:{port}");
    let back = Ringd::sqlite_in(&s.dir).args(&["--listen", &addr]).start();
    assert_eq!(back.url, s.url);
    let api = api.on(&back.url);
    wait_status(&c, "reconnected", |st| st.transport == Transport::Sse).await;
    let deadline = tokio::time::Instant::now() + GUARD;
    while c.current().unwrap().fingerprint().to_string() != new {
        if tokio::time::Instant::now() >= deadline {
            panic!(
                "after {GUARD:?} the client still routes on the old ring's v4 ({old}), not \
                 the new one ({new}); the server lists: {}",
                api.clients().await
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let change = ev.applied(Some(4), 4, true).await;
    assert_eq!(change.view.fingerprint().to_string(), new);
    api.assert_routes_like_server(&c, 4).await;
    api.wait_listed("same-number", 4).await;
}
