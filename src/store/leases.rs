//! The store's seam for leases: grant, renew, release and forget the
//! leases of self-registered nodes, and read them from memory.
//!
//! Each backend keeps a ring's leases in memory ([`LeaseTable`]) so that
//! reading health ([`LeaseStore::leases`]) never waits on the store: a
//! health monitor polls it several times a second and `/metrics` reads it
//! on every scrape. What each backend persists, and how another instance
//! learns of a lease, is the backend's own (see `docs/membership.md`).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use thiserror::Error;
use time::OffsetDateTime;

use super::StoreError;
use crate::placement::NodeId;
use crate::ring::{LeaseId, NodeHealth, RingName};

/// One node's lease as this instance knows it.
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
    /// A new lease `id` of `ttl`, granted at `now`.
    pub fn granted(id: LeaseId, ttl: Duration, now: OffsetDateTime) -> Self {
        Self {
            id,
            ttl,
            deadline: now + span(ttl),
            last_heartbeat: now,
            released: false,
        }
    }

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

    /// Renewed at `now`: the deadline moves to one TTL from now.
    pub fn renew(&mut self, now: OffsetDateTime) {
        self.deadline = now + span(self.ttl);
        self.last_heartbeat = now;
    }

    /// Released at `now`: the node left, and its deadline is no later. Nor
    /// is its last heartbeat: none follows a release, however late an
    /// instance learns of it (etcd's watch, SQLite's start-up read).
    pub fn release(&mut self, now: OffsetDateTime) {
        self.released = true;
        self.deadline = self.deadline.min(now);
        self.last_heartbeat = self.last_heartbeat.min(now);
    }
}

/// Why a lease operation was refused, or failed.
#[derive(Debug, Error)]
pub enum LeaseError {
    /// The node holds no lease of that id: never made, or forgotten.
    #[error("no such lease")]
    NotFound,
    /// The lease expired before this request.
    #[error("the lease expired")]
    Expired {
        /// When it expired (as this instance knows it).
        deadline: OffsetDateTime,
    },
    /// The lease was released.
    #[error("the lease was released")]
    Released,
    /// The lease is another node's.
    #[error("the lease belongs to node `{owner}`")]
    OfAnotherNode {
        /// The node that holds it.
        owner: NodeId,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Leases in a store. Every method but the reads of memory may wait on
/// the backend; the reads never do.
#[async_trait]
pub trait LeaseStore: Send + Sync {
    /// Gives `node` of `ring` a lease of `ttl` at `now`. While the node's
    /// lease is live it keeps its id and is renewed (now with `ttl`);
    /// otherwise (none, released, expired) the node gets a new id.
    async fn grant_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        ttl: Duration,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError>;

    /// Extends `node`'s live lease `id` by its TTL from `now`.
    async fn renew_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError>;

    /// Releases `node`'s lease `id` at `now`: its node is `left`.
    async fn release_lease(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
        now: OffsetDateTime,
    ) -> Result<Lease, LeaseError>;

    /// The leases of `ring`'s nodes as this instance knows them at `now`,
    /// by node, from memory only.
    fn leases(&self, ring: &RingName, now: OffsetDateTime) -> HashMap<NodeId, Lease>;

    /// Ends the leases of `nodes` (removed from `ring` by a change), so a
    /// node added again later by an operator is unmanaged.
    async fn forget_leases(&self, ring: &RingName, nodes: &[NodeId]) -> Result<(), StoreError>;

    /// Drops what memory holds of a deleted ring's leases. Deleting a ring
    /// deletes its stored leases; this only keeps memory in step at once.
    fn forget_ring_leases(&self, ring: &RingName);
}

/// `ttl` as a span of calendar time; leases are bounded far below where
/// the conversion could fail.
pub fn span(ttl: Duration) -> time::Duration {
    time::Duration::try_from(ttl).unwrap_or(time::Duration::MAX)
}

/// A fresh lease id: 128 bits no one outside this process can predict,
/// two SipHash outputs under fresh random keys. A lease id is a name, not
/// a secret (renewing takes the write token), so this needs no
/// cryptographic generator.
pub fn new_lease_id(now: OffsetDateTime) -> LeaseId {
    let draw = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i128(now.unix_timestamp_nanos());
        h.finish()
    };
    LeaseId::from_bits((u128::from(draw()) << 64) | u128::from(draw()))
}

/// Per ring, per node, a lease and what its backend keeps beside it.
pub type LeaseMap<X> = HashMap<RingName, HashMap<NodeId, (Lease, X)>>;

/// Per ring and node, a lease and what its backend keeps beside it (`X`).
/// Shared by the backends so that every one refuses alike.
#[derive(Debug)]
pub struct LeaseTable<X = ()> {
    rings: Mutex<LeaseMap<X>>,
}

impl<X> Default for LeaseTable<X> {
    fn default() -> Self {
        Self {
            rings: Mutex::new(HashMap::new()),
        }
    }
}

impl<X: Clone> LeaseTable<X> {
    /// Runs `f` on the table, under its lock (held only for `f`).
    pub fn with<T>(&self, f: impl FnOnce(&mut LeaseMap<X>) -> T) -> T {
        f(&mut self.rings.lock().expect("lease table lock"))
    }

