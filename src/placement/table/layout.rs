//! `table` placements: computing the partition table from the previous
//! one, restoring a stored one, and the two binary forms a table travels
//! in: its body in the canonical encoding, and a version's moves.
//!
//! Both forms are little-endian and number nodes by their index in the
//! placement's nodes (id order), in 16 bits when there are at most 65,535
//! nodes and in 32 bits otherwise (`docs/placement-spec.md`, "table").

use super::{PartitionTable, TableError};
use crate::placement::nodeset::{active_sorted, zones_of};
use crate::placement::{Layout, Node, NodeId, Placement, PlacementError, RingConfig};

/// Most nodes whose indices fit the 16-bit form.
const NARROW_NODES: usize = u16::MAX as usize;

/// Bytes of one node index for `nodes` nodes.
pub(crate) fn index_width(nodes: usize) -> usize {
    if nodes <= NARROW_NODES {
        2
    } else {
        4
    }
}

fn push_index(out: &mut Vec<u8>, index: u32, width: usize) {
    if width == 2 {
        out.extend_from_slice(&(index as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&index.to_le_bytes());
    }
}

/// Reads little-endian integers off the front of a byte string.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], PlacementError> {
        if self.0.len() < n {
            return Err(PlacementError::InvalidTable("it ends early".into()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, PlacementError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, PlacementError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn index(&mut self, width: usize) -> Result<u32, PlacementError> {
        let b = self.take(width)?;
        Ok(if width == 2 {
            u32::from(u16::from_le_bytes([b[0], b[1]]))
        } else {
            u32::from_le_bytes(b.try_into().expect("4 bytes"))
        })
    }
}

impl Placement {
    /// For `table`, the partition table (node indices into
    /// [`Placement::nodes`], primary first).
    pub fn partition_table(&self) -> Option<&PartitionTable> {
        match &self.layout {
            Layout::Table(t) => Some(t),
            _ => None,
        }
    }

    /// A `table` placement computed from `previous` (a `table`
    /// placement), or from nothing.
    pub(crate) fn table_from(
        config: &RingConfig,
        active: Vec<Node>,
        previous: Option<&Placement>,
    ) -> Result<Self, PlacementError> {
        let zones = zones_of(config, &active);
        let prior = previous.and_then(|p| p.partition_table().map(|t| (t, &p.nodes[..])));
        let table = PartitionTable::compute(
            config.partitions,
            config.replication_factor as usize,
            &active,
            zones.as_ref().map(|z| (&z.of_node[..], z.count)),
            prior,
        )
        .map_err(|e| table_error(e, &active, config, zones.as_ref().map(|z| z.count)))?;
        Ok(Self::assemble(config, active, Layout::Table(table)))
    }

    /// The table body of the canonical encoding: `u32 partitions`, `u8`
    /// replicas per partition, then every partition's row of node indices.
    pub fn table_body(&self) -> Option<Vec<u8>> {
        let t = self.partition_table()?;
        let width = index_width(self.nodes.len());
        let mut out = Vec::with_capacity(5 + t.cells().len() * width);
        out.extend_from_slice(&t.partitions().to_le_bytes());
        out.push(t.replicas() as u8);
        for &c in t.cells() {
            push_index(&mut out, c, width);
        }
        Some(out)
    }

    /// The table body (as [`Placement::table_body`] writes it) of a table
    /// whose rows, primary first, name nodes by id: for a table that is
    /// not computed but chosen, such as a rollout's step between two
    /// computed tables. Every id must be an active node of `nodes`.
    pub fn table_body_of_rows<'a>(
        config: &RingConfig,
        nodes: &[Node],
        replicas: usize,
        rows: impl ExactSizeIterator<Item = &'a [NodeId]>,
    ) -> Result<Vec<u8>, PlacementError> {
        let active = active_sorted(config, nodes)?;
        let width = index_width(active.len());
        let partitions = rows.len();
        let mut out = Vec::with_capacity(5 + partitions * replicas * width);
        out.extend_from_slice(&(partitions as u32).to_le_bytes());
        out.push(replicas as u8);
        for row in rows {
            if row.len() != replicas {
                return Err(PlacementError::InvalidTable(format!(
                    "a row holds {} replicas, not {replicas}",
                    row.len()
                )));
            }
            for id in row {
                let i = active.binary_search_by(|n| n.id.cmp(id)).map_err(|_| {
                    PlacementError::InvalidTable(format!("`{id}` is not an active node"))
                })?;
                push_index(&mut out, i as u32, width);
            }
        }
        Ok(out)
    }

    /// Restores a `table` placement from a stored table body (as written by
    /// [`Placement::table_body`]) over `nodes`. Other algorithms are built
    /// as [`Placement::build`] builds them.
    pub fn build_with_table(
        config: &RingConfig,
        nodes: &[Node],
        body: &[u8],
    ) -> Result<Self, PlacementError> {
        if config.algorithm != crate::placement::Algorithm::Table {
            return Self::build(config, nodes);
        }
        let active = active_sorted(config, nodes)?;
        let mut r = Reader(body);
        let partitions = r.u32()?;
        let replicas = usize::from(r.u8()?);
        if partitions != config.partitions {
            return Err(PlacementError::InvalidTable(format!(
                "it has {partitions} partitions, the config {}",
                config.partitions
            )));
        }
        let expected = (config.replication_factor as usize).min(active.len());
        if replicas != expected {
            return Err(PlacementError::InvalidTable(format!(
                "it has {replicas} replicas per partition, not {expected}"
            )));
        }
        let width = index_width(active.len());
        let count = partitions as usize * replicas;
        if r.0.len() != count * width {
            return Err(PlacementError::InvalidTable(format!(
                "its body is {} bytes, not {}",
                r.0.len(),
                count * width
            )));
        }
        let cells = (0..count)
            .map(|_| r.index(width))
            .collect::<Result<Vec<u32>, _>>()?;
        let table = PartitionTable::from_cells(partitions, replicas, cells, active.len())
            .ok_or_else(|| {
                PlacementError::InvalidTable(
                    "a row names a node twice or a node that is not active".into(),
                )
            })?;
        Ok(Self::assemble(config, active, Layout::Table(table)))
    }

    /// Restores a `table` placement from its whole canonical encoding (as
    /// `…/snapshots/{v}/table` serves it) over `nodes`: the body after the
    /// header that `config` and `nodes` give. Whether the header matches
    /// is for the fingerprint to tell: compare it with the one stated.
    pub fn build_from_encoding(
        config: &RingConfig,
        nodes: &[Node],
        encoding: &[u8],
    ) -> Result<Self, PlacementError> {
        let active = active_sorted(config, nodes)?;
        // Magic, four code bytes, replicas and node count: 20 bytes.
        let header = 20
            + active
                .iter()
                .map(|n| {
                    let zone = match (&n.zone, config.zone_aware) {
                        (Some(z), true) => z.as_str().len(),
                        _ => 0,
                    };
                    6 + n.id.as_str().len() + zone
                })
                .sum::<usize>();
        let body = encoding
            .get(header..)
            .ok_or_else(|| PlacementError::InvalidTable("the encoding ends early".into()))?;
        Self::build_with_table(config, nodes, body)
    }

    /// The moves from `before` to this placement, both `table` with the
    /// same partitions: `u32` count, then per changed slot `u32
    /// partition`, `u8` slot and the node index (in this placement) now
    /// holding it. `None` when they cannot be compared.
    pub fn table_moves_since(&self, before: &Placement) -> Option<Vec<u8>> {
        let (a, b) = (before.partition_table()?, self.partition_table()?);
        if a.partitions() != b.partitions() {
            return None;
        }
        let moves = PartitionTable::moves(a, &before.nodes, b, &self.nodes);
        let width = index_width(self.nodes.len());
        let mut out = Vec::with_capacity(4 + moves.len() * (5 + width));
        out.extend_from_slice(&(moves.len() as u32).to_le_bytes());
        for m in &moves {
            out.extend_from_slice(&m.partition.to_le_bytes());
            out.push(m.slot);
            let to = self.index_of(&m.to).expect("a move's node is active") as u32;
            push_index(&mut out, to, width);
        }
        Some(out)
    }

    /// The `table` placement of `config` and `nodes` whose table is this
    /// one's with `moves` (as [`Placement::table_moves_since`] writes
    /// them) applied.
    pub fn with_table_moves(
        &self,
        config: &RingConfig,
        nodes: &[Node],
        moves: &[u8],
    ) -> Result<Self, PlacementError> {
        let before = self
            .partition_table()
            .ok_or_else(|| PlacementError::InvalidTable("the base is not a table".into()))?;
        let active = active_sorted(config, nodes)?;
        if config.partitions != before.partitions() {
            return Err(PlacementError::InvalidTable(
                "moves cannot change the partition count".into(),
            ));
        }
        let width = index_width(active.len());
        let mut r = Reader(moves);
        let count = r.u32()? as usize;
        if r.0.len() != count * (5 + width) {
            return Err(PlacementError::InvalidTable(
                "the moves' length does not match their count".into(),
            ));
        }
        let mut list = Vec::with_capacity(count);
        for _ in 0..count {
            let partition = r.u32()?;
            let slot = r.u8()?;
            let to = r.index(width)? as usize;
            let to = active
                .get(to)
                .ok_or_else(|| PlacementError::InvalidTable("a move names no node".into()))?;
            let from = (partition < before.partitions() && usize::from(slot) < before.replicas())
                .then(|| before.row(partition as usize)[usize::from(slot)])
                .map(|x| self.nodes[x as usize].id.clone());
            list.push(super::Move {
                partition,
                slot,
                from,
                to: to.id.clone(),
            });
        }
        let replicas = (config.replication_factor as usize).min(active.len());
        let table = PartitionTable::apply_moves(before, &self.nodes, &list, replicas, &active)
            .map_err(|e| PlacementError::InvalidTable(e.to_string()))?;
        Ok(Self::assemble(config, active, Layout::Table(table)))
    }
}

fn table_error(
    e: TableError,
    active: &[Node],
    config: &RingConfig,
    zones: Option<usize>,
) -> PlacementError {
    match e {
        TableError::ZoneTooLight {
            zone,
            weight,
            total_weight,
        } => {
            let mut names: Vec<_> = active.iter().filter_map(|n| n.zone.as_ref()).collect();
            names.sort();
            names.dedup();
            PlacementError::ZoneTooLight {
                zone: names
                    .get(zone)
                    .map_or_else(String::new, |z| z.as_str().to_owned()),
                weight,
                total_weight,
                replicas: (config.replication_factor as usize).min(active.len()),
                zones: zones.unwrap_or(1),
            }
        }
        TableError::Unassignable { partition } => PlacementError::InvalidTable(format!(
            "no assignment was found for partition {partition}"
        )),
    }
}
