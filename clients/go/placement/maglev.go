package placement

import (
	"encoding/binary"
	"slices"
	"strings"
)

// maglevLayout is a Maglev lookup table filled as Envoy fills it (5.3):
// M slots, each a node index; empty with no active node.
type maglevLayout struct {
	table []uint32
}

// maglevPermutation is a node's (offset, skip): its permutation of the M
// slots is (offset + skip × j) mod M.
func maglevPermutation(label string, m uint64) (offset, skip uint64) {
	b := []byte(label)
	return xxh64(b, 0) % m, xxh64(b, 1)%(m-1) + 1
}

// buildMaglev fills the table (5.3). weights are the raw weights, or
// weight × ramp in a ramped set: scaling all alike changes no comparison;
// envoy_maglev gives its EDS weights (5.11), at most 2^31, so round ×
// weight stays below 2^55 (round ≤ M ≤ 5,000,011).
func buildMaglev(active []Node, weights []uint64, m int) *maglevLayout {
	if len(active) == 0 {
		return &maglevLayout{}
	}
	// Fill order: labels in byte order, ties by node index (Envoy's host
	// order, sorted by hash key).
	order := make([]int, len(active))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(active[a].Label(), active[b].Label()) })
	type entry struct {
		node                       uint32
		offset, skip, weight, next uint64
		target                     uint64
	}
	entries := make([]entry, len(order))
	var top uint64
	for k, i := range order {
		offset, skip := maglevPermutation(active[i].Label(), uint64(m))
		entries[k] = entry{node: uint32(i), offset: offset, skip: skip, weight: weights[i]}
		top = max(top, weights[i])
	}
	const empty = ^uint32(0)
	table := make([]uint32, m)
	for i := range table {
		table[i] = empty
	}
	mm := uint64(m)
	filled := 0
	for round := uint64(1); filled < m; round++ {
		for k := range entries {
			if filled == m {
				break
			}
			e := &entries[k]
			if round*e.weight < e.target {
				continue // not this node's turn
			}
			e.target += top
			c := (e.offset + e.skip*e.next) % mm
			for table[c] != empty {
				e.next++
				c = (e.offset + e.skip*e.next) % mm
			}
			table[c] = e.node
			e.next++
			filled++
		}
	}
	return &maglevLayout{table}
}

func (l *maglevLayout) ownerIndex(h uint64) (uint32, bool) {
	if len(l.table) == 0 {
		return 0, false
	}
	return l.table[h%uint64(len(l.table))], true
}

// walk visits the slots from h mod M up, wrapping, each once (6.1).
func (l *maglevLayout) walk(h uint64, visit func(uint32) bool) {
	if len(l.table) == 0 {
		return
	}
	s := int(h % uint64(len(l.table)))
	for _, o := range l.table[s:] {
		if !visit(o) {
			return
		}
	}
	for _, o := range l.table[:s] {
		if !visit(o) {
			return
		}
	}
}

// units counts each node's slots; the total is M (7).
func (l *maglevLayout) units(nodes int) ([]u128, u128) {
	units := make([]u128, nodes)
	for _, o := range l.table {
		units[o] = units[o].add(1)
	}
	return units, u128{lo: uint64(len(l.table))}
}

func (l *maglevLayout) appendBody(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(l.table)))
	for _, o := range l.table {
		dst = binary.LittleEndian.AppendUint32(dst, o)
	}
	return dst
}

func (l *maglevLayout) basis() string { return "table_entries" }
