//! The zone rule of a `table` ring: the replicas of a partition sit in
//! `min(replicas, zones)` distinct zones: at most one per zone when the
//! replicas are no more than the zones, else every zone at least once and
//! none more than `replicas − zones + 1` times.

/// How replicas may spread over zones within one partition.
#[derive(Debug, Clone)]
pub(crate) struct ZoneRule {
    /// Zone number of each node.
    pub zone_of: Vec<u32>,
    /// Number of zones.
    pub zones: usize,
    /// Most replicas of one partition in one zone.
    pub max_per_zone: usize,
    /// Whether every partition must have a replica in every zone (when the
    /// replicas are at least as many as the zones).
    pub every_zone: bool,
}

impl ZoneRule {
    /// No zone rule: one zone holding every node, any number per
    /// partition.
    pub(crate) fn none(nodes: usize, replicas: usize) -> Self {
        Self {
            zone_of: vec![0; nodes],
            zones: 1,
            max_per_zone: replicas,
            every_zone: false,
        }
    }

    /// The rule for `zones` zones and `replicas` replicas per partition:
    /// the replicas sit in `min(replicas, zones)` distinct zones (see the
    /// module documentation for the bounds per zone).
    pub(crate) fn spread(zone_of: Vec<u32>, zones: usize, replicas: usize) -> Self {
        let (max_per_zone, every_zone) = if replicas <= zones {
            (1, replicas == zones)
        } else {
            (replicas - zones + 1, true)
        };
        Self {
            zone_of,
            zones,
            max_per_zone,
            every_zone,
        }
    }
}
