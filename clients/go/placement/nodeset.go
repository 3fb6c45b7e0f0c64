package placement

import (
	"slices"
	"strings"
)

// normalize validates a node set for a config and returns its active
// nodes sorted by id in byte order (spec 2.3), running checks 0 and 2 to 6
// of 2.4 in their order. Check 7 belongs to a server computing a table,
// which a client never does. The config must already be valid.
func normalize(c Config, nodes []Node) ([]Node, error) {
	// Check 0: each node's own fields, the first bad node in input order.
	for i := range nodes {
		if err := nodes[i].Validate(); err != nil {
			return nil, err
		}
	}
	every := slices.Clone(nodes)
	slices.SortStableFunc(every, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	for i := 1; i < len(every); i++ {
		if every[i].ID == every[i-1].ID {
			return nil, errorf(ErrDuplicateNodeID, "two nodes have the id %s", every[i].ID)
		}
	}
	active := make([]Node, 0, len(every))
	for _, n := range every {
		if n.State == Active {
			active = append(active, n)
		}
	}
	if c.ZoneAware {
		for _, n := range active {
			if n.Zone == "" {
				return nil, errorf(ErrMissingZone, "zone_aware, but active node %s has no zone", n.ID)
			}
		}
	}
	if err := checkAddresses(c, every, active); err != nil {
		return nil, err
	}
	if !c.Algorithm.takesRamps() {
		for _, n := range active {
			if n.Ramp != FullRamp {
				return nil, errorf(ErrRampNotSupported, "node %s at ramp %d: %s takes no ramp", n.ID, n.Ramp, c.Algorithm)
			}
		}
	}
	if c.Algorithm == Haproxy {
		for _, n := range active {
			if n.Weight > haproxyMaxWeight {
				return nil, errorf(ErrWeightTooHighForProxy, "node %s has weight %d; haproxy takes 1..=%d", n.ID, n.Weight, haproxyMaxWeight)
			}
		}
	}
	if err := checkCaps(c, active); err != nil {
		return nil, err
	}
	return active, nil
}

// checkAddresses is check 3a: the algorithms that place by address, and
// the xDS modes (envoy_ring_hash, envoy_maglev), whose nodes are
// endpoints, need one on every active node, and one their proxy takes as
// a server.
func checkAddresses(c Config, every, active []Node) error {
	if !c.Algorithm.needsAddress() {
		return nil
	}
	for _, n := range active {
		if n.Address == "" {
			return errorf(ErrMissingAddress, "active node %s has no address, which every %s node needs", n.ID, c.Algorithm)
		}
	}
	switch c.Algorithm {
	case Nginx:
		return checkNginxAddresses(active)
	case EnvoyRingHash, EnvoyMaglev:
		return checkEnvoyNodes(every, active)
	}
	// twemproxy: every node is checked, not only the active ones, so that
	// a node nutcracker could not be given is refused when it is written.
	for i := range every {
		if _, err := serverName(&every[i]); err != nil {
			return err
		}
	}
	_, err := serverNames(active)
	return err
}

// checkCaps is checks 5 and 6: the point cap and the table size of
// maglev and envoy_maglev.
func checkCaps(c Config, active []Node) error {
	var weights uint64
	for _, n := range active {
		weights += uint64(n.Weight)
	}
	var points uint64
	switch c.Algorithm {
	case Ring:
		points = uint64(c.VnodesPerWeight) * weights // full points, whatever the ramps
	case Ketama:
		for _, d := range ketamaDigests(active) {
			points += 4 * uint64(d)
		}
	case Nginx:
		points = nginxPointsPerWeight * weights
	case Haproxy:
		points = haproxyPointsPerWeight * weights
	case Twemproxy:
		for _, k := range twemproxyPointCounts(active) {
			points += uint64(k)
		}
	case EnvoyRingHash:
		points = envoyEntryTotal(active, c.MinimumRingSize, c.MaximumRingSize)
	case Jump:
		points = weights
	case Table:
		cells := uint64(c.Partitions) * uint64(min(c.ReplicationFactor, len(active)))
		if cells > MaxPoints {
			return errorf(ErrTableTooLarge, "%d partitions × replicas > %d", cells, MaxPoints)
		}
	}
	if points > MaxPoints {
		return errorf(ErrTooManyPoints, "%d points > %d", points, MaxPoints)
	}
	if c.Algorithm.usesTableSize() && c.TableSize < len(active) {
		return errorf(ErrTableSizeOutOfRange, "table_size %d < %d active nodes", c.TableSize, len(active))
	}
	return nil
}

// isRamped reports whether some active node is below full ramp (2.2).
func isRamped(active []Node) bool {
	for _, n := range active {
		if n.Ramp != FullRamp {
			return true
		}
	}
	return false
}

// zoneNumbers numbers the active nodes' zones: the distinct names sorted
// in byte order, a zone's number its position (2.3 step 4). Nodes without
// a zone (possible only without zone awareness) get -1.
func zoneNumbers(active []Node) (numbers []int32, count int) {
	var names []string
	for _, n := range active {
		if n.Zone != "" {
			names = append(names, n.Zone)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	numbers = make([]int32, len(active))
	for i, n := range active {
		numbers[i] = -1
		if n.Zone != "" {
			z, _ := slices.BinarySearch(names, n.Zone)
			numbers[i] = int32(z)
		}
	}
	return numbers, len(names)
}
