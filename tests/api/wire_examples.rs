//! Every example in the committed OpenAPI document's schema components is
//! accepted by the code that really reads that body: the request shapes
//! are schema-only mirrors (`NodeInput`, `ChangeInput`, …), so without
//! this an example, or the mirror it illustrates, could drift from what
//! the server accepts while the drift test stays green.

use std::collections::BTreeMap;

use ringd::api::changes::parse_ops;
use ringd::api::extract::parse_json;
use ringd::placement::{NodeId, RingConfig, RingConfigSpec};
use ringd::ring::NodeRecordSpec;
use ringd::wire::{self, AckInput, LookupBatch};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// `components.schemas.<name>.example` for every schema that has one.
fn examples() -> BTreeMap<String, Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["components"]["schemas"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(name, schema)| Some((name.clone(), schema.get("example")?.clone())))
        .collect()
}

/// Parses `v` as the server parses a request body: the same bytes through
/// the same extractor logic.
fn body<T: DeserializeOwned>(v: &Value) -> Result<T, String> {
    parse_json(&serde_json::to_vec(v).unwrap()).map_err(|e| e.to_string())
}

/// One op through the parser of `POST …/changes`.
fn op(v: Value) -> Result<(), String> {
    parse_ops(vec![v]).map(drop).map_err(|e| e.to_string())
}

/// Feeds `example` to the real reader of the schema `name`.
fn accept(name: &str, example: &Value) -> Result<(), String> {
    match name {
        // `PUT …/nodes/{node}`: the id comes from the path.
        "NodeInput" => body::<NodeRecordSpec>(example)?
            .into_new_record(Some(NodeId::new("cache-x").unwrap()))
            .map(drop)
            .map_err(|e| e.to_string()),
        // `PUT …/nodes/{node}/lease`: the record plus `ttl`.
        "LeaseInput" => {
            ringd::api::leases::parse_registration(body(example)?, NodeId::new("cache-x").unwrap())
                .map(drop)
                .map_err(|e| e.to_string())
        }
        "UpsertNodeInput" => op(json!({"op": "upsert", "node": example})),
        "RingConfigInput" => RingConfig::try_from(body::<RingConfigSpec>(example)?)
            .map(drop)
            .map_err(|e| e.to_string()),
        "CompleteConfigInput" => op(json!({"op": "set_config", "config": example})),
        "ConfigPatchInput" => op(json!({"op": "update_config", "config": example})),
        "ChangeInput" => {
            // The envelope is checked as a whole, then its ops one by one,
            // as `post_changes` does.
            body::<ringd::api::changes::ChangeBody>(example)?;
            parse_ops(example["ops"].as_array().unwrap().clone())
                .map(drop)
                .map_err(|e| e.to_string())
        }
        "RolloutInput" => {
            // The envelope, its ops and its policy, as `start_rollout` reads them.
            body::<ringd::api::rollouts::RolloutBody>(example)?;
            parse_ops(example["ops"].as_array().unwrap().clone()).map_err(|e| e.to_string())?;
            let policy: ringd::ring::rollout::RolloutPolicySpec =
                serde_json::from_value(example["policy"].clone()).map_err(|e| e.to_string())?;
            ringd::ring::rollout::RolloutPolicy::from_spec(
                &policy,
                ringd::placement::Algorithm::Ring,
            )
            .map(drop)
            .map_err(|e| e.to_string())
        }
        // Its range and format checks run in the handler; the body's
        // shape (fields, types, no unknown fields) is checked here.
        "AckInput" => body::<AckInput>(example).map(drop),
        "LookupBatchInput" => body::<LookupBatch>(example).map(drop),
        // Each value is checked as it is read.
        "MembershipPolicyInput" => body::<ringd::ring::MembershipPolicySpec>(example).map(drop),
        "Problem" => serde_json::from_value::<wire::Problem>(example.clone())
            .map(drop)
            .map_err(|e| e.to_string()),
        other => Err(format!("no reader known for schema `{other}`: add it here")),
    }
}

#[test]
fn every_schema_example_is_accepted_by_the_real_parser() {
    let examples = examples();
    // The document has these examples today; one that disappears is as
    // suspicious as one that is refused.
    assert_eq!(
        examples.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "AckInput",
            "ChangeInput",
            "CompleteConfigInput",
            "ConfigPatchInput",
            "LeaseInput",
            "LookupBatchInput",
            "MembershipPolicyInput",
            "NodeInput",
            "Problem",
            "RingConfigInput",
            "RolloutInput",
            "UpsertNodeInput",
        ]
    );
    let refused: Vec<String> = examples
        .iter()
        .filter_map(|(name, ex)| accept(name, ex).err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(refused.is_empty(), "examples refused: {refused:#?}");
}

#[test]
fn a_broken_example_is_refused() {
    // The check above must be able to fail: each reader refuses a
    // malformed version of its example.
    let broken = [
        ("NodeInput", json!({"weight": 0})),
        ("UpsertNodeInput", json!({"weight": 1})),
        (
            "RingConfigInput",
            json!({"algorithm": "ketama", "hash": "xxh3"}),
        ),
        ("CompleteConfigInput", json!({"algorithm": "ring"})),
        ("ConfigPatchInput", json!({})),
        ("ChangeInput", json!({"ops": [{"op": "remove"}]})),
        (
            "AckInput",
            json!({"version": 3, "fingerprint": "ab", "client": "x"}),
        ),
        ("LookupBatchInput", json!({"keys": ["a"], "extra": 1})),
        ("Problem", json!({"title": "no status"})),
    ];
    for (name, ex) in broken {
        assert!(accept(name, &ex).is_err(), "{name} accepted {ex}");
    }
}

#[test]
fn the_wire_types_read_what_the_server_writes() {
    // A response body as the server serializes it decodes into its wire
    // type and serializes back to the same JSON.
    let problem = json!({
        "type": "urn:ringd:problem:ring-not-found",
        "title": "Ring not found",
        "status": 404,
        "detail": "no ring named `a`",
        "field": "ring"
    });
    let p: wire::Problem = serde_json::from_value(problem.clone()).unwrap();
    assert_eq!(p.slug(), "ring-not-found");
    assert_eq!(
        p.to_string(),
        "404 (ring-not-found): no ring named `a` [field: ring]"
    );
    assert_eq!(serde_json::to_value(&p).unwrap(), problem);
}
