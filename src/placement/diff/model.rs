//! Exact movement for the algorithms without hash ranges, from their
//! probability models rather than from sample keys.
//!
//! `jump`: one jump over `n` buckets and over `m` buckets lands on the same
//! index `i < min(n, m)` with probability `1 / max(n, m)`, and otherwise on
//! an old index `i` and a new index `j` beyond the smaller count with
//! probability `1 / (n·m)` (jump's own uniform-move property). Holes re-hash,
//! and a re-hash is an independent fresh trial, which gives closed forms.
//!
//! `rendezvous`: with draws read as exponential variables `E_i`, a key's
//! owner is `argmin E_i / w_i`. For old weights `w` and new weights `v`
//! (0 where absent), keys move from `a` to `b` with probability
//! `w_a · v_b · ∫ dr / G(r)²` over `r` from `w_b/v_b` to `w_a/v_a`, where
//! `G(r) = Σ_i max(w_i, v_i · r)` is piecewise linear, so the integral is a
//! finite sum. See `docs/placement-spec.md` for the derivation.

use std::collections::BTreeMap;

use super::tally::{Tally, NONE};
use crate::placement::jump::runs::{BucketRuns, HOLE};
use crate::placement::repeated_sum::repeated_sum;
use crate::placement::{Layout, NodeId, Placement};

/// Movement between two jump bucket tables (node indices, HOLE = hole),
/// computed on runs with the same binary64 results as bucket by bucket.
pub(super) fn jump(tally: &mut Tally<'_>, old: &BucketRuns, new: &BucketRuns) {
    let (n, m) = (old.len(), new.len());
    if n == 0 || m == 0 {
        return trivial(tally, old, new);
    }
    let live_old = old.live() as f64;
    let live_new = new.live() as f64;
    let diag = 1.0 / n.max(m) as f64;
    let cross = 1.0 / (f64::from(n) * f64::from(m));
    let lo = n.min(m);
    // The cross block pairs old indices `old_block` with new `new_block`.
    let (old_block, new_block) = if m >= n {
        ((0, n), (n, m))
    } else {
        ((m, n), (0, m))
    };
    let count = |t: &BucketRuns, (from, to): (u32, u32)| {
        let mut by: BTreeMap<Option<u32>, f64> = BTreeMap::new();
        for (o, c) in t.runs_in(from, to) {
            *by.entry(slot(o)).or_insert(0.0) += f64::from(c);
        }
        by
    };
    let old_cross = count(old, old_block);
    let new_cross = count(new, new_block);
    // Single-trial mass q(a, b) by node (None = hole), excluding the rest.
    // The diagonal adds `diag` once per index below `lo`, in index order;
    // each pair's sum depends only on how many indices it has, which one
    // sweep of both runs counts, and `repeated_sum` rounds as that many
    // additions would.
    let mut same_index: BTreeMap<(Option<u32>, Option<u32>), u64> = BTreeMap::new();
    let (mut xs, mut ys) = (old.runs_in(0, lo), new.runs_in(0, lo));
    let (mut x, mut y) = (xs.next(), ys.next());
    while let (Some((a, ca)), Some((b, cb))) = (x, y) {
        let step = ca.min(cb);
        *same_index.entry((slot(a), slot(b))).or_insert(0) += u64::from(step);
        x = if ca == step {
            xs.next()
        } else {
            Some((a, ca - step))
        };
        y = if cb == step {
            ys.next()
        } else {
            Some((b, cb - step))
        };
    }
    let mut q: BTreeMap<(Option<u32>, Option<u32>), f64> = same_index
        .into_iter()
        .map(|(pair, k)| (pair, repeated_sum(diag, k)))
        .collect();
    for (a, ca) in &old_cross {
        for (b, cb) in &new_cross {
            *q.entry((*a, *b)).or_insert(0.0) += ca * cb * cross;
        }
    }
    let both_holes = q.get(&(None, None)).copied().unwrap_or(0.0);
    let z = 1.0 - both_holes;
    let mut old_to_hole: BTreeMap<u32, f64> = BTreeMap::new();
    let mut hole_to_new: BTreeMap<u32, f64> = BTreeMap::new();
    for (&(a, b), &mass) in &q {
        match (a, b) {
            (Some(a), Some(b)) => tally.flow(a, b, mass / z),
            (Some(a), None) => *old_to_hole.entry(a).or_insert(0.0) += mass,
            (None, Some(b)) => *hole_to_new.entry(b).or_insert(0.0) += mass,
            (None, None) => {}
        }
    }
    let old_share = buckets_per_node(old);
    let new_share = buckets_per_node(new);
    // A key whose old bucket is live but new one a hole re-hashes to a
    // uniformly random live new bucket; and the other way round.
    for (&a, &mass) in &old_to_hole {
        for (&b, &c) in &new_share {
            tally.flow(a, b, mass / z * c / live_new);
        }
    }
    for (&b, &mass) in &hole_to_new {
        for (&a, &c) in &old_share {
            tally.flow(a, b, mass / z * c / live_old);
        }
    }
}

