package placement

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// rendezvousLayout is weighted highest random weight in exact integer
// arithmetic (5.5): no platform logarithm, so every language agrees.
type rendezvousLayout struct {
	nodeHashes []uint64 // H(hash, label) by node index
	weights    []uint64 // weights, or weight × ramp in a ramped set
	// uniform: all weights are equal, so the order is by draw alone (the
	// shortcut of 5.5), which skips the logarithm.
	uniform bool
}

func buildRendezvous(active []Node, h Hash, weights []uint64) *rendezvousLayout {
	l := &rendezvousLayout{nodeHashes: make([]uint64, len(active)), weights: weights, uniform: true}
	for i := range active {
		l.nodeHashes[i] = hash64(h, []byte(active[i].Label()))
		l.uniform = l.uniform && weights[i] == weights[0]
	}
	return l
}

// log2Q32 is L(x) = ⌊2^32 · log2 x⌋ for x = v + 1, 1 ≤ x ≤ 2^64, by
// repeated squaring of the mantissa in 1.63 fixed point (5.5). Taking v
// rather than x keeps x = 2^64 representable.
func log2Q32(v uint64) uint64 {
	if v == ^uint64(0) {
		return 64 << 32 // x = 2^64
	}
	x := v + 1
	e := uint64(63 - bits.LeadingZeros64(x))
	m := x << (63 - e) // in [2^63, 2^64)
	var frac uint64
	for i := 0; i < 32; i++ {
		hi, lo := bits.Mul64(m, m)
		// (m × m) >> 63 is hi × 2 + (lo >> 63), below 2^65: at or above
		// 2^64 exactly when hi's top bit is set, and then halving it
		// leaves hi.
		frac <<= 1
		if hi>>63 == 1 {
			m = hi
			frac |= 1
		} else {
			m = hi<<1 | lo>>63
		}
	}
	return e<<32 | frac
}

// rendezvousCost is 64·2^32 − L(draw + 1), in 0..=2^38.
func rendezvousCost(draw uint64) uint64 { return 64<<32 - log2Q32(draw) }

// score is what the order of 5.5 compares for one node.
type score struct {
	cost, weight, draw uint64
	node               uint32
}

// before reports whether a ranks before b: the smaller cost/weight, as
// exact 128-bit cross products; then the larger draw; then the lower index.
func (a *score) before(b *score) bool {
	ah, al := bits.Mul64(a.cost, b.weight)
	bh, bl := bits.Mul64(b.cost, a.weight)
	if ah != bh || al != bl {
		return ah < bh || ah == bh && al < bl
	}
	if a.draw != b.draw {
		return a.draw > b.draw
	}
	return a.node < b.node
}

func (l *rendezvousLayout) score(h uint64, i int) score {
	draw := fmix64(h ^ l.nodeHashes[i])
	s := score{draw: draw, weight: l.weights[i], node: uint32(i)}
	if !l.uniform {
		s.cost = rendezvousCost(draw)
	}
	return s
}

func (l *rendezvousLayout) ownerIndex(h uint64) (uint32, bool) {
	if len(l.nodeHashes) == 0 {
		return 0, false
	}
	if l.uniform {
		// The largest draw; the first of equal draws, the lowest index.
		best, bestDraw := 0, fmix64(h^l.nodeHashes[0])
		for i := 1; i < len(l.nodeHashes); i++ {
			if d := fmix64(h ^ l.nodeHashes[i]); d > bestDraw {
				best, bestDraw = i, d
			}
		}
		return uint32(best), true
	}
	best := l.score(h, 0)
	for i := 1; i < len(l.nodeHashes); i++ {
		if s := l.score(h, i); s.before(&best) {
			best = s
		}
	}
	return best.node, true
}

// walk visits every node in the order of 5.5, best first.
func (l *rendezvousLayout) walk(h uint64, visit func(uint32) bool) {
	scores := make([]score, len(l.nodeHashes))
	for i := range scores {
		scores[i] = l.score(h, i)
	}
	slices.SortFunc(scores, func(a, b score) int {
		switch {
		case a.before(&b):
			return -1
		case b.before(&a):
			return 1
		}
		return 0
	})
	for _, s := range scores {
		if !visit(s.node) {
			return
		}
	}
}

// units are the weights (scaled in a ramped set); the total their sum (7).
func (l *rendezvousLayout) units(nodes int) ([]u128, u128) {
	units := make([]u128, nodes)
	var total u128
	for i, w := range l.weights {
		units[i] = u128{lo: w}
		total = total.add(w)
	}
	return units, total
}

// appendBody is each node's label hash in index order; no count (9.1).
func (l *rendezvousLayout) appendBody(dst []byte) []byte {
	for _, h := range l.nodeHashes {
		dst = binary.LittleEndian.AppendUint64(dst, h)
	}
	return dst
}

func (l *rendezvousLayout) basis() string { return "weights" }
