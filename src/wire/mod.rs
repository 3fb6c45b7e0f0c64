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
pub mod duration;
pub mod headers;
pub mod inspection;
pub mod movement;
pub mod nodes;
pub mod problem;
pub mod rings;
pub mod snapshots;

pub use changes::{ChangeResult, ChangeView, ConfigChange, OpView, RoleName};
pub use clients::{AckResult, ClientList, ClientSummary, ClientView};
pub use inspection::{
    DiffResult, KeyPlacement, LookupBatchResult, LookupResult, NodeShare, OwnershipBasisName,
    OwnershipView,
};
pub use movement::{
    DiffBasisName, DiffView, MovedRangeView, NodeMovementView, TransferView, MAX_MOVED_RANGES,
};
pub use nodes::{NodeList, NodeStateName, NodeView};
pub use problem::Problem;
pub use rings::{AlgorithmName, HashName, RingConfigView, RingList, RingSummary};
pub use snapshots::{HistoryEntryView, HistoryView, SnapshotView};