fn slot(owner: u32) -> Option<u32> {
    (owner != HOLE).then_some(owner)
}

fn buckets_per_node(t: &BucketRuns) -> BTreeMap<u32, f64> {
    let mut by = BTreeMap::new();
    for (o, c) in t.runs().filter(|&(o, _)| o != HOLE) {
        *by.entry(o).or_insert(0.0) += f64::from(c);
    }
    by
}

/// One side has no bucket at all: every key goes to or comes from nobody.
fn trivial(tally: &mut Tally<'_>, old: &BucketRuns, new: &BucketRuns) {
    let (old_by, new_by) = (buckets_per_node(old), buckets_per_node(new));
    let (lo, ln) = (old_by.values().sum::<f64>(), new_by.values().sum::<f64>());
    for (&a, &c) in &old_by {
        tally.flow(a, NONE, c / lo);
    }
    for (&b, &c) in &new_by {
        tally.flow(NONE, b, c / ln);
    }
}

/// Movement between two rendezvous placements.
pub(super) fn rendezvous(tally: &mut Tally<'_>, from: &Placement, to: &Placement) {
    // `weight × ramp` on both sides, so ramped and unramped placements
    // compare in one unit.
    fn weights(p: &Placement) -> &[u64] {
        match &p.layout {
            Layout::Rendezvous { weights, .. } => weights,
            _ => unreachable!("called on rendezvous layouts"),
        }
    }
    let (w_old, w_new) = (weights(from), weights(to));
    // A node keeps its draws only while its label is unchanged, so the model
    // identifies nodes by (id, label); a re-labelled node is a removal plus
    // an addition.
    let mut nodes: BTreeMap<(&NodeId, &str), Entry> = BTreeMap::new();
    for (i, (n, &w)) in from.nodes.iter().zip(w_old).enumerate() {
        nodes.insert(
            (&n.id, n.label()),
            Entry {
                w: w as f64,
                v: 0.0,
                old: i as u32,
                new: NONE,
            },
        );
    }
    for (j, (n, &v)) in to.nodes.iter().zip(w_new).enumerate() {
        let e = nodes.entry((&n.id, n.label())).or_insert(Entry {
            w: 0.0,
            v: 0.0,
            old: NONE,
            new: NONE,
        });
        e.v = v as f64;
        e.new = j as u32;
    }
    let entries: Vec<Entry> = nodes.into_values().collect();
    let (total_old, total_new): (f64, f64) = (
        entries.iter().map(|e| e.w).sum(),
        entries.iter().map(|e| e.v).sum(),
    );
    if total_old == 0.0 || total_new == 0.0 {
        for e in &entries {
            if e.w > 0.0 {
                tally.flow(e.old, NONE, e.w / total_old);
            }
            if e.v > 0.0 {
                tally.flow(NONE, e.new, e.v / total_new);
            }
        }
        return;
    }
    // Group nodes by ρ = w / v (0 for added nodes, ∞ for removed ones).
    let rho = |e: &Entry| if e.v == 0.0 { f64::INFINITY } else { e.w / e.v };
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&x, &y| rho(&entries[x]).total_cmp(&rho(&entries[y])));
    let mut classes: Vec<(f64, Vec<usize>)> = Vec::new();
    for i in order {
        let r = rho(&entries[i]);
        match classes.last_mut() {
            Some((cr, members)) if *cr == r => members.push(i),
            _ => classes.push((r, vec![i])),
        }
    }
    // I(ρ) = ∫_0^ρ dr / G(r)² at every class, G(r) = α + β·r between
    // breakpoints: a node adds w below its ρ and v·r above it.
    let mut alpha = total_old;
    let mut beta = 0.0;
    let (mut prev_r, mut acc) = (0.0f64, 0.0f64);
    let mut integral = Vec::with_capacity(classes.len());
    for (r, members) in &classes {
        let g_prev = alpha + beta * prev_r;
        if r.is_infinite() {
            acc += 1.0 / (beta * g_prev);
        } else if *r > prev_r {
            acc += (r - prev_r) / (g_prev * (alpha + beta * r));
            prev_r = *r;
        }
        integral.push(acc);
        for &i in members {
            alpha -= entries[i].w;
            beta += entries[i].v;
        }
    }
    // Keys move from class A to class B when ρ_B < ρ_A.
    for (ai, (_, from_class)) in classes.iter().enumerate() {
        for (bi, (_, to_class)) in classes.iter().enumerate().take(ai) {
            let span = integral[ai] - integral[bi];
            for a in from_class
                .iter()
                .map(|&i| &entries[i])
                .filter(|e| e.w > 0.0)
            {
                for b in to_class.iter().map(|&i| &entries[i]).filter(|e| e.v > 0.0) {
                    tally.flow(a.old, b.new, a.w * b.v * span);
                }
            }
        }
    }
}

/// One node in the rendezvous model: old and new weight (0 where absent)
/// and its index on each side.
#[derive(Debug, Clone, Copy)]
struct Entry {
    w: f64,
    v: f64,
    old: u32,
    new: u32,
}
