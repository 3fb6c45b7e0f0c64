//! The golden files' records beside the ring versions: a rollout paused
//! and done, a library's and a proxy's acks, and an instance.

use std::time::Duration;

use super::{at, id, name};
use crate::placement::{Fingerprint, Ramp};
use crate::ring::rollout::{
    Direction, OnGateTimeout, PlannedRollout, PlannedStep, RolloutId, RolloutPolicy, RolloutRecord,
    RolloutState,
};
use crate::ring::{ApplyFailure, ChangeOp, ClientAck, ClientId, ClientKind, NodeRecord, Role};
use crate::store::leadership::{Instance, InstanceId};

fn fingerprint(digit: char) -> Fingerprint {
    digit.to_string().repeat(64).parse().expect("a fingerprint")
}

/// Rollout 2 of ring `cache`: two steps bringing `cache-d` in, the first
/// committed, then paused by an operator.
pub(in crate::store) fn rollout_paused() -> RolloutRecord {
    let d = |ramp: u64| {
        let mut n = NodeRecord::new(id("cache-d"));
        n.ramp = Ramp::new(ramp).expect("a ramp");
        ChangeOp::Upsert { node: n }
    };
    let step = |summary: &str, op: ChangeOp, digit: char, moved: f64| PlannedStep {
        summary: summary.into(),
        ops: vec![op],
        fingerprint: fingerprint(digit),
        moved_fraction: moved,
    };
    let mut r = RolloutRecord::planned(PlannedRollout {
        ring: name("cache"),
        created_at: at(600),
        role: Role::Admin,
        reason: Some("add cache-d".into()),
        ops: vec![d(65_536)],
        policy: RolloutPolicy {
            steps: Some(2),
            max_moved_fraction_per_step: None,
            min_dwell: Duration::from_secs(30),
            gate: 0.9,
            gate_timeout: Duration::from_secs(600),
            on_gate_timeout: OnGateTimeout::Proceed,
            max_moves_per_node_per_step: None,
        },
        base_version: 3,
        base_fingerprint: fingerprint('a'),
        target_fingerprint: fingerprint('c'),
        direct_moved_fraction: 0.2,
        steps: vec![
            step("cache-d at 50.0% of weight 1", d(32_768), 'b', 0.1),
            step("cache-d at full weight 1", d(65_536), 'c', 0.1),
        ],
        notes: vec!["ring: each step ramps the changed nodes".into()],
    });
    r.id = RolloutId(2);
    r.log(at(600), "created", "2 steps".into(), Some(Role::Admin));
    r.state = RolloutState::Running;
    r.committed(1, Direction::Forward, 4, fingerprint('b'), at(601));
    r.pause("operator".into(), at(700), Some(Role::Admin));
    r.revision = 4;
    r
}

/// The same rollout resumed after the ring moved, then done.
pub(in crate::store) fn rollout_done() -> RolloutRecord {
    let mut r = rollout_paused();
    r.state = RolloutState::Running;
    r.pause_reason = None;
    r.rebase = true;
    r.log(at(800), "resumed", String::new(), Some(Role::Admin));
    r.committed(2, Direction::Forward, 6, fingerprint('c'), at(801));
    r.gate_pending = false;
    r.finish(RolloutState::Done, at(900));
    r.revision = 7;
    r
}

/// A client's ack of `cache` version 3.
pub(in crate::store) fn ack() -> ClientAck {
    ClientAck {
        client_id: ClientId::new("web-7").expect("a client id"),
        version: 3,
        fingerprint: fingerprint('d'),
        last_seen: at(1_000),
        expires_at: at(1_060),
        kind: ClientKind::Library,
        failure: None,
    }
}

/// A proxy's ack of `cache` version 3, reporting that version 4 failed
/// its configuration check.
pub(in crate::store) fn ack_proxy() -> ClientAck {
    ClientAck {
        client_id: ClientId::new("nginx-1").expect("a client id"),
        kind: ClientKind::Proxy,
        failure: Some(ApplyFailure {
            version: 4,
            error: "nginx: [emerg] host not found in upstream \"cache-d:80\"\n".into(),
        }),
        ..ack()
    }
}

/// An instance as it registers itself.
pub(in crate::store) fn instance() -> Instance {
    Instance {
        id: InstanceId::new("ringd-a").expect("an instance id"),
        url: "http://10.0.0.5:7420".into(),
        version: "0.1.0".into(),
        started_at: at(5),
    }
}
