//! The ring versions the golden files hold: `cache`, whose changes set
//! every field a node, config and policy record carries, and a ring for
//! each placement mode that stores something more (`jump`'s bucket runs,
//! `haproxy`'s server ids, `twemproxy`'s hash tag, `table`'s partition
//! table and moves, `maglev`'s `table_size`).

use std::time::Duration;

use super::{at, id, name};
use crate::placement::{Algorithm, HashFunction, HashKey, HashTag, NodeState, Placement, Ramp};
use crate::placement::{RingConfig, Weight, Zone};
use crate::ring::membership_policy::{ChangeRate, PolicyDelay, UnhealthyFraction};
use crate::ring::{
    ChangeOp, IdempotencyKey, MembershipPolicy, MembershipPolicySpec, NodeRecord, OnLeave,
    RequestedOp, Role, Snapshot,
};

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
pub(in crate::store) fn cache() -> Vec<Snapshot> {
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
pub(in crate::store) fn jump() -> Vec<Snapshot> {
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
pub(in crate::store) fn haproxy() -> Vec<Snapshot> {
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
pub(in crate::store) fn twemproxy() -> Vec<Snapshot> {
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
pub(in crate::store) fn table() -> Vec<Snapshot> {
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
fn maglev() -> Snapshot {
    let first = Snapshot::first(
        name("maglev"),
        RingConfig::new(Algorithm::Maglev),
        Role::Admin,
        at(0),
    );
    first.expect("version 1").0
}

/// The versions every backend's golden files hold, by file name.
pub(in crate::store) fn versions() -> Vec<(&'static str, Snapshot)> {
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
