package placement

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
)

// layout is what every algorithm's materialized layout answers (spec 1,
// step 3). Lookups go through ownerIndex, which must not allocate.
type layout interface {
	// ownerIndex is the index of the node owning key hash h; false with
	// no active node.
	ownerIndex(h uint64) (uint32, bool)
	// walk visits the successor order of 6.1 for key hash h (with
	// repetitions) until visit returns false or the order ends.
	walk(h uint64, visit func(node uint32) bool)
	// units returns each node's ownership units and their total (7),
	// before the "no active node gives total 0" rule.
	units(nodes int) ([]u128, u128)
	// appendBody appends the algorithm's body of the encoding (9.1).
	appendBody(dst []byte) []byte
	// basis names the ownership basis as the JSON writes it (7).
	basis() string
}

// point is a position on a circle and the index of the node it belongs to.
type point struct {
	pos  uint64
	node uint32
}

// byPositionThenNode is the point-list order of 5.1: position, then node
// index, so a successor search lands on the lowest index among ties.
func byPositionThenNode(a, b point) int {
	if c := cmp.Compare(a.pos, b.pos); c != 0 {
		return c
	}
	return cmp.Compare(a.node, b.node)
}

// continuum is a sorted point list on a circle of 2^bits positions,
// shared by ring, ketama, nginx, twemproxy, envoy_ring_hash and haproxy's
// boundaries.
//
// A bucket table over the top bits of a position answers most lookups in
// one read: a bucket without a point names the owner of all its
// positions, and a bucket with one point says where the point splits it,
// the owner after the split being the next bucket's first owner (mostly
// in the same cache line). Only buckets holding two or more points are
// scanned. A binary search over the points cost a cache miss on most of
// its steps, and a table that names only where to scan (as the Rust core's
// does) a second miss on the points for every bucket holding one; on a
// 1,000-node ring each took about twice the time of this table's read
// (benchmarks/RESULTS.md). A point keeps its position and owner side by
// side, so a scan's answer is in the cache line it read.
type continuum struct {
	points  []point
	buckets []bucket // nil: no points, or too many (binary search)
	shift   uint     // position bits dropped to get a bucket number
	drop    uint     // offset bits dropped to fit a split in 30 bits
	bits    int      // 64 or 32
}

// bucket describes a range of positions in 8 bytes.
type bucket struct {
	// word is the bucket's kind (top two bits) and its payload: the
	// first point's index for kindMany, the point's offset in the bucket
	// (its top 30 bits) for kindOne.
	word uint32
	// entry is the owner of the first point at or after the bucket's
	// start, wrapping: the owner of every position up to that point.
	entry uint32
}

const (
	kindShift   = 30
	payloadMask = 1<<kindShift - 1
	// kindMany: two or more points before the bucket's last position.
	kindMany = 0 << kindShift
	// kindOne: one point before the bucket's last position.
	kindOne = 1 << kindShift
	// kindNone: no point before the bucket's last position, so entry
	// owns the whole bucket.
	kindNone = 2 << kindShift
)

// newContinuum takes points already in the algorithm's order, and keeps
// the slice.
func newContinuum(points []point, bits int) continuum {
	c := continuum{points: points, bits: bits}
	c.buckets, c.shift, c.drop = bucketTable(points, bits)
	return c
}

// bucketTable builds two to four buckets per point, so that about one
// bucket in thirty holds two points or more, capped at 2^20 buckets
// (8 MiB) so building it stays cheap next to the points. Tables within
// 2^16 buckets (512 KiB, inside a core's L2) get up to eight times as
// many. A 1,000-node ring (160,000 points) gets 2^19 buckets, 4 MiB: one
// to two buckets per point, as in the Rust core, made its lookups over
// 16,384 keys about a quarter slower (benchmarks/RESULTS.md). Nil when
// there are no points or more than a payload can index.
func bucketTable(points []point, space int) ([]bucket, uint, uint) {
	if len(points) == 0 || len(points) > payloadMask {
		return nil, 0, 0
	}
	base := min(max(bits.Len(uint(len(points))), 1), 20)
	width := min(max(base+1, min(base+2, 16)), 20, space)
	shift := uint(space - width)
	drop := uint(0)
	if shift > kindShift {
		drop = shift - kindShift
	}
	buckets := make([]bucket, 1<<width)
	mask := uint64(1)<<shift - 1
	b := uint64(0)
	for i := 0; i < len(points); {
		// Buckets before point i's own have no point: it owns them.
		home := points[i].pos >> shift
		for ; b < home; b++ {
			buckets[b] = bucket{kindNone, points[i].node}
		}
		// Points i..k−1 are in the bucket; those before its last
		// position split it, one on the last position owns it all.
		k, split := i, 0
		last := points[i].pos | mask
		for ; k < len(points) && points[k].pos>>shift == home; k++ {
			if points[k].pos < last {
				split++
			}
		}
		switch {
		case split == 0:
			buckets[home] = bucket{kindNone, points[i].node}
		case split == 1 && k-i == 1:
			// The next point is at or after the next bucket's start.
			off := (points[i].pos & mask) >> drop
			buckets[home] = bucket{kindOne | uint32(off), points[i].node}
		default:
			buckets[home] = bucket{kindMany | uint32(i), points[i].node}
		}
		b, i = home+1, k
	}
	for ; b < uint64(len(buckets)); b++ {
		buckets[b] = bucket{kindNone, points[0].node} // wraps to the first point
	}
	return buckets, shift, drop
}

// sortedContinuum sorts points by position, then node index (5.1).
func sortedContinuum(points []point, bits int) continuum {
	sortPoints(points)
	return newContinuum(points, bits)
}

