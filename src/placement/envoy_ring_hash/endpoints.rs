//! What an `envoy_ring_hash` node is to Envoy and gRPC: an xDS endpoint
//! with an IP address, a hash key and a 32-bit weight, and what such a
//! ring refuses because no xDS client could be given it.

use std::net::SocketAddr;

use crate::placement::error::{excerpt, PlacementError};
use crate::placement::node::first_shared;
use crate::placement::{Algorithm, Node};

/// The sum of the weights ringd gives an `envoy_ring_hash` ring's
/// endpoints. gRPC (gRFC A113, on by default since 1.75) turns each EDS
/// weight into a 31-bit fixed-point fraction of its locality's sum before
/// its ring hash normalizes them again; Envoy divides the EDS weights by
/// their sum in binary64. The two agree exactly only when the sum is a
/// power of two at most 2^31 in one locality: the fixed-point fraction
/// is then the weight itself, and both divisions are exact.
pub const WEIGHT_TOTAL: u64 = 1 << 31;

/// The string Envoy and gRPC hash for an endpoint: the node's label
/// (`hash_key`, else id), which ringd's xDS server sends as the EDS
/// metadata `envoy.lb` / `hash_key` that both hash instead of the
/// address (gRFC A76). So a node keeps its keys when its address changes,
/// and a replacement given the old node's label takes them over.
pub fn endpoint_key(node: &Node) -> &str {
    node.label()
}

/// An address an xDS endpoint can have: an IP address and a port from 1
/// to 65535, written as Envoy writes it back (`10.0.0.1:80`,
/// `[2001:db8::1]:80`: IPv6 in RFC 5952 form, no leading zeros), since
/// Envoy hashes its own spelling and gRPC the one it was sent. Else why
/// not.
pub fn check_address(address: &str) -> Result<SocketAddr, &'static str> {
    let parsed: SocketAddr = address.parse().map_err(|_| {
        "an xDS endpoint needs an IP address and a port, as `10.0.0.1:8080` or `[2001:db8::1]:8080` (EDS does not resolve host names)"
    })?;
    if parsed.port() == 0 {
        return Err("the port must be from 1 to 65535");
    }
    if let SocketAddr::V6(v6) = parsed {
        if v6.scope_id() != 0 || v6.flowinfo() != 0 {
            return Err("an xDS endpoint's address takes no IPv6 zone");
        }
    }
    if parsed.to_string() != address {
        return Err("write the address as Envoy writes it back: IPv4 without leading zeros, IPv6 in brackets in its shortest lowercase form (RFC 5952)");
    }
    Ok(parsed)
}

/// The weights ringd's xDS server gives the endpoints of `nodes`
/// (active), in their order: [`WEIGHT_TOTAL`] shared out in proportion to
/// `weight × ramp` by largest remainders (spec 5.10.1), so that they add
/// up to exactly 2^31. A node whose share rounds to 0 cannot be an
/// endpoint (EDS weights start at 1): refused.
pub fn endpoint_weights(nodes: &[Node]) -> Result<Vec<u32>, PlacementError> {
    let scaled: Vec<u128> = nodes
        .iter()
        .map(|n| u128::from(n.scaled_weight()))
        .collect();
    let total: u128 = scaled.iter().sum();
    if total == 0 {
        return Ok(Vec::new());
    }
    let unit = u128::from(WEIGHT_TOTAL);
    let mut weights: Vec<u64> = scaled.iter().map(|&w| (w * unit / total) as u64).collect();
    let given: u64 = weights.iter().sum();
    // Fewer than one unit per node is left: one more each to the largest
    // remainders, equal remainders in hash-key order.
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (scaled[a] * unit % total, scaled[b] * unit % total);
        rb.cmp(&ra)
            .then_with(|| endpoint_key(&nodes[a]).cmp(endpoint_key(&nodes[b])))
    });
    for &i in order.iter().take((WEIGHT_TOTAL - given) as usize) {
        weights[i] += 1;
    }
    if let Some(i) = weights.iter().position(|&w| w == 0) {
        return Err(PlacementError::WeightShareTooSmall {
            node: nodes[i].id.to_string(),
            weight: nodes[i].scaled_weight(),
            total: total as u64,
        });
    }
    Ok(weights.into_iter().map(|w| w as u32).collect())
}

/// Checks a node set for a ring of an xDS mode (`algorithm`:
/// `envoy_ring_hash` or `envoy_maglev`): every address (of every node,
/// so that a node is refused when written, not when it is activated),
/// then among the active nodes distinct hash keys, distinct addresses and
/// weights that give each a share of 2^31.
pub(crate) fn check_nodes(
    algorithm: Algorithm,
    all: &[&Node],
    active: &[Node],
) -> Result<(), PlacementError> {
    for n in all {
        if let Some(a) = &n.address {
            check_address(a.as_str()).map_err(|reason| PlacementError::AddressNotServer {
                node: n.id.to_string(),
                address: excerpt(a.as_str()),
                reason,
                algorithm: algorithm.name(),
            })?;
        }
    }
    let keyed = active.iter().map(|n| (endpoint_key(n), n)).collect();
    if let Some((key, a, b)) = first_shared(keyed) {
        return Err(PlacementError::EndpointKeyTaken {
            key: excerpt(key),
            first: a.id.to_string(),
            second: b.id.to_string(),
            // Ids are unique, so one of the two has a hash_key.
            field: "hash_key",
        });
    }
    // gRPC keys its endpoints by address: two with one address would be
    // one endpoint there, whatever their hash keys.
    let addressed = active
        .iter()
        .filter_map(|n| n.address.as_ref().map(|a| (a.as_str(), n)))
        .collect();
    if let Some((address, first, second)) = first_shared(addressed) {
        return Err(PlacementError::DuplicateAddress {
            algorithm: algorithm.name(),
            address: excerpt(address),
            first: first.id.to_string(),
            second: second.id.to_string(),
        });
    }
    endpoint_weights(active)?;
    Ok(())
}
