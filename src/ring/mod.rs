//! Rings as the service keeps them: names, node records, changes and
//! immutable numbered snapshots. Pure data and rules; no I/O.

mod ack;
mod bucket_order;
mod change;
mod client_id;
mod clock;
pub mod durations;
mod lease;
pub mod membership_policy;
mod name;
pub mod proxy_config;
mod record;
pub mod rollout;
mod server_ids;
mod snapshot;
mod table_bytes;
mod text;

pub use ack::{ApplyFailure, ClientAck, ClientKind};
pub use bucket_order::{BucketOrder, BucketRun, PerBucket};
pub use change::{
    ops_match, ChangeOp, ChangeRecord, IdempotencyKey, RequestedOp, Role, MAX_IDEMPOTENCY_KEY_LEN,
    MAX_OPS,
};
pub use client_id::{ClientId, InvalidClientId, MAX_CLIENT_ID_LEN};
pub use clock::{Clock, ManualClock, SystemClock};
pub use lease::{InvalidLeaseId, LeaseId, NodeHealth, LEASE_ID_LEN};
pub use membership_policy::{MembershipPolicy, MembershipPolicySpec, OnJoin, OnLeave};
pub use name::{RingName, MAX_RING_NAME_LEN};
pub use record::{
    NodeRecord, NodeRecordSpec, MAX_ADDRESS_LEN, MAX_LABELS, MAX_LABEL_KEY_LEN, MAX_LABEL_VALUE_LEN,
};
pub use server_ids::ServerIds;
pub use snapshot::{ExactLayout, Proposal, Snapshot};
pub use table_bytes::TableBytes;
pub use text::{escape_refused, is_refused_char, RefusedChar};

use thiserror::Error;

use crate::placement::{NodeId, PlacementError};

/// Why a ring-level request was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RingError {
    /// The ring name breaks the naming rules.
    #[error("ring name `{0}` is invalid: use 1–{max} characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit", max = MAX_RING_NAME_LEN)]
    InvalidRingName(String),
    /// The body's node id differs from the one in the path.
    #[error("the body names node `{body}` but the path names `{path}`")]
    IdMismatch {
        /// From the body.
        body: NodeId,
        /// From the path.
        path: NodeId,
    },
    /// An upsert op carried no node id.
    #[error("an upsert op needs `node.id`")]
    MissingNodeId,
    /// A node address is empty, too long or has spaces or control characters.
    #[error("address `{0}` is invalid: 1–{max} characters without spaces or control characters", max = MAX_ADDRESS_LEN)]
    InvalidAddress(String),
    /// Over [`MAX_LABELS`] labels.
    #[error("{0} labels given; a node may carry at most {max}", max = MAX_LABELS)]
    TooManyLabels(usize),
    /// A label key breaks the rules.
    #[error("label key `{0}` is invalid: keys are 1–{max} characters of ASCII letters, digits, '.', '_', '-' and '/', starting with a letter or digit", max = MAX_LABEL_KEY_LEN)]
    InvalidLabelKey(String),
    /// A label value is too long or holds control characters.
    #[error("the value of label `{0}` is invalid: values are at most {max} bytes without control characters", max = MAX_LABEL_VALUE_LEN)]
    InvalidLabelValue(String),
    /// Free text holds a character that terminals act on instead of
    /// showing (see [`is_refused_char`]).
    #[error("`{field}` contains {found}: control characters, line separators and bidirectional formatting characters are refused in text, since terminals and viewers act on them instead of showing them")]
    RefusedChar {
        /// The field, relative to the object checked (`labels.team`).
        field: String,
        /// The character and where it is.
        found: RefusedChar,
    },
    /// A remove op names a node the ring does not have.
    #[error("node `{0}` is not in the ring")]
    UnknownNode(NodeId),
    /// An `Idempotency-Key` that is empty, too long or not visible ASCII.
    #[error("Idempotency-Key `{0}` is invalid: use 1–{max} visible ASCII characters, e.g. a UUID", max = MAX_IDEMPOTENCY_KEY_LEN)]
    InvalidIdempotencyKey(String),
    /// An `Idempotency-Key` already used for a different change.
    #[error("Idempotency-Key `{key}` was already used for a different change (version {version}); use a new key for a new change")]
    IdempotencyKeyReused {
        /// The key.
        key: IdempotencyKey,
        /// The version it produced.
        version: u64,
    },
    /// A change with no ops.
    #[error("a change needs at least one op")]
    EmptyChange,
    /// A change with more than [`MAX_OPS`] ops.
    #[error("{0} ops given; a change may carry at most {max}", max = MAX_OPS)]
    TooManyOps(usize),
    /// An op of a change failed when applied; `error` says why.
    #[error("{error}")]
    InOp {
        /// The op's position in the change.
        index: usize,
        /// The op's operand that is to blame (`config`).
        operand: &'static str,
        /// What is wrong.
        error: Box<RingError>,
    },
    /// A `haproxy` ring has given every server id it may give (spec 5.8.3).
    #[error("this haproxy ring has given all {max} server ids; a new node cannot get one: copy the ring's nodes into a new ring", max = crate::placement::haproxy::MAX_SERVER_ID)]
    ServerIdsExhausted,
    /// The placement core refused the result.
    #[error(transparent)]
    Placement(#[from] PlacementError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits are interpolated from their constants; the texts stay
    /// what clients have always seen.
    #[test]
    fn limit_messages_state_the_limits() {
        let cases = [
            (
                RingError::InvalidRingName("-x".into()),
                "ring name `-x` is invalid: use 1–63 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit",
            ),
            (
                RingError::InvalidAddress("a b".into()),
                "address `a b` is invalid: 1–255 characters without spaces or control characters",
            ),
            (
                RingError::TooManyLabels(33),
                "33 labels given; a node may carry at most 32",
            ),
            (
                RingError::InvalidLabelKey("/k".into()),
                "label key `/k` is invalid: keys are 1–63 characters of ASCII letters, digits, '.', '_', '-' and '/', starting with a letter or digit",
            ),
            (
                RingError::InvalidLabelValue("team".into()),
                "the value of label `team` is invalid: values are at most 255 bytes without control characters",
            ),
            (
                RingError::InvalidIdempotencyKey("".into()),
                "Idempotency-Key `` is invalid: use 1–255 visible ASCII characters, e.g. a UUID",
            ),
            (
                RingError::TooManyOps(10_001),
                "10001 ops given; a change may carry at most 10000",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
