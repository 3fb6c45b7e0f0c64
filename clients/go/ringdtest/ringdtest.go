// Package ringdtest starts a real ringd server and the daemons a test
// routes to, for the live tests of the Go client's adapter modules
// (goredisring, memcacheselector). It is for tests only: every function
// takes a testing.TB, fails the test on error and stops what it started
// when the test ends. It is an exported package (not internal) because
// those adapters are modules of their own, and a module cannot import
// another module's internal packages.
//
// The ringd binary is RINGD_BIN, else target/release/ringd in the first
// directory above the test's that has one; without either the test is
// skipped, saying why.
package ringdtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Binary is the ringd binary the tests run: RINGD_BIN, else the nearest
// target/release/ringd above the working directory. It skips the test
// when there is none.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("RINGD_BIN")
	if bin == "" {
		dir, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for {
			candidate := filepath.Join(dir, "target", "release", "ringd")
			if _, err := os.Stat(candidate); err == nil {
				bin = candidate
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				t.Skip("no ringd binary: build it with `cargo build --release`, or set RINGD_BIN")
			}
			dir = parent
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no ringd binary at %s (build it with `cargo build --release`, or set RINGD_BIN): %v", bin, err)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Server is a real `ringd serve` on a loopback port, with a SQLite store
// in a temporary directory.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	// XDS is the xDS listener's address, 127.0.0.1:PORT, when the server
	// was started with --xds-listen.
	XDS string
	t   testing.TB
	dir string
	cmd *exec.Cmd
}

// Start runs `ringd serve` with extra arguments (tokens, TTLs) on a free
// loopback port, and kills it when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	s := &Server{t: t, dir: t.TempDir()}
	args = append([]string{"serve", "--listen", "127.0.0.1:0",
		"--store", "sqlite://" + filepath.Join(s.dir, "ringd.db")}, args...)
	cmd, url, xds := run(t, filepath.Join(s.dir, "ringd.log"), slices.Contains(args, "--xds-listen"), args...)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s.cmd, s.URL, s.XDS = cmd, url, xds
	return s
}

// Log is what the server wrote to its log so far.
func (s *Server) Log() string {
	text, _ := os.ReadFile(filepath.Join(s.dir, "ringd.log"))
	return string(text)
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Run starts the ringd Binary with args and no RINGD_* or proxy variable
// in its environment, its stderr appended to logPath, and returns it with
// the URL its `ringd listening on …` line names. The caller stops it; a
// server that prints no URL within 30 s is killed and fails the test,
// showing its log.
func Run(t testing.TB, logPath string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, url, _ := run(t, logPath, false, args...)
	return cmd, url
}

// run is Run that, with xds, also waits for the `ringd serving xDS on …`
// line that follows the URL and returns its address.
func run(t testing.TB, logPath string, xds bool, args ...string) (*exec.Cmd, string, string) {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = childEnv()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls, xdsAddrs := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "ringd listening on "); ok {
				urls <- strings.TrimSpace(u)
			}
			if a, ok := strings.CutPrefix(sc.Text(), "ringd serving xDS on "); ok {
				xdsAddrs <- strings.TrimSpace(a)
			}
		}
	}()
	deadline := time.After(30 * time.Second)
	fail := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		text, _ := os.ReadFile(logPath)
		t.Fatalf("ringd printed no URL within 30 s; log:\n%s", text)
	}
	var url, addr string
	select {
	case url = <-urls:
	case <-deadline:
		fail()
		return nil, "", ""
	}
	if xds {
		select {
		case addr = <-xdsAddrs:
		case <-deadline:
			fail()
			return nil, "", ""
		}
	}
	return cmd, url, addr
}

// childEnv is this process's environment without RINGD_* and proxy
// variables, so the child serves exactly what the test asks for.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "RINGD_") && !strings.Contains(strings.ToLower(k), "proxy") {
			env = append(env, kv)
		}
	}
	return env
}

// Ring is the REST API of one ring on s, called as an operator would.
func (s *Server) Ring(name string) *Ring {
	return &Ring{t: s.t, base: s.URL, name: name}
}

// Ring calls one ring's REST API; every call fails the test unless the
// server answers as expected.
type Ring struct {
	t    testing.TB
	base string
	name string
	// Token, when set, is sent as `Authorization: Bearer …`.
	Token string
	// nodes are the records Change has written, by id.
	nodes map[string]Node
}

