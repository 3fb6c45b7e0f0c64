package xds

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/ringdtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// readmeBootstrap is the gRPC bootstrap the README gives, and the node id
// in it.
func readmeBootstrap(t *testing.T) (string, string) {
	t.Helper()
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "export GRPC_XDS_BOOTSTRAP_CONFIG='"
	for _, line := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			config := strings.TrimSuffix(rest, "'")
			_, after, _ := strings.Cut(config, `"node":{"id":"`)
			node, _, _ := strings.Cut(after, `"`)
			return config, node
		}
	}
	t.Fatalf("README.md has no line starting %q", prefix)
	return "", ""
}

// TestTheReadmesBootstrapWorks runs a gRPC client process configured the
// way the README says, with GRPC_XDS_BOOTSTRAP_CONFIG read at start (its
// address changed to the test server's port), against the README's ring
// of three backends; each key must reach ringd's owner, and the client
// must be listed under the README's node id.
func TestTheReadmesBootstrapWorks(t *testing.T) {
	config, node := readmeBootstrap(t)
	if !strings.Contains(config, `"127.0.0.1:7421"`) || node != "search-frontend-1" {
		t.Fatalf("the README's bootstrap changed: %s", config)
	}
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	r := s.Ring("search")
	r.Create(map[string]any{"algorithm": "envoy_ring_hash"})
	var ops []ringdtest.Op
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("search-%d", i)
		ops = append(ops, ringdtest.Upsert(ringdtest.Node{ID: id, Address: startBackend(t, id).addr}))
	}
	v := r.Change(ops...)
	keys := []string{"user:1", "user:2", "user:3", "user:4", "user:5", "user:6", "user:7", "user:8"}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadmeClientProcess$")
	cmd.Env = append(os.Environ(),
		"GRPC_XDS_BOOTSTRAP_CONFIG="+strings.Replace(config, "127.0.0.1:7421", s.XDS, 1),
		"XDS_README_KEYS="+strings.Join(keys, ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the client process failed: %v\n%s", err, out)
	}
	want := owners(t, r, v, keys)
	for i, k := range keys {
		if line := fmt.Sprintf("%s=%s\n", k, want[i]); !strings.Contains(string(out), line) {
			t.Fatalf("key %s: want %q in the client's output:\n%s", k, line, out)
		}
	}
	waitAck(t, r, node, v)
}

// TestReadmeClientProcess is the client process of the test above: it
// runs only when that test starts it, with the bootstrap in its
// environment from its first instruction, as an application's would be.
func TestReadmeClientProcess(t *testing.T) {
	keys := os.Getenv("XDS_README_KEYS")
	if keys == "" {
		t.Skip("the client process of TestTheReadmesBootstrapWorks; runs only when it starts it")
	}
	cc, err := grpc.NewClient("xds:///search", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := testgrpc.NewTestServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, k := range strings.Split(keys, ",") {
		id, err := call(ctx, c, k)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s=%s\n", k, id)
	}
	// Long enough for the ack to be recorded before the process ends.
	time.Sleep(500 * time.Millisecond)
}
