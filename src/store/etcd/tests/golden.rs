//! The etcd store's values against the golden files under
//! `tests/store/golden/etcd/` (see `store/golden.rs`): every kind of value
//! it puts (`docs/etcd-layout.md`), as this build writes it, and the
//! values earlier builds wrote, which must still read.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::ring::Snapshot;
use crate::store::golden::{self, assert_written, at, files_under, old};

use crate::store::etcd::election::Candidate;
use crate::store::etcd::layout::{decode, encode, BeforeImage, RingMeta, VersionRecord};
use crate::store::etcd::lease_keys::{Alive, LeaseRecord};

/// Asserts that `value` is written as the golden file `file` and reads
/// back as itself.
fn assert_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
    file: &str,
    value: &T,
) {
    let bytes = encode(file, value).expect("a value");
    assert_written(file, &bytes);
    assert_eq!(decode::<T>(file.as_bytes(), &bytes).expect(file), *value);
}

/// The before-images a commit of `next` over `previous` records, as
/// `write.rs` makes them: each node added or changed, then each removed.
fn before(previous: Option<&Snapshot>, next: &Snapshot) -> Vec<BeforeImage> {
    let Some(previous) = previous else {
        return Vec::new();
    };
    let old = |id: &crate::placement::NodeId| previous.nodes.iter().find(|n| n.id == *id).cloned();
    let mut images: Vec<BeforeImage> = next
        .nodes
        .iter()
        .filter(|n| old(&n.id).as_ref() != Some(*n))
        .map(|n| BeforeImage {
            id: n.id.clone(),
            node: old(&n.id),
        })
        .collect();
    images.extend(
        previous
            .nodes
            .iter()
            .filter(|n| !next.nodes.iter().any(|m| m.id == n.id))
            .map(|n| BeforeImage {
                id: n.id.clone(),
                node: Some(n.clone()),
            }),
    );
    images
}

/// The version records of the fixed versions, by file name.
fn version_records() -> Vec<(String, Snapshot, VersionRecord)> {
    let chains = [
        golden::cache(),
        golden::jump(),
        golden::table(),
        golden::haproxy(),
        golden::twemproxy(),
    ];
    golden::versions()
        .into_iter()
        .map(|(name, s)| {
            let previous = chains
                .iter()
                .flatten()
                .find(|p| p.ring == s.ring && p.version + 1 == s.version);
            let record = VersionRecord::of(&s, before(previous, &s));
            (format!("etcd/versions.{name}.json"), s, record)
        })
        .collect()
}

/// The current shape's files, other than the version records.
const OTHERS: [&str; 14] = [
    "etcd/ack.json",
    "etcd/ack.proxy.json",
    "etcd/candidate.json",
    "etcd/candidate.leading.json",
    "etcd/instance.json",
    "etcd/lease-alive.json",
    "etcd/lease.json",
    "etcd/lease.released.json",
    "etcd/meta.json",
    "etcd/node.cache-a.json",
    "etcd/node.cache-c.json",
    "etcd/rollout-active.json",
    "etcd/rollout.done.json",
    "etcd/rollout.paused.json",
];

#[test]
fn every_version_record_is_written_as_its_golden_file_and_reads_back() {
    for (file, s, record) in version_records() {
        assert_round_trip(&file, &record);
        let nodes = s.nodes.clone();
        assert_eq!(record.into_snapshot(s.ring.clone(), nodes), s, "{file}");
    }
}

