//! The committed `openapi/openapi.json` must be exactly what the code
//! generates, so the published contract never drifts from the server.

use std::path::Path;

const REGENERATE: &str = "RINGD_BLESS=1 cargo test --release --test api openapi_drift";

#[test]
fn committed_openapi_matches_the_code() {
    let generated = ringd::api::openapi::document_json();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    if std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write openapi/openapi.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()))
            + 1;
        panic!(
            "openapi/openapi.json differs from what the code generates (first difference at line {line}).\n\
             Regenerate it with `{REGENERATE}` and commit the result."
        );
    }
}

#[test]
fn every_route_is_documented() {
    let doc = ringd::api::openapi::document();
    let paths: Vec<&str> = doc.paths.paths.keys().map(String::as_str).collect();
    for p in [
        "/v1/rings",
        "/v1/rings/{ring}",
        "/v1/rings/{ring}/nodes",
        "/v1/rings/{ring}/nodes/{node}",
        "/v1/rings/{ring}/changes",
        "/v1/rings/{ring}/snapshot",
        "/v1/rings/{ring}/snapshots/{version}",
        "/v1/rings/{ring}/snapshots/{version}/table",
        "/v1/rings/{ring}/history",
        "/v1/rings/{ring}/lookup",
        "/v1/rings/{ring}/ownership",
        "/v1/rings/{ring}/diff",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(paths.contains(&p), "{p} is not in the OpenAPI document");
    }
}
