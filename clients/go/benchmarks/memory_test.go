package benchmarks

import (
	"runtime"
	"testing"

	"github.com/ringd/ringd/clients/go/placement"
)

// memoryNodes is the ring size whose memory the issue compares.
const memoryNodes = 1000

// BenchmarkBuild1000 builds each implementation over 1,000 nodes. Two
// figures per implementation:
//
//   - B/op (with -benchmem or ReportAllocs): bytes allocated while
//     building, temporaries included: testing.B's allocation count;
//   - heap-B: bytes still live afterwards, what a process holds for the
//     placement: runtime.ReadMemStats's HeapAlloc after a GC, minus the
//     same before the build, with the result kept alive across the second
//     GC. It is measured once, after the timed loop.
//
// The node names are made before either measurement and not counted:
// every implementation shares them (and the ringd table's rows, which a
// client downloads as one body, are also made beforehand).
func BenchmarkBuild1000(b *testing.B) {
	names := nodeNames(memoryNodes)
	impls := []struct {
		name  string
		build func() any
	}{
		{"ringd-ring", func() any { return buildRingd(b, placement.Ring, names) }},
		{"ringd-maglev", func() any { return buildRingd(b, placement.Maglev, names) }},
		{"ringd-table", tableBuilder(b, names)},
		{"ringd-rendezvous", func() any { return buildRingd(b, placement.Rendezvous, names) }},
		{"go-rendezvous-xxhash", func() any { return buildRendezvous(names) }},
		{"buraksezer-consistent", func() any { return buildBuraksezer(names) }},
		{"stathat-consistent", func() any { return buildStathat(names) }},
		{"groupcache-consistenthash", func() any { return buildGroupcache(names) }},
	}
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sinkAny = impl.build()
			}
			b.StopTimer()
			sinkAny = nil
			b.ReportMetric(float64(retained(impl.build)), "heap-B")
		})
	}
}

// sinkAny keeps built structures from being optimised away.
var sinkAny any

// tableBuilder builds a ringd table placement from rows made once, as a
// client restores a table it downloaded.
func tableBuilder(b *testing.B, names []string) func() any {
	nodes := make([]placement.Node, len(names))
	for i, id := range names {
		nodes[i] = placement.NewNode(id)
	}
	cfg := placement.DefaultConfig(placement.Table)
	stored := &placement.Stored{TableRows: roundRobinTable(names, cfg)}
	return func() any {
		p, err := placement.Build(cfg, nodes, stored)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
}

// retained is how many heap bytes what build returns keeps live.
func retained(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}
