package placement

// selectReplicas is the selection of spec 6.2: up to want = min(r, node
// count) distinct node indices from a successor order. With zones, the
// first S = min(want, zone count) entries are the first nodes that each
// bring a zone not yet used, and the rest the earliest nodes not yet
// taken, so the list need not be in successor order. A node seen again
// is skipped, or dropped as it was the first time, which is why walking
// runs instead of buckets (jump) gives the same list.
func selectReplicas(walk func(visit func(uint32) bool), want, nodes int, zoneOf []int32, zoneCount int) []uint32 {
	want = min(want, nodes)
	if want <= 0 {
		return nil
	}
	picked := make([]uint32, 0, want)
	seen := newNodeSet(nodes)
	if zoneOf == nil {
		walk(func(n uint32) bool {
			if seen.add(n) {
				picked = append(picked, n)
			}
			return len(picked) < want
		})
		return picked
	}
	spread := min(want, zoneCount)
	usedZones := newNodeSet(zoneCount)
	var rest []uint32
	walk(func(n uint32) bool {
		if !seen.add(n) {
			return true
		}
		if len(picked) < spread && usedZones.add(uint32(zoneOf[n])) {
			picked = append(picked, n)
		} else if len(rest) < want-spread {
			rest = append(rest, n)
		}
		return len(picked) < spread || len(rest) < want-spread
	})
	return append(picked, rest...)
}

// nodeSet is a set of small integers (node indices, zone numbers).
type nodeSet []uint64

func newNodeSet(n int) nodeSet { return make(nodeSet, (n+63)/64) }

// add inserts i and reports whether it was new.
func (s nodeSet) add(i uint32) bool {
	w, b := i/64, uint64(1)<<(i%64)
	if s[w]&b != 0 {
		return false
	}
	s[w] |= b
	return true
}
