//! What a watch stream sends: its query, its event bodies and their
//! framing on the wire.

use std::borrow::Cow;

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::json;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

use crate::hub::{HealthChange, PublishedRollout};
use crate::ring::Snapshot;
use crate::wire::{GateView, HealthEvent, LightEvent, RolloutView, SnapshotView};

/// The data of a full-mode event: the snapshot as `GET …/snapshot` has it.
pub fn full_data(s: &Snapshot) -> Vec<u8> {
    // Serializing plain data into memory cannot fail.
    serde_json::to_vec(&SnapshotView::from(s)).unwrap_or_default()
}

/// The data of a light-mode event.
pub fn light_data(s: &Snapshot) -> Vec<u8> {
    let event = LightEvent {
        ring: s.ring.to_string(),
        version: s.version,
        fingerprint: s.fingerprint.to_string(),
        created_at: s.created_at,
        ops: s.change.ops.len(),
        moved_fraction: s.change.moved_fraction,
        reason: s.change.reason.clone(),
        role: s.change.role.into(),
    };
    serde_json::to_vec(&event).unwrap_or_default()
}

/// The whole `health` event of a transition. It has no `id:` line, so a
/// client's `Last-Event-ID` stays the last version it received.
pub fn health_frame(change: &HealthChange) -> Bytes {
    let event = HealthEvent {
        ring: change.ring.to_string(),
        node: change.node.to_string(),
        health: change.health.map(Into::into),
        previous: change.previous.map(Into::into),
        last_heartbeat: change.last_heartbeat,
        deadline: change.deadline,
        lease_id: change.lease.to_string(),
    };
    frame(
        "health",
        None,
        &serde_json::to_vec(&event).unwrap_or_default(),
    )
}

/// The whole `rollout` event of a rollout: the rollout as `GET
/// …/rollouts/{id}` shows it, as of when it was read. No `id:` line, like
/// `health`.
pub fn rollout_frame(p: &PublishedRollout) -> Bytes {
    let gate = p.gate.as_ref().map(|g| GateView::of(&p.record, g));
    let view = RolloutView::of(&p.record, gate, p.at);
    frame(
        "rollout",
        None,
        &serde_json::to_vec(&view).unwrap_or_default(),
    )
}

/// One SSE event. JSON from serde_json has no raw newlines, so the data
/// fits on one `data:` line.
pub fn frame(event: &str, id: Option<u64>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 48);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(event.as_bytes());
    out.push(b'\n');
    if let Some(id) = id {
        out.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The response of a watch: `frames` as a `text/event-stream` body, not
/// cached, and not buffered by proxies such as nginx.
pub fn event_stream<S>(frames: S) -> Response
where
    S: futures_util::Stream<Item = Bytes> + Send + 'static,
{
    use futures_util::StreamExt;
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        Body::from_stream(frames.map(Ok::<_, std::convert::Infallible>)),
    )
        .into_response()
}

/// The schema of one event of a watch stream, as event-stream parsers
/// present it: `event`, `id`, `retry` and the joined `data` lines. For
/// OpenAPI 3.0 and 3.1 documents this is the `schema` of the
/// `text/event-stream` response (OpenAPI 3.2 would call it `itemSchema`);
/// `data` is JSON whose schema depends on the event type.
pub struct WatchEventSchema;

impl utoipa::PartialSchema for WatchEventSchema {
    fn schema() -> RefOr<Schema> {
        let versioned = json!({"anyOf": [
            {"$ref": "#/components/schemas/SnapshotView"},
            {"$ref": "#/components/schemas/LightEvent"},
        ]});
        let keepalive = json!({"$ref": "#/components/schemas/KeepaliveEvent"});
        let health = json!({"$ref": "#/components/schemas/HealthEvent"});
        let rollout = json!({"$ref": "#/components/schemas/RolloutView"});
        let schema: Schema = OneOfBuilder::new()
            .item(event_variant(
                "snapshot",
                "A version, in order: `SnapshotView` (or `LightEvent` with `mode=light`).",
                true,
                versioned.clone(),
            ))
            .item(event_variant(
                "reset",
                "The newest version, replacing whatever the client holds: `SnapshotView` (or `LightEvent` with `mode=light`).",
                true,
                versioned,
            ))
            .item(event_variant(
                "keepalive",
                "Nothing else was sent for the keep-alive interval: the ring and its newest version and fingerprint.",
                false,
                keepalive.clone(),
            ))
            .item(event_variant(
                "deleted",
                "The ring was deleted: `{\"ring\"}` only.",
                false,
                keepalive,
            ))
            .item(event_variant(
                "health",
                "Only with `health=true`: one node's health changed. Not a version, so no `id`: `Last-Event-ID` stays the last version received.",
                false,
                health,
            ))
            .item(event_variant(
                "rollout",
                "Only with `rollouts=true`: a rollout of the ring changed (or, first, where the active one stands): `RolloutView`. Not a version, so no `id`.",
                false,
                rollout,
            ))
            .description(Some(
                "One Server-Sent Event: `event` names its type, `id` is the version it carries, `data` is one line of JSON. Clients ignore event types they do not know.",
            ))
            .into();
        schema.into()
    }
}

impl ToSchema for WatchEventSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("WatchEvent")
    }
}

/// One event type: `event` fixed to `name`, `data` JSON of `data_schema`.
pub(super) fn event_variant(
    name: &str,
    description: &str,
    has_id: bool,
    data_schema: serde_json::Value,
) -> ObjectBuilder {
    let data = ObjectBuilder::new()
        .schema_type(Type::String)
        .content_media_type("application/json")
        // JSON Schema's `contentSchema`, which utoipa has no field for.
        .extensions(Some(Extensions::from_iter([(
            "contentSchema",
            data_schema,
        )])));
    let mut required = vec!["event", "data"];
    if has_id {
        required.push("id");
    }
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
        .property(
            "event",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([name])),
        )
        .property(
            "id",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[0-9]+$"))
                .description(Some(
                    "The version; parsers repeat the last id on events that carry none.",
                )),
        )
        .property("data", data)
        .property(
            "retry",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0)),
        );
    for field in required {
        object = object.required(field);
    }
    object
}
