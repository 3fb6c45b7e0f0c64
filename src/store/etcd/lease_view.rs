//! Each instance's memory of the etcd leases, kept current by a watch on
//! `{p}/leases/`, so reading health never waits on etcd.
//!
//! A lease's liveness is its alive key's presence: etcd deletes that key
//! when it expires the lease, and the watch brings the deletion to every
//! instance within moments. Renewals are etcd keep-alives, which no watch
//! sees, so only the instance that made the latest renewal knows the exact
//! deadline. Another one estimates it: a lease etcd still holds was
//! renewed within its last TTL, so the estimate is the deadline it last
//! knew, moved on by whole TTLs past now, and never more than one TTL off.

use std::collections::HashMap;
use std::time::Duration;

use etcd_client::{EventType, GetOptions, KeyValue, WatchOptions};
use time::OffsetDateTime;

use super::layout::decode;
use super::lease_keys::{bad_value, Alive, LeaseKey, LeaseRecord};
use super::Ops;
use crate::placement::NodeId;
use crate::ring::{LeaseId, RingName};
use crate::store::{span, Lease, LeaseTable, StoreError};

/// Pause before re-watching after an error.
const RETRY_DELAY: Duration = Duration::from_millis(500);

/// What this instance keeps beside a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Held {
    /// The etcd lease behind it.
    pub etcd_lease: i64,
    /// The record key's `mod_revision` when last seen.
    pub record_rev: i64,
    /// Whether its alive key exists, as of `alive_rev`.
    pub alive: bool,
    /// The revision `alive` was learnt at.
    pub alive_rev: i64,
}

impl Held {
    /// A lease on `etcd_lease` whose record and alive key (there if
    /// `alive`) this instance wrote or read at one `revision`.
    pub(super) fn at(etcd_lease: i64, revision: i64, alive: bool) -> Self {
        Self {
            etcd_lease,
            record_rev: revision,
            alive,
            alive_rev: revision,
        }
    }
}

/// The leases of every ring as this instance knows them.
pub(super) type View = LeaseTable<Held>;

/// One change to the view: what a watch event or a read found.
pub(super) enum Seen {
    /// A record key with this value, at its `mod_revision`.
    Record(RingName, NodeId, LeaseRecord, i64),
    /// A record key deleted (the lease forgotten) at a revision.
    RecordGone(RingName, NodeId, i64),
    /// An alive key holding this ringd lease id, or (`None`) none, as of a
    /// revision.
    Alive(RingName, NodeId, Option<LeaseId>, i64),
}

/// `lease` of `held` as reported at `now`: an alive lease whose known
/// deadline passed was renewed elsewhere, so its deadline is estimated;
/// one etcd no longer holds is past its deadline.
pub(super) fn report(mut lease: Lease, held: &Held, now: OffsetDateTime) -> Lease {
    if lease.released {
        return lease;
    }
    if held.alive && now > lease.deadline {
        let ttl = span(lease.ttl).whole_nanoseconds().max(1);
        let behind = (now - lease.deadline).whole_nanoseconds();
        let ttls = behind.div_euclid(ttl) + 1;
        let ahead = time::Duration::nanoseconds_i128(ttls * ttl);
        lease.deadline += ahead;
        lease.last_heartbeat = lease.deadline - span(lease.ttl);
    } else if !held.alive && lease.deadline >= now {
        lease.deadline = now - time::Duration::microseconds(1);
    }
    lease
}

