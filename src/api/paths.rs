//! The path segments of the API (`{ring}`, `{node}`, `{version}`),
//! validated into domain types by extractors; a refusal names the
//! segment. A handler never sees an unchecked one.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::extract::ApiPath;
use super::problem::{ApiError, ProblemKind};
use crate::placement::NodeId;
use crate::ring::rollout::RolloutId;
use crate::ring::{ClientId, LeaseId, RingName};

/// Validates the `{ring}` path parameter.
pub fn ring_name(s: &str) -> Result<RingName, ApiError> {
    RingName::new(s).map_err(|e| ApiError::invalid("ring", e.to_string()))
}

/// Validates the `{node}` path parameter.
pub fn node_id(s: &str) -> Result<NodeId, ApiError> {
    NodeId::new(s).map_err(|e| ApiError::invalid("node", e.to_string()))
}

/// Parses a `{version}` path parameter. Version 0 never exists.
pub fn version(s: &str) -> Result<u64, ApiError> {
    match s.parse::<u64>() {
        Ok(0) => Err(ApiError::new(
            ProblemKind::VersionNotFound,
            "version 0 does not exist: versions start at 1",
        )
        .with_field("version")),
        Ok(v) => Ok(v),
        Err(_) => Err(ApiError::invalid(
            "version",
            format!("version `{}` is not a positive integer", excerpt(s)),
        )),
    }
}

/// Checks an optional `version` query parameter the same way.
pub fn optional_version(v: Option<u64>) -> Result<Option<u64>, ApiError> {
    match v {
        Some(0) => Err(ApiError::new(
            ProblemKind::VersionNotFound,
            "version 0 does not exist: versions start at 1",
        )
        .with_field("version")),
        other => Ok(other),
    }
}

fn excerpt(s: &str) -> String {
    s.chars().take(100).collect()
}

/// The `{ring}` of a route, validated: a handler takes `RingPath(ring)`
/// instead of a string it must remember to check. A bad name is refused
/// naming the field `ring`.
#[derive(Debug, Clone)]
pub struct RingPath(pub RingName);

/// The `{ring}` and `{node}` of a route, validated in that order.
#[derive(Debug, Clone)]
pub struct RingNodePath(pub RingName, pub NodeId);

/// The `{ring}`, `{node}` and `{lease_id}` of a route, validated in that
/// order.
#[derive(Debug, Clone)]
pub struct RingNodeLeasePath(pub RingName, pub NodeId, pub LeaseId);

/// The `{ring}` and `{version}` of a route, validated in that order;
/// version 0 is a 404, as it never exists.
#[derive(Debug, Clone)]
pub struct RingVersionPath(pub RingName, pub u64);

/// The `{ring}` and `{id}` of a rollout's route, validated in that order;
/// rollout 0 is a 404, as it never exists.
#[derive(Debug, Clone)]
pub struct RingRolloutPath(pub RingName, pub RolloutId);

impl<S: Send + Sync> FromRequestParts<S> for RingRolloutPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath((ring, id)) =
            ApiPath::<(String, String)>::from_request_parts(parts, state).await?;
        let ring = ring_name(&ring)?;
        let id = match id.parse::<u64>() {
            Ok(0) => {
                return Err(ApiError::new(
                    ProblemKind::RolloutNotFound,
                    "rollout 0 does not exist: rollouts are numbered from 1",
                )
                .with_field("rollout"))
            }
            Ok(id) => RolloutId(id),
            Err(_) => {
                return Err(ApiError::invalid(
                    "rollout",
                    format!("rollout `{}` is not a positive integer", excerpt(&id)),
                ))
            }
        };
        Ok(Self(ring, id))
    }
}

/// The `{ring}` and `{client_id}` of a route, validated in that order.
#[derive(Debug, Clone)]
pub struct RingClientPath(pub RingName, pub ClientId);

impl<S: Send + Sync> FromRequestParts<S> for RingPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath(ring) = ApiPath::<String>::from_request_parts(parts, state).await?;
        Ok(Self(ring_name(&ring)?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RingNodePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath((ring, node)) =
            ApiPath::<(String, String)>::from_request_parts(parts, state).await?;
        Ok(Self(ring_name(&ring)?, node_id(&node)?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RingVersionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath((ring, v)) =
            ApiPath::<(String, String)>::from_request_parts(parts, state).await?;
        Ok(Self(ring_name(&ring)?, version(&v)?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RingClientPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath((ring, client)) =
            ApiPath::<(String, String)>::from_request_parts(parts, state).await?;
        let ring = ring_name(&ring)?;
        let client =
            ClientId::new(client).map_err(|e| ApiError::invalid("client_id", e.to_string()))?;
        Ok(Self(ring, client))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RingNodeLeasePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let ApiPath((ring, node, lease)) =
            ApiPath::<(String, String, String)>::from_request_parts(parts, state).await?;
        let lease =
            LeaseId::parse(&lease).map_err(|e| ApiError::invalid("lease_id", e.to_string()))?;
        Ok(Self(ring_name(&ring)?, node_id(&node)?, lease))
    }
}