    /// `node`'s entry, if it has one.
    pub fn get(&self, ring: &RingName, node: &NodeId) -> Option<(Lease, X)> {
        self.with(|t| t.get(ring).and_then(|l| l.get(node)).cloned())
    }

    /// Sets `node`'s entry.
    pub fn insert(&self, ring: &RingName, node: &NodeId, lease: Lease, extra: X) {
        self.with(|t| {
            t.entry(ring.clone())
                .or_default()
                .insert(node.clone(), (lease, extra));
        });
    }

    /// Every entry of `ring`.
    pub fn ring(&self, ring: &RingName) -> HashMap<NodeId, (Lease, X)> {
        self.with(|t| t.get(ring).cloned().unwrap_or_default())
    }

    /// Drops `nodes`' entries.
    pub fn remove(&self, ring: &RingName, nodes: &[NodeId]) {
        self.with(|t| {
            if let Some(leases) = t.get_mut(ring) {
                for n in nodes {
                    leases.remove(n);
                }
            }
        });
    }

    /// Drops every entry of `ring`.
    pub fn remove_ring(&self, ring: &RingName) {
        self.with(|t| t.remove(ring));
    }

    /// `node`'s entry if its lease is `id`. Refused as another node's when
    /// some other node of the ring holds `id`, as not found otherwise.
    pub fn owned(
        &self,
        ring: &RingName,
        node: &NodeId,
        id: LeaseId,
    ) -> Result<(Lease, X), LeaseError> {
        self.with(|t| {
            let leases = t.get(ring);
            let mine = leases.and_then(|l| l.get(node)).filter(|(l, _)| l.id == id);
            if let Some(entry) = mine {
                return Ok(entry.clone());
            }
            let owner = leases.and_then(|l| l.iter().find(|(_, (l, _))| l.id == id));
            match owner {
                Some((owner, _)) => Err(LeaseError::OfAnotherNode {
                    owner: owner.clone(),
                }),
                None => Err(LeaseError::NotFound),
            }
        })
    }
}

/// `lease`, refused when it was released or had expired at `now`.
pub fn live(lease: Lease, now: OffsetDateTime) -> Result<Lease, LeaseError> {
    match lease.health(now) {
        NodeHealth::Left => Err(LeaseError::Released),
        NodeHealth::Unhealthy => Err(LeaseError::Expired {
            deadline: lease.deadline,
        }),
        _ => Ok(lease),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_750_000_000 + secs).unwrap()
    }

    #[test]
    fn a_lease_is_healthy_to_its_deadline_and_left_once_released() {
        let mut lease = Lease::granted(LeaseId::from_bits(1), Duration::from_secs(10), t(0));
        assert_eq!(lease.deadline, t(10));
        assert_eq!(lease.health(t(10)), NodeHealth::Healthy);
        assert_eq!(lease.health(t(11)), NodeHealth::Unhealthy);
        lease.renew(t(5));
        assert_eq!((lease.deadline, lease.last_heartbeat), (t(15), t(5)));
        lease.release(t(7));
        assert_eq!((lease.deadline, lease.last_heartbeat), (t(7), t(5)));
        assert_eq!(lease.health(t(6)), NodeHealth::Left);
        // Learnt at t(20) of a release at t(7): last heard of at t(7).
        let mut learnt = Lease::granted(LeaseId::from_bits(2), Duration::from_secs(10), t(20));
        learnt.release(t(7));
        assert_eq!((learnt.deadline, learnt.last_heartbeat), (t(7), t(7)));
    }

    #[test]
    fn a_lease_is_found_only_by_its_node_and_id() {
        let table = LeaseTable::<()>::default();
        let ring = RingName::new("r").unwrap();
        let (a, b) = (NodeId::new("a").unwrap(), NodeId::new("b").unwrap());
        let lease = Lease::granted(LeaseId::from_bits(1), Duration::from_secs(10), t(0));
        table.insert(&ring, &a, lease.clone(), ());
        assert_eq!(table.owned(&ring, &a, lease.id).unwrap().0, lease);
        assert!(matches!(
            table.owned(&ring, &b, lease.id),
            Err(LeaseError::OfAnotherNode { owner }) if owner == a
        ));
        assert!(matches!(
            table.owned(&ring, &a, LeaseId::from_bits(2)),
            Err(LeaseError::NotFound)
        ));
        let other = RingName::new("s").unwrap();
        assert!(matches!(
            table.owned(&other, &a, lease.id),
            Err(LeaseError::NotFound)
        ));
        assert!(matches!(
            live(lease.clone(), t(11)),
            Err(LeaseError::Expired { deadline }) if deadline == t(10)
        ));
        table.remove(&ring, std::slice::from_ref(&a));
        assert_eq!(table.get(&ring, &a), None);
    }

    #[test]
    fn fresh_ids_differ() {
        assert_ne!(new_lease_id(t(0)), new_lease_id(t(0)));
    }
}
