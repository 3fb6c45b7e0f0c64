//! Completing an assignment the greedy passes left with open slots: each
//! open slot is filled along a shortest augmenting path of the flow
//! network that models the quotas and the zone rule, starting from the
//! partial assignment as it stands.
//!
//! The network is the one of Garage's layout module: source → `up(p)`
//! (capacity `u = r + 1 − max`, the distinct zones a row needs) and source
//! → `down(p)` (capacity `max − 1`); `up(p)` → `(p, z)` (capacity 1) and
//! `down(p)` → `(p, z)` (capacity `max − 1`) for every zone `z`; `(p, z)` →
//! node `x` of zone `z` (capacity 1); node → sink (capacity: its quota).
//! `max` is the most replicas of a row one zone may hold. A flow that
//! saturates the source edges sends one unit through `up(p)` to each of
//! `u` distinct zones, so every row spans the zones the rule needs and no
//! zone holds more than `max`; conversely every valid row is such a flow.
//! So when the quotas admit an assignment, any flow short of `P × r` units
//! has an augmenting path (Ford–Fulkerson), whatever the greedy passes
//! did: filling open slots this way always ends with a complete table.
//!
//! The flow through `up` and `down` is not stored: a row's zone counts `c`
//! route `min(c, 1)` through `up` and the rest through `down`, which fits
//! the capacities whenever any routing does. The edges `(p, z)` → node are
//! not stored either; they are enumerated from the rows, and every zone
//! absent from a row shares one vertex.
//!
//! Each search is breadth-first in the replicas a path moves (its edges
//! into nodes), so a slot is filled by the shortest chain of moves; ties
//! go to a node that held the partition before, then by a fixed scan
//! order. A node's rows are searched one at a time, and the search stops
//! at the first node short of its quota, so it rarely looks at more than
//! a few rows: a node leaves a row for one of another zone only where its
//! zone is doubled, and those rows are indexed (`flow_graph.rs`).

use super::assign::{Work, OPEN};
use super::flow_graph::{Numbering, RowIndex, Search, Vertex, NONE};

/// The zones an edge from `(p, z)` leads to nodes of.
#[derive(Debug, Clone, Copy)]
enum Zones<'a> {
    /// One zone.
    One(u32),
    /// Every zone but those of a row (as [`zones_of_row`] lists them).
    AbsentFrom(&'a [(u32, usize, usize)]),
}

/// The zones of one row into `out`: `(zone, replicas in it, first slot)`,
/// in slot order.
fn zones_of_row(work: &Work<'_>, p: usize, out: &mut Vec<(u32, usize, usize)>) {
    out.clear();
    for (s, &x) in work.row(p).iter().enumerate() {
        if x == OPEN {
            continue;
        }
        let z = work.rule.zone_of[x as usize];
        match out.iter_mut().find(|e| e.0 == z) {
            Some(e) => e.1 += 1,
            None => out.push((z, 1, s)),
        }
    }
}

