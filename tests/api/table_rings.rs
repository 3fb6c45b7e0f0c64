//! `table` rings over HTTP: exact quotas in the ownership, a dry run that
//! the apply reproduces, diffs whose moves equal a comparison of the two
//! downloaded tables, the table kept through a restart, a zone rule the
//! weights cannot meet refused with its reason, and a change the greedy
//! passes cannot finish committed with a table that meets the rules.
#![cfg(feature = "server")]

use std::collections::BTreeMap;

use reqwest::StatusCode;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support::api::{expect_json, TestApi};
use crate::support::ringd::Ringd;

/// A downloaded canonical encoding read as `docs/placement-spec.md`
/// describes it: the node ids of its header, and each partition's row of
/// ids, primary first.
fn rows(encoding: &[u8]) -> Vec<Vec<String>> {
    let u32_at = |at: usize| u32::from_le_bytes(encoding[at..at + 4].try_into().unwrap());
    assert_eq!(&encoding[..8], b"RINGDPL\x01");
    assert_eq!(encoding[8], 6, "algorithm code of table");
    let count = u32_at(16) as usize;
    let mut at = 20;
    let mut ids = Vec::new();
    for _ in 0..count {
        let len = encoding[at] as usize;
        ids.push(String::from_utf8(encoding[at + 1..at + 1 + len].to_vec()).unwrap());
        at += 1 + len;
        at += 1 + encoding[at] as usize + 4;
    }
    let partitions = u32_at(at) as usize;
    let replicas = encoding[at + 4] as usize;
    at += 5;
    assert_eq!(
        encoding.len() - at,
        partitions * replicas * 2,
        "16-bit indices"
    );
    (0..partitions)
        .map(|p| {
            (0..replicas)
                .map(|s| {
                    let i = at + (p * replicas + s) * 2;
                    ids[u16::from_le_bytes([encoding[i], encoding[i + 1]]) as usize].clone()
                })
                .collect()
        })
        .collect()
}

async fn download(api: &TestApi, v: u64) -> Vec<u8> {
    let r = api.get(&format!("/v1/rings/t/snapshots/{v}/table")).await;
    assert_eq!(r.status(), StatusCode::OK);
    r.bytes().await.unwrap().to_vec()
}

/// `(partition, slot, from, to)` of every slot that differs.
fn compared(before: &[Vec<String>], after: &[Vec<String>]) -> Vec<Value> {
    let mut out = Vec::new();
    for (p, (a, b)) in before.iter().zip(after).enumerate() {
        for (s, to) in b.iter().enumerate() {
            if a.get(s) != Some(to) {
                out.push(json!({"partition": p, "slot": s, "from": a.get(s), "to": to}));
            }
        }
    }
    out
}

