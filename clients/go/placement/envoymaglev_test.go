package placement

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// envoy_maglev (spec 5.11): the spec's example, Envoy's fill in binary64
// against ringd's on the EDS weights, the refusals of 2.4 and decoding.

// envoyMaglevFill is Envoy's OriginalMaglevTable fill as maglev_lb.cc
// writes it, in binary64: hosts (hash key, weight) sorted by key, each
// weight divided by the weights' sum, a turn skipped while f64(iteration)
// × weight < target, target += the largest normalized weight. The result
// is each slot's index in keys.
func envoyMaglevFill(keys []string, weights []uint64, m uint64) []int {
	type entry struct {
		host                 int
		offset, skip, next   uint64
		weight, targetWeight float64
	}
	var sum float64
	for _, w := range weights {
		sum += float64(w)
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	entries := make([]entry, len(order))
	var top float64
	for k, h := range order {
		entries[k] = entry{
			host:   h,
			offset: xxh64([]byte(keys[h]), 0) % m,
			skip:   xxh64([]byte(keys[h]), 1)%(m-1) + 1,
			weight: float64(weights[h]) / sum,
		}
		top = max(top, entries[k].weight)
	}
	table := make([]int, m)
	for i := range table {
		table[i] = -1
	}
	filled := 0
	for iteration := uint64(1); filled < len(table); iteration++ {
		for k := range entries {
			if filled == len(table) {
				break
			}
			e := &entries[k]
			if float64(iteration)*e.weight < e.targetWeight {
				continue
			}
			e.targetWeight += top
			c := (e.offset + e.skip*e.next) % m
			for table[c] >= 0 {
				e.next++
				c = (e.offset + e.skip*e.next) % m
			}
			table[c] = e.host
			e.next++
			filled++
		}
	}
	return table
}

// envoyMaglevConfig is envoy_maglev's default config at table size m.
func envoyMaglevConfig(m int) Config {
	c := DefaultConfig(EnvoyMaglev)
	c.TableSize = m
	return c
}

// keyedEndpoints are endpoints n000, n001, … hashed as their addresses
// (hash_key = address), of the given weights.
func keyedEndpoints(addresses []string, weights []int) []Node {
	nodes := make([]Node, len(addresses))
	for i, a := range addresses {
		nodes[i] = endpoint(fmt.Sprintf("n%03d", i), weights[i], a)
		nodes[i].HashKey = a
	}
	return nodes
}

// tableIndices is a placement's table as indices in nodes.
func tableIndices(t *testing.T, p *Placement, nodes []Node) []int {
	t.Helper()
	at := map[string]int{}
	for i, n := range nodes {
		at[n.ID] = i
	}
	var out []int
	for _, id := range p.MaglevTable() {
		out = append(out, at[id])
	}
	return out
}

func TestEnvoyMaglevExample(t *testing.T) {
	// 5.11: labels 10.0.0.1:80 (a, weight 5) and 10.0.0.2:80 (b, weight
	// 1) at M = 7.
	a, b := endpoint("a", 5, "10.0.0.1:80"), endpoint("b", 1, "10.0.0.2:80")
	a.HashKey, b.HashKey = a.Address, b.Address
	nodes := []Node{a, b}
	if w := mustWeights(t, nodes); !reflect.DeepEqual(w, []uint32{1789569707, 357913941}) {
		t.Errorf("EDS weights %v", w)
	}
	p := mustBuild(t, envoyMaglevConfig(7), nodes, nil)
	if got := strings.Join(p.MaglevTable(), ""); got != "aaaabaa" {
		t.Errorf("envoy_maglev table %s, want aaaabaa (Envoy's)", got)
	}
	// Envoy's own fill from the plain weights gives that table too; maglev
	// fills on the plain weights in integers and does not (5.3).
	if got := envoyMaglevFill([]string{a.Label(), b.Label()}, []uint64{5, 1}, 7); !reflect.DeepEqual(got, []int{0, 0, 0, 0, 1, 0, 0}) {
		t.Errorf("Envoy's fill %v", got)
	}
	maglev := DefaultConfig(Maglev)
	maglev.TableSize = 7
	if got := strings.Join(mustBuild(t, maglev, nodes, nil).MaglevTable(), ""); got != "abaabaa" {
		t.Errorf("maglev table %s, want abaabaa", got)
	}
	// Lookups are table[XXH64(key, 0) mod M], ownership counts slots.
	for _, k := range propertyKeys(50) {
		if o, _ := p.Owner(k); p.KeyHash(k) != xxh64(k, 0) || o != p.MaglevTable()[xxh64(k, 0)%7] {
			t.Fatalf("key %s: owner %s", k, o)
		}
	}
	if u := units(p); !reflect.DeepEqual(u, []string{"6", "1"}) || p.Ownership().Basis != "table_entries" {
		t.Errorf("units %v basis %s", u, p.Ownership().Basis)
	}
}

func TestEnvoyMaglevGivesEnvoysOwnTables(t *testing.T) {
	// maglev_lb_test.cc's Basic and Weighted, through the port above.
	var keys []string
	for port := 90; port < 96; port++ {
		keys = append(keys, fmt.Sprintf("127.0.0.1:%d", port))
	}
	if got := envoyMaglevFill(keys, []uint64{1, 1, 1, 1, 1, 1}, 7); !reflect.DeepEqual(got, []int{2, 4, 0, 1, 5, 0, 3}) {
		t.Errorf("Basic: %v", got)
	}
	if got := envoyMaglevFill(keys[:2], []uint64{1, 2}, 17); !reflect.DeepEqual(got, []int{1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1}) {
		t.Errorf("Weighted: %v", got)
	}
	// From ringd's unequal shares of 2^31 (two of 357,913,942, four of
	// 357,913,941), Basic's hosts still get Basic's table, and Weighted's
	// get Weighted's (the envoy_maglev-six-hosts vector pins the first).
	hosts := envoyHosts(90, 96)
	if got := tableIndices(t, mustBuild(t, envoyMaglevConfig(7), hosts, nil), hosts); !reflect.DeepEqual(got, []int{2, 4, 0, 1, 5, 0, 3}) {
		t.Errorf("Basic from EDS weights: %v", got)
	}
	weighted := envoyHosts(90, 92)
	weighted[1].Weight = 2
	if got := tableIndices(t, mustBuild(t, envoyMaglevConfig(17), weighted, nil), weighted); !reflect.DeepEqual(got, []int{1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1}) {
		t.Errorf("Weighted from EDS weights: %v", got)
	}
}

// TestEnvoyMaglevIsEnvoysTableFromTheEDSWeights: for random rings (1 to
// 12 endpoints, weights 1 to 10, some ramped), ringd's table is the one
// Envoy fills, in binary64, from the EDS weights ringd sends.
func TestEnvoyMaglevIsEnvoysTableFromTheEDSWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(0x5eed, 11))
	primes := []int{7, 13, 17, 101, 257, 1009, 4099}
	for c := 0; c < 600; c++ {
		count := 1 + rng.IntN(12)
		fitting := slices.DeleteFunc(slices.Clone(primes), func(p int) bool { return p < count })
		m := fitting[rng.IntN(len(fitting))]
		addresses, weights := make([]string, count), make([]int, count)
		for i := range addresses {
			addresses[i] = fmt.Sprintf("10.0.%d.%d:80", c%256, i)
			weights[i] = 1 + rng.IntN(10)
		}
		nodes := keyedEndpoints(addresses, weights)
		if c%4 == 0 {
			nodes[rng.IntN(count)].Ramp = 1 + rng.IntN(FullRamp)
		}
		eds := mustWeights(t, nodes)
		wide := make([]uint64, len(eds))
		for i, e := range eds {
			wide[i] = uint64(e)
		}
		p := mustBuild(t, envoyMaglevConfig(m), nodes, nil)
		if got, want := tableIndices(t, p, nodes), envoyMaglevFill(addresses, wide, uint64(m)); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: weights %v at M = %d: ringd %v, Envoy %v", c, weights, m, got, want)
		}
	}
}

