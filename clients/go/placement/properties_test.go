package placement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Property tests of the placement core's promises, as the Rust ones
// (tests/placement/properties.rs), over seeded random node sets: 1-12
// nodes with distinct ids, weights 1-4, one of three zones and an address
// (an IPv4 address, which every proxy mode takes, the xDS endpoints of
// envoy_ring_hash and envoy_maglev included).
// table is left out: a client never computes a table, and the vectors pin
// what it does with a stored one.

const propertyCases = 48

var propertyAlgorithms = []Algorithm{Ring, Ketama, Maglev, Jump, Rendezvous, Nginx, Haproxy, Twemproxy, EnvoyRingHash, EnvoyMaglev}

func randomNodes(rng *rand.Rand, maxNodes int) []Node {
	ids := map[string]bool{}
	count := 1 + rng.IntN(maxNodes)
	var nodes []Node
	for len(nodes) < count {
		id := string(rune('a' + rng.IntN(26)))
		for k := rng.IntN(8); k > 0; k-- {
			id += string("abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)])
		}
		if ids[id] {
			continue
		}
		ids[id] = true
		n := node(id, 1+rng.IntN(4))
		n.Zone = []string{"za", "zb", "zc"}[rng.IntN(3)]
		n.Address = fmt.Sprintf("10.0.0.%d:11211", 1+len(nodes))
		nodes = append(nodes, n)
	}
	return nodes
}

func propertyConfig(a Algorithm) Config {
	c := DefaultConfig(a)
	c.TableSize = 4099 // keeps maglev and envoy_maglev cases fast; still prime
	return c
}

func propertyKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%d", i))
	}
	return keys
}

// forCases runs f on propertyCases seeded cases for each algorithm.
func forCases(t *testing.T, algorithms []Algorithm, f func(t *testing.T, a Algorithm, rng *rand.Rand)) {
	for _, a := range algorithms {
		for c := 0; c < propertyCases; c++ {
			rng := rand.New(rand.NewPCG(uint64(a), uint64(c)))
			t.Run(fmt.Sprintf("%s/%d", a, c), func(t *testing.T) { f(t, a, rng) })
		}
	}
}

func TestInsertionOrderNeverMatters(t *testing.T) {
	forCases(t, propertyAlgorithms, func(t *testing.T, a Algorithm, rng *rand.Rand) {
		nodes := randomNodes(rng, 12)
		p := mustBuild(t, propertyConfig(a), nodes, nil)
		shuffled := slices.Clone(nodes)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		q := mustBuild(t, propertyConfig(a), shuffled, nil)
		if p.Fingerprint() != q.Fingerprint() {
			t.Fatal("the fingerprint depends on input order")
		}
		for _, k := range propertyKeys(400) {
			if !reflect.DeepEqual(p.PreferenceList(k, 3), q.PreferenceList(k, 3)) {
				t.Fatalf("key %s: the preference list depends on input order", k)
			}
		}
	})
}

func TestPreferenceListsHoldMinRNDistinctNodes(t *testing.T) {
	forCases(t, propertyAlgorithms, func(t *testing.T, a Algorithm, rng *rand.Rand) {
		nodes := randomNodes(rng, 12)
		c := propertyConfig(a)
		c.ZoneAware = rng.IntN(2) == 0
		r := 1 + rng.IntN(8)
		p := mustBuild(t, c, nodes, nil)
		zones := map[string]bool{}
		zoneOf := map[string]string{}
		for _, n := range nodes {
			zones[n.Zone] = true
			zoneOf[n.ID] = n.Zone
		}
		for _, k := range propertyKeys(100) {
			list := p.PreferenceList(k, r)
			owner, _ := p.Owner(k)
			if len(list) != min(r, len(nodes)) || list[0] != owner {
				t.Fatalf("key %s: %v (owner %s) for r %d over %d nodes", k, list, owner, r, len(nodes))
			}
			distinct, spread := map[string]bool{}, map[string]bool{}
			for i, id := range list {
				distinct[id] = true
				if i < min(r, len(zones)) {
					spread[zoneOf[id]] = true
				}
			}
			if len(distinct) != len(list) {
				t.Fatalf("key %s: %v repeats a node", k, list)
			}
			if c.ZoneAware && len(spread) != min(r, len(zones)) {
				t.Fatalf("key %s: %v does not spread over zones first", k, list)
			}
		}
	})
}

