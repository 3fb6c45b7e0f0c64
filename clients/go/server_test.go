package ringd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/ringdtest"
)

// server is a real `ringd serve` on a loopback port and a SQLite file in
// a directory that outlives restarts, or another store.
type server struct {
	t     *testing.T
	dir   string
	store string // the --store URL; "" is the SQLite file in dir
	args  []string
	cmd   *exec.Cmd
	URL   string
}

// startServer starts ringd with extra serve arguments (tokens), and
// kills it when the test ends.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerOn(t, "", args...)
}

// startServerOn is startServer with the store URL (--store) given; ""
// is a SQLite file in the server's temporary directory.
func startServerOn(t *testing.T, store string, args ...string) *server {
	t.Helper()
	s := &server{t: t, dir: t.TempDir(), store: store, args: args}
	s.start("127.0.0.1:0")
	t.Cleanup(s.kill)
	return s
}

// start runs the binary on listen and reads the URL it prints.
func (s *server) start(listen string) {
	s.t.Helper()
	store := s.store
	if store == "" {
		store = "sqlite://" + filepath.Join(s.dir, "ringd.db")
	}
	args := append([]string{"serve", "--listen", listen, "--store", store}, s.args...)
	s.cmd, s.URL = ringdtest.Run(s.t, filepath.Join(s.dir, "ringd.log"), args...)
}

// kill stops the server at once (SIGKILL: no goodbye to the streams).
func (s *server) kill() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// restart kills the server and starts it again on the same port and data.
func (s *server) restart() {
	s.t.Helper()
	s.kill()
	s.start(strings.TrimPrefix(s.URL, "http://"))
}

// api calls the server's REST API as an operator would.
type api struct {
	t     *testing.T
	base  string
	ring  string
	token string
	hc    *http.Client // nil: http.DefaultClient
}

func (a api) do(method, path string, body any, want int) map[string]any {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+"/v1/rings/"+a.ring+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	hc := a.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// create makes the ring with config; returns its version (1).
func (a api) create(config map[string]any) uint64 {
	return uint64(a.do("PUT", "", config, 201)["version"].(float64))
}

// change applies ops as one version and returns it.
func (a api) change(ops ...map[string]any) uint64 {
	return uint64(a.do("POST", "/changes", map[string]any{"ops": ops}, 200)["version"].(float64))
}

func upsert(id string, weight int) map[string]any {
	return map[string]any{"op": "upsert", "node": map[string]any{"id": id, "weight": weight}}
}

func remove(id string) map[string]any { return map[string]any{"op": "remove", "id": id} }

// lookup is the server's own owner of key at version v.
func (a api) lookup(key string, v uint64) string {
	out := a.do("GET", fmt.Sprintf("/lookup?key=%s&version=%d", key, v), nil, 200)
	return out["owner"].(string)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitVersion waits until c routes on exactly v.
func waitVersion(t *testing.T, c *Client, v uint64) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := c.WaitFor(ctx, func(s Status) bool { return s.Version >= v })
	if err != nil {
		t.Fatalf("waiting for version %d: %v (status %+v)", v, err, st)
	}
	if st.Version != v {
		t.Fatalf("routes on version %d, want %d", st.Version, v)
	}
	return st
}

// fast are the options every test client gets: short waits, so failures
// and fallbacks happen within a test's time.
func fast(id string) []Option {
	return []Option{WithClientID(id), WithBackoff(20*time.Millisecond, 200*time.Millisecond), WithLongPollWait(2 * time.Second)}
}
