//! The driver's rule, step by step: gates, dwell, timeouts, divergence,
//! `advance`, and both kinds of abort.

use std::time::Duration;

use time::OffsetDateTime;

use crate::placement::Fingerprint;
use crate::ring::rollout::*;
use crate::ring::{ClientId, RingName, Role};

fn t(s: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000 + s).unwrap()
}

fn record(steps: u32, policy: RolloutPolicy) -> RolloutRecord {
    RolloutRecord {
        id: RolloutId(7),
        state: RolloutState::Running,
        revision: 1,
        ..RolloutRecord::planned(PlannedRollout {
            ring: RingName::new("cache").unwrap(),
            created_at: t(0),
            role: Role::Admin,
            reason: Some("add cache-k".into()),
            ops: Vec::new(),
            policy,
            base_version: 12,
            base_fingerprint: Fingerprint([0; 32]),
            target_fingerprint: Fingerprint([9; 32]),
            direct_moved_fraction: 0.1,
            steps: (1..=steps)
                .map(|i| PlannedStep {
                    summary: format!("cache-k at {}%", i * 100 / steps),
                    ops: Vec::new(),
                    fingerprint: Fingerprint([i as u8; 32]),
                    moved_fraction: 0.02,
                })
                .collect(),
            notes: Vec::new(),
        })
    }
}

fn policy(gate: f64, dwell: u64, timeout: u64, on: OnGateTimeout) -> RolloutPolicy {
    RolloutPolicy {
        steps: Some(3),
        max_moved_fraction_per_step: None,
        min_dwell: Duration::from_secs(dwell),
        gate,
        gate_timeout: Duration::from_secs(timeout),
        on_gate_timeout: on,
        max_moves_per_node_per_step: None,
    }
}

fn gate(acked: usize, lagging: &[&str]) -> GateReading {
    GateReading {
        live: acked + lagging.len(),
        acked,
        lagging: lagging.iter().map(|c| ClientId::new(*c).unwrap()).collect(),
        divergent: Vec::new(),
    }
}

fn commit(r: &mut RolloutRecord, position: u32, version: u64, at: i64) {
    let direction = r.direction;
    r.committed(
        position,
        direction,
        version,
        Fingerprint([position as u8; 32]),
        t(at),
    );
}

#[test]
fn each_step_waits_for_its_gate_and_dwell() {
    let mut r = record(3, policy(1.0, 5, 60, OnGateTimeout::Pause));
    assert_eq!(r.next(t(0), None), NextAction::Apply { position: 1 });
    commit(&mut r, 1, 13, 1);
    assert_eq!(r.state, RolloutState::WaitingForGate);
    assert_eq!(r.next(t(2), Some(&gate(2, &["c"]))), NextAction::Wait);
    // All in, but only 3 s of the 5 s dwell.
    assert_eq!(r.next(t(4), Some(&gate(3, &[]))), NextAction::Wait);
    assert_eq!(
        r.next(t(6), Some(&gate(3, &[]))),
        NextAction::Apply { position: 2 }
    );
    commit(&mut r, 2, 14, 6);
    commit(&mut r, 3, 15, 20);
    assert_eq!(
        r.next(t(30), Some(&gate(3, &[]))),
        NextAction::Finish(RolloutState::Done)
    );
    // No live client: nobody to wait for.
    assert_eq!(
        r.next(t(30), Some(&gate(0, &[]))),
        NextAction::Finish(RolloutState::Done)
    );
    assert_eq!(r.version_of(2), Some(14));
    assert_eq!(r.version_of(0), Some(12));
}

#[test]
fn a_partial_gate_passes_at_its_share() {
    let mut r = record(3, policy(0.6, 0, 60, OnGateTimeout::Pause));
    commit(&mut r, 1, 13, 0);
    assert_eq!(r.next(t(1), Some(&gate(1, &["b", "c"]))), NextAction::Wait);
    assert_eq!(
        r.next(t(1), Some(&gate(2, &["c"]))),
        NextAction::Apply { position: 2 }
    );
}

