//! Repairs for the fill pass of a `table` assignment: an open slot that
//! no short node may take is filled by moving a placed node into it and
//! giving its old place to a short node, or else along a longer chain of
//! moves (`flow.rs`).

use super::assign::{Work, OPEN};

impl Work<'_> {
    /// Fills the slots the fill pass found stuck (each its row's first
    /// open slot then), in order: by a node short of its quota that may
    /// now take it, else by a swap, and what neither fills along
    /// augmenting paths. Returns how many those filled, or the partition
    /// of a slot no path reaches.
    pub(super) fn unstick(&mut self, stuck: Vec<usize>) -> Result<usize, usize> {
        // A failed swap has searched the whole table; rather than search it
        // again for every slot still stuck, those are left to the
        // completion, whose searches end at the first chain of moves found.
        let mut swaps = true;
        for cell in stuck {
            let p = cell / self.r;
            // A row with two slots stuck is listed twice under its first
            // open slot: the second time, its next open slot is meant.
            let Some(s) = self.row(p).iter().position(|&x| x == OPEN) else {
                continue;
            };
            let cell = p * self.r + s;
            match self.pick(p) {
                Some(x) => self.place(cell, x),
                None => swaps = swaps && self.swap_into(p, cell),
            }
        }
        if self.cells.contains(&OPEN) {
            self.complete()
        } else {
            Ok(0)
        }
    }

    /// Fills one open slot of `p` by a swap: some node `j` placed in
    /// another partition `y` moves into `p`, and a short node takes its
    /// place in `y`. Places filled in this pass are tried first (moving
    /// those costs nothing); `false` if no swap exists.
    pub(super) fn swap_into(&mut self, p: usize, open_cell: usize) -> bool {
        let short: Vec<u32> = self
            .by_zone
            .iter()
            .flat_map(|s| s.iter().map(|&(_, n)| n))
            .collect();
        let (per_p, open_p) = self.counts(p);
        let partitions = self.cells.len() / self.r;
        // First a node that held `p` before and gave it up (trimmed): it
        // takes `p` back and gives up another of its places instead, which
        // a short node takes. That costs what filling `p` would have.
        let before: Vec<u32> = if self.previous_replicas > 0 {
            self.previous[p * self.previous_replicas..(p + 1) * self.previous_replicas].to_vec()
        } else {
            Vec::new()
        };
        for j in before {
            if j == OPEN || j as usize >= self.short.len() || self.row(p).contains(&j) {
                continue;
            }
            let zj = self.rule.zone_of[j as usize] as usize;
            if !self.zone_allowed(&per_p, open_p, zj) {
                continue;
            }
            if self.move_out(p, open_cell, j, &short, partitions, false) {
                return true;
            }
        }
        for fresh_only in [true, false] {
            for step in 0..partitions {
                // Starting next to `p` keeps the search short in practice.
                let y = (p + 1 + step) % partitions;
                if y == p {
                    continue;
                }
                let (per_y, _) = self.counts(y);
                for s in 0..self.r {
                    let cell = y * self.r + s;
                    let j = self.cells[cell];
                    if j == OPEN || (fresh_only && !self.fresh[cell]) || self.row(p).contains(&j) {
                        continue;
                    }
                    let zj = self.rule.zone_of[j as usize] as usize;
                    if !self.zone_allowed(&per_p, open_p, zj) {
                        continue;
                    }
                    for &i in &short {
                        if self.row(y).contains(&i) {
                            continue;
                        }
                        let zi = self.rule.zone_of[i as usize] as usize;
                        // `y` with `j` taken out must take `i`.
                        let mut per = per_y.clone();
                        per[zj] -= 1;
                        if !self.zone_allowed(&per, 1, zi) {
                            continue;
                        }
                        self.cells[open_cell] = j;
                        self.fresh[open_cell] = true;
                        self.cells[cell] = OPEN;
                        self.place(cell, i);
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Moves `j` into the open slot `open_cell` of `p` from one of its
    /// places `y` that a short node may take over; `false` if none.
    fn move_out(
        &mut self,
        p: usize,
        open_cell: usize,
        j: u32,
        short: &[u32],
        partitions: usize,
        fresh_only: bool,
    ) -> bool {
        let zj = self.rule.zone_of[j as usize] as usize;
        for step in 0..partitions {
            let y = (p + 1 + step) % partitions;
            if y == p {
                continue;
            }
            let Some(s) = self.row(y).iter().position(|&x| x == j) else {
                continue;
            };
            let cell = y * self.r + s;
            if fresh_only && !self.fresh[cell] {
                continue;
            }
            let (mut per, _) = self.counts(y);
            per[zj] -= 1;
            for &i in short {
                if self.row(y).contains(&i) {
                    continue;
                }
                let zi = self.rule.zone_of[i as usize] as usize;
                if !self.zone_allowed(&per, 1, zi) {
                    continue;
                }
                self.cells[open_cell] = j;
                self.fresh[open_cell] = !self.held_before(p, j);
                self.cells[cell] = OPEN;
                self.place(cell, i);
                return true;
            }
        }
        false
    }

    /// Whether `j` held partition `p` in the previous assignment.
    pub(super) fn held_before(&self, p: usize, j: u32) -> bool {
        self.previous_replicas > 0
            && self.previous[p * self.previous_replicas..(p + 1) * self.previous_replicas]
                .contains(&j)
    }
}
