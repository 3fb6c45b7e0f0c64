//! Node addresses: placed by, and encoded, only under the algorithms that
//! place by address; every other fingerprint is what it was before nodes
//! carried one.

use ringd::placement::{Address, Algorithm, Node, NodeId, Placement, RingConfig, Weight};

/// The `i`th of distinct IPv4 addresses, written as Envoy writes them
/// (which `envoy_ring_hash` requires) and taken by every algorithm that
/// places by address.
pub(crate) fn address_number(i: usize) -> Address {
    Address::new(format!("10.0.{}.{}:11211", i / 256, i % 256)).unwrap()
}

fn nodes(with_addresses: bool) -> Vec<Node> {
    (0..6u64)
        .map(|i| {
            let n = Node::new(NodeId::new(format!("n{i}")).unwrap())
                .with_weight(Weight::new(1 + i % 3).unwrap());
            if with_addresses {
                n.with_address(Address::new(format!("10.0.0.{i}:11211")).unwrap())
            } else {
                n
            }
        })
        .collect()
}

#[test]
fn addresses_leave_the_other_algorithms_encodings_unchanged() {
    for algorithm in Algorithm::ALL.into_iter().filter(|a| !a.needs_address()) {
        let config = RingConfig::new(algorithm);
        let without = Placement::build(&config, &nodes(false)).unwrap();
        let with = Placement::build(&config, &nodes(true)).unwrap();
        assert_eq!(without.encode(), with.encode(), "{algorithm}");
        assert_eq!(without.fingerprint(), with.fingerprint(), "{algorithm}");
    }
}

#[test]
fn the_xds_modes_need_addresses_but_are_not_placed_by_them() {
    for algorithm in [Algorithm::EnvoyRingHash, Algorithm::EnvoyMaglev] {
        xds_mode_needs_addresses_but_is_not_placed_by_them(algorithm);
    }
}

fn xds_mode_needs_addresses_but_is_not_placed_by_them(algorithm: Algorithm) {
    let config = RingConfig::new(algorithm);
    let err = Placement::build(&config, &nodes(false)).unwrap_err();
    assert!(
        matches!(err, ringd::placement::PlacementError::MissingAddress { ref node, algorithm: a } if node == "n0" && a == algorithm.name()),
        "{err:?}"
    );
    let here = Placement::build(&config, &nodes(true)).unwrap();
    let moved: Vec<Node> = nodes(true)
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.with_address(Address::new(format!("10.9.0.{i}:80")).unwrap()))
        .collect();
    let there = Placement::build(&config, &moved).unwrap();
    assert_eq!(here.encode(), there.encode());
    assert_eq!(here.fingerprint(), there.fingerprint());
}

#[test]
fn an_address_is_checked_as_a_record_address_is() {
    for bad in ["", "a b", "a\tb", "a\u{7}", &"a".repeat(256)] {
        assert!(Address::new(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        Address::new("10.0.0.1:11211").unwrap().as_str(),
        "10.0.0.1:11211"
    );
    assert!(Address::new("a".repeat(255)).is_ok());
}

#[test]
fn a_record_hands_its_address_to_placement() {
    let mut record = ringd::ring::NodeRecord::new(NodeId::new("a").unwrap());
    assert_eq!(record.to_node().address, None);
    record.address = Some("10.0.0.1:11211".into());
    assert_eq!(
        record.to_node().address,
        Some(Address::new("10.0.0.1:11211").unwrap())
    );
}

fn nginx_node(id: &str, address: &str) -> Node {
    Node::new(NodeId::new(id).unwrap()).with_address(Address::new(address).unwrap())
}

#[test]
fn nginx_keeps_the_point_of_the_lower_index_of_two_equal_ones() {
    // These two addresses share the point 326743374 (spec 5.7, 12).
    let nodes = [
        nginx_node("replacement", "10.0.1.71:11211"),
        nginx_node("original", "10.0.1.249:11211"),
    ];
    let p = Placement::build(&RingConfig::new(Algorithm::Nginx), &nodes).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    for (pos, id) in p.points().unwrap() {
        *counts.entry(id.as_str()).or_insert(0) += 1;
        if pos == 326_743_374 {
            assert_eq!(id.as_str(), "original");
        }
    }
    assert_eq!(counts["original"], 160);
    assert_eq!(counts["replacement"], 159);
}

#[test]
fn nginx_places_by_address_alone() {
    let config = RingConfig::new(Algorithm::Nginx);
    let plain = Placement::build(&config, &[nginx_node("a", "10.0.0.1:80")]).unwrap();
    let keyed = nginx_node("a", "10.0.0.1:80")
        .with_hash_key(ringd::placement::HashKey::new("elsewhere").unwrap());
    let keyed = Placement::build(&config, &[keyed]).unwrap();
    let points = |p: &Placement| p.points().unwrap().map(|(x, _)| x).collect::<Vec<_>>();
    assert_eq!(points(&plain), points(&keyed));
    // A new address is a new server: none of its points stay.
    let moved = Placement::build(&config, &[nginx_node("a", "10.0.0.2:80")]).unwrap();
    let old: std::collections::BTreeSet<u64> = points(&plain).into_iter().collect();
    assert!(points(&moved).iter().all(|x| !old.contains(x)));
}

#[test]
fn nginx_refusals_come_in_the_spec_order() {
    use ringd::placement::PlacementError as E;
    let config = RingConfig::new(Algorithm::Nginx);
    let build = |nodes: &[Node]| Placement::build(&config, nodes).unwrap_err();
    let bare = Node::new(NodeId::new("b").unwrap());
    assert!(matches!(
        build(std::slice::from_ref(&bare)),
        E::MissingAddress { .. }
    ));
    let bad = nginx_node("a", "10.0.0.1");
    assert!(matches!(build(&[bad, bare]), E::MissingAddress { .. }));
    let twice = [
        nginx_node("a", "h:1"),
        nginx_node("b", "h:1"),
        nginx_node("c", "x;:1"),
    ];
    assert!(matches!(build(&twice), E::AddressNotServer { .. }));
    match build(&twice[..2]) {
        E::DuplicateAddress { first, second, .. } => assert_eq!((&*first, &*second), ("a", "b")),
        other => panic!("{other:?}"),
    }
    let ramped = nginx_node("a", "h:1").with_ramp(ringd::placement::Ramp::new(100).unwrap());
    assert!(matches!(build(&[ramped]), E::RampNotSupported { .. }));
    let mut other = RingConfig::new(Algorithm::Ring);
    other.hash = ringd::placement::HashFunction::Crc32;
    assert!(matches!(other.validate(), Err(E::HashNotAccepted { .. })));
}
