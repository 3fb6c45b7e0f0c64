//! Every refusal about what a request names (rings, nodes, versions,
//! routes) or how big it is: its status, a problem+json body whose detail
//! names the problem, and no change to the ring (same version, same
//! fingerprint). Invalid and malformed input: `errors_input.rs`.

use crate::support::api::rings;
use crate::support::in_process::setup;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn unknown_ring_or_node() {
    let (s, before) = setup().await;
    let missing = "ring-not-found";
    assert_problem(
        s.get("/v1/rings/nope").await,
        Problem::status(404)
            .slug(missing)
            .detail_has("ring `nope` does not exist"),
    )
    .await;
    assert_problem(
        s.get("/v1/rings/nope/lookup?key=k").await,
        Problem::status(404).slug(missing).detail_has("`nope`"),
    )
    .await;
    let r = s.put("/v1/rings/nope/nodes/a", json!({})).await;
    assert_problem(r, Problem::status(404).slug(missing).detail_has("`nope`")).await;
    let r = s
        .post(
            "/v1/rings/nope/changes",
            json!({"ops": [{"op": "remove", "id": "a"}]}),
        )
        .await;
    assert_problem(r, Problem::status(404).slug(missing).detail_has("`nope`")).await;
    assert_problem(
        s.delete("/v1/rings/nope").await,
        Problem::status(404).slug(missing).detail_has("`nope`"),
    )
    .await;
    assert_problem(
        s.get("/v1/rings/nope/history").await,
        Problem::status(404).slug(missing).detail_has("`nope`"),
    )
    .await;

    let r = s.get("/v1/rings/r/nodes/zz").await;
    assert_problem(
        r,
        Problem::status(404)
            .slug("node-not-found")
            .field("node")
            .detail_has("node `zz` is not in ring `r`"),
    )
    .await;
    let r = s.delete("/v1/rings/r/nodes/zz").await;
    assert_problem(
        r,
        Problem::status(404)
            .slug("node-not-found")
            .field("id")
            .detail_has("node `zz` is not in the ring"),
    )
    .await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "upsert", "node": {"id": "c"}}, {"op": "remove", "id": "zz"}]}),
        )
        .await;
    assert_problem(
        r,
        Problem::status(404)
            .slug("node-not-found")
            .field("id")
            .detail_has("`zz`"),
    )
    .await;

    assert_eq!(s.state_of("r").await, before);
    assert_eq!(rings(&s).await, ["r"]);
}
#[tokio::test]
async fn body_over_one_mebibyte() {
    let (s, before) = setup().await;
    let big = json!({"ops": [{"op": "remove", "id": "a"}], "reason": "x".repeat(1 << 20)});
    let r = s.post("/v1/rings/r/changes", big).await;
    assert_problem(
        r,
        Problem::status(413)
            .slug("payload-too-large")
            .detail_has("1 MiB"),
    )
    .await;
    // Without a Content-Length (chunked), the limit applies while reading.
    let addr = s.url.trim_start_matches("http://").to_owned();
    let raw =
        tokio::task::spawn_blocking(move || chunked_post(&addr, "/v1/rings/r/lookup", 1 << 20))
            .await
            .unwrap();
    assert!(raw.starts_with("HTTP/1.1 413"), "{raw}");
    assert!(
        raw.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{raw}"
    );
    assert!(raw.contains("urn:ringd:problem:payload-too-large"), "{raw}");
    assert_eq!(s.state_of("r").await, before);
}

/// POSTs a JSON body of about `size` bytes with chunked transfer encoding
/// over a raw socket; returns the raw response.
fn chunked_post(addr: &str, path: &str, size: usize) -> String {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    conn.write_all(head.as_bytes()).unwrap();
    let mut body = b"{\"keys\":[".to_vec();
    body.extend(std::iter::repeat_n(b' ', size));
    body.extend(b"]}");
    // The server may answer and stop reading before the end; that is fine.
    for chunk in body.chunks(64 * 1024) {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        if conn.write_all(&framed).is_err() {
            break;
        }
    }
    let _ = conn.write_all(b"0\r\n\r\n");
    let mut response = Vec::new();
    let _ = conn.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

#[tokio::test]
async fn too_many_keys() {
    let (s, before) = setup().await;
    let keys: Vec<String> = (0..10_001).map(|i| format!("k{i}")).collect();
    let r = s.post("/v1/rings/r/lookup", json!({"keys": keys})).await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("too-many-keys")
            .field("keys")
            .detail_has("at most 10000"),
    )
    .await;
    let r = s
        .post("/v1/rings/r/lookup", json!({"keys": keys[..10_000]}))
        .await;
    assert_eq!(r.status(), StatusCode::OK, "10,000 keys are accepted");
    assert_eq!(s.state_of("r").await, before);
}

