//! Writers' turns: a queue per ring of keys `{p}/lock/rings/{ring}/{lease}`
//! (a lock, made as etcd's lock API makes one), that a writer joins after
//! it lost a compare-and-swap, so writers to one ring through many
//! instances take turns in the order they asked instead of racing (and
//! the slowest losing every race). The turn is the writer's whose key is
//! the oldest.
//!
//! Every lock this instance takes is attached to its writers' session
//! lease ([`super::session`]). An instance that dies holding a turn frees
//! it when the lease expires, within [`SESSION_TTL`] seconds. A lost lease
//! costs nothing but fairness: the compare-and-swap, not the lock, keeps
//! versions gapless, so a turn is never trusted to exclude anyone.
//!
//! A holder's commit releases its turn in the same transaction (see
//! [`Turns`]), so handing the turn on costs no write of its own: the next
//! writer's wait ends with the commit that ended the previous one's.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, GetOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp,
    TxnOpResponse,
};
use tokio::task::JoinHandle;

use super::session::Session;
#[cfg(doc)]
use super::session::SESSION_TTL;
use super::Ops;
use crate::ring::RingName;
use crate::store::WriteTurn;

/// Longest wait for a turn (and for the session lease): longer than a few
/// holders' commits, shorter than a client's patience. Past it the writer
/// goes on without a turn.
const TURN_WAIT: Duration = Duration::from_secs(2);

/// How long the watch on the writer ahead may stay quiet before the
/// queue is read again: a watch whose member froze says nothing, and a
/// holder's commit normally takes tens of milliseconds.
const QUIET_WATCH: Duration = Duration::from_millis(500);

/// How long releasing a turn may take before the lease's expiry is left
/// to release it.
const UNLOCK_WAIT: Duration = Duration::from_secs(1);

/// The lock keys of the turns this instance holds, by ring (its writers
/// to one ring queue in process first, so it holds at most one per ring),
/// for the commit to release. Shared by every clone of the store's `Ops`.
#[derive(Debug, Clone, Default)]
pub(super) struct Turns(Arc<std::sync::Mutex<TurnKeys>>);

/// What [`Turns`] guards.
#[derive(Debug, Default)]
struct TurnKeys {
    held: HashMap<RingName, Vec<u8>>,
    /// Rings whose writer waited a whole [`TURN_WAIT`] without being given
    /// the turn: it commits without deferring to the queue. A queue that
    /// does not move for that long is held up by a key whose holder is
    /// gone (most often a session lease cut off by an etcd fault, which
    /// etcd keeps alive for a TTL and more after its next election), and
    /// deferring to it would stall every writer of the ring with it.
    passes: HashSet<RingName>,
    /// Unlocks still running. Every turn of this instance on a ring has the
    /// same lock key (the lock's name and the session lease), so the next
    /// turn waits for them: a late unlock would end it.
    unlocking: HashMap<RingName, JoinHandle<()>>,
}

impl Turns {
    /// The lock key of the turn held on `ring`, if any.
    pub(super) fn key(&self, ring: &RingName) -> Option<Vec<u8>> {
        self.0.lock().expect("turns lock").held.get(ring).cloned()
    }

    /// Whether this instance's writer to `ring` waited out its turn.
    pub(super) fn passed(&self, ring: &RingName) -> bool {
        self.0.lock().expect("turns lock").passes.contains(ring)
    }

    /// The turn on `ring` was released by a commit: nothing is left to
    /// unlock when it is dropped.
    pub(super) fn released(&self, ring: &RingName) {
        self.0.lock().expect("turns lock").held.remove(ring);
    }
}

/// Releases the turn on its ring when dropped, unless a commit did.
struct Held {
    client: Client,
    turns: Turns,
    ring: RingName,
    key: Vec<u8>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut turns = self.turns.0.lock().expect("turns lock");
        if turns.held.get(&self.ring) != Some(&self.key) {
            return;
        }
        turns.held.remove(&self.ring);
        let mut client = self.client.clone();
        let key = std::mem::take(&mut self.key);
        // Drop cannot wait: the unlock runs on its own. The next holder
        // anywhere waits for it (or for the lease to expire, if it fails).
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let unlock = runtime.spawn(async move {
                let _ = tokio::time::timeout(UNLOCK_WAIT, client.delete(key, None)).await;
            });
            turns.unlocking.insert(self.ring.clone(), unlock);
        }
    }
}

/// A writer's leave to commit without deferring to `ring`'s queue, after
/// it waited out its turn; ends when dropped.
struct Pass {
    turns: Turns,
    ring: RingName,
}

impl Pass {
    fn new(turns: &Turns, ring: &RingName) -> Self {
        turns
            .0
            .lock()
            .expect("turns lock")
            .passes
            .insert(ring.clone());
        Self {
            turns: turns.clone(),
            ring: ring.clone(),
        }
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        let mut turns = self.turns.0.lock().expect("turns lock");
        turns.passes.remove(&self.ring);
    }
}

/// Why waiting for a turn failed.
#[derive(Debug, thiserror::Error)]
enum TurnError {
    #[error(transparent)]
    Etcd(#[from] etcd_client::Error),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("etcd gave no revision for the writer's lock key")]
    NoRevision,
    #[error("the watch on the writer ahead ended")]
    WatchEnded,
}

impl Ops {
    /// The prefix of `ring`'s queue of writers.
    pub(super) fn turn_queue(&self, ring: &RingName) -> String {
        self.keys.below(&format!("lock/rings/{ring}/"))
    }

