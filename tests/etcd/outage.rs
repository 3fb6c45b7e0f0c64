//! etcd fully stopped, then restarted under a running ringd: reads and
//! lookups keep answering from memory marked stale, writes and `/readyz`
//! get 503 meanwhile, and everything recovers without restarting ringd.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use crate::support::api::TestApi;
use crate::support::etcd::Etcd;
use crate::support::ringd::Ringd;
use crate::support::sse::EventStream;
use reqwest::{Response, StatusCode};
use serde_json::{json, Value};

const STALE: &str = "ringd-stale";

fn stale(r: &Response) -> bool {
    r.headers().get(STALE).is_some_and(|v| v == "true")
}

async fn put_node(api: &TestApi, id: &str) -> Response {
    api.put(
        &format!("/v1/rings/r/nodes/{id}"),
        json!({"address": "10.0.0.1:80"}),
    )
    .await
}

/// Polls `f` every 50 ms until it holds; panics after `limit`.
async fn eventually<F, Fut>(what: &str, limit: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while !f().await {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_survive_an_etcd_outage_and_writes_recover() {
    let mut etcd = Etcd::start().await;
    let store = etcd.store_url();
    let mut ringd = Ringd::on(&store).prefix("/o").start();
    let api = ringd.api().clone();
    eventually("ready at start", Duration::from_secs(10), || async {
        api.get("/readyz").await.status() == StatusCode::OK
    })
    .await;
    let created = api.put("/v1/rings/r", json!({"algorithm": "ring"})).await;
    assert!(created.status().is_success(), "{}", created.status());
    for id in ["n1", "n2"] {
        let r = put_node(&api, id).await;
        assert!(r.status().is_success(), "{}", r.status());
        assert!(!stale(&r));
    }
    let lookup: Value = api
        .get("/v1/rings/r/lookup?key=k")
        .await
        .json()
        .await
        .unwrap();

    // A watch stream open across the outage is told when its answers may
    // be behind, and when they are current again.
    let mut stream = EventStream::open(&format!("{}/v1/rings/r/watch", ringd.url), None).await;
    let first = stream.next_event().await;
    assert_eq!((first.event.as_str(), first.id), ("snapshot", Some(3)));

    etcd.stop();
    eventually(
        "readyz says the store is gone",
        Duration::from_secs(10),
        || async { api.get("/readyz").await.status() == StatusCode::SERVICE_UNAVAILABLE },
    )
    .await;
    let ready = api.get("/readyz").await;
    assert_eq!(ready.headers()["content-type"], "application/problem+json");
    let problem: Value = ready.json().await.unwrap();
    assert!(
        problem["detail"].as_str().unwrap().contains("unreachable"),
        "{problem}"
    );

    // Reads and lookups answer from memory, marked stale, for as long as
    // the outage lasts (here 2 s, across several watch retries).
    let outage = Instant::now();
    while outage.elapsed() < Duration::from_secs(2) {
        let started = Instant::now();
        let s = api.get("/v1/rings/r/snapshot").await;
        assert_eq!(s.status(), StatusCode::OK);
        assert!(stale(&s), "snapshot not marked stale");
        let s: Value = s.json().await.unwrap();
        assert_eq!(s["version"], 3, "{s}");
        let l = api.get("/v1/rings/r/lookup?key=k").await;
        assert_eq!(l.status(), StatusCode::OK);
        assert!(stale(&l), "lookup not marked stale");
        assert_eq!(l.json::<Value>().await.unwrap(), lookup);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "reads waited on etcd: {:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Writes fail fast with a 503 problem: the instance knows it is cut
    // off (readyz said so), so within its 0.8 s deadline.
    let started = Instant::now();
    let w = put_node(&api, "n3").await;
    let took = started.elapsed();
    assert_eq!(w.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(w.headers()["content-type"], "application/problem+json");
    assert_eq!(w.headers()["retry-after"], "1");
    let problem: Value = w.json().await.unwrap();
    assert_eq!(
        problem["type"], "urn:ringd:problem:unavailable",
        "{problem}"
    );
    assert!(
        took < Duration::from_secs(1),
        "a write took {took:?} to fail"
    );
    etcd.restart().await;
    let back = Instant::now();
    eventually("writes succeed again", Duration::from_secs(10), || async {
        put_node(&api, "n3").await.status().is_success()
    })
    .await;
    eventually("readyz recovers", Duration::from_secs(10), || async {
        api.get("/readyz").await.status() == StatusCode::OK
    })
    .await;
    let s = api.get("/v1/rings/r/snapshot").await;
    assert!(!stale(&s), "still marked stale after recovery");
    assert_eq!(s.json::<Value>().await.unwrap()["version"], 4);
    let told = stream.next_within(Duration::from_secs(5)).await;
    assert_eq!(
        (told.event.as_str(), &told.data),
        ("stale", &json!({"ring": "r", "stale": true}))
    );
    // Current again: `stale: false`, and version 4, made once etcd was
    // back, in whichever order the two happened; no other event.
    let mut rest = [
        stream.next_within(Duration::from_secs(5)).await,
        stream.next_within(Duration::from_secs(5)).await,
    ];
    rest.sort_by_key(|e| e.event.clone());
    assert_eq!(
        rest.iter()
            .map(|e| (e.event.as_str(), e.id, e.data.get("stale").cloned()))
            .collect::<Vec<_>>(),
        [
            ("snapshot", Some(4), None),
            ("stale", None, Some(json!(false)))
        ]
    );
    assert!(ringd.is_running(), "ringd exited during the outage");

    // Frozen, etcd answers nothing and refuses nothing, as behind a
    // partition: a write is held until its deadline, the client's own
    // when it sent one, and answered 503 then.
    etcd.freeze();
    eventually(
        "readyz says the store is gone",
        Duration::from_secs(10),
        || async { api.get("/readyz").await.status() == StatusCode::SERVICE_UNAVAILABLE },
    )
    .await;
    let started = Instant::now();
    let w = put_node(&api, "n4").await;
    let refused_in = started.elapsed();
    assert_eq!(w.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(w.headers()["retry-after"], "1");
    let problem: Value = w.json().await.unwrap();
    assert_eq!(
        problem["detail"],
        "the store did not confirm this change within 800ms (this instance cannot reach an etcd quorum): \
         it may still be applied; retry with the same Idempotency-Key to learn its outcome, or send \
         Ringd-Timeout to wait longer",
        "{problem}"
    );
    let started = Instant::now();
    let w = api
        .req(reqwest::Method::PUT, "/v1/rings/r/nodes/n4")
        .header("Ringd-Timeout", "1500ms")
        .json(&json!({"address": "10.0.0.1:80"}))
        .send()
        .await
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(w.status(), StatusCode::SERVICE_UNAVAILABLE);
    let problem: Value = w.json().await.unwrap();
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("the store did not confirm this change within 1500ms "),
        "{problem}"
    );
    assert!(
        waited >= Duration::from_millis(1500),
        "a write asking for 1.5 s was answered after {waited:?}"
    );
    etcd.thaw();
    // Whether the abandoned attempts were applied or not, a retry settles
    // it, once.
    eventually(
        "writes succeed after the thaw",
        Duration::from_secs(10),
        || async { put_node(&api, "n4").await.status().is_success() },
    )
    .await;
    let s = api.get_ok("/v1/rings/r/snapshot").await;
    assert_eq!(s["version"], 5, "{s}");
    eprintln!(
        "frozen etcd: a write was refused in {refused_in:?}; one asking for 1.5 s in {waited:?}"
    );
    eprintln!(
        "a write failed in {took:?} during the outage; writes recovered {:?} after etcd restarted",
        back.elapsed()
    );
}
