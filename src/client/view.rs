//! A snapshot that has passed verification, with its placement built.

use crate::placement::{Fingerprint, Placement};
use crate::ring::{NodeRecord, Snapshot};

use super::error::ClientError;

/// One verified ring version: the snapshot as the server sent it and the
/// placement this process computed from it, whose fingerprint matched.
/// Immutable; the client swaps whole views when a new version arrives.
#[derive(Debug)]
pub struct RingView {
    snapshot: Snapshot,
    placement: Placement,
    /// The record of each node of the placement (active nodes in id
    /// order), copied so that a lookup reaches the record with one index,
    /// as the placement reaches its own node.
    active: Vec<NodeRecord>,
}

impl RingView {
    /// Builds the snapshot's placement and checks that it hashes to the
    /// fingerprint the snapshot states. A snapshot that fails is refused:
    /// routing on it could send keys where no other client sends them.
    pub fn verify(snapshot: Snapshot) -> Result<Self, ClientError> {
        let placement = snapshot.placement();
        Self::verify_built(snapshot, placement)
    }

    /// Checks a placement built for `snapshot` some other way (a `table`
    /// from a download or from moves) as [`RingView::verify`] checks its
    /// own.
    pub fn verify_built(
        snapshot: Snapshot,
        placement: Result<Placement, crate::ring::RingError>,
    ) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidSnapshot {
            ring: snapshot.ring.to_string(),
            version: snapshot.version,
            reason,
        };
        let placement = placement.map_err(|e| invalid(e.to_string()))?;
        let computed = placement.fingerprint();
        if computed != snapshot.fingerprint {
            return Err(ClientError::FingerprintMismatch {
                ring: snapshot.ring.to_string(),
                version: snapshot.version,
                stated: snapshot.fingerprint.to_string(),
                computed: computed.to_string(),
            });
        }
        let active = placement
            .nodes()
            .iter()
            .map(|n| {
                snapshot
                    .nodes
                    .binary_search_by(|r| r.id.cmp(&n.id))
                    .map(|i| snapshot.nodes[i].clone())
                    .map_err(|_| invalid(format!("placement node `{}` has no record", n.id)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            snapshot,
            placement,
            active,
        })
    }

    /// The ring version.
    pub fn version(&self) -> u64 {
        self.snapshot.version
    }

    /// The verified fingerprint.
    pub fn fingerprint(&self) -> Fingerprint {
        self.snapshot.fingerprint
    }

    /// The snapshot as received.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The placement built from it.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// The record of the placement's node number `index` (see
    /// [`Placement::owner_index`]).
    #[inline(always)]
    pub fn record(&self, index: usize) -> &NodeRecord {
        &self.active[index]
    }

    /// The node that owns `key`; `None` when no node is active.
    #[inline(always)]
    pub fn owner(&self, key: &[u8]) -> Option<&NodeRecord> {
        self.placement.owner_index(key).map(|i| self.record(i))
    }

    /// The first `r` distinct nodes for `key`, owner first, in the
    /// algorithm's successor order (fewer when fewer nodes are active).
    pub fn preference_list(&self, key: &[u8], r: usize) -> Vec<&NodeRecord> {
        self.placement
            .preference_indices(key, r)
            .into_iter()
            .map(|i| self.record(i))
            .collect()
    }
}
