package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/ringdtest"
)

// propagationNodes is the ring's size, as in the Rust client's figure
// (benches/load/client_latency.rs), so that the two compare.
const propagationNodes = 100

// BenchmarkPropagation times, for each of b.N sequential single-node
// changes, the span from the moment the write's response has been read
// until a following Client routes on the version it made: the Go side of
// docs/benchmarks.md's "Propagation" figure, measured as the Rust
// client's is. Run it with a fixed count of changes:
//
//	go test -run '^$' -bench Propagation -benchtime 100x
//
// Each change flips one node's weight between 1 and 2 on a 100-node
// `ring` (PUT …/nodes/{id}), so every version moves keys and the client
// verifies a rebuilt 16,000-point placement before swapping it in. In
// both watch modes (SSE, long-poll) the moment of routing is when the
// WithObserver hook receives EventApplied, which the client sends right
// after the swap: from then on every lookup uses the version. (A
// goroutine polling Client.Current() instead would hold one of the
// machine's two processors, delaying the very verification it waits on.)
//
// The server sends a version to watchers before it answers the write, so
// the client can hold it before the writer has read the response; those
// changes count as 0 (the before-response metric counts them). ringd,
// the client and the writer share the machine, on loopback. The metrics
// are p50, p99 and max in milliseconds; ns/op is dropped, as it would
// time the write too.
func BenchmarkPropagation(b *testing.B) {
	modes := []struct {
		name string
		mode ringd.WatchMode
	}{{"sse", ringd.WatchSSE}, {"long-poll", ringd.WatchLongPoll}}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) { benchmarkPropagation(b, m.mode) })
	}
}

func benchmarkPropagation(b *testing.B, mode ringd.WatchMode) {
	w := newWriter(b)
	// seen[v] is when version v was applied, in nanoseconds since origin,
	// plus one (0: not yet).
	origin := time.Now()
	seen := make([]atomic.Int64, w.version+uint64(b.N)+16)
	c, err := ringd.NewClient([]string{w.base}, w.ring,
		ringd.WithWatchMode(mode),
		ringd.WithClientID(fmt.Sprintf("propagation-%d", time.Now().UnixNano())),
		ringd.WithObserver(func(e ringd.Event) {
			if e.Kind == ringd.EventApplied && e.Version < uint64(len(seen)) {
				seen[e.Version].CompareAndSwap(0, int64(time.Since(origin))+1)
			}
		}))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.WaitForVersion(ctx, w.version); err != nil {
		b.Fatal(err)
	}

	latencies := make([]time.Duration, 0, b.N)
	beforeResponse := 0
	b.ResetTimer()
	for range b.N {
		v, read := w.change()
		deadline := time.Now().Add(10 * time.Second)
		for seen[v].Load() == 0 {
			if time.Now().After(deadline) {
				b.Fatalf("version %d not routed on within 10 s", v)
			}
			time.Sleep(20 * time.Microsecond)
		}
		at := origin.Add(time.Duration(seen[v].Load() - 1))
		if !at.After(read) {
			beforeResponse++
			latencies = append(latencies, 0)
		} else {
			latencies = append(latencies, at.Sub(read))
		}
	}
	b.StopTimer()

	slices.Sort(latencies)
	pct := func(p float64) float64 {
		i := min(int(float64(len(latencies))*p), len(latencies)-1)
		return float64(latencies[i]) / 1e6
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(latencies[len(latencies)-1])/1e6, "max-ms")
	b.ReportMetric(float64(beforeResponse), "before-response")
}

// writer makes the benchmark's changes on a real ringd, as an operator's
// tool would: one keep-alive HTTP connection, no proxy.
type writer struct {
	b       testing.TB
	http    *http.Client
	base    string
	ring    string
	version uint64    // the version the last write made
	read    time.Time // when the last write's response had been read
	weights []int     // each node's current weight, 1 or 2
	next    int       // the node the next change flips
}

// newWriter starts ringd on a SQLite file and creates the 100-node ring.
func newWriter(b testing.TB) *writer {
	srv := ringdtest.Start(b)
	w := &writer{
		b: b, http: &http.Client{Transport: &http.Transport{Proxy: nil}},
		base: srv.URL, ring: "propagation", weights: make([]int, propagationNodes),
	}
	w.send("PUT", "", map[string]any{"algorithm": "ring"})
	ops := make([]map[string]any, propagationNodes)
	for i := range ops {
		w.weights[i] = 1
		ops[i] = map[string]any{"op": "upsert", "node": map[string]any{
			"id": nodeID(i), "address": nodeAddress(i),
		}}
	}
	w.version = w.send("POST", "/changes", map[string]any{"ops": ops, "reason": "benchmark"})
	return w
}

// change flips the next node's weight; it returns the version made and
// when the response had been read.
func (w *writer) change() (uint64, time.Time) {
	i := w.next
	w.next = (i + 1) % propagationNodes
	w.weights[i] = 3 - w.weights[i]
	v := w.send("PUT", "/nodes/"+nodeID(i), map[string]any{"address": nodeAddress(i), "weight": w.weights[i]})
	return v, w.read
}

// send writes body to the ring's path and returns the version the
// response names; any other answer than a 2xx fails the benchmark.
func (w *writer) send(method, path string, body any) uint64 {
	w.b.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		w.b.Fatal(err)
	}
	req, err := http.NewRequest(method, w.base+"/v1/rings/"+w.ring+path, bytes.NewReader(raw))
	if err != nil {
		w.b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.http.Do(req)
	if err != nil {
		w.b.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	w.read = time.Now()
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode/100 != 2 {
		w.b.Fatalf("%s %s: %d %v: %s", method, path, resp.StatusCode, err, out)
	}
	var answer struct {
		Version uint64 `json:"version"`
	}
	if err := json.Unmarshal(out, &answer); err != nil || answer.Version == 0 {
		w.b.Fatalf("%s %s: no version in %s", method, path, out)
	}
	w.version = answer.Version
	return answer.Version
}

func nodeID(i int) string { return fmt.Sprintf("node-%03d", i) }

func nodeAddress(i int) string { return fmt.Sprintf("10.0.%d.%d:11211", i/250, i%250) }
