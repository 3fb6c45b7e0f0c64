//! The partition guard end to end, on a real `ringd serve` on SQLite:
//! its status, metric, log line and override, and its clearing.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::membership_policy::*;
use crate::support::api::{expect_json, TestApi};
use crate::support::membership::decider_looked_again;
use crate::support::problem::{assert_problem, Problem};
use crate::support::ringd::Ringd;

async fn membership(s: &TestApi) -> Value {
    s.get_ok(&format!("/v1/rings/{}", s.ring)).await["membership"].clone()
}

#[tokio::test]
async fn the_partition_guard_holds_back_drains_says_why_yields_to_an_override_and_clears() {
    let server = Ringd::sqlite().start();
    let s = server.api().for_ring("r");
    create(&s, json!({"drain_after": "2s", "forget_after": "10m"})).await;
    let names = ["n0", "n1", "n2", "n3", "n4"];
    let mut leases = Vec::new();
    let mut renewers = Vec::new();
    for n in names {
        let l = register(&s, n, "1s").await;
        leases.push(l["lease_id"].as_str().unwrap().to_owned());
        renewers.push(Some(Renewer::start(&s, n, &leases.last().unwrap().clone())));
    }
    assert_eq!(version(&s).await, 6);
    assert_eq!(
        membership(&s).await,
        json!({"guard": {"blocked": false, "rule": null, "detail": null}, "pending": []})
    );
    // Stop 60% at once; their last renewals set the deadlines the
    // reasons name.
    for r in renewers.iter_mut().take(3) {
        *r = None;
    }
    // Lets a renewal already on its way land before the last ones below.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut deadlines = Vec::new();
    for i in 0..3 {
        let r = renew(&s, names[i], &leases[i]).await;
        let body = expect_json(r, StatusCode::OK).await;
        deadlines.push(body["deadline"].as_str().unwrap().to_owned());
    }
    let reason = |i: usize| {
        format!(
            "node `{}` missed heartbeats for 2s (lease {} expired at {})",
            names[i], leases[i], deadlines[i]
        )
    };
    let pending = |from: usize| -> Vec<Value> {
        (from..3)
            .map(|i| json!({"node": names[i], "transition": "drain", "reason": reason(i)}))
            .collect()
    };
    let detail = "3 of 5 leased nodes are unhealthy, more than max_unhealthy_fraction 0.5 of them";
    let blocked = |from: usize| {
        json!({
            "guard": {"blocked": true, "rule": "unhealthy_fraction", "detail": detail},
            "pending": pending(from)
        })
    };
    let start = Instant::now();
    while membership(&s).await != blocked(0) {
        assert!(
            start.elapsed() < WAIT,
            "never blocked: {}",
            membership(&s).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Held back: no automatic change, even well past drain_after.
    decider_looked_again(&s, WAIT).await;
    assert_eq!(version(&s).await, 6);
    assert_eq!(membership(&s).await, blocked(0));
    assert_eq!(
        s.metric("ringd_membership_guard_blocked{ring=\"r\",rule=\"unhealthy_fraction\"}")
            .await,
        1
    );
    assert_eq!(
        s.metric("ringd_membership_guard_blocked{ring=\"r\",rule=\"rate_limit\"}")
            .await,
        0
    );

    // The operator pushes one through.
    let r = s
        .req(Method::POST, "/v1/rings/r/nodes/n0/transition")
        .send()
        .await
        .unwrap();
    let done = expect_json(r, StatusCode::OK).await;
    assert_eq!(done["version"], 7);
    let last = history(&s).await.pop().unwrap();
    assert_eq!(
        last,
        entry(
            7,
            "upsert",
            "draining",
            &format!("operator override of the partition guard: {}", reason(0))
        )
    );
    let start = Instant::now();
    while membership(&s).await != blocked(1) {
        assert!(
            start.elapsed() < WAIT,
            "n0 still pending: {}",
            membership(&s).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A healthy node has nothing to override.
    let r = s
        .req(Method::POST, "/v1/rings/r/nodes/n3/transition")
        .send()
        .await
        .unwrap();
    assert_problem(
        r,
        Problem::status(409)
            .slug("conflict")
            .detail_has("node `n3` of ring `r` has no automatic transition due"),
    )
    .await;

    // Resume: the stopped members register again (their leases expired).
    for i in 0..3 {
        let l = register(&s, names[i], "1s").await;
        renewers[i] = Some(Renewer::start(
            &s,
            names[i],
            l["lease_id"].as_str().unwrap(),
        ));
    }
    let start = Instant::now();
    let clear = json!({"guard": {"blocked": false, "rule": null, "detail": null}, "pending": []});
    while membership(&s).await != clear {
        assert!(
            start.elapsed() < WAIT,
            "never cleared: {}",
            membership(&s).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // n0 came back and was reactivated; nothing else changed.
    assert_eq!(version(&s).await, 8);
    let ring = s.get_ok("/v1/rings/r").await;
    assert_eq!(ring["active_nodes"], 5);
    assert_eq!(
        s.metric("ringd_membership_guard_blocked{ring=\"r\",rule=\"unhealthy_fraction\"}")
            .await,
        0
    );
    drop(renewers);
    // The log names the rule once, when the guard blocked, not every tick.
    let log = server.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("membership guard: automatic drains and removals held back"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("unhealthy_fraction"), "{}", lines[0]);
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("membership guard: clear"))
            .count(),
        1,
        "{log}"
    );
}
