//! Ramps: a node taking part of its weight while a rollout brings it in
//! or out (spec 2.2, 5.1, 5.3, 5.5 and 9.1).

use ringd::placement::{
    Algorithm, Node, NodeId, Placement, PlacementError, Ramp, RingConfig, Weight, RAMP_FULL,
};

fn node(id: &str, weight: u64) -> Node {
    Node::new(NodeId::new(id).unwrap()).with_weight(Weight::new(weight).unwrap())
}

fn ramp(parts: u64) -> Ramp {
    Ramp::new(parts).unwrap()
}

fn cluster() -> Vec<Node> {
    (0..10).map(|i| node(&format!("n-{i}"), 1)).collect()
}

fn keys() -> impl Iterator<Item = Vec<u8>> {
    (0..20_000).map(|i| format!("key-{i}").into_bytes())
}

#[test]
fn ramps_out_of_range_are_refused() {
    assert_eq!(
        Ramp::new(0),
        Err(PlacementError::RampOutOfRange { ramp: 0 })
    );
    assert_eq!(
        Ramp::new(65_537),
        Err(PlacementError::RampOutOfRange { ramp: 65_537 })
    );
    assert_eq!(Ramp::new(65_536), Ok(Ramp::FULL));
    assert_eq!(ramp(1).get(), 1);
}

#[test]
fn algorithms_without_ramps_refuse_a_ramped_node_and_name_it() {
    for algorithm in [Algorithm::Ketama, Algorithm::Jump, Algorithm::Table] {
        let mut config = RingConfig::new(algorithm);
        config.partitions = 256;
        let mut nodes = cluster();
        nodes.push(node("n-new", 1).with_ramp(ramp(100)));
        let err = Placement::build(&config, &nodes).unwrap_err();
        assert_eq!(
            err,
            PlacementError::RampNotSupported {
                node: "n-new".into(),
                ramp: 100,
                algorithm: algorithm.name(),
            }
        );
        // A ramp on a node that is not active places nothing: no refusal.
        nodes.pop();
        nodes.push(
            node("n-new", 1)
                .with_ramp(ramp(100))
                .with_state(ringd::placement::NodeState::Draining),
        );
        assert!(Placement::build(&config, &nodes).is_ok());
    }
}

#[test]
fn a_ring_node_places_the_first_ceiling_share_of_its_points() {
    let config = RingConfig::new(Algorithm::Ring);
    // 160 points per weight: weight 2 has 320; at 3/10 (19,661 parts)
    // ⌈320 × 19,661 / 65,536⌉ = ⌈96.0009…⌉ = 97; at 1 part, 1 point.
    for (parts, expected) in [(19_661, 97usize), (1, 1), (32_768, 160), (65_536, 320)] {
        let nodes = vec![node("a", 1), node("b", 2).with_ramp(ramp(parts))];
        let p = Placement::build(&config, &nodes).unwrap();
        let of_b = p.points().unwrap().filter(|(_, id)| id.as_str() == "b");
        assert_eq!(of_b.count(), expected, "ramp {parts}");
    }
    // The points kept are the node's first ones, k = 0 .. count − 1.
    let full = Placement::build(&config, &[node("b", 2)]).unwrap();
    let part = Placement::build(&config, &[node("b", 2).with_ramp(ramp(19_661))]).unwrap();
    let first: std::collections::BTreeSet<u64> = (0..97u32)
        .map(|k| {
            ringd::placement::hash::hash64(
                config.hash,
                &ringd::placement::vnode::point_label("b", k),
            )
        })
        .collect();
    let kept: std::collections::BTreeSet<u64> = part.points().unwrap().map(|(p, _)| p).collect();
    assert_eq!(kept, first);
    assert_eq!(full.points().unwrap().count(), 320);
}

/// Ramping a new node up in five steps: every step moves keys only onto
/// it, and the last step is the unramped placement exactly.
#[test]
fn ramping_up_moves_keys_only_onto_the_ramped_node() {
    for algorithm in [Algorithm::Ring, Algorithm::Rendezvous] {
        let config = RingConfig::new(algorithm);
        let mut before = Placement::build(&config, &cluster()).unwrap();
        for step in 1..=5u64 {
            let parts = (step * u64::from(RAMP_FULL)).div_ceil(5);
            let mut nodes = cluster();
            nodes.push(node("n-new", 1).with_ramp(ramp(parts)));
            let after = Placement::build(&config, &nodes).unwrap();
            for k in keys() {
                let (was, now) = (before.owner(&k).unwrap(), after.owner(&k).unwrap());
                assert!(
                    was == now || now.as_str() == "n-new",
                    "{}: step {step} moved a key from {was} to {now}",
                    algorithm.name()
                );
            }
            before = after;
        }
        let mut direct = cluster();
        direct.push(node("n-new", 1));
        let direct = Placement::build(&config, &direct).unwrap();
        assert_eq!(before.fingerprint(), direct.fingerprint());
        assert_eq!(before.encode(), direct.encode());
    }
}

/// The encoding's flags byte (offset 11) is 0 and node records carry no
/// ramp unless some active node is ramped; then every record carries one.
#[test]
fn only_ramped_placements_encode_ramps() {
    for algorithm in [Algorithm::Ring, Algorithm::Rendezvous, Algorithm::Maglev] {
        let config = RingConfig::new(algorithm);
        let plain = Placement::build(&config, &[node("a", 1), node("b", 1)]).unwrap();
        let ramped = Placement::build(
            &config,
            &[node("a", 1), node("b", 1).with_ramp(ramp(40_000))],
        )
        .unwrap();
        let (p, r) = (plain.encode(), ramped.encode());
        assert_eq!(p[11], 0);
        assert_eq!(r[11], 1);
        assert!(!plain.is_ramped());
        assert!(ramped.is_ramped());
        // Header 20 bytes; then per node: id length, id, zone length 0,
        // weight, and (ramped) the ramp.
        let records = |e: &[u8], ramped: bool| -> Vec<u8> {
            let per = 1 + 1 + 1 + 4 + if ramped { 4 } else { 0 };
            e[20..20 + 2 * per].to_vec()
        };
        assert_eq!(
            records(&p, false),
            [1, b'a', 0, 1, 0, 0, 0, 1, b'b', 0, 1, 0, 0, 0]
        );
        let mut expected = vec![1, b'a', 0, 1, 0, 0, 0];
        expected.extend_from_slice(&RAMP_FULL.to_le_bytes());
        expected.extend_from_slice(&[1, b'b', 0, 1, 0, 0, 0]);
        expected.extend_from_slice(&40_000u32.to_le_bytes());
        assert_eq!(records(&r, true), expected);
    }
}

/// Rendezvous ownership counts weights, in parts of 65,536 once ramped.
#[test]
fn ramped_rendezvous_ownership_counts_scaled_weights() {
    let config = RingConfig::new(Algorithm::Rendezvous);
    let p = Placement::build(
        &config,
        &[node("a", 3), node("b", 1).with_ramp(ramp(16_384))],
    )
    .unwrap();
    let units: Vec<u128> = p.ownership().nodes.iter().map(|n| n.units).collect();
    assert_eq!(units, [3 * 65_536, 16_384]);
    let ratio: Vec<f64> = p
        .ownership()
        .nodes
        .iter()
        .map(|n| n.expected_share)
        .collect();
    assert_eq!(ratio, [196_608.0 / 212_992.0, 16_384.0 / 212_992.0]);
}
