//! Rollout events on the watch stream (`?rollouts=true`) and the rollout
//! metrics, on a server over SQLite with one client acked by hand, so the
//! test decides when each gate opens: every write of the record arrives
//! once, in order, after the version it names, and each move of the gate
//! as the client acks; the data is the rollout as `GET …/rollouts/{id}`
//! shows it; a stream opened during a rollout starts where it stands; a
//! stream that did not ask hears none; a bad flag is refused; and the
//! metrics say where the rollout stands before, during and after.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::api::{expect_json, TestApi};
use crate::support::in_process::InProcessServer;
use crate::support::ringd::Ringd;
use crate::support::sse::{Event, EventStream};

/// How long the next rollout event may take: a dwell of 3 s, the
/// driver's and the observer's 250 ms looks, and a loaded machine.
const NEXT: Duration = Duration::from_secs(10);

/// A ring `r` of ten nodes, its only client `manual` acked by hand on the
/// current version (so every gate waits for the test); returns the
/// version.
async fn setup() -> (InProcessServer, TestApi, u64) {
    let s = Ringd::sqlite().in_process().start();
    let api = s.api().for_ring("r");
    api.create_with(json!({})).await;
    let ops: Vec<Value> = (0..10)
        .map(|i| json!({"op": "upsert", "node": {"id": format!("n-{i}")}}))
        .collect();
    let base = api.change(json!(ops)).await;
    ack_by_hand(&api, base).await;
    (s, api, base)
}

async fn ack_by_hand(api: &TestApi, version: u64) {
    let fp = api.snapshot(version).await["fingerprint"]
        .as_str()
        .unwrap()
        .to_owned();
    api.ack("manual", version, &fp).await;
}

/// Two steps adding `n-new`, each held at least 3 s after its commit, so
/// that a gate opened by the test is seen open before the next step.
fn two_steps() -> Value {
    json!({
        "ops": [{"op": "upsert", "node": {"id": "n-new", "address": "10.0.0.99:11211"}}],
        "reason": "add n-new",
        "policy": {"steps": 2, "min_dwell": "3s"},
    })
}

/// A watch of ring `r` in light mode, which reads past the snapshot events
/// to the rollout events, checking that each comes after its version.
struct RolloutWatch {
    stream: EventStream,
    /// The newest version the stream sent.
    version: u64,
}

impl RolloutWatch {
    /// Opens `?mode=light{query}`; the first event is snapshot `at`.
    async fn open(api: &TestApi, query: &str, at: u64) -> Self {
        let url = format!("{}/v1/rings/r/watch?mode=light{query}", api.base);
        let mut stream = EventStream::open(&url, None).await;
        let first = stream.next_event().await;
        assert_eq!((first.event.as_str(), first.id), ("snapshot", Some(at)));
        Self {
            stream,
            version: at,
        }
    }

    /// The next rollout event; the versions before it must come in order.
    async fn next(&mut self) -> Event {
        loop {
            let e = self.stream.next_within(NEXT).await;
            match e.event.as_str() {
                "snapshot" => {
                    assert_eq!(e.id, Some(self.version + 1), "{e:?}");
                    self.version += 1;
                }
                "rollout" => {
                    assert_eq!(e.id, None, "a rollout event has no id: {e:?}");
                    if let Some(last) = e.data["applied"].as_array().unwrap().last() {
                        assert!(
                            last["version"].as_u64().unwrap() <= self.version,
                            "a rollout event before its version {}: {e:?}",
                            self.version
                        );
                    }
                    return e;
                }
                "keepalive" => {}
                other => panic!("unexpected {other} event: {e:?}"),
            }
        }
    }
}

/// What a rollout event says, in short.
fn said(e: &Event) -> Value {
    let d = &e.data;
    json!([
        d["state"],
        d["step"],
        d["revision"],
        d["gate"],
        d["pause_reason"]
    ])
}

