//! The events of a watch stream that are not versions and that a client
//! asks for: `health` (`health=true`), a receiver of the ring's health
//! transitions, and `rollout` (`rollouts=true`), a receiver of its rollout
//! events and what the stream last sent of them.

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::broadcast;

use super::events::rollout_frame;
use crate::api::AppState;
use crate::hub::{PublishedHealth, PublishedRollout, RolloutMark};
use crate::ring::RingName;

/// One stream's rollout events.
pub struct RolloutFeed {
    receiver: broadcast::Receiver<Arc<PublishedRollout>>,
    /// What it last sent (or found when it opened): an event that is no
    /// news after it is not sent.
    seen: Option<RolloutMark>,
    /// The active rollout as it stood when the stream opened, sent once
    /// the stream has nothing else to send.
    first: Option<Arc<PublishedRollout>>,
}

impl RolloutFeed {
    /// Subscribes to `ring`'s rollout events, then reads its newest
    /// rollout: an active one is the stream's first rollout event, so a
    /// client that connects (or reconnects) during a rollout learns where
    /// it stands without waiting for its next change. Subscribed first,
    /// so that no change after that reading is missed. A failed read only
    /// loses that first event.
    pub async fn open(state: &AppState, ring: &RingName) -> Self {
        let receiver = state.service.hub().subscribe_rollouts(ring);
        let newest = match state.service.rollouts().event(ring).await {
            Ok(newest) => newest,
            Err(e) => {
                tracing::debug!(ring = %ring, error = %e, "rollout not read for a new watch");
                None
            }
        };
        Self {
            receiver,
            seen: newest.as_ref().map(|p| p.mark()),
            first: newest.filter(|p| p.record.state.is_active()),
        }
    }

    /// The first event, once.
    pub fn take_first(&mut self) -> Option<Bytes> {
        self.first.take().map(|p| p.frame(rollout_frame))
    }

    /// The ring was deleted: one created again under its name numbers its
    /// rollouts from 1 again, which must count as news.
    pub fn ring_deleted(&mut self) {
        self.seen = None;
        self.first = None;
    }

    /// The next event that is news to this stream. Some are lost to a
    /// slow read (the stream goes on with the next); none come once the
    /// hub is gone.
    pub async fn next(&mut self) -> Bytes {
        loop {
            match self.receiver.recv().await {
                Ok(p) => {
                    let mark = p.mark();
                    if mark.is_news_after(self.seen.as_ref()) {
                        self.seen = Some(mark);
                        return p.frame(rollout_frame);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                // The hub keeps every sender; this only happens if it is
                // dropped, and then there is nothing more to hear.
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    }
}

/// The next rollout event of `feed`; never ready without one.
pub async fn next_rollout(feed: &mut Option<RolloutFeed>) -> Bytes {
    match feed {
        Some(feed) => feed.next().await,
        None => std::future::pending().await,
    }
}

/// The next health transition, `None` after some were lost to a slow
/// read (the stream goes on with the next); never ready without a
/// subscription.
pub async fn next_health(
    health: &mut Option<broadcast::Receiver<Arc<PublishedHealth>>>,
) -> Option<Arc<PublishedHealth>> {
    let Some(receiver) = health else {
        return std::future::pending().await;
    };
    match receiver.recv().await {
        Ok(change) => Some(change),
        Err(broadcast::error::RecvError::Lagged(_)) => None,
        // The hub keeps every sender; this only happens if it is dropped,
        // and then there is nothing more to hear.
        Err(broadcast::error::RecvError::Closed) => {
            *health = None;
            None
        }
    }
}