#[test]
fn every_other_value_is_written_as_its_golden_file_and_reads_back() {
    let [a, c] = [0, 1].map(|i| golden::cache()[2].nodes[i].clone());
    assert_eq!((a.id.as_str(), c.id.as_str()), ("cache-a", "cache-c"));
    assert_round_trip(OTHERS[0], &golden::ack());
    assert_round_trip(OTHERS[1], &golden::ack_proxy());
    let candidate = Candidate {
        instance: golden::instance().id,
        url: golden::instance().url,
        since: None,
    };
    assert_round_trip(OTHERS[2], &candidate);
    let leading = Candidate {
        since: Some(at(7)),
        ..candidate
    };
    assert_round_trip(OTHERS[3], &leading);
    assert_round_trip(OTHERS[4], &golden::instance());
    let id = "0123456789abcdef0123456789abcdef".to_owned();
    assert_round_trip(OTHERS[5], &Alive { id: id.clone() });
    let lease = LeaseRecord {
        id,
        ttl_ms: 10_000,
        etcd_lease: 7_587_869_340_238_201_234,
        released_at: None,
    };
    assert_round_trip(OTHERS[6], &lease);
    let released = LeaseRecord {
        released_at: Some(at(1_200)),
        ..lease
    };
    assert_round_trip(OTHERS[7], &released);
    assert_round_trip(
        OTHERS[8],
        &RingMeta {
            latest: 3,
            oldest: 1,
        },
    );
    assert_round_trip(OTHERS[9], &a);
    assert_round_trip(OTHERS[10], &c);
    assert_round_trip(OTHERS[11], &2u64);
    assert_round_trip(OTHERS[12], &golden::rollout_done());
    assert_round_trip(OTHERS[13], &golden::rollout_paused());
}

/// Version records earlier builds wrote, named after the commit that
/// began writing that shape, and the fixed version each holds.
fn old_versions() -> Vec<(&'static str, &'static str)> {
    vec![
        // From the first etcd layout until bucket orders were written as
        // runs: the jump order one entry per bucket (`buckets`),
        // `table_size` in every config, and no policy.
        ("etcd/old/versions.856c94f.jump-3.json", "jump-3"),
        // Runs (`bucket_runs`), still `table_size` and no policy.
        ("etcd/old/versions.c188f17.jump-3.json", "jump-3"),
        // Policies: written out even when the default, until 30ab87b; a
        // `set_config` op records its policy beside the config.
        ("etcd/old/versions.be06a59.jump-3.json", "jump-3"),
        ("etcd/old/versions.be06a59.cache-1.json", "cache-1"),
        // `table` rings, `table_size` still in every config.
        ("etcd/old/versions.71d3aa2.table-3.json", "table-3"),
        // Node ramps, until d638508 wrote `table_size` for `maglev` only.
        ("etcd/old/versions.4d048a9.cache-3.json", "cache-3"),
    ]
}

/// Written from fe4b2ad, the first rollouts, until ae2075d added `rebase`
/// (which reads as false).
const OLD_ROLLOUT: &str = "etcd/old/rollout.fe4b2ad.paused.json";

#[test]
fn values_written_by_earlier_builds_still_read() {
    let records = version_records();
    for (file, name) in old_versions() {
        let (_, _, expected) = records
            .iter()
            .find(|(f, _, _)| *f == format!("etcd/versions.{name}.json"))
            .expect("a fixed version");
        let read: VersionRecord = decode(file.as_bytes(), old(file).as_bytes()).expect(file);
        assert_eq!(read, *expected, "{file}");
    }
    let text = old(OLD_ROLLOUT);
    assert!(!text.contains("rebase"), "{OLD_ROLLOUT}");
    let read: crate::ring::rollout::RolloutRecord =
        decode(OLD_ROLLOUT.as_bytes(), text.as_bytes()).expect(OLD_ROLLOUT);
    assert_eq!(read, golden::rollout_paused());
}

#[test]
fn every_golden_file_is_checked() {
    let mut checked: Vec<String> = version_records().into_iter().map(|(f, _, _)| f).collect();
    checked.extend(OTHERS.map(String::from));
    checked.extend(old_versions().into_iter().map(|(f, _)| f.to_owned()));
    checked.push(OLD_ROLLOUT.to_owned());
    checked.sort();
    assert_eq!(files_under("etcd"), checked);
}
