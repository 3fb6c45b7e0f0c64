//! The placement core: pure, deterministic consistent hashing.
//!
//! A [`Placement`] is built from a [`RingConfig`] and a node set and answers
//! [`Placement::owner`] and [`Placement::preference_list`] for byte-string
//! keys. It does no I/O, never depends on hash-map iteration order and uses
//! no randomness, so every process (and every language following
//! `docs/placement-spec.md`) that builds one from the same inputs, in any
//! order, places every key identically. [`Placement::fingerprint`] proves it.

pub mod config;
mod continuum;
mod diff;
mod encoding;
pub mod error;
pub mod hash;
pub mod json_integer;
pub mod jump;
mod jump_hash;
mod jump_runs;
pub mod ketama;
pub mod maglev;
pub mod node;
mod nodeset;
mod ownership;
mod preference;
pub mod rendezvous;
mod repeated_sum;
pub mod vnode;

use std::sync::OnceLock;

pub use config::{Algorithm, HashFunction, RingConfig, RingConfigSpec};
pub use diff::{DiffBasis, MovedRange, NodeMovement, PlacementDiff, Transfer};
pub use encoding::Fingerprint;
pub use error::PlacementError;
pub use node::{HashKey, Node, NodeId, NodeState, Weight, Zone};
pub use ownership::{NodeOwnership, Ownership, OwnershipBasis};

use continuum::Continuum;
use nodeset::{active_sorted, zones_of, Zones};

/// Materialized placement state for one algorithm.
#[derive(Debug, Clone)]
enum Layout {
    Ring(Continuum),
    Ketama(Continuum),
    Maglev(Vec<u32>),
    Jump(jump_runs::BucketRuns),
    Rendezvous {
        node_hashes: Vec<u64>,
        weights: Vec<u32>,
        uniform: bool,
    },
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
    /// Builds a placement. For `jump` the bucket order is the initial one
    /// (nodes in id order); use [`Placement::build_with_buckets`] to restore
    /// a persisted order, or [`Placement::rebuild`] to derive the next one.
    pub fn build(config: &RingConfig, nodes: &[Node]) -> Result<Self, PlacementError> {
        let active = active_sorted(config, nodes)?;
        let layout = match config.algorithm {
            Algorithm::Ring => {
                Layout::Ring(vnode::build(config.hash, config.vnodes_per_weight, &active))
            }
            Algorithm::Ketama => Layout::Ketama(ketama::build(&active)),
            Algorithm::Maglev => Layout::Maglev(maglev::build(&active, config.table_size)),
            Algorithm::Jump => Layout::Jump(Self::checked_len(jump::initial_runs(&active))?),
            Algorithm::Rendezvous => Self::rendezvous_layout(config, &active),
        };
        Ok(Self::assemble(config, active, layout))
    }

    /// Builds a `jump` placement on a persisted bucket order (as returned by
    /// [`Placement::bucket_order`]). Other algorithms ignore `buckets`.
    pub fn build_with_buckets(
        config: &RingConfig,
        nodes: &[Node],
        buckets: &[Option<NodeId>],
    ) -> Result<Self, PlacementError> {
        Self::build_with_runs(config, nodes, buckets.iter().map(|b| (b.as_ref(), 1)))
    }

    /// Builds a `jump` placement on a persisted bucket order given as runs:
    /// `(owner, number of consecutive buckets)`, `None` for holes (as
    /// returned by [`Placement::bucket_runs`]). Neighbouring runs with one
    /// owner may be split; the work is proportional to the runs, not the
    /// buckets. Other algorithms ignore `runs`.
    pub fn build_with_runs<'a>(
        config: &RingConfig,
        nodes: &[Node],
        runs: impl IntoIterator<Item = (Option<&'a NodeId>, u32)>,
    ) -> Result<Self, PlacementError> {
        if config.algorithm != Algorithm::Jump {
            return Self::build(config, nodes);
        }
        let active = active_sorted(config, nodes)?;
        let layout = Layout::Jump(Self::bucket_indices(&active, runs)?);
        Ok(Self::assemble(config, active, layout))
    }

    /// The placement after a change, reusing this one's work where the
    /// algorithm allows: `ring` keeps the points of unchanged nodes and
    /// merges in the new ones; `jump` derives the next bucket order from
    /// this one so unchanged nodes keep their buckets.
    pub fn rebuild(&self, config: &RingConfig, nodes: &[Node]) -> Result<Self, PlacementError> {
        match (&self.layout, config.algorithm) {
            (Layout::Ring(old), Algorithm::Ring) if *config == self.config => {
                let active = active_sorted(config, nodes)?;
                let layout = Layout::Ring(self.merged_ring(old, &active));
                Ok(Self::assemble(config, active, layout))
            }
            (Layout::Jump(old), Algorithm::Jump) => {
                let active = active_sorted(config, nodes)?;
                let runs = Self::checked_len(jump::next_runs(old, &self.nodes, &active))?;
                Ok(Self::assemble(config, active, Layout::Jump(runs)))
            }
            _ => Self::build(config, nodes),
        }
    }

