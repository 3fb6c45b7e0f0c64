//! Which nodes hold each partition's replicas: the previous assignment,
//! changed only as far as the new quotas and the zone rule force.
//!
//! Three passes and a completion, each deterministic (see
//! `docs/placement-spec.md`, "table"):
//!
//! 1. **Keep** every previous replica that may stay: its node is still
//!    active, not already in the partition, and its zone has room there.
//! 2. **Trim** each node holding more than its quota: it gives up the
//!    surplus, in an order scrambled by partition so the freed slots are
//!    spread over the table.
//! 3. **Fill** every open slot with a node still short of its quota: the
//!    allowed zone short of the most, then its node short of the most
//!    (lowest index among equals). A slot no short node may take is filled
//!    by a swap: a node already placed elsewhere moves into it and a short
//!    node takes its place there, preferring places filled in this same
//!    pass, so the swap adds no movement.
//! 4. **Complete** whatever slots are still open along augmenting paths
//!    of the flow network of the quotas and the zone rule (`flow.rs`):
//!    chains of moves of any length, which exist whenever the quotas admit
//!    an assignment at all.
//!
//! A node is short of exactly as many slots as it has to gain, so the
//! replica assignments that change are those the quotas force, the ones
//! the zone rule forces, and whatever a swap through a kept place costs.

use std::cmp::Reverse;
use std::collections::BTreeSet;

pub(crate) use super::zone_rule::ZoneRule;

/// No node: an open slot, or a previous replica whose node is gone.
pub const OPEN: u32 = u32::MAX;

/// Why the assignment failed; should not happen for quotas the zone rule
/// allows, and is reported rather than answered with a wrong table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no node can take a replica of partition {partition} without breaking a quota or the zone rule"
)]
pub(crate) struct Unassignable {
    pub partition: usize,
}

/// The replica assignment: `rows[p * replicas ..][.. replicas]` are
/// partition `p`'s nodes, kept replicas in their previous order first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub replicas: usize,
    pub cells: Vec<u32>,
    /// Cells given a node that did not hold them before.
    pub fresh: Vec<bool>,
    /// Slots the greedy passes left open, filled along augmenting paths.
    pub completed: usize,
}

