//! `envoy_ring_hash` and `envoy_maglev` rings over the API: every node's address must be one
//! an xDS endpoint can have (an IP and a port, as Envoy writes them back),
//! every active node needs one, and no two active nodes may share a label
//! or an address; anything else is refused with 400 naming the field, and
//! the ring is unchanged. Ring sizes are checked as the config's other
//! fields are.

use crate::support::api::expect_json;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn envoy_ring_hash_rings_refuse_what_cannot_be_an_xds_endpoint() {
    let ring = refuses_what_cannot_be_an_xds_endpoint("envoy_ring_hash").await;
    assert_eq!(ring["config"]["minimum_ring_size"], 1024);
    assert_eq!(ring["config"]["maximum_ring_size"], 4096);
}

#[tokio::test]
async fn envoy_maglev_rings_refuse_what_cannot_be_an_xds_endpoint() {
    let ring = refuses_what_cannot_be_an_xds_endpoint("envoy_maglev").await;
    assert_eq!(ring["config"]["table_size"], 65537);
}

/// Makes ring `e` of `algorithm`, refuses every node no xDS client could
/// take, then takes a replacement through `hash_key`; returns the ring
/// as it was created.
async fn refuses_what_cannot_be_an_xds_endpoint(algorithm: &str) -> serde_json::Value {
    let (s, _) = setup().await;
    let r = s.put("/v1/rings/e", json!({"algorithm": algorithm})).await;
    let ring = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(ring["config"]["hash"], "xxh64");
    let r = s
        .put("/v1/rings/e/nodes/a", json!({"address": "10.0.0.1:8080"}))
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s
        .put(
            "/v1/rings/e/nodes/b",
            json!({"address": "[2001:db8::2]:8080", "hash_key": "backend-b"}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let before = s.state_of("e").await;

    let refused = [
        (json!({}), "address", "has no address"),
        (
            json!({"address": "cache-c.internal:8080"}),
            "address",
            "EDS does not resolve host names",
        ),
        (
            json!({"address": "10.0.0.3"}),
            "address",
            "an IP address and a port",
        ),
        (
            json!({"address": "10.0.0.3:0"}),
            "address",
            "the port must be from 1 to 65535",
        ),
        (
            json!({"address": "[2001:DB8::3]:8080"}),
            "address",
            "shortest lowercase form",
        ),
        (
            json!({"address": "[2001:db8:0:0::3]:8080"}),
            "address",
            "shortest lowercase form",
        ),
        (
            json!({"address": "[fe80::1%2]:8080"}),
            "address",
            "takes no IPv6 zone",
        ),
        // A draining node's address is checked too: it is an endpoint
        // again when it comes back.
        (
            json!({"address": "010.0.0.3:8080", "state": "draining"}),
            "address",
            "needs an IP address and a port",
        ),
        (
            json!({"address": "10.0.0.1:8080"}),
            "address",
            "share the address `10.0.0.1:8080`",
        ),
        (
            json!({"address": "10.0.0.3:8080", "hash_key": "backend-b"}),
            "hash_key",
            "would both be hashed as `backend-b` by Envoy and gRPC",
        ),
        // `a`'s label is its id.
        (
            json!({"address": "10.0.0.3:8080", "hash_key": "a"}),
            "hash_key",
            "would both be hashed as `a`",
        ),
    ];
    for (body, field, detail) in refused {
        let r = s.put("/v1/rings/e/nodes/c", body.clone()).await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(detail),
        )
        .await;
        assert_eq!(s.state_of("e").await, before, "{body}");
    }

    // A replacement: `c` takes `a`'s label in the change that drains `a`.
    let r = s
        .post(
            "/v1/rings/e/changes",
            json!({"ops": [
                {"op": "upsert", "node": {"id": "a", "address": "10.0.0.1:8080", "state": "draining"}},
                {"op": "upsert", "node": {"id": "c", "address": "10.0.0.3:8080", "hash_key": "a"}},
            ]}),
        )
        .await;
    let change = expect_json(r, StatusCode::OK).await;
    // Every key that moves goes from `a` to `c`, and `c` gets the whole of
    // `a`'s share.
    let transfers = change["diff"]["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 1, "{change}");
    assert_eq!(transfers[0]["from"], "a");
    assert_eq!(transfers[0]["to"], "c");
    assert_eq!(transfers[0]["fraction"], change["diff"]["moved_fraction"]);
    ring
}

#[tokio::test]
async fn xds_ring_configs_are_checked() {
    let (s, _) = setup().await;
    for (config, field, detail) in [
        (
            json!({"algorithm": "envoy_ring_hash", "hash": "xxh3"}),
            "hash",
            "xxh64",
        ),
        (
            json!({"algorithm": "ring", "hash": "xxh64"}),
            "hash",
            "supports the hashes",
        ),
        (
            json!({"algorithm": "envoy_ring_hash", "minimum_ring_size": 0}),
            "minimum_ring_size",
            "8388608",
        ),
        (
            json!({"algorithm": "envoy_ring_hash", "maximum_ring_size": 8388609}),
            "maximum_ring_size",
            "8388608",
        ),
        (
            json!({"algorithm": "envoy_ring_hash", "minimum_ring_size": 5000}),
            "minimum_ring_size",
            "4096",
        ),
        (
            json!({"algorithm": "envoy_maglev", "hash": "xxh3"}),
            "hash",
            "xxh64",
        ),
        (
            json!({"algorithm": "envoy_maglev", "table_size": 5000017}),
            "table_size",
            "5000011",
        ),
        (
            json!({"algorithm": "envoy_maglev", "table_size": 65536}),
            "table_size",
            "not prime",
        ),
    ] {
        let r = s.put("/v1/rings/other", config.clone()).await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(detail),
        )
        .await;
    }
}
