//! The change that once failed: a node added to the lighter of two zones
//! that already hold two replicas of some rows, where the greedy passes
//! find no node for some slots and the augmenting paths complete the
//! table.

use ringd::placement::{Algorithm, Node, NodeId, Placement, RingConfig, Weight, Zone};

use crate::table_rules::assert_valid;

fn node(id: &str, weight: u32, zone: &str) -> Node {
    Node::new(NodeId::new(id).unwrap())
        .with_weight(Weight::new(u64::from(weight)).unwrap())
        .with_zone(Zone::new(zone).unwrap())
}

/// `a0` (weight 3) and `a1`…`a4` in zone `a`, `b0`…`b3` in `b`, `c0`…`c3`
/// in `c`.
fn ring() -> Vec<Node> {
    let mut nodes = vec![node("a0", 3, "a")];
    for (zone, first) in [("a", 1), ("b", 0), ("c", 0)] {
        for i in first..first + 4 {
            nodes.push(node(&format!("{zone}{i}"), 1, zone));
        }
    }
    nodes
}

/// Replicas gained: per partition, the nodes (by id) that did not hold it.
fn gained(before: &Placement, after: &Placement) -> usize {
    let (t, u) = (
        before.partition_table().unwrap(),
        after.partition_table().unwrap(),
    );
    (0..t.partitions() as usize)
        .map(|p| {
            let was: Vec<&NodeId> = t
                .row(p)
                .iter()
                .map(|&x| &before.nodes()[x as usize].id)
                .collect();
            u.row(p)
                .iter()
                .filter(|&&x| !was.contains(&&after.nodes()[x as usize].id))
                .count()
        })
        .sum()
}

fn held(p: &Placement) -> Vec<(String, usize)> {
    let t = p.partition_table().unwrap();
    p.nodes()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let count = t.cells().iter().filter(|&&x| x as usize == i).count();
            (n.id.as_str().to_owned(), count)
        })
        .collect()
}

#[test]
fn a_node_added_to_a_light_zone_gets_a_table_at_every_size() {
    // (partitions, replicas `b-new` gains, replicas gained in all): the
    // quotas force `b-new`'s 1/16 of the slots; the chains of moves that
    // fill the stuck slots cost 5 and 6 more (the exact solver, at 2,048
    // partitions, gains 512).
    for (partitions, forced, moved) in [(2048u32, 512, 517), (4096, 1024, 1030)] {
        let mut config = RingConfig::new(Algorithm::Table);
        config.partitions = partitions;
        config.replication_factor = 4;
        config.zone_aware = true;
        let nodes = ring();
        assert_eq!(nodes.len(), 13);
        let before = Placement::build(&config, &nodes).unwrap();
        let mut more = nodes.clone();
        more.push(node("b-new", 1, "b"));
        let after = before.rebuild(&config, &more).unwrap();
        assert_valid(
            after.partition_table().unwrap(),
            partitions,
            4,
            true,
            after.nodes(),
        );
        // 4 × P slots by weight 16: 3/16 for `a0`, 1/16 for every other.
        let share = partitions as usize / 4;
        let mut want: Vec<(String, usize)> = after
            .nodes()
            .iter()
            .map(|n| (n.id.as_str().to_owned(), share))
            .collect();
        want[0].1 = 3 * share;
        assert_eq!(held(&after), want);
        assert_eq!(held(&after)[5], ("b-new".to_owned(), forced));
        assert_eq!(gained(&before, &after), moved);
    }
}