#[tokio::test]
async fn versions_that_never_existed() {
    let (s, before) = setup().await;
    let never = "version-not-found";
    for path in [
        "/v1/rings/r/snapshots/4",
        "/v1/rings/r/snapshots/99/table",
        "/v1/rings/r/lookup?key=k&version=4",
        "/v1/rings/r/ownership?version=4",
    ] {
        assert_problem(
            s.get(path).await,
            Problem::status(404)
                .slug(never)
                .field("version")
                .detail_has("does not exist; the latest is 3"),
        )
        .await;
    }
    let r = s
        .post("/v1/rings/r/lookup", json!({"keys": ["k"], "version": 7}))
        .await;
    assert_problem(
        r,
        Problem::status(404)
            .slug(never)
            .field("version")
            .detail_has("version 7 does not exist"),
    )
    .await;
    assert_problem(
        s.get("/v1/rings/r/snapshots/0").await,
        Problem::status(404)
            .slug(never)
            .field("version")
            .detail_has("versions start at 1"),
    )
    .await;
    assert_problem(
        s.get("/v1/rings/r/diff?from=1&to=9").await,
        Problem::status(404)
            .slug(never)
            .field("to")
            .detail_has("version 9"),
    )
    .await;
    let r = s.get("/v1/rings/r/snapshots/two").await;
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("version")
            .detail_has("not a positive integer"),
    )
    .await;
    assert_eq!(s.state_of("r").await, before);
}

#[tokio::test]
async fn conflicts_and_preconditions() {
    let (s, before) = setup().await;
    let r = s.put("/v1/rings/r", json!({"algorithm": "jump"})).await;
    let p = assert_problem(
        r,
        Problem::status(409)
            .slug("conflict")
            .detail_has("set_config"),
    )
    .await;
    assert_eq!(p["current_version"], 3);
    let r = s
        .req(Method::PUT, "/v1/rings/r/nodes/c")
        .header("if-match", "3")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("If-Match")
            .detail_has("double quotes"),
    )
    .await;
    let r = s
        .req(Method::PUT, "/v1/rings/r/nodes/c?expected_version=2")
        .header("if-match", "\"3\"")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(400)
            .slug("invalid-input")
            .field("expected_version")
            .detail_has("send one of them"),
    )
    .await;
    let r = s
        .post(
            "/v1/rings/r/changes",
            json!({"ops": [{"op": "remove", "id": "a"}], "expected_version": 2}),
        )
        .await;
    let p = assert_problem(
        r,
        Problem::status(412)
            .slug("precondition-failed")
            .detail_has("ring is at version 3, not the expected 2"),
    )
    .await;
    assert_eq!(p["current_version"], 3);
    let r = s
        .req(Method::PUT, "/v1/rings/fresh?expected_version=1")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(412)
            .slug("precondition-failed")
            .detail_has("does not exist"),
    )
    .await;
    assert_eq!(s.state_of("r").await, before);
    assert_eq!(rings(&s).await, ["r"]);
}

#[tokio::test]
async fn unknown_routes_and_methods() {
    let (s, before) = setup().await;
    assert_problem(
        s.get("/v2/rings").await,
        Problem::status(404)
            .slug("route-not-found")
            .detail_has("no route for `/v2/rings`"),
    )
    .await;
    let r = s.req(Method::PATCH, "/v1/rings/r").send().await.unwrap();
    assert_eq!(r.headers()["allow"], "GET,HEAD,PUT,DELETE");
    assert_problem(
        r,
        Problem::status(405)
            .slug("method-not-allowed")
            .detail_has("does not accept PATCH"),
    )
    .await;
    let r = s
        .req(Method::POST, "/v1/rings/r/snapshot")
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(405)
            .slug("method-not-allowed")
            .detail_has("POST"),
    )
    .await;
    assert_eq!(s.state_of("r").await, before);
}

/// A stored row the server cannot read is its own fault, not the
/// client's: a 500 whose body tells nothing of the row (it names no ring,
/// version or parser message), while the server log has all of it.
#[tokio::test]
async fn a_corrupt_stored_snapshot_is_a_500_that_keeps_its_text_in_the_log() {
    let dir = tempfile::TempDir::new().unwrap();
    {
        let s = Ringd::sqlite_in(dir.path()).start();
        assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    }
    let db = rusqlite::Connection::open(dir.path().join("ringd.db")).unwrap();
    let rows = db
        .execute(
            "UPDATE snapshots SET snapshot = '{\"torn\": ' WHERE ring = 'r' AND version = 3",
            [],
        )
        .unwrap();
    assert_eq!(rows, 1);
    drop(db);
    let s = Ringd::sqlite_in(dir.path()).start();
    let r = s.get("/v1/rings/r/snapshot").await;
    let body = assert_problem(
        r,
        Problem::status(500)
            .slug("internal")
            .detail_has("an internal error occurred; the server log has the details"),
    )
    .await;
    assert_eq!(
        body,
        json!({
            "type": "urn:ringd:problem:internal",
            "title": "Internal error",
            "status": 500,
            "detail": "an internal error occurred; the server log has the details"
        })
    );
    let log = s.log();
    assert!(
        log.contains("snapshot of ring `r` version 3"),
        "the log lacks the stored row's fault:\n{log}"
    );
}
