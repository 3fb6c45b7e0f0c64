//! OpenAPI links: which response supplies the identifiers of which other
//! operation (ring → nodes → changes → versions), so that generated
//! clients and stateful testers can walk the API the way a person does.
//!
//! Kept as one table rather than spread over the handlers' annotations,
//! so the graph can be read in one place.

use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

/// The ring named by a response that carries `ring`.
const RING: (&str, &str) = ("ring", "$response.body#/ring");
/// The ring of the request's own path.
const PATH_RING: (&str, &str) = ("ring", "$request.path.ring");
/// The version a response describes.
const VERSION: (&str, &str) = ("version", "$response.body#/version");
/// The rollout a response describes.
const ROLLOUT: (&str, &str) = ("id", "$response.body#/id");
/// A precondition on the version a response describes.
const EXPECTED: (&str, &str) = ("expected_version", "$response.body#/version");

/// One link: from the `statuses` responses of operation `from` to
/// operation `to`, with the parameter values given as runtime expressions.
struct LinkSpec {
    from: &'static str,
    statuses: &'static [&'static str],
    name: &'static str,
    to: &'static str,
    parameters: &'static [(&'static str, &'static str)],
    description: &'static str,
}

const CREATED: &[&str] = &["200", "201"];
const OK: &[&str] = &["200"];

// One link a line reads better as a table than rustfmt's layout would.
#[rustfmt::skip]
const LINKS: &[LinkSpec] = &[
    // A ring, once created or read, names every ring-scoped operation.
    LinkSpec { from: "put_ring", statuses: CREATED, name: "GetRing", to: "get_ring", parameters: &[RING], description: "Read the ring." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "ListNodes", to: "list_nodes", parameters: &[RING], description: "List its nodes." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "PutNode", to: "put_node", parameters: &[RING, EXPECTED], description: "Register a node at this version." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "PostChanges", to: "post_changes", parameters: &[RING], description: "Apply a change." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "LatestSnapshot", to: "latest_snapshot", parameters: &[RING], description: "Read the latest snapshot." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, VERSION], description: "Read this version." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "SnapshotTable", to: "snapshot_table", parameters: &[RING, VERSION], description: "Read this version's placement table." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "History", to: "history", parameters: &[RING], description: "Read the history." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "Lookup", to: "lookup", parameters: &[RING, VERSION], description: "Look up a key in this version." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "LookupBatch", to: "lookup_batch", parameters: &[RING], description: "Look up many keys." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "Ownership", to: "ownership", parameters: &[RING, VERSION], description: "Read this version's ownership." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "Watch", to: "watch", parameters: &[RING], description: "Watch the ring." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "ListClients", to: "list_clients", parameters: &[RING], description: "List its clients." },
    LinkSpec { from: "put_ring", statuses: CREATED, name: "DeleteRing", to: "delete_ring", parameters: &[RING, EXPECTED], description: "Delete the ring at this version." },
    LinkSpec { from: "get_ring", statuses: OK, name: "ListNodes", to: "list_nodes", parameters: &[RING], description: "List its nodes." },
    LinkSpec { from: "get_ring", statuses: OK, name: "PutNode", to: "put_node", parameters: &[RING, EXPECTED], description: "Register a node at this version." },
    LinkSpec { from: "get_ring", statuses: OK, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, VERSION], description: "Read this version." },
    LinkSpec { from: "get_ring", statuses: OK, name: "DeleteRing", to: "delete_ring", parameters: &[RING, EXPECTED], description: "Delete the ring at this version." },
    // Nodes: a registration names the node. (A listing may be empty, so
    // it links nowhere.)
    LinkSpec { from: "put_node", statuses: CREATED, name: "GetNode", to: "get_node", parameters: &[PATH_RING, ("node", "$request.path.node")], description: "Read the node." },
    LinkSpec { from: "put_node", statuses: CREATED, name: "DeleteNode", to: "delete_node", parameters: &[PATH_RING, ("node", "$request.path.node"), EXPECTED], description: "Remove the node at this version." },
    LinkSpec { from: "put_node", statuses: CREATED, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, VERSION], description: "Read the version the change made." },
    LinkSpec { from: "put_node", statuses: CREATED, name: "Diff", to: "diff", parameters: &[RING, ("from", "$response.body#/base_version"), ("to", "$response.body#/version")], description: "What the change moved." },
    LinkSpec { from: "delete_node", statuses: OK, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, VERSION], description: "Read the version the change made." },
    LinkSpec { from: "delete_node", statuses: OK, name: "Diff", to: "diff", parameters: &[RING, ("from", "$response.body#/base_version"), ("to", "$response.body#/version")], description: "What the change moved." },
    // Changes and versions.
    LinkSpec { from: "post_changes", statuses: OK, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, VERSION], description: "Read the version the change made (a dry run's does not exist)." },
    LinkSpec { from: "post_changes", statuses: OK, name: "Diff", to: "diff", parameters: &[RING, ("from", "$response.body#/base_version"), ("to", "$response.body#/version")], description: "What the change moved." },
    LinkSpec { from: "post_changes", statuses: OK, name: "GetRing", to: "get_ring", parameters: &[RING], description: "Read the ring." },
    LinkSpec { from: "latest_snapshot", statuses: OK, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, VERSION], description: "Read this version again by number." },
    LinkSpec { from: "latest_snapshot", statuses: OK, name: "SnapshotTable", to: "snapshot_table", parameters: &[RING, VERSION], description: "Read this version's placement table." },
    LinkSpec { from: "latest_snapshot", statuses: OK, name: "Ownership", to: "ownership", parameters: &[RING, VERSION], description: "Read this version's ownership." },
    LinkSpec { from: "snapshot_version", statuses: OK, name: "SnapshotTable", to: "snapshot_table", parameters: &[RING, VERSION], description: "Read this version's placement table." },
    LinkSpec { from: "snapshot_version", statuses: OK, name: "Diff", to: "diff", parameters: &[RING, ("from", "$response.body#/version")], description: "What moved since this version." },
    LinkSpec { from: "history", statuses: OK, name: "SnapshotVersion", to: "snapshot_version", parameters: &[RING, ("version", "$response.body#/entries/0/version")], description: "Read the oldest retained version." },
    // Rollouts: a started one names its number.
    LinkSpec { from: "start_rollout", statuses: &["201"], name: "GetRollout", to: "get_rollout", parameters: &[RING, ROLLOUT], description: "Follow the rollout." },
    LinkSpec { from: "start_rollout", statuses: &["201"], name: "PauseRollout", to: "pause_rollout", parameters: &[RING, ROLLOUT], description: "Pause it." },
    LinkSpec { from: "start_rollout", statuses: &["201"], name: "ResumeRollout", to: "resume_rollout", parameters: &[RING, ROLLOUT], description: "Resume it." },
    LinkSpec { from: "start_rollout", statuses: &["201"], name: "AdvanceRollout", to: "advance_rollout", parameters: &[RING, ROLLOUT], description: "Skip its pending gate once." },
    LinkSpec { from: "start_rollout", statuses: &["201"], name: "AbortRollout", to: "abort_rollout", parameters: &[RING, ROLLOUT], description: "Abort it." },
    LinkSpec { from: "start_rollout", statuses: &["201"], name: "ListRollouts", to: "list_rollouts", parameters: &[RING], description: "List the ring's rollouts." },
    LinkSpec { from: "pause_rollout", statuses: OK, name: "ResumeRollout", to: "resume_rollout", parameters: &[RING, ROLLOUT], description: "Resume it." },
    LinkSpec { from: "get_rollout", statuses: OK, name: "AbortRollout", to: "abort_rollout", parameters: &[RING, ROLLOUT], description: "Abort it." },
    LinkSpec { from: "post_ack", statuses: OK, name: "ListClients", to: "list_clients", parameters: &[RING], description: "List the ring's clients." },
];

