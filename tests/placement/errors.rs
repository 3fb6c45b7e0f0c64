//! Every refusal is a typed error whose message names the offending value.

use ringd::placement::{
    Algorithm, HashFunction, Node, NodeId, Placement, PlacementError, RingConfig, RingConfigSpec,
    Weight, Zone,
};

fn node(id: &str) -> Node {
    Node::new(NodeId::new(id).unwrap())
}

#[test]
fn weights_out_of_range() {
    assert_eq!(
        Weight::new(0).unwrap_err().to_string(),
        "weight 0 is out of range: weights are integers from 1 to 1000000"
    );
    assert!(matches!(
        Weight::new(1_000_001),
        Err(PlacementError::WeightOutOfRange {
            weight: 1_000_001,
            ..
        })
    ));
    assert_eq!(Weight::new(1_000_000).unwrap().get(), 1_000_000);
}

#[test]
fn bad_and_duplicate_ids() {
    assert_eq!(NodeId::new("").unwrap_err(), PlacementError::EmptyNodeId);
    let e = NodeId::new("has space").unwrap_err();
    assert_eq!(
        e.to_string(),
        "node id `has space` is invalid: only ASCII letters, digits, '.', '_', '-' and ':' are allowed"
    );
    assert!(NodeId::new("-leading").is_err());
    assert!(NodeId::new("x".repeat(129)).is_err());
    assert!(NodeId::new("x".repeat(128)).is_ok());
    let e =
        Placement::build(&RingConfig::default(), &[node("a"), node("b"), node("a")]).unwrap_err();
    assert_eq!(e.to_string(), "node id `a` appears more than once");
}

#[test]
fn a_maglev_table_size_must_be_prime_and_fit_the_nodes() {
    let mut c = RingConfig::new(Algorithm::Maglev);
    c.table_size = 65536;
    assert_eq!(
        Placement::build(&c, &[node("a")]).unwrap_err().to_string(),
        "table_size 65536 is not prime: Maglev needs a prime table size such as 65537"
    );
    c.table_size = 3;
    let e = Placement::build(&c, &[node("a"), node("b"), node("c"), node("d")]).unwrap_err();
    assert_eq!(
        e,
        PlacementError::TableSizeOutOfRange {
            size: 3,
            nodes: 4,
            max: 1 << 24
        }
    );
    assert!(e.to_string().contains("table_size 3"));
}

#[test]
fn a_ring_over_the_point_cap_is_refused() {
    let mut c = RingConfig::new(Algorithm::Ring);
    c.vnodes_per_weight = 10_000;
    let heavy = node("a").with_weight(Weight::new(1000).unwrap());
    assert_eq!(
        Placement::build(&c, &[heavy]).unwrap_err().to_string(),
        "the ring would hold 10000000 points, over the cap of 8388608: lower vnodes_per_weight or the weights"
    );
}

#[test]
fn a_table_over_the_cell_cap_is_refused() {
    let mut c = RingConfig::new(Algorithm::Table);
    c.partitions = 1 << 20;
    c.replication_factor = 9;
    let nodes: Vec<Node> = (0..9).map(|i| node(&format!("n{i}"))).collect();
    assert_eq!(
        Placement::build(&c, &nodes).unwrap_err().to_string(),
        "the table would hold 9437184 replica slots (partitions × replicas), over the cap of 8388608: lower partitions or replication_factor"
    );
    // Eight replicas fit exactly.
    c.replication_factor = 8;
    assert!(Placement::build(&c, &nodes[..8]).is_ok());
    // Partitions must be a power of two in range.
    c.partitions = 3 << 10;
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "partitions 3072 is out of range: it must be a power of two from 256 to 1048576"
    );
}