/// What it should say: `gate` is the version waited on and whether
/// `manual` acked it.
fn says(state: &str, step: u32, revision: u64, gate: Option<(u64, bool)>) -> Value {
    let gate = gate.map_or(Value::Null, |(version, acked)| {
        json!({
            "version": version,
            "live": 1,
            "acked": u8::from(acked),
            "acked_share": if acked { 1.0 } else { 0.0 },
            "needed": 1.0,
            "lagging": if acked { json!([]) } else { json!(["manual"]) },
            "divergent": [],
        })
    });
    let paused = (state == "paused").then_some("paused by an operator");
    json!([state, step, revision, gate, paused])
}

/// The view without the fields that move with the clock.
fn timeless(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    assert!(o.remove("seconds_in_step").is_some(), "{o:?}");
    o.remove("eta_seconds");
    v
}

/// The `/metrics` lines of ring `r`'s rollout families, in order.
async fn rollout_metrics(api: &TestApi) -> Vec<String> {
    let text = api.get("/metrics").await.text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("ringd_rollout_") && l.contains("ring=\"r\""))
        .map(str::to_owned)
        .collect()
}

/// The lines `rollout_metrics` should be: `state` 1 and the other five 0.
fn metrics_of(step: u32, share: f64, state: &str, committed: u64) -> Vec<String> {
    let mut lines = vec![
        format!("ringd_rollout_step{{ring=\"r\"}} {step}"),
        "ringd_rollout_steps{ring=\"r\"} 2".to_owned(),
        format!("ringd_rollout_gate_share{{ring=\"r\"}} {share}"),
    ];
    for s in [
        "planned",
        "running",
        "waiting_for_gate",
        "paused",
        "done",
        "aborted",
    ] {
        lines.push(format!(
            "ringd_rollout_state{{ring=\"r\",state=\"{s}\"}} {}",
            u8::from(s == state)
        ));
    }
    lines.push(format!(
        "ringd_rollout_steps_committed_total{{ring=\"r\"}} {committed}"
    ));
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rollout_watcher_hears_every_change_in_order_and_the_metrics_follow() {
    let (_s, api, base) = setup().await;
    let text = api.get("/metrics").await.text().await.unwrap();
    for family in ["step", "steps", "state", "gate_share"] {
        assert!(
            text.contains(&format!("# TYPE ringd_rollout_{family} gauge\n")),
            "{text}"
        );
    }
    assert!(text.contains("# TYPE ringd_rollout_steps_committed_total counter\n"));
    assert_eq!(rollout_metrics(&api).await, Vec::<String>::new());

    let mut watch = RolloutWatch::open(&api, "&rollouts=true", base).await;
    let mut plain = RolloutWatch::open(&api, "", base).await;
    let started = expect_json(
        api.post("/v1/rings/r/rollouts", two_steps()).await,
        StatusCode::CREATED,
    )
    .await;
    let created = watch.next().await;
    assert_eq!(said(&created), says("planned", 0, 1, None));
    assert_eq!(timeless(created.data), timeless(started));

    let step1 = watch.next().await;
    assert_eq!(
        said(&step1),
        says("waiting_for_gate", 1, 2, Some((base + 1, false)))
    );
    assert_eq!(watch.version, base + 1);
    // The gate opens with the ack; the dwell holds the next step.
    ack_by_hand(&api, base + 1).await;
    let open = watch.next().await;
    assert_eq!(
        said(&open),
        says("waiting_for_gate", 1, 2, Some((base + 1, true)))
    );
    let step2 = watch.next().await;
    assert_eq!(
        said(&step2),
        says("waiting_for_gate", 2, 3, Some((base + 2, false)))
    );

    let paused = expect_json(
        api.post("/v1/rings/r/rollouts/1/pause", json!({})).await,
        StatusCode::OK,
    )
    .await;
    let e = watch.next().await;
    assert_eq!(said(&e), says("paused", 2, 4, Some((base + 2, false))));
    assert_eq!(timeless(e.data), timeless(paused));
    assert_eq!(rollout_metrics(&api).await, metrics_of(2, 0.0, "paused", 2));
    ack_by_hand(&api, base + 2).await;
    let e = watch.next().await;
    assert_eq!(said(&e), says("paused", 2, 4, Some((base + 2, true))));
    assert_eq!(rollout_metrics(&api).await, metrics_of(2, 1.0, "paused", 2));

    // A stream opened now starts with where the rollout stands.
    let mut late = RolloutWatch::open(&api, "&rollouts=true", base + 2).await;
    assert_eq!(
        said(&late.next().await),
        says("paused", 2, 4, Some((base + 2, true)))
    );

    expect_json(
        api.post("/v1/rings/r/rollouts/1/resume", json!({})).await,
        StatusCode::OK,
    )
    .await;
    let resumed = says("waiting_for_gate", 2, 5, Some((base + 2, true)));
    assert_eq!(said(&watch.next().await), resumed);
    assert_eq!(said(&late.next().await), resumed);
    let done = watch.next().await;
    assert_eq!(said(&done), says("done", 2, 6, None));
    // Finished, nothing in it moves with the clock: exactly the GET.
    let got = api.get_ok("/v1/rings/r/rollouts/1").await;
    assert_eq!(done.data, got);
    assert_eq!(late.next().await.data, got);
    assert_eq!(rollout_metrics(&api).await, metrics_of(2, 1.0, "done", 2));

    // Nothing more, though the server keeps looking; and the stream that
    // did not ask had the versions only.
    assert_eq!(
        watch.stream.quiet_for(Duration::from_millis(750)).await,
        None
    );
    assert_eq!(
        late.stream.quiet_for(Duration::from_millis(100)).await,
        None
    );
    for v in [base + 1, base + 2] {
        let e = plain.stream.next_event().await;
        assert_eq!((e.event.as_str(), e.id), ("snapshot", Some(v)), "{e:?}");
    }
    assert_eq!(
        plain.stream.quiet_for(Duration::from_millis(250)).await,
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_immediate_abort_is_heard_back_to_the_base() {
    let (_s, api, base) = setup().await;
    let mut watch = RolloutWatch::open(&api, "&rollouts=true", base).await;
    expect_json(
        api.post("/v1/rings/r/rollouts", two_steps()).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(said(&watch.next().await), says("planned", 0, 1, None));
    let step1 = watch.next().await;
    assert_eq!(
        said(&step1),
        says("waiting_for_gate", 1, 2, Some((base + 1, false)))
    );
    expect_json(
        api.post("/v1/rings/r/rollouts/1/abort", json!({"immediate": true}))
            .await,
        StatusCode::OK,
    )
    .await;
    let abort = watch.next().await;
    assert_eq!(said(&abort), says("waiting_for_gate", 1, 3, None));
    assert_eq!(abort.data["direction"], "back");
    let back = watch.next().await;
    assert_eq!(
        said(&back),
        says("waiting_for_gate", 0, 4, Some((base + 2, false)))
    );
    let aborted = watch.next().await;
    assert_eq!(said(&aborted), says("aborted", 0, 5, None));
    assert_eq!(aborted.data, api.get_ok("/v1/rings/r/rollouts/1").await);
    assert_eq!(watch.version, base + 2);
    let (_, fingerprint) = api.state_of("r").await;
    assert_eq!(aborted.data["base_fingerprint"], fingerprint);
    assert_eq!(
        rollout_metrics(&api).await,
        metrics_of(0, 0.0, "aborted", 2)
    );
}

#[tokio::test]
async fn a_rollouts_flag_that_is_not_a_boolean_is_refused() {
    let (_s, api, _) = setup().await;
    let r = api.get("/v1/rings/r/watch?rollouts=maybe").await;
    assert_eq!(
        expect_json(r, StatusCode::BAD_REQUEST).await,
        json!({
            "type": "urn:ringd:problem:invalid-input",
            "title": "Invalid input",
            "status": 400,
            "detail": "Failed to deserialize query string: rollouts: provided string was not `true` or `false`",
            "field": "rollouts",
        })
    );
    for query in ["?rollouts=1", "?rollouts=", "?rollouts=yes"] {
        let r = api.get(&format!("/v1/rings/r/watch{query}")).await;
        let body = expect_json(r, StatusCode::BAD_REQUEST).await;
        assert_eq!(
            (&body["type"], &body["field"]),
            (
                &json!("urn:ringd:problem:invalid-input"),
                &json!("rollouts")
            ),
            "{query}: {body}"
        );
    }
    let r = api.get("/v1/rings/r/watch?rollouts=false").await;
    assert_eq!(r.status(), StatusCode::OK);
}
