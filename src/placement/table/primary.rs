//! Which replica of each partition is its primary (the owner): one per
//! partition, each node primary for `⌊e⌋` or `⌈e⌉` partitions (`e` its
//! exact weighted share of them), the previous primary kept where it may
//! stay.
//!
//! A bipartite b-matching of partitions to their own replicas: previous
//! primaries first, up to their `⌈e⌉`; then the member furthest below its
//! `⌊e⌋` (then with the most room below `⌈e⌉`, lowest index among
//! equals); then augmenting paths (Kuhn's algorithm) for the partitions
//! left, which hand primaries along a chain of partitions until a node
//! with room takes one; last, a node still below its `⌊e⌋` takes one from
//! a node above its own along the shortest such chain. Which nodes round
//! up is left free, so that as few primaries move as the bounds allow.

use std::collections::VecDeque;

use super::assign::OPEN;

/// The primary of every partition, as a slot index into its row.
/// `rows` holds `replicas` nodes per partition; node `i` should be primary
/// for between `bounds[i].0` and `bounds[i].1` partitions (the lower
/// bounds add up to at most the number of partitions, the upper ones to
/// at least it); `previous[p]` is the previous primary or [`OPEN`].
pub(crate) fn primaries(
    rows: &[u32],
    replicas: usize,
    bounds: &[(u64, u64)],
    previous: &[u32],
) -> Vec<u8> {
    let quotas: Vec<u64> = bounds.iter().map(|b| b.1).collect();
    let quotas = &quotas[..];
    let partitions = rows.len().checked_div(replicas).unwrap_or(0);
    let mut slot = vec![u8::MAX; partitions];
    let mut count = vec![0u64; quotas.len()];
    let row = |p: usize| &rows[p * replicas..(p + 1) * replicas];
    for (p, chosen) in slot.iter_mut().enumerate() {
        let prev = previous.get(p).copied().unwrap_or(OPEN);
        if prev == OPEN {
            continue;
        }
        if let Some(s) = row(p).iter().position(|&x| x == prev) {
            if count[prev as usize] < quotas[prev as usize] {
                *chosen = s as u8;
                count[prev as usize] += 1;
            }
        }
    }
    for (p, chosen) in slot.iter_mut().enumerate() {
        if *chosen != u8::MAX {
            continue;
        }
        let best = row(p)
            .iter()
            .enumerate()
            .filter(|(_, &x)| count[x as usize] < quotas[x as usize])
            .max_by_key(|(_, &x)| {
                let (lo, hi) = bounds[x as usize];
                let c = count[x as usize];
                (lo.saturating_sub(c), hi - c, std::cmp::Reverse(x))
            });
        if let Some((s, &x)) = best {
            *chosen = s as u8;
            count[x as usize] += 1;
        }
    }
    // Partitions of each node's primaries, for the augmenting search.
    let mut primary_of: Vec<Vec<usize>> = vec![Vec::new(); quotas.len()];
    for p in 0..partitions {
        if slot[p] != u8::MAX {
            primary_of[row(p)[slot[p] as usize] as usize].push(p);
        }
    }
    for p in 0..partitions {
        if slot[p] != u8::MAX {
            continue;
        }
        if !augment(
            p,
            rows,
            replicas,
            quotas,
            &mut slot,
            &mut count,
            &mut primary_of,
        ) {
            // No exact assignment exists for this partition: its first
            // replica takes it, over its quota.
            slot[p] = 0;
            let x = row(p)[0] as usize;
            count[x] += 1;
            primary_of[x].push(p);
        }
    }
    raise_to_floors(rows, replicas, bounds, &mut slot, &mut count);
    slot
}

