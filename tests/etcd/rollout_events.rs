//! Rollout events across instances: two `ringd serve` on one etcd, the
//! rollout started through the decision-maker, which alone drives it,
//! and watched on the other instance, which learns of each step and each
//! move of the gate only from the store.
#![cfg(feature = "server")]

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::leader::agreed;
use crate::support::api::{expect_json, TestApi};
use crate::support::etcd_pair::EtcdPair;
use crate::support::ringd::Server;
use crate::support::sse::{Event, EventStream};

/// How long the next rollout event may take on the other instance: its
/// 250 ms look at the store, a 3 s dwell, and a slow shared machine.
const NEXT: Duration = Duration::from_secs(15);

async fn ack_by_hand(api: &TestApi, version: u64) {
    let fp = api.snapshot(version).await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    api.ack("manual", version, &fp).await;
}

/// The next rollout event, past the versions, which must come in order
/// and before the rollout events that name them.
async fn next_rollout(stream: &mut EventStream, version: &mut u64) -> Event {
    loop {
        let e = stream.next_within(NEXT).await;
        match e.event.as_str() {
            "snapshot" => {
                assert_eq!(e.id, Some(*version + 1), "{e:?}");
                *version += 1;
            }
            "rollout" => {
                assert_eq!(e.id, None, "{e:?}");
                let last = e.data["applied"].as_array().unwrap().last().cloned();
                if let Some(last) = last {
                    assert!(last["version"].as_u64().unwrap() <= *version, "{e:?}");
                }
                return e;
            }
            "keepalive" => {}
            other => panic!("unexpected {other} event: {e:?}"),
        }
    }
}

/// State, step, revision and the gate's version and acked count.
fn said(e: &Event) -> Value {
    let d = &e.data;
    let g = &d["gate"];
    json!([
        d["state"],
        d["step"],
        d["revision"],
        g["version"],
        g["acked"],
        g["lagging"]
    ])
}

fn says(state: &str, step: u32, revision: u64, gate: Option<(u64, bool)>) -> Value {
    match gate {
        Some((v, acked)) => {
            let lagging = if acked { json!([]) } else { json!(["manual"]) };
            json!([state, step, revision, v, u8::from(acked), lagging])
        }
        None => json!([state, step, revision, null, null, null]),
    }
}

/// The value of `series` on `server`'s `/metrics`, if it has it.
async fn metric(server: &Server, series: &str) -> Option<String> {
    let text = server.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{series} ")))
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_on_the_other_instance_hears_the_leaders_rollout() {
    let pair =
        EtcdPair::start_each("/rollout-events", |r, id| r.args(&["--instance-id", id])).await;
    // Ready, each is current: a stream opened before would start marked
    // stale and later say `stale: false`.
    pair.wait_ready().await;
    let (a, b) = (&pair.a, &pair.b);
    let view = agreed(&[a, b], &["a", "b"], Duration::from_secs(20)).await;
    let (leader, other) = if view["leader"]["instance"] == "a" {
        (&a, &b)
    } else {
        (&b, &a)
    };
    let api = leader.api().for_ring("r");
    api.create_with(json!({})).await;
    let ops: Vec<Value> = (0..10)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("n-{i}")}}))
        .collect();
    let base = api.change(json!(ops)).await;
    ack_by_hand(&api, base).await;

    let body = json!({
        "ops": [{"op": "upsert", "node": {"id": "n-new"}}],
        "reason": "add n-new",
        "policy": {"steps": 2, "min_dwell": "3s"},
    });
    expect_json(
        api.post("/v1/rings/r/rollouts", body).await,
        StatusCode::CREATED,
    )
    .await;
    // Held at the first gate, as the leader has it.
    let deadline = Instant::now() + NEXT;
    loop {
        let r = api.get_ok("/v1/rings/r/rollouts/1").await;
        if r["revision"] == 2 {
            assert_eq!(
                (&r["state"], &r["step"]),
                (&json!("waiting_for_gate"), &json!(1))
            );
            break;
        }
        assert!(Instant::now() < deadline, "never at the first gate: {r}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    // On the other instance: the version the rollout stands on, then
    // where it stands, then each change as the leader makes it.
    let url = format!("{}/v1/rings/r/watch?mode=light&rollouts=true", other.url);
    let mut stream = EventStream::open(&url, None).await;
    let first = stream.next_event().await;
    assert_eq!(
        (first.event.as_str(), first.id),
        ("snapshot", Some(base + 1))
    );
    let mut version = base + 1;
    let e = next_rollout(&mut stream, &mut version).await;
    assert_eq!(
        said(&e),
        says("waiting_for_gate", 1, 2, Some((base + 1, false)))
    );

    let other_api = other.api().for_ring("r");
    ack_by_hand(&other_api, base + 1).await;
    let e = next_rollout(&mut stream, &mut version).await;
    assert_eq!(
        said(&e),
        says("waiting_for_gate", 1, 2, Some((base + 1, true)))
    );
    let e = next_rollout(&mut stream, &mut version).await;
    assert_eq!(
        said(&e),
        says("waiting_for_gate", 2, 3, Some((base + 2, false)))
    );
    assert_eq!(version, base + 2);
    ack_by_hand(&other_api, base + 2).await;
    let e = next_rollout(&mut stream, &mut version).await;
    assert_eq!(
        said(&e),
        says("waiting_for_gate", 2, 3, Some((base + 2, true)))
    );
    let done = next_rollout(&mut stream, &mut version).await;
    assert_eq!(said(&done), says("done", 2, 4, None));
    // Exactly what the leader serves.
    assert_eq!(done.data, api.get_ok("/v1/rings/r/rollouts/1").await);
    assert_eq!(stream.quiet_for(Duration::from_millis(750)).await, None);

    // Both instances read the rollout from the store; only the leader
    // committed its versions.
    for s in [leader, other] {
        let state = |st: &str| format!("ringd_rollout_state{{ring=\"r\",state=\"{st}\"}}");
        assert_eq!(metric(s, &state("done")).await.as_deref(), Some("1"));
        assert_eq!(
            metric(s, &state("waiting_for_gate")).await.as_deref(),
            Some("0")
        );
        assert_eq!(
            metric(s, "ringd_rollout_step{ring=\"r\"}").await.as_deref(),
            Some("2")
        );
        assert_eq!(
            metric(s, "ringd_rollout_gate_share{ring=\"r\"}")
                .await
                .as_deref(),
            Some("1")
        );
    }
    let committed = "ringd_rollout_steps_committed_total{ring=\"r\"}";
    assert_eq!(metric(leader, committed).await.as_deref(), Some("2"));
    assert_eq!(metric(other, committed).await, None);
}
