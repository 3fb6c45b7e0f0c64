//! The OpenAPI document states exactly what the server accepts: every
//! reference resolves, every pattern agrees with its validator, and every
//! bound in the document is the validator's bound.

use std::collections::BTreeMap;

use proptest::prelude::*;
use regex::Regex;
use serde_json::Value;

use ringd::api::openapi::schemas::{
    wait_pattern, ADDRESS_PATTERN, IDEMPOTENCY_KEY_PATTERN, LABEL_KEY_PATTERN, NODE_ID_PATTERN,
    NO_CONTROL_PATTERN, RING_NAME_PATTERN,
};
use ringd::placement::{HashKey, NodeId, Weight, Zone};
use ringd::ring::{ClientId, IdempotencyKey, NodeRecordSpec, RingName};

fn document() -> Value {
    serde_json::from_str(&ringd::api::openapi::document_json()).expect("the document is JSON")
}

fn schema<'a>(doc: &'a Value, name: &str) -> &'a Value {
    &doc["components"]["schemas"][name]
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref" {
                    out.push(v.as_str().expect("a $ref is a string").to_owned());
                }
                collect_refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

#[test]
fn every_reference_resolves() {
    let doc = document();
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(
        refs.len() > 50,
        "the document has only {} references",
        refs.len()
    );
    for r in refs {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{r} is not a schema reference"));
        assert!(schema(&doc, name).is_object(), "{r} does not resolve");
    }
    // The watch's `mode` was a dangling reference once.
    let watch = &doc["paths"]["/v1/rings/{ring}/watch"]["get"]["parameters"];
    let mode = watch
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mode")
        .expect("watch takes `mode`");
    assert_eq!(mode["schema"]["$ref"], "#/components/schemas/EventDetail");
    assert_eq!(
        schema(&doc, "EventDetail")["enum"],
        serde_json::json!(["full", "light"])
    );
}

#[test]
fn every_link_leads_to_an_operation() {
    let doc = document();
    let mut ids = Vec::new();
    let mut links = Vec::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            ids.push(op["operationId"].as_str().unwrap().to_owned());
            for response in op["responses"].as_object().unwrap().values() {
                if let Some(l) = response.get("links").and_then(Value::as_object) {
                    links.extend(l.values().cloned());
                }
            }
        }
    }
    assert!(links.len() >= 40, "only {} links", links.len());
    for link in links {
        let target = link["operationId"]
            .as_str()
            .expect("links name their operation");
        assert!(
            ids.iter().any(|id| id == target),
            "{target} is no operation"
        );
        assert!(link.get("operation_id").is_none(), "{link}");
    }
}

#[test]
fn the_table_is_binary_and_the_watch_describes_its_events() {
    let doc = document();
    let table = &doc["paths"]["/v1/rings/{ring}/snapshots/{version}/table"]["get"]["responses"]
        ["200"]["content"]["application/octet-stream"]["schema"];
    assert_eq!(table["type"], "string");
    assert_eq!(table["format"], "binary");
    let events = &doc["paths"]["/v1/rings/{ring}/watch"]["get"]["responses"]["200"]["content"]
        ["text/event-stream"]["schema"];
    assert_eq!(events["$ref"], "#/components/schemas/WatchEvent");
    let variants = schema(&doc, "WatchEvent")["oneOf"].as_array().unwrap();
    let types: Vec<&Value> = variants
        .iter()
        .map(|v| &v["properties"]["event"]["enum"][0])
        .collect();
    assert_eq!(
        types,
        [
            "snapshot",
            "reset",
            "keepalive",
            "deleted",
            "health",
            "rollout"
        ]
    );
    let keepalive = &variants[2]["properties"]["data"];
    assert_eq!(keepalive["contentMediaType"], "application/json");
    assert_eq!(
        keepalive["contentSchema"]["$ref"],
        "#/components/schemas/KeepaliveEvent"
    );
    // Health and rollout events are not versions: they carry no id.
    for (i, data) in [(4, "HealthEvent"), (5, "RolloutView")] {
        assert_eq!(
            variants[i]["required"],
            serde_json::json!(["event", "data"])
        );
        assert_eq!(
            variants[i]["properties"]["data"]["contentSchema"]["$ref"],
            format!("#/components/schemas/{data}")
        );
    }
    assert_eq!(
        schema(&doc, "HealthEvent")["required"],
        serde_json::json!([
            "ring",
            "node",
            "health",
            "previous",
            "last_heartbeat",
            "deadline",
            "lease_id"
        ])
    );
}