impl Work<'_> {
    /// Fills every open slot along augmenting paths (see the module
    /// note); returns how many it filled, or the partition of a slot no
    /// path reaches (only if the quotas admit no assignment).
    pub(super) fn complete(&mut self) -> Result<usize, usize> {
        let r = self.r;
        let partitions = self.cells.len() / r;
        let zone_of = &self.rule.zone_of;
        let max = self.rule.max_per_zone;
        // Capacities of source → up(p) and source → down(p).
        let (up_cap, down_cap) = (r + 1 - max, max - 1);
        let mut index = RowIndex::new(&self.cells, r, zone_of);
        let number = Numbering {
            partitions,
            replicas: r,
        };
        let mut search = Search::new(number, zone_of.len(), self.rule.zones);
        let mut zones = Vec::with_capacity(r);
        let mut open: Vec<usize> = (0..partitions)
            .filter(|&p| self.row(p).contains(&OPEN))
            .collect();
        let mut filled = 0;
        while let Some(&first_open) = open.first() {
            search.clear(&self.rule.zone_of);
            for &p in &open {
                zones_of_row(self, p, &mut zones);
                let extra: usize = zones.iter().map(|z| z.1 - 1).sum();
                let (short, zone_of) = (&self.short[..], &self.rule.zone_of[..]);
                if zones.len() < up_cap {
                    search.reach(Vertex::Up(p), None, short, zone_of);
                }
                if extra < down_cap {
                    search.reach(Vertex::Down(p), None, short, zone_of);
                }
            }
            let Some(end) = self.search(&mut search, &index) else {
                return Err(first_open);
            };
            let start = self.augment(&search, end, &mut index);
            if !self.row(start).contains(&OPEN) {
                open.retain(|&p| p != start);
            }
            filled += 1;
        }
        Ok(filled)
    }

    /// The search from the vertices already queued: the first node
    /// reached that is short of its quota.
    fn search(&self, search: &mut Search, index: &RowIndex) -> Option<u32> {
        let number = search.number;
        let (short, zone_of) = (&self.short[..], &self.rule.zone_of[..]);
        let max = self.rule.max_per_zone;
        // Whether a full row has a zone it does not hold.
        let absent_in_full = self.rule.zones > self.r;
        let mut zones = Vec::with_capacity(self.r);
        while let Some((v, done)) = search.queue.pop_front() {
            // With every node reached, nothing is left to find.
            if search.end.is_some() || search.left == 0 {
                break;
            }
            let here = number.vertex(v as usize);
            match here {
                Vertex::Up(p) => {
                    zones_of_row(self, p, &mut zones);
                    if zones.len() < self.rule.zones {
                        search.reach(Vertex::Absent(p), Some(here), short, zone_of);
                    }
                }
                Vertex::Down(p) => {
                    zones_of_row(self, p, &mut zones);
                    for &(_, c, s) in &zones {
                        if c < max {
                            search.reach(Vertex::Present(p, s), Some(here), short, zone_of);
                        }
                    }
                    if max > 1 && zones.len() < self.rule.zones {
                        search.reach(Vertex::Absent(p), Some(here), short, zone_of);
                    }
                }
                Vertex::Present(p, s) => {
                    let z = zone_of[self.cells[p * self.r + s] as usize];
                    let c = self
                        .row(p)
                        .iter()
                        .filter(|&&x| x != OPEN && zone_of[x as usize] == z)
                        .count();
                    search.reach(Vertex::Up(p), Some(here), short, zone_of);
                    if c > 1 {
                        search.reach(Vertex::Down(p), Some(here), short, zone_of);
                    }
                    self.enter(search, p, here, Zones::One(z));
                }
                Vertex::Absent(p) => {
                    zones_of_row(self, p, &mut zones);
                    self.enter(search, p, here, Zones::AbsentFrom(&zones));
                }
                Vertex::Node(x) => {
                    // One row at a time, each searched before the next:
                    // first those where the node's zone is doubled, then,
                    // while they can still lead to a node not reached
                    // (one of its own zone, or of a zone a full row lacks),
                    // the others.
                    let (doubled, holds) = (&index.doubled[x as usize], &index.holds[x as usize]);
                    let z = zone_of[x as usize];
                    let next = if (done as usize) < doubled.len() {
                        Some(done as usize)
                    } else if search.left_in[z as usize] > 0 || absent_in_full {
                        (done as usize - doubled.len()..holds.len())
                            .find(|&i| doubled.binary_search(&holds[i]).is_err())
                            .map(|i| doubled.len() + i)
                    } else {
                        None
                    };
                    let Some(at) = next else { continue };
                    search.queue.push_front((v, at as u32 + 1));
                    let p = if at < doubled.len() {
                        doubled[at]
                    } else {
                        holds[at - doubled.len()]
                    } as usize;
                    let s = self
                        .row(p)
                        .iter()
                        .position(|&y| y != OPEN && zone_of[y as usize] == z)
                        .expect("a node's own zone is in the rows it holds");
                    search.reach(Vertex::Present(p, s), Some(here), short, zone_of);
                }
            }
        }
        search.end
    }

    /// Edges from `(p, z)` (one zone, or every zone absent from the row)
    /// to the nodes of those zones that row `p` does not hold: first those
    /// that held `p` before, then the others in index order.
    fn enter(&self, search: &mut Search, p: usize, here: Vertex, zones: Zones<'_>) {
        let row = self.row(p);
        let (short, zone_of) = (&self.short[..], &self.rule.zone_of[..]);
        let allowed = |z: u32| match zones {
            Zones::One(one) => z == one,
            Zones::AbsentFrom(present) => present.iter().all(|e| e.0 != z),
        };
        if self.previous_replicas > 0 {
            let before =
                &self.previous[p * self.previous_replicas..(p + 1) * self.previous_replicas];
            for &x in before {
                if x != OPEN
                    && (x as usize) < short.len()
                    && !row.contains(&x)
                    && allowed(zone_of[x as usize])
                {
                    search.reach(Vertex::Node(x), Some(here), short, zone_of);
                }
            }
        }
        match zones {
            Zones::One(z) => {
                search.reach_zone(z, row, here, short, zone_of);
            }
            Zones::AbsentFrom(_) => {
                // Every zone left in the list after this is one the row
                // holds: the next row's absent zones cost at most `r` looks.
                let mut live = std::mem::take(&mut search.live_zones);
                live.retain(|&z| !allowed(z) || search.reach_zone(z, row, here, short, zone_of));
                search.live_zones = live;
            }
        }
    }

    /// Moves replicas along the path the search found to `end`: each
    /// `(p, z)` → node edge gives the node a slot of `p`, each node →
    /// `(p, z)` edge takes it out of `p`. Returns the partition whose open
    /// slot the path filled.
    fn augment(&mut self, search: &Search, end: u32, index: &mut RowIndex) -> usize {
        let number = search.number;
        let mut path = vec![number.id(Vertex::Node(end))];
        loop {
            let at = search.via[*path.last().expect("the path has a vertex")];
            if at == NONE {
                break;
            }
            path.push(at as usize);
        }
        path.reverse();
        let start = match number.vertex(path[0]) {
            Vertex::Up(p) | Vertex::Down(p) => p,
            other => unreachable!("a path starts at the source's edges, not {other:?}"),
        };
        let mut rows: Vec<usize> = path
            .iter()
            .filter_map(|&v| match number.vertex(v) {
                Vertex::Present(p, _) | Vertex::Absent(p) => Some(p),
                _ => None,
            })
            .collect();
        rows.sort_unstable();
        rows.dedup();
        for &p in &rows {
            let row = self.row(p).to_vec();
            index.forget(p, &row, &self.rule.zone_of);
        }
        for pair in path.windows(2) {
            match (number.vertex(pair[0]), number.vertex(pair[1])) {
                (Vertex::Present(p, _) | Vertex::Absent(p), Vertex::Node(x)) => {
                    let s = self
                        .row(p)
                        .iter()
                        .position(|&y| y == OPEN)
                        .expect("a row entered has an open slot");
                    let cell = p * self.r + s;
                    self.cells[cell] = x;
                    self.fresh[cell] = !self.held_before(p, x);
                    index.hold(x, p);
                }
                (Vertex::Node(x), Vertex::Present(p, _)) => {
                    let s = self
                        .row(p)
                        .iter()
                        .position(|&y| y == x)
                        .expect("a node leaves a row it holds");
                    self.cells[p * self.r + s] = OPEN;
                    index.release(x, p);
                }
                _ => {}
            }
        }
        for &p in &rows {
            let row = self.row(p).to_vec();
            index.note(p, &row, &self.rule.zone_of);
        }
        self.short[end as usize] -= 1;
        start
    }
}

#[cfg(test)]
mod tests;