    /// Waits up to [`TURN_WAIT`] for `ring`'s turn. After waiting that
    /// long in vain the writer is given a [`Pass`] instead, which lets it
    /// commit as if the queue were empty.
    pub(super) async fn queue(&self, session: &Session, ring: &RingName) -> Option<WriteTurn> {
        let unlocking = self
            .turns
            .0
            .lock()
            .expect("turns lock")
            .unlocking
            .remove(ring);
        if let Some(unlock) = unlocking {
            // Bounded by the unlock's own time-out.
            let _ = unlock.await;
        }
        let prefix = self.turn_queue(ring);
        let lease = match tokio::time::timeout(TURN_WAIT, session.lease(self)).await {
            Ok(Ok(lease)) => lease,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, %ring, "no writers' session; writing without a turn");
                return None;
            }
            Err(_) => {
                tracing::warn!(%ring, "no writers' session in time; writing without waiting for a turn");
                return Some(WriteTurn::new(Pass::new(&self.turns, ring)));
            }
        };
        let key = format!("{prefix}{lease:016x}").into_bytes();
        let turn = Held {
            client: self.client.clone(),
            turns: self.turns.clone(),
            ring: ring.clone(),
            key: key.clone(),
        };
        // Registered before waiting, so a wait given up (or cancelled with
        // the request) unlocks: a key left behind would hold every writer
        // queued after it until the session lease expired.
        self.turns
            .0
            .lock()
            .expect("turns lock")
            .held
            .insert(ring.clone(), key.clone());
        match tokio::time::timeout(TURN_WAIT, self.wait_turn(&prefix, &key, lease)).await {
            Ok(Ok(())) => Some(WriteTurn::new(turn)),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, %ring, "no writers' turn; writing without one");
                None
            }
            Err(_) => {
                tracing::warn!(%ring, "writers' turn not given in time; writing without waiting for it");
                drop(turn);
                Some(WriteTurn::new(Pass::new(&self.turns, ring)))
            }
        }
    }

    /// Puts `key` (on `lease`) in the queue under `prefix` and waits until
    /// no key ahead of it, by creation, is left. The same waiting as etcd's
    /// lock API, except that each watch starts from now: etcd serves a
    /// watch from an older revision from a catch-up loop that runs every
    /// 100 ms, which made every hand-over wait 50 ms on average.
    ///
    /// Every round trip is bounded and tried again, as reads are (see
    /// [`Ops::attempts`]): a request sent to a member that froze would
    /// otherwise hold the writer for all of [`TURN_WAIT`] while the rest of
    /// the cluster answers. For the same reason a watch that stays quiet
    /// for [`QUIET_WATCH`] is not trusted to be alive: the queue is read
    /// again.
    async fn wait_turn(&self, prefix: &str, key: &[u8], lease: i64) -> Result<(), TurnError> {
        // Safe to send again: a try that was applied is found by the next.
        let enqueue = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([
                TxnOp::put(key, "", Some(PutOptions::new().with_lease(lease))),
                TxnOp::get(key, None),
            ])
            .or_else([TxnOp::get(key, None)]);
        let resp = self
            .attempts(|mut c| {
                let enqueue = enqueue.clone();
                async move { c.txn(enqueue).await }
            })
            .await?;
        let mine = resp
            .op_responses()
            .into_iter()
            .find_map(|r| match r {
                TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.create_revision()),
                _ => None,
            })
            .ok_or(TurnError::NoRevision)?;
        // The last writer queued ahead of this one.
        let ahead = GetOptions::new()
            .with_prefix()
            .with_max_create_revision(mine - 1)
            .with_sort(SortTarget::Create, SortOrder::Descend)
            .with_limit(1)
            .with_keys_only();
        loop {
            let resp = self
                .attempts(|mut c| {
                    let ahead = ahead.clone();
                    async move { c.get(prefix, Some(ahead)).await }
                })
                .await?;
            let Some(kv) = resp.kvs().first() else {
                return Ok(());
            };
            let (before, queued) = (kv.key().to_vec(), kv.create_revision());
            // Ends when the key ahead changed, or when its watch went
            // quiet: either way the queue is read again.
            let _ = tokio::time::timeout(QUIET_WATCH, self.watch_ahead(&before, queued)).await;
        }
    }

    /// Watches `before`, the key queued ahead (created at revision
    /// `queued`), until it changes or is gone.
    async fn watch_ahead(&self, before: &[u8], queued: i64) -> Result<(), TurnError> {
        let mut client = self.client.clone();
        let mut watch = client.watch(before.to_vec(), None).await?;
        // Confirmed, then looked at again: a deletion between the read
        // and the watch is not in the watch. The key may also be there
        // again, put by its instance's next writer, queued after this
        // one: only the same creation counts as still ahead.
        loop {
            match watch.message().await? {
                Some(r) if r.created() => break,
                Some(_) => {}
                None => return Err(TurnError::WatchEnded),
            }
        }
        let still = client.get(before.to_vec(), None).await?;
        if still.kvs().first().map(|kv| kv.create_revision()) != Some(queued) {
            return Ok(());
        }
        // Any change to it (its deletion, or its lease's expiry) is a
        // reason to look again.
        loop {
            let Some(r) = watch.message().await? else {
                return Err(TurnError::WatchEnded);
            };
            if !r.events().is_empty() {
                return Ok(());
            }
        }
    }
}
