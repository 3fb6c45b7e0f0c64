//! The decision: from a ring's policy, nodes, leases and the clock to the
//! transitions due now. Pure, so every case is tested with exact outputs;
//! the task in `mod.rs` feeds it and applies what it returns.

use std::collections::HashMap;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::guard::{self, Blocked, GuardInputs};
use crate::placement::{NodeId, NodeState};
use crate::ring::{ChangeOp, MembershipPolicy, NodeHealth, NodeRecord, OnLeave};
use crate::service::Lease;

/// What a transition does to its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransitionKind {
    /// State `draining`.
    Drain,
    /// Removed from the ring.
    Remove,
    /// A joining node's state becomes `active`.
    Activate,
}

impl TransitionKind {
    /// The name the API writes.
    pub fn name(self) -> &'static str {
        match self {
            TransitionKind::Drain => "drain",
            TransitionKind::Remove => "remove",
            TransitionKind::Activate => "activate",
        }
    }
}

/// One automatic change to one node, with the reason its version records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The node.
    pub node: NodeId,
    /// What is done to it.
    pub kind: TransitionKind,
    /// Why, in words, naming the node, the lease and the time.
    pub reason: String,
}

impl Transition {
    /// The op that makes this transition on `record` (the node's record in
    /// the snapshot the decision was made on).
    pub fn op(&self, record: &NodeRecord) -> ChangeOp {
        let with = |state| ChangeOp::Upsert {
            node: NodeRecord {
                state,
                ..record.clone()
            },
        };
        match self.kind {
            TransitionKind::Drain => with(NodeState::Draining),
            TransitionKind::Activate => with(NodeState::Active),
            TransitionKind::Remove => ChangeOp::Remove {
                id: self.node.clone(),
            },
        }
    }
}

/// Everything a decision looks at, for one ring.
#[derive(Debug, Clone, Copy)]
pub(super) struct Inputs<'a> {
    /// The ring's policy.
    pub policy: &'a MembershipPolicy,
    /// Its nodes, as the latest snapshot has them.
    pub nodes: &'a [NodeRecord],
    /// The leases of its self-registered nodes.
    pub leases: &'a HashMap<NodeId, Lease>,
    /// Since when each node has been healthy without a break, as the
    /// deciding instance has seen it.
    pub healthy_since: &'a HashMap<NodeId, OffsetDateTime>,
    /// The time.
    pub now: OffsetDateTime,
    /// When this decision-maker's term began: no lease counts as missed
    /// before one full TTL after it.
    pub term_start: OffsetDateTime,
    /// Whether the store answered.
    pub store_reachable: bool,
    /// Automatic drains and removals the ring made in the last minute.
    pub recent_changes: usize,
}

/// What to do now, and what waits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Decision {
    /// Transitions to apply now, in node order; the guarded ones after
    /// the others.
    pub apply: Vec<Transition>,
    /// Drains and removals that are due but held back by the guard or by
    /// the rest of this minute's budget.
    pub pending: Vec<Transition>,
    /// The guard's rule that holds, if any.
    pub blocked: Option<Blocked>,
}

/// RFC 3339, as every timestamp of the API is written.
pub(super) fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_else(|_| t.to_string())
}

fn elapsed(from: OffsetDateTime, to: OffsetDateTime) -> std::time::Duration {
    (to - from).try_into().unwrap_or_default()
}

fn missed(record: &NodeRecord, lease: &Lease, after: std::time::Duration) -> String {
    format!(
        "node `{}` missed heartbeats for {} (lease {} expired at {})",
        record.id,
        crate::ring::durations::format_duration(after),
        lease.id,
        rfc3339(lease.deadline)
    )
}

fn left(record: &NodeRecord, lease: &Lease) -> String {
    format!(
        "node `{}` left (lease {} released at {})",
        record.id,
        lease.id,
        rfc3339(lease.deadline)
    )
}

/// The transitions due for one ring (see the module doc and
/// docs/membership.md for the rules).
pub(super) fn decide(i: Inputs<'_>) -> Decision {
    let p = i.policy;
    let mut free = Vec::new();
    let mut guarded = Vec::new();
    let mut leased = 0;
    let mut unhealthy = 0;
    for record in i.nodes {
        let Some(lease) = i.leases.get(&record.id) else {
            continue;
        };
        leased += 1;
        let to = |kind, reason| Transition {
            node: record.id.clone(),
            kind,
            reason,
        };
        match lease.health(i.now) {
            NodeHealth::Healthy => {
                let since = i.healthy_since.get(&record.id);
                if let (NodeState::Joining, Some(after), Some(since)) =
                    (record.state, p.activate_after, since)
                {
                    if elapsed(*since, i.now) >= after.get() {
                        let reason = format!(
                            "node `{}` was healthy for {after} (activate_after)",
                            record.id
                        );
                        free.push(to(TransitionKind::Activate, reason));
                    }
                }
            }
            NodeHealth::Unhealthy => {
                let ttl = time::Duration::try_from(lease.ttl).unwrap_or(time::Duration::MAX);
                let counted_from = lease.deadline.max(i.term_start + ttl);
                if i.now <= counted_from {
                    continue;
                }
                unhealthy += 1;
                let gone = elapsed(counted_from, i.now);
                if let Some(f) = p.forget_after.filter(|f| gone >= f.get()) {
                    let reason = missed(record, lease, f.get());
                    guarded.push(to(TransitionKind::Remove, reason));
                } else if let Some(d) = p.drain_after.filter(|d| gone >= d.get()) {
                    if record.state == NodeState::Active {
                        let reason = missed(record, lease, d.get());
                        guarded.push(to(TransitionKind::Drain, reason));
                    }
                }
            }
            NodeHealth::Left => match (p.on_leave, record.state) {
                // The node said it leaves: no guard, nothing is guessed.
                (OnLeave::Remove, _) => free.push(to(TransitionKind::Remove, left(record, lease))),
                (OnLeave::Drain, NodeState::Active | NodeState::Joining) => {
                    free.push(to(TransitionKind::Drain, left(record, lease)));
                }
                (OnLeave::Drain, NodeState::Draining) => {
                    if let Some(f) = p
                        .forget_after
                        .filter(|f| elapsed(lease.deadline, i.now) >= f.get())
                    {
                        let reason = format!(
                            "node `{}` left {f} ago (lease {} released at {})",
                            record.id,
                            lease.id,
                            rfc3339(lease.deadline)
                        );
                        guarded.push(to(TransitionKind::Remove, reason));
                    }
                }
            },
            NodeHealth::Unmanaged => {}
        }
    }
    // Without `drain_after` or `forget_after` there is nothing to guard,
    // and a guard shown as blocked would only alarm.
    let guarding = p.drain_after.is_some() || p.forget_after.is_some();
    let blocked = guarding
        .then(|| {
            guard::check(
                p,
                GuardInputs {
                    store_reachable: i.store_reachable,
                    leased,
                    unhealthy,
                    recent_changes: i.recent_changes,
                },
            )
        })
        .flatten();
    let mut apply = free;
    let pending = if blocked.is_some() {
        guarded
    } else {
        // The rest of this minute's budget; what exceeds it waits for the
        // next tick, where the rate rule then holds and says so.
        let budget =
            (p.max_auto_changes_per_minute.get() as usize).saturating_sub(i.recent_changes);
        let rest = guarded.split_off(guarded.len().min(budget));
        apply.extend(guarded);
        rest
    };
    Decision {
        apply,
        pending,
        blocked,
    }
}

#[cfg(test)]
mod tests;
