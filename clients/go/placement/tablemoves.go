package placement

import "encoding/binary"

// fromMoves is version v's table from version v − 1's placement and v's
// table_moves (9.4): a u32 count, then per move a u32 partition, a u8
// slot and the node's index among v's active nodes (u16, or u32 above
// 65,535 nodes).
func (s *Snapshot) fromMoves(previous *Placement) (*Placement, error) {
	prev, ok := previous.lay.(*tableLayout)
	if !ok {
		return nil, errorf(ErrInvalidTable, "the previous placement is not a table")
	}
	if previous.version != 0 && s.Version != previous.version+1 {
		return nil, errorf(ErrInvalidTable, "moves to version %d apply to version %d, not %d", s.Version, s.Version-1, previous.version)
	}
	if err := s.Config.Validate(); err != nil {
		return nil, err
	}
	active, err := normalize(s.Config, s.Nodes)
	if err != nil {
		return nil, err
	}
	rows, err := applyMoves(previous.nodes, prev, active, s.Config.Partitions, s.Config.ReplicationFactor, s.TableMoves)
	if err != nil {
		return nil, err
	}
	return Build(s.Config, s.Nodes, &Stored{TableRows: rows})
}

// applyMoves applies moves to the previous table's rows, as ids (node
// indices shift when nodes come and go), following 9.4's steps; it
// returns the new rows for the new active nodes.
func applyMoves(prevNodes []Node, prev *tableLayout, active []Node, partitions, replicationFactor int, moves []byte) ([][]string, error) {
	n := len(active)
	r := min(replicationFactor, n)
	width := tableIndexWidth(n)
	// Step 1: the partition count, the length, the node indices.
	if int(prev.partitions) != partitions {
		return nil, errorf(ErrInvalidTable, "moves cannot change the partition count (%d to %d)", prev.partitions, partitions)
	}
	if len(moves) < 4 {
		return nil, errorf(ErrInvalidTable, "the moves end early")
	}
	count := uint64(binary.LittleEndian.Uint32(moves))
	size := uint64(5 + width)
	if uint64(len(moves)) != 4+count*size {
		return nil, errorf(ErrInvalidTable, "%d moves need %d bytes, not %d", count, 4+count*size, len(moves))
	}
	ids := make([]string, n)
	for i, node := range active {
		ids[i] = node.ID
	}
	// Step 2: the previous rows as ids, cut or padded with empty slots to r.
	old := func(p, slot int) string {
		if slot < prev.replicas {
			return prevNodes[prev.row(p)[slot]].ID
		}
		return ""
	}
	rows := make([][]string, partitions)
	for p := range rows {
		rows[p] = make([]string, r)
		for slot := range rows[p] {
			rows[p][slot] = old(p, slot)
		}
	}
	// Step 3: each move, into a slot that still holds what it held.
	for k := uint64(0); k < count; k++ {
		m := moves[4+k*size:]
		part, slot := binary.LittleEndian.Uint32(m), int(m[4])
		var to uint32
		if width == 2 {
			to = uint32(binary.LittleEndian.Uint16(m[5:]))
		} else {
			to = binary.LittleEndian.Uint32(m[5:])
		}
		if int(to) >= n {
			return nil, errorf(ErrInvalidTable, "a move names node %d of %d", to, n)
		}
		if int64(part) >= int64(partitions) || slot >= r {
			return nil, errorf(ErrInvalidTable, "a move to partition %d slot %d is outside the table", part, slot)
		}
		if rows[part][slot] != old(int(part), slot) {
			return nil, errorf(ErrInvalidTable, "partition %d slot %d changed twice", part, slot)
		}
		rows[part][slot] = ids[to]
	}
	// Step 4: no empty slot; tableFromRows refuses inactive nodes and
	// nodes twice in a row.
	for p, row := range rows {
		for slot, id := range row {
			if id == "" {
				return nil, errorf(ErrInvalidTable, "the moves leave partition %d slot %d empty", p, slot)
			}
		}
	}
	return rows, nil
}
