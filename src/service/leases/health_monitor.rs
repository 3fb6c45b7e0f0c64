//! The health monitor: notices each leased node's health transitions and
//! announces them through the hub, apart from versions.
//!
//! Health is derived from lease deadlines and the clock, so nothing
//! happens at the moment a deadline passes: a transition exists only once
//! someone looks. One task per instance looks at every ring in memory
//! every [`POLL_INTERVAL`], compares each node's health with what it saw
//! the time before, and publishes what differs. Reading health touches
//! memory only, so a poll never waits on the store.
//!
//! Only leased nodes are followed. An operator's node (`unmanaged`) has no
//! health to report, so it neither appears nor disappears here: a node
//! that registers itself comes in with `previous: None`, and one removed
//! from the ring leaves with `health: None`. A node that appears for the
//! first time during the commit of its registration, before its lease is
//! recorded, is therefore seen once, with its lease, and never as
//! `unmanaged` first.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::Leases;
use crate::hub::HealthChange;
use crate::placement::NodeId;
use crate::ring::{NodeHealth, RingName};
use crate::service::background::{Stop, Ticks};
use crate::store::Lease;

/// How often the monitor looks: a transition reaches watchers at most
/// this long after it happened.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// What the monitor saw of one node the last time it looked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    health: NodeHealth,
    lease: Lease,
}

/// The health of every leased node as last seen, per ring: the state the
/// diff runs against.
#[derive(Debug, Default)]
pub(crate) struct HealthMonitor {
    seen: HashMap<RingName, HashMap<NodeId, Seen>>,
}

impl HealthMonitor {
    /// A monitor that has seen nothing yet: its first look reports every
    /// leased node as new.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Compares `ring`'s nodes now (`nodes`, each with its health and its
    /// lease if it has one) with what was seen last, remembers them, and
    /// returns the transitions in the order of `nodes`, then the removed
    /// nodes by id.
    pub(crate) fn observe(
        &mut self,
        ring: &RingName,
        nodes: impl IntoIterator<Item = (NodeId, NodeHealth, Option<Lease>)>,
    ) -> Vec<HealthChange> {
        let mut before = self.seen.remove(ring).unwrap_or_default();
        let mut now = HashMap::new();
        let mut changes = Vec::new();
        for (node, health, lease) in nodes {
            let Some(lease) = lease else { continue };
            let seen = Seen { health, lease };
            let previous = before.remove(&node);
            // A new lease id is a new registration: reported even when the
            // node was already healthy (it expired and came back between
            // two looks), so a watcher learns the lease it now holds.
            let moved = previous
                .as_ref()
                .is_none_or(|p| p.health != seen.health || p.lease.id != seen.lease.id);
            if moved {
                changes.push(change(
                    ring,
                    &node,
                    Some(health),
                    previous.map(|p| p.health),
                    &seen.lease,
                ));
            }
            now.insert(node, seen);
        }
        let mut gone: Vec<(NodeId, Seen)> = before.into_iter().collect();
        gone.sort_by(|a, b| a.0.cmp(&b.0));
        for (node, seen) in gone {
            changes.push(change(ring, &node, None, Some(seen.health), &seen.lease));
        }
        if !now.is_empty() {
            self.seen.insert(ring.clone(), now);
        }
        changes
    }

    /// Forgets the rings not in `rings` (deleted, or no longer in memory),
    /// without reporting anything: a deleted ring's watchers are told so
    /// by its `deleted` event.
    pub(crate) fn retain(&mut self, rings: &HashSet<RingName>) {
        self.seen.retain(|r, _| rings.contains(r));
    }
}

fn change(
    ring: &RingName,
    node: &NodeId,
    health: Option<NodeHealth>,
    previous: Option<NodeHealth>,
    lease: &Lease,
) -> HealthChange {
    HealthChange {
        ring: ring.clone(),
        node: node.clone(),
        health,
        previous,
        lease: lease.id,
        last_heartbeat: lease.last_heartbeat,
        deadline: lease.deadline,
    }
}

impl Leases {
    /// One look at every ring in memory: the transitions since `monitor`'s
    /// last look, ring by ring in name order. Reads memory only.
    pub(crate) fn health_transitions(&self, monitor: &mut HealthMonitor) -> Vec<HealthChange> {
        let rings = self.rings.in_memory();
        monitor.retain(&rings.iter().map(|s| s.ring.clone()).collect());
        let mut changes = Vec::new();
        for snapshot in rings {
            let health = self.health(&snapshot);
            let nodes = snapshot
                .nodes
                .iter()
                .zip(health)
                .map(|(n, (h, lease))| (n.id.clone(), h, lease));
            changes.extend(monitor.observe(&snapshot.ring, nodes));
        }
        changes
    }

    /// Looks every 250 ms (`POLL_INTERVAL`) and publishes each transition
    /// through the hub, until `stop`; one loop per service (see
    /// `service/background.rs`).
    pub(crate) async fn monitor_health(self: Arc<Self>, stop: Stop) {
        let mut monitor = HealthMonitor::new();
        let mut ticks = Ticks::every(POLL_INTERVAL, stop);
        while ticks.next().await {
            for change in self.health_transitions(&mut monitor) {
                tracing::debug!(
                    ring = %change.ring,
                    node = %change.node,
                    to = change.to_label(),
                    "health changed"
                );
                self.hub.publish_health(change);
            }
        }
    }
}

#[cfg(test)]
mod tests;
