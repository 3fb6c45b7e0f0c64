package placement

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"testing"
)

// envoy_ring_hash (spec 5.10): the spec's examples, Envoy's own tables
// (ring_hash_lb_test.cc, as the Rust core's unit tests rebuild them) and
// Envoy's host search.

// endpoint is an active node with an address, as envoy_ring_hash needs.
func endpoint(id string, weight int, address string) Node {
	n := node(id, weight)
	n.Address = address
	return n
}

// envoyHosts are nodes keyed as Envoy's test hosts 127.0.0.1:<port>, of
// weight 1, with ids h-<port>.
func envoyHosts(from, to int) []Node {
	var nodes []Node
	for p := from; p < to; p++ {
		a := "127.0.0.1:" + strconv.Itoa(p)
		n := endpoint("h-"+strconv.Itoa(p), 1, a)
		n.HashKey = a
		nodes = append(nodes, n)
	}
	return nodes
}

func envoyConfig(minimum, maximum int) Config {
	c := DefaultConfig(EnvoyRingHash)
	c.MinimumRingSize, c.MaximumRingSize = minimum, maximum
	return c
}

// entriesOf is points as (position, endpoint) pairs.
func entriesOf(points []point) [][2]uint64 {
	out := make([][2]uint64, len(points))
	for i, p := range points {
		out[i] = [2]uint64{p.pos, uint64(p.node)}
	}
	return out
}

