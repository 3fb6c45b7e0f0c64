package ringd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// proxy is a reverse proxy in front of a ringd, which a test can shut
// down (cutting its streams) or make refuse event streams.
type proxy struct {
	*httptest.Server
	refuseStreams atomic.Bool
	down          atomic.Bool  // answer 503 to everything
	watches       atomic.Int64 // watch requests seen
	fetches       atomic.Int64 // GET …/snapshots/{v} requests seen
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // pass events on as they come
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if strings.Contains(r.URL.Path, "/snapshots/") {
			p.fetches.Add(1)
		}
		if strings.HasSuffix(r.URL.Path, "/watch") {
			p.watches.Add(1)
			if p.refuseStreams.Load() {
				// As a proxy that does not pass event streams: 406.
				http.Error(w, "no event streams here", http.StatusNotAcceptable)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// TestResumesAfterTheServerRestarts kills the server under a stream and
// starts it again on the same port and data: the client reconnects,
// resumes after the version it holds and follows the next changes.
func TestResumesAfterTheServerRestarts(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	a.change(upsert("a", 1), upsert("b", 1))
	c, err := NewClient([]string{s.URL}, "r", fast("restart")...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitVersion(t, c, 2)
	s.restart()
	a.base = s.URL
	a.change(upsert("c", 1))
	st := waitVersion(t, c, 3)
	if st.Reconnects == 0 || st.Applied != 2 || st.Refused != 0 || st.Transport != SSE {
		t.Fatalf("status %+v", st)
	}
	assertRoutesLikeServer(t, a, c, 3, 2)
}

// TestFailsOverToTheSecondURL follows a ring through one proxy, shuts it
// down, and follows on through the second URL.
func TestFailsOverToTheSecondURL(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	a.change(upsert("a", 1))
	p1, p2 := newProxy(t, s.URL), newProxy(t, s.URL)
	c, err := NewClient([]string{p1.URL, p2.URL}, "r", fast("failover")...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st := waitVersion(t, c, 2); st.Server != p1.URL {
		t.Fatalf("connected to %s, want %s", st.Server, p1.URL)
	}
	p1.CloseClientConnections()
	p1.Close()
	waitFor(t, "the stream on the second URL", 10*time.Second, func() bool { return c.Status().Server == p2.URL })
	a.change(upsert("b", 1))
	st := waitVersion(t, c, 3)
	if st.Server != p2.URL || st.Reconnects == 0 || st.Transport != SSE {
		t.Fatalf("status %+v", st)
	}
	assertRoutesLikeServer(t, a, c, 3, 2)
}

// TestLongPollsWhenStreamsAreRefused follows a ring through a proxy that
// answers every watch with 406: WatchAuto falls back to long-polls, and
// versions committed together still all arrive, in order.
func TestLongPollsWhenStreamsAreRefused(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	p := newProxy(t, s.URL)
	p.refuseStreams.Store(true)
	var applied []uint64
	seen := make(chan uint64, 64)
	c, err := NewClient([]string{p.URL}, "r", append(fast("poller"),
		WithObserver(func(e Event) {
			if e.Kind == EventApplied {
				seen <- e.Version
			}
		}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := waitVersion(t, c, 1)
	if st.Transport != LongPoll || p.watches.Load() != 1 {
		t.Fatalf("transport %v after %d watches", st.Transport, p.watches.Load())
	}
	a.change(upsert("a", 1))
	waitVersion(t, c, 2)
	// Three versions while a long-poll waits: however they are answered
	// (the newest, with the ones between fetched), each is applied.
	a.change(upsert("b", 1))
	a.change(upsert("c", 1))
	a.change(upsert("d", 2))
	st = waitVersion(t, c, 5)
	assertRoutesLikeServer(t, a, c, 5, 4)
	c.Close()
	close(seen)
	for v := range seen {
		applied = append(applied, v)
	}
	if fmt.Sprint(applied) != "[1 2 3 4 5]" || st.Applied != 5 || st.Refused != 0 {
		t.Fatalf("applied %v, status %+v", applied, st)
	}
	if p.watches.Load() != 1 {
		t.Fatalf("%d watch requests: the stream was tried again before SSERetry", p.watches.Load())
	}
}

// TestLongPollOnlyFillsGaps forces long-polls and commits three versions
// while the client's proxy answers 503: its next long-poll answers the
// newest, and the client fetches the two between and applies every one.
func TestLongPollOnlyFillsGaps(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	a.change(upsert("a", 1))
	p := newProxy(t, s.URL)
	var applied []uint64
	seen := make(chan uint64, 64)
	c, err := NewClient([]string{p.URL}, "r", append(fast("gaps"), WithWatchMode(WatchLongPoll),
		WithLongPollWait(100*time.Millisecond), WithObserver(func(e Event) {
			if e.Kind == EventApplied {
				seen <- e.Version
			}
		}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitVersion(t, c, 2)
	p.down.Store(true)
	waitFor(t, "the client to meet the 503", 10*time.Second, func() bool { return c.Status().Reconnects > 0 })
	for _, id := range []string{"b", "c", "d"} {
		a.change(upsert(id, 1))
	}
	p.down.Store(false)
	st := waitVersion(t, c, 5)
	if st.Transport != LongPoll || st.Applied != 4 || p.fetches.Load() != 2 {
		t.Fatalf("status %+v, %d version fetches", st, p.fetches.Load())
	}
	assertRoutesLikeServer(t, a, c, 5, 4)
	c.Close()
	close(seen)
	for v := range seen {
		applied = append(applied, v)
	}
	if fmt.Sprint(applied) != "[2 3 4 5]" {
		t.Fatalf("applied %v", applied)
	}
	var api *APIError
	if !errors.As(st.LastError, &api) || api.Status != 503 {
		t.Fatalf("last error %v", st.LastError)
	}
}

// TestAcksAreVisibleOnTheServer checks that each applied version is acked
// under the client's id, with its fingerprint, as GET …/clients shows.
func TestAcksAreVisibleOnTheServer(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	a.change(upsert("a", 1), upsert("b", 1))
	c, err := NewClient([]string{s.URL}, "r", append(fast("web-3"), WithKind(KindProxy))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, v := range []uint64{2, 3} {
		if v == 3 {
			a.change(upsert("c", 1))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := c.WaitFor(ctx, func(s Status) bool { return s.Acked == v })
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		list := a.do("GET", "/clients", nil, 200)
		clients := list["clients"].([]any)
		if len(clients) != 1 {
			t.Fatalf("clients %v", clients)
		}
		got := clients[0].(map[string]any)
		if got["client_id"] != "web-3" || got["version"] != float64(v) || got["fingerprint"] != st.Fingerprint ||
			got["lag"] != 0.0 || got["divergent"] != false || got["kind"] != "proxy" || list["fingerprint"] != st.Fingerprint {
			t.Fatalf("v%d: client %v", v, got)
		}
	}
}

// unusedPort is a loopback address nothing listens on.
func unusedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestSkipsADeadFirstURL starts with a first URL that refuses
// connections: the client connects through the second at once.
func TestSkipsADeadFirstURL(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	dead := unusedPort(t)
	c, err := NewClient([]string{dead + "," + s.URL}, "r", fast("dead-first")...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st := waitVersion(t, c, 1); st.Server != s.URL {
		t.Fatalf("status %+v", st)
	}
}
