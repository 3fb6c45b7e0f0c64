//! The lease table: which nodes registered themselves, until when they
//! count as alive, and the health that follows from it.
//!
//! Deadlines live in memory only, so a renewal is a map update and never
//! a store write; only a registration that creates or changes a node's
//! record goes through [`RingService::apply`] and makes a version.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use time::OffsetDateTime;

use super::{ChangeOutcome, ChangeRequest, RingService, ServiceError};
use crate::placement::NodeId;
use crate::ring::{ChangeOp, LeaseId, NodeHealth, NodeRecord, RingName, Role, Snapshot};

/// One node's lease as the table holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The registration's id.
    pub id: LeaseId,
    /// How long each renewal extends it.
    pub ttl: Duration,
    /// When it expires unless renewed.
    pub deadline: OffsetDateTime,
    /// The last registration or renewal.
    pub last_heartbeat: OffsetDateTime,
    /// Released by the node: it left on purpose.
    pub released: bool,
}

impl Lease {
    /// The health this lease gives its node at `now`.
    pub fn health(&self, now: OffsetDateTime) -> NodeHealth {
        if self.released {
            NodeHealth::Left
        } else if now > self.deadline {
            NodeHealth::Unhealthy
        } else {
            NodeHealth::Healthy
        }
    }
}

/// Per ring, the leases of its self-registered nodes.
pub(super) type LeaseTable = HashMap<RingName, HashMap<NodeId, Lease>>;

/// `ttl` as a span of calendar time; leases are bounded far below where
/// the conversion could fail.
fn span(ttl: Duration) -> time::Duration {
    time::Duration::try_from(ttl).unwrap_or(time::Duration::MAX)
}

/// 128 bits no one outside this process can predict: two SipHash outputs
/// under fresh random keys. A lease id is a name, not a secret (renewing
/// takes the write token), so this needs no cryptographic generator.
fn random_bits(now: OffsetDateTime) -> u128 {
    let draw = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i128(now.unix_timestamp_nanos());
        h.finish()
    };
    (u128::from(draw()) << 64) | u128::from(draw())
}

impl RingService {
    /// Registers `record` in `ring` with a lease of `ttl`. A new or changed
    /// record is one change (one version); an identical one changes
    /// nothing. A node whose lease is live keeps its lease id, so
    /// registering again is a renewal; otherwise it gets a new one.
    pub async fn register_lease(
        &self,
        ring: &RingName,
        record: NodeRecord,
        ttl: Duration,
        role: Role,
    ) -> Result<(Lease, ChangeOutcome), ServiceError> {
        let node = record.id.clone();
        // The policy decides the state it joins or comes back in.
        let (record, reason) = self.registration_change(ring, record).await?;
        let request = ChangeRequest {
            ops: vec![ChangeOp::Upsert { node: record }.into()],
            expected_version: None,
            reason: Some(reason),
            dry_run: false,
            idempotency_key: None,
        };
        let outcome = self.apply(ring, request, role).await?;
        let now = self.now();
        let mut table = self.leases.lock().expect("lease lock");
        let leases = table.entry(ring.clone()).or_default();
        let id = match leases.get(&node) {
            Some(live) if live.health(now) == NodeHealth::Healthy => live.id,
            _ => LeaseId::from_bits(random_bits(now)),
        };
        let lease = Lease {
            id,
            ttl,
            deadline: now + span(ttl),
            last_heartbeat: now,
            released: false,
        };
        leases.insert(node, lease.clone());
        Ok((lease, outcome))
    }