/// Adds the links between operations (`LINKS`, above) to the document.
pub struct Links;

impl Modify for Links {
    fn modify(&self, openapi: &mut OpenApi) {
        for spec in LINKS {
            assert!(
                operation_mut(openapi, spec.to).is_some(),
                "link {} leads to unknown operation {}",
                spec.name,
                spec.to
            );
            let Some(operation) = operation_mut(openapi, spec.from) else {
                panic!("link {} names unknown operation {}", spec.name, spec.from);
            };
            for status in spec.statuses {
                let Some(RefOr::T(response)) = operation.responses.responses.get_mut(*status)
                else {
                    panic!(
                        "link {} names a {status} response {} does not have",
                        spec.name, spec.from
                    );
                };
                // utoipa 5 writes `Link::operation_id` as `operation_id`,
                // which no tool reads: the OpenAPI name goes in as an
                // extension, the only field serialized verbatim.
                let link = spec
                    .parameters
                    .iter()
                    .fold(LinkBuilder::new(), |b, (name, value)| {
                        b.parameter(*name, *value)
                    })
                    .description(spec.description)
                    .extensions(Some(Extensions::from_iter([("operationId", spec.to)])))
                    .build();
                response.links.insert(spec.name.to_owned(), RefOr::T(link));
            }
        }
    }
}

/// The operation with `id`, whatever its path and method.
fn operation_mut<'a>(openapi: &'a mut OpenApi, id: &str) -> Option<&'a mut Operation> {
    openapi.paths.paths.values_mut().find_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        .find(|op| op.operation_id.as_deref() == Some(id))
    })
}