fn units(ownership: &Value, field: &str) -> BTreeMap<String, String> {
    ownership["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let v = &n[field];
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            (n["id"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

fn upsert(id: &str, weight: u32) -> Value {
    json!({"op": "upsert", "node": {"id": id, "weight": weight}})
}

#[tokio::test]
async fn a_table_ring_holds_exact_quotas_and_its_diffs_match_its_tables() {
    let dir = tempfile::TempDir::new().unwrap();
    let mut s = Ringd::sqlite_in(dir.path()).start();
    let api = s.api().for_ring("t");
    api.create_with(json!({"algorithm": "table", "partitions": 256, "replication_factor": 2}))
        .await;
    let config = &s.get_ok("/v1/rings/t").await["config"];
    assert_eq!(
        (config["algorithm"].clone(), config["partitions"].clone()),
        (json!("table"), json!(256))
    );
    let v2 = api
        .change(json!([upsert("a", 1), upsert("b", 1), upsert("c", 2)]))
        .await;
    // 512 replica slots by weight 1:1:2 are 128, 128 and 256 (one of every
    // partition for `c`), and 256 primaries 64, 64 and 128.
    let own = s.get_ok("/v1/rings/t/ownership").await;
    assert_eq!(own["basis"], "partitions");
    assert_eq!(own["total_units"], "256");
    let expect = |pairs: [(&str, &str); 3]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        units(&own, "replicas"),
        expect([("a", "128"), ("b", "128"), ("c", "256")])
    );
    assert_eq!(
        units(&own, "units"),
        expect([("a", "64"), ("b", "64"), ("c", "128")])
    );

    // A dry run, then the apply: the same table.
    let add = json!({"ops": [upsert("d", 4)], "dry_run": true});
    let preview = expect_json(
        s.post("/v1/rings/t/changes", add.clone()).await,
        StatusCode::OK,
    )
    .await;
    let mut commit = add;
    commit.as_object_mut().unwrap().remove("dry_run");
    let applied = expect_json(s.post("/v1/rings/t/changes", commit).await, StatusCode::OK).await;
    assert_eq!(applied["version"], v2 + 1);
    assert_eq!(
        applied["summary"]["fingerprint"],
        preview["summary"]["fingerprint"]
    );
    assert_eq!(applied["diff"], preview["diff"]);
    let v3 = v2 + 1;
    // 512 slots at 1:1:2:4 give d 256 and c 128; a and b 64 each.
    let own = s.get_ok("/v1/rings/t/ownership").await;
    assert_eq!(
        units(&own, "replicas"),
        [("a", "64"), ("b", "64"), ("c", "128"), ("d", "256")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>()
    );

    // The diff's moves are exactly the slots where the tables differ.
    let (t2, t3) = (download(&api, v2).await, download(&api, v3).await);
    let fingerprint = |v: &[u8]| format!("{:x}", Sha256::digest(v));
    assert_eq!(
        Value::from(fingerprint(&t3)),
        applied["summary"]["fingerprint"]
    );
    let moves = compared(&rows(&t2), &rows(&t3));
    let diff = s
        .get_ok(&format!("/v1/rings/t/diff?from={v2}&to={v3}"))
        .await["diff"]
        .clone();
    assert_eq!(diff["basis"], "partitions");
    assert_eq!(diff["table_moves"], Value::from(moves.clone()));
    assert_eq!(diff["table_moves_total"], moves.len());
    assert_eq!(diff["table_moves_truncated"], false);
    // `d` gained 256 replicas, each a copy onto a node without one.
    assert_eq!(diff["replicas_moved"], 256);
    // A snapshot never carries the table. Its moves are there for
    // watchers when shorter than the table: not for `d` taking half of
    // it (256 moves of 7 bytes against 1,029), but for a small re-weight.
    let snapshot = s.get_ok(&format!("/v1/rings/t/snapshots/{v3}")).await;
    assert!(snapshot.get("table").is_none());
    assert!(snapshot.get("table_moves").is_none(), "{snapshot}");
    let v4 = api.upsert("a", 2).await;
    let snapshot = s.get_ok(&format!("/v1/rings/t/snapshots/{v4}")).await;
    let t4 = download(&api, v4).await;
    let moved = compared(&rows(&t3), &rows(&t4)).len();
    let sent = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        snapshot["table_moves"].as_str().expect("moves"),
    )
    .unwrap();
    assert_eq!(sent.len(), 4 + moved * 7);
    assert_eq!(
        u32::from_le_bytes(sent[..4].try_into().unwrap()) as usize,
        moved
    );

    // The table is stored: after a restart the same bytes.
    s.kill();
    let s = Ringd::sqlite_in(dir.path()).start();
    let api = s.api().for_ring("t");
    assert_eq!(download(&api, v2).await, t2);
    assert_eq!(download(&api, v3).await, t3);
    assert_eq!(download(&api, v4).await, t4);
    // A lookup's owner and replicas are the row of the key's partition:
    // the top 8 bits (256 partitions) of its XXH3-64.
    for key in ["user:1234", "a", ""] {
        let partition = (xxhash_rust::xxh3::xxh3_64(key.as_bytes()) >> 56) as usize;
        let (owner, list) = api.lookup(key, v4, 2).await;
        assert_eq!(list, rows(&t4)[partition], "{key}");
        assert_eq!(owner.as_ref(), Some(&list[0]));
    }
}

#[tokio::test]
async fn a_zone_too_light_for_the_rule_is_refused_with_its_reason() {
    let s = Ringd::sqlite().in_process().start();
    let api = s.api().for_ring("t");
    api.create_with(json!({"algorithm": "table", "partitions": 256, "zone_aware": true}))
        .await;
    let zoned = |id: &str, weight: u32, zone: &str| json!({"op": "upsert", "node": {"id": id, "weight": weight, "zone": zone}});
    let v = api
        .change(json!([zoned("a1", 4, "a"), zoned("b1", 4, "b")]))
        .await;
    let before = s.get_ok("/v1/rings/t/snapshot").await;
    // Three replicas over three zones put one in `c` for every partition,
    // but `c` has 1/9 of the weight, a third of what that needs.
    let r = s
        .post("/v1/rings/t/changes", json!({"ops": [zoned("c1", 1, "c")]}))
        .await;
    let problem = expect_json(r, StatusCode::UNPROCESSABLE_ENTITY).await;
    assert_eq!(problem["type"], "urn:ringd:problem:unsatisfiable");
    assert_eq!(problem["reason"], "zone_too_light");
    assert_eq!(problem["field"], "zone");
    assert_eq!(
        problem["detail"],
        "zone `c` has 1 of the 9 total weight, too little to hold one replica of every \
         partition (3 replicas per partition over 3 zones need each zone to have at least \
         1/3 of the weight, less 10%): give its nodes more weight, add nodes to it, or lower \
         replication_factor below the number of zones"
    );
    // Nothing changed; with weight 4 the zone holds its share.
    assert_eq!(s.get_ok("/v1/rings/t/snapshot").await, before);
    assert_eq!(api.change(json!([zoned("c1", 4, "c")])).await, v + 1);
    let own = s.get_ok("/v1/rings/t/ownership").await;
    assert_eq!(
        units(&own, "replicas"),
        [("a1", "256"), ("b1", "256"), ("c1", "256")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>()
    );
    // Partitions outside the allowed powers of two are refused as input.
    let r = s
        .put(
            "/v1/rings/u",
            json!({"algorithm": "table", "partitions": 300}),
        )
        .await;
    let problem = expect_json(r, StatusCode::BAD_REQUEST).await;
    assert_eq!(problem["field"], "partitions");
    assert_eq!(
        problem["detail"],
        "partitions 300 is out of range: it must be a power of two from 256 to 1048576"
    );
}

#[tokio::test]
async fn a_node_added_to_a_light_zone_is_committed_with_a_table_that_meets_the_rules() {
    let s = Ringd::sqlite().in_process().start();
    let api = s.api().for_ring("t");
    api.create_with(json!({"algorithm": "table", "partitions": 4096, "replication_factor": 4, "zone_aware": true}))
        .await;
    let zoned = |id: &str, weight: u32, zone: &str| json!({"op": "upsert", "node": {"id": id, "weight": weight, "zone": zone}});
    let mut ops = vec![zoned("a0", 3, "a")];
    for (zone, first) in [("a", 1), ("b", 0), ("c", 0)] {
        for i in first..first + 4 {
            ops.push(zoned(&format!("{zone}{i}"), 1, zone));
        }
    }
    assert_eq!(api.change(Value::from(ops)).await, 2);
    // Zone `b` grows from 4 to 5 of the 16 weight: it must now hold two
    // replicas of a quarter of the partitions, `c` of none, and every
    // slot the greedy passes cannot fill is reached by a chain of moves.
    let r = s
        .post(
            "/v1/rings/t/changes",
            json!({"ops": [{"op": "upsert", "node": {"id": "b-new", "zone": "b"}}]}),
        )
        .await;
    let applied = expect_json(r, StatusCode::OK).await;
    assert_eq!(applied["version"], 3);
    assert_eq!(applied["summary"]["active_nodes"], 14);
    let table = download(&api, 3).await;
    assert_eq!(
        Value::from(format!("{:x}", Sha256::digest(&table))),
        applied["summary"]["fingerprint"]
    );
    let rows = rows(&table);
    assert_eq!(rows.len(), 4096);
    let mut held: BTreeMap<String, usize> = BTreeMap::new();
    for (p, row) in rows.iter().enumerate() {
        let mut ids = row.clone();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 4, "partition {p}: {row:?}");
        // Zones are the ids' first letters: every row spans all three.
        let mut zones: Vec<char> = row.iter().map(|id| id.chars().next().unwrap()).collect();
        zones.sort_unstable();
        zones.dedup();
        assert_eq!(zones, ['a', 'b', 'c'], "partition {p}: {row:?}");
        for id in row {
            *held.entry(id.clone()).or_default() += 1;
        }
    }
    // 16,384 slots by weight: `a0` 3/16, every other node 1/16.
    let mut want: BTreeMap<String, usize> = held.keys().map(|id| (id.clone(), 1024)).collect();
    want.insert("a0".into(), 3072);
    assert_eq!(want.len(), 14);
    assert_eq!(held, want);
    // `b-new`'s 1,024 replicas and the 6 more the chains of moves cost.
    assert_eq!(applied["diff"]["replicas_moved"], 1030);
}
