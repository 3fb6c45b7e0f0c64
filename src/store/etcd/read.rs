//! Reads. Each operation first reads the ring's meta key and then reads
//! everything else at the etcd revision that read returned, so it sees
//! one consistent state even while other instances commit.

use std::collections::BTreeMap;

use std::future::Future;
use std::time::{Duration, Instant};

use etcd_client::{Client, GetOptions, KeyValue};

use super::layout::{corrupt, decode, undo, RingMeta, VersionRecord};
use super::progress::{Progress, CHECK_TIMEOUT};
use super::{unavailable, Ops};
use crate::placement::NodeId;
use crate::ring::{NodeRecord, RingName, Snapshot};
use crate::store::{HistoryEntry, StoreError};

/// Keys per page of a range read.
const PAGE: i64 = 500;

/// How long one read request may wait for etcd. A read sent to a member
/// that froze, or whose leader did, would otherwise wait out etcd's own
/// request timeout (about 7 s) while the rest of the cluster answers
/// within milliseconds; a read is safe to send again.
const READ_ATTEMPT: Duration = Duration::from_millis(900);

/// Tries per read. The client balances requests over the members (and the
/// member prober takes a frozen one out of rotation within about a
/// second), so a retry normally reaches another member.
const READ_TRIES: usize = 3;

/// Pause after a read failed at once (a member electing has no leader),
/// so the retries span the election instead of all failing within it.
const READ_RETRY_PAUSE: Duration = Duration::from_millis(150);

/// The end of the range of keys starting with `prefix` (which ends in `/`,
/// so bumping its last byte cannot overflow).
fn prefix_end(prefix: &str) -> String {
    let mut end = prefix.to_owned();
    end.pop();
    end.push('0'); // the character after '/'
    end
}

/// A ring's meta as read, with where it was read.
#[derive(Debug, Clone, Copy)]
pub(super) struct MetaRead {
    /// The decoded value.
    pub meta: RingMeta,
    /// The key's last modification, for compare-and-swap.
    pub mod_revision: i64,
    /// The revision every further read of this operation uses.
    pub revision: i64,
}

/// Whether `e` may pass on another try: no leader, a leader change, a
/// dropped connection. A refusal (compacted revision, permission denied)
/// stays one.
pub(super) fn transient(e: &etcd_client::Error) -> bool {
    // gRPC's codes, numbered as in its specification (tonic is not named
    // here: it is the etcd client's dependency, not ringd's).
    const CANCELLED: i32 = 1;
    const UNKNOWN: i32 = 2;
    const DEADLINE_EXCEEDED: i32 = 4;
    const ABORTED: i32 = 10;
    const UNAVAILABLE: i32 = 14;
    match e {
        etcd_client::Error::GRpcStatus(s) => matches!(
            s.code() as i32,
            CANCELLED | UNKNOWN | DEADLINE_EXCEEDED | ABORTED | UNAVAILABLE
        ),
        etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => true,
        _ => false,
    }
}