    /// Extends `node`'s lease `id` by its TTL. Never a store write.
    pub async fn renew_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
    ) -> Result<Lease, ServiceError> {
        let current = self.current(ring).await?;
        let now = self.now();
        let mut table = self.leases.lock().expect("lease lock");
        let lease = live_lease(&mut table, ring, node, id, now)?;
        if !current.snapshot.nodes.iter().any(|n| &n.id == node) {
            // Removed by an operator since it registered: the lease names
            // a node that is gone, so it is gone too.
            table.entry(ring.clone()).or_default().remove(node);
            return Err(ServiceError::LeaseNotFound {
                ring: ring.clone(),
                node: node.clone(),
                lease: id,
            });
        }
        lease.deadline = now + span(lease.ttl);
        lease.last_heartbeat = now;
        Ok(lease.clone())
    }

    /// Releases `node`'s lease `id`: the node left on purpose and is
    /// marked `left`; the ring's `on_leave` then removes or drains it (one
    /// version).
    pub async fn release_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
    ) -> Result<Lease, ServiceError> {
        self.current(ring).await?;
        let now = self.now();
        let released = {
            let mut table = self.leases.lock().expect("lease lock");
            let lease = owned_lease(&mut table, ring, node, id)?;
            if lease.released {
                return Err(ServiceError::LeaseReleased {
                    node: node.clone(),
                    lease: id,
                });
            }
            lease.released = true;
            lease.deadline = lease.deadline.min(now);
            lease.clone()
        };
        // The policy's `on_leave`: one change, with its reason.
        self.apply_leave(ring, node, &released).await;
        Ok(released)
    }

    /// The leases of `ring`'s nodes, by node; a node without one is
    /// `unmanaged`.
    pub fn leases(&self, ring: &RingName) -> HashMap<NodeId, Lease> {
        let table = self.leases.lock().expect("lease lock");
        table.get(ring).cloned().unwrap_or_default()
    }

    /// Each of `snapshot`'s nodes' health now, with its lease if it has one.
    pub fn health(&self, snapshot: &Snapshot) -> Vec<(NodeHealth, Option<Lease>)> {
        let leases = self.leases(&snapshot.ring);
        let now = self.now();
        snapshot
            .nodes
            .iter()
            .map(|n| match leases.get(&n.id) {
                Some(l) => (l.health(now), Some(l.clone())),
                None => (NodeHealth::Unmanaged, None),
            })
            .collect()
    }

    /// How many of `snapshot`'s nodes have each health now, every health
    /// listed (zero included).
    pub fn health_counts(&self, snapshot: &Snapshot) -> BTreeMap<NodeHealth, u64> {
        let mut counts: BTreeMap<NodeHealth, u64> =
            NodeHealth::ALL.iter().map(|h| (*h, 0)).collect();
        for (h, _) in self.health(snapshot) {
            *counts.entry(h).or_default() += 1;
        }
        counts
    }

    /// Drops the leases of nodes a committed change removed: a node added
    /// again later by an operator is `unmanaged`, not its old lease's.
    pub(super) fn forget_removed_leases(&self, ring: &RingName, ops: &[ChangeOp]) {
        let mut table = self.leases.lock().expect("lease lock");
        if let Some(leases) = table.get_mut(ring) {
            for op in ops {
                if let ChangeOp::Remove { id } = op {
                    leases.remove(id);
                }
            }
        }
    }

    /// Drops a deleted ring's leases.
    pub(super) fn forget_leases(&self, ring: &RingName) {
        self.leases.lock().expect("lease lock").remove(ring);
    }
}

/// `node`'s lease, if it is `id`; a refusal names what is wrong.
fn owned_lease<'t>(
    table: &'t mut LeaseTable,
    ring: &RingName,
    node: &NodeId,
    id: LeaseId,
) -> Result<&'t mut Lease, ServiceError> {
    let leases = table.entry(ring.clone()).or_default();
    if let Some((owner, _)) = leases.iter().find(|(n, l)| l.id == id && *n != node) {
        return Err(ServiceError::LeaseOfAnotherNode {
            lease: id,
            owner: owner.clone(),
            node: node.clone(),
        });
    }
    match leases.get_mut(node) {
        Some(lease) if lease.id == id => Ok(lease),
        _ => Err(ServiceError::LeaseNotFound {
            ring: ring.clone(),
            node: node.clone(),
            lease: id,
        }),
    }
}

/// `node`'s lease `id`, refused when it was released or has expired.
fn live_lease<'t>(
    table: &'t mut LeaseTable,
    ring: &RingName,
    node: &NodeId,
    id: LeaseId,
    now: OffsetDateTime,
) -> Result<&'t mut Lease, ServiceError> {
    let lease = owned_lease(table, ring, node, id)?;
    match lease.health(now) {
        NodeHealth::Left => Err(ServiceError::LeaseReleased {
            node: node.clone(),
            lease: id,
        }),
        NodeHealth::Unhealthy => Err(ServiceError::LeaseExpired {
            node: node.clone(),
            lease: id,
            deadline: lease.deadline,
        }),
        _ => Ok(lease),
    }
}

#[cfg(test)]
mod tests;
