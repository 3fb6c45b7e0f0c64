//! The decision-maker's automatic membership changes: each ring's policy
//! applied to its leased nodes (drain, remove, activate), behind the
//! partition guard, and the small hooks registrations and releases call.
//!
//! A task (`Leases::run_membership`) runs the pure decision of
//! `transitions.rs` every [`TICK`] for every ring while this instance is
//! the decision-maker, and applies what it returns, one version per
//! transition, each with the version it was decided on as its
//! precondition: a transition decided on a snapshot that has moved on is
//! dropped and decided again on the next tick, never applied twice.

mod guard;
mod join_leave;
mod transitions;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

pub use guard::{Blocked, GuardRule};
pub use join_leave::{leave, registration};
pub use transitions::{Transition, TransitionKind};

use super::Leases;
use crate::placement::NodeId;
use crate::ring::{MembershipPolicy, NodeHealth, RingName, Role};
use crate::service::background::{Stop, Ticks};
use crate::service::rings::{ChangeOutcome, ChangeRequest};
use crate::service::ServiceError;
use crate::store::leadership::Term;
use transitions::{decide, Inputs};

/// How often the decision-maker looks at every ring.
pub const TICK: Duration = Duration::from_millis(250);

/// What the decision-maker last decided for a ring: the guard's state and
/// the transitions it holds back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MembershipStatus {
    /// The rule holding automatic drains and removals back, if any.
    pub blocked: Option<Blocked>,
    /// Due transitions that wait, in node order.
    pub pending: Vec<Transition>,
}

/// Per ring, the last status.
pub(crate) type StatusTable = HashMap<RingName, MembershipStatus>;

/// What the task remembers between ticks.
#[derive(Default)]
struct TaskState {
    /// The term seen last, and when this instance first saw it.
    term: Option<(Term, OffsetDateTime)>,
    /// Per ring and node, since when it has been healthy without a break.
    healthy_since: HashMap<RingName, HashMap<NodeId, OffsetDateTime>>,
    /// Per ring, when its recent automatic drains and removals were made.
    recent: HashMap<RingName, VecDeque<OffsetDateTime>>,
    /// The rings of the last successful listing, for reporting an
    /// unreachable store against them.
    rings: Vec<RingName>,
}

impl Leases {
    /// The last status of `ring`'s automatic transitions.
    pub fn membership_status(&self, ring: &RingName) -> MembershipStatus {
        let table = self.membership.lock().expect("membership lock");
        table.get(ring).cloned().unwrap_or_default()
    }

