//! Client acks: one key per client under `{p}/acks/{ring}/`, attached to
//! an etcd lease so that etcd itself removes acks nobody renews, and every
//! instance sees every ack.
//!
//! Granting a lease per ack would cost a round trip and a lease object per
//! report. Instead one lease is shared by all acks sent within a short
//! window (a tenth of the TTL, at least a second) and granted for the TTL
//! plus that window, so no ack's key can vanish before its `expires_at`;
//! it lingers at most one window longer. Listings filter on `expires_at`,
//! so what clients see expires exactly on time either way.

use std::time::{Duration, Instant};

use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use time::OffsetDateTime;
use tokio::sync::Mutex;

use super::layout::{decode, encode};
use super::{unavailable, Ops};
use crate::ring::{ClientAck, RingName};
use crate::store::StoreError;

/// A granted lease and what it is good for.
#[derive(Debug, Clone, Copy)]
struct Lease {
    id: i64,
    /// The ack TTL (whole seconds) this lease was sized for.
    ttl: i64,
    /// Taken before the grant was sent, so the lease surely lives at
    /// least its TTL from here.
    granted: Instant,
    /// How long acks may keep joining it.
    window: Duration,
}

/// The lease acks currently share. A mutex held across the grant, so
/// concurrent acks wait for one grant instead of each sending their own.
#[derive(Debug, Default)]
pub(super) struct Leases(Mutex<Option<Lease>>);

/// Whole seconds from `from` to `to`, rounded up, at least 1.
fn seconds_between(from: OffsetDateTime, to: OffsetDateTime) -> i64 {
    let d = to - from;
    let whole = d.whole_seconds();
    let rounded = if d.subsec_nanoseconds() > 0 {
        whole + 1
    } else {
        whole
    };
    rounded.max(1)
}

impl Ops {
    /// A lease that outlives an ack of `ttl` seconds sent now.
    async fn lease_for(&self, leases: &Leases, ttl: i64) -> Result<i64, StoreError> {
        let mut held = leases.0.lock().await;
        if let Some(l) = *held {
            if l.ttl == ttl && l.granted.elapsed() < l.window {
                return Ok(l.id);
            }
        }
        let window_secs = (ttl / 10).max(1);
        let granted = Instant::now();
        let resp = self
            .client
            .clone()
            .lease_grant(ttl + window_secs, None)
            .await
            .map_err(unavailable)?;
        let lease = Lease {
            id: resp.id(),
            ttl,
            granted,
            window: Duration::from_secs(window_secs.unsigned_abs()),
        };
        *held = Some(lease);
        Ok(lease.id)
    }

    /// Forgets the shared lease (etcd no longer knows it).
    async fn drop_lease(&self, leases: &Leases) {
        *leases.0.lock().await = None;
    }

    /// Puts the ack if the ring's meta key exists, in one transaction, so
    /// an ack racing a deletion cannot outlive the ring.
    pub(super) async fn put_ack(
        &self,
        leases: &Leases,
        ring: &RingName,
        ack: &ClientAck,
    ) -> Result<(), StoreError> {
        let ttl = seconds_between(ack.last_seen, ack.expires_at);
        let value = encode("client ack", ack)?;
        let key = self.keys.ack(ring, &ack.client_id);
        // A second attempt only if etcd lost the shared lease (it expired
        // early, e.g. after a long pause of this process).
        for attempt in 0..2 {
            let lease = self.lease_for(leases, ttl).await?;
            let txn = Txn::new()
                .when([Compare::version(
                    self.keys.meta(ring),
                    CompareOp::Greater,
                    0,
                )])
                .and_then([TxnOp::put(
                    key.clone(),
                    value.clone(),
                    Some(PutOptions::new().with_lease(lease)),
                )]);
            match self.client.clone().txn(txn).await {
                Ok(resp) if resp.succeeded() => return Ok(()),
                Ok(_) => return Err(StoreError::RingNotFound(ring.clone())),
                Err(e) if attempt == 0 && e.to_string().contains("lease not found") => {
                    self.drop_lease(leases).await;
                }
                Err(e) => return Err(unavailable(e)),
            }
        }
        Err(StoreError::unavailable(
            "etcd keeps refusing the ack lease; retry the ack",
        ))
    }

    /// The ring's acks live at `now`, by client id.
    pub(super) async fn list_acks(
        &self,
        ring: &RingName,
        now: OffsetDateTime,
    ) -> Result<Vec<ClientAck>, StoreError> {
        let (kvs, _) = self
            .get(self.keys.acks(ring), GetOptions::new().with_prefix(), 0)
            .await?;
        let mut out = Vec::with_capacity(kvs.len());
        for kv in kvs {
            let ack: ClientAck = decode(kv.key(), kv.value())?;
            // The lease outlives `expires_at` by up to one window.
            if ack.is_live(now) {
                out.push(ack);
            }
        }
        out.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_rounds_up() {
        let t = OffsetDateTime::UNIX_EPOCH;
        assert_eq!(seconds_between(t, t + Duration::from_secs(300)), 300);
        assert_eq!(seconds_between(t, t + Duration::from_millis(1500)), 2);
        assert_eq!(seconds_between(t, t), 1);
    }
}