impl Ops {
    /// Runs the read `op` up to [`READ_TRIES`] times, each bounded by
    /// [`READ_ATTEMPT`]; the last failure is the answer.
    pub(super) async fn attempts<T, F>(&self, op: impl Fn(Client) -> F) -> Result<T, StoreError>
    where
        F: Future<Output = Result<T, etcd_client::Error>>,
    {
        let mut last = None;
        for attempt in 0..READ_TRIES {
            match tokio::time::timeout(READ_ATTEMPT, op(self.client.clone())).await {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => {
                    let again = transient(&e);
                    last = Some(unavailable(e));
                    if !again {
                        break;
                    }
                    if attempt + 1 < READ_TRIES {
                        tokio::time::sleep(READ_RETRY_PAUSE).await;
                    }
                }
                Err(_) => {
                    last = Some(StoreError::unavailable(format!(
                        "etcd did not answer a read within {} ms, {READ_TRIES} times",
                        READ_ATTEMPT.as_millis()
                    )))
                }
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// Range read of `key` at `revision` (0 = now), returning the kvs and
    /// the revision actually read.
    pub(super) async fn get(
        &self,
        key: String,
        options: GetOptions,
        revision: i64,
    ) -> Result<(Vec<KeyValue>, i64), StoreError> {
        self.get_bytes(key.into_bytes(), options, revision).await
    }

    /// [`Ops::get`] with a key that need not be UTF-8.
    async fn get_bytes(
        &self,
        key: Vec<u8>,
        options: GetOptions,
        revision: i64,
    ) -> Result<(Vec<KeyValue>, i64), StoreError> {
        let options = if revision > 0 {
            options.with_revision(revision)
        } else {
            options
        };
        let mut resp = self
            .attempts(|mut c| {
                let (key, options) = (key.clone(), options.clone());
                async move { c.get(key, Some(options)).await }
            })
            .await?;
        let at = resp.header().map_or(revision, |h| h.revision());
        Ok((resp.take_kvs(), if revision > 0 { revision } else { at }))
    }

    /// Every key in `[start, end)` at `revision`, fetched in pages so no
    /// response nears gRPC's message limit however large the ring.
    pub(super) async fn range(
        &self,
        start: String,
        end: String,
        revision: i64,
    ) -> Result<Vec<KeyValue>, StoreError> {
        let mut out = Vec::new();
        let mut from = start.into_bytes();
        loop {
            let options = GetOptions::new().with_range(end.clone()).with_limit(PAGE);
            let (page, _) = self.get_bytes(from.clone(), options, revision).await?;
            let full = page.len() as i64 == PAGE;
            if let Some(last) = page.last() {
                // The smallest key after `last`.
                from = [last.key(), b"\0".as_slice()].concat();
            }
            out.extend(page);
            if !full {
                return Ok(out);
            }
        }
    }

    /// The ring's meta at `revision` (0 = now), or `None` if it does not exist.
    pub(super) async fn meta(
        &self,
        ring: &RingName,
        revision: i64,
    ) -> Result<Option<MetaRead>, StoreError> {
        let (kvs, revision) = self
            .get(self.keys.meta(ring), GetOptions::new(), revision)
            .await?;
        let Some(kv) = kvs.first() else {
            return Ok(None);
        };
        let meta: RingMeta = decode(kv.key(), kv.value())?;
        if meta.oldest == 0 || meta.oldest > meta.latest {
            return Err(StoreError::corrupt(format!(
                "ring `{ring}` claims versions {}..={}",
                meta.oldest, meta.latest
            )));
        }
        Ok(Some(MetaRead {
            meta,
            mod_revision: kv.mod_revision(),
            revision,
        }))
    }

    /// Like [`Ops::meta`], but a missing ring is `RingNotFound`.
    pub(super) async fn existing_meta(
        &self,
        ring: &RingName,
        revision: i64,
    ) -> Result<MetaRead, StoreError> {
        self.meta(ring, revision)
            .await?
            .ok_or_else(|| StoreError::RingNotFound(ring.clone()))
    }

    /// The latest node records of a ring at `revision`, by id.
    pub(super) async fn nodes(
        &self,
        ring: &RingName,
        revision: i64,
    ) -> Result<BTreeMap<NodeId, NodeRecord>, StoreError> {
        let prefix = self.keys.nodes(ring);
        let kvs = self
            .range(prefix.clone(), prefix_end(&prefix), revision)
            .await?;
        let mut out = BTreeMap::new();
        for kv in kvs {
            let node: NodeRecord = decode(kv.key(), kv.value())?;
            // A record under another node's key would silently rename it.
            if kv.key() != self.keys.node(ring, &node.id).as_bytes() {
                return Err(StoreError::corrupt(format!(
                    "`{}` holds node `{}`",
                    String::from_utf8_lossy(kv.key()),
                    node.id
                )));
            }
            out.insert(node.id.clone(), node);
        }
        Ok(out)
    }

    /// Version records `from..=to` of a ring at `revision`, oldest first;
    /// all of them must be there.
    pub(super) async fn versions(
        &self,
        ring: &RingName,
        from: u64,
        to: u64,
        revision: i64,
    ) -> Result<Vec<VersionRecord>, StoreError> {
        let end = self.keys.version(ring, to.saturating_add(1));
        let kvs = self
            .range(self.keys.version(ring, from), end, revision)
            .await?;
        let mut out = Vec::with_capacity(kvs.len());
        for (kv, expected) in kvs.iter().zip(from..=to) {
            let record: VersionRecord = decode(kv.key(), kv.value())?;
            if record.version != expected
                || kv.key() != self.keys.version(ring, expected).as_bytes()
            {
                return Err(StoreError::corrupt(format!(
                    "ring `{ring}`: expected version {expected}, found version {} at `{}`",
                    record.version,
                    String::from_utf8_lossy(kv.key())
                )));
            }
            out.push(record);
        }
        if out.len() as u64 != to - from + 1 {
            return Err(StoreError::corrupt(format!(
                "ring `{ring}` should retain versions {from}..={to} but has {} of them",
                out.len()
            )));
        }
        Ok(out)
    }

    /// The latest snapshot of a ring at `revision` (0 = now).
    pub(super) async fn latest_at(
        &self,
        ring: &RingName,
        revision: i64,
    ) -> Result<Snapshot, StoreError> {
        let m = self.existing_meta(ring, revision).await?;
        let nodes = self.nodes(ring, m.revision).await?;
        let record = self
            .versions(ring, m.meta.latest, m.meta.latest, m.revision)
            .await?
            .pop()
            .ok_or_else(|| StoreError::corrupt(format!("ring `{ring}` has no latest version")))?;
        Ok(record.into_snapshot(ring.clone(), nodes.into_values().collect()))
    }

    /// A retained version, rebuilt by undoing newer versions from the latest nodes.
    pub(super) async fn snapshot(
        &self,
        ring: &RingName,
        version: u64,
    ) -> Result<Snapshot, StoreError> {
        let m = self.existing_meta(ring, 0).await?;
        let RingMeta { latest, oldest } = m.meta;
        if version == 0 || version > latest {
            return Err(StoreError::VersionNotFound { version, latest });
        }
        if version < oldest {
            return Err(StoreError::VersionPruned { version, oldest });
        }
        let mut nodes = self.nodes(ring, m.revision).await?;
        let mut records = self.versions(ring, version, latest, m.revision).await?;
        while records.len() > 1 {
            let newer = records.pop().ok_or_else(|| corrupt("versions", "empty"))?;
            undo(&mut nodes, newer.before);
        }
        let record = records.pop().ok_or_else(|| corrupt("versions", "empty"))?;
        Ok(record.into_snapshot(ring.clone(), nodes.into_values().collect()))
    }

    /// The retained versions of a ring newer than `after`, oldest first.
    pub(super) async fn history(
        &self,
        ring: &RingName,
        after: u64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let m = self.existing_meta(ring, 0).await?;
        let from = m.meta.oldest.max(after.saturating_add(1));
        if from > m.meta.latest {
            return Ok(Vec::new());
        }
        let records = self.versions(ring, from, m.meta.latest, m.revision).await?;
        Ok(records
            .into_iter()
            .map(|r| HistoryEntry {
                version: r.version,
                created_at: r.created_at,
                fingerprint: r.fingerprint,
                change: r.change,
            })
            .collect())
    }

    /// The latest snapshot of every ring, by name, all at one revision.
    pub(super) async fn list_rings(&self) -> Result<Vec<Snapshot>, StoreError> {
        self.list_rings_at(0).await
    }

    /// [`Ops::list_rings`] at `revision` (0 = now).
    pub(super) async fn list_rings_at(&self, revision: i64) -> Result<Vec<Snapshot>, StoreError> {
        let (kvs, revision) = self
            .get(self.keys.rings(), GetOptions::new().with_prefix(), revision)
            .await?;
        let mut out = Vec::with_capacity(kvs.len());
        for kv in kvs {
            let ring = self.keys.ring_of_meta(kv.key())?;
            out.push(self.latest_at(&ring, revision).await?);
        }
        // etcd sorts keys bytewise, as `RingName` compares; sort anyway so
        // the order never depends on the backend.
        out.sort_by(|a, b| a.ring.cmp(&b.ring));
        Ok(out)
    }

    /// Every ring's latest version, by one linearizable read of the meta
    /// keys (which etcd answers only after it has caught up with its
    /// leader), tried once within [`CHECK_TIMEOUT`]. The revision read
    /// confirms the watch's progress too.
    pub(super) async fn confirmed_versions(
        &self,
        progress: &Progress,
    ) -> Result<BTreeMap<RingName, u64>, StoreError> {
        let sent = Instant::now();
        let mut client = self.client.clone();
        let read = client.get(self.keys.rings(), Some(GetOptions::new().with_prefix()));
        let resp = match tokio::time::timeout(CHECK_TIMEOUT, read).await {
            Ok(Ok(resp)) => resp,
            Ok(Err(e)) => return Err(unavailable(e)),
            Err(_) => {
                return Err(StoreError::unavailable(format!(
                    "etcd did not confirm the rings' versions within {} ms",
                    CHECK_TIMEOUT.as_millis()
                )))
            }
        };
        if let Some(h) = resp.header() {
            progress.confirmed(sent, h.revision());
        }
        let mut versions = BTreeMap::new();
        for kv in resp.kvs() {
            let meta: RingMeta = decode(kv.key(), kv.value())?;
            versions.insert(self.keys.ring_of_meta(kv.key())?, meta.latest);
        }
        Ok(versions)
    }
}
