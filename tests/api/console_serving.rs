//! The console's server side on a real server: `/ui/` and its files with
//! their headers, `GET /v1/access` for every kind of token, and `GET
//! /v1/watch`, the stream of every ring's versions.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;
use crate::support::sse::{Event, EventStream};

const ADMIN: &str = "admin-secret-0123456789";
const READ: &str = "read-secret-9876543210";
/// The policy every console response must carry, written out here so a
/// change to it fails a test.
pub(crate) const CSP: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
     connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

#[tokio::test]
async fn the_console_is_served_from_the_binary_with_its_policy() {
    let s = Ringd::sqlite().in_process().start();
    let plain = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = plain.get(format!("{}/ui", s.base)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(r.headers()["location"], "/ui/");

    let r = s.get("/ui/").await;
    assert_eq!(r.status(), StatusCode::OK);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    assert_eq!(h["content-security-policy"], CSP);
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert_eq!(h["cache-control"], "no-cache");
    let page = r.text().await.unwrap();
    assert_eq!(page, include_str!("../../src/api/console/index.html"));

    let r = s.get("/ui/app.js").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        r.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let tag = r.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(
        r.text().await.unwrap(),
        include_str!("../../src/api/console/app.js")
    );
    // The validator: a browser that holds the file gets 304 and no body.
    let r = s
        .req(Method::GET, "/ui/app.js")
        .header("if-none-match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(r.headers()["etag"], tag.as_str());
    assert_eq!(r.bytes().await.unwrap().len(), 0);

    let r = s.get("/ui/style.css").await;
    assert_eq!(r.headers()["content-type"], "text/css; charset=utf-8");
    // A dot-dot segment is resolved before the request leaves the client:
    // it names `/Cargo.toml`, a route that does not exist.
    assert_problem(
        s.get("/ui/%2e%2e/Cargo.toml").await,
        Problem::status(404)
            .slug("route-not-found")
            .detail_has("no route for `/Cargo.toml`"),
    )
    .await;
    for missing in ["/ui/nope.js", "/ui/pages/nope.js"] {
        assert_no_console_file(&s, missing).await;
    }
}

/// `path` under `/ui/` is a 404 problem saying the console has no such file.
pub(crate) async fn assert_no_console_file(s: &TestApi, path: &str) {
    assert_problem(
        s.get(path).await,
        Problem::status(404)
            .slug("route-not-found")
            .detail_has("the console has no file"),
    )
    .await;
}

#[tokio::test]
async fn access_says_what_each_token_may_do() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", ADMIN, "--read-token", READ])
        .in_process()
        .start();
    let access = |auth: Option<&'static str>| {
        let mut r = s.req(Method::GET, "/v1/access");
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        async move { expect_json(r.send().await.unwrap(), StatusCode::OK).await }
    };
    let view = |token: &str, read: bool, write: bool| {
        json!({"token": token, "read": read, "write": write,
               "read_token_required": true, "admin_token_required": true})
    };
    assert_eq!(access(None).await, view("none", false, false));
    assert_eq!(
        access(Some("Bearer read-secret-9876543210")).await,
        view("read", true, false)
    );
    assert_eq!(
        access(Some("Bearer admin-secret-0123456789")).await,
        view("admin", true, true)
    );
    assert_eq!(
        access(Some("Bearer wrong")).await,
        view("invalid", false, false)
    );
    assert_eq!(
        access(Some("Basic abc")).await,
        view("invalid", false, false)
    );

    let open = Ringd::sqlite().in_process().start();
    let r = open.get("/v1/access").await;
    assert_eq!(
        expect_json(r, StatusCode::OK).await,
        json!({"token": "none", "read": true, "write": true,
               "read_token_required": false, "admin_token_required": false})
    );
}

fn ring_event(ring: &str, version: u64, fingerprint: &Value) -> Event {
    Event {
        event: "ring".into(),
        id: None,
        data: json!({"ring": ring, "version": version, "fingerprint": fingerprint}),
    }
}

async fn fingerprint(s: &TestApi, ring: &str) -> Value {
    s.get_ok(&format!("/v1/rings/{ring}")).await["fingerprint"].clone()
}

#[tokio::test]
async fn the_rings_watch_lists_every_ring_then_follows_each_change() {
    let s = Ringd::sqlite()
        .args(&["--watch-keepalive", "1s"])
        .in_process()
        .start();
    s.ring_with("beta", &["a"]).await;
    s.ring_with("alpha", &["a", "b"]).await;
    let mut all = EventStream::open(&format!("{}/v1/watch", s.base), None).await;
    // The listing, in name order.
    let alpha = s.get_ok("/v1/rings/alpha").await["version"]
        .as_u64()
        .unwrap();
    assert_eq!(
        all.next_event().await,
        ring_event("alpha", alpha, &fingerprint(&s, "alpha").await)
    );
    let beta = s.get_ok("/v1/rings/beta").await["version"]
        .as_u64()
        .unwrap();
    assert_eq!(
        all.next_event().await,
        ring_event("beta", beta, &fingerprint(&s, "beta").await)
    );

    // A new version, a new ring, a deletion: each once, in order.
    let v = s.for_ring("beta").add_each(&["c"]).await;
    assert_eq!(v, beta + 1);
    assert_eq!(
        all.next_event().await,
        ring_event("beta", v, &fingerprint(&s, "beta").await)
    );
    s.for_ring("gamma").create().await;
    assert_eq!(
        all.next_event().await,
        ring_event("gamma", 1, &fingerprint(&s, "gamma").await)
    );
    s.for_ring("alpha").delete_ring().await;
    assert_eq!(
        all.next_event().await,
        Event {
            event: "deleted".into(),
            id: None,
            data: json!({"ring": "alpha"}),
        }
    );
    // Idle: a keep-alive at the interval, and nothing else.
    let keepalive = Event {
        event: "keepalive".into(),
        id: None,
        data: json!({}),
    };
    assert_eq!(all.next_within(Duration::from_secs(3)).await, keepalive);
}

#[tokio::test]
async fn the_rings_watch_needs_a_read_token() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", ADMIN, "--read-token", READ])
        .in_process()
        .start();
    assert_problem(
        s.get("/v1/watch").await,
        Problem::status(401).slug("unauthorized").detail_has("read"),
    )
    .await;
    let r = s
        .req(Method::GET, "/v1/watch")
        .bearer_auth(READ)
        .send()
        .await
        .unwrap();
    let mut all = EventStream::from_response(r);
    // No ring: nothing to list, so the first event is a keep-alive (15 s).
    assert_eq!(all.quiet_for(Duration::from_millis(300)).await, None);
}
