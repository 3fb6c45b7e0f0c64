//! The wire contract: every body ringd's HTTP API sends or takes, and its
//! query strings, shared by the server (which serializes the responses,
//! parses the queries and derives the OpenAPI schemas from these types),
//! the Rust client and the CLI (which decode the responses and send the
//! requests).
//!
//! Some request types are schema-only mirrors (`NodeInput`,
//! `UpsertNodeInput`, `RingConfigInput`, the config inputs, `ChangeInput`,
//! `OpInput`, `LookupBatchInput`): the server parses those bodies into
//! domain specs (`NodeRecordSpec`, `RingConfigSpec`, the API's
//! `ChangeBody`, [`LookupBatch`]) so that each error names its field, and
//! the mirrors tell the OpenAPI document what is accepted; a test feeds
//! every schema example through the real parsers. The clients send the
//! mirrors, which serialize without the fields left unset. `AckInput`,
//! [`LookupBatch`] and the query structs are what the server parses;
//! their checks that answer with a problem stay in the API.
//!
//! Responses are built from these rather than by serializing domain types
//! directly, so the OpenAPI schemas (derived from these same types) always
//! describe the bytes actually sent. The one body read back into a domain
//! type is a snapshot: [`SnapshotView`], as the CLI prints it, becomes
//! the Rust client's `Snapshot` through [`snapshot_read`], the only
//! conversion of that kind. 64-bit hash positions and 128-bit
//! units are decimal strings: JSON numbers lose precision past 2^53 in
//! many clients.
//!
//! This module depends only on `placement` and `ring`, so it compiles for
//! the client alone. `schema`, the named OpenAPI schemas of bounded
//! values, is built only with the server.

pub mod access;
pub mod changes;
pub mod clients;
pub mod cluster;
pub mod config_input;
pub mod duration;
pub mod export;
pub mod headers;
pub mod inspection;
pub mod leases;
pub mod limits;
pub mod lookup_input;
pub mod membership;
pub mod movement;
pub mod node_input;
pub mod nodes;
pub mod problem;
pub mod rings;
pub mod rollout_view;
pub mod rollouts;
#[cfg(feature = "server")]
pub mod schema;
pub mod snapshot_read;
pub mod snapshots;
pub mod watch;

pub use access::{AccessView, TokenKind};
pub use changes::{ChangeInput, ChangeResult, ChangeView, ConfigChange, OpInput, OpView, RoleName};
pub use clients::{
    AckInput, AckResult, ApplyFailureInput, ApplyFailureView, ClientKind, ClientList,
    ClientSummary, ClientView,
};
pub use cluster::{ClusterLeaderView, ClusterView, InstanceView, StoreKindName};
pub use config_input::{CompleteConfigInput, ConfigPatchInput, RingConfigInput};
pub use export::ExportQuery;
pub use inspection::{
    DiffQuery, DiffResult, KeyPlacement, LookupBatchResult, LookupQuery, LookupResult, NodeShare,
    OwnershipBasisName, OwnershipView, VersionQuery,
};
pub use leases::{LeaseInput, LeaseView};
pub use lookup_input::{LookupBase64Keys, LookupBatch, LookupBatchInput, LookupTextKeys};
pub use membership::{
    GuardRuleName, GuardView, MembershipPolicyInput, MembershipPolicyView, MembershipStatusView,
    OnJoinName, OnLeaveName, PendingTransitionView, TransitionName,
};
pub use movement::{
    DiffBasisName, DiffView, MovedRangeView, NodeMovementView, TransferView, MAX_MOVED_RANGES,
};
pub use node_input::{NodeInput, UpsertNodeInput};
pub use nodes::{NodeChangeQuery, NodeHealthName, NodeList, NodeStateName, NodeView};
pub use problem::Problem;
pub use rings::{
    AlgorithmName, HashName, HealthCounts, PreconditionQuery, RingConfigView, RingList, RingSummary,
};
pub use rollout_view::{AppliedView, GateView, RolloutEventView, RolloutList, RolloutView};
pub use rollouts::{
    AbortInput, OnGateTimeoutName, PolicyView, RolloutInput, RolloutPlanView, RolloutPolicyInput,
    StepNodeView, StepView,
};
pub use snapshot_read::SnapshotViewError;
pub use snapshots::{HistoryEntryView, HistoryView, SnapshotQuery, SnapshotView};
pub use watch::{EventDetail, HealthEvent, KeepaliveEvent, LightEvent, StaleEvent, WatchQuery};

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
        for s in [NodeState::Active, NodeState::Draining, NodeState::Joining] {
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
