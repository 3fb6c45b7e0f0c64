//! `twemproxy` rings over the API: every active node needs an address
//! nutcracker can connect to, and its server name (the `hash_key`, else
//! the address) must be one nutcracker reads back and no other node's;
//! anything else is refused with 400 naming the field, and the ring is
//! unchanged. The `hash_tag` belongs to twemproxy rings only.

use crate::support::api::expect_json;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn twemproxy_rings_refuse_servers_nutcracker_could_not_take() {
    let (s, _) = setup().await;
    let r = s
        .put("/v1/rings/t", json!({"algorithm": "twemproxy"}))
        .await;
    let ring = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(ring["config"]["hash"], "fnv1a_64");
    assert_eq!(ring["config"].get("hash_tag"), None);
    let r = s
        .put("/v1/rings/t/nodes/a", json!({"address": "10.0.0.1:11211"}))
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s
        .put(
            "/v1/rings/t/nodes/b",
            json!({"address": "10.0.0.2:6379", "hash_key": "cache-b"}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let before = s.state_of("t").await;

    let refused = [
        (json!({}), "address", "has no address"),
        (json!({"address": "10.0.0.3"}), "address", "`host:port`"),
        (
            json!({"address": "10.0.0.3:011211"}),
            "address",
            "without leading zeros",
        ),
        (
            json!({"address": "[2001:db8::1]:11211"}),
            "address",
            "cannot be a server for twemproxy",
        ),
        // 10.0.0.1 on 11211 is named `10.0.0.1`, as `a` is.
        (
            json!({"address": "10.0.0.1:11211"}),
            "address",
            "would both be the twemproxy server `10.0.0.1`",
        ),
        (
            json!({"address": "10.0.0.9:11211", "hash_key": "cache-b"}),
            "hash_key",
            "would both be the twemproxy server `cache-b`",
        ),
        (
            json!({"address": "10.0.0.9:11211", "hash_key": "two words"}),
            "hash_key",
            "as the server name",
        ),
        (
            json!({"address": "10.0.0.9:11211", "hash_key": "a#b"}),
            "hash_key",
            "as the server name",
        ),
    ];
    for (body, field, detail) in refused {
        let r = s.put("/v1/rings/t/nodes/c", body.clone()).await;
        assert_problem(
            r,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(detail),
        )
        .await;
        assert_eq!(s.state_of("t").await, before, "{body}");
    }

    // Config: twemproxy's hashes only, and a hash tag of two characters
    // for twemproxy only.
    for (config, field, detail) in [
        (
            json!({"algorithm": "twemproxy", "hash": "xxh3"}),
            "hash",
            "supports the hashes fnv1a_64, md5, crc32a",
        ),
        (
            json!({"algorithm": "ring", "hash": "murmur"}),
            "hash",
            "supports the hashes",
        ),
        (
            json!({"algorithm": "ring", "hash_tag": "{}"}),
            "hash_tag",
            "twemproxy rings only",
        ),
        (
            json!({"algorithm": "twemproxy", "hash_tag": "{"}),
            "hash_tag",
            "exactly two characters",
        ),
        (
            json!({"algorithm": "twemproxy", "hash_tag": "{\""}),
            "hash_tag",
            "a quote or a backslash",
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

#[tokio::test]
async fn a_hash_tag_places_keys_by_their_tagged_part_until_removed() {
    let (s, _) = setup().await;
    let r = s
        .put(
            "/v1/rings/t",
            json!({"algorithm": "twemproxy", "hash": "md5", "hash_tag": "{}"}),
        )
        .await;
    let ring = expect_json(r, StatusCode::CREATED).await;
    assert_eq!(ring["config"]["hash_tag"], "{}");
    for i in 1..=8 {
        let r = s
            .put(
                &format!("/v1/rings/t/nodes/n{i}"),
                json!({"address": format!("10.0.0.{i}:11211")}),
            )
            .await;
        expect_json(r, StatusCode::CREATED).await;
    }
    let owner = |key: &'static str| {
        let s = &s;
        async move {
            let r = s
                .get(&format!("/v1/rings/t/lookup?key={}", urlencode(key)))
                .await;
            expect_json(r, StatusCode::OK).await["owner"].clone()
        }
    };
    // Every key tagged {user42} goes where `user42` goes.
    let tagged = owner("user42").await;
    for key in ["cart:{user42}", "{user42}:profile", "x{user42}y{z}"] {
        assert_eq!(owner(key).await, tagged, "{key}");
    }
    // Some untagged key of these goes elsewhere: the tag is what holds
    // them together.
    let mut elsewhere = 0;
    for key in ["cart:user42", "user42:profile", "xuser42yz", "user42x"] {
        elsewhere += usize::from(owner(key).await != tagged);
    }
    assert!(elsewhere > 0, "every untagged key landed on {tagged}");

    // `null` removes the tag; then keys hash whole.
    let r = s
        .post(
            "/v1/rings/t/changes",
            json!({"ops": [{"op": "update_config", "config": {"hash_tag": null}}]}),
        )
        .await;
    let change = expect_json(r, StatusCode::OK).await;
    assert_eq!(change["changed"], true);
    let ring = expect_json(s.get("/v1/rings/t").await, StatusCode::OK).await;
    assert_eq!(ring["config"].get("hash_tag"), None);
    let mut split = 0;
    for key in ["cart:{user42}", "{user42}:profile", "x{user42}y{z}"] {
        split += usize::from(owner(key).await != tagged);
    }
    assert!(
        split > 0,
        "without a tag these keys still all land together"
    );
}

fn urlencode(key: &str) -> String {
    key.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
