//! A sorted circle of points shared by the `ring` and `ketama` algorithms.
//!
//! Each point keeps its position and owner side by side, and a bucket table
//! over the top bits of the position either names the owner outright (most
//! buckets hold no point) or narrows the search to a point or two.

use std::cmp::Ordering;

/// One point: a position and the index of the node owning it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Point {
    pub pos: u64,
    pub owner: u32,
}

/// Sorted points on a circle of `2^space_bits` positions.
#[derive(Debug, Clone)]
pub(crate) struct Continuum {
    /// Points ascending by position; ties ordered by owner index.
    points: Vec<Point>,
    /// One entry per bucket of positions (the top bits of a position).
    buckets: Vec<Bucket>,
    /// Position bits dropped to get a bucket number.
    shift: u32,
    /// 64 for `ring`, 32 for `ketama`.
    space_bits: u32,
}

impl Continuum {
    /// Builds from points already sorted by `(position, owner)`.
    pub(crate) fn from_sorted(points: Vec<Point>, space_bits: u32) -> Self {
        debug_assert!(points.windows(2).all(|w| w[0] <= w[1]));
        Self::from_positions(points, space_bits)
    }

    /// Builds from points sorted by position whose equal points are in the
    /// algorithm's own order (`twemproxy` orders them by server name, not
    /// by owner index).
    pub(crate) fn from_positions(points: Vec<Point>, space_bits: u32) -> Self {
        debug_assert!(points.windows(2).all(|w| w[0].pos <= w[1].pos));
        let (buckets, shift) = bucket_table(&points, space_bits);
        Self {
            points,
            buckets,
            shift,
            space_bits,
        }
    }

    /// Sorts `(position, owner)` pairs by the tie rule and builds.
    pub(crate) fn from_unsorted(mut points: Vec<(u64, u32)>, space_bits: u32) -> Self {
        points.sort_unstable();
        let points = points
            .into_iter()
            .map(|(pos, owner)| Point { pos, owner })
            .collect();
        Self::from_sorted(points, space_bits)
    }

    /// Sorts `(position, owner)` pairs, keeps only the first of each run of
    /// equal positions (the lowest owner index) and builds: nginx's rule.
    pub(crate) fn from_unsorted_first_of_equal(
        mut points: Vec<(u64, u32)>,
        space_bits: u32,
    ) -> Self {
        points.sort_unstable();
        points.dedup_by_key(|p| p.0);
        let points = points
            .into_iter()
            .map(|(pos, owner)| Point { pos, owner })
            .collect();
        Self::from_sorted(points, space_bits)
    }

    /// Number of points.
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }

    /// The points, ascending.
    pub(crate) fn points(&self) -> &[Point] {
        &self.points
    }

    /// Size of the circle, `2^space_bits`.
    pub(crate) fn space(&self) -> u128 {
        1u128 << self.space_bits
    }

    /// Index of the first point at or after `h`, wrapping to 0; `None` when
    /// there are no points.
    #[inline]
    pub(crate) fn successor(&self, h: u64) -> Option<usize> {
        let bucket = self.buckets.get((h >> self.shift) as usize)?;
        Some(self.scan(bucket.first as usize, h))
    }

    /// From point `i`, the first point at or after `h`, wrapping.
    #[inline]
    fn scan(&self, mut i: usize, h: u64) -> usize {
        while i < self.points.len() && self.points[i].pos < h {
            i += 1;
        }
        if i == self.points.len() {
            0
        } else {
            i
        }
    }

    /// The owner index of the first point at or after `h`, wrapping; the
    /// same answer as `owner_at(successor(h))`, faster.
    #[inline]
    pub(crate) fn owner(&self, h: u64) -> Option<u32> {
        let bucket = self.buckets.get((h >> self.shift) as usize)?;
        if bucket.owner != MIXED {
            return Some(bucket.owner);
        }
        Some(self.points[self.scan(bucket.first as usize, h)].owner)
    }

    /// Owners of the points from `start` clockwise, once round the circle.
    pub(crate) fn walk(&self, start: usize) -> impl Iterator<Item = u32> + '_ {
        let n = self.points.len();
        (0..n).map(move |k| self.points[(start + k) % n].owner)
    }

    /// The non-empty arcs in ascending order. Each point owns the positions
    /// after its predecessor up to and including itself; the first point's
    /// arc wraps past the top of the circle, so it comes as two pieces, the
    /// one ending at the top last.
    pub(crate) fn arcs(&self) -> impl Iterator<Item = Arc> + '_ {
        let n = self.points.len();
        let top = self.space() - 1;
        let wrap = (n > 0).then(|| Arc {
            first: self.points[n - 1].pos as u128 + 1,
            last: top,
            owner: self.points[0].owner,
        });
        let body = (0..n).map(move |i| Arc {
            first: if i == 0 {
                0
            } else {
                self.points[i - 1].pos as u128 + 1
            },
            last: self.points[i].pos as u128,
            owner: self.points[i].owner,
        });
        // The wrap piece is empty when the last point sits at the very top.
        body.chain(wrap).filter(|a| a.first <= a.last)
    }

    /// Merges this continuum, with owners renumbered by `remap` and points of
    /// owners mapped to `None` dropped, with new points sorted by
    /// `(position, owner)`.
    pub(crate) fn merged(&self, remap: &[Option<u32>], added: &[(u64, u32)]) -> Self {
        let kept = self
            .points
            .iter()
            .filter_map(|p| remap[p.owner as usize].map(|owner| Point { pos: p.pos, owner }));
        let mut points = Vec::with_capacity(self.len() + added.len());
        let mut kept = kept.peekable();
        let mut added = added
            .iter()
            .map(|&(pos, owner)| Point { pos, owner })
            .peekable();
        loop {
            let next = match (kept.peek(), added.peek()) {
                (Some(a), Some(b)) => match a.cmp(b) {
                    Ordering::Greater => added.next(),
                    _ => kept.next(),
                },
                (Some(_), None) => kept.next(),
                (None, Some(_)) => added.next(),
                (None, None) => break,
            };
            points.push(next.expect("peeked"));
        }
        Self::from_sorted(points, self.space_bits)
    }
}

