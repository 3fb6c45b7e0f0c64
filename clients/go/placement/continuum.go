package placement

import (
	"cmp"
	"encoding/binary"
	"slices"
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
// shared by ring, ketama, nginx, twemproxy and haproxy's boundaries. The
// positions and owners are two parallel slices, so the binary search
// touches only positions.
type continuum struct {
	pos   []uint64
	owner []uint32
	bits  int // 64 or 32
}

// newContinuum takes points already in the algorithm's order.
func newContinuum(points []point, bits int) continuum {
	c := continuum{pos: make([]uint64, len(points)), owner: make([]uint32, len(points)), bits: bits}
	for i, p := range points {
		c.pos[i], c.owner[i] = p.pos, p.node
	}
	return c
}

// sortedContinuum sorts points by position, then node index (5.1).
func sortedContinuum(points []point, bits int) continuum {
	slices.SortFunc(points, byPositionThenNode)
	return newContinuum(points, bits)
}

// successor is the index of the first point at or after h, wrapping to 0
// (5.1). The circle must have a point.
func (c *continuum) successor(h uint64) int {
	lo, hi := 0, len(c.pos)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.pos[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(c.pos) {
		return 0
	}
	return lo
}

func (c *continuum) ownerIndex(h uint64) (uint32, bool) {
	if len(c.pos) == 0 {
		return 0, false
	}
	return c.owner[c.successor(h)], true
}

// walk visits the owners of the points from successor(h) up, wrapping,
// each point once (6.1).
func (c *continuum) walk(h uint64, visit func(uint32) bool) {
	if len(c.pos) == 0 {
		return
	}
	s := c.successor(h)
	for _, o := range c.owner[s:] {
		if !visit(o) {
			return
		}
	}
	for _, o := range c.owner[:s] {
		if !visit(o) {
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
	if len(c.pos) == 0 {
		return units, total
	}
	last := uint64(1<<c.bits - 1) // the circle's largest position
	if c.bits == 64 {
		last = ^uint64(0)
	}
	units[c.owner[0]] = units[c.owner[0]].add(c.pos[0]).add(1) // [0, p0]: p0 + 1 positions
	for j := 1; j < len(c.pos); j++ {
		units[c.owner[j]] = units[c.owner[j]].add(c.pos[j] - c.pos[j-1])
	}
	units[c.owner[0]] = units[c.owner[0]].add(last - c.pos[len(c.pos)-1])
	return units, total
}

// appendPoints appends a u32 point count, then (position, node index)
// pairs: u64 positions on a 64-bit circle, u32 on a 32-bit one (9.1).
func (c *continuum) appendPoints(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(c.pos)))
	for i, p := range c.pos {
		if c.bits == 64 {
			dst = binary.LittleEndian.AppendUint64(dst, p)
		} else {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(p))
		}
		dst = binary.LittleEndian.AppendUint32(dst, c.owner[i])
	}
	return dst
}

// circle is the layout of ring, ketama and nginx: a continuum whose body
// is its point list.
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
