//! The wire contract: every body ringd's HTTP API sends, shared by the
//! server (which serializes these types and derives the OpenAPI schemas
//! from them), the Rust client and the CLI (which decode them).
//!
//! Responses are built from these rather than by serializing domain types
//! directly, so the OpenAPI schemas (derived from these same types) always
//! describe the bytes actually sent. 64-bit hash positions and 128-bit
//! units are decimal strings: JSON numbers lose precision past 2^53 in
//! many clients.
//!
//! This module depends only on `placement` and `ring`, so it compiles for
//! the client alone.

pub mod changes;
pub mod clients;
pub mod config_input;
pub mod duration;
pub mod headers;
pub mod inspection;
pub mod limits;
pub mod lookup_input;
pub mod movement;
pub mod node_input;
pub mod nodes;
pub mod problem;
pub mod rings;
#[cfg(feature = "server")]
pub mod schema;
pub mod snapshots;
pub mod watch;

pub use changes::{ChangeInput, ChangeResult, ChangeView, ConfigChange, OpInput, OpView, RoleName};
pub use clients::{AckInput, AckResult, ClientList, ClientSummary, ClientView};
pub use config_input::{CompleteConfigInput, ConfigPatchInput, RingConfigInput};
pub use inspection::{
    DiffQuery, DiffResult, KeyPlacement, LookupBatchResult, LookupQuery, LookupResult, NodeShare,
    OwnershipBasisName, OwnershipView, VersionQuery,
};
pub use lookup_input::{LookupBase64Keys, LookupBatch, LookupBatchInput, LookupTextKeys};
pub use movement::{
    DiffBasisName, DiffView, MovedRangeView, NodeMovementView, TransferView, MAX_MOVED_RANGES,
};
pub use node_input::{NodeInput, UpsertNodeInput};
pub use nodes::{NodeChangeQuery, NodeList, NodeStateName, NodeView};
pub use problem::Problem;
pub use rings::{
    AlgorithmName, HashName, PreconditionQuery, RingConfigView, RingList, RingSummary,
};
pub use snapshots::{HistoryEntryView, HistoryView, SnapshotQuery, SnapshotView};
pub use watch::{EventDetail, KeepaliveEvent, LightEvent, WatchQuery};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Algorithm, DiffBasis, HashFunction, NodeState};

    /// `as_str` is what the CLI prints; it must be the name serde sends.
    fn same<T: serde::Serialize>(value: T, name: &str) {
        assert_eq!(serde_json::to_value(value).unwrap(), name);
    }

    #[test]
    fn names_printed_are_the_names_sent() {
        for a in Algorithm::ALL {
            let n = AlgorithmName::from(a);
            same(n, n.as_str());
            assert_eq!(n.as_str(), a.name());
        }
        for h in HashFunction::ALL {
            let n = HashName::from(h);
            same(n, n.as_str());
            assert_eq!(n.as_str(), h.name());
        }
        for s in [NodeState::Active, NodeState::Draining] {
            let n = NodeStateName::from(s);
            same(n, n.as_str());
            same(s, n.as_str());
        }
        for b in [
            DiffBasis::Ranges,
            DiffBasis::TableEntries,
            DiffBasis::JumpModel,
            DiffBasis::RendezvousModel,
            DiffBasis::Sampled,
        ] {
            let n = DiffBasisName::from(b);
            same(n, n.as_str());
        }
        for n in [
            OwnershipBasisName::Arcs,
            OwnershipBasisName::TableEntries,
            OwnershipBasisName::Buckets,
            OwnershipBasisName::Weights,
        ] {
            same(n, n.as_str());
        }
        for n in [RoleName::Admin, RoleName::Anonymous] {
            same(n, n.as_str());
        }
    }
}
