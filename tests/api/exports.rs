//! `GET …/export/{format}`: a version as nginx's, HAProxy's or twemproxy's
//! configuration, byte for byte; the same version always the same bytes;
//! 422 for a ring its proxy does not compute, 400 for a bad setting.

use crate::support::api::expect_json;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use reqwest::{header, StatusCode};
use serde_json::json;

/// The text of a 200 export and its ETag.
async fn text(r: reqwest::Response) -> (String, String) {
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        r.headers()[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    let tag = r.headers()[header::ETAG].to_str().unwrap().to_owned();
    (r.text().await.unwrap(), tag)
}

#[tokio::test]
async fn an_nginx_ring_exports_its_upstream_at_any_version() {
    let (s, _) = setup().await;
    let r = s.put("/v1/rings/edge", json!({"algorithm": "nginx"})).await;
    expect_json(r, StatusCode::CREATED).await;
    for (id, address, weight) in [("b", "10.0.0.2:11211", 2), ("a", "10.0.0.1:11211", 1)] {
        let r = s
            .put(
                &format!("/v1/rings/edge/nodes/{id}"),
                json!({"address": address, "weight": weight}),
            )
            .await;
        expect_json(r, StatusCode::CREATED).await;
    }
    let v3 = s.get_ok("/v1/rings/edge").await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    let (body, tag) = text(s.get("/v1/rings/edge/export/nginx").await).await;
    assert_eq!(
        body,
        format!(
            "# ringd ring edge version 3 fingerprint {v3} (nginx)\nupstream edge {{\n    \
             hash $http_x_ringd_key consistent;\n    server 10.0.0.1:11211 weight=1;\n    \
             server 10.0.0.2:11211 weight=2;\n}}\n"
        )
    );
    assert!(tag.starts_with("\"3-"), "{tag}");
    // The same request gives the same bytes, and its tag a 304.
    let (again, again_tag) = text(s.get("/v1/rings/edge/export/nginx").await).await;
    assert_eq!((again, &again_tag), (body.clone(), &tag));
    let r = s
        .req(reqwest::Method::GET, "/v1/rings/edge/export/nginx")
        .header(header::IF_NONE_MATCH, &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);

    // Draining `a` leaves it out; version 3 still renders as it was.
    let r = s
        .put(
            "/v1/rings/edge/nodes/a",
            json!({"address": "10.0.0.1:11211", "state": "draining"}),
        )
        .await;
    expect_json(r, StatusCode::OK).await;
    let (v4, _) = text(
        s.get("/v1/rings/edge/export/nginx?upstream=memc&key=$arg_k&keepalive=8")
            .await,
    )
    .await;
    assert!(
        v4.ends_with(
            "upstream memc {\n    hash $arg_k consistent;\n    server 10.0.0.2:11211 weight=2;\n    \
             keepalive 8;\n}\n"
        ),
        "{v4}"
    );
    assert!(v4.starts_with("# ringd ring edge version 4 "), "{v4}");
    let (old, old_tag) = text(s.get("/v1/rings/edge/export/nginx?version=3").await).await;
    assert_eq!((old, old_tag), (body, tag));
}

#[tokio::test]
async fn haproxy_and_twemproxy_rings_export_their_own_settings() {
    let (s, _) = setup().await;
    let r = s.put("/v1/rings/lb", json!({"algorithm": "haproxy"})).await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s
        .put(
            "/v1/rings/lb/nodes/s-1",
            json!({"address": "10.0.0.1:8080"}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let (body, _) = text(s.get("/v1/rings/lb/export/haproxy?header=X-Key").await).await;
    assert!(
        body.ends_with(
            "backend lb\n    balance hash req.fhdr(X-Key)\n    hash-type consistent sdbm avalanche\n    \
             server s-1 10.0.0.1:8080 id 1 weight 1\n"
        ),
        "{body}"
    );
    // A node without an address cannot be written.
    let r = s.put("/v1/rings/lb/nodes/s-2", json!({})).await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s.get("/v1/rings/lb/export/haproxy").await;
    assert_problem(
        r,
        Problem::status(422)
            .slug("not-exportable")
            .detail_has("node `s-2` has no address"),
    )
    .await;

    let r = s
        .put(
            "/v1/rings/pool",
            json!({"algorithm": "twemproxy", "hash": "murmur", "hash_tag": "{}"}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let r = s
        .put(
            "/v1/rings/pool/nodes/m-1",
            json!({"address": "10.0.0.1:6379", "hash_key": "redis-1", "weight": 3}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let (body, _) = text(
        s.get("/v1/rings/pool/export/twemproxy?listen=0.0.0.0:22122&redis=true")
            .await,
    )
    .await;
    assert!(
        body.ends_with(
            "pool:\n  listen: 0.0.0.0:22122\n  hash: murmur\n  distribution: ketama\n  \
             hash_tag: \"{}\"\n  auto_eject_hosts: false\n  redis: true\n  servers:\n   \
             - 10.0.0.1:6379:3 redis-1\n"
        ),
        "{body}"
    );
}

#[tokio::test]
async fn exports_refuse_what_the_proxy_would_not_place_alike() {
    let (s, before) = setup().await;
    // Ring `r` is a `ring` ring: no proxy computes it.
    let r = s.get("/v1/rings/r/export/nginx").await;
    assert_problem(
        r,
        Problem::status(422)
            .slug("not-exportable")
            .detail_has("places keys with `ring`"),
    )
    .await;
    for (path, field, detail) in [
        (
            "/v1/rings/r/export/squid",
            "format",
            "unknown export format",
        ),
        (
            "/v1/rings/r/export/nginx?listen=x:1",
            "listen",
            "twemproxy exports only",
        ),
        (
            "/v1/rings/r/export/nginx?upstream=a%3Bb",
            "upstream",
            "1 to 64 characters",
        ),
        (
            "/v1/rings/r/export/nginx?key=%24a%20b",
            "key",
            "one nginx variable",
        ),
        (
            "/v1/rings/r/export/haproxy?header=X%29",
            "header",
            "A-Z a-z 0-9 -",
        ),
        (
            "/v1/rings/r/export/twemproxy?listen=nowhere",
            "listen",
            "`host:port`",
        ),
        (
            "/v1/rings/r/export/nginx?colour=red",
            "colour",
            "unknown field",
        ),
        ("/v1/rings/r%20x/export/nginx", "ring", ""),
    ] {
        assert_problem(
            s.get(path).await,
            Problem::status(400)
                .slug("invalid-input")
                .field(field)
                .detail_has(detail),
        )
        .await;
    }
    assert_problem(
        s.get("/v1/rings/r/export/nginx?version=0").await,
        Problem::status(404)
            .slug("version-not-found")
            .field("version"),
    )
    .await;
    assert_problem(
        s.get("/v1/rings/none/export/nginx").await,
        Problem::status(404).slug("ring-not-found"),
    )
    .await;
    assert_eq!(s.state_of("r").await, before);
}
