//! The golden files of the stores' records (`tests/store/golden/`): the
//! fixed values both backends' tests write, and how a file is compared or,
//! with `RINGD_BLESS=1`, rewritten.
//!
//! Two kinds of file. A record as this build writes it is compared byte
//! for byte with what the store's encoder produces, so a stored shape
//! cannot change by accident; `RINGD_BLESS=1 cargo test --release --lib
//! store::` rewrites these from the code, for a change that is meant
//! (read every changed file before committing it: old files must still
//! read). A record in a shape an earlier build wrote (under `old/`) is
//! history: it is never rewritten, and it must still decode to its value.

use std::path::PathBuf;
use std::time::Duration;

use time::OffsetDateTime;

use crate::placement::{Algorithm, Fingerprint, HashFunction, HashKey, HashTag, NodeId};
use crate::placement::{NodeState, Weight, Zone};
use crate::placement::{Placement, Ramp, RingConfig};
use crate::ring::membership_policy::{ChangeRate, PolicyDelay, UnhealthyFraction};
use crate::ring::rollout::{
    Direction, OnGateTimeout, PlannedRollout, PlannedStep, RolloutId, RolloutPolicy, RolloutRecord,
    RolloutState,
};
use crate::ring::{
    ApplyFailure, ChangeOp, ClientAck, ClientId, ClientKind, IdempotencyKey, MembershipPolicy,
    MembershipPolicySpec, NodeRecord, OnLeave, RequestedOp, RingName, Role, Snapshot,
};
use crate::store::leadership::{Instance, InstanceId};

/// The file `rel` under `tests/store/golden/`.
fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/store/golden")
        .join(rel)
}

/// Asserts that `written`, a record as the store writes it, is the golden
/// file `rel`; with `RINGD_BLESS=1`, makes it so.
pub(super) fn assert_written(rel: &str, written: &[u8]) {
    assert!(
        !rel.starts_with("old/") && !rel.contains("/old/"),
        "{rel}: old shapes are history"
    );
    let path = path(rel);
    if std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a directory")).expect("golden directory");
        std::fs::write(&path, written).expect("golden file written");
        return;
    }
    let golden = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with RINGD_BLESS=1 cargo test --release --lib store::",
            path.display()
        )
    });
    assert!(
        golden == written,
        "{rel}: the store now writes\n{}\nwhere it wrote\n{}\nA stored shape changed. If that is \
         meant, keep reading the old shape (add its file under old/) and rewrite this one with \
         RINGD_BLESS=1 cargo test --release --lib store::",
        String::from_utf8_lossy(written),
        String::from_utf8_lossy(&golden),
    );
}

