//! `GET /v1/rings/{ring}/watch`: change notifications as Server-Sent Events.
//!
//! Each stream is a small state machine pulled by the connection: it holds
//! a receiver of the ring's newest version and the number of the last
//! version it sent, and nothing else. Event bodies are encoded once per
//! version and shared by every stream (see [`crate::hub`]). A stream
//! whose client stops reading is simply not polled; when it is polled
//! again and finds itself more than [`RECENT_VERSIONS`] behind, it sends
//! one `reset` with the newest snapshot instead of the backlog.

pub mod events;
pub mod feeds;
pub mod rings;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use bytes::Bytes;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::admission::WatcherSlot;
use super::auth::Reader;
use super::extract::{ApiPath, ApiQuery};
use super::paths::ring_name;
use super::problem::{ApiError, Problem};
use super::AppState;
use crate::api::openapi::error_responses::ReadErrors;
use crate::api::openapi::schemas::RingNameSchema;
use crate::hub::{GaugeGuard, Head, Published, PublishedHealth, RECENT_VERSIONS};
use crate::ring::{RingName, Snapshot};
use crate::service::ServiceError;
use crate::wire::schema::VersionCursorSchema;
use crate::wire::{EventDetail, KeepaliveEvent, StaleEvent, WatchQuery};
use events::{event_stream, frame, full_data, health_frame, light_data, WatchEventSchema};
use feeds::{next_health, next_rollout, RolloutFeed};

/// Watch a ring.
///
/// A Server-Sent Events stream (`text/event-stream`; works with
/// `curl -N` and a browser `EventSource`). Events:
///
/// - `snapshot` (`id: <version>`): the first event is the current
///   snapshot, then one per new version, in order, none skipped. The data
///   is the snapshot as `GET …/snapshot` returns it, or a `LightEvent`
///   with `mode=light`.
/// - `reset` (`id: <version>`): the newest snapshot, replacing whatever
///   the client holds: sent when the resume point is older than the
///   retained history or newer than the ring (a recreated ring), and when
///   the client fell more than 64 versions behind by reading too slowly.
/// - `keepalive`: `{"ring","version","fingerprint"}` of the newest version,
///   when nothing else was sent for the keep-alive interval (15 s by
///   default, `--watch-keepalive`).
/// - `deleted`: `{"ring"}` when the ring is deleted; the stream stays
///   open, and a ring created again under the name arrives as `reset`.
/// - `health` (only with `health=true`; no `id`): a `HealthEvent` when a
///   node's health changes (its lease is registered, expires, is
///   registered again or released, or the node is removed). Not a
///   version: resuming with `Last-Event-ID` resumes over versions and
///   replays no health event. Transitions are noticed within about
///   250 ms; a client that reads too slowly loses the oldest ones.
/// - `stale` (no `id`): a `StaleEvent` whenever the instance stops or
///   starts being able to vouch that it is current (etcd unreachable, or
///   its watch behind). While stale, versions made through other
///   instances may be late; `stale: false` comes after every version
///   missed meanwhile. A stream opened stale says so in its
///   `Ringd-Stale` header instead.
/// - `rollout` (only with `rollouts=true`; no `id`): a `RolloutView`, the
///   rollout as `GET …/rollouts/{id}` shows it, whenever a rollout of the
///   ring changes: started, a step committed, waiting for its gate,
///   paused, resumed, advanced, aborting, done, aborted, and when the
///   pending gate's reading moves as clients ack. `revision` grows with
///   each write to the rollout; two events of one revision differ only
///   in `gate`. The first is where the active rollout stands when the
///   stream opens, if the ring has one. A rollout event comes after the
///   version it names. Changes are noticed within about 250 ms on every
///   instance; where several land between two looks the stream gets the
///   newest, and a client that reads too slowly loses the oldest.
///
/// Resume with the `Last-Event-ID` header (sent by `EventSource` on
/// reconnect) or `?after=N`: the stream replays every retained version
/// after N in order, then continues live.
#[utoipa::path(
    get,
    path = "/v1/rings/{ring}/watch",
    tag = "watch",
    params(
        ("ring" = RingNameSchema, Path, description = super::RING_NAME_RULES),
        ("Last-Event-ID" = Option<VersionCursorSchema>, Header, nullable = false, description = "Resume after this version (takes precedence over `after`)."),
        WatchQuery,
    ),
    responses(
        (status = 200, description = "An event stream. Each event is `event: snapshot|reset|keepalive|deleted|stale|health|rollout`, optional `id: <version>`, and one `data:` line of JSON: `SnapshotView` (or `LightEvent` with `mode=light`) for snapshot and reset, `KeepaliveEvent` for keepalive and deleted, `StaleEvent` (without `id`) for stale, `HealthEvent` (without `id`, only with `health=true`) for health, `RolloutView` (without `id`, only with `rollouts=true`) for rollout.", content_type = "text/event-stream", body = WatchEventSchema),
        (status = 400, description = "Invalid ring name, `after`, `mode`, `health`, `rollouts` or Last-Event-ID", body = Problem, content_type = "application/problem+json"),
        ReadErrors,
    ),
    security(("bearer" = []))
)]
pub async fn watch(
    State(state): State<AppState>,
    _: Reader,
    ApiPath(ring): ApiPath<String>,
    ApiQuery(query): ApiQuery<WatchQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let watcher = Watcher::open(state, &ring, query, &headers).await?;
    Ok(event_stream(futures_util::stream::unfold(
        watcher,
        |mut w| async move {
            let frame = w.next_event().await?;
            Some((frame, w))
        },
    )))
}