#[test]
fn a_gate_that_times_out_pauses_or_proceeds() {
    let mut r = record(3, policy(1.0, 0, 10, OnGateTimeout::Pause));
    commit(&mut r, 1, 13, 0);
    assert_eq!(r.next(t(9), Some(&gate(2, &["c-3"]))), NextAction::Wait);
    assert_eq!(
        r.next(t(10), Some(&gate(2, &["c-3"]))),
        NextAction::Pause(
            "the gate timed out after 10s: 2 of 3 live clients applied version 13 (needed 100%); lagging: `c-3`".into()
        )
    );
    r.policy.on_gate_timeout = OnGateTimeout::Proceed;
    assert_eq!(
        r.next(t(10), Some(&gate(2, &["c-3"]))),
        NextAction::Apply { position: 2 }
    );
}

#[test]
fn a_divergent_client_pauses_it_and_advance_skips_one_gate() {
    let mut r = record(3, policy(1.0, 0, 60, OnGateTimeout::Pause));
    commit(&mut r, 1, 13, 0);
    let mut g = gate(3, &[]);
    g.divergent.push((ClientId::new("c-2").unwrap(), 13));
    assert!(
        matches!(r.next(t(1), Some(&g)), NextAction::Pause(why) if why.starts_with("client `c-2` acked version 13 with a fingerprint other than the server's"))
    );
    r.skip_gate = true;
    assert_eq!(
        r.next(t(1), Some(&gate(0, &["a", "b"]))),
        NextAction::Apply { position: 2 }
    );
    commit(&mut r, 2, 14, 2);
    assert!(!r.skip_gate, "advance skips one gate only");
    assert_eq!(r.next(t(3), Some(&gate(0, &["a", "b"]))), NextAction::Wait);
}

#[test]
fn an_abort_walks_back_gated_or_at_once() {
    let mut r = record(3, policy(1.0, 0, 60, OnGateTimeout::Pause));
    commit(&mut r, 1, 13, 0);
    commit(&mut r, 2, 14, 1);
    r.direction = Direction::Back;
    r.gate_pending = false;
    assert_eq!(r.next(t(2), None), NextAction::Apply { position: 1 });
    assert_eq!(r.version_of(1), Some(13));
    commit(&mut r, 1, 15, 2);
    assert_eq!(r.next(t(3), Some(&gate(1, &["b"]))), NextAction::Wait);
    assert_eq!(
        r.next(t(3), Some(&gate(2, &[]))),
        NextAction::Apply { position: 0 }
    );
    commit(&mut r, 0, 16, 3);
    assert_eq!(
        r.next(t(4), Some(&gate(2, &[]))),
        NextAction::Finish(RolloutState::Aborted)
    );

    let mut r = record(3, policy(1.0, 0, 60, OnGateTimeout::Pause));
    commit(&mut r, 1, 13, 0);
    commit(&mut r, 2, 14, 1);
    r.direction = Direction::Back;
    r.immediate = true;
    r.gate_pending = false;
    assert_eq!(r.next(t(2), None), NextAction::Apply { position: 0 });
    commit(&mut r, 0, 15, 2);
    assert_eq!(
        r.next(t(2), None),
        NextAction::Finish(RolloutState::Aborted)
    );
}

#[test]
fn paused_and_finished_rollouts_wait() {
    let mut r = record(3, policy(1.0, 0, 60, OnGateTimeout::Pause));
    r.pause("operator".into(), t(0), Some(Role::Admin));
    assert_eq!(r.next(t(1), None), NextAction::Wait);
    assert_eq!(r.pause_reason.as_deref(), Some("operator"));
    r.finish(RolloutState::Done, t(2));
    assert_eq!(r.next(t(3), None), NextAction::Wait);
    assert!(!r.state.is_active());
}

#[test]
fn step_reasons_name_the_rollout_and_the_step() {
    let mut r = record(5, policy(1.0, 0, 60, OnGateTimeout::Pause));
    assert_eq!(
        r.step_reason(2),
        "rollout 7: step 2 of 5 (cache-k at 40%): add cache-k"
    );
    r.direction = Direction::Back;
    assert_eq!(
        r.step_reason(1),
        "rollout 7: abort, back to step 1 of 5: add cache-k"
    );
    assert_eq!(
        r.step_reason(0),
        "rollout 7: abort, back to version 12 (before the rollout): add cache-k"
    );
    r.reason = Some("é".repeat(600));
    assert_eq!(r.step_reason(0).len(), 1_024 - 1);
}
