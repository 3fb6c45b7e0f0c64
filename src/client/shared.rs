//! [`Shared`]: the state a client's background tasks write and every
//! handle reads, and the one swap that moves it to a new view.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use tokio::sync::{broadcast, watch as state};

use super::{RingEvent, RingView, Status, Transport};
use crate::ring::RingName;

/// State the background tasks write and every handle reads.
pub(crate) struct Shared {
    pub(super) ring: RingName,
    pub(super) current: ArcSwapOption<RingView>,
    /// The current view with the one it replaced, swapped as one, so that
    /// [`RingClient::handoff`] never pairs views of different swaps.
    ///
    /// [`RingClient::handoff`]: super::RingClient::handoff
    pub(super) pair: ArcSwapOption<(Arc<RingView>, Option<Arc<RingView>>)>,
    /// Bumped after every swap of `current`, so [`Router`]s can tell with
    /// one atomic load whether their cached view is still current.
    ///
    /// [`Router`]: super::Router
    pub(super) generation: AtomicU64,
    pub(super) status: state::Sender<Status>,
    pub(super) events: broadcast::Sender<RingEvent>,
}

impl Shared {
    pub(super) fn new(ring: RingName) -> Self {
        let (status, _) = state::channel(Status {
            version: None,
            acked: None,
            deleted: false,
            transport: Transport::Connecting,
            server: None,
            last_error: None,
            table_downloads: 0,
            table_moves_applied: 0,
        });
        Self {
            ring,
            current: ArcSwapOption::empty(),
            pair: ArcSwapOption::empty(),
            generation: AtomicU64::new(0),
            status,
            events: broadcast::channel(64).0,
        }
    }

    /// Swaps in `view`; returns the one it replaces.
    pub(super) fn swap(&self, view: Arc<RingView>) -> Option<Arc<RingView>> {
        let version = view.version();
        let previous = self.current.swap(Some(view.clone()));
        self.pair.store(Some(Arc::new((view, previous.clone()))));
        self.generation.fetch_add(1, Ordering::Release);
        self.status.send_modify(|s| {
            s.version = Some(version);
            s.deleted = false;
            // An ack of a higher version belongs to a deleted ring's history.
            if s.acked.is_some_and(|a| a > version) {
                s.acked = None;
            }
        });
        previous
    }
}
