//! Keys are bytes: `GET …/lookup?key_b64=` and `POST …/lookup` with
//! `keys_b64` answer for exactly the bytes sent, as the placement core
//! computes in-process from the same snapshot; a `key` that is not UTF-8
//! is refused instead of being placed as some other key.

use crate::support::api::expect_json;
use crate::support::api::TestApi;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use proptest::collection::vec;
use proptest::prelude::any;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use reqwest::StatusCode;
use ringd::client::RingClient;
use ringd::placement::Placement;
use ringd::ring::Snapshot;
use ringd::wire::SnapshotView;
use serde_json::{json, Value};

/// Every byte percent-encoded, so the query carries exactly these bytes.
fn percent_all(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("%{b:02X}")).collect()
}

/// The ring's latest snapshot, as a client would hold it, and its placement.
async fn placement_of(s: &TestApi, ring: &str) -> (Snapshot, Placement) {
    let body = s.get_ok(&format!("/v1/rings/{ring}/snapshot")).await;
    let view: SnapshotView = serde_json::from_value(body).expect("a snapshot");
    let snapshot = Snapshot::try_from(view).expect("a valid snapshot");
    let placement = snapshot.placement().expect("placement");
    assert_eq!(placement.fingerprint(), snapshot.fingerprint);
    (snapshot, placement)
}