/// The golden file `rel`, a shape an earlier build wrote.
pub(super) fn old(rel: &str) -> String {
    let path = path(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The golden files under `dir` (relative to `tests/store/golden/`),
/// sorted, so a test can show that it reads every one of them.
pub(super) fn files_under(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(path(&d)).expect("golden directory") {
            let entry = entry.expect("golden entry");
            let rel = format!("{d}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().expect("file type").is_dir() {
                todo.push(rel);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// A fixed time: `seconds` after 2026-11-30T07:33:20Z, with nanoseconds.
pub(super) fn at(seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(
        (1_796_024_000 + i128::from(seconds)) * 1_000_000_000 + 123_456_789,
    )
    .expect("a time in range")
}

fn name(s: &str) -> RingName {
    RingName::new(s).expect("a ring name")
}

fn id(s: &str) -> NodeId {
    NodeId::new(s).expect("a node id")
}

fn upsert(node: NodeRecord) -> RequestedOp {
    RequestedOp::Op(ChangeOp::Upsert { node })
}

fn plain(s: &str) -> RequestedOp {
    upsert(NodeRecord::new(id(s)))
}

/// Each version of a ring: version 1, then one per list of ops.
fn chain(
    first: (Snapshot, Placement),
    changes: Vec<(Vec<RequestedOp>, Option<&str>)>,
) -> Vec<Snapshot> {
    let (mut s, mut p) = first;
    let mut out = vec![s.clone()];
    for (i, (ops, key)) in changes.into_iter().enumerate() {
        let reason = key.map(|k| format!("change {k}"));
        let role = if key.is_some() {
            Role::Admin
        } else {
            Role::Anonymous
        };
        let next = s
            .propose(&p, ops, reason, role, at(60 * (i as i64 + 1)))
            .expect("a valid change")
            .expect("a change");
        (s, p) = (next.snapshot, next.placement);
        s.change.idempotency_key =
            key.map(|k| IdempotencyKey::try_from(k.to_owned()).expect("a key"));
        out.push(s.clone());
    }
    out
}

/// Ring `cache` (`ring`): version 1 sets a policy; 2 adds a node with
/// every field, one in a zone and one joining; 3 ramps the joining node
/// up, removes another and patches both configs, recorded as a
/// `set_config` with its policy.
pub(super) fn cache() -> Vec<Snapshot> {
    let policy = MembershipPolicy {
        drain_after: Some(PolicyDelay::new(Duration::from_secs(30)).expect("a delay")),
        forget_after: Some(PolicyDelay::new(Duration::from_secs(600)).expect("a delay")),
        on_leave: OnLeave::Drain,
        max_unhealthy_fraction: UnhealthyFraction::new(0.25).expect("a fraction"),
        max_auto_changes_per_minute: ChangeRate::new(20).expect("a rate"),
        ..MembershipPolicy::default()
    };
    let config = RingConfig {
        vnodes_per_weight: 40,
        ..RingConfig::new(Algorithm::Ring)
    };
    let first = Snapshot::first_with(name("cache"), config, policy, Role::Admin, at(0));
    let mut a = NodeRecord::new(id("cache-a"));
    a.address = Some("10.0.0.1:11211".into());
    a.weight = Weight::new(3).expect("a weight");
    a.zone = Some(Zone::new("eu-1a").expect("a zone"));
    a.labels.insert("rack".into(), "r1".into());
    a.labels.insert("team".into(), "edge".into());
    a.hash_key = Some(HashKey::new("cache-a-old").expect("a hash key"));
    let mut b = NodeRecord::new(id("cache-b"));
    b.zone = Some(Zone::new("eu-1b").expect("a zone"));
    let mut c = NodeRecord::new(id("cache-c"));
    c.state = NodeState::Joining;
    let mut ramped = c.clone();
    ramped.state = NodeState::Active;
    ramped.ramp = Ramp::new(16_384).expect("a ramp");
    let patch = serde_json::from_str(r#"{"replication_factor": 2}"#).expect("a patch");
    let tighter: MembershipPolicySpec =
        serde_json::from_str(r#"{"on_join": "joining"}"#).expect("a policy patch");
    chain(
        first.expect("version 1"),
        vec![
            (vec![upsert(a), upsert(b), upsert(c)], Some("add-abc")),
            (
                vec![
                    upsert(ramped),
                    RequestedOp::Op(ChangeOp::Remove { id: id("cache-b") }),
                    RequestedOp::UpdateConfig(patch, Some(tighter)),
                ],
                Some("ramp-c"),
            ),
        ],
    )
}

/// Ring `jump`: three nodes, then the middle one removed, which leaves a
/// hole in the bucket order. The default policy, no reasons.
pub(super) fn jump() -> Vec<Snapshot> {
    let first = Snapshot::first(
        name("jump"),
        RingConfig::new(Algorithm::Jump),
        Role::Anonymous,
        at(0),
    );
    chain(
        first.expect("version 1"),
        vec![
            (vec![plain("j-a"), plain("j-b"), plain("j-c")], None),
            (
                vec![RequestedOp::Op(ChangeOp::Remove { id: id("j-b") })],
                None,
            ),
        ],
    )
}

/// Ring `haproxy`: three nodes numbered 1 to 3, then `h-b` replaced by
/// `h-d` (hash_key `h-b`) in one change, which takes over id 2.
pub(super) fn haproxy() -> Vec<Snapshot> {
    let first = Snapshot::first(
        name("haproxy"),
        RingConfig::new(Algorithm::Haproxy),
        Role::Admin,
        at(0),
    );
    let mut d = NodeRecord::new(id("h-d"));
    d.hash_key = Some(HashKey::new("h-b").expect("a hash key"));
    d.weight = Weight::new(4).expect("a weight");
    chain(
        first.expect("version 1"),
        vec![
            (vec![plain("h-a"), plain("h-b"), plain("h-c")], None),
            (
                vec![
                    RequestedOp::Op(ChangeOp::Remove { id: id("h-b") }),
                    upsert(d),
                ],
                Some("replace-b"),
            ),
        ],
    )
}

/// Ring `twemproxy` (md5, hash tag `{}`): two servers, one named by its
/// address on 11211, one by its `hash_key`.
pub(super) fn twemproxy() -> Vec<Snapshot> {
    let config = RingConfig {
        hash: HashFunction::Md5,
        hash_tag: Some(HashTag::new("{}").expect("a tag")),
        ..RingConfig::new(Algorithm::Twemproxy)
    };
    let first = Snapshot::first(name("twemproxy"), config, Role::Admin, at(0));
    let server = |node: &str, address: &str| {
        let mut n = NodeRecord::new(id(node));
        n.address = Some(address.to_owned());
        n
    };
    let mut b = server("t-b", "10.0.0.2:22122");
    b.hash_key = Some(HashKey::new("redis-b").expect("a hash key"));
    chain(
        first.expect("version 1"),
        vec![(
            vec![upsert(server("t-a", "10.0.0.1:11211")), upsert(b)],
            None,
        )],
    )
}

/// Ring `table` (256 partitions, one replica): four nodes, then a fifth,
/// whose moves are shorter than the table and so are kept.
pub(super) fn table() -> Vec<Snapshot> {
    let config = RingConfig {
        partitions: 256,
        replication_factor: 1,
        ..RingConfig::new(Algorithm::Table)
    };
    let first = Snapshot::first(name("table"), config, Role::Admin, at(0));
    chain(
        first.expect("version 1"),
        vec![
            (
                vec![plain("t-a"), plain("t-b"), plain("t-c"), plain("t-d")],
                None,
            ),
            (vec![plain("t-e")], Some("add-e")),
        ],
    )
}

/// Ring `maglev`, version 1: the one config that writes `table_size`.
pub(super) fn maglev() -> Snapshot {
    let first = Snapshot::first(
        name("maglev"),
        RingConfig::new(Algorithm::Maglev),
        Role::Admin,
        at(0),
    );
    first.expect("version 1").0
}

/// The versions every backend's golden files hold, by file name.
pub(super) fn versions() -> Vec<(&'static str, Snapshot)> {
    let mut cache = cache().into_iter();
    let [c1, c2, c3] = [(); 3].map(|()| cache.next().expect("three versions"));
    vec![
        ("cache-1", c1),
        ("cache-2", c2),
        ("cache-3", c3),
        ("jump-3", jump().pop().expect("version 3")),
        ("table-3", table().pop().expect("version 3")),
        ("haproxy-3", haproxy().pop().expect("version 3")),
        ("twemproxy-2", twemproxy().pop().expect("version 2")),
        ("maglev-1", maglev()),
    ]
}

fn fingerprint(digit: char) -> Fingerprint {
    digit.to_string().repeat(64).parse().expect("a fingerprint")
}

/// Rollout 2 of ring `cache`: two steps bringing `cache-d` in, the first
/// committed, then paused by an operator.
pub(super) fn rollout_paused() -> RolloutRecord {
    let d = |ramp: u64| {
        let mut n = NodeRecord::new(id("cache-d"));
        n.ramp = Ramp::new(ramp).expect("a ramp");
        ChangeOp::Upsert { node: n }
    };
    let step = |summary: &str, op: ChangeOp, digit: char, moved: f64| PlannedStep {
        summary: summary.into(),
        ops: vec![op],
        fingerprint: fingerprint(digit),
        moved_fraction: moved,
    };
    let mut r = RolloutRecord::planned(PlannedRollout {
        ring: name("cache"),
        created_at: at(600),
        role: Role::Admin,
        reason: Some("add cache-d".into()),
        ops: vec![d(65_536)],
        policy: RolloutPolicy {
            steps: Some(2),
            max_moved_fraction_per_step: None,
            min_dwell: Duration::from_secs(30),
            gate: 0.9,
            gate_timeout: Duration::from_secs(600),
            on_gate_timeout: OnGateTimeout::Proceed,
            max_moves_per_node_per_step: None,
        },
        base_version: 3,
        base_fingerprint: fingerprint('a'),
        target_fingerprint: fingerprint('c'),
        direct_moved_fraction: 0.2,
        steps: vec![
            step("cache-d at 50.0% of weight 1", d(32_768), 'b', 0.1),
            step("cache-d at full weight 1", d(65_536), 'c', 0.1),
        ],
        notes: vec!["ring: each step ramps the changed nodes".into()],
    });
    r.id = RolloutId(2);
    r.log(at(600), "created", "2 steps".into(), Some(Role::Admin));
    r.state = RolloutState::Running;
    r.committed(1, Direction::Forward, 4, fingerprint('b'), at(601));
    r.pause("operator".into(), at(700), Some(Role::Admin));
    r.revision = 4;
    r
}

/// The same rollout resumed after the ring moved, then done.
pub(super) fn rollout_done() -> RolloutRecord {
    let mut r = rollout_paused();
    r.state = RolloutState::Running;
    r.pause_reason = None;
    r.rebase = true;
    r.log(at(800), "resumed", String::new(), Some(Role::Admin));
    r.committed(2, Direction::Forward, 6, fingerprint('c'), at(801));
    r.gate_pending = false;
    r.finish(RolloutState::Done, at(900));
    r.revision = 7;
    r
}

/// A client's ack of `cache` version 3.
pub(super) fn ack() -> ClientAck {
    ClientAck {
        client_id: ClientId::new("web-7").expect("a client id"),
        version: 3,
        fingerprint: fingerprint('d'),
        last_seen: at(1_000),
        expires_at: at(1_060),
        kind: ClientKind::Library,
        failure: None,
    }
}

/// A proxy's ack of `cache` version 3, reporting that version 4 failed
/// its configuration check.
pub(super) fn ack_proxy() -> ClientAck {
    ClientAck {
        client_id: ClientId::new("nginx-1").expect("a client id"),
        kind: ClientKind::Proxy,
        failure: Some(ApplyFailure {
            version: 4,
            error: "nginx: [emerg] host not found in upstream \"cache-d:80\"\n".into(),
        }),
        ..ack()
    }
}

/// An instance as it registers itself.
pub(super) fn instance() -> Instance {
    Instance {
        id: InstanceId::new("ringd-a").expect("an instance id"),
        url: "http://10.0.0.5:7420".into(),
        version: "0.1.0".into(),
        started_at: at(5),
    }
}
