//! Building placements: from a config and nodes, on a persisted `jump`
//! bucket order, or incrementally from the previous placement.

use std::sync::OnceLock;

use super::continuum::Continuum;
use super::jump::runs::{BucketRuns, RunsBuilder, HOLE};
use super::nodeset::{active_sorted, zones_of};
use std::collections::BTreeMap;

use super::{
    config, envoy_maglev, envoy_ring_hash, haproxy, hash, jump, ketama, maglev, nginx, twemproxy,
    vnode,
};
use super::{Algorithm, Layout, Node, NodeId, Placement, PlacementError, RingConfig};

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
            Algorithm::Table => return Self::table_from(config, active, None),
            Algorithm::Nginx => Layout::Nginx(nginx::build(&active)),
            Algorithm::Twemproxy => Layout::Twemproxy(twemproxy::build(&active)?),
            Algorithm::EnvoyMaglev => {
                Layout::Maglev(envoy_maglev::build(&active, config.table_size)?)
            }
            Algorithm::EnvoyRingHash => Layout::EnvoyRingHash(envoy_ring_hash::build(
                &active,
                config.minimum_ring_size,
                config.maximum_ring_size,
            )),
            Algorithm::Haproxy => {
                return Self::build_with_server_ids(config, nodes, &haproxy::initial_ids(nodes))
            }
        };
        Ok(Self::assemble(config, active, layout))
    }

    /// Builds a `haproxy` placement on stored server ids (node id → server
    /// id; nodes that are not active may be in it, and are ignored). Other
    /// algorithms ignore `ids`. [`Placement::build`] numbers every node
    /// from 1 in id order instead (spec 5.8).
    pub fn build_with_server_ids(
        config: &RingConfig,
        nodes: &[Node],
        ids: &BTreeMap<NodeId, u32>,
    ) -> Result<Self, PlacementError> {
        if config.algorithm != Algorithm::Haproxy {
            return Self::build(config, nodes);
        }
        let active = active_sorted(config, nodes)?;
        let ids = haproxy::ids_of(&active, ids)?;
        let layout = Layout::Haproxy(haproxy::build(&active, ids));
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
    /// this one so unchanged nodes keep their buckets; `table` computes the
    /// next table from this one, moving only what the new quotas force.
    pub fn rebuild(&self, config: &RingConfig, nodes: &[Node]) -> Result<Self, PlacementError> {
        match (&self.layout, config.algorithm) {
            (Layout::Ring(old), Algorithm::Ring) if *config == self.config => {
                let active = active_sorted(config, nodes)?;
                let layout = Layout::Ring(self.merged_ring(old, &active));
                Ok(Self::assemble(config, active, layout))
            }
            (Layout::Table(_), Algorithm::Table) => {
                Self::table_from(config, active_sorted(config, nodes)?, Some(self))
            }
            (Layout::Jump(old), Algorithm::Jump) => {
                let active = active_sorted(config, nodes)?;
                let runs = Self::checked_len(jump::next_runs(old, &self.nodes, &active))?;
                Ok(Self::assemble(config, active, Layout::Jump(runs)))
            }
            (Layout::Haproxy(old), Algorithm::Haproxy) => {
                Self::build_with_server_ids(config, nodes, &self.next_server_ids(old, nodes))
            }
            _ => Self::build(config, nodes),
        }
    }

    /// The ids a `haproxy` placement passes on: an active node keeps its
    /// id, a new one takes the next above the largest. A ring keeps ids
    /// for life, draining nodes included (`ring::ServerIds`), and proposes
    /// versions with those; this is for placements alone.
    fn next_server_ids(&self, old: &haproxy::Circle, nodes: &[Node]) -> BTreeMap<NodeId, u32> {
        let mut ids: BTreeMap<NodeId, u32> = self
            .nodes
            .iter()
            .map(|n| n.id.clone())
            .zip(old.server_ids.iter().copied())
            .collect();
        let next = ids.values().max().map_or(1, |m| m + 1);
        let mut new: Vec<NodeId> = nodes
            .iter()
            .map(|n| n.id.clone())
            .filter(|id| !ids.contains_key(id))
            .collect();
        new.sort();
        ids.extend(new.into_iter().zip(next..));
        ids
    }

    fn merged_ring(&self, old: &Continuum, active: &[Node]) -> Continuum {
        let mut remap = vec![None; self.nodes.len()];
        let mut added = Vec::new();
        for (i, node) in active.iter().enumerate() {
            match self.index_of(&node.id) {
                Some(j)
                    if self.nodes[j].label() == node.label()
                        && self.nodes[j].weight == node.weight
                        && self.nodes[j].ramp == node.ramp =>
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
        // In parts of 65,536, so that a ramped node compares with the rest
        // in integers; scaling every weight alike leaves the order as it is.
        let weights: Vec<u64> = active.iter().map(Node::scaled_weight).collect();
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
    fn checked_len(runs: BucketRuns) -> Result<BucketRuns, PlacementError> {
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
    ) -> Result<BucketRuns, PlacementError> {
        let mut counts = vec![0u64; active.len()];
        let mut runs = RunsBuilder::default();
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
                runs.push(HOLE, count.into());
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

    pub(super) fn assemble(config: &RingConfig, nodes: Vec<Node>, layout: Layout) -> Self {
        Self {
            config: config.clone(),
            zones: zones_of(config, &nodes),
            nodes,
            layout,
            fingerprint: OnceLock::new(),
        }
    }
}