/// Applies `seen` (in order) to the view, all under one lock, so no
/// reader sees a record without its alive key. `now` dates what is new.
pub(super) fn apply(view: &View, seen: Vec<Seen>, now: OffsetDateTime) {
    view.with(|t| {
        // Records first: a transaction writes a record and its alive key
        // at one revision, and the alive key needs its record.
        let (records, alive): (Vec<_>, Vec<_>) = seen
            .into_iter()
            .partition(|s| !matches!(s, Seen::Alive(..)));
        for s in records.into_iter().chain(alive) {
            match s {
                Seen::Record(ring, node, record, rev) => {
                    let Ok(id) = LeaseId::parse(&record.id) else {
                        tracing::warn!(%ring, %node, "ignoring a lease record with a bad id");
                        continue;
                    };
                    let ttl = Duration::from_millis(record.ttl_ms);
                    let leases = t.entry(ring).or_default();
                    let known = leases.get(&node).filter(|(l, _)| l.id == id);
                    if known.is_some_and(|(_, h)| h.record_rev > rev) {
                        continue;
                    }
                    let (mut lease, mut held) = match known {
                        Some((l, h)) => (l.clone(), *h),
                        None => (
                            Lease::granted(id, ttl, now),
                            Held {
                                etcd_lease: record.etcd_lease,
                                record_rev: rev,
                                alive: false,
                                alive_rev: 0,
                            },
                        ),
                    };
                    lease.ttl = ttl;
                    held.etcd_lease = record.etcd_lease;
                    held.record_rev = rev;
                    if let Some(at) = record.released_at {
                        if !lease.released {
                            lease.release(at);
                        }
                        held.alive = false;
                    }
                    leases.insert(node, (lease, held));
                }
                Seen::RecordGone(ring, node, rev) => {
                    if let Some(leases) = t.get_mut(&ring) {
                        if leases.get(&node).is_some_and(|(_, h)| h.record_rev <= rev) {
                            leases.remove(&node);
                        }
                    }
                }
                Seen::Alive(ring, node, id, rev) => {
                    let entry = t.get_mut(&ring).and_then(|l| l.get_mut(&node));
                    let Some((lease, held)) = entry else { continue };
                    if held.alive_rev > rev {
                        continue;
                    }
                    held.alive_rev = rev;
                    let was_alive = held.alive;
                    held.alive = id == Some(lease.id) && !lease.released;
                    if was_alive && !held.alive && !lease.released {
                        // etcd deleted the alive key just now: the lease
                        // expired about now. The deadline this instance
                        // last knew may be up to a TTL older (another
                        // instance renewed since), and a drain timed from
                        // it would come that much early.
                        lease.deadline = now;
                        lease.last_heartbeat = now - span(lease.ttl);
                    } else if !held.alive && !lease.released {
                        lease.deadline = lease.deadline.min(now);
                    }
                }
            }
        }
    });
}

impl Ops {
    /// What the lease keys under `prefixes` hold at one revision, as
    /// [`Seen`] changes (a record's alive key absent is seen as absent),
    /// with the revision read. Give a record prefix with its alive prefix.
    pub(super) async fn read_leases(
        &self,
        prefixes: &[String],
    ) -> Result<(Vec<Seen>, i64), StoreError> {
        let (_, revision) = self
            .get(
                self.keys.leases(),
                GetOptions::new().with_keys_only().with_limit(1),
                0,
            )
            .await?;
        let mut kvs = Vec::new();
        for prefix in prefixes {
            let mut end = prefix.clone();
            end.pop();
            end.push('0'); // the character after '/'
            kvs.extend(self.range(prefix.clone(), end, revision).await?);
        }
        let mut seen = Vec::new();
        let mut records = Vec::new();
        let mut alive = HashMap::new();
        for kv in &kvs {
            match self.keys.parse_lease_key(kv.key()) {
                Some((LeaseKey::Record, ring, node)) => {
                    let record: LeaseRecord = decode(kv.key(), kv.value())?;
                    records.push((ring.clone(), node.clone()));
                    seen.push(Seen::Record(ring, node, record, kv.mod_revision()));
                }
                Some((LeaseKey::Alive, ring, node)) => {
                    alive.insert((ring, node), alive_id(kv)?);
                }
                None => {}
            }
        }
        for (ring, node) in records {
            let id = alive.get(&(ring.clone(), node.clone())).copied();
            seen.push(Seen::Alive(ring, node, id, revision));
        }
        Ok((seen, revision))
    }

    /// [`Ops::read_leases`] of every ring.
    pub(super) async fn read_all_leases(&self) -> Result<(Vec<Seen>, i64), StoreError> {
        self.read_leases(&[self.keys.leases()]).await
    }
}

/// The ringd lease id an alive key holds.
fn alive_id(kv: &KeyValue) -> Result<LeaseId, StoreError> {
    let alive: Alive = decode(kv.key(), kv.value())?;
    LeaseId::parse(&alive.id).map_err(|e| bad_value(kv.key(), e))
}

/// Keeps `view` current from revision `from` on, forever; spawn it once
/// per store and abort it when the store goes away.
pub(super) async fn follow(ops: Ops, view: std::sync::Arc<View>, mut from: i64) {
    loop {
        match watch_once(&ops, &view, &mut from).await {
            Ok(()) => {
                // Compacted past `from`: read everything again.
                match ops.read_all_leases().await {
                    Ok((seen, revision)) => {
                        apply(&view, seen, ops.clock.now());
                        from = revision + 1;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "etcd lease re-read after compaction failed");
                        tokio::time::sleep(RETRY_DELAY).await;
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, from, "etcd lease watch interrupted; resuming");
                tokio::time::sleep(RETRY_DELAY).await;
            }
        }
    }
}

