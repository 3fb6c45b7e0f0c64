//! Versions: +1 per accepted change, none for a no-op, compare-and-swap
//! between concurrent writers, durability across restarts, ETags and
//! pruning.

use crate::support::api::expect_json;
use crate::support::api::TestApi;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test]
async fn every_accepted_change_adds_exactly_one() {
    let s = Ringd::sqlite().in_process().start();
    let mut version = s.ring_with("r", &["a"]).await;
    assert_eq!(version, 2);
    let changes = [
        json!({"ops": [{"op": "upsert", "node": {"id": "b", "weight": 3}}]}),
        json!({"ops": [{"op": "upsert", "node": {"id": "a", "state": "draining"}},
                       {"op": "upsert", "node": {"id": "c", "zone": "z1"}},
                       {"op": "remove", "id": "b"}]}),
        json!({"ops": [{"op": "update_config", "config": {"algorithm": "maglev", "table_size": 251}}]}),
    ];
    for body in changes {
        let res = expect_json(s.post("/v1/rings/r/changes", body).await, StatusCode::OK).await;
        assert_eq!(res["base_version"], version);
        version += 1;
        assert_eq!(res["version"], version);
    }
    let res = expect_json(s.delete("/v1/rings/r/nodes/c").await, StatusCode::OK).await;
    assert_eq!(res["version"], version + 1);
    let history = s.get_ok("/v1/rings/r/history").await;
    let versions: Vec<u64> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, (1..=6).collect::<Vec<_>>(), "gapless");
    let snap = s.get_ok("/v1/rings/r/snapshot").await;
    assert_eq!(snap["config"]["algorithm"], "maglev");
    assert_eq!(
        snap["nodes"],
        json!([{"id": "a", "weight": 1, "labels": {}, "state": "draining"}])
    );
}

