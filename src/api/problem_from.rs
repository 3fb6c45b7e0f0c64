//! Which problem each domain error, and each of axum's rejections,
//! becomes: the status a client sees and the field it is told to fix.

use axum::extract::rejection::{PathRejection, QueryRejection};

use super::problem::{ApiError, ProblemKind};
use crate::placement::PlacementError;
use crate::ring::rollout::RolloutError;
use crate::ring::RingError;
use crate::service::ServiceError;
use crate::store::StoreError;

impl From<PlacementError> for ApiError {
    fn from(e: PlacementError) -> Self {
        use PlacementError::*;
        let field = match &e {
            EmptyNodeId | InvalidNodeId { .. } | DuplicateNodeId(_) => "id",
            InvalidHashKey { .. } => "hash_key",
            InvalidZone { .. } | MissingZone(_) => "zone",
            InvalidAddress { .. }
            | MissingAddress { .. }
            | AddressNotServer { .. }
            | DuplicateAddress { .. } => "address",
            WeightOutOfRange { .. } | WeightTooHighForProxy { .. } | WeightShareTooSmall { .. } => {
                "weight"
            }
            RingSizeOutOfRange { field, .. } => field,
            RingSizesInverted { .. } => "minimum_ring_size",
            RampOutOfRange { .. } | RampNotSupported { .. } => "ramp",
            UnknownAlgorithm(_) => "algorithm",
            UnknownHash(_) | HashNotSupported { .. } | HashNotAccepted { .. } => "hash",
            AvalancheNotSupported(_) => "avalanche",
            InvalidHashTag { .. } | HashTagNotSupported { .. } => "hash_tag",
            InvalidServerName { .. } => "hash_key",
            ServerNameTaken { field, .. } | EndpointKeyTaken { field, .. } => field,
            TableSizeNotPrime(_) | TableSizeOutOfRange { .. } => "table_size",
            VnodesOutOfRange { .. } | TooManyPoints { .. } => "vnodes_per_weight",
            ReplicationOutOfRange { .. } => "replication_factor",
            PartitionsOutOfRange { .. } | TableTooLarge { .. } => "partitions",
            ZoneTooLight { .. } => {
                return Self::new(ProblemKind::Unsatisfiable, e.to_string())
                    .with_field("zone")
                    .with_reason("zone_too_light")
            }
            // Built from stored state, never from a request: the store is
            // inconsistent, which is the server's fault.
            InvalidBucketOrder(_) | InvalidEncoding(_) | InvalidTable(_) | InvalidServerIds(_) => {
                return Self::internal(e)
            }
        };
        Self::invalid(field, e.to_string())
    }
}

