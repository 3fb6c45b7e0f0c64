//! The leases part of the service: leases of self-registered nodes and the
//! health that follows from them, with what follows from health: the
//! health monitor that announces each node's transitions
//! (`health_monitor.rs`), and the decision-maker's automatic membership
//! changes and their status per ring (`membership/`).
//!
//! The store keeps the leases ([`crate::store::LeaseStore`]): a renewal
//! never makes a version, and reading health is a read of the store's
//! memory, never a round trip. Only a registration that creates or
//! changes a node's record goes through [`Rings::apply`] and makes a
//! version.

pub(crate) mod health_monitor;
pub mod membership;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::freshness::Freshness;
use super::rings::{ChangeOutcome, ChangeRequest, Effect, Rings};
use super::ServiceError;
use crate::hub::Hub;
use crate::placement::NodeId;
use crate::ring::{ChangeOp, Clock, LeaseId, NodeHealth, NodeRecord, RingName, Role, Snapshot};
use crate::store::leadership::{Leadership, Term};
use crate::store::{Lease, LeaseError, Store};

/// The leases part.
pub struct Leases {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    hub: Arc<Hub>,
    /// Whether this instance decides the automatic changes.
    leadership: Arc<dyn Leadership>,
    rings: Arc<Rings>,
    freshness: Arc<Freshness>,
    /// The decision-maker's last status per ring (see `membership/`).
    membership: Mutex<membership::StatusTable>,
}

/// What a registration, renewal or release did: the lease as it now
/// stands, and the ring as the request left it.
#[derive(Debug, Clone)]
pub struct LeaseOutcome {
    /// The lease.
    pub lease: Lease,
    /// The ring's version after the request: the one it committed, or the
    /// one it found when it committed none.
    pub version: u64,
    /// What the request did to the node's record. A release is `Changed`
    /// when the ring's `on_leave` committed a version for it.
    pub effect: Effect,
}

impl Leases {
    /// The leases of `rings`' nodes, which `store` keeps; health
    /// transitions are announced through `hub`.
    pub(crate) fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        hub: Arc<Hub>,
        leadership: Arc<dyn Leadership>,
        rings: Arc<Rings>,
        freshness: Arc<Freshness>,
    ) -> Self {
        Self {
            store,
            clock,
            hub,
            leadership,
            rings,
            freshness,
            membership: Mutex::default(),
        }
    }

    /// Registers `record` in `ring` with a lease of `ttl`. A new or changed
    /// record is one change (one version); an identical one changes
    /// nothing. A node whose lease is live keeps its lease id, so
    /// registering again is a renewal; otherwise it gets a new one.
    pub async fn register(
        &self,
        ring: &RingName,
        record: NodeRecord,
        ttl: Duration,
        role: Role,
    ) -> Result<LeaseOutcome, ServiceError> {
        let node = record.id.clone();
        // What change to make: the policy decides the state it joins or
        // comes back in.
        let (record, reason) = self.registration_change(ring, record).await?;
        let request = ChangeRequest {
            reason: Some(reason),
            force: true,
            ..ChangeRequest::of(vec![ChangeOp::Upsert { node: record }.into()])
        };
        let outcome = self.rings.apply(ring, request, role).await?;
        // Record the lease.
        let lease = self
            .store
            .grant_lease(ring, &node, ttl, self.clock.now())
            .await
            .map_err(|e| refusal(e, ring, &node, None))?;
        Ok(LeaseOutcome {
            lease,
            version: outcome.version(),
            effect: outcome.effect_on(&node),
        })
    }

    /// Extends `node`'s lease `id` by its TTL. Never a version.
    pub async fn renew(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
    ) -> Result<LeaseOutcome, ServiceError> {
        let mut current = self.rings.current(ring).await?;
        let lease = self
            .store
            .renew_lease(ring, node, id, self.clock.now())
            .await
            .map_err(|e| refusal(e, ring, node, Some(id)))?;
        if !current.snapshot.nodes.iter().any(|n| &n.id == node) {
            // Another instance may have committed the node's registration
            // after this one last heard: read the ring before concluding.
            current = self.rings.refresh(ring).await?;
            if !current.snapshot.nodes.iter().any(|n| &n.id == node) {
                // Removed by an operator since it registered: the lease
                // names a node that is gone, so it is gone too.
                self.store
                    .forget_leases(ring, std::slice::from_ref(node))
                    .await?;
                return Err(refusal(LeaseError::NotFound, ring, node, Some(id)));
            }
        }
        Ok(LeaseOutcome {
            lease,
            version: current.snapshot.version,
            effect: Effect::Unchanged,
        })
    }

    /// Releases `node`'s lease `id`: the node left on purpose and is
    /// marked `left`; the ring's `on_leave` then removes or drains it (one
    /// version).
    pub async fn release(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
    ) -> Result<LeaseOutcome, ServiceError> {
        let found = self.rings.current(ring).await?.snapshot.version;
        // Record the lease: released.
        let released = self
            .store
            .release_lease(ring, node, id, self.clock.now())
            .await
            .map_err(|e| refusal(e, ring, node, Some(id)))?;
        // What change to make: the policy's `on_leave`, one change with its
        // reason.
        let left = self.apply_leave(ring, node, &released).await;
        Ok(LeaseOutcome {
            lease: released,
            version: left.as_ref().map_or(found, ChangeOutcome::version),
            effect: left.map_or(Effect::Unchanged, |o| o.effect_on(node)),
        })
    }

    /// The leases of `ring`'s nodes, by node; a node without one is
    /// `unmanaged`. From memory: never waits on the store.
    pub fn of(&self, ring: &RingName) -> HashMap<NodeId, Lease> {
        self.store.leases(ring, self.clock.now())
    }

    /// Each of `snapshot`'s nodes' health now, with its lease if it has
    /// one. From memory: never waits on the store.
    pub fn health(&self, snapshot: &Snapshot) -> Vec<(NodeHealth, Option<Lease>)> {
        let now = self.clock.now();
        let leases = self.store.leases(&snapshot.ring, now);
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

    /// Drops a deleted ring's leases from memory (the store deleted them
    /// with the ring).
    pub(crate) fn forget_ring(&self, ring: &RingName) {
        self.store.forget_ring_leases(ring);
    }

    /// This instance's term while it decides the automatic changes.
    fn leader_term(&self) -> Option<Term> {
        self.leadership.fence().map(|f| f.term())
    }
}

/// The service's refusal for a lease operation on `node` (and lease `id`,
/// when the request named one).
fn refusal(e: LeaseError, ring: &RingName, node: &NodeId, id: Option<LeaseId>) -> ServiceError {
    let lease = || id.unwrap_or(LeaseId::from_bits(0));
    match e {
        LeaseError::Store(e) => e.into(),
        LeaseError::NotFound => ServiceError::LeaseNotFound {
            ring: ring.clone(),
            node: node.clone(),
            lease: lease(),
        },
        LeaseError::Expired { deadline } => ServiceError::LeaseExpired {
            node: node.clone(),
            lease: lease(),
            deadline,
        },
        LeaseError::Released => ServiceError::LeaseReleased {
            node: node.clone(),
            lease: lease(),
        },
        LeaseError::OfAnotherNode { owner } => ServiceError::LeaseOfAnotherNode {
            lease: lease(),
            owner,
            node: node.clone(),
        },
    }
}

#[cfg(test)]
mod tests;
