package placement

import "encoding/binary"

// buildRing is the virtual-node ring of spec 5.1: node i with label bytes
// B and c points places position(k) = H(hash, le32(len(B)) ‖ B ‖ le32(k))
// for k below its point count. A node's points depend only on its own
// label, weight and ramp.
func buildRing(active []Node, h Hash, vnodesPerWeight int) *circle {
	total := 0
	for i := range active {
		total += ringPointCount(vnodesPerWeight, &active[i])
	}
	points := make([]point, 0, total)
	var buf []byte
	for i := range active {
		label := active[i].Label()
		// The length prefix keeps ("node1", k=1) and ("node11", …) apart.
		buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(len(label)))
		buf = append(buf, label...)
		buf = append(buf, 0, 0, 0, 0)
		kAt := buf[len(buf)-4:]
		for k := 0; k < ringPointCount(vnodesPerWeight, &active[i]); k++ {
			binary.LittleEndian.PutUint32(kAt, uint32(k))
			points = append(points, point{hash64(h, buf), uint32(i)})
		}
	}
	return &circle{sortedContinuum(points, 64)}
}

// ringPointCount is c = vnodes × weight, or at ramp r the first
// ⌈r × c / 65,536⌉ of them, in integers (5.1); at least 1.
func ringPointCount(vnodesPerWeight int, n *Node) int {
	c := uint64(vnodesPerWeight) * uint64(n.Weight)
	return int((uint64(n.Ramp)*c + FullRamp - 1) / FullRamp)
}
