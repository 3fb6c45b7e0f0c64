//! What registering and leaving change: the state a registering node
//! joins or comes back in, and the ring's `on_leave` after a release;
//! with the two hooks the lease operations call.

use time::OffsetDateTime;

use super::super::Leases;
use super::transitions::rfc3339;
use crate::placement::{NodeId, NodeState};
use crate::ring::{ChangeOp, MembershipPolicy, NodeHealth, NodeRecord, OnJoin, OnLeave, RingName};
use crate::service::rings::{ChangeOutcome, ChangeRequest};
use crate::service::ServiceError;
use crate::store::Lease;

/// The state and reason of a registration: `record` as the node sent it,
/// `existing` its record in the ring and `lease` its lease before this
/// registration, if any. A new node joins per `on_join`; a joining node
/// stays joining; a node drained after its lease expired or was released
/// is reactivated by coming back.
pub fn registration(
    policy: &MembershipPolicy,
    mut record: NodeRecord,
    existing: Option<&NodeRecord>,
    lease: Option<&Lease>,
    now: OffsetDateTime,
) -> (NodeRecord, String) {
    let node = record.id.clone();
    let plain = format!("node `{node}` registered with a lease");
    match existing.map(|e| e.state) {
        None if policy.on_join == OnJoin::Joining && record.state == NodeState::Active => {
            record.state = NodeState::Joining;
            (
                record,
                format!("node `{node}` registered with a lease and joins as `joining` (on_join)"),
            )
        }
        Some(NodeState::Joining) if record.state == NodeState::Active => {
            record.state = NodeState::Joining;
            (record, plain)
        }
        Some(NodeState::Draining) if record.state == NodeState::Active => {
            match lease.map(|l| (l, l.health(now))) {
                Some((l, NodeHealth::Unhealthy)) => (
                    record,
                    format!(
                        "node `{node}` came back after missing heartbeats (lease {} expired at {}): reactivated",
                        l.id,
                        rfc3339(l.deadline)
                    ),
                ),
                Some((l, NodeHealth::Left)) => (
                    record,
                    format!(
                        "node `{node}` came back after leaving (lease {} released at {}): reactivated",
                        l.id,
                        rfc3339(l.deadline)
                    ),
                ),
                // Drained by an operator while alive: it stays drained.
                _ => {
                    record.state = NodeState::Draining;
                    (record, plain)
                }
            }
        }
        _ => (record, plain),
    }
}

/// The op and reason of a graceful leave of `record` under `policy`.
pub fn leave(policy: &MembershipPolicy, record: &NodeRecord, lease: &Lease) -> (ChangeOp, String) {
    let reason = format!(
        "node `{}` left (lease {} released at {})",
        record.id,
        lease.id,
        rfc3339(lease.deadline)
    );
    let op = match policy.on_leave {
        OnLeave::Remove => ChangeOp::Remove {
            id: record.id.clone(),
        },
        OnLeave::Drain => ChangeOp::Upsert {
            node: NodeRecord {
                state: NodeState::Draining,
                ..record.clone()
            },
        },
    };
    (op, reason)
}

impl Leases {
    /// `record` as a registration commits it, with the reason: see
    /// [`registration`].
    pub(in crate::service::leases) async fn registration_change(
        &self,
        ring: &RingName,
        record: NodeRecord,
    ) -> Result<(NodeRecord, String), ServiceError> {
        let current = self.rings.current(ring).await?;
        let snapshot = &current.snapshot;
        let existing = snapshot.nodes.iter().find(|n| n.id == record.id);
        let leases = self.of(ring);
        let lease = leases.get(&record.id);
        Ok(registration(
            &snapshot.membership,
            record,
            existing,
            lease,
            self.clock.now(),
        ))
    }

    /// Applies `on_leave` to `node` after its lease `lease` was released,
    /// when this instance decides; otherwise the decision-maker's next
    /// tick does. What it did, `None` when it did not try or failed; a
    /// failure is logged: the next tick retries it.
    pub(in crate::service::leases) async fn apply_leave(
        &self,
        ring: &RingName,
        node: &NodeId,
        lease: &Lease,
    ) -> Option<ChangeOutcome> {
        let term = self.leader_term()?;
        let current = self.rings.current(ring).await.ok()?;
        let record = current.snapshot.nodes.iter().find(|n| &n.id == node)?;
        let (op, reason) = leave(&current.snapshot.membership, record, lease);
        let request = ChangeRequest {
            expected_version: Some(current.snapshot.version),
            reason: Some(reason),
            force: true,
            ..ChangeRequest::of(vec![op.into()])
        };
        match self.rings.apply_as_leader(ring, request, term).await {
            Ok(outcome) => Some(outcome),
            Err(e) => {
                tracing::debug!(ring = %ring, node = %node, error = %e, "on_leave not applied; the next tick retries");
                None
            }
        }
    }
}
