//! Immutable, numbered ring snapshots and how one leads to the next.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use super::bucket_order::BucketOrder;
use super::change::{ChangeOp, ChangeRecord, RequestedOp, Role};
use super::membership_policy::MembershipPolicy;
use super::record::NodeRecord;
use super::server_ids::ServerIds;
use super::table_bytes::TableBytes;
use super::{RingError, RingName};
use crate::placement::{
    Algorithm, Fingerprint, Node, NodeId, Placement, PlacementDiff, PlacementError, RingConfig,
};

/// One version of a ring: complete and self-describing. Clients that hold
/// the same snapshot place every key identically.
///
/// Not serialized as it is: each store writes its own record of it
/// (`store/sqlite/record.rs`, `store/etcd/layout.rs`), and the HTTP API
/// sends a `wire::SnapshotView`, which is also what a client reads back.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The ring.
    pub ring: RingName,
    /// Starts at 1 when the ring is created; +1 per accepted change.
    pub version: u64,
    /// When the version was committed.
    pub created_at: OffsetDateTime,
    /// Algorithm, hash and parameters.
    pub config: RingConfig,
    /// What ringd does on its own about leased nodes. Not placement: it
    /// never enters the fingerprint.
    pub membership: MembershipPolicy,
    /// Every node, active or draining, sorted by id.
    pub nodes: Vec<NodeRecord>,
    /// SHA-256 of the placement's canonical encoding.
    pub fingerprint: Fingerprint,
    /// For `jump`, the persisted bucket order as runs.
    pub bucket_runs: Option<BucketOrder>,
    /// For `haproxy`, every node's server id, kept for life.
    pub server_ids: Option<ServerIds>,
    /// For `table`, the partition table body (as in the canonical
    /// encoding). Kept by the store; the wire view leaves it out, and a
    /// client downloads it from `…/snapshots/{v}/table` instead.
    pub table: Option<TableBytes>,
    /// For `table`, the slots that changed since the previous version, as
    /// [`Placement::table_moves_since`] writes them; absent when the
    /// partitions changed or the moves would be larger than the table (a
    /// client then downloads the table).
    pub table_moves: Option<TableBytes>,
    /// What produced this version.
    pub change: ChangeRecord,
}

/// A layout a change must produce, given rather than computed (see
/// [`Snapshot::propose_exact`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ExactLayout {
    /// A `table` ring's partition table body.
    Table(TableBytes),
    /// A `jump` ring's bucket order.
    Buckets(BucketOrder),
    /// A `haproxy` ring's server ids (a rollout going back to a version).
    ServerIds(ServerIds),
}

impl ExactLayout {
    /// The layout `snapshot` has that its nodes and config alone do not
    /// give: its table, bucket order or server ids, if it has one.
    pub fn of(snapshot: &Snapshot) -> Option<Self> {
        match (&snapshot.table, &snapshot.bucket_runs, &snapshot.server_ids) {
            (Some(t), _, _) => Some(Self::Table(t.clone())),
            (None, Some(b), _) => Some(Self::Buckets(b.clone())),
            (None, None, Some(s)) => Some(Self::ServerIds(s.clone())),
            (None, None, None) => None,
        }
    }
}

/// The moves worth keeping and sending: those shorter than the table.
fn worth_sending(moves: Option<Vec<u8>>, table: Option<&TableBytes>) -> Option<TableBytes> {
    let (moves, table) = (moves?, table?);
    (moves.len() < table.as_bytes().len()).then(|| moves.into())
}

/// A change applied to a snapshot, not yet committed.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// The would-be next snapshot.
    pub snapshot: Snapshot,
    /// Its placement.
    pub placement: Placement,
    /// Movement against the current version.
    pub diff: PlacementDiff,
}

fn placement_nodes(nodes: &[NodeRecord]) -> Vec<Node> {
    nodes.iter().map(NodeRecord::to_node).collect()
}

impl Snapshot {
    /// Version 1 of a new ring: the config, the default policy and no
    /// nodes.
    pub fn first(
        ring: RingName,
        config: RingConfig,
        role: Role,
        now: OffsetDateTime,
    ) -> Result<(Self, Placement), RingError> {
        Self::first_with(ring, config, MembershipPolicy::default(), role, now)
    }