/// One watch stream's state.
pub struct Watcher {
    state: AppState,
    ring: RingName,
    mode: EventDetail,
    head: watch::Receiver<Head>,
    /// The ring's health transitions, when the client asked for them.
    health: Option<broadcast::Receiver<Arc<PublishedHealth>>>,
    /// The ring's rollout events, when the client asked for them.
    rollouts: Option<RolloutFeed>,
    /// The last version sent (or resumed after).
    sent: Option<u64>,
    /// Versions still to replay, first to last.
    pending: Option<(u64, u64)>,
    told_deleted: bool,
    keepalive_at: Instant,
    /// A resumed stream that has not yet scheduled its replay: it gets
    /// every retained version it asked for, however many.
    catching_up: bool,
    /// Whether the instance is current, as the service follows it.
    currency: watch::Receiver<bool>,
    /// Whether the client was last told (or its header said) that the
    /// stream is stale.
    told_stale: bool,
    /// A change of currency waits to be told, after any version due.
    tell_currency: bool,
    _open: GaugeGuard,
    _slot: WatcherSlot,
}

impl Watcher {
    /// Validates a watch request (everything but the token, which the
    /// caller checks) and starts its stream. Errors are what the client
    /// is told; nothing is sent before this succeeds.
    pub async fn open(
        state: AppState,
        ring: &str,
        query: WatchQuery,
        headers: &HeaderMap,
    ) -> Result<Watcher, ApiError> {
        let ring = ring_name(ring)?;
        let after = super::headers::last_event_id(headers)?.or(query.after);
        // Before any work: a refused watcher costs the store nothing.
        let slot = state.admission.admit()?;
        // Loads the ring into memory (and so into the hub), or 404s.
        state.service.rings().current_at_least(&ring, after).await?;
        let hub = state.service.hub().clone();
        let head = hub.subscribe(&ring);
        // Subscribed before the first event is sent, so that no transition
        // after the snapshot the client starts from is missed.
        let health = (query.health == Some(true)).then(|| hub.subscribe_health(&ring));
        let rollouts = if query.rollouts == Some(true) {
            Some(RolloutFeed::open(&state, &ring).await)
        } else {
            None
        };
        let keepalive = state.settings.keepalive;
        let mut currency = state.service.freshness().currency();
        currency.borrow_and_update();
        let told_stale = !state.service.freshness().is_current();
        Ok(Watcher {
            state,
            ring,
            mode: query.mode.unwrap_or_default(),
            head,
            health,
            rollouts,
            sent: after,
            pending: None,
            told_deleted: false,
            keepalive_at: if after.is_some() {
                // A resuming client at the newest version hears so at once.
                Instant::now()
            } else {
                Instant::now() + keepalive
            },
            catching_up: after.is_some(),
            currency,
            told_stale,
            tell_currency: false,
            _open: GaugeGuard::enter(hub, |s| &s.open_streams),
            _slot: slot,
        })
    }

    /// The next event, framed for the wire; `None` ends the stream.
    pub async fn next_event(&mut self) -> Option<Bytes> {
        let frame = self.next_frame().await?;
        self.keepalive_at = Instant::now() + self.state.settings.keepalive;
        self.state
            .service
            .hub()
            .stats
            .events_sent
            .fetch_add(1, Ordering::Relaxed);
        Some(frame)
    }