/// Asserts that one answer places `key` as `p` does, with 3 replicas.
fn assert_placed(p: &Placement, key: &[u8], answer: &Value) {
    let owner = p.owner(key).map(ToString::to_string);
    let replicas: Vec<String> = p
        .preference_list(key, 3)
        .into_iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(answer["owner"].as_str(), owner.as_deref(), "{answer}");
    let got: Vec<&str> = answer["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(got, replicas, "{answer}");
    assert_eq!(answer["hash"], p.key_hash(key).to_string(), "{answer}");
}

#[tokio::test]
async fn random_byte_keys_are_placed_as_the_core_places_them() {
    let s = Ringd::sqlite().in_process().start();
    let configs = [
        (
            "ring",
            json!({"algorithm": "ring", "vnodes_per_weight": 16}),
        ),
        ("ketama", json!({"algorithm": "ketama"})),
        ("maglev", json!({"algorithm": "maglev", "table_size": 251})),
        ("jump", json!({"algorithm": "jump"})),
        (
            "rendezvous",
            json!({"algorithm": "rendezvous", "hash": "murmur3"}),
        ),
    ];
    // A fixed seed: the same 400 keys every run, of every length from 0
    // to 40 bytes and any byte values, most of them not UTF-8.
    let mut runner = TestRunner::deterministic();
    let keys: Vec<Vec<u8>> = vec(vec(any::<u8>(), 0..40), 400)
        .new_tree(&mut runner)
        .unwrap()
        .current();
    let not_utf8 = keys
        .iter()
        .filter(|k| std::str::from_utf8(k).is_err())
        .count();
    assert!(not_utf8 > 300, "only {not_utf8} keys are not UTF-8");
    for (ring, config) in configs {
        let r = s.put(&format!("/v1/rings/{ring}"), config).await;
        expect_json(r, StatusCode::CREATED).await;
        for (i, weight) in [1, 2, 1, 3, 1].into_iter().enumerate() {
            let r = s
                .put(
                    &format!("/v1/rings/{ring}/nodes/n{i}"),
                    json!({"weight": weight}),
                )
                .await;
            expect_json(r, StatusCode::CREATED).await;
        }
        let (snapshot, p) = placement_of(&s, ring).await;
        // The Rust client, holding the same snapshot, places bytes alike.
        let client = RingClient::fixed(snapshot.clone()).expect("a verified snapshot");
        for key in &keys {
            assert_eq!(client.owner(key).as_ref(), p.owner(key));
            let list: Vec<_> = p.preference_list(key, 3).into_iter().cloned().collect();
            assert_eq!(client.preference_list(key, 3), list);
        }

        // The batch, in base64: one answer per key, in order, echoing it.
        let encoded: Vec<String> = keys.iter().map(|k| STANDARD.encode(k)).collect();
        let r = s
            .post(
                &format!("/v1/rings/{ring}/lookup"),
                json!({"keys_b64": encoded, "replicas": 3}),
            )
            .await;
        let batch = expect_json(r, StatusCode::OK).await;
        assert_eq!(batch["version"], snapshot.version);
        let results = batch["results"].as_array().unwrap();
        assert_eq!(results.len(), keys.len());
        for ((key, e), answer) in keys.iter().zip(&encoded).zip(results) {
            assert_eq!(answer["key_b64"], *e, "{answer}");
            assert!(answer.get("key").is_none(), "{answer}");
            assert_placed(&p, key, answer);
        }

        // One at a time: `key_b64` always; `key` with the raw bytes
        // percent-encoded answers the same when they are UTF-8 and is
        // refused when they are not.
        for (key, e) in keys.iter().zip(&encoded).take(60) {
            let q = percent_all(e.as_bytes());
            let one = s
                .get_ok(&format!("/v1/rings/{ring}/lookup?key_b64={q}&replicas=3"))
                .await;
            assert_eq!(one["key_b64"], *e);
            assert_eq!(one["version"], snapshot.version);
            assert_placed(&p, key, &one);
            let raw = s
                .get(&format!(
                    "/v1/rings/{ring}/lookup?key={}&replicas=3",
                    percent_all(key)
                ))
                .await;
            match std::str::from_utf8(key) {
                Ok(text) => {
                    let as_text = expect_json(raw, StatusCode::OK).await;
                    assert_eq!(as_text["key"], text);
                    assert_placed(&p, key, &as_text);
                }
                Err(_) => {
                    assert_problem(
                        raw,
                        Problem::status(400)
                            .slug("invalid-input")
                            .field("key")
                            .detail_has("query parameter `key` is not UTF-8 once percent-decoded"),
                    )
                    .await;
                }
            }
        }
    }
}

#[tokio::test]
async fn undecodable_keys_and_bad_base64_are_refused() {
    let s = Ringd::sqlite().in_process().start();
    s.ring_with("r", &["a", "b", "c"]).await;
    let bad = |path: &'static str, field: &'static str, detail: &'static str| {
        let s = &s;
        async move {
            let r = s.get(path).await;
            assert_problem(
                r,
                Problem::status(400)
                    .slug("invalid-input")
                    .field(field)
                    .detail_has(detail),
            )
            .await;
        }
    };
    bad(
        "/v1/rings/r/lookup?key=%FF",
        "key",
        "query parameter `key` is not UTF-8 once percent-decoded (byte 0xFF at offset 0); send a key that is not UTF-8 text as `key_b64`",
    )
    .await;
    bad(
        "/v1/rings/r/lookup?key=ab%C3",
        "key",
        "(byte 0xC3 at offset 2)",
    )
    .await;
    bad(
        "/v1/rings/r/lookup?key=a&key_b64=YQ%3D%3D",
        "key_b64",
        "send either `key` or `key_b64`, not both",
    )
    .await;
    bad("/v1/rings/r/lookup?replicas=2", "key", "`key` is required").await;
    bad(
        "/v1/rings/r/lookup?key_b64=_w%3D%3D",
        "key_b64",
        "'_' at offset 0, which belongs to the URL-safe alphabet",
    )
    .await;
    bad(
        "/v1/rings/r/lookup?key_b64=%2Fw",
        "key_b64",
        "is 2 characters long, not a multiple of 4: padding with '=' is required; it takes standard base64 (RFC 4648 §4",
    )
    .await;
    // An unescaped '+' arrives as a space.
    bad(
        "/v1/rings/r/lookup?key_b64=a+bc",
        "key_b64",
        "has a space at offset 1; in a query string an unescaped '+' means a space, so write '+' as %2B",
    )
    .await;
    bad(
        "/v1/rings/r/lookup?key_b64=%2Fx%3D%3D",
        "key_b64",
        "is not canonical",
    )
    .await;
    // Every query parameter must decode to UTF-8, not only the key.
    let r = s.put("/v1/rings/r/nodes/d?reason=%FE", json!({})).await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("reason")
            .detail_has(
            "query parameter `reason` is not UTF-8 once percent-decoded (byte 0xFE at offset 0)",
        ),
    )
    .await;

    let post = |body: Value| {
        let s = &s;
        async move { s.post("/v1/rings/r/lookup", body).await }
    };
    let r = post(json!({"keys": ["a"], "keys_b64": ["YQ=="]})).await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("keys_b64")
            .detail_has("not both"),
    )
    .await;
    let r = post(json!({"replicas": 2})).await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("keys")
            .detail_has("`keys` is required"),
    )
    .await;
    let r = post(json!({"keys_b64": ["YQ==", "YQ"]})).await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("keys_b64[1]")
            .detail_has("`keys_b64[1]` is 2 characters long"),
    )
    .await;
    let many = vec!["AA=="; 10_001];
    let r = post(json!({"keys_b64": many})).await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("too-many-keys")
            .field("keys_b64")
            .detail_has("10001 keys given"),
    )
    .await;
    // The version stays where it was: nothing above changed the ring.
    assert_eq!(s.state_of("r").await.0, 4);

    // Text and base64 forms of the same bytes land on the same nodes, and
    // the empty key is a key like any other.
    let text = s.get_ok("/v1/rings/r/lookup?key=user%3A1").await;
    let b64 = s
        .get_ok(&format!(
            "/v1/rings/r/lookup?key_b64={}",
            percent_all(b"dXNlcjox")
        ))
        .await;
    assert_eq!(text["key"], "user:1");
    assert_eq!(b64["key_b64"], "dXNlcjox");
    assert!(b64.get("key").is_none() && text.get("key_b64").is_none());
    for f in ["hash", "owner", "replicas", "version"] {
        assert_eq!(text[f], b64[f], "{f}");
    }
    let empty = s.get_ok("/v1/rings/r/lookup?key_b64=").await;
    assert_eq!(empty["key_b64"], "");
    let r = post(json!({"keys": [""]})).await;
    let batch = expect_json(r, StatusCode::OK).await;
    assert_eq!(batch["results"][0]["hash"], empty["hash"]);
}