func TestOwnershipUnitsSumToTheKeyspace(t *testing.T) {
	forCases(t, propertyAlgorithms, func(t *testing.T, a Algorithm, rng *rand.Rand) {
		nodes := randomNodes(rng, 12)
		o := mustBuild(t, propertyConfig(a), nodes, nil).Ownership()
		sum, weights := u128{}, uint64(0)
		for _, n := range o.Nodes {
			sum = sum.add(n.Units.Uint64())
			if !n.Units.IsUint64() {
				sum = u128{hi: 1} // one node owning all of ring's 2^64
			}
		}
		for _, n := range nodes {
			weights += uint64(n.Weight)
		}
		want := map[Algorithm]string{
			Ring: "18446744073709551616", Ketama: "4294967296", Nginx: "4294967296", Haproxy: "4294967296",
			Twemproxy: "4294967296", Maglev: "4099", Jump: fmt.Sprint(weights), Rendezvous: fmt.Sprint(weights),
			EnvoyRingHash: "18446744073709551616", EnvoyMaglev: "4099",
		}[a]
		if sum.big().String() != o.TotalUnits.String() || o.TotalUnits.String() != want {
			t.Fatalf("units sum to %s of %s, want %s", sum.big(), o.TotalUnits, want)
		}
	})
}

// rebuild is the placement after a change, carrying the state the server
// carries: jump's order (5.4.3) and haproxy's server ids (5.8.3).
func rebuild(t *testing.T, before *Placement, a Algorithm, nodes []Node, newcomer string) *Placement {
	t.Helper()
	stored := &Stored{}
	switch a {
	case Jump:
		stored.Buckets = NextBucketOrder(before.BucketOrder(), nodes)
	case Haproxy:
		stored.ServerIDs = before.ServerIDs()
		next := uint32(1)
		for _, s := range stored.ServerIDs {
			next = max(next, s+1)
		}
		if newcomer != "" {
			stored.ServerIDs[newcomer] = next
		}
	}
	return mustBuild(t, propertyConfig(a), nodes, stored)
}

// onlyInvolves checks that every key that moves goes to or from id.
func onlyInvolves(t *testing.T, before, after *Placement, id string) {
	t.Helper()
	for _, k := range propertyKeys(400) {
		a, _ := before.Owner(k)
		b, _ := after.Owner(k)
		if a != b && a != id && b != id {
			t.Fatalf("key %s moved from %s to %s, not involving %s", k, a, b, id)
		}
	}
}

// The algorithms whose changes move only the keys they must: ketama,
// twemproxy and envoy_ring_hash re-cut every server's points, maglev and
// envoy_maglev are only near-minimal (and envoy_maglev's EDS weights
// follow every node's share).
var minimalAlgorithms = []Algorithm{Ring, Jump, Rendezvous, Nginx, Haproxy}

func TestAddingANodeMovesKeysOnlyOntoIt(t *testing.T) {
	forCases(t, minimalAlgorithms, func(t *testing.T, a Algorithm, rng *rand.Rand) {
		nodes := randomNodes(rng, 11)
		before := mustBuild(t, propertyConfig(a), nodes, nil)
		newcomer := node("zz-new", 1)
		newcomer.Address = "zz-new.svc:11211"
		after := rebuild(t, before, a, append(slices.Clone(nodes), newcomer), "zz-new")
		for _, k := range propertyKeys(400) {
			was, _ := before.Owner(k)
			if now, _ := after.Owner(k); now != was && now != "zz-new" {
				t.Fatalf("key %s moved from %s to %s", k, was, now)
			}
		}
	})
}

func TestRemovingANodeMovesOnlyItsKeys(t *testing.T) {
	forCases(t, minimalAlgorithms, func(t *testing.T, a Algorithm, rng *rand.Rand) {
		nodes := randomNodes(rng, 12)
		if len(nodes) < 2 {
			return
		}
		before := mustBuild(t, propertyConfig(a), nodes, nil)
		gone := nodes[rng.IntN(len(nodes))].ID
		rest := slices.DeleteFunc(slices.Clone(nodes), func(n Node) bool { return n.ID == gone })
		onlyInvolves(t, before, rebuild(t, before, a, rest, ""), gone)
	})
}

