//! Validating a node set and deriving what placement needs from it.

use super::config::{self, Algorithm, RingConfig};
use super::error::PlacementError;
use super::node::{Node, Zone};
use super::{envoy_ring_hash, haproxy, ketama, nginx, twemproxy, vnode};

/// Zone number of each node (numbered by zone name order) and the number of
/// distinct zones; present only when zone awareness is on.
#[derive(Debug, Clone)]
pub(crate) struct Zones {
    pub of_node: Vec<u32>,
    pub count: usize,
}

/// Whether any active node is ramped below full: such a placement weighs
/// every node in parts of 65,536 (`weight × ramp`) and encodes the ramps.
pub(crate) fn ramped(active: &[Node]) -> bool {
    active.iter().any(|n| !n.ramp.is_full())
}

/// Validates a node set and returns its active nodes sorted by id.
pub(crate) fn active_sorted(
    config: &RingConfig,
    nodes: &[Node],
) -> Result<Vec<Node>, PlacementError> {
    config.validate()?;
    let mut all: Vec<&Node> = nodes.iter().collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(w) = all.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(PlacementError::DuplicateNodeId(w[0].id.to_string()));
    }
    let active: Vec<Node> = all
        .iter()
        .filter(|n| n.is_active())
        .copied()
        .cloned()
        .collect();
    if config.zone_aware {
        if let Some(n) = active.iter().find(|n| n.zone.is_none()) {
            return Err(PlacementError::MissingZone(n.id.to_string()));
        }
    }
    if config.algorithm.needs_address() {
        if let Some(n) = active.iter().find(|n| n.address.is_none()) {
            return Err(PlacementError::MissingAddress {
                node: n.id.to_string(),
                algorithm: config.algorithm.name(),
            });
        }
    }
    if config.algorithm == Algorithm::Nginx {
        nginx::check_nodes(&active)?;
    }
    if config.algorithm == Algorithm::Twemproxy {
        // Every node's name is checked, not only the active ones', so that
        // a node nutcracker could not be given is refused when it is
        // written, not when it is activated.
        for n in &all {
            twemproxy::server_name(n)?;
        }
        twemproxy::names(&active)?;
    }
    if config.algorithm.is_xds() {
        envoy_ring_hash::check_nodes(config.algorithm, &all, &active)?;
    }
    if matches!(
        config.algorithm,
        Algorithm::Ketama
            | Algorithm::Jump
            | Algorithm::Table
            | Algorithm::Nginx
            | Algorithm::Haproxy
            | Algorithm::Twemproxy
    ) {
        if let Some(n) = active.iter().find(|n| !n.ramp.is_full()) {
            return Err(PlacementError::RampNotSupported {
                node: n.id.to_string(),
                ramp: n.ramp.get(),
                algorithm: config.algorithm.name(),
            });
        }
    }
    if config.algorithm == Algorithm::Haproxy {
        if let Some(n) = active.iter().find(|n| n.weight.get() > haproxy::MAX_WEIGHT) {
            return Err(PlacementError::WeightTooHighForProxy {
                node: n.id.to_string(),
                weight: n.weight.get(),
                max: haproxy::MAX_WEIGHT,
                algorithm: config.algorithm.name(),
            });
        }
    }
    let total = match config.algorithm {
        Algorithm::Ring => vnode::point_count(config.vnodes_per_weight, &active),
        Algorithm::Ketama => ketama::point_count(&active),
        Algorithm::Nginx => nginx::point_count(&active),
        Algorithm::Twemproxy => twemproxy::total_points(&active),
        Algorithm::EnvoyRingHash => envoy_ring_hash::total_entries(
            &active,
            config.minimum_ring_size,
            config.maximum_ring_size,
        ),
        Algorithm::Jump => active.iter().map(|n| u64::from(n.weight.get())).sum(),
        Algorithm::Haproxy => active
            .iter()
            .map(|n| u64::from(haproxy::POINTS_PER_WEIGHT * n.weight.get()))
            .sum(),
        // Every cell of a partition table is encoded.
        Algorithm::Table => {
            let cells = u64::from(config.partitions)
                * u64::from(config.replication_factor).min(active.len() as u64);
            if cells > config::MAX_POINTS {
                return Err(PlacementError::TableTooLarge {
                    cells,
                    cap: config::MAX_POINTS,
                });
            }
            0
        }
        Algorithm::Maglev | Algorithm::EnvoyMaglev | Algorithm::Rendezvous => 0,
    };
    if total > config::MAX_POINTS {
        return Err(PlacementError::TooManyPoints {
            total,
            cap: config::MAX_POINTS,
        });
    }
    if config.algorithm.uses_table_size() && (config.table_size as usize) < active.len() {
        return Err(PlacementError::TableSizeOutOfRange {
            size: config.table_size,
            nodes: active.len(),
            max: match config.algorithm {
                Algorithm::EnvoyMaglev => config::MAX_ENVOY_TABLE_SIZE,
                _ => config::MAX_TABLE_SIZE,
            },
        });
    }
    Ok(active)
}

pub(crate) fn zones_of(config: &RingConfig, nodes: &[Node]) -> Option<Zones> {
    if !config.zone_aware {
        return None;
    }
    let mut names: Vec<&Zone> = nodes.iter().filter_map(|n| n.zone.as_ref()).collect();
    names.sort();
    names.dedup();
    let of_node = nodes
        .iter()
        .map(|n| {
            let z = n.zone.as_ref().expect("validated: active nodes have zones");
            names.binary_search(&z).expect("zone listed") as u32
        })
        .collect();
    Some(Zones {
        of_node,
        count: names.len(),
    })
}
