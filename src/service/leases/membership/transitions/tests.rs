//! Every rule of `decide`, with exact outputs.

use std::collections::HashMap;
use std::time::Duration;

use time::OffsetDateTime;

use super::*;
use crate::ring::{LeaseId, MembershipPolicySpec};

/// 2026-01-01T00:00:00Z.
const T0: OffsetDateTime = match OffsetDateTime::from_unix_timestamp(1_767_225_600) {
    Ok(t) => t,
    Err(_) => panic!("a valid timestamp"),
};

fn secs(s: i64) -> OffsetDateTime {
    T0 + time::Duration::seconds(s)
}

fn id(s: &str) -> NodeId {
    NodeId::new(s).unwrap()
}

fn node(name: &str, state: NodeState) -> NodeRecord {
    NodeRecord {
        state,
        ..NodeRecord::new(id(name))
    }
}

fn lease(bits: u128, deadline: i64, released: bool) -> Lease {
    Lease {
        id: LeaseId::from_bits(bits),
        ttl: Duration::from_secs(1),
        deadline: secs(deadline),
        last_heartbeat: secs(deadline - 1),
        released,
    }
}

fn policy(json: &str) -> MembershipPolicy {
    serde_json::from_str::<MembershipPolicySpec>(json)
        .unwrap()
        .into()
}

struct Case {
    policy: MembershipPolicy,
    nodes: Vec<NodeRecord>,
    leases: HashMap<NodeId, Lease>,
    healthy_since: HashMap<NodeId, OffsetDateTime>,
    store_reachable: bool,
    recent: usize,
}

impl Case {
    fn new(policy_json: &str) -> Self {
        Self {
            policy: policy(policy_json),
            nodes: Vec::new(),
            leases: HashMap::new(),
            healthy_since: HashMap::new(),
            store_reachable: true,
            recent: 0,
        }
    }

    fn with(mut self, record: NodeRecord, lease: Option<Lease>) -> Self {
        if let Some(l) = lease {
            self.leases.insert(record.id.clone(), l);
        }
        self.nodes.push(record);
        self
    }

    fn at(&self, now: i64) -> Decision {
        decide(Inputs {
            policy: &self.policy,
            nodes: &self.nodes,
            leases: &self.leases,
            healthy_since: &self.healthy_since,
            now: secs(now),
            term_start: T0,
            store_reachable: self.store_reachable,
            recent_changes: self.recent,
        })
    }
}

fn t(node: &str, kind: TransitionKind, reason: &str) -> Transition {
    Transition {
        node: id(node),
        kind,
        reason: reason.to_owned(),
    }
}

const L1: &str = "00000000000000000000000000000001";