// sortPoints sorts points as byPositionThenNode does. Long lists take an
// LSD radix sort, a byte a pass (node index bytes, then position bytes),
// skipping the passes where every point has the same byte: a client
// rebuilds a ring on every version it verifies, and on a 100-node ring
// (16,000 points) slices.SortFunc took most of the build, several times
// this sort's time (benchmarks/RESULTS.md, "Build").
func sortPoints(points []point) {
	if len(points) < 256 {
		slices.SortFunc(points, byPositionThenNode)
		return
	}
	src, dst := points, make([]point, len(points))
	for pass := range 12 {
		var counts [256]int
		for _, p := range src {
			counts[radixDigit(p, pass)]++
		}
		if counts[radixDigit(src[0], pass)] == len(src) {
			continue
		}
		sum := 0
		for d, c := range counts {
			counts[d] = sum
			sum += c
		}
		for _, p := range src {
			d := radixDigit(p, pass)
			dst[counts[d]] = p
			counts[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &points[0] {
		copy(points, src)
	}
}

// radixDigit is the byte sortPoints orders by in a pass: the node
// index's four bytes first, least significant first, then the
// position's eight.
func radixDigit(p point, pass int) byte {
	if pass < 4 {
		return byte(p.node >> (8 * pass))
	}
	return byte(p.pos >> (8 * (pass - 4)))
}

// successor is the index of the first point at or after h, wrapping to 0
// (5.1). The circle must have a point. Walks (preference lists) use it,
// so a binary search is fast enough where the bucket holds no index.
func (c *continuum) successor(h uint64) int {
	i := 0
	if c.buckets != nil {
		if e := c.buckets[h>>c.shift]; e.word&^payloadMask == kindMany {
			i = int(e.word & payloadMask)
			for i < len(c.points) && c.points[i].pos < h {
				i++
			}
			return i % len(c.points)
		}
	}
	i = sort.Search(len(c.points), func(j int) bool { return c.points[j].pos >= h })
	return i % len(c.points)
}

func (c *continuum) ownerIndex(h uint64) (uint32, bool) {
	if c.buckets == nil {
		if len(c.points) == 0 {
			return 0, false
		}
		return c.points[c.successor(h)].node, true
	}
	b := h >> c.shift
	e := c.buckets[b]
	switch e.word &^ payloadMask {
	case kindNone:
		return e.entry, true
	case kindOne:
		off := (h & (1<<c.shift - 1)) >> c.drop
		split := uint64(e.word & payloadMask)
		switch {
		case off < split || off == split && c.drop == 0:
			return e.entry, true
		case off > split:
			return c.buckets[(b+1)&uint64(len(c.buckets)-1)].entry, true
		}
		// The same top bits as the point: only its position tells.
		return c.points[c.successor(h)].node, true
	}
	i := int(e.word & payloadMask)
	for i < len(c.points) && c.points[i].pos < h {
		i++
	}
	if i == len(c.points) {
		i = 0
	}
	return c.points[i].node, true
}

// walk visits the owners of the points from successor(h) up, wrapping,
// each point once (6.1).
func (c *continuum) walk(h uint64, visit func(uint32) bool) {
	if len(c.points) == 0 {
		return
	}
	s := c.successor(h)
	for _, p := range c.points[s:] {
		if !visit(p.node) {
			return
		}
	}
	for _, p := range c.points[:s] {
		if !visit(p.node) {
			return
		}
	}
}

// units are the arcs of 7: point j owns (p[j−1], p[j]] and point 0 also
// [0, p[0]] and the wrap past the last point; the total is 2^bits.
func (c *continuum) units(nodes int) ([]u128, u128) {
	units := make([]u128, nodes)
	total := u128{lo: 1 << c.bits}
	if c.bits == 64 {
		total = u128{hi: 1}
	}
	ps := c.points
	if len(ps) == 0 {
		return units, total
	}
	last := uint64(1<<c.bits - 1) // the circle's largest position
	if c.bits == 64 {
		last = ^uint64(0)
	}
	units[ps[0].node] = units[ps[0].node].add(ps[0].pos).add(1) // [0, p0]: p0 + 1 positions
	for j := 1; j < len(ps); j++ {
		units[ps[j].node] = units[ps[j].node].add(ps[j].pos - ps[j-1].pos)
	}
	units[ps[0].node] = units[ps[0].node].add(last - ps[len(ps)-1].pos)
	return units, total
}

// appendPoints appends a u32 point count, then (position, node index)
// pairs: u64 positions on a 64-bit circle, u32 on a 32-bit one (9.1).
func (c *continuum) appendPoints(dst []byte) []byte {
	dst = slices.Grow(dst, 4+len(c.points)*(4+c.bits/8))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(c.points)))
	for _, p := range c.points {
		if c.bits == 64 {
			dst = binary.LittleEndian.AppendUint64(dst, p.pos)
		} else {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(p.pos))
		}
		dst = binary.LittleEndian.AppendUint32(dst, p.node)
	}
	return dst
}

// circle is the layout of ring, ketama, nginx and envoy_ring_hash: a
// continuum whose body is its point list.
type circle struct{ continuum }

func (c *circle) appendBody(dst []byte) []byte { return c.appendPoints(dst) }
func (c *circle) basis() string                { return "arcs" }

// u128 is an unsigned 128-bit integer, enough for ownership units: a ring
// node can own all 2^64 positions.
type u128 struct{ hi, lo uint64 }

func (x u128) add(v uint64) u128 {
	lo := x.lo + v
	hi := x.hi
	if lo < x.lo {
		hi++
	}
	return u128{hi, lo}
}