// Do sends body (JSON, nil for none) to path under /v1/rings/{ring} and
// decodes the answer into out (nil to ignore it); an answer other than
// want fails the test.
func (r *Ring) Do(method, path string, body, out any, want int) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+"/v1/rings/"+r.name+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != want {
		r.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			r.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

// Create makes the ring with config (PUT /v1/rings/{ring}) and returns
// its first version.
func (r *Ring) Create(config map[string]any) uint64 {
	r.t.Helper()
	var out struct{ Version uint64 }
	r.Do("PUT", "", config, &out, http.StatusCreated)
	return out.Version
}

// Node is a node record as POST …/changes takes it.
type Node struct {
	ID      string `json:"id"`
	Address string `json:"address,omitempty"`
	Weight  int    `json:"weight,omitempty"`
	// State is active (the default), draining or joining.
	State string `json:"state,omitempty"`
	// HashKey, when set, is placed instead of the id.
	HashKey string `json:"hash_key,omitempty"`
}

// Op is one op of a change.
type Op map[string]any

// Upsert adds n or replaces the node of its id.
func Upsert(n Node) Op { return Op{"op": "upsert", "node": n} }

// Remove removes the node id.
func Remove(id string) Op { return Op{"op": "remove", "id": id} }

// Change applies ops as one version (POST …/changes) and returns it.
func (r *Ring) Change(ops ...Op) uint64 {
	r.t.Helper()
	var out struct{ Version uint64 }
	r.Do("POST", "/changes", map[string]any{"ops": ops}, &out, http.StatusOK)
	if r.nodes == nil {
		r.nodes = map[string]Node{}
	}
	for _, op := range ops {
		switch op["op"] {
		case "upsert":
			n := op["node"].(Node)
			r.nodes[n.ID] = n
		case "remove":
			delete(r.nodes, op["id"].(string))
		}
	}
	return out.Version
}

// Node is the record of node id as the changes made through Change left
// it; false once removed, or never written through Change.
func (r *Ring) Node(id string) (Node, bool) {
	n, ok := r.nodes[id]
	return n, ok
}

// Nodes are the ids of the nodes the changes made through Change left.
func (r *Ring) Nodes() []string {
	ids := make([]string, 0, len(r.nodes))
	for id := range r.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// MaxLookupKeys is how many keys one POST …/lookup accepts.
const MaxLookupKeys = 10_000

// Lookup is the server's owner of each key at version (POST …/lookup,
// in batches of MaxLookupKeys), "" where no node is active.
func (r *Ring) Lookup(version uint64, keys []string) []string {
	r.t.Helper()
	owners := make([]string, len(keys))
	for i, list := range r.Replicas(version, keys, 1) {
		if len(list) > 0 {
			owners[i] = list[0]
		}
	}
	return owners
}

// Replicas is the server's preference list of each key at version, up to
// n nodes, owner first (POST …/lookup with "replicas": n, in batches of
// MaxLookupKeys).
func (r *Ring) Replicas(version uint64, keys []string, n int) [][]string {
	r.t.Helper()
	lists := make([][]string, 0, len(keys))
	for start := 0; start < len(keys); start += MaxLookupKeys {
		batch := keys[start:min(start+MaxLookupKeys, len(keys))]
		var out struct {
			Version uint64
			Results []struct {
				Owner    *string
				Replicas []string
			}
		}
		r.Do("POST", "/lookup", map[string]any{"keys": batch, "version": version, "replicas": n}, &out, http.StatusOK)
		if out.Version != version || len(out.Results) != len(batch) {
			r.t.Fatalf("lookup at version %d answered version %d with %d results for %d keys",
				version, out.Version, len(out.Results), len(batch))
		}
		for _, res := range out.Results {
			if res.Owner == nil && len(res.Replicas) > 0 || res.Owner != nil && (len(res.Replicas) == 0 || res.Replicas[0] != *res.Owner) {
				r.t.Fatalf("lookup at version %d: owner %v and replicas %v disagree", version, res.Owner, res.Replicas)
			}
			lists = append(lists, res.Replicas)
		}
	}
	return lists
}

// String names the ring and its server, for messages.
func (r *Ring) String() string { return fmt.Sprintf("ring %s on %s", r.name, r.base) }