func mustWeights(t *testing.T, nodes []Node) []uint32 {
	t.Helper()
	w, err := envoyEndpointWeights(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestEnvoyEndpointWeightsShareOut2To31(t *testing.T) {
	// 5.10.1's examples.
	if w := mustWeights(t, []Node{endpoint("a", 1, "10.0.0.1:80"), endpoint("b", 2, "10.0.0.2:80")}); !reflect.DeepEqual(w, []uint32{715827883, 1431655765}) {
		t.Errorf("weights 1, 2: %v", w)
	}
	abc := []Node{endpoint("a", 1, "10.0.0.1:80"), endpoint("bb", 1, "10.0.0.2:80"), endpoint("ccc", 1, "10.0.0.3:80")}
	if w := mustWeights(t, abc); !reflect.DeepEqual(w, []uint32{715827883, 715827883, 715827882}) {
		t.Errorf("a, bb, ccc: %v", w)
	}
	// Equal remainders go in label order, not id order: with the labels
	// reversed, ccc (id a) is last to get one more.
	abc[0].HashKey, abc[2].HashKey = "ccc", "a"
	if w := mustWeights(t, abc); !reflect.DeepEqual(w, []uint32{715827882, 715827883, 715827883}) {
		t.Errorf("labels reversed: %v", w)
	}
	// Ramps scale the weights: weight 2 at ramp 16,384 weighs what
	// weight 1 at ramp 32,768 does.
	ramped := []Node{endpoint("a", 2, "10.0.0.1:80"), endpoint("b", 1, "10.0.0.2:80")}
	ramped[0].Ramp, ramped[1].Ramp = 16_384, 32_768
	if w := mustWeights(t, ramped); !reflect.DeepEqual(w, []uint32{1 << 30, 1 << 30}) {
		t.Errorf("ramped: %v", w)
	}
	// The sum is exactly 2^31 however the weights fall.
	rng := rand.New(rand.NewPCG(5, 10))
	for c := 0; c < 200; c++ {
		nodes := make([]Node, 1+rng.IntN(40))
		for i := range nodes {
			nodes[i] = endpoint(fmt.Sprintf("n-%02d", i), 1+rng.IntN(1000), fmt.Sprintf("10.0.0.%d:80", i))
			nodes[i].Ramp = 1 + rng.IntN(FullRamp)
		}
		var sum uint64
		for _, w := range mustWeights(t, nodes) {
			sum += uint64(w)
		}
		if sum != 1<<31 {
			t.Fatalf("case %d: the weights add up to %d", c, sum)
		}
	}
}

func TestEnvoyWeightShareTooSmall(t *testing.T) {
	// A weight 1 at ramp 1 next to one node: its remainder 2^31 is the
	// larger, and it gets the one unit left over, while the total stays
	// under 2^32.
	tiny := endpoint("a", 1, "10.0.0.1:80")
	tiny.Ramp = 1
	if w := mustWeights(t, []Node{tiny, endpoint("b", 65_535, "10.0.0.2:80")}); !reflect.DeepEqual(w, []uint32{1, 1<<31 - 1}) {
		t.Errorf("total 2^32 − 65,535: %v", w)
	}
	_, err := envoyEndpointWeights([]Node{tiny, endpoint("b", 65_536, "10.0.0.2:80")})
	var e *Error
	if !errors.Is(err, ErrWeightShareTooSmall) || !errors.As(err, &e) {
		t.Fatalf("total 2^32 + 1: %v", err)
	}
	if want := "WeightShareTooSmall: node a has 1 of the 4294967297 total weight"; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("message %q", err)
	}
	// Build refuses it (check 3a), naming the first such node in id order.
	tiny2 := tiny
	tiny2.ID, tiny2.Address = "c", "10.0.0.3:80"
	err = buildErr(DefaultConfig(EnvoyRingHash), []Node{tiny2, endpoint("b", 1_000_000, "10.0.0.2:80"), tiny}, nil)
	if !errors.Is(err, ErrWeightShareTooSmall) || !errors.As(err, &e) || e.Message[:7] != "node a " {
		t.Errorf("build: %v", err)
	}
}

func TestEnvoyEntryCounts(t *testing.T) {
	// 5.10.1: Envoy's Basic hosts, six of weight 1 at minimum 12, get
	// ringd's weights 357,913,942 twice and 357,913,941 four times, and
	// from those 13 entries, where Envoy builds 12 from weights 1.
	nodes := envoyHosts(90, 96)
	w := mustWeights(t, nodes)
	if !reflect.DeepEqual(w, []uint32{357913942, 357913942, 357913941, 357913941, 357913941, 357913941}) {
		t.Errorf("weights %v", w)
	}
	if got := envoyEntryCounts(w, 12, MaxRingSize); !reflect.DeepEqual(got, []int{3, 2, 2, 2, 2, 2}) {
		t.Errorf("counts %v", got)
	}
	if got := envoyEntryCounts([]uint32{1, 1, 1, 1, 1, 1}, 12, MaxRingSize); !reflect.DeepEqual(got, []int{2, 2, 2, 2, 2, 2}) {
		t.Errorf("Envoy's own weights: %v", got)
	}
	if p := mustBuild(t, envoyConfig(12, MaxRingSize), nodes, nil); len(p.Points()) != 13 {
		t.Errorf("%d entries, want 13", len(p.Points()))
	}
	// The maximum caps the scale: 1, 1, 1 at minimum 1,024 but at most 6.
	if got := envoyEntryCounts([]uint32{1, 1, 1}, 1024, 6); !reflect.DeepEqual(got, []int{2, 2, 2}) {
		t.Errorf("capped: %v", got)
	}
}

// fusedEntryCounts is envoyEntryCounts with target + scale × x fused into
// one multiply-add, as a compiler that is allowed to fuse might do.
func fusedEntryCounts(weights []uint32, minimum, maximum int) []int {
	var sum uint64
	for _, w := range weights {
		sum += uint64(w)
	}
	lightest := 1.0
	for _, w := range weights {
		lightest = min(lightest, float64(w)/float64(sum))
	}
	scale := min(math.Ceil(lightest*float64(minimum))/lightest, float64(maximum))
	counts := make([]int, len(weights))
	var target, current float64
	for j, w := range weights {
		target = math.FMA(scale, float64(w)/float64(sum), target)
		for current < target {
			counts[j]++
			current++
		}
	}
	return counts
}

// TestEnvoyEntryCountsRoundEachOperation: weights 9, 6, 8, 9, 5 at ring
// sizes 15 to 54 are one of the many inputs whose counts a fused
// multiply-add changes. ringd (the Rust core, which never fuses) places
// 6, 3, 5, 6, 3 entries, and a ring of these nodes has the fingerprint
// ringd gave it; fused, the counts would be 6, 4, 4, 6, 3.
func TestEnvoyEntryCountsRoundEachOperation(t *testing.T) {
	var nodes []Node
	for i, w := range []int{9, 6, 8, 9, 5} {
		nodes = append(nodes, endpoint(fmt.Sprintf("e-%d", i), w, fmt.Sprintf("10.0.0.%d:80", i+1)))
	}
	w := mustWeights(t, nodes)
	if !reflect.DeepEqual(w, []uint32{522360887, 348240592, 464320789, 522360887, 290200493}) {
		t.Fatalf("weights %v", w)
	}
	if got := envoyEntryCounts(w, 15, 54); !reflect.DeepEqual(got, []int{6, 3, 5, 6, 3}) {
		t.Errorf("counts %v, want [6 3 5 6 3]", got)
	}
	if fused := fusedEntryCounts(w, 15, 54); !reflect.DeepEqual(fused, []int{6, 4, 4, 6, 3}) {
		t.Errorf("fused counts %v: the example no longer tells fusion apart", fused)
	}
	p := mustBuild(t, envoyConfig(15, 54), nodes, nil)
	if p.Fingerprint() != "393a989147c5858b2bbd9aca2aa0011953981f96d02be9db538dcd1ba4a64a7b" {
		t.Errorf("fingerprint %s", p.Fingerprint())
	}
	// Fused and separate roundings agree on most inputs, and the running
	// sums give ceil(scale) entries give or take one.
	rng := rand.New(rand.NewPCG(3, 4))
	for c := 0; c < 500; c++ {
		weights := make([]uint32, 1+rng.IntN(8))
		for i := range weights {
			weights[i] = 1 + rng.Uint32N(1<<28)
		}
		minimum := 1 + rng.IntN(100)
		total := 0
		for _, k := range envoyEntryCounts(weights, minimum, MaxRingSize) {
			total += k
		}
		if total < minimum {
			t.Fatalf("%v at minimum %d: %d entries", weights, minimum, total)
		}
	}
}

func TestEnvoyTwoHostsRing(t *testing.T) {
	// 5.10.2: Envoy's UnevenHosts, :80 and :81 at minimum 3, get 2^30
	// each, scale 4: two entries each, Envoy's own ring.
	nodes := envoyHosts(80, 82)
	if w := mustWeights(t, nodes); !reflect.DeepEqual(w, []uint32{1 << 30, 1 << 30}) {
		t.Errorf("weights %v", w)
	}
	p := mustBuild(t, envoyConfig(3, DefaultMaximumRingSize), nodes, nil)
	want := []Point{
		{5454692015285649509, "h-80"}, {7859399908942313493, "h-81"},
		{13838424394637650569, "h-80"}, {16064866803292627174, "h-81"},
	}
	if got := p.Points(); !reflect.DeepEqual(got, want) {
		t.Errorf("entries %v", got)
	}
	if h := hash64(Xxh64, []byte("127.0.0.1:90_0")); h != 16117243373044804889 {
		t.Errorf("XXH64(127.0.0.1:90_0) = %d", h)
	}
	// The body is ring's: the entry count, then (u64 position, u32 index).
	body := binary.LittleEndian.AppendUint32(nil, 4)
	for _, e := range want {
		body = binary.LittleEndian.AppendUint64(body, e.Position)
		body = binary.LittleEndian.AppendUint32(body, map[string]uint32{"h-80": 0, "h-81": 1}[e.ID])
	}
	if enc := p.Encode(); string(enc[len(enc)-len(body):]) != string(body) || enc[8] != 10 || enc[9] != 18 {
		t.Errorf("encoding %x", enc)
	}
	// Lookups: the first entry at or after the key hash, wrapping.
	l := p.lay
	for h, id := range map[uint64]uint32{0: 0, 5454692015285649509: 0, 5454692015285649510: 1, 16064866803292627174: 1, 16064866803292627175: 0, math.MaxUint64: 0} {
		if got, ok := l.ownerIndex(h); !ok || got != id {
			t.Errorf("hash %d: node %d, want %d", h, got, id)
		}
	}
	if o := p.Ownership(); o.Basis != "arcs" || o.TotalUnits.String() != "18446744073709551616" {
		t.Errorf("ownership %+v", o)
	}
	// A node's address places nothing: another address, the same ring.
	moved := envoyHosts(80, 82)
	moved[0].Address = "[2001:db8::80]:8080"
	if q := mustBuild(t, envoyConfig(3, DefaultMaximumRingSize), moved, nil); q.Fingerprint() != p.Fingerprint() {
		t.Error("the address changed the placement")
	}
}

func TestEnvoyOwnTables(t *testing.T) {
	keys := func(from, to int) []string {
		var out []string
		for p := from; p < to; p++ {
			out = append(out, "127.0.0.1:"+strconv.Itoa(p))
		}
		return out
	}
	// Envoy's Basic: six hosts of weight 1, minimum 12.
	basic := envoyEntries(keys(90, 96), []uint32{1, 1, 1, 1, 1, 1}, 12, MaxRingSize)
	wantBasic := [][2]uint64{
		{833437586790550860, 4}, {928266305478181108, 2}, {1033482794131418490, 0},
		{3551244743356806947, 5}, {3851675632748031481, 3}, {5583722120771150861, 1},
		{6311230543546372928, 1}, {7700377290971790572, 3}, {13144177310400110813, 5},
		{13444792449719432967, 2}, {15516499411664133160, 4}, {16117243373044804889, 0},
	}
	if got := entriesOf(basic); !reflect.DeepEqual(got, wantBasic) {
		t.Errorf("Basic: %v", got)
	}
	// Envoy's HostWeightedTinyRing: weights 1, 2, 3 at ring sizes 6 to 6.
	tiny := envoyEntries(keys(90, 93), []uint32{1, 2, 3}, 6, 6)
	wantTiny := [][2]uint64{
		{928266305478181108, 2}, {4443673547860492590, 2}, {5583722120771150861, 1},
		{6311230543546372928, 1}, {13444792449719432967, 2}, {16117243373044804889, 0},
	}
	if got := entriesOf(tiny); !reflect.DeepEqual(got, wantTiny) {
		t.Errorf("HostWeightedTinyRing: %v", got)
	}
	// From ringd's weights for the Basic hosts, the ring is those
	// endpoints' ring (13 entries), node for node.
	nodes := envoyHosts(90, 96)
	p := mustBuild(t, envoyConfig(12, MaxRingSize), nodes, nil)
	fromEDS := envoyEntries(keys(90, 96), mustWeights(t, nodes), 12, MaxRingSize)
	got := p.Points()
	if len(got) != len(fromEDS) || len(got) != 13 {
		t.Fatalf("%d entries, from EDS %d", len(got), len(fromEDS))
	}
	for i, e := range fromEDS {
		if got[i].Position != e.pos || got[i].ID != nodes[e.node].ID {
			t.Errorf("entry %d: %v, from EDS %v", i, got[i], e)
		}
	}
}

// envoyChooseHost is Envoy's chooseHost: libketama's binary search, as
// Envoy writes it, over the entries' positions.
func envoyChooseHost(positions []uint64, h uint64) int {
	lowp, highp := 0, len(positions)
	for {
		midp := (lowp + highp) / 2
		if midp == len(positions) {
			return 0
		}
		midval := positions[midp]
		midval1 := uint64(0)
		if midp > 0 {
			midval1 = positions[midp-1]
		}
		if h <= midval && h > midval1 {
			return midp
		}
		if midval < h {
			lowp = midp + 1
		} else {
			highp = midp - 1
		}
		if lowp > highp {
			return 0
		}
	}
}

// TestEnvoySearchIsTheFirstEntryAtOrAfter: Envoy's search, sort.Search
// (gRPC's) and the placement's bucket table pick the same entry's node.
func TestEnvoySearchIsTheFirstEntryAtOrAfter(t *testing.T) {
	for _, name := range []string{"envoy_ring_hash-forty", "envoy_ring_hash-nodes-1000", "envoy_ring_hash-two-hosts"} {
		p := loadVector(t, vectorsDir+"/"+name+".json").build(t)
		points := p.lay.(*circle).points
		positions := make([]uint64, len(points))
		for i, pt := range points {
			positions[i] = pt.pos
		}
		check := func(h uint64) {
			grpc := sort.Search(len(positions), func(i int) bool { return positions[i] >= h }) % len(positions)
			envoy := envoyChooseHost(positions, h)
			got, ok := p.lay.ownerIndex(h)
			if !ok || got != points[grpc].node || points[envoy].node != points[grpc].node {
				t.Fatalf("%s, hash %d: placement %d, Envoy %d, gRPC %d", name, h, got, points[envoy].node, points[grpc].node)
			}
		}
		rng := rand.New(rand.NewPCG(9, uint64(len(points))))
		for i := 0; i < 20_000; i++ {
			check(rng.Uint64())
		}
		for _, pos := range positions {
			check(pos)
			check(pos + 1)
			check(pos - 1)
		}
	}
}
