package placement

import (
	"encoding/binary"
	"slices"
	"sort"
)

// HAProxy's constants (5.8).
const (
	haproxyPointsPerWeight = 16   // BE_WEIGHT_SCALE
	haproxyIDStride        = 4096 // SRV_EWGHT_RANGE: 256 weights × 16 points
	haproxyMaxWeight       = 256  // HAProxy's largest weight
)

// MaxServerID is the largest haproxy server id, 2^20 − 1, which keeps
// id × 4096 + k below 2^32 (5.8.3).
const MaxServerID = 1<<20 - 1

// haproxyLayout is HAProxy 2.6's `hash-type consistent` (5.8). A key goes
// to the point nearest its hash, the one before on a tie; that is the
// successor rule over each point's boundary b_j = key_j + ⌊g_j / 2⌋ (g_j
// the gap to the next point), so the embedded circle holds boundaries,
// while HAProxy's own points are kept for the encoding.
type haproxyLayout struct {
	circle
	points    []point  // (key, node index), sorted by key
	serverIDs []uint32 // by node index
	avalanche bool
}

// buildHaproxy places node i, with server id s and weight w, at the 16w
// keys full_hash(s × 4096 + k). Since full_hash is a bijection and the
// arguments are distinct, no two points share a key.
func buildHaproxy(active []Node, serverIDs []uint32, avalanche bool) *haproxyLayout {
	var points []point
	for i, n := range active {
		for k := 0; k < haproxyPointsPerWeight*n.Weight; k++ {
			key := fullHash(serverIDs[i]*haproxyIDStride + uint32(k))
			points = append(points, point{uint64(key), uint32(i)})
		}
	}
	slices.SortFunc(points, byPositionThenNode)
	boundaries := make([]point, len(points))
	for j, p := range points {
		next := points[(j+1)%len(points)].pos
		gap := (next-p.pos-1)&0xffffffff + 1 // 2^32 for a lone point
		boundaries[j] = point{(p.pos + gap/2) & 0xffffffff, p.node}
	}
	return &haproxyLayout{
		circle:    circle{sortedContinuum(boundaries, 32)},
		points:    points,
		serverIDs: serverIDs,
		avalanche: avalanche,
	}
}

// appendBody is the avalanche byte, every node's server id in index
// order, then HAProxy's points (9.1).
func (l *haproxyLayout) appendBody(dst []byte) []byte {
	b := byte(0)
	if l.avalanche {
		b = 1
	}
	dst = append(dst, b)
	for _, s := range l.serverIDs {
		dst = binary.LittleEndian.AppendUint32(dst, s)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(l.points)))
	for _, p := range l.points {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(p.pos))
		dst = binary.LittleEndian.AppendUint32(dst, p.node)
	}
	return dst
}

// haproxyServerIDs checks that every active node has a server id in
// 1..=MaxServerID and that no two share one; it returns them in index order.
func haproxyServerIDs(active []Node, ids map[string]uint32) ([]uint32, error) {
	out := make([]uint32, len(active))
	owner := make(map[uint32]string, len(active))
	for i, n := range active {
		s, ok := ids[n.ID]
		if !ok {
			return nil, errorf(ErrInvalidServerIDs, "active node %s has no server id", n.ID)
		}
		if s == 0 || s > MaxServerID {
			return nil, errorf(ErrInvalidServerIDs, "node %s has server id %d: ids run from 1 to %d", n.ID, s, MaxServerID)
		}
		if other, dup := owner[s]; dup {
			return nil, errorf(ErrInvalidServerIDs, "nodes %s and %s share server id %d", other, n.ID, s)
		}
		owner[s] = n.ID
		out[i] = s
	}
	return out, nil
}

// InitialServerIDs numbers every node, in any state, in id order from 1:
// the ids of a ring that becomes haproxy, or of a placement built from a
// node set alone (5.8.3).
func InitialServerIDs(nodes []Node) map[string]uint32 {
	ids := make([]string, 0, len(nodes))
	for _, n := range nodes {
		ids = append(ids, n.ID)
	}
	sort.Strings(ids)
	ids = slices.Compact(ids)
	out := make(map[string]uint32, len(ids))
	for i, id := range ids {
		out[id] = uint32(i + 1)
	}
	return out
}