#[test]
fn unknown_algorithm_hash_and_fields() {
    assert_eq!(
        "consistent".parse::<Algorithm>().unwrap_err().to_string(),
        "unknown algorithm `consistent`: expected one of ring, ketama, maglev, jump, rendezvous, table, nginx, haproxy"
    );
    // A proxy's mode takes its proxy's hashes only, and the others none of them.
    let e =
        serde_json::from_str::<RingConfig>(r#"{"algorithm":"haproxy","hash":"xxh3"}"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("algorithm `haproxy` supports the hashes sdbm, djb2, wt6, crc32, not `xxh3`"),
        "{e}"
    );
    let e =
        serde_json::from_str::<RingConfig>(r#"{"algorithm":"ring","hash":"sdbm"}"#).unwrap_err();
    assert!(
        e.to_string().contains(
            "algorithm `ring` supports the hashes xxh3, md5, sha256, murmur3, not `sdbm`"
        ),
        "{e}"
    );
    let e =
        serde_json::from_str::<RingConfig>(r#"{"algorithm":"jump","avalanche":true}"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("avalanche applies to haproxy rings only"),
        "{e}"
    );
    let haproxy: RingConfig = serde_json::from_str(r#"{"algorithm":"haproxy"}"#).unwrap();
    assert_eq!(
        (haproxy.hash, haproxy.avalanche),
        (HashFunction::Sdbm, true)
    );
    assert_eq!(
        "whirlpool".parse::<HashFunction>().unwrap_err().to_string(),
        "unknown hash function `whirlpool`: expected one of xxh3, md5, sha256, murmur3, crc32, sdbm, djb2, wt6, fnv1a_64, fnv1_64, fnv1a_32, fnv1_32, crc32a, one_at_a_time, murmur, jenkins, hsieh"
    );
    let e = serde_json::from_str::<RingConfig>(r#"{"algorithm":"ring","vnodes":3}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `vnodes`"), "{e}");
    let e =
        serde_json::from_str::<RingConfig>(r#"{"algorithm":"ketama","hash":"xxh3"}"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("algorithm `ketama` only supports hash `md5`, not `xxh3`"),
        "{e}"
    );
    let e = serde_json::from_str::<RingConfig>(r#"{"vnodes_per_weight":0}"#).unwrap_err();
    assert!(
        e.to_string()
            .contains("vnodes_per_weight 0 is out of range"),
        "{e}"
    );
    let ok: RingConfig = serde_json::from_str(r#"{"algorithm":"ketama"}"#).unwrap();
    assert_eq!(ok.hash, HashFunction::Md5);
    let spec: RingConfigSpec = serde_json::from_str("{}").unwrap();
    assert_eq!(RingConfig::try_from(spec).unwrap(), RingConfig::default());
}

#[test]
fn zone_awareness_needs_zones() {
    let c = RingConfig {
        zone_aware: true,
        ..RingConfig::default()
    };
    let nodes = [node("a").with_zone(Zone::new("z1").unwrap()), node("b")];
    assert_eq!(
        Placement::build(&c, &nodes).unwrap_err().to_string(),
        "zone_aware is on but active node `b` has no zone"
    );
}

#[test]
fn jump_bucket_orders_are_checked() {
    let c = RingConfig::new(Algorithm::Jump);
    let nodes = [node("a"), node("b")];
    let id = |s: &str| Some(NodeId::new(s).unwrap());
    let e = Placement::build_with_buckets(&c, &nodes, &[id("a"), id("c")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "jump bucket order does not match the active nodes: `c` holds a bucket but is not an active node"
    );
    let e = Placement::build_with_buckets(&c, &nodes, &[id("a"), id("a"), id("b")]).unwrap_err();
    assert!(e
        .to_string()
        .contains("`a` has weight 1 but holds 2 buckets"));
    let ok = Placement::build_with_buckets(&c, &nodes, &[id("b"), None, id("a")]).unwrap();
    assert_eq!(ok.bucket_order().unwrap(), vec![id("b"), None, id("a")]);
}

#[test]
fn haproxy_takes_weights_up_to_256_and_no_ramp() {
    let c = RingConfig::new(Algorithm::Haproxy);
    let heavy =
        |w: u64| Node::new(NodeId::new("heavy").unwrap()).with_weight(Weight::new(w).unwrap());
    assert!(Placement::build(&c, &[heavy(256)]).is_ok());
    assert_eq!(
        Placement::build(&c, &[heavy(257)]).unwrap_err().to_string(),
        "node `heavy` has weight 257, but haproxy takes weights from 1 to 256"
    );
    let ramped = heavy(2).with_ramp(ringd::placement::Ramp::new(100).unwrap());
    assert!(matches!(
        Placement::build(&c, &[ramped]),
        Err(PlacementError::RampNotSupported { .. })
    ));
}
