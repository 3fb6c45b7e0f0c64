package benchmarks

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ringd/ringd/clients/go/placement"
)

// nodeCounts are the ring sizes of the issue.
var nodeCounts = []int{10, 100, 1000}

// keyCount keys are made; each lookup loop cycles through the first
// 1,024 of them (the Rust benchmarks' key count: a ring's structures stay
// warm in the core's caches) or all 16,384 (lookups spread over more
// memory than a core's L2 holds, as a busy server's keys do). Powers of
// two, so the index is a mask.
const keyCount = 1 << 14

// keySets are the two key counts each lookup loop is timed with.
var keySets = []int{1 << 10, keyCount}

// keys are the same keys for every implementation, as strings (what most
// of the libraries take) and as bytes (ringd's Owner and buraksezer's
// LocateKey), so no loop converts one to the other: 16–40-byte keys of
// the kind caches see, from a fixed seed.
var keys, keyBytes = func() ([]string, [][]byte) {
	rng := rand.New(rand.NewPCG(7, 11))
	s := make([]string, keyCount)
	b := make([][]byte, keyCount)
	for i := range s {
		switch i % 3 {
		case 0:
			s[i] = fmt.Sprintf("user:%d", rng.Uint64())
		case 1:
			s[i] = fmt.Sprintf("session/%016x-%04x", rng.Uint64(), rng.UintN(1<<16))
		default:
			s[i] = fmt.Sprintf("obj/%d/part-%d", rng.UintN(1e6), rng.UintN(100))
		}
		b[i] = []byte(s[i])
	}
	return s, b
}()

// sink keeps the compiler from dropping lookups whose result is unused.
var sink string

// ringdAlgorithms are the ringd algorithms the issue compares.
var ringdAlgorithms = []placement.Algorithm{placement.Ring, placement.Maglev, placement.Table, placement.Rendezvous}

// BenchmarkOwner times one owner lookup (hashing the key included) per
// iteration, for each ringd algorithm and each library, at 10, 100 and
// 1,000 nodes, over each key set. Each loop calls its implementation's own method directly,
// not through a shared func value, so no implementation pays for an
// indirect call the others do not. ringd is timed on a placement, as
// Client.Owner adds one atomic load to it.
func BenchmarkOwner(b *testing.B) {
	for _, ks := range keySets {
		benchmarkOwner(b, ks)
	}
}

func benchmarkOwner(b *testing.B, ks int) {
	mask := ks - 1
	for _, n := range nodeCounts {
		names := nodeNames(n)
		for _, alg := range ringdAlgorithms {
			b.Run(fmt.Sprintf("keys=%d/nodes=%d/ringd-%s", ks, n, alg), func(b *testing.B) {
				p := buildRingd(b, alg, names)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sink, _ = p.OwnerString(keys[i&mask])
				}
			})
		}
		b.Run(fmt.Sprintf("keys=%d/nodes=%d/go-rendezvous-xxhash", ks, n), func(b *testing.B) {
			r := buildRendezvous(names)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink = r.Lookup(keys[i&mask])
			}
		})
		b.Run(fmt.Sprintf("keys=%d/nodes=%d/buraksezer-consistent", ks, n), func(b *testing.B) {
			c := buildBuraksezer(names)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink = c.LocateKey(keyBytes[i&mask]).String()
			}
		})
		b.Run(fmt.Sprintf("keys=%d/nodes=%d/stathat-consistent", ks, n), func(b *testing.B) {
			c := buildStathat(names)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink, _ = c.Get(keys[i&mask])
			}
		})
		b.Run(fmt.Sprintf("keys=%d/nodes=%d/groupcache-consistenthash", ks, n), func(b *testing.B) {
			m := buildGroupcache(names)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sink = m.Get(keys[i&mask])
			}
		})
	}
}

// TestSameOwnersEverywhere checks that every implementation answers for
// every key with one of the nodes, so no benchmark times a lookup that
// fails early (an empty ring, a nil member).
func TestSameOwnersEverywhere(t *testing.T) {
	names := nodeNames(100)
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	lookups := map[string]func(i int) string{}
	for _, alg := range ringdAlgorithms {
		p := buildRingd(t, alg, names)
		lookups["ringd-"+alg.String()] = func(i int) string { o, _ := p.OwnerString(keys[i]); return o }
	}
	r, c, s, g := buildRendezvous(names), buildBuraksezer(names), buildStathat(names), buildGroupcache(names)
	lookups["go-rendezvous"] = func(i int) string { return r.Lookup(keys[i]) }
	lookups["buraksezer"] = func(i int) string { return c.LocateKey(keyBytes[i]).String() }
	lookups["stathat"] = func(i int) string { o, _ := s.Get(keys[i]); return o }
	lookups["groupcache"] = func(i int) string { return g.Get(keys[i]) }
	for name, lookup := range lookups {
		owners := map[string]bool{}
		for i := 0; i < keyCount; i++ {
			o := lookup(i)
			if !known[o] {
				t.Fatalf("%s: key %q placed on %q", name, keys[i], o)
			}
			owners[o] = true
		}
		// 16,384 keys over 100 nodes reach them all unless placement is broken.
		if len(owners) < 90 {
			t.Errorf("%s: only %d of 100 nodes own any of %d keys", name, len(owners), keyCount)
		}
	}
}