#[tokio::test]
async fn a_no_op_creates_no_version() {
    let s = Ringd::sqlite().in_process().start();
    s.ring_with("r", &[]).await;
    let node = json!({"address": "h:1", "weight": 2, "labels": {"rack": "r1"}});
    let first = expect_json(
        s.put("/v1/rings/r/nodes/n1", node.clone()).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(first["version"], 2);

    // Re-registering the identical node.
    let again = expect_json(s.put("/v1/rings/r/nodes/n1", node).await, StatusCode::OK).await;
    assert_eq!(again["changed"], false);
    assert_eq!(again["version"], 2);
    assert_eq!(again["base_version"], 2);
    assert!(again.get("diff").is_none());

    // The same as a change, and a ring PUT with the identical config.
    let same = json!({"ops": [{"op": "upsert", "node": {"id": "n1", "address": "h:1", "weight": 2, "labels": {"rack": "r1"}}}]});
    let res = expect_json(s.post("/v1/rings/r/changes", same).await, StatusCode::OK).await;
    assert_eq!(
        (res["changed"].as_bool(), res["version"].as_u64()),
        (Some(false), Some(2))
    );
    let res = expect_json(
        s.put("/v1/rings/r", json!({"algorithm": "ring"})).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(res["version"], 2);

    let history = s.get_ok("/v1/rings/r/history").await;
    assert_eq!(history["entries"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn concurrent_writers_with_the_same_expected_version() {
    let s = Ringd::sqlite().in_process().start();
    let mut version = s.ring_with("r", &["a", "b"]).await;
    for round in 0..5 {
        let one = json!({"ops": [{"op": "upsert", "node": {"id": format!("x{round}")}}], "expected_version": version});
        let two = json!({"ops": [{"op": "upsert", "node": {"id": format!("y{round}")}}], "expected_version": version});
        let (r1, r2) = tokio::join!(
            s.post("/v1/rings/r/changes", one),
            s.post("/v1/rings/r/changes", two)
        );
        let mut statuses = [r1.status(), r2.status()];
        statuses.sort();
        assert_eq!(
            statuses,
            [StatusCode::OK, StatusCode::PRECONDITION_FAILED],
            "round {round}"
        );
        let (winner, loser) = if r1.status() == StatusCode::OK {
            (r1, r2)
        } else {
            (r2, r1)
        };
        let won = expect_json(winner, StatusCode::OK).await;
        assert_eq!(won["version"], version + 1);
        let lost = assert_problem(
            loser,
            Problem::status(412)
                .slug("precondition-failed")
                .detail_has("version"),
        )
        .await;
        assert_eq!(lost["current_version"], version + 1);
        version += 1;
    }
    let (v, _) = s.state_of("r").await;
    assert_eq!(v, version);
    let nodes = s.get_ok("/v1/rings/r/nodes").await;
    assert_eq!(
        nodes["nodes"].as_array().unwrap().len(),
        2 + 5,
        "exactly one writer per round"
    );
}

#[tokio::test]
async fn if_match_is_a_precondition_too() {
    let s = Ringd::sqlite().in_process().start();
    let v = s.ring_with("r", &["a"]).await;
    let put = |tag: &str| {
        s.req(Method::PUT, "/v1/rings/r/nodes/b")
            .header("if-match", tag)
            .json(&json!({}))
            .send()
    };
    let stale = put("\"1\"").await.unwrap();
    let p = assert_problem(
        stale,
        Problem::status(412)
            .slug("precondition-failed")
            .detail_has("not the expected 1"),
    )
    .await;
    assert_eq!(p["current_version"], v);
    let fresh = put(&format!("\"{v}\"")).await.unwrap();
    assert_eq!(fresh.status(), StatusCode::CREATED);
    let r = s
        .req(Method::DELETE, "/v1/rings/r/nodes/b?expected_version=1")
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(412)
            .slug("precondition-failed")
            .detail_has("version"),
    )
    .await;
    let r = s
        .req(Method::DELETE, "/v1/rings/r")
        .header("if-match", "\"2\"")
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(412)
            .slug("precondition-failed")
            .detail_has("version"),
    )
    .await;
    let r = s
        .req(Method::DELETE, "/v1/rings/r")
        .header("if-match", "\"3\"")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(s.get("/v1/rings/r").await.status(), StatusCode::NOT_FOUND);
}

/// Everything a client can read about a ring, for comparing across restarts.
async fn everything(s: &TestApi) -> Value {
    let mut snapshots = Vec::new();
    let latest = s.state_of("r").await.0;
    for v in 1..=latest {
        snapshots.push(s.get_ok(&format!("/v1/rings/r/snapshots/{v}")).await);
    }
    json!({
        "rings": s.get_ok("/v1/rings").await,
        "snapshots": snapshots,
        "history": s.get_ok("/v1/rings/r/history").await,
        "other": s.get_ok("/v1/rings/other/snapshot").await,
    })
}

#[tokio::test]
async fn restarts_keep_every_ring_version_and_snapshot() {
    let dir = tempfile::TempDir::new().unwrap();
    let mut s = Ringd::sqlite_in(dir.path()).start();
    s.ring_with("r", &["a", "b", "c"]).await;
    s.ring_with("other", &["x"]).await;
    let body = json!({"ops": [{"op": "remove", "id": "b"}], "reason": "decommission b"});
    expect_json(s.post("/v1/rings/r/changes", body).await, StatusCode::OK).await;
    let before = everything(&s).await;

    // A crash: SIGKILL, then a new process on the same file.
    s.kill();
    let mut s = Ringd::sqlite_in(dir.path()).start();
    assert_eq!(everything(&s).await, before);
    let res = expect_json(
        s.put("/v1/rings/r/nodes/d", json!({})).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(res["version"], 6, "numbering continues");

    // A graceful stop (SIGTERM) exits 0 and also keeps everything.
    let before = everything(&s).await;
    let status = s.terminate();
    assert!(status.success(), "SIGTERM exit: {status:?}");
    assert!(s.log().contains("SIGTERM received"));
    let s = Ringd::sqlite_in(dir.path()).start();
    assert_eq!(everything(&s).await, before);
}

#[tokio::test]
async fn etags_and_not_modified() {
    let s = Ringd::sqlite().in_process().start();
    let v = s.ring_with("r", &["a"]).await;
    let tag = format!("\"{v}\"");
    for path in [
        "/v1/rings/r/snapshot",
        "/v1/rings/r",
        "/v1/rings/r/snapshots/2",
    ] {
        let r = s.get(path).await;
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert_eq!(r.headers()["etag"], tag.as_str(), "{path}");
        let r = s
            .req(Method::GET, path)
            .header("if-none-match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED, "{path}");
        assert_eq!(r.headers()["etag"], tag.as_str());
        assert!(r.bytes().await.unwrap().is_empty());
    }
    let r = s
        .req(Method::GET, "/v1/rings/r/snapshot")
        .header("if-none-match", "\"1\"")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "an older tag gets the new body");

    s.put("/v1/rings/r/nodes/b", json!({})).await;
    let r = s
        .req(Method::GET, "/v1/rings/r/snapshot")
        .header("if-none-match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "changed since the tag");
    assert_eq!(r.headers()["etag"], format!("\"{}\"", v + 1).as_str());
}

#[tokio::test]
async fn pruned_versions_are_gone() {
    let s = Ringd::sqlite()
        .args(&["--retention", "3"])
        .in_process()
        .start();
    let v = s.ring_with("r", &["a", "b", "c", "d"]).await;
    assert_eq!(v, 5);
    for old in [1, 2] {
        let r = s.get(&format!("/v1/rings/r/snapshots/{old}")).await;
        assert_problem(
            r,
            Problem::status(410)
                .slug("version-pruned")
                .field("version")
                .detail_has("pruned"),
        )
        .await;
        let r = s.get(&format!("/v1/rings/r/snapshots/{old}/table")).await;
        assert_problem(
            r,
            Problem::status(410)
                .slug("version-pruned")
                .field("version")
                .detail_has("pruned"),
        )
        .await;
        let r = s
            .get(&format!("/v1/rings/r/lookup?key=k&version={old}"))
            .await;
        assert_problem(
            r,
            Problem::status(410)
                .slug("version-pruned")
                .field("version")
                .detail_has("oldest retained is 3"),
        )
        .await;
    }
    for kept in [3, 4, 5] {
        let snap = s.get_ok(&format!("/v1/rings/r/snapshots/{kept}")).await;
        assert_eq!(snap["version"], kept);
    }
    let r = s.get("/v1/rings/r/snapshots/6").await;
    assert_problem(
        r,
        Problem::status(404)
            .slug("version-not-found")
            .field("version")
            .detail_has("latest is 5"),
    )
    .await;
    let history = s.get_ok("/v1/rings/r/history").await;
    let versions: Vec<u64> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, [3, 4, 5]);
    let r = s.get("/v1/rings/r/diff?from=2&to=5").await;
    assert_problem(
        r,
        Problem::status(410)
            .slug("version-pruned")
            .field("from")
            .detail_has("pruned"),
    )
    .await;
}
