//! Turns the events of one watch response into store events, in a few
//! reads however many versions the response names.
//!
//! A watch resumed after a partition replays every commit it missed in one
//! response: hundreds of versions of one ring after a few seconds of
//! writes. Read one by one (the meta, the nodes and the record at each
//! revision), they held the instance stale for about a second after the
//! heal. Here the versions of one ring that follow each other in a response
//! are rebuilt from one read of the nodes and one range read of the
//! records, both at the revision of the last of them, by undoing newer
//! versions' before-images, as `Ops::snapshot` does. The version each
//! commit produced is in the meta value the event carries.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use etcd_client::{Event, EventType};
use futures_util::StreamExt;

use super::layout::{decode, undo, RingMeta, VersionRecord};
use super::Ops;
use crate::placement::NodeId;
use crate::ring::{NodeRecord, RingName, Snapshot};
use crate::store::{StoreError, StoreEvent};

/// Groups of one response resolved at once.
const CONCURRENT_GROUPS: usize = 8;

/// What one event of a response produced, at its revision: nothing for a
/// key that names no ring, which is skipped.
pub(super) type Replayed = (i64, Result<Option<StoreEvent>, StoreError>);

/// Events of one response that can be resolved together.
enum Group {
    /// A key that names no ring, at its revision.
    Skipped(i64),
    /// A ring's deletion.
    Deleted(i64, RingName),
    /// Commits to one ring with no deletion between them, oldest first,
    /// each with the meta value it wrote (or why that did not decode).
    Committed(RingName, Vec<(i64, Result<RingMeta, StoreError>)>),
}

/// Everything `events` produced, in revision order. A group that failed
/// reports its error at its first revision, so the caller delivers what
/// precedes it and resumes from there.
pub(super) async fn replay(ops: &Ops, events: &[Event]) -> Vec<Replayed> {
    // The futures are built before they are streamed: a closure that
    // builds them inside the stream makes the watch task's future fail
    // the `Send` check tokio::spawn needs (a known
    // limit of the compiler with higher-ranked lifetimes).
    let resolving: Vec<_> = group(ops, events)
        .into_iter()
        .map(|g| resolve(ops, g))
        .collect();
    let resolved: Vec<Vec<Replayed>> = futures_util::stream::iter(resolving)
        .buffer_unordered(CONCURRENT_GROUPS)
        .collect()
        .await;
    let mut out: Vec<Replayed> = resolved.into_iter().flatten().collect();
    out.sort_by_key(|(revision, _)| *revision);
    out
}

fn group(ops: &Ops, events: &[Event]) -> Vec<Group> {
    let mut groups = Vec::new();
    // The group that takes a ring's next commit, by ring.
    let mut open: HashMap<RingName, usize> = HashMap::new();
    for event in events {
        let Some(kv) = event.kv() else { continue };
        let revision = kv.mod_revision();
        let ring = match ops.keys.ring_of_meta(kv.key()) {
            Ok(ring) => ring,
            Err(e) => {
                tracing::warn!(error = %e, "ignoring a malformed ring key");
                groups.push(Group::Skipped(revision));
                continue;
            }
        };
        match event.event_type() {
            EventType::Delete => {
                open.remove(&ring);
                groups.push(Group::Deleted(revision, ring));
            }
            EventType::Put => {
                let meta = decode::<RingMeta>(kv.key(), kv.value());
                match open.get(&ring) {
                    Some(&i) => match &mut groups[i] {
                        Group::Committed(_, puts) => puts.push((revision, meta)),
                        _ => unreachable!("open groups are commits"),
                    },
                    None => {
                        open.insert(ring.clone(), groups.len());
                        groups.push(Group::Committed(ring, vec![(revision, meta)]));
                    }
                }
            }
        }
    }
    groups
}

async fn resolve(ops: &Ops, group: Group) -> Vec<Replayed> {
    match group {
        Group::Skipped(revision) => vec![(revision, Ok(None))],
        Group::Deleted(revision, ring) => vec![(revision, Ok(Some(StoreEvent::Deleted(ring))))],
        Group::Committed(ring, puts) => {
            let first = puts[0].0;
            match rebuild(ops, &ring, puts).await {
                Ok(snapshots) => snapshots
                    .into_iter()
                    .map(|(r, s)| (r, Ok(Some(StoreEvent::Committed(Arc::new(s))))))
                    .collect(),
                Err(e) => vec![(first, Err(e))],
            }
        }
    }
}

/// The snapshot each commit in `puts` produced.
async fn rebuild(
    ops: &Ops,
    ring: &RingName,
    puts: Vec<(i64, Result<RingMeta, StoreError>)>,
) -> Result<Vec<(i64, Snapshot)>, StoreError> {
    let mut named: Vec<(i64, u64)> = Vec::with_capacity(puts.len());
    for (revision, meta) in puts {
        let version = meta?.latest;
        // A commit that only pruned history names the version before it
        // again; subscribers would ignore it.
        if named.last().is_none_or(|&(_, v)| v != version) {
            named.push((revision, version));
        }
    }
    let (last_revision, newest) = *named.last().expect("a group holds a commit");
    let oldest_named = named[0].1;
    let (nodes, records) = tokio::join!(
        ops.nodes(ring, last_revision),
        ops.versions(ring, oldest_named, newest, last_revision)
    );
    // A version pruned by a later commit of the group is still there at
    // its own revision (etcd keeps those until compaction): read it there.
    let records = match records {
        Ok(records) => records,
        Err(StoreError::Corrupt { .. }) if oldest_named < newest => {
            return one_by_one(ops, ring, &named).await;
        }
        Err(e) => return Err(e),
    };
    rebuild_from(ring, nodes?, records, &named)
}

/// The snapshots of the versions `named` (with the revision of the commit
/// that made each, oldest first), from `nodes`, the nodes of the newest
/// of `records`, and `records`, every version from the oldest named to
/// the newest, oldest first.
fn rebuild_from(
    ring: &RingName,
    mut nodes: BTreeMap<NodeId, NodeRecord>,
    records: Vec<VersionRecord>,
    named: &[(i64, u64)],
) -> Result<Vec<(i64, Snapshot)>, StoreError> {
    let wanted: HashMap<u64, i64> = named.iter().map(|&(r, v)| (v, r)).collect();
    let mut out = Vec::with_capacity(named.len());
    // Newest first: each record's before-images turn the nodes of its
    // version into those of the version before it.
    for mut record in records.into_iter().rev() {
        let before = std::mem::take(&mut record.before);
        if let Some(&revision) = wanted.get(&record.version) {
            let list = nodes.values().cloned().collect();
            out.push((revision, record.into_snapshot(ring.clone(), list)));
        }
        undo(&mut nodes, before);
    }
    if out.len() != named.len() {
        return Err(StoreError::corrupt(format!(
            "ring `{ring}`: commits name {} versions, {} of them retained",
            named.len(),
            out.len()
        )));
    }
    out.reverse();
    Ok(out)
}

/// The slow path: each commit's snapshot read at its own revision.
async fn one_by_one(
    ops: &Ops,
    ring: &RingName,
    named: &[(i64, u64)],
) -> Result<Vec<(i64, Snapshot)>, StoreError> {
    let reads: Vec<_> =
        named
            .iter()
            .map(|&(revision, _)| async move {
                ops.latest_at(ring, revision).await.map(|s| (revision, s))
            })
            .collect();
    futures_util::stream::iter(reads)
        .buffered(CONCURRENT_GROUPS)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests;
