//! The placement core: pure, deterministic consistent hashing.
//!
//! A [`Placement`] is built from a [`RingConfig`] and a node set and answers
//! [`Placement::owner`] and [`Placement::preference_list`] for byte-string
//! keys. It does no I/O, never depends on hash-map iteration order and uses
//! no randomness, so every process (and every language following
//! `docs/placement-spec.md`) that builds one from the same inputs, in any
//! order, places every key identically. [`Placement::fingerprint`] proves it.

mod algorithm;
mod build;
pub mod config;
mod continuum;
mod diff;
mod encoding;
pub mod envoy_maglev;
pub mod envoy_ring_hash;
pub mod error;
pub mod haproxy;
pub mod hash;
mod hash_tag;
pub mod json_integer;
pub mod jump;
pub mod ketama;
mod lookup;
pub mod maglev;
pub mod nginx;
pub mod node;
mod nodeset;
mod ownership;
mod preference;
mod ramp;
pub mod rendezvous;
mod repeated_sum;
pub mod table;
pub mod twemproxy;
pub mod vnode;

use std::sync::OnceLock;

pub use config::{Algorithm, HashFunction, RingConfig, RingConfigSpec};
pub use diff::{DiffBasis, MovedRange, NodeMovement, PlacementDiff, Transfer};
pub use encoding::{BadFingerprint, Fingerprint};
pub use error::PlacementError;
pub use hash_tag::HashTag;
pub use node::{Address, HashKey, Node, NodeId, NodeState, Ramp, Weight, Zone, RAMP_FULL};
pub use ownership::{NodeOwnership, Ownership, OwnershipBasis};

use continuum::Continuum;
use nodeset::Zones;

/// Materialized placement state for one algorithm.
#[derive(Debug, Clone)]
enum Layout {
    Ring(Continuum),
    Ketama(Continuum),
    Maglev(Vec<u32>),
    Jump(jump::runs::BucketRuns),
    Rendezvous {
        node_hashes: Vec<u64>,
        /// `weight × ramp` (parts of 65,536) per node.
        weights: Vec<u64>,
        uniform: bool,
    },
    Table(table::PartitionTable),
    Nginx(Continuum),
    Haproxy(haproxy::Circle),
    /// nutcracker's continuum, equal points in server-name order; the key
    /// hash also needs the config's `hash_tag`.
    Twemproxy(Continuum),
    /// Envoy's and gRPC's ring: 64-bit positions, equal ones in hash-key
    /// order.
    EnvoyRingHash(Continuum),
}

/// An immutable, materialized placement: who owns every key.
#[derive(Debug, Clone)]
pub struct Placement {
    config: RingConfig,
    /// Active nodes, sorted by id; a node's index here is its number in the
    /// materialized layout and in the canonical encoding.
    nodes: Vec<Node>,
    zones: Option<Zones>,
    layout: Layout,
    fingerprint: OnceLock<Fingerprint>,
}

impl Placement {
    /// Whether an active node is ramped below full (spec 2.2): such a
    /// placement weighs nodes in parts of 65,536 and encodes every ramp.
    pub fn is_ramped(&self) -> bool {
        nodeset::ramped(&self.nodes)
    }

    /// The configuration this placement was built with.
    pub fn config(&self) -> &RingConfig {
        &self.config
    }

    /// Active nodes in id order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Position of `id` in [`Placement::nodes`].
    pub fn index_of(&self, id: &NodeId) -> Option<usize> {
        self.nodes.binary_search_by(|n| n.id.cmp(id)).ok()
    }

    /// For `jump`, the persisted bucket order (`None` marks a hole), one
    /// entry per bucket. [`Placement::bucket_runs`] gives the same order
    /// without expanding it.
    pub fn bucket_order(&self) -> Option<Vec<Option<NodeId>>> {
        let runs = self.bucket_runs()?;
        let mut order = Vec::new();
        for (id, count) in runs {
            order.extend(std::iter::repeat_n(id.cloned(), count as usize));
        }
        Some(order)
    }

    /// For `jump`, the persisted bucket order as maximal runs of one owner
    /// (`None` for holes): `(owner, number of consecutive buckets)`, in
    /// bucket order.
    pub fn bucket_runs(&self) -> Option<impl Iterator<Item = (Option<&NodeId>, u32)> + '_> {
        match &self.layout {
            Layout::Jump(b) => Some(b.runs().map(|(owner, count)| {
                let id = (owner != jump::runs::HOLE).then(|| &self.nodes[owner as usize].id);
                (id, count)
            })),
            _ => None,
        }
    }

    /// For `ring`, `ketama`, `nginx`, `twemproxy` and `envoy_ring_hash`,
    /// the points on the
    /// circle in ascending order with their owners (ties in the documented
    /// order).
    pub fn points(&self) -> Option<impl Iterator<Item = (u64, &NodeId)> + '_> {
        match &self.layout {
            Layout::Ring(c)
            | Layout::Ketama(c)
            | Layout::Nginx(c)
            | Layout::Twemproxy(c)
            | Layout::EnvoyRingHash(c) => Some(
                c.points()
                    .iter()
                    .map(|p| (p.pos, &self.nodes[p.owner as usize].id)),
            ),
            _ => None,
        }
    }

    /// For `haproxy`, each active node's server id, in node (id) order.
    pub fn server_ids(&self) -> Option<impl Iterator<Item = (&NodeId, u32)> + '_> {
        match &self.layout {
            Layout::Haproxy(c) => Some(
                self.nodes
                    .iter()
                    .map(|n| &n.id)
                    .zip(c.server_ids.iter().copied()),
            ),
            _ => None,
        }
    }

    /// For `haproxy`, HAProxy's points (`full_hash(id × 4096 + k)`) in
    /// ascending order with their owners.
    pub fn haproxy_points(&self) -> Option<impl Iterator<Item = (u32, &NodeId)> + '_> {
        match &self.layout {
            Layout::Haproxy(c) => Some(
                c.points()
                    .iter()
                    .map(|&(key, owner)| (key, &self.nodes[owner as usize].id)),
            ),
            _ => None,
        }
    }

    /// For `maglev`, the lookup table as indices into [`Placement::nodes`].
    pub fn maglev_table(&self) -> Option<&[u32]> {
        match &self.layout {
            Layout::Maglev(t) => Some(t),
            _ => None,
        }
    }

    /// SHA-256 of the canonical encoding, computed once.
    pub fn fingerprint(&self) -> Fingerprint {
        *self.fingerprint.get_or_init(|| self.digest())
    }
}