func TestReweightingMovesKeysOnlyToOrFromThatNode(t *testing.T) {
	forCases(t, []Algorithm{Ring, Rendezvous, Jump, Haproxy}, func(t *testing.T, a Algorithm, rng *rand.Rand) {
		nodes := randomNodes(rng, 12)
		before := mustBuild(t, propertyConfig(a), nodes, nil)
		i := rng.IntN(len(nodes))
		changed := slices.Clone(nodes)
		changed[i].Weight = 1 + rng.IntN(6)
		onlyInvolves(t, before, rebuild(t, before, a, changed, ""), nodes[i].ID)
	})
}

func TestNextBucketOrderWorkedSequence(t *testing.T) {
	nodes := func(spec string) []Node {
		var out []Node
		for _, f := range strings.Fields(spec) {
			out = append(out, node(f[:1], int(f[1]-'0')))
		}
		return out
	}
	str := func(runs []BucketRun) string {
		var b strings.Builder
		for _, r := range runs {
			id := r.ID
			if id == "" {
				id = "-"
			}
			b.WriteString(strings.Repeat(id, r.Count))
		}
		return b.String()
	}
	o1 := NextBucketOrder(nil, nodes("a2 b1 c1 d2"))
	o2 := NextBucketOrder(o1, nodes("b1 c1 d2"))
	o3 := NextBucketOrder(o2, nodes("b1 c3 d1 e1"))
	o4 := NextBucketOrder(o3, nodes("b1 c1"))
	got := []string{str(o1), str(o2), str(o3), str(o4), str(NextBucketOrder(nil, nodes("b1 a2 c1")))}
	if want := []string{"aabcdd", "--bcdd", "ccbcde", "c-b", "aabc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("orders %v, want %v", got, want)
	}
}

// nextOrderByBucket is 5.4.3's definition, bucket by bucket ("" a hole).
func nextOrderByBucket(previous []string, nodes []Node) []string {
	active := slices.DeleteFunc(slices.Clone(nodes), func(n Node) bool { return n.State != Active })
	slices.SortFunc(active, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	want, held := map[string]int{}, map[string]int{}
	for _, n := range active {
		want[n.ID] = n.Weight
	}
	var order []string
	for _, slot := range previous {
		if slot != "" && held[slot] < want[slot] {
			held[slot]++
			order = append(order, slot)
		} else {
			order = append(order, "")
		}
	}
	var holes []int
	for i, s := range order {
		if s == "" {
			holes = append(holes, i)
		}
	}
	for _, n := range active {
		for k := held[n.ID]; k < n.Weight; k++ {
			if len(holes) > 0 {
				order[holes[0]], holes = n.ID, holes[1:]
			} else {
				order = append(order, n.ID)
			}
		}
	}
	for len(order) > 0 && order[len(order)-1] == "" {
		order = order[:len(order)-1]
	}
	return order
}

func TestNextBucketOrderByRunsEqualsTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for c := 0; c < 200; c++ {
		var runs []BucketRun
		var buckets []string
		for step := 0; step < 6; step++ {
			nodes := randomNodes(rng, 8)
			for i := range nodes {
				nodes[i].ID = nodes[i].ID[:1] // few ids, so they come back
				nodes[i].State = State(rng.IntN(3) / 2 * rng.IntN(3))
			}
			slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
			nodes = slices.CompactFunc(nodes, func(a, b Node) bool { return a.ID == b.ID })
			runs = NextBucketOrder(runs, nodes)
			buckets = nextOrderByBucket(buckets, nodes)
			var got []string
			for _, r := range runs {
				for k := 0; k < r.Count; k++ {
					got = append(got, r.ID)
				}
			}
			if !slices.Equal(got, buckets) {
				t.Fatalf("case %d step %d: %v, want %v", c, step, got, buckets)
			}
		}
	}
}
