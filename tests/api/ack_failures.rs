//! Acks from proxies: the kind an ack carries, and the version a proxy
//! could not apply, reported until one applies. What an ack must carry
//! is in `acks.rs`.

use super::acks::{ack_path, metrics};
use crate::support::api::expect_json;
use crate::support::in_process::setup;
use reqwest::StatusCode;
use serde_json::{json, Value};

#[tokio::test]
async fn a_proxy_reports_a_version_it_could_not_apply_until_one_applies() {
    let (s, (_, fp3)) = setup().await;
    let fp2 = s.get_ok("/v1/rings/r/snapshots/2").await["fingerprint"].clone();
    let error = "nginx: [emerg] host not found in upstream \"cache-d:80\" in /etc/nginx/ringd.conf:5\nnginx: configuration file /etc/nginx/nginx.conf test failed";
    let body = json!({"version": 2, "fingerprint": fp2, "kind": "proxy",
                      "failure": {"version": 3, "error": error}});
    let r = s.post(&ack_path("r", "nginx-1"), body).await;
    let answer = expect_json(r, StatusCode::OK).await;
    assert_eq!(answer["client"]["kind"], "proxy");
    assert_eq!(
        answer["client"]["failure"],
        json!({"version": 3, "error": error})
    );
    let r = s
        .post(
            &ack_path("r", "web-1"),
            json!({"version": 3, "fingerprint": fp3}),
        )
        .await;
    assert_eq!(
        expect_json(r, StatusCode::OK).await["client"]["kind"],
        "library"
    );
    let list = s.get_ok("/v1/rings/r/clients").await;
    let kinds: Vec<(&str, &str, &Value)> = list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["client_id"].as_str().unwrap(),
                c["kind"].as_str().unwrap(),
                &c["failure"],
            )
        })
        .collect();
    let failure = json!({"version": 3, "error": error});
    assert_eq!(
        kinds,
        [
            ("nginx-1", "proxy", &failure),
            ("web-1", "library", &Value::Null)
        ]
    );
    assert_eq!(
        list["summary"],
        json!({"clients": 2, "on_latest": 1, "on_latest_share": 0.5, "divergent": 0, "failing": 1})
    );
    let text = metrics(&s).await;
    assert!(
        text.contains("ringd_clients_failing{ring=\"r\"} 1\n"),
        "{text}"
    );

    // Its next ack, on version 3 with no failure, clears it.
    let body = json!({"version": 3, "fingerprint": fp3, "kind": "proxy"});
    let r = s.post(&ack_path("r", "nginx-1"), body).await;
    assert_eq!(
        expect_json(r, StatusCode::OK).await["client"]["failure"],
        Value::Null
    );
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["summary"]["failing"], 0);
    assert_eq!(list["clients"][0]["kind"], "proxy");
    let text = metrics(&s).await;
    assert!(
        text.contains("ringd_clients_failing{ring=\"r\"} 0\n"),
        "{text}"
    );
}

#[tokio::test]
async fn a_failure_keeps_2048_characters_of_any_width() {
    let (s, _) = setup().await;
    let fp2 = s.get_ok("/v1/rings/r/snapshots/2").await["fingerprint"].clone();
    // 2048 characters of two, three and four bytes: counted as JSON
    // Schema's maxLength counts them, not in bytes.
    let error: String = "é€😀".chars().cycle().take(2048).collect();
    let body = json!({"version": 2, "fingerprint": fp2, "kind": "proxy",
                      "failure": {"version": 3, "error": error}});
    let r = s.post(&ack_path("r", "haproxy-1"), body).await;
    let answer = expect_json(r, StatusCode::OK).await;
    assert_eq!(answer["client"]["failure"]["error"], error.as_str());
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["clients"][0]["failure"]["error"], error.as_str());
}
