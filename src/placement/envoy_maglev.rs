//! `envoy_maglev`: the table Envoy's `MAGLEV` load balancer builds from the
//! endpoints ringd's xDS server sends (spec 5.11).
//!
//! Envoy fills its table as `maglev` does (sorted by hash key, permutations
//! from XXH64 with seeds 0 and 1, a turn in round `i` only while
//! `i × weight ≥ target`), but in binary64 on weights normalized by their
//! sum, and so skips turns at exact ties that the integer test takes.
//! Here the weights are the EDS weights, which add up to 2^31: each
//! normalized weight is then `w / 2^31` exactly, every product and every
//! summed target is exact in binary64 (all below 2^53), and Envoy's
//! comparisons are the integer ones on those weights. So this table is
//! Envoy's, slot for slot, whatever the weights; the unit tests check it
//! against a literal port of Envoy's double arithmetic and Envoy's own
//! test tables.

use super::envoy_ring_hash::endpoint_weights;
use super::maglev;
use super::node::Node;
use super::PlacementError;

/// The table of `table_size` slots (prime, at least `nodes.len()`) for
/// `nodes` (active, sorted by id), as node indices.
pub(crate) fn build(nodes: &[Node], table_size: u64) -> Result<Vec<u32>, PlacementError> {
    let weights: Vec<u64> = endpoint_weights(nodes)?
        .into_iter()
        .map(u64::from)
        .collect();
    Ok(maglev::fill(nodes, &weights, table_size))
}

#[cfg(test)]
mod tests;
