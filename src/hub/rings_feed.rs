//! The feed of every ring's versions and deletions, for `GET /v1/watch`:
//! what a console or an inventory needs to stay current on all rings with
//! one stream instead of one per ring.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::Hub;
use crate::ring::{RingName, Snapshot};

/// How many changes a slow reader of the feed may fall behind before it
/// loses the oldest (and, told so, lists the rings again).
pub const RINGS_BACKLOG: usize = 1024;

/// One entry of the feed.
#[derive(Debug, Clone)]
pub enum RingsChange {
    /// A ring has a new newest version (or was created).
    Version(Arc<Snapshot>),
    /// A ring was deleted.
    Deleted(RingName),
    /// The server is shutting down: streams end.
    Closing,
}

impl Hub {
    /// A receiver of every ring's changes from now on.
    pub fn subscribe_rings(&self) -> broadcast::Receiver<RingsChange> {
        self.rings_feed().subscribe()
    }

    pub(super) fn rings_feed(&self) -> &broadcast::Sender<RingsChange> {
        self.all_rings
            .get_or_init(|| broadcast::channel(RINGS_BACKLOG).0)
    }

    /// Tells the feed's readers, if any. An error only says nobody listens.
    pub(super) fn tell_rings(&self, change: RingsChange) {
        if let Some(sender) = self.all_rings.get() {
            let _ = sender.send(change);
        }
    }
}
