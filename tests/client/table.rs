//! The client on a `table` ring: it downloads the table when it has no
//! version to build on, applies a version's moves to the one it holds when
//! they are sent, and routes exactly as the server looks up either way.
#![cfg(feature = "server")]

use serde_json::json;

use crate::support::api::TestApi;
use crate::support::client::{client, wait_status};
use crate::support::ringd::Ringd;
use ringd::client::WatchMode;

#[tokio::test]
async fn a_table_ring_is_followed_through_moves_and_downloads() {
    for mode in [WatchMode::Sse, WatchMode::LongPoll] {
        let s = Ringd::sqlite().in_process().start();
        let api = TestApi::new(&s.base, "t");
        api.create_with(json!({"algorithm": "table", "partitions": 4096}))
            .await;
        assert_eq!(api.add_each(&["a", "b", "c", "d"]).await, 5);
        let c = client(&[&s.base], "t", mode, "table-client");
        let st = wait_status(&c, "version 5", |st| st.version == Some(5)).await;
        // Nothing held yet: the table is downloaded.
        assert_eq!((st.table_downloads, st.table_moves_applied), (1, 0));
        api.assert_routes_like_server(&c, 5).await;

        // A fifth node takes a fifth of the slots: far fewer bytes of moves
        // than the table, so they come with the version.
        assert_eq!(api.upsert("e", 1).await, 6);
        let st = wait_status(&c, "version 6", |st| st.version == Some(6)).await;
        assert_eq!(
            (st.table_downloads, st.table_moves_applied),
            (1, 1),
            "{mode:?}"
        );
        api.assert_routes_like_server(&c, 6).await;
        assert_eq!(api.upsert("b", 3).await, 7);
        let st = wait_status(&c, "version 7", |st| st.version == Some(7)).await;
        assert_eq!(
            (st.table_downloads, st.table_moves_applied),
            (1, 2),
            "{mode:?}"
        );
        api.assert_routes_like_server(&c, 7).await;

        // New partitions cannot be reached by moves: downloaded again.
        api.change(json!([{"op": "update_config", "config": {"partitions": 1024}}]))
            .await;
        let st = wait_status(&c, "version 8", |st| st.version == Some(8)).await;
        assert_eq!(
            (st.table_downloads, st.table_moves_applied),
            (2, 2),
            "{mode:?}"
        );
        api.assert_routes_like_server(&c, 8).await;
        assert_eq!(st.last_error, None);
    }
}
