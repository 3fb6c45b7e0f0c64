package placement

import "encoding/binary"

// jumpHole is a hole's node number in the encoding (9.1).
const jumpHole = ^uint32(0)

// jumpRehash is added to a key hash that lands on a hole before fmix64
// re-hashes it (5.4.2).
const jumpRehash = 0x9E3779B97F4A7C15

// BucketRun is a run of consecutive buckets of a jump bucket order with
// one owner, or of holes. Orders are held as runs so that a weight of
// 1,000,000 is one entry, not a million (5.4.3, informative).
type BucketRun struct {
	// ID is the owning node's id, or "" for a run of holes.
	ID string
	// Count is the number of buckets in the run (at least 1).
	Count int
}

// jumpHash is Lamping and Veach's jump consistent hash (5.4.1). The
// operands of the division are exact binary64 values, the division and
// the multiplication are single binary64 operations, and the conversion
// truncates toward zero, as the reference does.
func jumpHash(key uint64, n uint32) uint32 {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * float64(float64(1<<31)/float64((key>>33)+1)))
	}
	return uint32(b)
}

// JumpHash is the jump consistent hash function of spec 5.4.1: the bucket
// in 0..n−1 that key falls in; n must be at least 1.
func JumpHash(key uint64, n uint32) uint32 { return jumpHash(key, n) }

// jumpLayout is a bucket order as runs: run r starts at bucket starts[r]
// and belongs to owners[r] (a node index, or jumpHole).
type jumpLayout struct {
	starts []uint32
	owners []uint32
	length uint32
}

// restoreJump accepts a persisted order only if every id in it is an
// active node, each active node holds exactly weight buckets and the last
// bucket is not a hole (5.4.4).
func restoreJump(active []Node, runs []BucketRun) (*jumpLayout, error) {
	index := make(map[string]uint32, len(active))
	for i, n := range active {
		index[n.ID] = uint32(i)
	}
	held := make([]int, len(active))
	l := &jumpLayout{}
	var total uint64
	lastHole := false
	for _, r := range runs {
		if r.Count < 0 {
			return nil, errorf(ErrInvalidBucketOrder, "a run of %d buckets", r.Count)
		}
		if r.Count == 0 {
			continue
		}
		total += uint64(r.Count)
		if total > MaxPoints {
			return nil, errorf(ErrTooManyPoints, "more than %d buckets", MaxPoints)
		}
		owner := jumpHole
		if r.ID != "" {
			i, ok := index[r.ID]
			if !ok {
				return nil, errorf(ErrInvalidBucketOrder, "%s holds a bucket but is not an active node", excerpt(r.ID))
			}
			held[i] += r.Count
			owner = i
		}
		lastHole = owner == jumpHole
		if len(l.owners) == 0 || l.owners[len(l.owners)-1] != owner {
			l.starts = append(l.starts, l.length)
			l.owners = append(l.owners, owner)
		}
		l.length += uint32(r.Count)
	}
	for i, n := range active {
		if held[i] != n.Weight {
			return nil, errorf(ErrInvalidBucketOrder, "%s has weight %d but holds %d buckets", n.ID, n.Weight, held[i])
		}
	}
	if lastHole {
		return nil, errorf(ErrInvalidBucketOrder, "the last bucket is a hole")
	}
	return l, nil
}

// initialJumpRuns is the order of a placement built from scratch: the
// active nodes in id order, each with weight consecutive buckets (5.4.3).
func initialJumpRuns(active []Node) []BucketRun {
	runs := make([]BucketRun, len(active))
	for i, n := range active {
		runs[i] = BucketRun{n.ID, n.Weight}
	}
	return runs
}

// lookup is the run holding the live bucket key hash h lands on: jump,
// and re-hash past holes (5.4.2).
func (l *jumpLayout) lookup(h uint64) int {
	for {
		b := jumpHash(h, l.length)
		// The last run starting at or before b (starts[0] is 0).
		lo, hi := 0, len(l.starts)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if l.starts[m] <= b {
				lo = m + 1
			} else {
				hi = m
			}
		}
		r := lo - 1
		if l.owners[r] != jumpHole {
			return r
		}
		h = fmix64(h + jumpRehash)
	}
}

func (l *jumpLayout) ownerIndex(h uint64) (uint32, bool) {
	if l.length == 0 {
		return 0, false
	}
	return l.owners[l.lookup(h)], true
}

// walk visits the owners of the runs from the key's run on, wrapping,
// holes skipped: one step per run rather than per bucket, which gives the
// same preference lists (6.1, informative). The part of the first run
// before the key's bucket would only repeat the first node at the end.
func (l *jumpLayout) walk(h uint64, visit func(uint32) bool) {
	if l.length == 0 {
		return
	}
	r := l.lookup(h)
	for _, part := range [2][]uint32{l.owners[r:], l.owners[:r]} {
		for _, o := range part {
			if o != jumpHole && !visit(o) {
				return
			}
		}
	}
}

// runLength is the number of buckets in run r.
func (l *jumpLayout) runLength(r int) uint32 {
	if r+1 < len(l.starts) {
		return l.starts[r+1] - l.starts[r]
	}
	return l.length - l.starts[r]
}

// units counts each node's buckets (its weight); the total is the live
// buckets (7).
func (l *jumpLayout) units(nodes int) ([]u128, u128) {
	units := make([]u128, nodes)
	var total u128
	for r, o := range l.owners {
		if o != jumpHole {
			units[o] = units[o].add(uint64(l.runLength(r)))
			total = total.add(uint64(l.runLength(r)))
		}
	}
	return units, total
}

// appendBody is the bucket count, then one u32 per bucket: a node index,
// or 0xFFFFFFFF for a hole (9.1).
func (l *jumpLayout) appendBody(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, l.length)
	for r, o := range l.owners {
		for k := uint32(0); k < l.runLength(r); k++ {
			dst = binary.LittleEndian.AppendUint32(dst, o)
		}
	}
	return dst
}

func (l *jumpLayout) basis() string { return "buckets" }

// runs returns the order as runs of node ids ("" for holes).
func (l *jumpLayout) runs(active []Node) []BucketRun {
	out := make([]BucketRun, len(l.owners))
	for r, o := range l.owners {
		out[r].Count = int(l.runLength(r))
		if o != jumpHole {
			out[r].ID = active[o].ID
		}
	}
	return out
}
