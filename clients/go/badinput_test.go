package ringd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/placement"
)

const testConfig = `{"algorithm":"ring","hash":"xxh3","vnodes_per_weight":160,"replication_factor":3,"zone_aware":false}`

// snapshotJSON is a genuine snapshot of ring r at version v with the
// nodes ids, its fingerprint computed by the placement core; a non-empty
// fingerprint replaces it (a doctored snapshot).
func snapshotJSON(t *testing.T, v uint64, fingerprint string, ids ...string) (string, string) {
	t.Helper()
	cfg, err := placement.ParseConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []placement.Node
	var parts []string
	for _, id := range ids {
		nodes = append(nodes, placement.NewNode(id))
		parts = append(parts, fmt.Sprintf(`{"id":%q,"weight":1,"state":"active"}`, id))
	}
	p, err := placement.Build(cfg, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fingerprint == "" {
		fingerprint = p.Fingerprint()
	}
	return fmt.Sprintf(`{"ring":"r","version":%d,"config":%s,"nodes":[%s],"fingerprint":%q}`,
		v, testConfig, strings.Join(parts, ","), fingerprint), p.Fingerprint()
}

// fakeRingd serves a scripted watch stream per connection, and records
// the Last-Event-ID of each.
type fakeRingd struct {
	mu       sync.Mutex
	scripts  []string // the body of connection i; the last repeats
	resumeAt []string
}

func (f *fakeRingd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/rings/r/watch" {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.resumeAt = append(f.resumeAt, r.Header.Get("Last-Event-ID"))
	body := f.scripts[min(len(f.resumeAt), len(f.scripts))-1]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write([]byte(body))
	w.(http.Flusher).Flush()
	if strings.HasSuffix(body, "\n\n") {
		<-r.Context().Done() // hold the stream open, as ringd does
	}
}

func (f *fakeRingd) resumes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.resumeAt...)
}

