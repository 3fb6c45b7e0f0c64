package ringd

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRetryAfterWaitRule checks the rule every ringd client follows after
// a 503 or 429 with Retry-After, max(next, min(retryAfter, max) + jitter),
// at exact values, the jitter's bounds [0, 1 s) included.
func TestRetryAfterWaitRule(t *testing.T) {
	const (
		ms = time.Millisecond
		s  = time.Second
	)
	justUnder := s - time.Nanosecond // the largest jitter drawn
	cases := []struct {
		next, retryAfter, max, jitter, want time.Duration
	}{
		// What the server asked, plus the jitter, at both its ends.
		{next: 50 * ms, retryAfter: 3 * s, max: 10 * s, jitter: 0, want: 3 * s},
		{next: 50 * ms, retryAfter: 3 * s, max: 10 * s, jitter: justUnder, want: 4*s - time.Nanosecond},
		{next: 50 * ms, retryAfter: 1 * s, max: 10 * s, jitter: 250 * ms, want: 1250 * ms},
		// Cut to the backoff's maximum, the jitter still added.
		{next: 50 * ms, retryAfter: 3600 * s, max: 10 * s, jitter: 0, want: 10 * s},
		{next: 50 * ms, retryAfter: 3600 * s, max: 10 * s, jitter: justUnder, want: 11*s - time.Nanosecond},
		{next: 50 * ms, retryAfter: 10 * s, max: 10 * s, jitter: 0, want: 10 * s},
		{next: 50 * ms, retryAfter: time.Duration(math.MaxInt64), max: 10 * s, jitter: justUnder, want: 11*s - time.Nanosecond},
		{next: 100 * ms, retryAfter: 5 * s, max: 200 * ms, jitter: 300 * ms, want: 500 * ms},
		// The backoff's own wait wins when it is the longer one.
		{next: 6 * s, retryAfter: 1 * s, max: 10 * s, jitter: justUnder, want: 6 * s},
		{next: 6 * s, retryAfter: 5 * s, max: 10 * s, jitter: s - ms, want: 6 * s},
		{next: 6 * s, retryAfter: 5 * s, max: 10 * s, jitter: 1000*ms + 1, want: 6*s + 1},
		// Retry-After: 0 still waits the jitter.
		{next: 10 * ms, retryAfter: 0, max: 10 * s, jitter: 400 * ms, want: 400 * ms},
		{next: 10 * ms, retryAfter: 0, max: 10 * s, jitter: 0, want: 10 * ms},
	}
	for _, c := range cases {
		if got := retryAfterWait(c.next, c.retryAfter, c.max, c.jitter); got != c.want {
			t.Errorf("retryAfterWait(%v, %v, %v, %v) = %v, want %v", c.next, c.retryAfter, c.max, c.jitter, got, c.want)
		}
	}
}

// TestBackoffAfterRefusal draws the rule's jitter for real: every wait is
// within [min(Retry-After, max), that + 1 s) or the backoff's own, and the
// backoff advances as after any failure.
func TestBackoffAfterRefusal(t *testing.T) {
	const s = time.Second
	for i := 0; i < 2000; i++ {
		b := newBackoff(100*time.Millisecond, 10*s)
		if w := b.afterRefusal(3 * s); w < 3*s || w >= 4*s {
			t.Fatalf("Retry-After 3 s: waited %v, want [3s, 4s)", w)
		}
		if w := b.afterRefusal(3600 * s); w < 10*s || w >= 11*s {
			t.Fatalf("Retry-After 1 h: waited %v, want [10s, 11s)", w)
		}
		if w := b.afterRefusal(0); w < 200*time.Millisecond || w >= s {
			t.Fatalf("Retry-After 0: waited %v, want [200ms, 1s)", w)
		}
		// Three refusals advanced the step 100 → 200 → 400 → 800 ms.
		if b.step != 800*time.Millisecond {
			t.Fatalf("step %v after three refusals, want 800ms", b.step)
		}
	}
	// The backoff wins when longer: its steps of 8 and 16 s give waits in
	// [4, 8) and [8, 16), above the ask of 1 s plus up to 1 s.
	b := newBackoff(8*s, 64*s)
	if w := b.afterRefusal(s); w < 4*s || w >= 8*s {
		t.Fatalf("waited %v, want [4s, 8s)", w)
	}
	if w := b.afterRefusal(s); w < 8*s || w >= 16*s {
		t.Fatalf("waited %v, want [8s, 16s)", w)
	}
	// And a reset goes back to the shortest step.
	b.reset()
	if b.step != 8*s {
		t.Fatalf("step %v after a reset", b.step)
	}
}

