//! Node addresses: placed by, and encoded, only under the algorithms that
//! place by address; every other fingerprint is what it was before nodes
//! carried one.

use ringd::placement::{Address, Algorithm, Node, NodeId, Placement, RingConfig, Weight};

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
    for algorithm in Algorithm::ALL
        .into_iter()
        .filter(|a| !a.places_by_address())
    {
        let config = RingConfig::new(algorithm);
        let without = Placement::build(&config, &nodes(false)).unwrap();
        let with = Placement::build(&config, &nodes(true)).unwrap();
        assert_eq!(without.encode(), with.encode(), "{algorithm}");
        assert_eq!(without.fingerprint(), with.fingerprint(), "{algorithm}");
    }
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
