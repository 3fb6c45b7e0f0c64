//! Client convergence judged from acks on a live server on SQLite: acks
//! listed with exact fields, divergent fingerprints flagged and counted,
//! lag after further changes, expiry, and acks of pruned versions.

use std::time::Duration;

use crate::support::in_process::{manual_clock, setup};
use crate::support::ringd::Ringd;
use ringd::ring::Clock;
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::acks::{add_nodes, metrics, row, rows, time_of, WRONG};

#[tokio::test]
async fn acks_are_listed_judged_and_counted() {
    let (s, (v3, fp3)) = setup().await;
    assert_eq!(v3, 3);
    let fp2 = s.get_ok("/v1/rings/r/snapshots/2").await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();

    let first = s.ack("web-1", 3, &fp3).await;
    let last_seen = time_of(&first["client"]["last_seen"]);
    let expires_at = time_of(&first["client"]["expires_at"]);
    assert_eq!(
        expires_at - last_seen,
        Duration::from_secs(300),
        "default TTL"
    );
    let age = OffsetDateTime::now_utc() - last_seen;
    assert!(
        age >= time::Duration::ZERO && age < Duration::from_secs(30),
        "{age}"
    );
    let expected_client = json!({
        "client_id": "web-1", "version": 3, "fingerprint": fp3, "lag": 0,
        "last_seen": first["client"]["last_seen"], "expires_at": first["client"]["expires_at"],
        "on_latest": true, "matches": true, "divergent": false,
        "kind": "library", "failure": null,
    });
    assert_eq!(
        first,
        json!({"ring": "r", "version": 3, "fingerprint": fp3, "client": expected_client})
    );

    let behind = s.ack("web-0", 2, &fp2).await;
    assert_eq!(
        (&behind["client"]["lag"], &behind["client"]["matches"]),
        (&json!(1), &json!(true))
    );
    let wrong = s.ack("web-2", 3, WRONG).await;
    assert_eq!(
        (&wrong["client"]["matches"], &wrong["client"]["divergent"]),
        (&json!(false), &json!(true))
    );

    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(
        (&list["ring"], &list["version"], &list["fingerprint"]),
        (&json!("r"), &json!(3), &json!(fp3))
    );
    assert_eq!(
        list["clients"][1], expected_client,
        "the stored ack, unchanged"
    );
    assert_eq!(
        rows(&list),
        vec![
            row("web-0", 2, 1, false, json!(true), false),
            row("web-1", 3, 0, true, json!(true), false),
            row("web-2", 3, 0, true, json!(false), true),
        ]
    );
    assert_eq!(list["clients"][2]["fingerprint"], WRONG);
    assert_eq!(
        list["summary"],
        json!({"clients": 3, "on_latest": 2, "on_latest_share": 2.0 / 3.0, "divergent": 1, "failing": 0})
    );
    let text = metrics(&s).await;
    for line in [
        "ringd_clients{ring=\"r\"} 3\n",
        "ringd_clients_on_latest_ratio{ring=\"r\"} 0.6666666666666666\n",
        "ringd_clients_divergent{ring=\"r\"} 1\n",
        "# TYPE ringd_clients_on_latest_ratio gauge\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }

    // Two more versions: everyone falls behind by exactly two.
    assert_eq!(add_nodes(&s, &["c", "d"]).await, 5);
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["version"], 5);
    assert_eq!(
        rows(&list),
        vec![
            row("web-0", 2, 3, false, json!(true), false),
            row("web-1", 3, 2, false, json!(true), false),
            row("web-2", 3, 2, false, json!(false), true),
        ]
    );
    assert_eq!(
        list["summary"],
        json!({"clients": 3, "on_latest": 0, "on_latest_share": 0.0, "divergent": 1, "failing": 0})
    );
    assert!(metrics(&s)
        .await
        .contains("ringd_clients_on_latest_ratio{ring=\"r\"} 0\n"));

    // A client catching up replaces its earlier ack.
    let (_, fp5) = s.state_of("r").await;
    s.ack("web-2", 5, &fp5).await;
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(rows(&list)[2], row("web-2", 5, 0, true, json!(true), false));
    assert_eq!(
        list["summary"],
        json!({"clients": 3, "on_latest": 1, "on_latest_share": 1.0 / 3.0, "divergent": 0, "failing": 0})
    );
}

#[tokio::test]
async fn acks_expire_after_the_ttl() {
    // The shortest TTL the server accepts, on a clock the test moves.
    let clock = manual_clock();
    let s = Ringd::sqlite()
        .args(&["--client-ttl", "10s"])
        .in_process()
        .clock(clock.clone())
        .start();
    s.ring_with("r", &["a"]).await;
    let (_, fp) = s.state_of("r").await;
    let body = s.ack("web-1", 2, &fp).await;
    let acked = clock.now();
    assert_eq!(time_of(&body["client"]["last_seen"]), acked);
    assert_eq!(
        time_of(&body["client"]["expires_at"]),
        acked + Duration::from_secs(10)
    );
    // Live strictly before `expires_at`.
    clock.advance(time::Duration::seconds(10) - time::Duration::MICROSECOND);
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["summary"]["clients"], 1);
    clock.advance(time::Duration::MICROSECOND);
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(list["clients"], json!([]));
    assert_eq!(list["summary"]["clients"], 0);
    assert!(metrics(&s).await.contains("ringd_clients{ring=\"r\"} 0\n"));
    // Acking again brings the client back.
    s.ack("web-1", 2, &fp).await;
    assert_eq!(
        s.get_ok("/v1/rings/r/clients").await["summary"]["clients"],
        1
    );
}

#[tokio::test]
async fn acks_of_pruned_versions_are_kept_but_not_judged() {
    let s = Ringd::sqlite()
        .args(&["--retention", "2"])
        .in_process()
        .start();
    assert_eq!(s.ring_with("r", &["a", "b"]).await, 3);
    let body = s.ack("old", 1, WRONG).await;
    assert_eq!(
        (
            &body["client"]["lag"],
            &body["client"]["matches"],
            &body["client"]["divergent"]
        ),
        (&json!(2), &Value::Null, &json!(false))
    );
    let list = s.get_ok("/v1/rings/r/clients").await;
    assert_eq!(
        rows(&list),
        vec![row("old", 1, 2, false, Value::Null, false)]
    );
    assert_eq!(list["summary"]["divergent"], 0);
}
