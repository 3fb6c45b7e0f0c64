//! The error responses many operations share, named once for their
//! OpenAPI annotations: `responses(ReadErrors, …)` instead of the same
//! lines in every handler. Each set is only documentation; the handlers
//! answer with [`ApiError`](crate::api::problem::ApiError) as before. An
//! operation's own 400 (which inputs it checks) stays beside it.

use utoipa::IntoResponses;

use crate::api::problem::Problem;

/// A read of a ring: no valid read token, or no such ring.
#[derive(IntoResponses)]
pub enum ReadErrors {
    /// No valid read token.
    #[response(
        status = 401,
        description = "No valid read token",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    /// No such ring.
    #[response(
        status = 404,
        description = "No such ring",
        content_type = "application/problem+json"
    )]
    NotFound(Problem),
}

/// A read of one version of a ring: no valid read token, no such ring or
/// version, or a pruned version.
#[derive(IntoResponses)]
pub enum VersionedReadErrors {
    /// No valid read token.
    #[response(
        status = 401,
        description = "No valid read token",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    /// No such ring or version.
    #[response(
        status = 404,
        description = "No such ring, or the version never existed",
        content_type = "application/problem+json"
    )]
    NotFound(Problem),
    /// The version has been pruned.
    #[response(
        status = 410,
        description = "The version has been pruned",
        content_type = "application/problem+json"
    )]
    Gone(Problem),
}

/// A read whose other refusals are its own: no valid read token.
#[derive(IntoResponses)]
pub enum ReadTokenError {
    /// No valid read token.
    #[response(
        status = 401,
        description = "No valid read token",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
}

/// A mutation: no valid admin token, or a read token.
#[derive(IntoResponses)]
pub enum WriteErrors {
    /// No valid admin token.
    #[response(
        status = 401,
        description = "No valid admin token",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    /// A read token on a mutation.
    #[response(
        status = 403,
        description = "A read token on a mutation",
        content_type = "application/problem+json"
    )]
    Forbidden(Problem),
}

/// A mutation under `If-Match` or `expected_version`.
#[derive(IntoResponses)]
pub enum PreconditionError {
    /// The ring moved on.
    #[response(
        status = 412,
        description = "Precondition failed; `current_version` in the body",
        content_type = "application/problem+json"
    )]
    Failed(Problem),
}

/// A mutation that takes an `Idempotency-Key`.
#[derive(IntoResponses)]
pub enum IdempotencyError {
    /// The key was used for another change.
    #[response(
        status = 422,
        description = "The `Idempotency-Key` was already used for a different change; or, for a `table` ring, no placement meets the change (`unsatisfiable`, with its `reason`)",
        content_type = "application/problem+json"
    )]
    Reused(Problem),
}

/// A request with a JSON body: too big, or not JSON.
#[derive(IntoResponses)]
pub enum JsonBodyErrors {
    /// Over the size limit.
    #[response(
        status = 413,
        description = "Body over 1 MiB",
        content_type = "application/problem+json"
    )]
    TooLarge(Problem),
    /// Not sent as JSON.
    #[response(
        status = 415,
        description = "Body not sent as application/json",
        content_type = "application/problem+json"
    )]
    UnsupportedMediaType(Problem),
}

/// The convergence endpoints, which read every live ack from the store.
#[derive(IntoResponses)]
pub enum StoreUnreachable {
    /// The store is unreachable.
    #[response(
        status = 503,
        description = "The store is unreachable",
        content_type = "application/problem+json"
    )]
    Unavailable(Problem),
}
