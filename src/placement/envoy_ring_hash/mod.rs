//! `envoy_ring_hash`: the ring of Envoy's `RING_HASH` load balancer and of
//! gRPC's `ring_hash` (gRFC A42), entry for entry
//! (`docs/placement-spec.md` 5.10).
//!
//! Both build one ring from the endpoints of a cluster: each endpoint's
//! normalized weight is scaled so that the lightest gets a whole number of
//! entries (at least `minimum_ring_size` in all, at most
//! `maximum_ring_size`), running sums hand out the fractional rest, entry
//! `i` of an endpoint sits at `XXH64("<hash key>_<i>")`, and a request's
//! hash (XXH64 of its hash header) goes to the first entry at or after
//! it. The order endpoints are taken in moves the fractional entries:
//! gRPC sorts them by hash key, Envoy keeps the order of the EDS
//! response, so ringd's xDS server sends them sorted by hash key and both
//! build this ring.

mod endpoints;

pub(crate) use endpoints::check_nodes;
pub use endpoints::{check_address, endpoint_key, endpoint_weights, WEIGHT_TOTAL};

use super::continuum::{Continuum, Point};
use super::Node;
use xxhash_rust::xxh64::xxh64;

/// How many entries each endpoint gets, endpoints in the order the proxy
/// takes them (Envoy: the EDS order; gRPC: sorted by hash key) with their
/// EDS weights: Envoy's `RingHashLoadBalancer::Ring` and grpc-go's
/// `newRing`, step for step.
pub fn entry_counts(weights: &[u32], minimum: u64, maximum: u64) -> Vec<u64> {
    let sum: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    // Every step in binary64, in Envoy's order of operations (and gRPC's):
    // `weight / sum`, the scale, then `target += scale × w` with the
    // product rounded on its own (no fused multiply-add).
    let normalized: Vec<f64> = weights.iter().map(|&w| f64::from(w) / sum as f64).collect();
    let lightest = normalized.iter().copied().fold(1.0_f64, f64::min);
    let scale = ((lightest * minimum as f64).ceil() / lightest).min(maximum as f64);
    let (mut current, mut target) = (0.0_f64, 0.0_f64);
    normalized
        .iter()
        .map(|&w| {
            target += scale * w;
            let mut count = 0;
            while current < target {
                count += 1;
                current += 1.0;
            }
            count
        })
        .collect()
}

/// The ring of endpoints `(hash key, EDS weight)` in the order the proxy
/// takes them: entries `(XXH64("<key>_<i>"), endpoint index)` sorted by
/// hash, equal hashes in the order generated (spec 5.10.2).
pub fn ring_entries(endpoints: &[(&str, u32)], minimum: u64, maximum: u64) -> Vec<(u64, u32)> {
    if endpoints.is_empty() {
        return Vec::new();
    }
    let weights: Vec<u32> = endpoints.iter().map(|e| e.1).collect();
    let counts = entry_counts(&weights, minimum, maximum);
    let mut entries = Vec::with_capacity(counts.iter().sum::<u64>() as usize);
    let mut label = Vec::new();
    for (e, (&(key, _), &count)) in endpoints.iter().zip(&counts).enumerate() {
        for i in 0..count {
            label.clear();
            label.extend_from_slice(key.as_bytes());
            label.push(b'_');
            label.extend_from_slice(i.to_string().as_bytes());
            entries.push((xxh64(&label, 0), e as u32));
        }
    }
    entries.sort_by_key(|p| p.0);
    entries
}

/// Number of entries `nodes` (active, checked) would place.
pub(crate) fn total_entries(nodes: &[Node], minimum: u64, maximum: u64) -> u64 {
    match endpoint_weights(nodes) {
        Ok(w) if !w.is_empty() => entry_counts(&w, minimum, maximum).iter().sum(),
        _ => 0,
    }
}

/// Builds the ring of `nodes` (active, sorted by id, checked by
/// [`check_nodes`]): the endpoints in hash-key order, as ringd's xDS
/// server sends them and gRPC sorts them, with [`endpoint_weights`].
///
/// Entries are sorted by hash alone, stably, so equal hashes (two strings
/// with one 64-bit XXH64, never seen) keep hash-key order. Envoy's
/// `std::sort` and gRPC's `sort.Slice` are not stable and leave such a tie
/// in no defined order (spec 5.10.3).
pub(crate) fn build(nodes: &[Node], minimum: u64, maximum: u64) -> Continuum {
    let weights = endpoint_weights(nodes).expect("checked: every node has a share");
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| endpoint_key(&nodes[a]).cmp(endpoint_key(&nodes[b])));
    let endpoints: Vec<(&str, u32)> = order
        .iter()
        .map(|&i| (endpoint_key(&nodes[i]), weights[i]))
        .collect();
    let points = ring_entries(&endpoints, minimum, maximum)
        .into_iter()
        .map(|(pos, e)| Point {
            pos,
            owner: order[e as usize] as u32,
        })
        .collect();
    Continuum::from_positions(points, 64)
}

#[cfg(test)]
mod tests;
