//! Exact diffs for the algorithms with ranges: sweep both sets of arcs over
//! the hash circle (`ring`, `ketama`), or compare Maglev tables slot by slot.

use std::collections::BTreeMap;

use super::tally::{Tally, NONE};
use crate::placement::continuum::{Arc, Continuum};

/// Arcs covering the whole circle, with `NONE` owning it all when empty.
fn cover(c: &Continuum) -> Box<dyn Iterator<Item = Arc> + '_> {
    if c.len() == 0 {
        Box::new(std::iter::once(Arc {
            first: 0,
            last: c.space() - 1,
            owner: NONE,
        }))
    } else {
        Box::new(c.arcs())
    }
}

pub(super) fn sweep_arcs(tally: &mut Tally<'_>, a: &Continuum, b: &Continuum) {
    // Sum exact arc lengths per (from, to) and divide once at the end, so
    // that fractions carry a single rounding.
    let mut moved: BTreeMap<(u32, u32), u128> = BTreeMap::new();
    let mut xs = cover(a);
    let mut ys = cover(b);
    let (mut x, mut y) = (xs.next(), ys.next());
    let mut cursor = 0u128;
    while let (Some(xa), Some(ya)) = (x, y) {
        let end = xa.last.min(ya.last);
        if !tally.same(xa.owner, ya.owner) {
            *moved.entry((xa.owner, ya.owner)).or_insert(0) += end - cursor + 1;
            tally.range(cursor as u64, end as u64, xa.owner, ya.owner);
        }
        cursor = end + 1;
        if xa.last == end {
            x = xs.next();
        }
        if ya.last == end {
            y = ys.next();
        }
    }
    let space = a.space() as f64;
    for ((from, to), units) in moved {
        tally.flow(from, to, units as f64 / space);
    }
}

pub(super) fn sweep_tables(tally: &mut Tally<'_>, a: &[u32], b: &[u32], size: u64) {
    let mut moved: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for slot in 0..size as usize {
        let x = a.get(slot).copied().unwrap_or(NONE);
        let y = b.get(slot).copied().unwrap_or(NONE);
        if !tally.same(x, y) {
            *moved.entry((x, y)).or_insert(0) += 1;
            tally.range(slot as u64, slot as u64, x, y);
        }
    }
    for ((from, to), slots) in moved {
        tally.flow(from, to, slots as f64 / size as f64);
    }
}