    /// Version 1 of a new ring: the config, the policy and no nodes.
    pub fn first_with(
        ring: RingName,
        config: RingConfig,
        membership: MembershipPolicy,
        role: Role,
        now: OffsetDateTime,
    ) -> Result<(Self, Placement), RingError> {
        let placement = Placement::build(&config, &[])?;
        let snapshot = Snapshot {
            ring,
            version: 1,
            created_at: now,
            fingerprint: placement.fingerprint(),
            bucket_runs: BucketOrder::of(&placement),
            server_ids: (config.algorithm == Algorithm::Haproxy).then(|| ServerIds::initial(&[])),
            table: placement.table_body().map(Into::into),
            table_moves: None,
            change: ChangeRecord {
                ops: vec![ChangeOp::SetConfig {
                    config: config.clone(),
                    // A default policy is not recorded, so a ring created
                    // without one has the version 1 it always had.
                    membership: (membership != MembershipPolicy::default()).then_some(membership),
                }],
                reason: Some("ring created".into()),
                role,
                moved_fraction: 0.0,
                idempotency_key: None,
            },
            config,
            membership,
            nodes: Vec::new(),
        };
        Ok((snapshot, placement))
    }

    /// Rebuilds this snapshot's placement. A `table` snapshot needs its
    /// table (see [`Snapshot::placement_with_table`] for one read from the
    /// wire, which leaves it out).
    pub fn placement(&self) -> Result<Placement, RingError> {
        let nodes = placement_nodes(&self.nodes);
        if self.config.algorithm == Algorithm::Table {
            let table = self.table.as_ref().ok_or_else(|| {
                PlacementError::InvalidTable("the snapshot carries no table".into())
            })?;
            return Ok(Placement::build_with_table(
                &self.config,
                &nodes,
                table.as_bytes(),
            )?);
        }
        if self.config.algorithm == Algorithm::Haproxy {
            let ids = self.server_ids.as_ref().ok_or_else(|| {
                PlacementError::InvalidServerIds("the snapshot carries no server ids".into())
            })?;
            ids.check(&self.nodes)?;
            return Ok(Placement::build_with_server_ids(
                &self.config,
                &nodes,
                &ids.ids,
            )?);
        }
        Ok(match &self.bucket_runs {
            Some(b) => Placement::build_with_runs(&self.config, &nodes, b.placement_runs())?,
            None => Placement::build(&self.config, &nodes)?,
        })
    }

    /// This `table` snapshot's placement from a table body (the body of
    /// the canonical encoding) obtained elsewhere.
    pub fn placement_with_table(&self, body: &[u8]) -> Result<Placement, RingError> {
        let nodes = placement_nodes(&self.nodes);
        Ok(Placement::build_with_table(&self.config, &nodes, body)?)
    }

    /// This `table` snapshot's placement from the previous version's
    /// placement and this version's moves.
    pub fn placement_from_moves(&self, previous: &Placement) -> Result<Placement, RingError> {
        let moves = self
            .table_moves
            .as_ref()
            .ok_or_else(|| PlacementError::InvalidTable("the snapshot carries no moves".into()))?;
        let nodes = placement_nodes(&self.nodes);
        Ok(previous.with_table_moves(&self.config, &nodes, moves.as_bytes())?)
    }

    /// Applies `ops` in order on top of this snapshot, whose placement is
    /// `current`. Returns `None` when the result equals this snapshot (a
    /// no-op creates no version).
    pub fn propose<O: Into<RequestedOp>>(
        &self,
        current: &Placement,
        ops: Vec<O>,
        reason: Option<String>,
        role: Role,
        now: OffsetDateTime,
    ) -> Result<Option<Proposal>, RingError> {
        if ops.is_empty() {
            return Err(RingError::EmptyChange);
        }
        self.propose_exact(current, ops, None, reason, role, now)
    }

