//! `handoff(key)`: the owner now and the owner before the last applied
//! change, each equal to the server's lookup at that version.
#![cfg(feature = "server")]

use ringd::client::{Handoff, WatchMode};

use crate::support::api::TestApi;
use crate::support::client::{client, wait_status};
use crate::support::ringd::Ringd;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn handoff_names_the_owner_now_and_before_the_last_change() {
    let s = Ringd::sqlite().in_process().start();
    let api = TestApi::new(&s.base, "cache");
    api.create().await;
    let v4 = api.add_each(&["a", "b", "c", "d"]).await;
    let c = client(&[&s.base], "cache", WatchMode::Sse, "handoff-1");
    wait_status(&c, "v4", |st| st.version == Some(v4)).await;
    let v5 = api.upsert("e", 1).await;
    wait_status(&c, "v5", |st| st.version == Some(v5)).await;
    let mut moved = 0;
    for i in 0..400 {
        let key = format!("user:{i}");
        let (now, _) = api.lookup(&key, v5, 1).await;
        let (before, _) = api.lookup(&key, v4, 1).await;
        let h = c.handoff(key.as_bytes());
        assert_eq!(h.owner_now.as_ref().map(ToString::to_string), now, "{key}");
        assert_eq!(
            h.owner_before.as_ref().map(ToString::to_string),
            before,
            "{key}"
        );
        assert_eq!((h.version, h.version_before), (Some(v5), Some(v4)));
        assert_eq!(h.moved(), now != before, "{key}");
        if h.moved() {
            // Adding a node moves keys only onto it.
            assert_eq!(now.as_deref(), Some("e"), "{key}");
            moved += 1;
        }
    }
    // About a fifth of the keys move to the fifth node.
    assert!((40..=130).contains(&moved), "{moved} of 400 moved");
}

#[test]
fn before_the_first_version_there_is_no_owner() {
    assert_eq!(Handoff::default().owner_now, None);
    assert!(!Handoff::default().moved());
}