    fn merged_ring(&self, old: &Continuum, active: &[Node]) -> Continuum {
        let mut remap = vec![None; self.nodes.len()];
        let mut added = Vec::new();
        for (i, node) in active.iter().enumerate() {
            match self.index_of(&node.id) {
                Some(j)
                    if self.nodes[j].label() == node.label()
                        && self.nodes[j].weight == node.weight =>
                {
                    remap[j] = Some(i as u32)
                }
                _ => vnode::node_points(
                    self.config.hash,
                    self.config.vnodes_per_weight,
                    node,
                    i as u32,
                    &mut added,
                ),
            }
        }
        added.sort_unstable();
        old.merged(&remap, &added)
    }

    fn rendezvous_layout(config: &RingConfig, active: &[Node]) -> Layout {
        let weights: Vec<u32> = active.iter().map(|n| n.weight.get()).collect();
        Layout::Rendezvous {
            node_hashes: active
                .iter()
                .map(|n| hash::hash64(config.hash, n.label().as_bytes()))
                .collect(),
            uniform: weights.windows(2).all(|w| w[0] == w[1]),
            weights,
        }
    }

    /// Refuses a bucket table longer than [`config::MAX_POINTS`] (holes
    /// count: every bucket is encoded).
    fn checked_len(runs: jump_runs::BucketRuns) -> Result<jump_runs::BucketRuns, PlacementError> {
        let total = u64::from(runs.len());
        if total > config::MAX_POINTS {
            return Err(PlacementError::TooManyPoints {
                total,
                cap: config::MAX_POINTS,
            });
        }
        Ok(runs)
    }

    /// Validates a persisted order (section 5.4.4) into runs of node
    /// indices. A bucket with the same id as the one before it joins its
    /// run without another search.
    fn bucket_indices<'a>(
        active: &[Node],
        order: impl IntoIterator<Item = (Option<&'a NodeId>, u32)>,
    ) -> Result<jump_runs::BucketRuns, PlacementError> {
        let mut counts = vec![0u64; active.len()];
        let mut runs = jump_runs::RunsBuilder::default();
        let mut total = 0u64;
        let mut last_is_hole = false;
        // The last active node found, since neighbouring runs mostly repeat it.
        let mut last: Option<(&NodeId, usize)> = None;
        for (owner, count) in order {
            if count == 0 {
                continue;
            }
            total += u64::from(count);
            // Checked per run, so a huge order fails before it is read whole.
            if total > config::MAX_POINTS {
                return Err(PlacementError::TooManyPoints {
                    total,
                    cap: config::MAX_POINTS,
                });
            }
            last_is_hole = owner.is_none();
            let Some(id) = owner else {
                runs.push(jump_runs::HOLE, count.into());
                continue;
            };
            let i = match last {
                Some((l, i)) if l == id => i,
                _ => active.binary_search_by(|n| n.id.cmp(id)).map_err(|_| {
                    PlacementError::InvalidBucketOrder(format!(
                        "`{id}` holds a bucket but is not an active node"
                    ))
                })?,
            };
            last = Some((id, i));
            counts[i] += u64::from(count);
            runs.push(i as u32, count.into());
        }
        if let Some((n, c)) = active
            .iter()
            .zip(&counts)
            .find(|(n, &c)| c != u64::from(n.weight.get()))
        {
            return Err(PlacementError::InvalidBucketOrder(format!(
                "`{}` has weight {} but holds {} buckets",
                n.id,
                n.weight.get(),
                c
            )));
        }
        if last_is_hole {
            return Err(PlacementError::InvalidBucketOrder(
                "the last bucket is a hole".into(),
            ));
        }
        Ok(runs.finish())
    }

