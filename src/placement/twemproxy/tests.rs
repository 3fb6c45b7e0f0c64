use super::*;
use crate::placement::{Address, HashKey, NodeId};

fn node(id: &str, address: &str, hash_key: Option<&str>) -> Node {
    let mut n = Node::new(NodeId::new(id).unwrap());
    n.address = Some(Address::new(address).unwrap());
    n.hash_key = hash_key.map(|k| HashKey::new(k).unwrap());
    n
}

#[test]
fn point_counts_are_nutcrackers_single_precision_multiples_of_four() {
    assert_eq!(point_count(1, 1, 1), 160);
    assert_eq!(point_count(1, 3, 3), 160);
    // 2/3 × 40 × 2 = 53.33…, 1/3 × 40 × 2 = 26.66…: floors, times four.
    assert_eq!(point_count(2, 3, 2), 212);
    assert_eq!(point_count(1, 3, 2), 104);
}

#[test]
fn servers_are_named_by_hash_key_else_host_on_11211_else_host_and_port() {
    let name = |n: &Node| server_name(n).unwrap().unwrap().into_owned();
    assert_eq!(name(&node("a", "10.0.0.1:11211", None)), "10.0.0.1");
    assert_eq!(name(&node("a", "10.0.0.1:6379", None)), "10.0.0.1:6379");
    assert_eq!(
        name(&node("a", "10.0.0.1:6379", Some("cache-1"))),
        "cache-1"
    );
    for (address, hash_key) in [
        ("10.0.0.1:0", None),
        ("10.0.0.1:011211", None),
        ("[::1]:11211", None),
        ("10.0.0.1", None),
        ("10.0.0.1:11211", Some("two words")),
        ("10.0.0.1:11211", Some("a#b")),
    ] {
        assert!(
            server_name(&node("a", address, hash_key)).is_err(),
            "{address} {hash_key:?}"
        );
    }
    // Shorter names sort first, then bytes.
    assert_eq!(name_order("b", "aa"), std::cmp::Ordering::Less);
    assert_eq!(name_order("ab", "aa"), std::cmp::Ordering::Greater);
}

#[test]
fn two_nodes_of_one_name_are_refused_naming_the_field_to_change() {
    let same_address = [node("a", "h:11211", None), node("b", "h:11211", None)];
    assert!(matches!(
        names(&same_address),
        Err(PlacementError::ServerNameTaken {
            field: "address",
            ..
        })
    ));
    let same_key = [node("a", "h:1", Some("x")), node("b", "h:2", Some("x"))];
    assert!(matches!(
        names(&same_key),
        Err(PlacementError::ServerNameTaken {
            field: "hash_key",
            ..
        })
    ));
}

#[test]
fn key_hashes_follow_the_tag_and_leave_the_empty_key_at_zero() {
    let tag = HashTag::new("{}").unwrap();
    let f = HashFunction::Fnv1a64;
    assert_eq!(
        key_hash(f, Some(tag), b"user:{42}:cart"),
        key_hash(f, None, b"42")
    );
    assert_ne!(
        key_hash(f, None, b"user:{42}:cart"),
        key_hash(f, None, b"42")
    );
    assert_eq!(key_hash(f, None, b""), 0);
    assert_eq!(key_hash(f, Some(tag), b"{}"), key_hash(f, None, b"{}"));
}