#[test]
fn bounds_in_the_document_are_the_validators_bounds() {
    let doc = document();
    let max = |name: &str, key: &str| schema(&doc, name)[key].as_u64().unwrap();
    let w = max("Weight", "maximum");
    assert!(Weight::new(w).is_ok() && Weight::new(w + 1).is_err());
    assert!(Weight::new(max("Weight", "minimum")).is_ok() && Weight::new(0).is_err());
    let n = max("RingName", "maxLength") as usize;
    assert!(RingName::new("a".repeat(n)).is_ok() && RingName::new("a".repeat(n + 1)).is_err());
    let n = max("NodeId", "maxLength") as usize;
    assert!(NodeId::new("a".repeat(n)).is_ok() && NodeId::new("a".repeat(n + 1)).is_err());
    let n = max("Zone", "maxLength") as usize;
    assert!(Zone::new("a".repeat(n)).is_ok() && Zone::new("a".repeat(n + 1)).is_err());
    let n = max("ClientId", "maxLength") as usize;
    assert!(ClientId::new("a".repeat(n)).is_ok() && ClientId::new("a".repeat(n + 1)).is_err());
    let n = max("HashKey", "maxLength") as usize;
    assert!(HashKey::new("a".repeat(n)).is_ok() && HashKey::new("a".repeat(n + 1)).is_err());
    let n = max("IdempotencyKey", "maxLength") as usize;
    assert!(IdempotencyKey::try_from("a".repeat(n)).is_ok());
    assert!(IdempotencyKey::try_from("a".repeat(n + 1)).is_err());
    let n = max("NodeAddress", "maxLength") as usize;
    assert!(address_ok(&"a".repeat(n)) && !address_ok(&"a".repeat(n + 1)));
    let labels = schema(&doc, "Labels");
    let n = labels["maxProperties"].as_u64().unwrap() as usize;
    let many = |n: usize| (0..n).map(|i| (format!("k{i}"), String::new())).collect();
    assert!(labels_ok(many(n)) && !labels_ok(many(n + 1)));
    let n = labels["propertyNames"]["maxLength"].as_u64().unwrap() as usize;
    assert!(labels_ok([("a".repeat(n), String::new())].into()));
    assert!(!labels_ok([("a".repeat(n + 1), String::new())].into()));
    let n = labels["additionalProperties"]["maxLength"]
        .as_u64()
        .unwrap() as usize;
    assert!(labels_ok([("k".into(), "v".repeat(n))].into()));
    assert!(!labels_ok([("k".into(), "v".repeat(n + 1))].into()));
    let ops = schema(&doc, "ChangeOps");
    assert_eq!(ops["maxItems"].as_u64(), Some(ringd::ring::MAX_OPS as u64));
    assert_eq!(ops["minItems"].as_u64(), Some(1));
}

fn address_ok(a: &str) -> bool {
    let spec = NodeRecordSpec {
        address: Some(a.to_owned()),
        ..Default::default()
    };
    spec.into_new_record(Some(NodeId::new("n").unwrap()))
        .is_ok()
}

/// A hash key as a request may set it: the placement core's rule and the
/// API's free-text rule.
fn hash_key_ok(k: &str) -> bool {
    let Ok(hash_key) = HashKey::new(k) else {
        return false;
    };
    let spec = NodeRecordSpec {
        hash_key: Some(hash_key),
        ..Default::default()
    };
    spec.into_new_record(Some(NodeId::new("n").unwrap()))
        .is_ok()
}

fn labels_ok(labels: BTreeMap<String, String>) -> bool {
    let spec = NodeRecordSpec {
        labels,
        ..Default::default()
    };
    spec.into_new_record(Some(NodeId::new("n").unwrap()))
        .is_ok()
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"))
}

/// Every character up to U+3100 (past the last white-space and control
/// character) and a few beyond, alone and after a valid first character.
fn characters() -> impl Iterator<Item = char> {
    (0..=0x3100u32)
        .chain([0xFEFF, 0x1F600, 0x10FFFF])
        .filter_map(char::from_u32)
}

/// Whether `pattern` and `validator` agree on `s`, given that the
/// validator also checks a length the pattern leaves to `maxLength`.
fn agree(pattern: &Regex, validator: impl Fn(&str) -> bool, s: &str) {
    assert_eq!(pattern.is_match(s), validator(s), "{pattern} on {s:?}");
}

#[test]
fn patterns_agree_with_the_validators_on_every_character() {
    let ring = re(RING_NAME_PATTERN);
    let node = re(NODE_ID_PATTERN);
    let label = re(LABEL_KEY_PATTERN);
    let text = re(NO_CONTROL_PATTERN);
    let address = re(ADDRESS_PATTERN);
    let key = re(IDEMPOTENCY_KEY_PATTERN);
    for c in characters() {
        for s in [c.to_string(), format!("a{c}")] {
            agree(&ring, |s| RingName::new(s).is_ok(), &s);
            agree(&node, |s| NodeId::new(s).is_ok(), &s);
            agree(&node, |s| Zone::new(s).is_ok(), &s);
            agree(&node, |s| ClientId::new(s).is_ok(), &s);
            agree(
                &label,
                |s| labels_ok([(s.to_owned(), String::new())].into()),
                &s,
            );
            agree(
                &text,
                |s| labels_ok([("k".into(), s.to_owned())].into()),
                &s,
            );
            agree(&text, hash_key_ok, &s);
            agree(&address, address_ok, &s);
            agree(&key, |s| IdempotencyKey::try_from(s.to_owned()).is_ok(), &s);
        }
    }
}