// TestRefusesDoctoredAndMalformedSnapshots serves, on one stream, a good
// version 1, a version 2 whose fingerprint is not its placement's, an
// undecodable version 3 and a good version 4, then breaks the framing
// with invalid UTF-8; on the next stream (resumed after 4) a good 5. The
// doctored and undecodable versions are refused with typed errors and
// the previous placement kept; nothing panics.
func TestRefusesDoctoredAndMalformedSnapshots(t *testing.T) {
	v1, _ := snapshotJSON(t, 1, "", "a", "b")
	doctored := strings.Repeat("ab", 32)
	v2, fp2 := snapshotJSON(t, 2, doctored, "a", "b", "c")
	v4, _ := snapshotJSON(t, 4, "", "a", "c")
	v5, fp5 := snapshotJSON(t, 5, "", "c")
	first := "event: snapshot\nid: 1\ndata: " + v1 + "\n\n" +
		": a comment\r\nevent: snapshot\r\nid: 2\r\ndata: " + v2 + "\r\n\r\n" +
		"event: snapshot\nid: 3\ndata: {\"ring\": \"r\", \"version\": \n\n" +
		"event: rollout\ndata: {}\n\n" + // not about versions: ignored
		"event: snapshot\nid: 4\ndata: " + v4 + "\n\n" +
		"event: snapshot\ndata: \xff\xfe\n\n"
	fake := &fakeRingd{scripts: []string{first, "event: snapshot\nid: 5\ndata: " + v5 + "\n\n"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var mu sync.Mutex
	var refused []error
	c, err := NewClient([]string{srv.URL}, "r", append(fast("doctored"), WithAck(false), WithObserver(func(e Event) {
		if e.Kind == EventRefused {
			mu.Lock()
			refused = append(refused, e.Err)
			mu.Unlock()
		}
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := waitVersion(t, c, 5)
	if st.Fingerprint != fp5 || st.Refused != 2 || st.Applied != 3 || st.Reconnects != 1 {
		t.Fatalf("status %+v", st)
	}
	if got := fake.resumes(); fmt.Sprint(got) != "[ 4]" {
		t.Fatalf("Last-Event-ID of each stream: %q", got)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 2 {
		t.Fatalf("refused %v", refused)
	}
	// Version 2: a fingerprint mismatch, with both fingerprints.
	var snapErr *SnapshotError
	var mismatch *placement.FingerprintMismatchError
	if !errors.Is(refused[0], ErrSnapshotRefused) || !errors.Is(refused[0], placement.ErrFingerprintMismatch) ||
		!errors.As(refused[0], &snapErr) || snapErr.Version != 2 || !errors.As(refused[0], &mismatch) ||
		mismatch.Expected != doctored || mismatch.Actual != fp2 {
		t.Fatalf("version 2 refused with %v", refused[0])
	}
	// Version 3: undecodable.
	if !errors.Is(refused[1], ErrSnapshotRefused) || !errors.Is(refused[1], ErrMalformedResponse) ||
		!errors.As(refused[1], &snapErr) || snapErr.Version != 3 {
		t.Fatalf("version 3 refused with %v", refused[1])
	}
}

// TestKeepsThePlacementWhileRefusing checks the placement held while a
// doctored version is refused is the one before, untouched.
func TestKeepsThePlacementWhileRefusing(t *testing.T) {
	v1, fp1 := snapshotJSON(t, 1, "", "a", "b")
	v2, _ := snapshotJSON(t, 2, strings.Repeat("0", 64), "c")
	fake := &fakeRingd{scripts: []string{"event: snapshot\nid: 1\ndata: " + v1 + "\n\nevent: snapshot\nid: 2\ndata: " + v2 + "\n\n"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c, err := NewClient([]string{srv.URL}, "r", append(fast("keeps"), WithAck(false))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.WaitFor(ctx, func(s Status) bool { return s.Refused == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 1 || st.Fingerprint != fp1 || c.Current().Fingerprint() != fp1 || !errors.Is(st.LastError, placement.ErrFingerprintMismatch) {
		t.Fatalf("status %+v", st)
	}
	for _, k := range keys {
		if o, _ := c.OwnerString(k); o != "a" && o != "b" {
			t.Fatalf("%s routed to %q, a node of the refused version", k, o)
		}
	}
}

// TestAWrongTokenIsATypedError asks a server with a read token with a
// wrong one: Ready fails with ErrUnauthorized inside, and an *APIError
// with the 401 and its problem document.
func TestAWrongTokenIsATypedError(t *testing.T) {
	s := startServer(t, "--read-token", "right-read", "--admin-token", "right-admin")
	a := api{t: t, base: s.URL, ring: "r", token: "right-admin"}
	a.create(map[string]any{})
	c, err := NewClient([]string{s.URL}, "r", append(fast("wrong-token"), WithToken("wrong"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = c.Ready(ctx)
	var api *APIError
	if !errors.Is(err, ErrUnauthorized) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &api) ||
		api.Status != 401 || api.Slug() != "unauthorized" {
		t.Fatalf("Ready: %v (%#v)", err, api)
	}
	if st := c.Status(); st.Version != 0 || st.Reconnects == 0 {
		t.Fatalf("status %+v", st)
	}
	// The read token works.
	good, err := NewClient([]string{s.URL}, "r", append(fast("right-token"), WithToken("right-read"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	waitVersion(t, good, 1)
}

// TestOptionsAreChecked refuses malformed settings with ErrInvalidOption.
func TestOptionsAreChecked(t *testing.T) {
	cases := map[string]struct {
		urls []string
		ring string
		opts []Option
	}{
		"no URL":        {nil, "r", nil},
		"no scheme":     {[]string{"localhost:1"}, "r", nil},
		"bad ring":      {[]string{"http://a"}, "Bad Ring", nil},
		"bad client id": {[]string{"http://a"}, "r", []Option{WithClientID("no spaces")}},
		"long wait":     {[]string{"http://a"}, "r", []Option{WithLongPollWait(6 * time.Minute)}},
		"backoff":       {[]string{"http://a"}, "r", []Option{WithBackoff(time.Second, time.Millisecond)}},
		"kind":          {[]string{"http://a"}, "r", []Option{WithKind("other")}},
		"tls files":     {[]string{"https://a"}, "r", []Option{WithTLSFiles("/nonexistent/ca.pem", "", "")}},
	}
	for name, tc := range cases {
		if _, err := NewClient(tc.urls, tc.ring, tc.opts...); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
