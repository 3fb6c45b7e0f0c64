//! A writers' turn held by a writer that is gone: a key in the ring's
//! queue whose lease lives on (as a session lease cut off from its
//! instance by an etcd fault does, for its TTL and the extension an etcd
//! election gives it). Writers defer to it only for the turn's wait, then
//! commit without it: one such key does not stall the ring.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::etcd::Etcd;
use crate::support::ringd::Ringd;

#[tokio::test]
async fn a_turn_held_by_a_gone_writer_delays_writes_but_does_not_stop_them() {
    let etcd = Etcd::start().await;
    let store = etcd.store_url();
    let server = Ringd::on(&store).prefix("/t").start();
    // Until it is ready an instance refuses a write it cannot commit
    // within 0.8 s, and these wait out the turn for longer.
    server.api().wait_ready(Duration::from_secs(10)).await;
    let created = server.put("/v1/rings/r", json!({})).await;
    assert_eq!(created.status(), 201);

    // The gone writer's key, first in the queue, on a lease nobody renews
    // and that outlives the test.
    let mut etcd_client = etcd.client().await;
    let lease = etcd_client.lease_grant(600, None).await.unwrap().id();
    let orphan = format!("/t/lock/rings/r/{lease:016x}");
    etcd_client
        .put(
            orphan.as_str(),
            "",
            Some(etcd_client::PutOptions::new().with_lease(lease)),
        )
        .await
        .unwrap();

    // Each change is refused while the queue is not empty, queues behind
    // the key, waits out its turn and commits: one version each.
    for (i, version) in [(1, 2), (2, 3)] {
        let r = server
            .put(
                &format!("/v1/rings/r/nodes/n{i}"),
                json!({"address": format!("10.0.0.{i}:80")}),
            )
            .await;
        assert_eq!(r.status(), 201, "change {i}: a new node");
        let v: serde_json::Value = r.json().await.unwrap();
        assert_eq!(v["version"], version, "{v}");
    }
    assert_eq!(server.api().state_of("r").await.0, 3);
    let history = server.api().get_ok("/v1/rings/r/history").await;
    let versions: Vec<u64> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, [1, 2, 3]);
    // The key was waited out, not taken away: only its lease removes it.
    let left = etcd_client.get(orphan.as_str(), None).await.unwrap();
    assert_eq!(left.kvs().len(), 1, "the gone writer's key is still queued");
    let log = server.log();
    assert!(
        log.contains("writers' turn not given in time; writing without waiting for it"),
        "{log}"
    );
    // Nothing is left queued by the instance itself once its unlock (run
    // on its own when the wait was given up) is through.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let queue = etcd_client
            .get(
                "/t/lock/rings/r/",
                Some(
                    etcd_client::GetOptions::new()
                        .with_prefix()
                        .with_keys_only(),
                ),
            )
            .await
            .unwrap();
        let keys: Vec<&[u8]> = queue.kvs().iter().map(|kv| kv.key()).collect();
        if keys == [orphan.as_bytes()] {
            break;
        }
        assert!(Instant::now() < deadline, "left in the queue: {keys:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