    /// Every ring's last status, by ring name.
    pub fn membership_statuses(&self) -> Vec<(RingName, MembershipStatus)> {
        let table = self.membership.lock().expect("membership lock");
        let mut all: Vec<_> = table.iter().map(|(r, s)| (r.clone(), s.clone())).collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Runs the decision-maker's ticks until `stop`; one loop per service
    /// (see `service/background.rs`).
    pub(crate) async fn run_membership(self: Arc<Self>, stop: Stop) {
        let mut state = TaskState::default();
        let mut ticks = Ticks::every(TICK, stop);
        while ticks.next().await {
            self.membership_tick(&mut state).await;
        }
    }

    async fn membership_tick(&self, state: &mut TaskState) {
        let Some(term) = self.leader_term() else {
            // Another instance decides; this one shows nothing stale.
            state.term = None;
            self.membership.lock().expect("membership lock").clear();
            return;
        };
        let now = self.clock.now();
        let term_start = match state.term {
            Some((t, start)) if t == term => start,
            _ => {
                state.term = Some((term, now));
                now
            }
        };
        let listed = if self.freshness.is_current() {
            self.rings.list().await.ok()
        } else {
            None
        };
        let Some(snapshots) = listed else {
            let rings = state.rings.clone();
            for ring in rings {
                self.set_status(&ring, unreachable_status(&self.membership_status(&ring)));
            }
            return;
        };
        state.rings = snapshots.iter().map(|s| s.ring.clone()).collect();
        self.membership
            .lock()
            .expect("membership lock")
            .retain(|r, _| state.rings.contains(r));
        for snapshot in snapshots {
            let ring = snapshot.ring.clone();
            let leases = self.of(&ring);
            let since = state.healthy_since.entry(ring.clone()).or_default();
            since.retain(|n, _| {
                leases
                    .get(n)
                    .is_some_and(|l| l.health(now) == NodeHealth::Healthy)
            });
            for (node, lease) in &leases {
                if lease.health(now) == NodeHealth::Healthy {
                    since.entry(node.clone()).or_insert(now);
                }
            }
            let recent = state.recent.entry(ring.clone()).or_default();
            while recent
                .front()
                .is_some_and(|t| now - *t >= time::Duration::MINUTE)
            {
                recent.pop_front();
            }
            let decision = decide(Inputs {
                policy: &snapshot.membership,
                nodes: &snapshot.nodes,
                leases: &leases,
                healthy_since: since,
                now,
                term_start,
                store_reachable: true,
                recent_changes: recent.len(),
            });
            let mut version = snapshot.version;
            for transition in &decision.apply {
                let Some(record) = snapshot.nodes.iter().find(|n| n.id == transition.node) else {
                    continue;
                };
                let request = ChangeRequest {
                    expected_version: Some(version),
                    reason: Some(transition.reason.clone()),
                    force: true,
                    ..ChangeRequest::of(vec![transition.op(record).into()])
                };
                match self.rings.apply_as_leader(&ring, request, term).await {
                    Ok(ChangeOutcome::Committed { current, .. }) => {
                        version = current.snapshot.version;
                        tracing::info!(ring = %ring, node = %transition.node, transition = transition.kind.name(), version, reason = %transition.reason, "automatic membership change");
                        if transition.kind != TransitionKind::Activate {
                            recent.push_back(now);
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        // Decided again on the next tick, on a fresh snapshot.
                        tracing::debug!(ring = %ring, node = %transition.node, error = %e, "automatic membership change not applied");
                        break;
                    }
                }
            }
            self.set_status(
                &ring,
                MembershipStatus {
                    blocked: decision.blocked,
                    pending: decision.pending,
                },
            );
        }
    }

    /// Records `ring`'s status, logging when the guard's state changes
    /// (not on every tick).
    fn set_status(&self, ring: &RingName, status: MembershipStatus) {
        let mut table = self.membership.lock().expect("membership lock");
        let before = table.get(ring).and_then(|s| s.blocked.clone());
        if before.as_ref().map(|b| b.rule) != status.blocked.as_ref().map(|b| b.rule) {
            match &status.blocked {
                Some(b) => {
                    tracing::warn!(ring = %ring, rule = b.rule.name(), detail = %b.detail, "membership guard: automatic drains and removals held back")
                }
                None => {
                    tracing::info!(ring = %ring, "membership guard: clear, automatic drains and removals resume")
                }
            }
        }
        table.insert(ring.clone(), status);
    }

    /// Applies `node`'s due transition now, despite the guard: an
    /// operator's override. Refused when none is due.
    pub async fn override_transition(
        &self,
        ring: &RingName,
        node: &NodeId,
        role: Role,
    ) -> Result<ChangeOutcome, ServiceError> {
        let current = self.rings.current(ring).await?;
        let snapshot = &current.snapshot;
        let record = snapshot
            .nodes
            .iter()
            .find(|n| &n.id == node)
            .ok_or_else(|| crate::ring::RingError::UnknownNode(node.clone()))?;
        let leases = self.of(ring);
        let now = self.clock.now();
        let decision = decide(Inputs {
            policy: &snapshot.membership,
            nodes: std::slice::from_ref(record),
            leases: &leases,
            healthy_since: &HashMap::new(),
            now,
            // The operator decides: no grace, and no guard (below).
            term_start: OffsetDateTime::UNIX_EPOCH,
            store_reachable: true,
            recent_changes: 0,
        });
        let transition = decision
            .apply
            .into_iter()
            .chain(decision.pending)
            .next()
            .ok_or_else(|| ServiceError::NoTransitionDue {
                ring: ring.clone(),
                node: node.clone(),
            })?;
        let request = ChangeRequest {
            expected_version: Some(snapshot.version),
            reason: Some(format!(
                "operator override of the partition guard: {}",
                transition.reason
            )),
            force: true,
            ..ChangeRequest::of(vec![transition.op(record).into()])
        };
        self.rings.apply(ring, request, role).await
    }
}

fn unreachable_status(last: &MembershipStatus) -> MembershipStatus {
    let blocked = guard::check(
        &MembershipPolicy::default(),
        guard::GuardInputs {
            store_reachable: false,
            leased: 0,
            unhealthy: 0,
            recent_changes: 0,
        },
    );
    MembershipStatus {
        blocked,
        pending: last.pending.clone(),
    }
}