// TestParseRetryAfter reads delta-seconds only: the HTTP-date form, a
// sign, a fraction and garbage are no Retry-After.
func TestParseRetryAfter(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1", time.Second, true},
		{"10", 10 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"0", 0, true},
		{"007", 7 * time.Second, true},
		{"3600", time.Hour, true},
		{"18446744073709551615", time.Duration(math.MaxInt64), true}, // 2^64 - 1 s: the longest wait
		{"18446744073709551616", 0, false},                           // past 2^64 s
		{"", 0, false},
		{"   ", 0, false},
		{"-1", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"1 2", 0, false},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// refusingRingd answers every watch and every long-poll that would wait
// (?after=) with status and Retry-After (none when ""), and a plain
// snapshot GET with version 1; it records when each refused request
// arrived.
type refusingRingd struct {
	status     int
	retryAfter string
	snapshot   string
	mu         sync.Mutex
	refusedAt  []time.Time
}

func (f *refusingRingd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	watch := strings.HasSuffix(r.URL.Path, "/watch")
	if !watch && r.URL.Path == "/v1/rings/r/snapshot" && r.URL.Query().Get("after") == "" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.snapshot)
		return
	}
	if !watch && r.URL.Path != "/v1/rings/r/snapshot" {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.refusedAt = append(f.refusedAt, time.Now())
	f.mu.Unlock()
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(f.status)
	fmt.Fprintf(w, `{"type":"urn:ringd:problem:at-capacity","title":"at capacity","status":%d,"detail":"full"}`, f.status)
}

func (f *refusingRingd) times() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.refusedAt...)
}

// TestWatchHonoursRetryAfter runs the watch loop, streaming and
// long-polling, against a server that refuses every attempt: after a 503
// or 429 with Retry-After in seconds the next attempt comes no sooner
// than the header asks (measured where the server answers, so the bound
// is exact) and within its second of jitter; a Retry-After in the
// HTTP-date form, garbage, or none leaves the short backoff alone.
func TestWatchHonoursRetryAfter(t *testing.T) {
	snap, _ := snapshotJSON(t, 1, "", "a")
	cases := []struct {
		name       string
		status     int
		retryAfter string
		asked      time.Duration // 0: not honoured
	}{
		{"503-seconds", 503, "2", 2 * time.Second},
		{"429-seconds", 429, "1", time.Second},
		{"503-http-date", 503, "Wed, 21 Oct 2015 07:28:00 GMT", 0},
		{"503-garbage", 503, "later", 0},
		{"503-none", 503, "", 0},
		{"502-seconds", 502, "5", 0}, // only 503 and 429 ask the client to wait
	}
	for _, mode := range []WatchMode{WatchSSE, WatchLongPoll} {
		for _, c := range cases {
			name := map[WatchMode]string{WatchSSE: "sse", WatchLongPoll: "long-poll"}[mode] + "/" + c.name
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				fake := &refusingRingd{status: c.status, retryAfter: c.retryAfter, snapshot: snap}
				srv := httptest.NewServer(fake)
				defer srv.Close()
				// A backoff of 20 to 200 ms, as the other tests', but a
				// maximum of 10 s, which the ask is cut to.
				client, err := NewClient([]string{srv.URL}, "r", WithClientID("refused"), WithAck(false),
					WithWatchMode(mode), WithBackoff(20*time.Millisecond, 10*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				defer client.Close()
				waitFor(t, "three refused attempts", 20*time.Second, func() bool { return len(fake.times()) >= 3 })
				at := fake.times()
				st := client.Status()
				var api *APIError
				if !errors.As(st.LastError, &api) || api.Status != c.status || api.Slug() != "at-capacity" {
					t.Fatalf("last error %v", st.LastError)
				}
				for i := 1; i < 3; i++ {
					gap := at[i].Sub(at[i-1])
					if c.asked > 0 {
						// The backoff's own waits (under 40 ms here) are
						// shorter than the ask: the ask plus [0, 1 s) wins.
						if gap < c.asked || gap > c.asked+time.Second+500*time.Millisecond {
							t.Fatalf("attempt %d came %v after the one before, want [%v, %v + 1 s)", i+1, gap, c.asked, c.asked)
						}
					} else if gap > 800*time.Millisecond {
						// The backoff alone: 10-20 ms, then 20-40 ms.
						t.Fatalf("attempt %d came %v after the one before: Retry-After %q was honoured", i+1, gap, c.retryAfter)
					}
				}
				if mode == WatchLongPoll && st.Version != 1 {
					t.Fatalf("long-poll: routes on version %d, want 1 (the plain snapshot GET is no watcher)", st.Version)
				}
			})
		}
	}
}
