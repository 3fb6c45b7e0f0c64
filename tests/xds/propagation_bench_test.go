package xds

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/ringdtest"
)

var streams = flag.Int("streams", 1000, "ADS streams BenchmarkFanout opens")

// percentile is the p-th percentile (0–100) of sorted durations, nearest
// rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkPropagation measures, for each change, the time from sending
// the write to the first request grpc-go routes to the key's new owner:
// one node joins and leaves by turns, and a key it owns is called until
// the answer changes. Run it with -benchtime=Nx for N changes; it reports
// the p50 and p99 in milliseconds.
func BenchmarkPropagation(b *testing.B) {
	s := ringdtest.Start(b, "--xds-listen", "127.0.0.1:0")
	l := &life{ring: s.Ring("cache"), backends: map[string]*backend{}}
	node := func(id string) ringdtest.Node {
		bk, ok := l.backends[id]
		if !ok {
			bk = startBackend(b, id)
			l.backends[id] = bk
		}
		return ringdtest.Node{ID: id, Address: bk.addr}
	}
	l.ring.Create(map[string]any{"algorithm": "envoy_ring_hash"})
	var ops []ringdtest.Op
	for i := range 10 {
		ops = append(ops, ringdtest.Upsert(node(fmt.Sprintf("n%02d", i))))
	}
	without := l.ring.Change(ops...)
	with := l.ring.Change(ringdtest.Upsert(node("mover")))
	// A key the mover owns, and its owner without the mover.
	var key, other string
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("probe-%d", i)
		if owners(b, l.ring, with, []string{k})[0] == "mover" {
			key, other = k, owners(b, l.ring, without, []string{k})[0]
		}
	}
	grpc := dial(b, s.XDS, "bench-1", "cache")
	ctx := context.Background()
	waitAnswer := func(want string) {
		for {
			if got, err := call(ctx, grpc, key); err == nil && got == want {
				return
			}
		}
	}
	waitAnswer("mover")
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if i%2 == 0 {
			l.ring.Change(ringdtest.Remove("mover"))
			waitAnswer(other)
		} else {
			l.ring.Change(ringdtest.Upsert(node("mover")))
			waitAnswer("mover")
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(ms(percentile(took, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(took, 99)), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// rss is process pid's resident memory in bytes.
func rss(b *testing.B, pid int) int64 {
	b.Helper()
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kib * 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkFanout opens -streams ADS streams, each on its own connection
// as so many proxies would, subscribed to one ring's endpoints and acking
// every version; then, per change, measures the time from sending the
// write until every stream has the new version. It reports the median and
// the worst of those times over -benchtime=Nx changes, the p99 of every
// stream's own delay, and ringd's resident memory per idle stream.
func BenchmarkFanout(b *testing.B) {
	s := ringdtest.Start(b, "--xds-listen", "127.0.0.1:0")
	r := s.Ring("cache")
	r.Create(map[string]any{"algorithm": "envoy_ring_hash"})
	var ops []ringdtest.Op
	for i := range 10 {
		ops = append(ops, ringdtest.Upsert(ringdtest.Node{ID: fmt.Sprintf("n%02d", i), Address: fmt.Sprintf("127.0.0.1:%d", 2000+i)}))
	}
	version := r.Change(ops...)
	before := rss(b, s.PID())
	// Each stream reports the versions it receives.
	type arrival struct {
		version uint64
		at      time.Time
	}
	arrivals := make(chan arrival, *streams*4)
	var ready sync.WaitGroup
	for i := range *streams {
		ready.Add(1)
		ads := openADS(b, s.XDS, fmt.Sprintf("proxy-%d", i), "")
		ads.send(endpointsType, []string{"cache"}, "", "", "")
		go func() {
			first := true
			for {
				resp, err := ads.recvWithin(time.Hour)
				if err != nil || resp == nil {
					return
				}
				at := time.Now()
				ads.send(endpointsType, []string{"cache"}, resp.VersionInfo, resp.Nonce, "")
				v, _ := strconv.ParseUint(strings.SplitN(strings.TrimPrefix(resp.VersionInfo, "cache:"), "/", 2)[0], 10, 64)
				if first {
					first = false
					ready.Done()
					continue
				}
				arrivals <- arrival{v, at}
			}
		}()
	}
	ready.Wait()
	time.Sleep(2 * time.Second) // the first acks are recorded
	after := rss(b, s.PID())
	var all, each []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		version = r.Change(ringdtest.Upsert(ringdtest.Node{ID: "n00", Address: "127.0.0.1:2000", Weight: 1 + int(version%5)}))
		got := 0
		var last time.Time
		deadline := time.After(time.Minute)
		for got < *streams {
			select {
			case a := <-arrivals:
				if a.version != version {
					b.Fatalf("a stream got version %d, want %d", a.version, version)
				}
				got++
				each = append(each, a.at.Sub(start))
				last = a.at
			case <-deadline:
				b.Fatalf("%d of %d streams had version %d after a minute", got, *streams, version)
			}
		}
		all = append(all, last.Sub(start))
	}
	b.StopTimer()
	slices.Sort(all)
	slices.Sort(each)
	b.ReportMetric(float64(*streams), "streams")
	b.ReportMetric(ms(percentile(all, 50)), "all-p50-ms")
	b.ReportMetric(ms(all[len(all)-1]), "all-max-ms")
	b.ReportMetric(ms(percentile(each, 99)), "stream-p99-ms")
	b.ReportMetric(float64(after-before)/float64(*streams)/1024, "KiB/stream")
	b.ReportMetric(0, "ns/op")
}
