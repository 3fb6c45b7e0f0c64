//! `GET /v1/cluster` on the embedded store: one instance, the
//! decision-maker in term 1, with the id and URL it was given or its
//! defaults; the leader gauges; and the refused election flags.

use reqwest::StatusCode;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::support::api::expect_json;
use crate::support::ringd::Ringd;

/// The body's `started_at`, checked to fall between `before` and now.
fn started_at(body: &Value, before: OffsetDateTime) -> String {
    let text = body["instances"][0]["started_at"]
        .as_str()
        .unwrap_or_else(|| panic!("no started_at in {body}"))
        .to_owned();
    let at = OffsetDateTime::parse(&text, &Rfc3339).expect("RFC 3339");
    let slack = time::Duration::seconds(1);
    assert!(
        at >= before - slack && at <= OffsetDateTime::now_utc() + slack,
        "{text}"
    );
    text
}

#[tokio::test]
async fn the_one_instance_is_the_decision_maker_in_term_1() {
    let before = OffsetDateTime::now_utc();
    let s = Ringd::sqlite()
        .args(&[
            "--instance-id",
            "solo-1",
            "--advertise-url",
            "https://ringd.example:7420",
        ])
        .start();
    let body = expect_json(s.get("/v1/cluster").await, StatusCode::OK).await;
    let at = started_at(&body, before);
    assert_eq!(
        body,
        json!({
            "store": "sqlite",
            "leader": {
                "instance": "solo-1",
                "url": "https://ringd.example:7420",
                "term": 1,
                "since": at,
            },
            "instances": [{
                "id": "solo-1",
                "url": "https://ringd.example:7420",
                "version": env!("CARGO_PKG_VERSION"),
                "started_at": at,
                "leader": true,
            }],
        })
    );
    assert_eq!(s.metric("ringd_leader").await, 1);
    assert_eq!(s.metric("ringd_leader_term").await, 1);
}

#[tokio::test]
async fn without_flags_the_id_is_random_and_the_url_the_listen_address() {
    let before = OffsetDateTime::now_utc();
    let s = Ringd::sqlite().start();
    let body = expect_json(s.get("/v1/cluster").await, StatusCode::OK).await;
    let id = body["instances"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 16, "{id}");
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    let at = started_at(&body, before);
    assert_eq!(
        body,
        json!({
            "store": "sqlite",
            "leader": {"instance": id, "url": s.url, "term": 1, "since": at},
            "instances": [{
                "id": id,
                "url": s.url,
                "version": env!("CARGO_PKG_VERSION"),
                "started_at": at,
                "leader": true,
            }],
        })
    );
    // Another instance draws another id.
    let other = Ringd::sqlite().start();
    let body = expect_json(other.get("/v1/cluster").await, StatusCode::OK).await;
    assert_ne!(body["instances"][0]["id"], id.as_str());
}

#[tokio::test]
async fn the_cluster_needs_the_read_token() {
    let s = Ringd::sqlite()
        .args(&["--read-token", "r3ad", "--admin-token", "adm1n"])
        .start();
    let r = s.get("/v1/cluster").await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        r.headers()["content-type"],
        "application/problem+json",
        "errors are problems"
    );
}

/// `ringd serve ARGS` must exit 2 (a usage error) printing exactly `expected`.
fn refused(args: &[&str], expected: &str) {
    let out = Ringd::sqlite().args(args).run_to_exit();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "must not claim to listen");
    assert_eq!(String::from_utf8_lossy(&out.stderr), expected, "{args:?}");
}

#[test]
fn election_ttls_outside_2s_to_1m_or_not_whole_seconds_are_refused() {
    for (given, shown) in [
        ("1s", "1s"),
        ("61s", "61s"),
        ("2500ms", "2500ms"),
        ("0", "0ms"),
    ] {
        refused(
            &["--election-ttl", given],
            &format!(
                "error: invalid value '{given}' for '--election-ttl <DURATION>': --election-ttl of {shown} is not allowed: use whole seconds from 2s to 1m\n\nFor more information, try '--help'.\n"
            ),
        );
    }
    refused(
        &["--election-ttl", "soon"],
        "error: invalid value 'soon' for '--election-ttl <DURATION>': `soon` is not a duration: use e.g. 500ms, 15s, 5m or 1h\n\nFor more information, try '--help'.\n",
    );
}

#[test]
fn bad_instance_ids_and_urls_are_refused() {
    refused(
        &["--instance-id", "a/b"],
        "error: invalid value 'a/b' for '--instance-id <INSTANCE_ID>': instance id `a/b` is not valid: use 1–64 characters of A-Z, a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit\n\nFor more information, try '--help'.\n",
    );
    refused(
        &["--advertise-url", "10.0.0.1:7420"],
        "error: invalid value '10.0.0.1:7420' for '--advertise-url <URL>': --advertise-url `10.0.0.1:7420` is not a URL to reach this instance at: use http://HOST:PORT or https://HOST:PORT\n\nFor more information, try '--help'.\n",
    );
}

#[tokio::test]
async fn the_bounds_of_the_election_ttl_are_accepted() {
    for ttl in ["2s", "1m"] {
        let s = Ringd::sqlite().args(&["--election-ttl", ttl]).start();
        assert_eq!(s.get("/healthz").await.status(), 200, "{ttl}");
    }
}
