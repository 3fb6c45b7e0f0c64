//! Turns an etcd watch on the ring meta keys into [`StoreEvent`]s, so that
//! writes made by every ringd instance on the same etcd reach subscribers.
//!
//! It also feeds `progress`, which tells whether the store is current:
//! the watch reports when etcd confirms it and when it breaks, and the
//! revision up to which it has delivered every event. A stream that stays
//! open but falls behind (its member froze) is caught there too, and made
//! to start over.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::WatchOptions;
use tokio::sync::{broadcast, Notify};

use super::progress::{Progress, PROGRESS_EVERY};
use super::replay::replay;
use super::Ops;
use crate::store::{StoreError, StoreEvent};

/// Pause before re-watching after an error, so a down etcd is not hammered.
/// Short, because the instance is not current until the watch is back.
const RETRY_DELAY: Duration = Duration::from_millis(100);

/// How long starting a watch may take. A request on a connection that a
/// partition cut stays unanswered until TCP gives up; started again, the
/// watch goes out on a connection the member prober has renewed.
const START_TIMEOUT: Duration = Duration::from_secs(1);

/// Why one watch stream ended.
enum End {
    /// The revision to resume from was compacted away.
    Compacted,
    /// The stream broke or etcd refused it; resume from where it stopped.
    Failed(String),
}

/// Follows the meta keys from revision `from` on, forever; spawn it once
/// per store and abort it when the store goes away.
pub(super) async fn follow(
    ops: Ops,
    events: broadcast::Sender<StoreEvent>,
    progress: Arc<Progress>,
    renewed: Arc<Notify>,
    mut from: i64,
) {
    loop {
        let end = watch_once(&ops, &events, &progress, &renewed, &mut from).await;
        progress.disconnected();
        match end {
            End::Compacted => {
                // Events between `from` and now are gone: report every
                // ring's latest version instead. Subscribers ignore
                // versions they already have.
                match relist(&ops, &events).await {
                    Ok(revision) => {
                        progress.applied(revision);
                        from = revision + 1;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "etcd re-list after compaction failed");
                        tokio::time::sleep(RETRY_DELAY).await;
                    }
                }
            }
            End::Failed(e) => {
                tracing::warn!(error = %e, from, "etcd watch interrupted; resuming");
                tokio::time::sleep(RETRY_DELAY).await;
            }
        }
    }
}

/// Publishes the latest snapshot of every ring; returns the revision read.
async fn relist(ops: &Ops, events: &broadcast::Sender<StoreEvent>) -> Result<i64, StoreError> {
    let (_, revision) = ops
        .get(
            ops.keys.rings(),
            etcd_client::GetOptions::new()
                .with_prefix()
                .with_keys_only(),
            0,
        )
        .await?;
    for s in ops.list_rings_at(revision).await? {
        let _ = events.send(StoreEvent::Committed(Arc::new(s)));
    }
    Ok(revision)
}

/// One watch stream, advancing `from` past every event it delivers.
async fn watch_once(
    ops: &Ops,
    events: &broadcast::Sender<StoreEvent>,
    progress: &Progress,
    renewed: &Notify,
    from: &mut i64,
) -> End {
    let options = WatchOptions::new().with_prefix().with_start_revision(*from);
    let mut client = ops.client.clone();
    let start = tokio::time::timeout(START_TIMEOUT, client.watch(ops.keys.rings(), Some(options)));
    let (mut requests, mut stream) = tokio::select! {
        started = start => match started {
            Ok(Ok(s)) => s.split(),
            Ok(Err(e)) => return End::Failed(e.to_string()),
            Err(_) => return End::Failed("etcd did not start the watch within 1 s".into()),
        },
        // A member answers again on new connections: this attempt may be
        // waiting on an old one that the partition left hanging.
        () = renewed.notified() => return End::Failed("an etcd member was reconnected".into()),
    };
    let mut ask = tokio::time::interval(PROGRESS_EVERY);
    ask.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let message = tokio::select! {
            m = stream.message() => m,
            _ = ask.tick() => {
                // etcd answers with a response that carries no events and
                // the revision up to which it has sent all of them; it
                // stays silent while this watch is still catching up.
                if let Err(e) = requests.request_progress().await {
                    return End::Failed(e.to_string());
                }
                continue;
            }
            () = progress.rewatch.notified() => {
                return End::Failed("the watch fell behind the cluster".into());
            }
        };
        let resp = match message {
            Ok(Some(resp)) => resp,
            Ok(None) => return End::Failed("stream closed".into()),
            Err(e) => return End::Failed(e.to_string()),
        };
        if resp.compact_revision() > 0 {
            return End::Compacted;
        }
        if resp.canceled() {
            return End::Failed(format!("watch canceled: {}", resp.cancel_reason()));
        }
        if resp.created() {
            // etcd answers, and the events missed since `from` follow on
            // this stream: not current until they are applied.
            if progress.connected() {
                tracing::info!(from, "etcd watch connected; catching up");
            }
        }
        // A watch resumed after a partition replays many versions at
        // once. Reading them may wait on a connection the partition left
        // hanging: give up when a member is reconnected while the instance
        // is behind, or the watch is found stuck, and resume from the last
        // version delivered. A current instance's replay goes on: members
        // come back while it reads from the others.
        let stuck_on_old_connection = async {
            loop {
                renewed.notified().await;
                if !progress.keeping_up() {
                    return;
                }
            }
        };
        let replayed = tokio::select! {
            r = replay(ops, resp.events()) => r,
            () = stuck_on_old_connection => {
                return End::Failed("an etcd member was reconnected".into());
            }
            () = progress.rewatch.notified() => {
                return End::Failed("the watch fell behind the cluster".into());
            }
        };
        for (revision, event) in replayed {
            match event {
                Ok(Some(event)) => {
                    let _ = events.send(event);
                }
                Ok(None) => {}
                Err(e @ StoreError::Unavailable { .. }) if e.to_string().contains("compacted") => {
                    return End::Compacted
                }
                Err(e) => return End::Failed(e.to_string()),
            }
            *from = revision + 1;
        }
        // Every event up to the response's revision has now been
        // delivered; but the response confirming the watch is sent before
        // the events it replays, so it proves nothing yet.
        if !resp.created() {
            if let Some(h) = resp.header() {
                progress.applied(h.revision());
            }
        }
    }
}
