//! `twemproxy`: nutcracker 0.5.0's `distribution: ketama`, with its key
//! hashes (`docs/placement-spec.md` 3.7 and 5.9).
//!
//! nutcracker differs from libketama (`ketama`) in three ways that move
//! keys: it counts a server's points in single precision
//! (`floorf(pct × 160 / 4 × n)`, each step rounded to float), it hashes
//! servers by name (`host` alone on port 11211, `host:port` otherwise, or
//! the name written after the weight), and it sorts its servers by name
//! before building the ring, so equal points go to the server whose name
//! sorts first.

pub mod hashes;
pub mod names;

use super::continuum::{Continuum, Point};
pub use super::hash_tag::HashTag;
use super::{HashFunction, Node, PlacementError};
use md5::{Digest as _, Md5};
pub use names::{name_order, server_name, split_address, DEFAULT_PORT};

/// Points nutcracker gives a server of weight `weight` among `servers`
/// live servers of total weight `total`: a multiple of four.
pub fn point_count(weight: u64, total: u64, servers: usize) -> u32 {
    // `(float)weight / (float)total`, then `pct * 160 / 4 * (float)n`, each
    // step in single precision.
    let pct = weight as f32 / total as f32;
    let per_hash = pct * 160.0 / 4.0 * servers as f32;
    // nutcracker adds 1e-10 in double precision and narrows back to float
    // before `floorf`; the narrowing returns the same float for every
    // product at or above 2^-20, and below that the floor is 0 either way.
    let nudged = (f64::from(per_hash) + 0.000_000_000_1) as f32;
    nudged.floor() as u32 * 4
}

/// Point counts of `nodes` (the active nodes).
pub(crate) fn point_counts(nodes: &[Node]) -> Vec<u32> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight.get())).sum();
    nodes
        .iter()
        .map(|n| point_count(n.weight.get().into(), total, nodes.len()))
        .collect()
}

/// Total points `nodes` would place.
pub(crate) fn total_points(nodes: &[Node]) -> u64 {
    point_counts(nodes).iter().map(|&c| u64::from(c)).sum()
}

/// The servers' names, index by index, checked: every active node needs
/// one, and nutcracker refuses two servers of one name.
pub(crate) fn names(nodes: &[Node]) -> Result<Vec<String>, PlacementError> {
    let mut names = Vec::with_capacity(nodes.len());
    for n in nodes {
        let name = server_name(n)?.ok_or_else(|| PlacementError::MissingAddress {
            node: n.id.to_string(),
            algorithm: "twemproxy",
        })?;
        names.push(name.into_owned());
    }
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| name_order(&names[a], &names[b]));
    if let Some(w) = order.windows(2).find(|w| names[w[0]] == names[w[1]]) {
        let (a, b) = (&nodes[w[0]], &nodes[w[1]]);
        return Err(PlacementError::ServerNameTaken {
            name: names[w[0]].clone(),
            first: a.id.to_string(),
            second: b.id.to_string(),
            field: if a.hash_key.is_some() || b.hash_key.is_some() {
                "hash_key"
            } else {
                "address"
            },
        });
    }
    Ok(names)
}

/// Builds nutcracker's continuum for `nodes` (active, sorted by id).
///
/// Servers go in name order, each with its points in order (digest `k`
/// of `"<name>-<k>"`, then its four little-endian words); the points are
/// then sorted by position alone, stably, as glibc's `qsort` (a merge
/// sort) leaves equal points. So equal points keep the name order, which
/// is not the id order: `Continuum::from_positions` keeps it.
pub(crate) fn build(nodes: &[Node]) -> Result<Continuum, PlacementError> {
    let names = names(nodes)?;
    let counts = point_counts(nodes);
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| name_order(&names[a], &names[b]));
    let mut points = Vec::with_capacity(counts.iter().map(|&c| c as usize).sum());
    for i in order {
        for k in 0..counts[i] / 4 {
            let d = Md5::digest(format!("{}-{}", names[i], k).as_bytes());
            // Four points per digest, each a little-endian word.
            for g in d.chunks_exact(4) {
                points.push(Point {
                    pos: u64::from(u32::from_le_bytes([g[0], g[1], g[2], g[3]])),
                    owner: i as u32,
                });
            }
        }
    }
    // A stable sort, as glibc's qsort (a merge sort) is.
    points.sort_by_key(|p| p.pos);
    Ok(Continuum::from_positions(points, 32))
}

/// The key's hash: of the part inside the hash tag when there is one
/// (see [`HashTag::hashed_part`]); 0 for the empty key, which nutcracker
/// does not hash.
#[inline]
pub fn key_hash(hash: HashFunction, tag: Option<HashTag>, key: &[u8]) -> u32 {
    let key = match tag {
        Some(t) => t.hashed_part(key),
        None => key,
    };
    if key.is_empty() {
        return 0;
    }
    // A twemproxy ring's hash is one of twemproxy's (RingConfig::validate).
    hashes::hash32(hash, key).unwrap_or_default()
}

#[cfg(test)]
mod tests;