#[test]
fn an_unhealthy_node_is_drained_after_drain_after_then_removed_after_forget_after() {
    // A ring of one: its node dead is all of the ring, which the default
    // guard holds back; a fraction of 1 lets it go.
    let guarded = Case::new(r#"{"drain_after": "30s"}"#)
        .with(node("a", NodeState::Active), Some(lease(1, 100, false)));
    assert_eq!(guarded.at(130).apply, vec![]);
    assert_eq!(guarded.at(130).pending.len(), 1);
    const ONE: &str = r#""max_unhealthy_fraction": 1"#;
    let c = Case::new(&format!(
        r#"{{"drain_after": "30s", "forget_after": "10m", {ONE}}}"#
    ))
    .with(node("a", NodeState::Active), Some(lease(1, 100, false)));
    let drain =
        format!("node `a` missed heartbeats for 30s (lease {L1} expired at 2026-01-01T00:01:40Z)");
    assert_eq!(c.at(100), Decision::default());
    assert_eq!(c.at(129).apply, vec![]);
    assert_eq!(
        c.at(130),
        Decision {
            apply: vec![t("a", TransitionKind::Drain, &drain)],
            ..Decision::default()
        }
    );
    // Once drained, no second drain.
    let drained = Case::new(&format!(
        r#"{{"drain_after": "30s", "forget_after": "10m", {ONE}}}"#
    ))
    .with(node("a", NodeState::Draining), Some(lease(1, 100, false)));
    assert_eq!(drained.at(130), Decision::default());
    assert_eq!(drained.at(699), Decision::default());
    let remove =
        format!("node `a` missed heartbeats for 10m (lease {L1} expired at 2026-01-01T00:01:40Z)");
    assert_eq!(
        drained.at(700).apply,
        vec![t("a", TransitionKind::Remove, &remove)]
    );
    // forget_after alone removes an active node without draining it.
    let forget = Case::new(&format!(r#"{{"forget_after": "10m", {ONE}}}"#))
        .with(node("a", NodeState::Active), Some(lease(1, 100, false)));
    assert_eq!(forget.at(699), Decision::default());
    assert_eq!(
        forget.at(700).apply,
        vec![t("a", TransitionKind::Remove, &remove)]
    );
}

#[test]
fn the_default_policy_changes_nothing_and_unmanaged_nodes_are_never_touched() {
    let c = Case::new("{}")
        .with(node("a", NodeState::Active), Some(lease(1, 100, false)))
        .with(node("b", NodeState::Active), None);
    assert_eq!(c.at(100_000), Decision::default());
    let c = Case::new(r#"{"drain_after": "1s", "forget_after": "1s"}"#)
        .with(node("op", NodeState::Active), None);
    assert_eq!(c.at(100_000), Decision::default());
}

#[test]
fn a_new_term_counts_no_miss_before_one_ttl_after_it_began() {
    // The lease expired before the term began (at T0): counted from T0 + 1s.
    let c = Case::new(r#"{"drain_after": "5s", "max_unhealthy_fraction": 1}"#)
        .with(node("a", NodeState::Active), Some(lease(1, -100, false)));
    assert_eq!(c.at(5), Decision::default());
    assert_eq!(
        c.at(6).apply,
        vec![t(
            "a",
            TransitionKind::Drain,
            &format!(
                "node `a` missed heartbeats for 5s (lease {L1} expired at 2025-12-31T23:58:20Z)"
            )
        )]
    );
}

#[test]
fn a_released_lease_follows_on_leave_and_a_drained_leaver_is_forgotten() {
    let left = format!("node `a` left (lease {L1} released at 2026-01-01T00:01:40Z)");
    let remove = Case::new("{}").with(node("a", NodeState::Active), Some(lease(1, 100, true)));
    assert_eq!(
        remove.at(100).apply,
        vec![t("a", TransitionKind::Remove, &left)]
    );
    let drain = Case::new(r#"{"on_leave": "drain", "forget_after": "1m"}"#)
        .with(node("a", NodeState::Active), Some(lease(1, 100, true)));
    assert_eq!(
        drain.at(100).apply,
        vec![t("a", TransitionKind::Drain, &left)]
    );
    let drained = Case::new(r#"{"on_leave": "drain", "forget_after": "1m"}"#)
        .with(node("a", NodeState::Draining), Some(lease(1, 100, true)));
    assert_eq!(drained.at(159), Decision::default());
    assert_eq!(
        drained.at(160).apply,
        vec![t(
            "a",
            TransitionKind::Remove,
            &format!("node `a` left 1m ago (lease {L1} released at 2026-01-01T00:01:40Z)")
        )]
    );
    // Leavers are not unhealthy: they never trip the guard.
    let many = Case::new(r#"{"on_leave": "drain"}"#)
        .with(node("a", NodeState::Draining), Some(lease(1, 100, true)))
        .with(node("b", NodeState::Draining), Some(lease(2, 100, true)));
    assert_eq!(many.at(200), Decision::default());
}

#[test]
fn a_joining_node_is_activated_after_activate_after_of_health() {
    let mut c = Case::new(r#"{"on_join": "joining", "activate_after": "30s"}"#)
        .with(node("a", NodeState::Joining), Some(lease(1, 1_000, false)));
    assert_eq!(c.at(10), Decision::default());
    c.healthy_since.insert(id("a"), secs(10));
    assert_eq!(c.at(39), Decision::default());
    assert_eq!(
        c.at(40).apply,
        vec![t(
            "a",
            TransitionKind::Activate,
            "node `a` was healthy for 30s (activate_after)"
        )]
    );
    let off = Case::new(r#"{"on_join": "joining"}"#)
        .with(node("a", NodeState::Joining), Some(lease(1, 1_000, false)));
    assert_eq!(off.at(999), Decision::default());
}

fn partition(leased: usize, dead: usize) -> Case {
    let mut c = Case::new(r#"{"drain_after": "2s"}"#);
    for n in 0..leased {
        let deadline = if n < dead { 100 } else { 1_000 };
        c = c.with(
            node(&format!("n{n}"), NodeState::Active),
            Some(lease(n as u128 + 1, deadline, false)),
        );
    }
    c
}

#[test]
fn the_guard_holds_drains_back_while_too_many_are_unhealthy() {
    let d = partition(5, 3).at(102);
    assert_eq!(d.apply, vec![]);
    assert_eq!(
        d.pending
            .iter()
            .map(|t| t.node.as_str())
            .collect::<Vec<_>>(),
        ["n0", "n1", "n2"]
    );
    assert_eq!(
        d.blocked,
        Some(Blocked {
            rule: guard::GuardRule::UnhealthyFraction,
            detail:
                "3 of 5 leased nodes are unhealthy, more than max_unhealthy_fraction 0.5 of them"
                    .into(),
        })
    );
    // Blocked before anything is due, too: the guard's state is shown.
    let early = partition(5, 3).at(101);
    assert_eq!(early.pending, vec![]);
    assert_eq!(
        early.blocked.unwrap().rule,
        guard::GuardRule::UnhealthyFraction
    );
    // Two of five is within the fraction: both are drained.
    let d = partition(5, 2).at(102);
    assert_eq!(d.blocked, None);
    assert_eq!(
        d.apply
            .iter()
            .map(|t| (t.node.as_str(), t.kind))
            .collect::<Vec<_>>(),
        [("n0", TransitionKind::Drain), ("n1", TransitionKind::Drain)]
    );
}

#[test]
fn an_unreachable_store_and_the_minute_budget_hold_transitions_back() {
    let mut c = partition(5, 2);
    c.store_reachable = false;
    let d = c.at(102);
    assert_eq!(d.apply, vec![]);
    assert_eq!(d.pending.len(), 2);
    assert_eq!(d.blocked.unwrap().rule, guard::GuardRule::StoreUnreachable);
    // One left in the budget: one is applied, the other waits.
    let mut c = partition(5, 2);
    c.recent = 9;
    let d = c.at(102);
    assert_eq!(d.blocked, None);
    assert_eq!(
        d.apply.iter().map(|t| t.node.as_str()).collect::<Vec<_>>(),
        ["n0"]
    );
    assert_eq!(
        d.pending
            .iter()
            .map(|t| t.node.as_str())
            .collect::<Vec<_>>(),
        ["n1"]
    );
    c.recent = 10;
    let d = c.at(102);
    assert_eq!(d.apply, vec![]);
    assert_eq!(d.pending.len(), 2);
    assert_eq!(d.blocked.unwrap().rule, guard::GuardRule::RateLimit);
}

#[test]
fn a_transition_is_one_op_on_the_snapshot_record() {
    let mut record = node("a", NodeState::Active);
    record.address = Some("10.0.0.1:1".into());
    let drain = t("a", TransitionKind::Drain, "r").op(&record);
    assert_eq!(
        drain,
        ChangeOp::Upsert {
            node: NodeRecord {
                state: NodeState::Draining,
                ..record.clone()
            }
        }
    );
    assert_eq!(
        t("a", TransitionKind::Remove, "r").op(&record),
        ChangeOp::Remove { id: id("a") }
    );
    let joining = node("a", NodeState::Joining);
    assert_eq!(
        t("a", TransitionKind::Activate, "r").op(&joining),
        ChangeOp::Upsert {
            node: node("a", NodeState::Active)
        }
    );
}
