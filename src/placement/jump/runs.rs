//! `jump`'s bucket table held as runs: maximal stretches of consecutive
//! buckets with one owner (or holes).
//!
//! Buckets come from weights, one per unit, and a node's buckets are
//! handed out in consecutive stretches, so a ring of five nodes at weight
//! 1,000,000 is five runs, not 5,000,000 entries. Everything that used to
//! walk the buckets one by one (building the next order, lookup, the
//! successor walk of a preference list, ownership and the diff model) works
//! on runs instead; only the canonical encoding and the persisted order,
//! which are defined per bucket, still expand them.

use super::hash::{jump_hash, REHASH_INCREMENT};
use crate::placement::hash::fmix64;

/// Owner number of a run of holes: the number the canonical encoding
/// writes for a hole, so runs encode without translation.
pub(crate) const HOLE: u32 = crate::placement::encoding::HOLE;

/// A bucket table as maximal runs. Invariants: adjacent runs have
/// different owners, no run is empty and the last run is not a hole.
#[derive(Debug, Clone, Default)]
pub(crate) struct BucketRuns {
    /// First bucket of each run, ascending; the first is 0.
    starts: Vec<u32>,
    /// Node index owning each run, or [`HOLE`].
    owners: Vec<u32>,
    /// Total number of buckets, holes included.
    len: u32,
    /// `guide[g]` is the run holding bucket `g << shift`, so the run of
    /// bucket `b` lies between `guide[b >> shift]` and the next entry, and
    /// a lookup searches a few runs instead of all of them (no division).
    guide: Vec<u32>,
    shift: u32,
}

/// Collects runs in bucket order, merging neighbours with one owner.
#[derive(Debug, Default)]
pub(crate) struct RunsBuilder {
    starts: Vec<u32>,
    owners: Vec<u32>,
    len: u64,
}

impl RunsBuilder {
    /// Appends `count` buckets owned by `owner` (or holes, [`HOLE`]).
    pub(crate) fn push(&mut self, owner: u32, count: u64) {
        if count == 0 {
            return;
        }
        if self.owners.last() != Some(&owner) {
            self.starts.push(self.len as u32);
            self.owners.push(owner);
        }
        self.len += count;
    }

    /// The table, with trailing holes trimmed.
    pub(crate) fn finish(mut self) -> BucketRuns {
        if self.owners.last() == Some(&HOLE) {
            self.owners.pop();
            self.len = u64::from(self.starts.pop().expect("a run per owner"));
        }
        let len = self.len as u32;
        // At least twice as many guide entries as runs (a power-of-two
        // span each, at most one bucket) leaves about one run boundary
        // between neighbouring entries.
        let per_entry = u64::from(len) / (self.starts.len() as u64 * 2).max(1);
        let shift = per_entry.max(1).ilog2();
        let mut guide = Vec::with_capacity((len >> shift) as usize + 1);
        let mut run = 0usize;
        for bucket in (0..len).step_by(1 << shift) {
            while run + 1 < self.starts.len() && self.starts[run + 1] <= bucket {
                run += 1;
            }
            guide.push(run as u32);
        }
        BucketRuns {
            starts: self.starts,
            owners: self.owners,
            len,
            guide,
            shift,
        }
    }
}

impl BucketRuns {
    /// Number of buckets, holes included.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Whether there is no bucket (no active node).
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of runs.
    pub(crate) fn run_count(&self) -> usize {
        self.owners.len()
    }

