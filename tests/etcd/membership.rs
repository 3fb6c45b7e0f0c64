//! Live membership across three ringd instances on a three-member etcd: a
//! lease made through one instance renews through the others with the
//! same id; when the decision-maker is SIGKILLed together with a member,
//! another instance takes office and its timers drain the dead member,
//! with exactly one version for the transition, the same on every
//! surviving instance.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::leader::agreed;
use crate::support::api::expect_json;
use crate::support::etcd_cluster::EtcdCluster;
use crate::support::membership::decider_looked_again;
use crate::support::ringd::{Ringd, Server};

/// The election TTL: a SIGKILLed leader is replaced within twice this.
const ELECTION_TTL: Duration = Duration::from_secs(2);

/// How long the dead member may be unhealthy before it is drained.
const DRAIN_AFTER: Duration = Duration::from_secs(3);

/// The member's lease TTL (etcd's own minimum is about 2 s).
const LEASE_TTL: Duration = Duration::from_secs(2);

/// The newest entry of ring `m`'s history as `server` answers it.
async fn newest(server: &Server) -> Value {
    let h = expect_json(server.get("/v1/rings/m/history").await, StatusCode::OK).await;
    h["entries"]
        .as_array()
        .and_then(|e| e.last())
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_member_is_drained_once_by_the_next_decision_maker() {
    let cluster = EtcdCluster::start().await;
    let ttl = format!("{}s", ELECTION_TTL.as_secs());
    let ids = ["m0", "m1", "m2"];
    let mut servers: Vec<Option<Server>> = ids
        .iter()
        .map(|id| {
            Some(
                Ringd::on(&cluster.store_url())
                    .prefix("/membership")
                    .args(&["--election-ttl", &ttl, "--instance-id", id])
                    .start(),
            )
        })
        .collect();
    let all: Vec<&Server> = servers.iter().flatten().collect();
    let view = agreed(&all, &ids, Duration::from_secs(20)).await;
    let leader = view["leader"]["instance"].as_str().unwrap().to_owned();

    let first = all[0];
    let r = first
        .put(
            "/v1/rings/m",
            json!({"algorithm": "ring", "membership": {
                "drain_after": format!("{}s", DRAIN_AFTER.as_secs()),
                "max_unhealthy_fraction": 1.0
            }}),
        )
        .await;
    expect_json(r, StatusCode::CREATED).await;
    let r = first
        .put(
            "/v1/rings/m/nodes/a/lease",
            json!({"ttl": format!("{}s", LEASE_TTL.as_secs()), "address": "10.0.0.1:1"}),
        )
        .await;
    let lease = expect_json(r, StatusCode::CREATED).await;
    let id = lease["lease_id"].as_str().unwrap().to_owned();
    assert_eq!(lease["version"], 2, "{lease}");

    // Renewals through every instance keep the one lease.
    for round in 0..2 {
        for s in &all {
            let r = s
                .post(&format!("/v1/rings/m/nodes/a/lease/{id}/renew"), json!({}))
                .await;
            let renewed = expect_json(r, StatusCode::OK).await;
            assert_eq!(renewed["lease_id"], id.as_str(), "round {round}: {renewed}");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    for s in &all {
        let nodes = s.get_ok("/v1/rings/m/nodes").await;
        assert_eq!(nodes["version"], 2, "{nodes}");
    }

    // The member dies (its renewals stop) and so does the decision-maker.
    let dead = ids.iter().position(|i| *i == leader).unwrap();
    let killed_at = Instant::now();
    servers[dead].as_mut().unwrap().kill();
    servers[dead] = None;
    let rest: Vec<&Server> = servers.iter().flatten().collect();
    let alive: Vec<&str> = ids.iter().copied().filter(|i| *i != leader).collect();
    let view = agreed(&rest, &alive, 2 * ELECTION_TTL + Duration::from_secs(5)).await;
    assert_ne!(view["leader"]["instance"], leader.as_str(), "{view}");

    // The new decision-maker's timers drain it: lease expiry, the new
    // term's grace of one lease TTL and drain_after bound when.
    let bound = 2 * ELECTION_TTL + LEASE_TTL * 2 + DRAIN_AFTER + Duration::from_secs(8);
    let drained = loop {
        let e = newest(rest[0]).await;
        if e["version"].as_u64() >= Some(3) {
            break e;
        }
        assert!(
            killed_at.elapsed() < bound,
            "not drained within {bound:?}: {e}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("drained {:?} after the kill", killed_at.elapsed());
    assert_eq!(drained["version"], 3, "{drained}");
    let reason = drained["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with(&format!(
            "node `a` missed heartbeats for {}s (lease {id} expired at ",
            DRAIN_AFTER.as_secs()
        )),
        "{drained}"
    );
    assert_eq!(drained["ops"][0]["node"]["state"], "draining", "{drained}");

    // Exactly one version for the transition, the same on both survivors.
    decider_looked_again(rest[0], bound).await;
    let a = newest(rest[0]).await;
    let b = newest(rest[1]).await;
    assert_eq!(a["version"], 3, "{a}");
    assert_eq!(a, b);
}
