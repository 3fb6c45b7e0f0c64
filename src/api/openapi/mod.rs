//! The OpenAPI document, gathered from the annotations beside each
//! handler, and Swagger UI served from assets compiled into the binary.
//!
//! `openapi/openapi.json` is this document, committed; the
//! `openapi_drift` test fails when the two differ.
//!
//! Its pieces beside it: the error answers many operations share
//! (`error_responses.rs`), the schemas of path and header values
//! (`schemas.rs`) and the links between operations (`links.rs`).

pub mod error_responses;
pub mod links;
pub mod schemas;

use axum::Router;
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use self::links::Links;
use super::AppState;

const DESCRIPTION: &str = "\
ringd keeps the one true list of nodes, weights and placement algorithm for \
consistent-hashing rings. Every accepted change becomes an immutable, numbered \
snapshot; clients holding the same version place every key identically.

**Names.** Ring name: 1–63 characters of `a-z`, `0-9`, `.`, `_` and `-`, starting \
with a lowercase letter or digit. Node id: 1–128 characters of `A-Z`, `a-z`, \
`0-9`, `.`, `_`, `-` and `:`, starting with a letter or digit. Zones follow the \
node-id rules with at most 64 characters. Weights are integers from 1 to 1000000.

**Versions.** A ring starts at version 1; every accepted change adds exactly 1; \
a change that alters nothing creates no version. Every mutation accepts \
`If-Match: \"<version>\"` or `expected_version` and answers 412, with \
`current_version` in the body, when the ring has moved on. Reads of the latest \
state carry `ETag: \"<version>\"` and honour `If-None-Match`.

**Errors** are RFC 9457 `application/problem+json` bodies with `type` \
(`urn:ringd:problem:<slug>`), `title`, `status`, `detail` and, when one input is \
to blame, `field`. Validation errors are 400 (never 422); unknown ring, node or \
version 404; pruned version 410; precondition 412; body over 1 MiB 413; body \
not JSON 415; store unavailable 503.

**Consistency.** An answer without `Ringd-Stale: true` is current: a read \
reflects every change acknowledged before it arrived, through any instance. A \
change is answered within 3 s (1 s once the instance knows it cannot reach \
etcd), with 503 and `Retry-After` if etcd did not confirm it; a change sent \
with `Ringd-Timeout: <duration>` may wait that long instead.

**Auth.** With an admin token configured, mutations need \
`Authorization: Bearer <admin token>` (401 without it, 403 with the read \
token). With a read token configured, reads need the read or the admin token. \
`/healthz`, `/readyz`, `/openapi.json` and `/docs` are always open.";

/// The head of the OpenAPI document of the v1 API: info, the schemas no
/// operation names, and tags. The operations come from the route table
/// ([`crate::api::routes`]); [`finish`] then runs the modifiers, which need them.
#[derive(OpenApi)]
#[openapi(
    info(title = "ringd", description = DESCRIPTION, license(name = "Apache-2.0")),
    // Schemas that only parameters or hand-built schemas refer to: utoipa
    // collects those of bodies by itself, but not these.
    components(schemas(
        schemas::RingNameSchema,
        crate::wire::schema::NodeIdSchema,
        schemas::ClientIdSchema,
        crate::wire::schema::VersionSchema,
        crate::wire::schema::VersionCursorSchema,
        schemas::VersionTagSchema,
        schemas::IdempotencyKeySchema,
        crate::wire::schema::ReasonSchema,
        crate::wire::schema::ReplicasSchema,
        crate::wire::schema::WaitSchema,
        crate::wire::schema::KeyB64Schema,
        crate::wire::OpInput,
        crate::wire::EventDetail,
        crate::wire::LightEvent,
        crate::wire::KeepaliveEvent,
        crate::wire::StaleEvent,
        crate::wire::HealthEvent,
        crate::wire::SnapshotView,
    )),
    tags(
        (name = "rings", description = "Create, list, read and delete rings."),
        (name = "nodes", description = "Register, update and remove nodes; each is a one-op change."),
        (name = "leases", description = "Nodes that register themselves, renew a lease to show they are alive, and release it when they leave."),
        (name = "changes", description = "Several ops as one version, with dry runs."),
        (name = "rollouts", description = "A change applied in paced steps, each one version, each waiting until the ring's clients applied the one before; plans, progress and controls."),
        (name = "snapshots", description = "Immutable versions, their placement tables and the history."),
        (name = "inspection", description = "Lookups, ownership and diffs."),
        (name = "watch", description = "Change notifications: Server-Sent Events and long-poll."),
        (name = "clients", description = "Which version each client applied, and whether it computed the same placement."),
        (name = "operations", description = "Health, readiness and metrics."),
    )
)]
pub struct ApiDoc;