fn wait_ok(s: &str) -> bool {
    ringd::ring::durations::LONG_POLL_WAIT.parse(s).is_ok()
}

#[test]
fn the_wait_pattern_is_exactly_what_the_long_poll_accepts() {
    let wait = re(&wait_pattern());
    for s in [
        "0",
        "0s",
        "0ms",
        "000ms",
        "1ms",
        "01ms",
        "1",
        "10ms",
        "9ms",
        "30s",
        "300",
        "300s",
        "301s",
        "299999ms",
        "300000ms",
        "300001ms",
        "5m",
        "6m",
        "0h",
        "1h",
        "00005m",
        "1000000ms",
        "ms",
        "s",
        "",
        "-1s",
        "1.5s",
        "1 s",
        "2d",
    ] {
        agree(&wait, wait_ok, s);
    }
    for n in (0..400).chain([999, 1000, 4999, 5000, 60000, 299999, 300000, 300001, 999999]) {
        for unit in ["", "ms", "s", "m", "h"] {
            agree(&wait, wait_ok, &format!("{n}{unit}"));
        }
    }
}

/// The document's pattern for `name` agrees with `bounds` on every
/// number near each unit's edges and on texts that are not durations.
fn pattern_agrees_with(name: &str, bounds: &ringd::ring::durations::DurationBounds) {
    let doc = document();
    let pattern = schema(&doc, name)["pattern"]
        .as_str()
        .unwrap_or_else(|| panic!("{name} has a pattern"));
    let pattern = re(pattern);
    let ok = |s: &str| bounds.parse(s).is_ok();
    let (min, max) = (bounds.min.as_millis() as u64, bounds.max.as_millis() as u64);
    for (unit, scale) in [
        ("ms", 1),
        ("", 1_000),
        ("s", 1_000),
        ("m", 60_000),
        ("h", 3_600_000),
    ] {
        let edges = [
            min / scale,
            min.div_ceil(scale),
            max / scale,
            max.div_ceil(scale),
        ];
        for n in edges
            .iter()
            .flat_map(|e| e.saturating_sub(12)..=e + 12)
            .chain(0..200)
        {
            agree(&pattern, ok, &format!("{n}{unit}"));
            agree(&pattern, ok, &format!("00{n}{unit}"));
        }
    }
    for s in ["", "s", "1d", "1.5s", "-1s", "1 s", "1S", "one"] {
        agree(&pattern, ok, s);
    }
}

#[test]
fn the_lease_ttl_pattern_is_exactly_what_a_registration_accepts() {
    pattern_agrees_with("LeaseTtl", &ringd::ring::durations::LEASE_TTL);
}

#[test]
fn the_policy_delay_pattern_is_exactly_what_the_policy_accepts() {
    pattern_agrees_with("PolicyDelay", &ringd::ring::membership_policy::POLICY_DELAY);
}

#[test]
fn the_policy_numbers_have_the_policy_bounds() {
    let doc = document();
    let fraction = schema(&doc, "UnhealthyFraction");
    assert_eq!(fraction["exclusiveMinimum"], 0.0);
    assert_eq!(fraction["maximum"], 1.0);
    let rate = schema(&doc, "ChangeRate");
    assert_eq!(rate["minimum"], 1);
    assert_eq!(
        rate["maximum"],
        ringd::ring::membership_policy::MAX_AUTO_CHANGES_PER_MINUTE
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn patterns_agree_on_random_names(s in "[a-zA-Z0-9._:/ -]{1,8}") {
        agree(&re(RING_NAME_PATTERN), |s| RingName::new(s).is_ok(), &s);
        agree(&re(NODE_ID_PATTERN), |s| NodeId::new(s).is_ok(), &s);
        agree(&re(LABEL_KEY_PATTERN), |s| labels_ok([(s.to_owned(), String::new())].into()), &s);
    }

    #[test]
    fn patterns_agree_on_random_text(s in "\\PC{0,3}[\\x00-\\x20\\u{7f}-\\u{a0}\\u{2000}-\\u{200b}]?\\PC{0,3}") {
        agree(&re(NO_CONTROL_PATTERN), |s| s.is_empty() || hash_key_ok(s), &s);
        agree(&re(ADDRESS_PATTERN), |s| s.is_empty() || address_ok(s), &s);
    }
}