func TestEnvoyMaglevRefusals(t *testing.T) {
	envoy := DefaultConfig(EnvoyMaglev)
	a, b := endpoint("a", 1, "10.0.0.1:80"), endpoint("b", 1, "10.0.0.2:80")
	keyed := func(n Node, key string) Node { n.HashKey = key; return n }
	tiny := endpoint("t", 1, "10.0.0.9:80")
	tiny.Ramp = 1
	for name, c := range map[string]struct {
		config Config
		nodes  []Node
		want   Kind
	}{
		"no address":           {envoy, []Node{NewNode("a")}, ErrMissingAddress},
		"a host name":          {envoy, []Node{endpoint("a", 1, "cache.local:80")}, ErrAddressNotServer},
		"not canonical":        {envoy, []Node{endpoint("a", 1, "[2001:DB8::1]:80")}, ErrAddressNotServer},
		"a shared label":       {envoy, []Node{a, keyed(b, "a")}, ErrEndpointKeyTaken},
		"a shared address":     {envoy, []Node{a, endpoint("c", 1, "10.0.0.1:80")}, ErrDuplicateAddress},
		"a share too small":    {envoy, []Node{a, tiny, endpoint("z", 1_000_000, "10.0.0.8:80"), endpoint("y", 1_000_000, "10.0.0.7:80")}, ErrWeightShareTooSmall},
		"fewer slots":          {envoyMaglevConfig(2), []Node{a, b, endpoint("c", 1, "10.0.0.3:80")}, ErrTableSizeOutOfRange},
		"table_size 10":        {envoyMaglevConfig(10), nil, ErrTableSizeNotPrime},
		"table_size 1":         {envoyMaglevConfig(1), nil, ErrTableSizeOutOfRange},
		"table_size 5000017":   {envoyMaglevConfig(5_000_017), nil, ErrTableSizeOutOfRange},
		"table_size 5000077":   {envoyMaglevConfig(5_000_077), nil, ErrTableSizeOutOfRange}, // prime, maglev's
		"xxh3":                 {func() Config { c := envoy; c.Hash = Xxh3; return c }(), nil, ErrHashNotAccepted},
		"an address before":    {envoyMaglevConfig(10), []Node{endpoint("a", 1, "h:80")}, ErrTableSizeNotPrime},
		"a label before slots": {envoyMaglevConfig(2), []Node{a, keyed(b, "a"), endpoint("c", 1, "10.0.0.3:80")}, ErrEndpointKeyTaken},
	} {
		if err := buildErr(c.config, c.nodes, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	// maglev keeps its own bound; envoy_maglev takes Envoy's largest.
	maglev := DefaultConfig(Maglev)
	maglev.TableSize = 5_000_077
	for _, c := range []Config{maglev, envoyMaglevConfig(MaxEnvoyTableSize)} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s at %d: %v", c.Algorithm, c.TableSize, err)
		}
	}
	for name, c := range map[string]struct {
		json string
		want Kind
	}{
		"xxh3":         {`{"algorithm": "envoy_maglev", "hash": "xxh3"}`, ErrHashNotAccepted},
		"md5":          {`{"algorithm": "envoy_maglev", "hash": "md5"}`, ErrHashNotAccepted},
		"not prime":    {`{"algorithm": "envoy_maglev", "table_size": 65536}`, ErrTableSizeNotPrime},
		"out of range": {`{"algorithm": "envoy_maglev", "table_size": 5000017}`, ErrTableSizeOutOfRange},
		"maglev xxh64": {`{"algorithm": "maglev", "hash": "xxh64"}`, ErrHashNotAccepted},
	} {
		if _, err := ParseConfig([]byte(c.json)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	c, err := ParseConfig([]byte(`{"algorithm": "envoy_maglev"}`))
	if err != nil || c.Hash != Xxh64 || c.TableSize != DefaultTableSize || c != DefaultConfig(EnvoyMaglev) {
		t.Errorf("envoy_maglev defaults: %+v %v", c, err)
	}
	// Only active nodes must differ and have an address; ramps are taken.
	drained := a
	drained.State = Draining
	ramped := b
	ramped.Ramp = 19_661
	if _, err := Build(envoy, []Node{drained, keyed(endpoint("r", 1, "10.0.0.1:80"), "a"), ramped, {ID: "gone", Weight: 1, Ramp: FullRamp, State: Draining}}, nil); err != nil {
		t.Errorf("a replacement, a draining node without address, a ramp: %v", err)
	}
}

// TestEnvoyMaglevDecode: the body is maglev's, under code 11 with xxh64;
// neither algorithm decodes with the other's hash, and Envoy's bound on
// the table size holds.
func TestEnvoyMaglevDecode(t *testing.T) {
	p := loadVector(t, vectorsDir+"/envoy_maglev-five-and-one.json").build(t)
	good := p.Encode()
	if good[8] != 11 || good[9] != byte(Xxh64) {
		t.Fatalf("algorithm and hash bytes %d %d", good[8], good[9])
	}
	q, err := decodeOwn(good)
	if err != nil {
		t.Fatal(err)
	}
	if q.Algorithm() != EnvoyMaglev || !reflect.DeepEqual(q.MaglevTable(), p.MaglevTable()) || q.Nodes()[0].Address != "" {
		t.Errorf("decoded %s %v", q.Algorithm(), q.MaglevTable())
	}
	asMaglev := append([]byte(nil), good...)
	asMaglev[8] = byte(Maglev)
	if _, err := decodeOwn(asMaglev); !errors.Is(err, ErrInvalidEncoding) {
		t.Errorf("maglev with xxh64: %v", err)
	}
	asMaglev[9] = byte(Xxh3)
	if _, err := decodeOwn(asMaglev); err != nil {
		t.Errorf("the same table as maglev: %v", err)
	}
	asEnvoy := append([]byte(nil), asMaglev...)
	asEnvoy[8] = byte(EnvoyMaglev)
	if _, err := decodeOwn(asEnvoy); !errors.Is(err, ErrInvalidEncoding) {
		t.Errorf("envoy_maglev with xxh3: %v", err)
	}
	// One node in every one of 5,000,077 slots: maglev's, not Envoy's.
	const m = 5_000_077
	for _, alg := range []Algorithm{Maglev, EnvoyMaglev} {
		big := appendHeader(nil, alg, alg.DefaultHash(), false, 3, []Node{NewNode("a")}, false)
		big = binary.LittleEndian.AppendUint32(big, m)
		big = append(big, make([]byte, 4*m)...)
		if _, err := decodeOwn(big); (alg == Maglev) != (err == nil) {
			t.Errorf("%s, %d slots: %v", alg, m, err)
		}
	}
}