    fn assemble(config: &RingConfig, nodes: Vec<Node>, layout: Layout) -> Self {
        Self {
            config: config.clone(),
            zones: zones_of(config, &nodes),
            nodes,
            layout,
            fingerprint: OnceLock::new(),
        }
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
                let id = (owner != jump_runs::HOLE).then(|| &self.nodes[owner as usize].id);
                (id, count)
            })),
            _ => None,
        }
    }

    /// For `ring` and `ketama`, the points on the circle in ascending order
    /// with their owners (ties in the documented order).
    pub fn points(&self) -> Option<impl Iterator<Item = (u64, &NodeId)> + '_> {
        match &self.layout {
            Layout::Ring(c) | Layout::Ketama(c) => Some(
                c.points()
                    .iter()
                    .map(|p| (p.pos, &self.nodes[p.owner as usize].id)),
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

    /// The key's position in the algorithm's hash space: 32 bits for
    /// `ketama`, 64 bits otherwise.
    #[inline]
    pub fn key_hash(&self, key: &[u8]) -> u64 {
        match self.layout {
            Layout::Ketama(_) => u64::from(ketama::key_hash(key)),
            _ => hash::hash64(self.config.hash, key),
        }
    }

    /// Index (into [`Placement::nodes`]) of the node owning `key`.
    #[inline(always)]
    pub fn owner_index(&self, key: &[u8]) -> Option<usize> {
        // The default ring and hash get a path of their own that inlines
        // into the caller's loop as a hash and one or two loads; every other
        // combination takes one call, so that its code (md5 for ketama, the
        // rendezvous scan) stays out of that loop.
        if let (Layout::Ring(c), HashFunction::Xxh3) = (&self.layout, self.config.hash) {
            return c
                .owner(hash::hash64(HashFunction::Xxh3, key))
                .map(|i| i as usize);
        }
        self.owner_index_general(key)
    }

    #[inline(never)]
    fn owner_index_general(&self, key: &[u8]) -> Option<usize> {
        self.owner_of_hash(self.key_hash(key))
    }

    /// Owner of a key already hashed with [`Placement::key_hash`].
    #[inline]
    pub fn owner_of_hash(&self, h: u64) -> Option<usize> {
        let i = match &self.layout {
            Layout::Ring(c) | Layout::Ketama(c) => c.owner(h)?,
            Layout::Maglev(t) => *t.get((h % self.config.table_size) as usize)?,
            Layout::Jump(b) if !b.is_empty() => b.owner(b.lookup(h)),
            Layout::Jump(_) => return None,
            Layout::Rendezvous {
                node_hashes,
                weights,
                uniform,
            } => rendezvous::owner(h, node_hashes, weights, *uniform)?,
        };
        Some(i as usize)
    }

    /// The node owning `key`, or `None` when no node is active.
    #[inline]
    pub fn owner(&self, key: &[u8]) -> Option<&NodeId> {
        self.owner_index(key).map(|i| &self.nodes[i].id)
    }

    /// Indices of up to `r` distinct nodes for `key`, owner first, in the
    /// algorithm's successor order (zones first when zone awareness is on).
    pub fn preference_indices(&self, key: &[u8], r: usize) -> Vec<usize> {
        let h = self.key_hash(key);
        let n = self.nodes.len();
        let zones = self.zones.as_ref().map(|z| (&z.of_node[..], z.count));
        let picked = match &self.layout {
            Layout::Ring(c) | Layout::Ketama(c) => match c.successor(h) {
                Some(start) => preference::select(c.walk(start), r, n, zones),
                None => Vec::new(),
            },
            Layout::Maglev(t) if !t.is_empty() => {
                let start = (h % self.config.table_size) as usize;
                let walk = (0..t.len()).map(|k| t[(start + k) % t.len()]);
                preference::select(walk, r, n, zones)
            }
            // One step per run of a node, not per bucket: the same list
            // (see `BucketRuns::successors`).
            Layout::Jump(b) if !b.is_empty() => {
                preference::select(b.successors(b.lookup(h)), r, n, zones)
            }
            Layout::Maglev(_) | Layout::Jump(_) => Vec::new(),
            Layout::Rendezvous {
                node_hashes,
                weights,
                uniform,
            } => {
                let ranked = rendezvous::ranked(h, node_hashes, weights, *uniform);
                preference::select(ranked.into_iter(), r, n, zones)
            }
        };
        picked.into_iter().map(|i| i as usize).collect()
    }

    /// Up to `r` distinct nodes for `key`: exactly `min(r, active nodes)`,
    /// except under `ketama`, where (as in libketama) a node whose weight
    /// share rounds down to zero points owns nothing and is never listed.
    pub fn preference_list(&self, key: &[u8], r: usize) -> Vec<&NodeId> {
        self.preference_indices(key, r)
            .into_iter()
            .map(|i| &self.nodes[i].id)
            .collect()
    }

    /// SHA-256 of the canonical encoding, computed once.
    pub fn fingerprint(&self) -> Fingerprint {
        *self.fingerprint.get_or_init(|| self.digest())
    }
}