    /// [`Snapshot::propose`] with the layout given instead of computed: a
    /// `table` body or a `jump` bucket order that the result must have
    /// (a rollout's step between two computed tables, or the return to an
    /// earlier version's), checked against the resulting nodes. With a
    /// layout, `ops` may be empty: the layout alone is then the change.
    pub fn propose_exact<O: Into<RequestedOp>>(
        &self,
        current: &Placement,
        ops: Vec<O>,
        layout: Option<&ExactLayout>,
        reason: Option<String>,
        role: Role,
        now: OffsetDateTime,
    ) -> Result<Option<Proposal>, RingError> {
        if ops.len() > super::change::MAX_OPS {
            return Err(RingError::TooManyOps(ops.len()));
        }
        let mut config = self.config.clone();
        let mut membership = self.membership;
        let mut nodes: BTreeMap<NodeId, NodeRecord> = self
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.clone()))
            .collect();
        let mut recorded = Vec::with_capacity(ops.len());
        for (index, op) in ops.into_iter().map(Into::into).enumerate() {
            let op = match op {
                RequestedOp::Op(op) => op,
                RequestedOp::UpdateConfig(patch, policy) => {
                    let merged = patch.apply_to(&config).map_err(|e| RingError::InOp {
                        index,
                        operand: "config",
                        error: Box::new(e.into()),
                    })?;
                    // The version records what the ring's config became.
                    ChangeOp::SetConfig {
                        config: merged,
                        membership: policy.map(|p| p.apply_to(&membership)),
                    }
                }
            };
            match &op {
                ChangeOp::Upsert { node } => {
                    nodes.insert(node.id.clone(), node.clone());
                }
                ChangeOp::Remove { id } => {
                    nodes
                        .remove(id)
                        .ok_or_else(|| RingError::UnknownNode(id.clone()))?;
                }
                ChangeOp::SetConfig {
                    config: c,
                    membership: m,
                } => {
                    config = c.clone();
                    if let Some(m) = m {
                        membership = *m;
                    }
                }
            }
            recorded.push(op);
        }
        let ops = recorded;
        let nodes: Vec<NodeRecord> = nodes.into_values().collect();
        let same_layout = match layout {
            None => true,
            Some(ExactLayout::Table(t)) => self.table.as_ref() == Some(t),
            Some(ExactLayout::Buckets(b)) => self.bucket_runs.as_ref() == Some(b),
            Some(ExactLayout::ServerIds(s)) => self.server_ids.as_ref() == Some(s),
        };
        if config == self.config
            && membership == self.membership
            && nodes == self.nodes
            && same_layout
        {
            return Ok(None);
        }
        // A `haproxy` ring's ids evolve with its nodes; a ring that
        // becomes `haproxy` numbers its nodes afresh (spec 5.8.3).
        let server_ids = match (config.algorithm, &self.server_ids, layout) {
            (Algorithm::Haproxy, Some(ids), Some(ExactLayout::ServerIds(target))) => {
                Some(ids.restored(target))
            }
            (Algorithm::Haproxy, Some(ids), _) if self.config.algorithm == Algorithm::Haproxy => {
                Some(ids.evolve(&self.nodes, &nodes)?)
            }
            (Algorithm::Haproxy, _, _) => Some(ServerIds::initial(&nodes)),
            _ => None,
        };
        let placement = match (layout, &server_ids) {
            (_, Some(ids)) => {
                ids.check(&nodes)?;
                Placement::build_with_server_ids(&config, &placement_nodes(&nodes), &ids.ids)?
            }
            (None, None) => current.rebuild(&config, &placement_nodes(&nodes))?,
            (Some(ExactLayout::Table(t)), None) => {
                Placement::build_with_table(&config, &placement_nodes(&nodes), t.as_bytes())?
            }
            (Some(ExactLayout::Buckets(b)), None) => {
                Placement::build_with_runs(&config, &placement_nodes(&nodes), b.placement_runs())?
            }
            // Ids given for a ring that is not `haproxy` (it changed
            // algorithm since): the config decides.
            (Some(ExactLayout::ServerIds(_)), None) => {
                current.rebuild(&config, &placement_nodes(&nodes))?
            }
        };
        let diff = current.diff(&placement);
        let table: Option<TableBytes> = placement.table_body().map(Into::into);
        let snapshot = Snapshot {
            ring: self.ring.clone(),
            version: self.version + 1,
            created_at: now,
            config,
            membership,
            nodes,
            fingerprint: placement.fingerprint(),
            bucket_runs: BucketOrder::of(&placement),
            server_ids,
            table_moves: worth_sending(placement.table_moves_since(current), table.as_ref()),
            table,
            change: ChangeRecord {
                ops,
                reason,
                role,
                moved_fraction: diff.moved_fraction,
                idempotency_key: None,
            },
        };
        Ok(Some(Proposal {
            snapshot,
            placement,
            diff,
        }))
    }
}
