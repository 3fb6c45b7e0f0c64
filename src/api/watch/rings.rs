//! `GET /v1/watch`: every ring's newest version as Server-Sent Events, so
//! that a console or an inventory stays current on all rings with one
//! stream (a browser holds at most six connections to one HTTP/1.1 host,
//! so one stream per ring does not scale).

use std::borrow::Cow;
use std::collections::HashMap;

use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use serde_json::json;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use utoipa::openapi::schema::OneOfBuilder;
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

use super::events::{event_stream, event_variant, frame};
use crate::api::admission::WatcherSlot;
use crate::api::auth::Reader;
use crate::api::openapi::error_responses::{ReadTokenError, StoreUnreachable};
use crate::api::problem::ApiError;
use crate::api::AppState;
use crate::hub::{GaugeGuard, RingsChange};
use crate::ring::{RingName, Snapshot};
use crate::wire::KeepaliveEvent;

/// Watch every ring.
///
/// A Server-Sent Events stream of the rings, not of their contents: fetch
/// `GET /v1/rings/{ring}` (or watch the ring) for the rest. Events, each
/// with one `data:` line of JSON and no `id:`:
///
/// - `ring`: `{"ring", "version", "fingerprint"}`, first once per
///   existing ring in name order, then whenever a ring gets a new version
///   or is created. Versions of a ring only go up on one stream; several
///   versions committed in quick succession may arrive as the newest
///   alone.
/// - `deleted`: `{"ring"}` when a ring is deleted.
/// - `resync`: `{}` when the stream fell more than 1,024 changes behind:
///   a `ring` event for every ring follows, as at the start.
///
/// - `keepalive`: `{}` when nothing else was sent for the keep-alive
///   interval (15 s by default, `--watch-keepalive`).
///
/// The stream does not resume: a client that reconnects gets every ring
/// again.
#[utoipa::path(
    get,
    path = "/v1/watch",
    tag = "watch",
    responses(
        (status = 200, description = "An event stream. Each event is `event: ring|deleted|resync|keepalive` and one `data:` line of JSON: `KeepaliveEvent` for ring (`ring`, `version`, `fingerprint`) and deleted (`ring`), `{}` for resync and keepalive.", content_type = "text/event-stream", body = RingsWatchEventSchema),
        ReadTokenError, StoreUnreachable,
    ),
    security(("bearer" = []))
)]
pub async fn watch_rings(State(state): State<AppState>, _: Reader) -> Result<Response, ApiError> {
    let slot = state.admission.admit()?;
    let hub = state.service.hub().clone();
    // Subscribed before listing, so no change after the list is missed;
    // one from before it is dropped by the versions already sent.
    let changes = hub.subscribe_rings();
    let rings = state.service.rings().list().await?;
    let mut feed = RingsFeed {
        state: state.clone(),
        changes,
        sent: HashMap::new(),
        queue: Vec::new(),
        closed: hub.is_closing(),
        _open: GaugeGuard::enter(hub, |s| &s.open_streams),
        _slot: slot,
    };
    feed.queue_all(rings);
    Ok(event_stream(futures_util::stream::unfold(
        feed,
        |mut f| async move {
            let frame = f.next_frame().await?;
            Some((frame, f))
        },
    )))
}

/// One stream's state: the newest version sent of each ring, and frames
/// waiting to go out (the listing, first to last).
struct RingsFeed {
    state: AppState,
    changes: broadcast::Receiver<RingsChange>,
    sent: HashMap<RingName, u64>,
    /// Frames still to send, in reverse order (popped from the end).
    queue: Vec<Bytes>,
    closed: bool,
    _open: GaugeGuard,
    _slot: WatcherSlot,
}

impl RingsFeed {
    /// Queues a `ring` event for each of `rings`, in name order.
    fn queue_all(&mut self, mut rings: Vec<Snapshot>) {
        rings.sort_by(|a, b| a.ring.cmp(&b.ring));
        let frames: Vec<Bytes> = rings.iter().filter_map(|s| self.version(s)).collect();
        self.queue.extend(frames.into_iter().rev());
    }

    /// The `ring` event of `s`, unless this stream sent that version or a
    /// newer one.
    fn version(&mut self, s: &Snapshot) -> Option<Bytes> {
        if self.sent.get(&s.ring).is_some_and(|&v| v >= s.version) {
            return None;
        }
        self.sent.insert(s.ring.clone(), s.version);
        Some(data_frame(
            "ring",
            &KeepaliveEvent {
                ring: s.ring.to_string(),
                version: Some(s.version),
                fingerprint: Some(s.fingerprint.to_string()),
            },
        ))
    }

    async fn next_frame(&mut self) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.queue.pop() {
                return Some(frame);
            }
            if self.closed {
                return None;
            }
            let keepalive = self.state.settings.keepalive;
            let change = match tokio::time::timeout(keepalive, self.changes.recv()).await {
                Err(_) => return Some(Bytes::from_static(b"event: keepalive\ndata: {}\n\n")),
                Ok(change) => change,
            };
            match change {
                Ok(RingsChange::Version(s)) => {
                    if let Some(frame) = self.version(&s) {
                        return Some(frame);
                    }
                }
                Ok(RingsChange::Deleted(ring)) => {
                    self.sent.remove(&ring);
                    return Some(data_frame(
                        "deleted",
                        &KeepaliveEvent {
                            ring: ring.to_string(),
                            version: None,
                            fingerprint: None,
                        },
                    ));
                }
                Ok(RingsChange::Closing) | Err(RecvError::Closed) => return None,
                Err(RecvError::Lagged(_)) => {
                    // Deletions may have been missed too: forget what was
                    // sent and list every ring again. If the store cannot
                    // list now, end the stream; the client reconnects.
                    let rings = self.state.service.rings().list().await.ok()?;
                    self.sent.clear();
                    self.queue_all(rings);
                    self.queue
                        .push(Bytes::from_static(b"event: resync\ndata: {}\n\n"));
                }
            }
        }
    }
}

/// The schema of one event of `GET /v1/watch`, as event-stream parsers
/// present it (see [`super::events::WatchEventSchema`]).
pub struct RingsWatchEventSchema;

impl utoipa::PartialSchema for RingsWatchEventSchema {
    fn schema() -> RefOr<Schema> {
        let ring = json!({"$ref": "#/components/schemas/KeepaliveEvent"});
        let empty = json!({"type": "object", "additionalProperties": false});
        let schema: Schema = OneOfBuilder::new()
            .item(event_variant(
                "ring",
                "A ring's newest version: `{\"ring\", \"version\", \"fingerprint\"}`.",
                false,
                ring.clone(),
            ))
            .item(event_variant(
                "deleted",
                "A ring was deleted: `{\"ring\"}` only.",
                false,
                ring,
            ))
            .item(event_variant(
                "resync",
                "The stream fell behind: every ring follows again.",
                false,
                empty.clone(),
            ))
            .item(event_variant(
                "keepalive",
                "Nothing else was sent for the keep-alive interval.",
                false,
                empty,
            ))
            .description(Some(
                "One Server-Sent Event of the rings' watch: `event` names its type, `data` is one line of JSON. Clients ignore event types they do not know.",
            ))
            .into();
        schema.into()
    }
}

impl ToSchema for RingsWatchEventSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("RingsWatchEvent")
    }
}

fn data_frame(event: &str, data: &KeepaliveEvent) -> Bytes {
    frame(event, None, &serde_json::to_vec(data).unwrap_or_default())
}

/// The route of `/v1/watch`, with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(watch_rings))
}
