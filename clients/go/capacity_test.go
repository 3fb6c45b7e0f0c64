package ringd

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metric is the value of the unlabelled sample name on the server's
// /metrics.
func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("/metrics: %s %q: %v", name, v, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// holdWatch takes a watcher slot on s with a raw watch stream of ring
// (an open SSE GET, as any EventSource would make), and returns the
// function that closes it.
func holdWatch(t *testing.T, base, ring string) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/rings/"+ring+"/watch", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("holding the watch: %v", err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		cancel()
		t.Fatalf("holding the watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	closed := false
	release := func() {
		if !closed {
			closed = true
			cancel()
			resp.Body.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// TestWaitsForRetryAfterWhenTheServerIsAtCapacity starts ringd with
// --max-watchers 1, holds its only slot with a raw watch stream, and
// starts a Client with the default backoff (100 ms to 10 s), streaming
// and long-polling. The client's watch (for the long-poll, its first
// waiting long-poll: the plain snapshot GET before it takes no slot) is
// refused 503 at-capacity with a Retry-After of 1 to 10 s. The client
// must not come back before that: 900 ms after it met the refusal
// (LastErrorAt, taken before its wait starts) the server has still
// refused exactly one watcher, which fails if Retry-After is ignored (the
// backoff alone would be back within 100 ms). Once the held stream is
// closed the client is admitted, follows the ring, and each of its
// failed attempts was one refusal.
func TestWaitsForRetryAfterWhenTheServerIsAtCapacity(t *testing.T) {
	modes := []struct {
		name      string
		mode      WatchMode
		transport Transport
	}{{"stream", WatchAuto, SSE}, {"long-poll", WatchLongPoll, LongPoll}}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "--max-watchers", "1")
			a := api{t: t, base: s.URL, ring: "r"}
			a.create(map[string]any{})
			a.change(upsert("a", 1))
			release := holdWatch(t, s.URL, "r")
			if got := metric(t, s.URL, "ringd_watchers"); got != 1 {
				t.Fatalf("ringd_watchers %v with the slot held, want 1", got)
			}
			if got := metric(t, s.URL, "ringd_watchers_refused_total"); got != 0 {
				t.Fatalf("ringd_watchers_refused_total %v before the client, want 0", got)
			}
			c, err := NewClient([]string{s.URL}, "r", WithClientID("at-capacity-"+m.name), WithWatchMode(m.mode),
				WithLongPollWait(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			waitFor(t, "the first refusal", 20*time.Second, func() bool {
				return metric(t, s.URL, "ringd_watchers_refused_total") >= 1
			})
			// The client has met it once its status says so.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := c.WaitFor(ctx, func(s Status) bool { return s.Reconnects >= 1 })
			if err != nil {
				t.Fatal(err)
			}
			var refusal *APIError
			if !errors.As(st.LastError, &refusal) || refusal.Status != 503 || refusal.Slug() != "at-capacity" {
				t.Fatalf("last error %v, want the 503 at-capacity", st.LastError)
			}
			asked, ok := refusal.RetryAfter()
			if !ok || asked < time.Second || asked > 10*time.Second || asked%time.Second != 0 {
				t.Fatalf("Retry-After %v (%v), want whole seconds in 1..=10", asked, ok)
			}
			wantVersion := uint64(0) // a refused stream holds nothing yet
			if m.mode == WatchLongPoll {
				wantVersion = 2 // the plain snapshot GET took no slot
			}
			if st.Reconnects != 1 || st.Version != wantVersion || st.Transport != Connecting || st.Server != "" {
				t.Fatalf("status after the refusal %+v", st)
			}
			time.Sleep(time.Until(st.LastErrorAt.Add(900 * time.Millisecond)))
			if got := metric(t, s.URL, "ringd_watchers_refused_total"); got != 1 {
				t.Fatalf("ringd_watchers_refused_total %v 900 ms after the refusal, want 1: "+
					"the client came back before the Retry-After of %v", got, asked)
			}
			if now := c.Status(); now.Reconnects != 1 || now.LastError != st.LastError || now.Transport != Connecting {
				t.Fatalf("status 900 ms after the refusal %+v", now)
			}

			release()
			// Admitted once the slot is free: a stream delivers the
			// current version, a long-poll parks (a watcher too).
			ctx30, cancel30 := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel30()
			st, err = c.WaitFor(ctx30, func(s Status) bool { return s.Version == 2 && s.Transport == m.transport })
			if err != nil {
				t.Fatalf("not following within 30 s of the slot's release: %v (status %+v)", err, st)
			}
			waitFor(t, "the client's watch to hold the slot", 30*time.Second, func() bool {
				return metric(t, s.URL, "ringd_watchers") == 1
			})
			v := a.change(upsert("b", 1))
			st = waitVersion(t, c, v)
			if v != 3 || st.Transport != m.transport || st.Server != s.URL || st.Refused != 0 {
				t.Fatalf("v%d: status %+v", v, st)
			}
			assertRoutesLikeServer(t, a, c, 3, 2)
			// Every failed attempt was one refusal, and nothing else was
			// refused.
			if refused := metric(t, s.URL, "ringd_watchers_refused_total"); refused != float64(st.Reconnects) || refused < 1 {
				t.Fatalf("%v watchers refused, %d failed attempts", refused, st.Reconnects)
			}
		})
	}
}

// TestAFullServerSendsTheWatchToTheNextURL names two servers, the first
// at its --max-watchers: its 503 at-capacity is tried on the second
// within the same attempt, so the client follows through the second at
// once, without a failed attempt or a wait for the Retry-After.
func TestAFullServerSendsTheWatchToTheNextURL(t *testing.T) {
	full := startServer(t, "--max-watchers", "1")
	spare := startServer(t)
	for _, base := range []string{full.URL, spare.URL} {
		a := api{t: t, base: base, ring: "r"}
		a.create(map[string]any{})
		a.change(upsert("a", 1))
	}
	holdWatch(t, full.URL, "r")
	c, err := NewClient([]string{full.URL, spare.URL}, "r", WithClientID("next-url"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := waitVersion(t, c, 2)
	if st.Server != spare.URL || st.Transport != SSE || st.Reconnects != 0 || st.LastError != nil {
		t.Fatalf("status %+v", st)
	}
	if got := metric(t, full.URL, "ringd_watchers_refused_total"); got != 1 {
		t.Fatalf("the full server refused %v watchers, want 1", got)
	}
	if got := metric(t, spare.URL, "ringd_watchers"); got != 1 {
		t.Fatalf("the spare server serves %v watchers, want 1", got)
	}
	// The second server now answers first: a change arrives through it.
	a := api{t: t, base: spare.URL, ring: "r"}
	v := a.change(upsert("b", 1))
	if st := waitVersion(t, c, v); st.Server != spare.URL || st.Reconnects != 0 {
		t.Fatalf("status %+v", st)
	}
	if got := metric(t, full.URL, "ringd_watchers_refused_total"); got != 1 {
		t.Fatalf("the full server refused %v watchers, want 1", got)
	}
}