impl From<RingError> for ApiError {
    fn from(e: RingError) -> Self {
        let field = match &e {
            RingError::Placement(p) => return p.clone().into(),
            RingError::InOp {
                index,
                operand,
                error,
            } => return Self::from((**error).clone()).within(&format!("ops[{index}].{operand}")),
            RingError::UnknownNode(_) => {
                return Self::new(ProblemKind::NodeNotFound, e.to_string()).with_field("id")
            }
            RingError::InvalidRingName(_) => "ring",
            RingError::IdMismatch { .. } => "id",
            RingError::MissingNodeId => "id",
            RingError::InvalidAddress(_) => "address",
            RingError::TooManyLabels(_) | RingError::InvalidLabelKey(_) => "labels",
            RingError::InvalidLabelValue(key) => {
                return Self::invalid(format!("labels.{key}"), e.to_string())
            }
            RingError::RefusedChar { field, .. } => {
                return Self::invalid(field.clone(), e.to_string())
            }
            RingError::EmptyChange | RingError::TooManyOps(_) => "ops",
            RingError::ServerIdsExhausted => "id",
            RingError::InvalidIdempotencyKey(_) => "Idempotency-Key",
            RingError::IdempotencyKeyReused { .. } => {
                return Self::new(ProblemKind::IdempotencyKeyReused, e.to_string())
                    .with_field("Idempotency-Key");
            }
        };
        Self::invalid(field, e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let detail = e.to_string();
        match e {
            StoreError::RingNotFound(_) => Self::new(
                ProblemKind::RingNotFound,
                format!("{detail}; create it with PUT /v1/rings/{{ring}}"),
            ),
            StoreError::RingExists(s) => {
                Self::new(ProblemKind::Conflict, detail).with_version(s.version)
            }
            StoreError::VersionConflict { current, .. } => {
                Self::new(ProblemKind::PreconditionFailed, detail).with_version(current)
            }
            StoreError::VersionNotFound { .. } => {
                Self::new(ProblemKind::VersionNotFound, detail).with_field("version")
            }
            StoreError::VersionPruned { .. } => {
                Self::new(ProblemKind::VersionPruned, detail).with_field("version")
            }
            StoreError::SchemaTooNew { .. }
            | StoreError::Unavailable { .. }
            | StoreError::Deposed(_) => Self::new(ProblemKind::Unavailable, detail),
            StoreError::RolloutActive { .. } => {
                Self::new(ProblemKind::Conflict, detail).with_reason("rollout_active")
            }
            StoreError::RolloutConflict { .. } => Self::new(ProblemKind::Conflict, detail),
            StoreError::RolloutNotFound { .. } => {
                Self::new(ProblemKind::RolloutNotFound, detail).with_field("rollout")
            }
            StoreError::Corrupt { .. } => Self::internal(e),
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let detail = e.to_string();
        match e {
            ServiceError::Ring(r) => r.into(),
            ServiceError::Store(s) => s.into(),
            ServiceError::ConfigConflict { existing, .. } => {
                Self::new(ProblemKind::Conflict, detail).with_version(existing.version)
            }
            ServiceError::PreconditionFailed { current, .. } => {
                Self::new(ProblemKind::PreconditionFailed, detail).with_version(current)
            }
            ServiceError::AckAheadOfRing { current, .. } => {
                Self::new(ProblemKind::Conflict, detail)
                    .with_field("version")
                    .with_version(current)
            }
            ServiceError::LeaseNotFound { .. }
            | ServiceError::LeaseExpired { .. }
            | ServiceError::LeaseReleased { .. } => {
                Self::new(ProblemKind::LeaseNotFound, detail).with_field("lease_id")
            }
            ServiceError::LeaseOfAnotherNode { .. } => {
                Self::new(ProblemKind::Conflict, detail).with_field("lease_id")
            }
            ServiceError::NoTransitionDue { .. } => Self::new(ProblemKind::Conflict, detail),
            ServiceError::TooMuchContention(_) => Self::new(ProblemKind::Unavailable, detail),
            ServiceError::Rollout(r) => r.into(),
            ServiceError::RolloutState { .. } => {
                Self::new(ProblemKind::Conflict, detail).with_reason("rollout_state")
            }
            ServiceError::PlanChanged(_) => Self::new(ProblemKind::Conflict, detail),
        }
    }
}

impl From<RolloutError> for ApiError {
    fn from(e: RolloutError) -> Self {
        let detail = e.to_string();
        let unsatisfiable = |field: &str, reason: &'static str| {
            Self::new(ProblemKind::Unsatisfiable, detail.clone())
                .with_field(field)
                .with_reason(reason)
        };
        match e {
            RolloutError::Ring(r) => r.into(),
            // The request carries the policy as `policy`.
            RolloutError::Policy { field, .. } => Self::invalid(format!("policy.{field}"), detail),
            RolloutError::NoChange => unsatisfiable("ops", "no_change"),
            RolloutError::SingleStepOnly(_) => unsatisfiable("policy.steps", "single_step_only"),
            RolloutError::TooManySteps { .. } => unsatisfiable("policy.steps", "too_many_steps"),
            RolloutError::FractionUnreachable { .. } => {
                unsatisfiable("policy.max_moved_fraction_per_step", "fraction_unreachable")
            }
            RolloutError::EmptyStep(_) => Self::internal(e),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> Self {
        Self::new(ProblemKind::InvalidInput, e.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        // axum's text already says which parameter and why, e.g.
        // "Failed to deserialize query string: missing field `key`" or
        // "…: replicas: invalid digit found in string"; lift the name out.
        let text = e.body_text();
        let reason = text.split_once(": ").map_or(text.as_str(), |(_, r)| r);
        let field = match reason.split_once("missing field `") {
            Some((_, rest)) => rest.split('`').next(),
            None => reason
                .split_once(": ")
                .map(|(name, _)| name)
                .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')),
        };
        let err = Self::new(ProblemKind::InvalidInput, text.clone());
        match field {
            Some(f) if !f.is_empty() => err.with_field(f),
            _ => err,
        }
    }
}
