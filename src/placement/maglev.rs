//! `maglev`: the Maglev lookup table (Eisenbud et al., NSDI 2016), with
//! weighted population the way Envoy's Maglev load balancer fills it.
//!
//! Each node has a permutation of the table's slots,
//! `(offset + skip × j) mod M`, with `offset = xxh64(label, 0) mod M` and
//! `skip = xxh64(label, 1) mod (M − 1) + 1`. Nodes take turns, in node order,
//! claiming their next free slot, in the order of their labels' bytes (ties
//! by id) as Envoy sorts hosts by their hash key. A node of weight `w` takes a turn in
//! round `i` (counting from 1) only while `i × w ≥ target`, where `target`
//! starts at 0 and grows by the largest weight on every turn taken; so the
//! heaviest nodes claim a slot every round and a node of half that weight
//! every other round. Integer arithmetic replaces Envoy's normalized
//! doubles, which is not quite Envoy's table: where a turn ties exactly
//! (`round × w = turns × W`), Envoy's rounded `round × (w / Σ)` can fall
//! just below its summed target and skip the turn that this takes. That
//! happens for small weight sets (weights 5 and 1 at M = 7; about a tenth
//! of tables with weights from 1 to 10), never with equal weights (spec
//! 5.3).

use super::hash::xxh64_seeded;
use super::node::Node;

/// Marks a slot not yet claimed while filling.
const EMPTY: u32 = u32::MAX;

/// Offset and skip of a node's permutation.
pub fn permutation_seeds(label: &str, table_size: u64) -> (u64, u64) {
    let offset = xxh64_seeded(label.as_bytes(), 0) % table_size;
    let skip = xxh64_seeded(label.as_bytes(), 1) % (table_size - 1) + 1;
    (offset, skip)
}

/// Fills a table of `table_size` slots (prime, at least `nodes.len()`)
/// with node indices. `nodes` are active and sorted by id.
pub(crate) fn build(nodes: &[Node], table_size: u64) -> Vec<u32> {
    // Parts of 65,536, so a ramped node takes turns in proportion to
    // `weight × ramp`; alike for every node, the scale changes no
    // comparison, so unramped tables are as they were.
    let weights: Vec<u64> = nodes.iter().map(Node::scaled_weight).collect();
    fill(nodes, &weights, table_size)
}

/// Fills a table as [`build`] does, with `weights[i]` as node `i`'s
/// weight instead of its own: `envoy_maglev` gives its EDS weights.
pub(crate) fn fill(nodes: &[Node], weights: &[u64], table_size: u64) -> Vec<u32> {
    let m = table_size as usize;
    let mut table = vec![EMPTY; m];
    if nodes.is_empty() {
        return Vec::new();
    }
    struct Entry {
        node: u32,
        offset: u64,
        skip: u64,
        next: u64,
        weight: u64,
        target: u64,
    }
    let mut fill_order: Vec<usize> = (0..nodes.len()).collect();
    fill_order.sort_by(|&a, &b| nodes[a].label().cmp(nodes[b].label()).then(a.cmp(&b)));
    let mut entries: Vec<Entry> = fill_order
        .iter()
        .map(|&i| {
            let n = &nodes[i];
            let (offset, skip) = permutation_seeds(n.label(), table_size);
            Entry {
                node: i as u32,
                offset,
                skip,
                next: 0,
                weight: weights[i],
                target: 0,
            }
        })
        .collect();
    let max_weight = entries.iter().map(|e| e.weight).max().unwrap_or(1);
    let mut filled = 0usize;
    let mut round = 1u64;
    while filled < m {
        for e in entries.iter_mut() {
            if filled == m {
                break;
            }
            if round * e.weight < e.target {
                continue;
            }
            e.target += max_weight;
            let mut slot = ((e.offset + e.skip * e.next) % table_size) as usize;
            while table[slot] != EMPTY {
                e.next += 1;
                slot = ((e.offset + e.skip * e.next) % table_size) as usize;
            }
            table[slot] = e.node;
            e.next += 1;
            filled += 1;
        }
        round += 1;
    }
    table
}
