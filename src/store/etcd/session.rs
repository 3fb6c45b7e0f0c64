//! The writers' session: one etcd lease per instance, granted when a
//! writer first queues for a turn (see [`super::lock`]) and again after it
//! was lost, to which every lock key of the instance is attached. It is
//! kept alive while it is used; an instance that dies takes its keys with
//! it when the lease expires.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use etcd_client::Client;
use tokio::sync::Mutex;

use super::Ops;
use crate::store::StoreError;

/// The session lease's TTL in seconds: how long a dead holder can keep
/// others waiting. etcd raises anything below 1.5 × its election timeout.
pub(super) const SESSION_TTL: i64 = 2;

/// How often the session lease is renewed: three times per TTL.
const KEEP_ALIVE: Duration = Duration::from_millis(600);

/// How long a lost session lease's revocation is retried: past its TTL
/// and the extension an etcd election gives it, it is gone anyway.
const REVOKE_FOR: Duration = Duration::from_secs(5);

/// Pause between tries of a revocation.
const REVOKE_PAUSE: Duration = Duration::from_millis(100);

/// How long one try of a revocation may take.
const REVOKE_WAIT: Duration = Duration::from_secs(1);

/// A live session lease.
#[derive(Debug)]
struct Lease {
    id: i64,
    /// Cleared by the keeper once a renewal fails: the lease may be gone.
    alive: Arc<AtomicBool>,
}

/// This instance's session lease, granted when first needed and again
/// after it was lost.
#[derive(Debug, Default)]
pub(super) struct Session(Mutex<Option<Lease>>);

impl Session {
    /// The live lease, granting a new one (and starting its keeper) if
    /// there is none.
    pub(super) async fn lease(&self, ops: &Ops) -> Result<i64, StoreError> {
        let mut held = self.0.lock().await;
        if let Some(l) = held.as_ref().filter(|l| l.alive.load(Ordering::Relaxed)) {
            return Ok(l.id);
        }
        // Tried again like a read: a grant whose answer was lost leaves a
        // lease with no keys, which expires unnoticed.
        let id = ops
            .attempts(|mut c| async move { c.lease_grant(SESSION_TTL, None).await })
            .await?
            .id();
        let client = &ops.client;
        let alive = Arc::new(AtomicBool::new(true));
        tokio::spawn(keep_alive(client.clone(), id, alive.clone()));
        *held = Some(Lease { id, alive });
        Ok(id)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Stops the keeper; the lease then expires on its own.
        if let Some(l) = self.0.get_mut() {
            l.alive.store(false, Ordering::Relaxed);
        }
    }
}

/// Renews lease `id` until a renewal fails or `alive` is cleared.
async fn keep_alive(client: Client, id: i64, alive: Arc<AtomicBool>) {
    let renewed = async {
        let (mut keeper, mut stream) = client.clone().lease_keep_alive(id).await?;
        while alive.load(Ordering::Relaxed) {
            tokio::time::sleep(KEEP_ALIVE).await;
            // A renewal stuck on a frozen member counts as failed, so the
            // next turn gets a fresh lease instead of one that may expire.
            let round = async {
                keeper.keep_alive().await?;
                stream.message().await
            };
            match tokio::time::timeout(KEEP_ALIVE, round).await {
                Ok(Ok(Some(r))) if r.ttl() > 0 => {}
                _ => break,
            }
        }
        Ok::<_, etcd_client::Error>(())
    };
    if let Err(e) = renewed.await {
        tracing::debug!(error = %e, lease = id, "writers' session lease not renewed");
    }
    alive.store(false, Ordering::Relaxed);
    // An unused lease is not left to linger: its lock keys would hold up
    // the writers queued behind them for a full TTL, and longer after an
    // etcd election, which extends every lease. The renewal most often
    // failed because a member went down, so the revocation is tried again
    // until etcd answers (from another member, or a new leader).
    let deadline = tokio::time::Instant::now() + REVOKE_FOR;
    while tokio::time::Instant::now() < deadline {
        match tokio::time::timeout(REVOKE_WAIT, client.clone().lease_revoke(id)).await {
            Ok(Ok(_)) => return,
            // Already gone: expired, or revoked by an earlier try in doubt.
            Ok(Err(e)) if e.to_string().contains("lease not found") => return,
            _ => tokio::time::sleep(REVOKE_PAUSE).await,
        }
    }
}