/// Declares the `bearer` scheme the operations refer to.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The admin token (`--admin-token`) for mutations; the read or admin token for reads when `--read-token` is set.",
                    ))
                    .build(),
            ),
        );
    }
}

/// Completes a document split from the route table: the bearer scheme,
/// the links between operations and closed request bodies. Run after the
/// operations are in, which the derive's own `modifiers(…)` would not be.
pub fn finish(openapi: &mut utoipa::openapi::OpenApi) {
    BearerAuth.modify(openapi);
    Links.modify(openapi);
    ClosedOps.modify(openapi);
    WriteTimeouts.modify(openapi);
}

/// The document.
pub fn document() -> utoipa::openapi::OpenApi {
    let (_, mut openapi) = super::routes().split_for_parts();
    finish(&mut openapi);
    openapi
}

/// The document as pretty JSON with a final newline: the exact content of
/// `openapi/openapi.json`.
pub fn document_json() -> String {
    let mut json = document()
        .to_pretty_json()
        .expect("the OpenAPI document serializes");
    json.push('\n');
    json
}

/// `/openapi.json` serving `document`, and Swagger UI at `/docs` from
/// vendored assets. Served but not in the document itself: see
/// [`UNDOCUMENTED_ROUTES`].
pub fn docs_router(document: utoipa::openapi::OpenApi) -> Router<AppState> {
    SwaggerUi::new("/docs")
        .url("/openapi.json", document)
        .into()
}

/// The routes served on purpose without an operation in the document: the
/// document itself and Swagger UI (`/docs` redirects to `/docs/`, which
/// serves the UI's files under it), and the web console (`/ui`, see
/// [`crate::api::console`]).
pub const UNDOCUMENTED_ROUTES: &[&str] = &[
    "/openapi.json",
    "/docs",
    "/docs/",
    "/docs/{*rest}",
    "/ui",
    "/ui/",
    "/ui/{*path}",
];

/// Closes each variant of the `OpInput` schema to unknown fields, as the
/// server's op parser is: utoipa applies `deny_unknown_fields` to structs
/// but not to the variants of a tagged enum. Also gives `update_config`'s
/// patch its `minProperties: 1`, which utoipa's derive does not write for
/// a struct.
struct ClosedOps;

impl utoipa::Modify for ClosedOps {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let Some(RefOr::T(Schema::OneOf(ops))) = components.schemas.get_mut("OpInput") else {
            panic!("OpInput is a oneOf of its variants");
        };
        for variant in &mut ops.items {
            if let RefOr::T(Schema::Object(object)) = variant {
                object.additional_properties =
                    Some(Box::new(AdditionalProperties::FreeForm(false)));
            }
        }
        let Some(RefOr::T(Schema::Object(patch))) = components.schemas.get_mut("ConfigPatchInput")
        else {
            panic!("ConfigPatchInput is an object");
        };
        patch.min_properties = Some(1);
    }
}

/// Declares the `Ringd-Timeout` header on every operation that writes:
/// the server honours it on all of them in one layer
/// (`consistency::bound_writes`), so it is declared in one place too.
struct WriteTimeouts;

impl Modify for WriteTimeouts {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
        use utoipa::openapi::{ObjectBuilder, Required, Type};
        let bounds = crate::ring::durations::WRITE_TIMEOUT;
        let parameter = ParameterBuilder::new()
            .name("Ringd-Timeout")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(format!(
                "How long the server may try to commit before answering 503, {}; \
                 without it, 3 s (1 s while the instance cannot reach etcd).",
                bounds.range()
            )))
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    // Exactly the accepted range, so that a generator
                    // following the document sends only valid values.
                    .pattern(Some(
                        r"^([1-9][0-9]{2,4}|[12][0-9]{5})ms$|^([1-9][0-9]?|[12][0-9]{2}|300)s$|^[1-5]m$",
                    ))
                    .examples([serde_json::json!("10s")]),
            ))
            .build();
        for (path, item) in openapi.paths.paths.iter_mut() {
            let writes = [
                (&mut item.post, !path.ends_with("/lookup")),
                (&mut item.put, true),
                (&mut item.delete, true),
                (&mut item.patch, true),
            ];
            for (operation, write) in writes {
                if let (Some(operation), true) = (operation, write) {
                    operation
                        .parameters
                        .get_or_insert_with(Vec::new)
                        .push(parameter.clone());
                }
            }
        }
    }
}