    /// The runs in bucket order: (owner or [`HOLE`], number of buckets).
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let ends = self.starts.iter().skip(1).copied().chain([self.len]);
        self.owners
            .iter()
            .zip(self.starts.iter().zip(ends))
            .map(|(&o, (&s, e))| (o, e - s))
    }

    /// The runs covering buckets `from..to`, clipped to that range.
    pub(crate) fn runs_in(&self, from: u32, to: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let first = if from < self.len {
            self.run_of(from)
        } else {
            self.owners.len()
        };
        let ends = self.starts.iter().skip(1).copied().chain([self.len]);
        (first..self.owners.len())
            .zip(ends.skip(first))
            .map(move |(r, end)| (self.owners[r], self.starts[r].max(from), end.min(to)))
            .take_while(move |&(_, start, _)| start < to)
            .map(|(o, s, e)| (o, e - s))
    }

    /// Live buckets (the holes left out).
    pub(crate) fn live(&self) -> u64 {
        self.runs()
            .filter(|&(o, _)| o != HOLE)
            .map(|(_, c)| u64::from(c))
            .sum()
    }

    /// The run holding bucket `b < len`.
    #[inline]
    fn run_of(&self, b: u32) -> usize {
        let g = (b >> self.shift) as usize;
        let lo = self.guide[g] as usize;
        let hi = self
            .guide
            .get(g + 1)
            .map_or(self.owners.len() - 1, |&r| r as usize);
        lo + self.starts[lo + 1..=hi].partition_point(|&s| s <= b)
    }

    /// Section 5.4.2's `lookup`: jumps, re-hashing past holes, and returns
    /// the run of the live bucket it lands on. The table must not be empty.
    #[inline]
    pub(crate) fn lookup(&self, mut h: u64) -> usize {
        loop {
            let r = self.run_of(jump_hash(h, self.len));
            if self.owners[r] != HOLE {
                return r;
            }
            h = fmix64(h.wrapping_add(REHASH_INCREMENT));
        }
    }

    /// Owner of run `r`, or [`HOLE`].
    #[inline]
    pub(crate) fn owner(&self, r: usize) -> u32 {
        self.owners[r]
    }

    /// The successor order of section 6.1 from the bucket the key landed
    /// on in run `r`, one entry per run instead of per bucket: run `r`'s
    /// owner, then the owners of the following runs, wrapping, holes
    /// skipped. The buckets of one run repeat one node, and the buckets of
    /// run `r` before the key's bucket close the walk with the node it
    /// began with, so the nodes appear for the first time in the same
    /// order as bucket by bucket; a preference list depends on nothing
    /// else.
    pub(crate) fn successors(&self, r: usize) -> impl Iterator<Item = u32> + '_ {
        (r..self.owners.len())
            .chain(0..r)
            .map(|i| self.owners[i])
            .filter(|&o| o != HOLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long and short runs mixed, so guide entries span several runs.
    fn table() -> BucketRuns {
        let mut b = RunsBuilder::default();
        for (owner, count) in [(0, 1000), (1, 1), (HOLE, 3), (2, 2), (1, 700), (0, 1)] {
            b.push(owner, count);
        }
        b.push(0, 5); // merges with the run before
        b.push(HOLE, 9); // trailing holes are trimmed
        b.finish()
    }

    #[test]
    fn runs_merge_and_trim() {
        let t = table();
        let runs: Vec<(u32, u32)> = t.runs().collect();
        assert_eq!(
            runs,
            [(0, 1000), (1, 1), (HOLE, 3), (2, 2), (1, 700), (0, 6)]
        );
        assert_eq!((t.len(), t.live()), (1712, 1709));
        assert_eq!(
            t.runs_in(999, 1006).collect::<Vec<_>>(),
            [(0, 1), (1, 1), (HOLE, 3), (2, 2)]
        );
        assert_eq!(t.runs_in(1712, 1712).count(), 0);
    }

    #[test]
    fn every_bucket_finds_its_run() {
        let t = table();
        let mut expected = Vec::new();
        for (r, (_, count)) in t.runs().enumerate() {
            expected.extend(std::iter::repeat_n(r, count as usize));
        }
        let found: Vec<usize> = (0..t.len()).map(|b| t.run_of(b)).collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn successors_wrap_and_skip_holes() {
        let t = table();
        assert_eq!(t.successors(3).collect::<Vec<_>>(), [2, 1, 0, 0, 1]);
        assert_eq!(t.successors(0).collect::<Vec<_>>(), [0, 1, 2, 1, 0]);
    }
}