/// One watch stream, advancing `from` past every event it applies; `Ok`
/// when the revision to resume from was compacted away.
async fn watch_once(ops: &Ops, view: &View, from: &mut i64) -> Result<(), String> {
    let options = WatchOptions::new().with_prefix().with_start_revision(*from);
    let mut stream = ops
        .client
        .clone()
        .watch(ops.keys.leases(), Some(options))
        .await
        .map_err(|e| e.to_string())?;
    loop {
        let resp = match stream.message().await {
            Ok(Some(resp)) => resp,
            Ok(None) => return Err("stream closed".into()),
            Err(e) => return Err(e.to_string()),
        };
        if resp.compact_revision() > 0 {
            return Ok(());
        }
        if resp.canceled() {
            return Err(format!("watch canceled: {}", resp.cancel_reason()));
        }
        let mut seen = Vec::new();
        let mut last = None;
        for event in resp.events() {
            let Some(kv) = event.kv() else { continue };
            let rev = kv.mod_revision();
            last = Some(rev);
            let Some((kind, ring, node)) = ops.keys.parse_lease_key(kv.key()) else {
                continue;
            };
            let put = event.event_type() == EventType::Put;
            let change = match (kind, put) {
                (LeaseKey::Record, true) => match decode(kv.key(), kv.value()) {
                    Ok(record) => Seen::Record(ring, node, record, rev),
                    Err(e) => {
                        tracing::warn!(error = %e, "ignoring a malformed lease record");
                        continue;
                    }
                },
                (LeaseKey::Record, false) => Seen::RecordGone(ring, node, rev),
                (LeaseKey::Alive, true) => Seen::Alive(ring, node, alive_id(kv).ok(), rev),
                (LeaseKey::Alive, false) => Seen::Alive(ring, node, None, rev),
            };
            seen.push(change);
        }
        apply(view, seen, ops.clock.now());
        if let Some(rev) = last {
            *from = rev + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_750_000_000 + secs).unwrap()
    }

    fn held(alive: bool) -> Held {
        Held::at(1, 1, alive)
    }

    #[test]
    fn a_live_lease_renewed_elsewhere_gets_an_estimated_deadline_within_one_ttl() {
        let lease = Lease::granted(LeaseId::from_bits(1), Duration::from_secs(10), t(0));
        assert_eq!(report(lease.clone(), &held(true), t(5)), lease);
        let later = report(lease.clone(), &held(true), t(25));
        assert_eq!((later.deadline, later.last_heartbeat), (t(30), t(20)));
        let exact = report(lease.clone(), &held(true), t(20));
        assert_eq!(exact.deadline, t(30));
        let gone = report(lease, &held(false), t(5));
        assert!(gone.deadline < t(5));
    }

    /// An empty view, and the ring, node, id and record of one lease of 2 s
    /// on etcd lease 9.
    fn one_lease() -> (View, RingName, NodeId, LeaseId, LeaseRecord) {
        let id = LeaseId::from_bits(7);
        let record = LeaseRecord {
            id: id.to_string(),
            ttl_ms: 2_000,
            etcd_lease: 9,
            released_at: None,
        };
        let (ring, node) = (RingName::new("r").unwrap(), NodeId::new("a").unwrap());
        (View::default(), ring, node, id, record)
    }

    #[test]
    fn an_expiry_seen_after_renewals_elsewhere_dates_the_deadline_from_the_event() {
        let (view, ring, node, id, record) = one_lease();
        apply(
            &view,
            vec![
                Seen::Record(ring.clone(), node.clone(), record, 5),
                Seen::Alive(ring.clone(), node.clone(), Some(id), 5),
            ],
            t(0),
        );
        // Renewed through another instance until etcd expired it at t(7):
        // this instance last knew the deadline t(2).
        apply(
            &view,
            vec![Seen::Alive(ring.clone(), node.clone(), None, 6)],
            t(7),
        );
        let (lease, h) = view.get(&ring, &node).unwrap();
        assert_eq!(
            (lease.deadline, lease.last_heartbeat, h.alive),
            (t(7), t(5), false)
        );
    }

    #[test]
    fn events_make_a_lease_alive_expired_and_forgotten() {
        let (view, ring, node, id, record) = one_lease();
        // The alive key listed before its record still counts.
        apply(
            &view,
            vec![
                Seen::Alive(ring.clone(), node.clone(), Some(id), 5),
                Seen::Record(ring.clone(), node.clone(), record.clone(), 5),
            ],
            t(0),
        );
        let (lease, h) = view.get(&ring, &node).unwrap();
        assert_eq!((lease.id, lease.deadline, h.alive), (id, t(2), true));
        apply(
            &view,
            vec![Seen::Alive(ring.clone(), node.clone(), None, 6)],
            t(1),
        );
        let (lease, h) = view.get(&ring, &node).unwrap();
        assert_eq!((lease.deadline, h.alive), (t(1), false));
        // A stale read does not bring it back.
        apply(
            &view,
            vec![Seen::Alive(ring.clone(), node.clone(), Some(id), 5)],
            t(2),
        );
        assert!(!view.get(&ring, &node).unwrap().1.alive);
        apply(
            &view,
            vec![Seen::RecordGone(ring.clone(), node.clone(), 7)],
            t(2),
        );
        assert_eq!(view.get(&ring, &node), None);
    }
}