/// Brings every node below its lower bound up to it: breadth-first from
/// the node, through the partitions it holds a replica of but is not
/// primary for, to their primaries, and on from those, until a primary
/// above its own lower bound is reached; each partition on that chain then
/// takes the node it was reached from as its primary.
fn raise_to_floors(
    rows: &[u32],
    replicas: usize,
    bounds: &[(u64, u64)],
    slot: &mut [u8],
    count: &mut [u64],
) {
    let nodes = bounds.len();
    if !(0..nodes).any(|x| count[x] < bounds[x].0) {
        return;
    }
    let partitions = slot.len();
    let mut member_of: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for p in 0..partitions {
        for &x in &rows[p * replicas..(p + 1) * replicas] {
            member_of[x as usize].push(p);
        }
    }
    let primary = |slot: &[u8], p: usize| rows[p * replicas + slot[p] as usize] as usize;
    for start in 0..nodes {
        while count[start] < bounds[start].0 {
            // For each node reached: the node and partition it came from.
            let mut came: Vec<Option<(usize, usize)>> = vec![None; nodes];
            let mut seen = vec![false; nodes];
            seen[start] = true;
            let mut queue = VecDeque::from([start]);
            let mut end = None;
            'search: while let Some(x) = queue.pop_front() {
                for &p in &member_of[x] {
                    let z = primary(slot, p);
                    if seen[z] {
                        continue;
                    }
                    seen[z] = true;
                    came[z] = Some((x, p));
                    if count[z] > bounds[z].0 {
                        end = Some(z);
                        break 'search;
                    }
                    queue.push_back(z);
                }
            }
            // Lower bounds that add up to at most the partitions can
            // always be met by some chain; should none exist, the node
            // stays below rather than the table failing.
            let Some(mut z) = end else { break };
            count[z] -= 1;
            count[start] += 1;
            while let Some((x, p)) = came[z] {
                let s = rows[p * replicas..(p + 1) * replicas]
                    .iter()
                    .position(|&m| m as usize == x)
                    .expect("the chain's node holds a replica of the partition");
                slot[p] = s as u8;
                z = x;
                if z == start {
                    break;
                }
            }
        }
    }
}

/// Breadth-first search for an augmenting path from the partition `start`
/// without a primary: partition → one of its replicas → (if that node has
/// no primary left to take) one of the partitions it is primary for → ….
fn augment(
    start: usize,
    rows: &[u32],
    replicas: usize,
    quotas: &[u64],
    slot: &mut [u8],
    count: &mut [u64],
    primary_of: &mut [Vec<usize>],
) -> bool {
    let partitions = slot.len();
    // For each partition reached: the partition it was reached from and
    // the slot to give it.
    let mut came: Vec<Option<(usize, u8)>> = vec![None; partitions];
    let mut seen_node = vec![false; quotas.len()];
    let mut queue = VecDeque::from([start]);
    let mut visited = vec![false; partitions];
    visited[start] = true;
    while let Some(p) = queue.pop_front() {
        for s in 0..replicas {
            let x = rows[p * replicas + s] as usize;
            if seen_node[x] {
                continue;
            }
            seen_node[x] = true;
            if count[x] < quotas[x] {
                // Walk back: each partition on the path takes the slot it
                // was reached through, handing its old primary on.
                let mut at = p;
                let mut give = s as u8;
                count[x] += 1;
                loop {
                    let old = slot[at];
                    let new_node = rows[at * replicas + give as usize] as usize;
                    slot[at] = give;
                    primary_of[new_node].push(at);
                    if old != u8::MAX {
                        let old_node = rows[at * replicas + old as usize] as usize;
                        primary_of[old_node].retain(|&q| q != at);
                    }
                    match came[at] {
                        Some((from, s)) => {
                            at = from;
                            give = s;
                        }
                        None => break,
                    }
                }
                return true;
            }
            for &q in &primary_of[x] {
                if !visited[q] {
                    visited[q] = true;
                    // `q` would give its primary (node x) to `p`, and take
                    // another of its replicas.
                    came[q] = Some((p, s as u8));
                    queue.push_back(q);
                }
            }
        }
    }
    false
}