/// Marks a bucket whose positions do not all have the same owner.
const MIXED: u32 = u32::MAX;

/// A bucket of positions: the first point at or after its start, and the
/// owner of every position in it when that is a single node (else `MIXED`).
/// Most lookups are answered by reading one bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    first: u32,
    owner: u32,
}

/// Builds the bucket table with one to two buckets per point, capped at
/// 2^20 buckets (8 MiB) so building it stays cheap next to the points.
/// Tables that stay within 2^16 buckets (512 KiB, inside a core's L2) get
/// up to four times as many, so that fewer buckets hold a point and most
/// lookups read one entry and take no scan. Empty when there are no
/// points. Returns the table and its shift.
fn bucket_table(points: &[Point], space_bits: u32) -> (Vec<Bucket>, u32) {
    if points.is_empty() {
        return (Vec::new(), space_bits);
    }
    let base = (usize::BITS - points.len().leading_zeros()).clamp(1, 20);
    let bits = base.max((base + 2).min(16)).min(space_bits);
    let shift = space_bits - bits;
    let mut buckets = Vec::with_capacity(1 << bits);
    let mut i = 0usize;
    for b in 0..1u64 << bits {
        let start = b << shift;
        while i < points.len() && points[i].pos < start {
            i += 1;
        }
        // The bucket's last position belongs to the first point at or after
        // it; when that is also the first point at or after the start, the
        // whole bucket has one owner.
        let last = start | ((1u64 << shift) - 1);
        let owner = if i == points.len() {
            points[0].owner
        } else if points[i].pos >= last {
            points[i].owner
        } else {
            MIXED
        };
        buckets.push(Bucket {
            first: i as u32,
            owner,
        });
    }
    (buckets, shift)
}

/// An inclusive range of circle positions and the node index owning it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arc {
    pub first: u128,
    pub last: u128,
    pub owner: u32,
}

impl Arc {
    pub(crate) fn len(&self) -> u128 {
        self.last - self.first + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Continuum {
        // Two points collide at 200: owner 1 sorts before owner 4.
        Continuum::from_unsorted(vec![(200, 4), (100, 2), (200, 1), (u32::MAX as u64, 3)], 32)
    }

    #[test]
    fn successor_takes_first_point_at_or_after_and_wraps() {
        let c = small();
        let pairs: Vec<(u64, u32)> = c.points().iter().map(|p| (p.pos, p.owner)).collect();
        assert_eq!(pairs, [(100, 2), (200, 1), (200, 4), (u32::MAX as u64, 3)]);
        assert_eq!(c.successor(0), Some(0));
        assert_eq!(c.successor(100), Some(0));
        assert_eq!(c.successor(101), Some(1));
        assert_eq!(c.successor(200), Some(1));
        assert_eq!(c.successor(201), Some(3));
        assert_eq!(c.successor(u32::MAX as u64), Some(3));
    }

    #[test]
    fn bucket_answers_equal_the_successor_search() {
        // Clustered points (many buckets with several points, ties, a point
        // on a bucket's last position) next to empty stretches.
        let mut pts = vec![(0, 0), (5, 1), (5, 2), (6, 3), (u32::MAX as u64, 4)];
        pts.extend((0..40u64).map(|k| ((1 << 30) + k * 7, (k % 5) as u32)));
        pts.push(((1 << 31) - 1, 2));
        let c = Continuum::from_unsorted(pts, 32);
        let near = |p: u64| [p.saturating_sub(1), p, p + 1];
        let probes = c
            .points()
            .iter()
            .flat_map(|p| near(p.pos))
            .chain((0..5000u64).map(|k| k.wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF));
        for h in probes.filter(|&h| h <= u32::MAX as u64) {
            let expected = c.points()[c.successor(h).unwrap()].owner;
            assert_eq!(c.owner(h), Some(expected), "h = {h}");
        }
    }

    #[test]
    fn arcs_cover_the_circle_exactly_once() {
        let c = small();
        let arcs: Vec<_> = c.arcs().collect();
        assert_eq!(
            arcs,
            vec![
                Arc {
                    first: 0,
                    last: 100,
                    owner: 2
                },
                Arc {
                    first: 101,
                    last: 200,
                    owner: 1
                },
                Arc {
                    first: 201,
                    last: u32::MAX as u128,
                    owner: 3
                },
            ]
        );
        assert_eq!(arcs.iter().map(Arc::len).sum::<u128>(), 1u128 << 32);
    }

    #[test]
    fn merge_keeps_the_tie_rule() {
        let c = small();
        // Drop owner 3 and renumber 4 -> 3 (renumbering keeps id order, so
        // it is monotone), then add points, one tying at 200.
        let remap = [None, Some(1), Some(2), None, Some(3)];
        let m = c.merged(&remap, &[(150, 5), (200, 0)]);
        let pairs: Vec<(u64, u32)> = m.points().iter().map(|p| (p.pos, p.owner)).collect();
        assert_eq!(pairs, [(100, 2), (150, 5), (200, 0), (200, 1), (200, 3)]);
    }
}
