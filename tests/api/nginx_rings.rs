//! `nginx` rings over the API: a node is placed by its address, so an
//! active node needs one that nginx takes as a `server`; anything else is
//! refused with 400 naming `address`, and the ring is unchanged.

use crate::support::api::expect_json;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn nginx_rings_refuse_addresses_nginx_could_not_take() {
    let (s, _) = setup().await;
    let r = s.put("/v1/rings/n", json!({"algorithm": "nginx"})).await;
    let ring = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(ring["config"]["hash"], "crc32");
    let r = s
        .put("/v1/rings/n/nodes/a", json!({"address": "10.0.0.1:11211"}))
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let before = s.state_of("n").await;

    let refused = [
        (json!({}), "has no address"),
        (json!({"address": "10.0.0.2"}), "`host:port`"),
        (json!({"address": "10.0.0.2:0"}), "from 1 to 65535"),
        (json!({"address": "a;b:80"}), "cannot be a server for nginx"),
        (
            json!({"address": "a}server:80"}),
            "cannot be a server for nginx",
        ),
        (json!({"address": "a#:80"}), "cannot be a server for nginx"),
        (
            json!({"address": "\"a\":80"}),
            "cannot be a server for nginx",
        ),
        (json!({"address": "unix:80"}), "unix sockets"),
        (json!({"address": "10.0.0.1:11211"}), "share the address"),
        (json!({"address": "a b:80"}), "is invalid"),
        (json!({"address": "a\nserver evil:80"}), "is invalid"),
    ];
    for (body, detail) in refused {
        let r = s.put("/v1/rings/n/nodes/b", body.clone()).await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field("address")
                .detail_has(detail),
        )
        .await;
        assert_eq!(s.state_of("n").await, before, "{body}");
    }

    // A draining node needs no address; an active one with a good one is
    // placed by it, and hash_key places nothing.
    let r = s
        .put("/v1/rings/n/nodes/c", json!({"state": "draining"}))
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s
        .put(
            "/v1/rings/n/nodes/b",
            json!({"address": "[2001:db8::1]:80", "hash_key": "10.0.0.1:11211", "weight": 3}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;

    // A ring whose nodes have no address cannot become an nginx ring.
    let before = s.state_of("r").await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "update_config", "config": {"algorithm": "nginx", "hash": "crc32"}}]}),
        )
        .await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("address")
            .detail_has("has no address"),
    )
    .await;
    assert_eq!(s.state_of("r").await, before);
    // Nor does nginx take another hash, nor another algorithm crc32.
    for (config, field) in [
        (json!({"algorithm": "nginx", "hash": "md5"}), "hash"),
        (json!({"algorithm": "ring", "hash": "crc32"}), "hash"),
    ] {
        let r = s.put("/v1/rings/other", config).await;
        assert_problem(r, Problem::status(400).slug("invalid-input").field(field)).await;
    }
}
