package placement

import (
	"encoding/binary"
	"math/bits"
)

// tableLayout is a stored partition table (5.6): partitions rows of
// replicas distinct node indices, primary first. A client never computes
// one: it restores the server's (5.6.3).
type tableLayout struct {
	nodes      int // active nodes, which set the index width
	partitions uint32
	replicas   int // r = min(replication_factor, active nodes)
	shift      uint
	cells      []uint32 // partitions × replicas, row by row
}

// tableIndexWidth is the bytes per node index: u16 up to 65,535 nodes,
// else u32 (9.1).
func tableIndexWidth(nodes int) int {
	if nodes <= 0xffff {
		return 2
	}
	return 4
}

// newTable checks the cells (5.6.3 steps 4 and 5): every index below n,
// no row holding a node twice.
func newTable(n int, partitions uint32, replicas int, cells []uint32) (*tableLayout, error) {
	for p := 0; p < int(partitions); p++ {
		row := cells[p*replicas : (p+1)*replicas]
		for k, c := range row {
			if int(c) >= n {
				return nil, errorf(ErrInvalidTable, "partition %d names node %d of %d", p, c, n)
			}
			for _, d := range row[:k] {
				if c == d {
					return nil, errorf(ErrInvalidTable, "partition %d names a node twice", p)
				}
			}
		}
	}
	// A key's partition is the top b bits of its hash, b = log2 P.
	shift := uint(64 - (bits.Len32(partitions) - 1))
	return &tableLayout{nodes: n, partitions: partitions, replicas: replicas, shift: shift, cells: cells}, nil
}

// restoreTableBody accepts a table body (9.1) for the config and nodes
// only as 5.6.3 says: the configured partition count, r replicas, exactly
// P × r indices of the right width, each below n, no node twice in a row.
func restoreTableBody(n int, partitions, replicationFactor int, body []byte) (*tableLayout, error) {
	if len(body) < 5 {
		return nil, errorf(ErrInvalidTable, "the table body ends early")
	}
	p, r := binary.LittleEndian.Uint32(body), int(body[4])
	if int64(p) != int64(partitions) {
		return nil, errorf(ErrInvalidTable, "the table has %d partitions, the config %d", p, partitions)
	}
	if want := min(replicationFactor, n); r != want {
		return nil, errorf(ErrInvalidTable, "the table has %d replicas per partition, not %d", r, want)
	}
	width := tableIndexWidth(n)
	if uint64(len(body)-5) != uint64(p)*uint64(r)*uint64(width) {
		return nil, errorf(ErrInvalidTable, "the table's cells are %d bytes, not %d", len(body)-5, uint64(p)*uint64(r)*uint64(width))
	}
	cells := make([]uint32, int(p)*r)
	for i := range cells {
		if width == 2 {
			cells[i] = uint32(binary.LittleEndian.Uint16(body[5+2*i:]))
		} else {
			cells[i] = binary.LittleEndian.Uint32(body[5+4*i:])
		}
	}
	return newTable(n, p, r, cells)
}

// tableFromRows accepts a table given as rows of node ids, primary first
// (the vector files' `table`).
func tableFromRows(active []Node, partitions, replicationFactor int, rows [][]string) (*tableLayout, error) {
	index := make(map[string]uint32, len(active))
	for i, n := range active {
		index[n.ID] = uint32(i)
	}
	r := min(replicationFactor, len(active))
	if len(rows) != partitions {
		return nil, errorf(ErrInvalidTable, "%d rows for %d partitions", len(rows), partitions)
	}
	cells := make([]uint32, 0, partitions*r)
	for p, row := range rows {
		if len(row) != r {
			return nil, errorf(ErrInvalidTable, "partition %d holds %d replicas, not %d", p, len(row), r)
		}
		for _, id := range row {
			i, ok := index[id]
			if !ok {
				return nil, errorf(ErrInvalidTable, "partition %d names %s, not an active node", p, excerpt(id))
			}
			cells = append(cells, i)
		}
	}
	return newTable(len(active), uint32(partitions), r, cells)
}

func (l *tableLayout) ownerIndex(h uint64) (uint32, bool) {
	if l.replicas == 0 {
		return 0, false
	}
	return l.cells[int(h>>l.shift)*l.replicas], true
}

// row is partition p's node indices, primary first.
func (l *tableLayout) row(p int) []uint32 { return l.cells[p*l.replicas : (p+1)*l.replicas] }

// walk visits the key's row, then the following rows, wrapping, each once (6.1).
func (l *tableLayout) walk(h uint64, visit func(uint32) bool) {
	if l.replicas == 0 {
		return
	}
	first, count := int(h>>l.shift), int(l.partitions)
	for k := 0; k < count; k++ {
		for _, o := range l.row((first + k) % count) {
			if !visit(o) {
				return
			}
		}
	}
}

// units count the partitions each node is primary for; the total is P (7).
func (l *tableLayout) units(nodes int) ([]u128, u128) {
	units := make([]u128, nodes)
	if l.replicas > 0 {
		for p := 0; p < int(l.partitions); p++ {
			o := l.cells[p*l.replicas]
			units[o] = units[o].add(1)
		}
	}
	return units, u128{lo: uint64(l.partitions)}
}

// replicaCounts counts the cells, primary or not, holding each node (7).
func (l *tableLayout) replicaCounts(nodes int) []int {
	held := make([]int, nodes)
	for _, c := range l.cells {
		held[c]++
	}
	return held
}

// appendBody is the u32 partition count, the u8 replica count, then the
// cells row by row, u16 or u32 by node count (9.1).
func (l *tableLayout) appendBody(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, l.partitions)
	dst = append(dst, byte(l.replicas))
	wide := tableIndexWidth(l.nodes) == 4
	for _, c := range l.cells {
		if wide {
			dst = binary.LittleEndian.AppendUint32(dst, c)
		} else {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(c))
		}
	}
	return dst
}

func (l *tableLayout) basis() string { return "partitions" }
