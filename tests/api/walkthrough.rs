//! The README walk-through over HTTP: create a ring, add three nodes, look
//! up a key, dry-run a fourth node, apply it, read the diff and history.
//! Answers are checked against the placement core computed in-process.

use crate::support::api::expect_json;
use crate::support::ringd::Ringd;
use reqwest::StatusCode;
use ringd::placement::{Node, NodeId, Placement, RingConfig};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

fn placement(ids: &[&str]) -> Placement {
    let nodes: Vec<Node> = ids
        .iter()
        .map(|id| Node::new(NodeId::new(*id).unwrap()))
        .collect();
    Placement::build(&RingConfig::default(), &nodes).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[tokio::test]
async fn the_readme_walkthrough_runs_against_a_live_server() {
    let s = Ringd::sqlite().in_process().start();

    // 1. Create a ring.
    let r = s.put("/v1/rings/cache", json!({"algorithm": "ring"})).await;
    assert_eq!(r.headers()["etag"], "\"1\"");
    assert_eq!(r.headers()["location"], "/v1/rings/cache");
    let ring = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(ring["ring"], "cache");
    assert_eq!(ring["version"], 1);
    assert_eq!(ring["nodes"], 0);
    assert_eq!(ring["config"]["algorithm"], "ring");
    assert_eq!(ring["config"]["hash"], "xxh3");
    assert_eq!(
        ring["fingerprint"],
        placement(&[]).fingerprint().to_string()
    );

    // 2. Add three nodes: one version each.
    for (i, id) in ["cache-a", "cache-b", "cache-c"].iter().enumerate() {
        let body = json!({"address": format!("10.0.0.{}:11211", i + 1), "weight": 1});
        let r = s.put(&format!("/v1/rings/cache/nodes/{id}"), body).await;
        let res = expect_json(r, StatusCode::CREATED).await;
        assert_eq!(res["version"], i as u64 + 2);
        assert_eq!(res["base_version"], i as u64 + 1);
        assert_eq!(res["changed"], true);
        assert_eq!(res["dry_run"], false);
    }
    let three = placement(&["cache-a", "cache-b", "cache-c"]);
    let nodes = s.get_ok("/v1/rings/cache/nodes").await;
    assert_eq!(nodes["version"], 4);
    let ids: Vec<&str> = nodes["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["cache-a", "cache-b", "cache-c"]);
    assert_eq!(nodes["nodes"][1]["address"], "10.0.0.2:11211");
    assert_eq!(nodes["nodes"][1]["state"], "active");

    // 3. Look up a key: exactly what the placement core says.
    let found = s
        .get_ok("/v1/rings/cache/lookup?key=user:1234&replicas=2")
        .await;
    let expected: Vec<String> = three
        .preference_list(b"user:1234", 2)
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(
        found,
        json!({
            "version": 4,
            "key": "user:1234",
            "hash": three.key_hash(b"user:1234").to_string(),
            "owner": expected[0],
            "replicas": expected,
        })
    );
    let batch = s
        .post(
            "/v1/rings/cache/lookup",
            json!({"keys": ["user:1234", "b", "a"]}),
        )
        .await;
    let batch = expect_json(batch, StatusCode::OK).await;
    assert_eq!(batch["version"], 4);
    assert_eq!(batch["replicas"], 3, "defaults to the replication factor");
    let keys: Vec<&str> = batch["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["user:1234", "b", "a"], "results in key order");
    assert_eq!(batch["results"][0]["owner"], expected[0]);
    assert_eq!(batch["results"][0]["replicas"].as_array().unwrap().len(), 3);

    // 4. Dry-run a fourth node and read the moved fraction.
    let four = placement(&["cache-a", "cache-b", "cache-c", "cache-d"]);
    let exact = three.diff(&four);
    let add_d = json!({"ops": [{"op": "upsert", "node": {"id": "cache-d"}}],
                       "expected_version": 4, "reason": "add cache-d"});
    let mut dry = add_d.clone();
    dry["dry_run"] = json!(true);
    let r = s.post("/v1/rings/cache/changes", dry).await;
    assert!(
        r.headers().get("etag").is_none(),
        "a dry run commits no version"
    );
    let preview = expect_json(r, StatusCode::OK).await;
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["base_version"], 4);
    assert_eq!(preview["version"], 5);
    assert_eq!(preview["summary"]["nodes"], 4);
    assert_eq!(
        preview["summary"]["fingerprint"],
        four.fingerprint().to_string()
    );
    let moved = check_diff(&preview["diff"], exact.moved_fraction);
    assert!(
        (0.2..0.3).contains(&moved),
        "adding 1 node to 3 moves about 1/4: {moved}"
    );
    assert_eq!(
        s.state_of("cache").await.0,
        4,
        "the dry run changed nothing"
    );

    // 5. Apply it.
    let r = s.post("/v1/rings/cache/changes", add_d).await;
    assert_eq!(r.headers()["etag"], "\"5\"");
    let applied = expect_json(r, StatusCode::OK).await;
    assert_eq!(applied["dry_run"], false);
    assert_eq!(applied["changed"], true);
    assert_eq!(applied["version"], 5);
    assert_eq!(
        applied["summary"],
        preview["summary"].clone().with_time(&applied["summary"])
    );
    check_diff(&applied["diff"], moved);

    // 6. Read the diff and the history.
    let diff = s.get_ok("/v1/rings/cache/diff?from=4&to=5").await;
    assert_eq!(
        (diff["from"].as_u64(), diff["to"].as_u64()),
        (Some(4), Some(5))
    );
    check_diff(&diff["diff"], moved);
    let latest = s.get_ok("/v1/rings/cache/diff?from=4").await;
    assert_eq!(latest["to"], 5, "`to` defaults to the latest");

    let history = s.get_ok("/v1/rings/cache/history").await;
    let entries = history["entries"].as_array().unwrap();
    let versions: Vec<u64> = entries
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, [1, 2, 3, 4, 5]);
    assert_eq!(entries[0]["reason"], "ring created");
    assert_eq!(entries[0]["ops"][0]["op"], "set_config");
    let last = &entries[4];
    assert_eq!(last["reason"], "add cache-d");
    assert_eq!(last["role"], "anonymous");
    assert_eq!(
        last["ops"],
        json!([{"op": "upsert", "node": {"id": "cache-d", "weight": 1, "labels": {}, "state": "active"}}])
    );
    assert!(close(last["moved_fraction"].as_f64().unwrap(), moved));
    assert!(last["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(last["fingerprint"], four.fingerprint().to_string());

    // The snapshot, its binary table and ownership agree with the core.
    let r = s.get("/v1/rings/cache/snapshot").await;
    assert_eq!(r.headers()["etag"], "\"5\"");
    let snap = expect_json(r, StatusCode::OK).await;
    assert_eq!(snap["version"], 5);
    assert_eq!(snap["nodes"].as_array().unwrap().len(), 4);
    assert_eq!(snap["change"]["reason"], "add cache-d");
    assert_eq!(snap, s.get_ok("/v1/rings/cache/snapshots/5").await);
    let r = s.get("/v1/rings/cache/snapshots/5/table").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "application/octet-stream");
    assert_eq!(
        r.headers()["ringd-fingerprint"],
        four.fingerprint().to_string().as_str()
    );
    let table = r.bytes().await.unwrap();
    assert_eq!(table.as_ref(), four.encode().as_slice());
    assert_eq!(hex(&Sha256::digest(&table)), four.fingerprint().to_string());
    let old_table = s
        .get("/v1/rings/cache/snapshots/4/table")
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(old_table.as_ref(), three.encode().as_slice());

    let own = s.get_ok("/v1/rings/cache/ownership").await;
    assert_eq!(own["version"], 5);
    assert_eq!(own["basis"], "arcs");
    let core = four.ownership();
    assert_eq!(own["total_units"], core.total_units.to_string());
    for (wire, n) in own["nodes"].as_array().unwrap().iter().zip(&core.nodes) {
        assert_eq!(wire["id"], n.id.as_str());
        assert_eq!(wire["units"], n.units.to_string());
        assert!(close(wire["share"].as_f64().unwrap(), n.share));
        assert!(close(wire["ratio"].as_f64().unwrap(), n.ratio));
    }
    assert!(close(
        own["max_over_mean"].as_f64().unwrap(),
        core.max_over_mean
    ));
    let own4 = s.get_ok("/v1/rings/cache/ownership?version=4").await;
    assert_eq!(own4["nodes"].as_array().unwrap().len(), 3);

    // Old versions still answer lookups.
    let old = s
        .get_ok("/v1/rings/cache/lookup?key=user:1234&version=4")
        .await;
    assert_eq!(old["version"], 4);
    assert_eq!(old["owner"], expected[0]);
}

/// Checks a diff body: every transfer goes to the new node, the parts add
/// up, and the moved fraction is the core's. Returns the moved fraction.
fn check_diff(diff: &Value, exact: f64) -> f64 {
    assert_eq!(diff["basis"], "ranges");
    let moved = diff["moved_fraction"].as_f64().unwrap();
    assert!(close(moved, exact), "{moved} vs {exact}");
    let transfers = diff["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 3, "one transfer from each old node");
    let mut sum = 0.0;
    for (t, from) in transfers.iter().zip(["cache-a", "cache-b", "cache-c"]) {
        assert_eq!(t["from"], from);
        assert_eq!(t["to"], "cache-d");
        sum += t["fraction"].as_f64().unwrap();
    }
    assert!((sum - moved).abs() < 1e-9);
    let d = &diff["nodes"][3];
    assert_eq!(d["id"], "cache-d");
    assert!((d["gained"].as_f64().unwrap() - moved).abs() < 1e-9);
    assert_eq!(d["lost"], 0.0);
    let ranges = diff["moved_ranges"].as_array().unwrap();
    assert!(!ranges.is_empty());
    assert_eq!(diff["moved_ranges_total"], ranges.len());
    assert_eq!(diff["moved_ranges_truncated"], false);
    assert!(ranges.iter().all(|r| r["to"] == "cache-d"));
    assert!(ranges[0]["first"].as_str().unwrap().parse::<u64>().is_ok());
    moved
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies `created_at` from another summary: a preview's time is when it
/// was computed, not when the version was committed.
trait WithTime {
    fn with_time(self, from: &Value) -> Value;
}

impl WithTime for Value {
    fn with_time(mut self, from: &Value) -> Value {
        self["created_at"] = from["created_at"].clone();
        self
    }
}
