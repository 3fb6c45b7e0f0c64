//! Client acks with two ringd instances on one etcd: an ack sent through
//! one instance is listed, judged and counted by the other, expires on
//! time everywhere (and its etcd key goes with its lease), and goes with
//! its ring.
#![cfg(feature = "server")]

use std::time::Duration;

use crate::support::api::expect_json;
use crate::support::etcd::Etcd;
use crate::support::etcd_pair::EtcdPair;
use crate::support::in_process::manual_clock;
use crate::support::ringd::Ringd;
use etcd_client::{GetOptions, LeaseTimeToLiveOptions};
use reqwest::StatusCode;
use ringd::ring::Clock;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// A fingerprint no placement has.
const WRONG: &str = "00000000000000000000000000000000000000000000000000000000000000ff";

/// `(client_id, version, lag, matches, divergent)` of each listed client.
fn rows(list: &Value) -> Vec<(String, u64, u64, Value, bool)> {
    list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["client_id"].as_str().unwrap().to_owned(),
                c["version"].as_u64().unwrap(),
                c["lag"].as_u64().unwrap(),
                c["matches"].clone(),
                c["divergent"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// Keys under `prefix` in etcd.
async fn keys(etcd: &Etcd, prefix: &str) -> Vec<String> {
    let resp = etcd
        .client()
        .await
        .get(
            prefix,
            Some(GetOptions::new().with_prefix().with_keys_only()),
        )
        .await
        .unwrap();
    resp.kvs()
        .iter()
        .map(|kv| kv.key_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_through_one_instance_is_seen_by_the_other() {
    let pair = EtcdPair::start("/conv").await;
    let (a, b, etcd) = (&pair.a, &pair.b, &pair.etcd);
    expect_json(a.put("/v1/rings/r", json!({})).await, StatusCode::CREATED).await;
    // B holds version 1 in memory before A commits version 2.
    assert_eq!(b.clients().await["version"], 1);
    let v2 = expect_json(
        a.put("/v1/rings/r/nodes/n1", json!({})).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(v2["version"], 2);
    let summary = a.get_ok("/v1/rings/r").await;
    let fp2 = summary["fingerprint"].as_str().unwrap().to_owned();

    a.ack("web-1", 2, &fp2).await;
    // Through B at once, even if B's watch has not delivered version 2 yet:
    // B asks etcd before calling the version unknown.
    let wrong = b.ack("web-2", 2, WRONG).await;
    assert_eq!(
        (&wrong["version"], &wrong["client"]["divergent"]),
        (&json!(2), &json!(true))
    );

    for api in [b.api(), a.api()] {
        let list = api.clients().await;
        assert_eq!(
            (&list["version"], &list["fingerprint"]),
            (&json!(2), &json!(fp2))
        );
        assert_eq!(
            rows(&list),
            vec![
                ("web-1".to_owned(), 2, 0, json!(true), false),
                ("web-2".to_owned(), 2, 0, json!(false), true),
            ]
        );
        assert_eq!(
            list["summary"],
            json!({"clients": 2, "on_latest": 2, "on_latest_share": 1.0, "divergent": 1, "failing": 0})
        );
        let text = api.get("/metrics").await.text().await.unwrap();
        for line in [
            "ringd_clients{ring=\"r\"} 2\n",
            "ringd_clients_on_latest_ratio{ring=\"r\"} 1\n",
            "ringd_clients_divergent{ring=\"r\"} 1\n",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
    }
    assert_eq!(
        keys(etcd, "/conv/acks/").await,
        ["/conv/acks/r/web-1", "/conv/acks/r/web-2"]
    );

    // Deleting the ring through A deletes its acks for everyone.
    a.delete_ring().await;
    assert_eq!(keys(etcd, "/conv/acks/").await, Vec::<String>::new());
    let gone = expect_json(
        b.post(
            "/v1/rings/r/clients/web-1/ack",
            json!({"version": 1, "fingerprint": fp2}),
        )
        .await,
        StatusCode::NOT_FOUND,
    )
    .await;
    assert_eq!(gone["type"], "urn:ringd:problem:ring-not-found");
    expect_json(b.put("/v1/rings/r", json!({})).await, StatusCode::CREATED).await;
    assert_eq!(a.clients().await["clients"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_expire_on_every_instance_and_leave_etcd() {
    // Two instances in this process, on one clock the test moves: the
    // clocks of instances agree (NTP), and an ack's expiry is judged by
    // the clock of the instance listing it.
    let etcd = Etcd::start().await;
    let clock = manual_clock();
    let start = || {
        // The shortest TTL the server accepts (etcd's own minimum lease
        // TTL, about 1.5 election timeouts, is below it).
        Ringd::on(&etcd.store_url())
            .prefix("/ttl")
            .args(&["--client-ttl", "10s"])
            .in_process()
            .clock(clock.clone())
            .start()
    };
    let (a, b) = (start(), start());
    let created = expect_json(a.put("/v1/rings/r", json!({})).await, StatusCode::CREATED).await;
    let fp = created["fingerprint"].as_str().unwrap().to_owned();
    let body = a.ack("web-1", 1, &fp).await;
    let expires_at = clock.now() + Duration::from_secs(10);
    let stated = body["client"]["expires_at"].as_str().unwrap();
    assert_eq!(OffsetDateTime::parse(stated, &Rfc3339).unwrap(), expires_at);
    assert_eq!(b.clients().await["summary"]["clients"], 1);

    // Listings hide it at `expires_at` exactly, on every instance.
    clock.set(expires_at - time::Duration::MICROSECOND);
    for api in [a.api(), b.api()] {
        assert_eq!(api.clients().await["summary"]["clients"], 1);
    }
    clock.set(expires_at);
    for api in [a.api(), b.api()] {
        assert_eq!(api.clients().await["clients"], json!([]));
    }

    // etcd drops the key when its lease ends, which etcd times in real
    // time whatever the instances' clocks show: the ack's key is on a
    // lease granted for the TTL plus a 1 s window (so it never goes before
    // `expires_at`, and at most a window after).
    let mut client = etcd.client().await;
    let kv = client.get("/ttl/acks/r/web-1", None).await.unwrap();
    let lease = kv.kvs()[0].lease();
    assert_ne!(lease, 0, "the ack is on a lease");
    let options = LeaseTimeToLiveOptions::new().with_keys();
    let held = client
        .lease_time_to_live(lease, Some(options))
        .await
        .unwrap();
    assert_eq!(held.granted_ttl(), 11);
    assert!((1..=11).contains(&held.ttl()), "{} s left", held.ttl());
    assert_eq!(held.keys(), [b"/ttl/acks/r/web-1".to_vec()]);
}