    /// The next event to write; waits until there is one. `None` ends
    /// the stream (the server is shutting down).
    async fn next_frame(&mut self) -> Option<Bytes> {
        loop {
            if let Some((next, until)) = self.pending {
                if next > until {
                    self.pending = None;
                    continue;
                }
                match self.version(next).await {
                    Ok(published) => {
                        self.pending = Some((next + 1, until));
                        self.sent = Some(next);
                        return Some(self.snapshot_frame(&published));
                    }
                    // Pruned, or gone with a deleted ring, or the store
                    // is unreachable: start over from the newest.
                    Err(_) => {
                        self.pending = None;
                        if let Some(frame) = self.reset() {
                            return Some(frame);
                        }
                    }
                }
            }
            let head = self.head.borrow_and_update().clone();
            match head {
                Head::At(newest) => {
                    self.told_deleted = false;
                    let v = newest.version();
                    match self.sent {
                        None => {
                            self.sent = Some(v);
                            return Some(self.snapshot_frame(&newest));
                        }
                        Some(s) if s == v => {}
                        Some(s) if s > v => return Some(self.reset_to(&newest)),
                        Some(s) if v - s > RECENT_VERSIONS as u64 && !self.catching_up => {
                            return Some(self.reset_to(&newest))
                        }
                        Some(s) => {
                            // A resumed stream replays from the store's
                            // retained history, not from whatever recent
                            // versions happen to be in memory: if version
                            // s+1 was pruned, the client gets a reset.
                            if std::mem::take(&mut self.catching_up)
                                && self
                                    .state
                                    .service
                                    .rings()
                                    .snapshot(&self.ring, s + 1)
                                    .await
                                    .is_err()
                            {
                                return Some(self.reset_to(&newest));
                            }
                            self.pending = Some((s + 1, v));
                            continue;
                        }
                    }
                }
                Head::Deleted if !self.told_deleted => {
                    self.told_deleted = true;
                    if let Some(feed) = &mut self.rollouts {
                        feed.ring_deleted();
                    }
                    return Some(frame("deleted", None, &self.keepalive_data(None)));
                }
                Head::Closing => return None,
                Head::Deleted | Head::Unknown => {}
            }
            // After the first snapshot (and any replay), before anything
            // live.
            if let Some(first) = self.rollouts.as_mut().and_then(RolloutFeed::take_first) {
                return Some(first);
            }
            // After every version the head holds: coming back current, the
            // versions missed meanwhile go first.
            if std::mem::take(&mut self.tell_currency) {
                return Some(self.stale_frame());
            }
            tokio::select! {
                // Versions first: a health event about a node comes after
                // the version that brought the node in.
                biased;
                changed = self.head.changed() => {
                    // The hub keeps every channel's sender, so this only
                    // fails while shutting down: idle until the
                    // connection is dropped.
                    if changed.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                changed = self.currency.changed() => {
                    if changed.is_err() {
                        std::future::pending::<()>().await;
                    }
                    let stale = !*self.currency.borrow_and_update();
                    if stale != self.told_stale {
                        self.told_stale = stale;
                        self.tell_currency = true;
                    }
                }
                change = next_health(&mut self.health) => {
                    if let Some(change) = change {
                        return Some(change.frame(health_frame));
                    }
                }
                rollout = next_rollout(&mut self.rollouts) => return Some(rollout),
                () = tokio::time::sleep_until(self.keepalive_at) => {
                    let head = self.head.borrow().clone();
                    let newest = match &head { Head::At(p) => Some(&p.snapshot), _ => None };
                    return Some(frame("keepalive", None, &self.keepalive_data(newest.map(|s| &**s))));
                }
            }
        }
    }

    /// Version `v`, from the hub's recent list or from the store.
    async fn version(&self, v: u64) -> Result<Arc<Published>, ServiceError> {
        if let Some(p) = self.state.service.hub().recent(&self.ring, v) {
            return Ok(p);
        }
        Ok(Published::new(
            self.state.service.rings().snapshot(&self.ring, v).await?,
        ))
    }

    /// A reset to the newest version, if the ring has one.
    fn reset(&mut self) -> Option<Bytes> {
        let head = self.head.borrow_and_update().clone();
        match head {
            Head::At(newest) => Some(self.reset_to(&newest)),
            _ => None,
        }
    }

    fn reset_to(&mut self, newest: &Published) -> Bytes {
        self.sent = Some(newest.version());
        self.pending = None;
        self.catching_up = false;
        self.state
            .service
            .hub()
            .stats
            .resets
            .fetch_add(1, Ordering::Relaxed);
        let data = match self.mode {
            EventDetail::Full => full_data(&newest.snapshot),
            EventDetail::Light => light_data(&newest.snapshot),
        };
        frame("reset", Some(newest.version()), &data)
    }

    fn snapshot_frame(&self, p: &Published) -> Bytes {
        let v = p.version();
        match self.mode {
            EventDetail::Full => p.full(|s| frame("snapshot", Some(v), &full_data(s))),
            EventDetail::Light => p.light(|s| frame("snapshot", Some(v), &light_data(s))),
        }
    }

    fn stale_frame(&self) -> Bytes {
        let event = StaleEvent {
            ring: self.ring.to_string(),
            stale: self.told_stale,
        };
        frame(
            "stale",
            None,
            &serde_json::to_vec(&event).unwrap_or_default(),
        )
    }

    fn keepalive_data(&self, newest: Option<&Snapshot>) -> Vec<u8> {
        let event = KeepaliveEvent {
            ring: self.ring.to_string(),
            version: newest.map(|s| s.version),
            fingerprint: newest.map(|s| s.fingerprint.to_string()),
        };
        serde_json::to_vec(&event).unwrap_or_default()
    }
}

/// The routes of `/v1/rings/{ring}/watch`, each with its OpenAPI operation.
pub(super) fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
        .routes(utoipa_axum::routes!(watch))
        .merge(rings::routes())
}