/// Scrambles `(partition, node)` into an order that spreads a node's
/// surplus over the table: splitmix64's finalizer.
fn scramble(partition: usize, node: u32) -> u64 {
    let mut z = ((partition as u64) << 32 | u64::from(node)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What the assignment knows of the primaries to come (see [`assign`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PrimaryHints<'a> {
    /// Previous primaries each node must give up.
    pub drop: &'a [u64],
    /// The most primaries each node may have.
    pub most: &'a [u64],
}

/// The work state of one assignment.
pub(super) struct Work<'a> {
    pub(super) r: usize,
    pub(super) rule: &'a ZoneRule,
    /// Previous rows, as given to [`assign`].
    pub(super) previous: &'a [u32],
    pub(super) previous_replicas: usize,
    pub(super) cells: Vec<u32>,
    pub(super) fresh: Vec<bool>,
    /// Slots each node is still short of.
    pub(super) short: Vec<u64>,
    /// Per zone, its short nodes by how short (most first, then index).
    pub(super) by_zone: Vec<BTreeSet<(Reverse<u64>, u32)>>,
    /// Slots each zone is short of.
    pub(super) zone_short: Vec<u64>,
    /// Zones by how short (most first, then number).
    pub(super) zones: BTreeSet<(Reverse<u64>, u32)>,
    /// Primaries each node may still take up to its upper bound, once the
    /// previous primaries it keeps are counted.
    pub(super) primary_room: Vec<u64>,
    /// Partitions whose previous primary is gone from the row: a new
    /// primary is due there, best one that has room for it.
    pub(super) orphan: Vec<bool>,
}

/// How many short nodes of a zone an orphaned partition's slot looks
/// through for one with room for its primary, so that replacing every
/// node at once stays linear.
const PRIMARY_SCAN: usize = 64;

impl Work<'_> {
    pub(super) fn row(&self, p: usize) -> &[u32] {
        &self.cells[p * self.r..(p + 1) * self.r]
    }

    /// Replicas of partition `p` per zone, and its open slots.
    pub(super) fn counts(&self, p: usize) -> (Vec<usize>, usize) {
        let mut per = vec![0; self.rule.zones];
        let mut open = 0;
        for &n in self.row(p) {
            if n == OPEN {
                open += 1;
            } else {
                per[self.rule.zone_of[n as usize] as usize] += 1;
            }
        }
        (per, open)
    }

    /// Whether a node of zone `z` may take an open slot of `p`.
    pub(super) fn zone_allowed(&self, per: &[usize], open: usize, z: usize) -> bool {
        if per[z] >= self.rule.max_per_zone {
            return false;
        }
        if self.rule.every_zone {
            let missing = per.iter().filter(|&&c| c == 0).count();
            // The last open slots go to the zones still missing.
            if open <= missing && per[z] > 0 {
                return false;
            }
        }
        true
    }

    pub(super) fn set_short(&mut self, node: u32, short: u64) {
        let z = self.rule.zone_of[node as usize] as usize;
        let old = self.short[node as usize];
        if old > 0 {
            self.by_zone[z].remove(&(Reverse(old), node));
        }
        if short > 0 {
            self.by_zone[z].insert((Reverse(short), node));
        }
        self.short[node as usize] = short;
        let zs = self.zone_short[z];
        if zs > 0 {
            self.zones.remove(&(Reverse(zs), z as u32));
        }
        let zs = zs + short - old;
        if zs > 0 {
            self.zones.insert((Reverse(zs), z as u32));
        }
        self.zone_short[z] = zs;
    }

    /// Puts `node` into the open slot `cell`, counting it against its
    /// shortfall.
    pub(super) fn place(&mut self, cell: usize, node: u32) {
        self.cells[cell] = node;
        self.fresh[cell] = true;
        let p = cell / self.r;
        if self.orphan[p] && self.primary_room[node as usize] > 0 {
            self.orphan[p] = false;
            self.primary_room[node as usize] -= 1;
        }
        let short = self.short[node as usize] - 1;
        self.set_short(node, short);
    }

    /// The short node to put into an open slot of `p`, if any may go.
    pub(super) fn pick(&self, p: usize) -> Option<u32> {
        let (per, open) = self.counts(p);
        let row = self.row(p);
        // A partition that lost its primary takes a node with room for
        // one where it can, so the primary need not be handed along a
        // chain of other partitions later.
        if self.orphan[p] {
            for &(_, z) in &self.zones {
                if !self.zone_allowed(&per, open, z as usize) {
                    continue;
                }
                if let Some(&(_, n)) = self.by_zone[z as usize]
                    .iter()
                    .take(PRIMARY_SCAN)
                    .find(|(_, n)| !row.contains(n) && self.primary_room[*n as usize] > 0)
                {
                    return Some(n);
                }
            }
        }
        for &(_, z) in &self.zones {
            if !self.zone_allowed(&per, open, z as usize) {
                continue;
            }
            if let Some(&(_, n)) = self.by_zone[z as usize]
                .iter()
                .find(|(_, n)| !row.contains(n))
            {
                return Some(n);
            }
        }
        None
    }
}

/// Assigns `quotas[i]` replica slots to each node `i` over `partitions`
/// partitions of `replicas` slots, under `rule`, starting from `previous`
/// (each partition's previous nodes, `OPEN` for none or gone, in slot
/// order, primary first; `previous_replicas` per partition). The quotas
/// must add up to `partitions × replicas`, and none may exceed
/// `partitions`. A node with too many replicas gives up, of the partitions
/// it was primary for, `primary.drop[i]` first (or all it has there); an
/// open slot of a partition that lost its primary goes to a node with
/// fewer primaries than `primary.most[i]` where one may take it.
pub(crate) fn assign(
    partitions: usize,
    replicas: usize,
    quotas: &[u64],
    rule: &ZoneRule,
    (previous, previous_replicas): (&[u32], usize),
    primary: PrimaryHints<'_>,
) -> Result<Assignment, Unassignable> {
    let drop_primary = primary.drop;
    let r = replicas;
    let n = quotas.len();
    debug_assert_eq!(quotas.iter().sum::<u64>(), (partitions * replicas) as u64);
    let mut cells = vec![OPEN; partitions * r];
    let mut held = vec![0u64; n];
    // 1. Keep.
    if previous_replicas > 0 && n > 0 {
        for p in 0..partitions {
            let row = &mut cells[p * r..(p + 1) * r];
            let mut per = vec![0usize; rule.zones];
            let mut filled = 0;
            for &x in &previous[p * previous_replicas..(p + 1) * previous_replicas] {
                if filled == r {
                    break;
                }
                if x == OPEN || x as usize >= n || row[..filled].contains(&x) {
                    continue;
                }
                let z = rule.zone_of[x as usize] as usize;
                if per[z] >= rule.max_per_zone {
                    continue;
                }
                row[filled] = x;
                per[z] += 1;
                filled += 1;
            }
            // Room must be left for every zone still missing: the last
            // kept replicas of doubled zones go.
            if rule.every_zone {
                loop {
                    let missing = per.iter().filter(|&&c| c == 0).count();
                    if missing <= r - filled {
                        break;
                    }
                    let at = (0..filled)
                        .rev()
                        .find(|&s| per[rule.zone_of[row[s] as usize] as usize] > 1)
                        .expect("a zone holds two when one is missing");
                    per[rule.zone_of[row[at] as usize] as usize] -= 1;
                    row.copy_within(at + 1..filled, at);
                    filled -= 1;
                    row[filled] = OPEN;
                }
            }
            for &x in &row[..filled] {
                held[x as usize] += 1;
            }
        }
    }
    // 2. Trim.
    let was_primary =
        |cell: usize, x: u32| previous_replicas > 0 && previous[cell / r * previous_replicas] == x;
    let mut surplus: Vec<Vec<(bool, u64, usize)>> = vec![Vec::new(); n];
    for (cell, &x) in cells.iter().enumerate() {
        if x != OPEN && held[x as usize] > quotas[x as usize] {
            surplus[x as usize].push((!was_primary(cell, x), scramble(cell / r, x), cell));
        }
    }
    // A node gives up places in partitions with the fewest open slots
    // first (then in scrambled order), so the slots it frees are spread
    // over partitions a short node can fill once each.
    let mut open: Vec<u32> = (0..partitions)
        .map(|p| {
            cells[p * r..(p + 1) * r]
                .iter()
                .filter(|&&x| x == OPEN)
                .count() as u32
        })
        .collect();
    for (x, mut places) in surplus.into_iter().enumerate() {
        if places.is_empty() {
            continue;
        }
        let extra = (held[x] - quotas[x]) as usize;
        // Its primary places first, as many as it must give up; then the
        // others, as many as are left to give.
        places.sort_unstable_by_key(|&(other, mix, cell)| (other, open[cell / r], Reverse(mix)));
        let primaries = places.iter().take_while(|p| !p.0).count();
        let from_primary = (drop_primary[x] as usize).min(primaries).min(extra);
        let from_others = (extra - from_primary).min(places.len() - primaries);
        let from_primary = extra - from_others;
        let chosen = places[..from_primary]
            .iter()
            .chain(&places[primaries..primaries + from_others]);
        for &(_, _, cell) in chosen {
            cells[cell] = OPEN;
            open[cell / r] += 1;
        }
        held[x] = quotas[x];
    }
    // Kept replicas first, in their order, then the open slots.
    for p in 0..partitions {
        let row = &mut cells[p * r..(p + 1) * r];
        let mut kept: Vec<u32> = row.iter().copied().filter(|&x| x != OPEN).collect();
        kept.resize(r, OPEN);
        row.copy_from_slice(&kept);
    }
    // 3. Fill.
    let mut primary_room = primary.most.to_vec();
    let mut orphan = vec![false; partitions];
    if previous_replicas > 0 {
        for (p, lost) in orphan.iter_mut().enumerate() {
            let before = previous[p * previous_replicas];
            if before != OPEN && cells[p * r..(p + 1) * r].contains(&before) {
                let room = &mut primary_room[before as usize];
                *room = room.saturating_sub(1);
            } else {
                *lost = true;
            }
        }
    }
    let mut work = Work {
        primary_room,
        orphan,
        r,
        rule,
        previous,
        previous_replicas,
        fresh: vec![false; cells.len()],
        cells,
        short: vec![0; n],
        by_zone: vec![BTreeSet::new(); rule.zones],
        zone_short: vec![0; rule.zones],
        zones: BTreeSet::new(),
    };
    for x in 0..n {
        work.set_short(x as u32, quotas[x] - held[x]);
    }
    // Open slots are filled column by column, each column's partitions in
    // an order of its own: filled partition after partition, a partition's
    // replicas would be neighbours in the node order, so the same nodes
    // would share partition after partition, and losing one would leave
    // its slots where only its partners are short.
    let mut holes: Vec<(usize, u64, usize)> = (0..partitions * r)
        .filter(|&cell| work.cells[cell] == OPEN)
        .map(|cell| {
            let (p, s) = (cell / r, cell % r);
            (s, scramble(p, s as u32), cell)
        })
        .collect();
    holes.sort_unstable();
    let mut stuck = Vec::new();
    for (_, _, cell) in holes {
        let p = cell / r;
        // Slots of a row fill from the front.
        let cell = p * r
            + work
                .row(p)
                .iter()
                .position(|&x| x == OPEN)
                .expect("an open slot");
        match work.pick(p) {
            Some(x) => work.place(cell, x),
            None => stuck.push(cell),
        }
    }
    // 4. Complete: the stuck slots are filled by a node short of its
    // quota, a swap, or a chain of moves, which exists whenever the quotas
    // admit an assignment.
    let completed = work
        .unstick(stuck)
        .map_err(|partition| Unassignable { partition })?;
    Ok(Assignment {
        replicas: r,
        cells: work.cells,
        fresh: work.fresh,
        completed,
    })
}
