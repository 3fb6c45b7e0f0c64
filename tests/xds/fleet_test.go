// Package xds checks ringd's xDS server against grpc-go's own xDS client
// and ring_hash balancer: a real ringd, real gRPC backends on loopback
// ports that answer with their node id, and a gRPC channel to
// xds:///<ring> that routes each request by the hash of its ringd-key
// header. Every key's backend must be the owner ringd's lookup names.
package xds

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/ringdtest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/xds"
)

var keysPerVersion = flag.Int("keys", 20000, "keys routed through gRPC per ring version")

// hashHeader is the header ringd's routes hash by default.
const hashHeader = "ringd-key"

// backend is a gRPC server that answers UnaryCall with its node id.
type backend struct {
	testgrpc.UnimplementedTestServiceServer
	id   string
	addr string
}

func (b *backend) UnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{ServerId: b.id}, nil
}

// startBackend serves node id on a free loopback port until the test ends.
func startBackend(t testing.TB, id string) *backend {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{id: id, addr: lis.Addr().String()}
	s := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(s, b)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return b
}

// bootstrap is a gRPC xDS bootstrap naming ringd's xDS port and nodeID.
func bootstrap(xdsAddr, nodeID string) string {
	return fmt.Sprintf(`{"xds_servers":[{"server_uri":%q,"channel_creds":[{"type":"insecure"}],"server_features":["xds_v3"]}],"node":{"id":%q}}`, xdsAddr, nodeID)
}

// dial opens a channel to xds:///ring through ringd's xDS port, as node
// nodeID. Each channel has its own xDS client, so several nodes can run in
// one test process.
func dial(t testing.TB, xdsAddr, nodeID, ring string) testgrpc.TestServiceClient {
	t.Helper()
	resolver, err := xds.NewXDSResolverWithConfigForTesting([]byte(bootstrap(xdsAddr, nodeID)))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("xds:///"+ring,
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(resolver))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return testgrpc.NewTestServiceClient(cc)
}

// call routes one request for key and returns the id of the backend that
// answered it.
func call(ctx context.Context, c testgrpc.TestServiceClient, key string) (string, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, hashHeader, key)
	resp, err := c.UnaryCall(ctx, &testgrpc.SimpleRequest{})
	if err != nil {
		return "", err
	}
	return resp.GetServerId(), nil
}

// route sends every key through c, 32 at a time, and returns who answered
// each one.
func route(t testing.TB, c testgrpc.TestServiceClient, keys []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answered := make([]string, len(keys))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id, err := call(ctx, c, keys[i])
				if err != nil {
					mu.Lock()
					first = errors.Join(first, fmt.Errorf("key %q: %w", keys[i], err))
					mu.Unlock()
					continue
				}
				answered[i] = id
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatalf("routing through gRPC failed: %v", first)
	}
	return answered
}

// owners asks ringd who owns each key at version.
func owners(t testing.TB, r *ringdtest.Ring, version uint64, keys []string) []string {
	t.Helper()
	out := make([]string, 0, len(keys))
	for start := 0; start < len(keys); start += 10000 {
		batch := keys[start:min(start+10000, len(keys))]
		var answer struct {
			Version uint64
			Results []struct{ Owner *string }
		}
		r.Do("POST", "/lookup", map[string]any{"keys": batch, "replicas": 1, "version": version}, &answer, http.StatusOK)
		if answer.Version != version || len(answer.Results) != len(batch) {
			t.Fatalf("lookup at %d answered version %d with %d results for %d keys", version, answer.Version, len(answer.Results), len(batch))
		}
		for _, res := range answer.Results {
			owner := ""
			if res.Owner != nil {
				owner = *res.Owner
			}
			out = append(out, owner)
		}
	}
	return out
}

// client is one entry of GET …/clients.
type client struct {
	ClientID string `json:"client_id"`
	Version  uint64
	Kind     string
	Failure  *struct {
		Version uint64
		Error   string
	}
}

// clients lists the ring's clients.
func clients(t testing.TB, r *ringdtest.Ring) []client {
	t.Helper()
	var out struct{ Clients []client }
	r.Do("GET", "/clients", nil, &out, http.StatusOK)
	return out.Clients
}

// waitFor polls the ring's clients until ok holds for nodeID's entry, and
// fails the test after 30 s.
func waitFor(t testing.TB, r *ringdtest.Ring, nodeID string, what string, ok func(client) bool) client {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, c := range clients(t, r) {
			if c.ClientID == nodeID && ok(c) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never %s within 30 s; clients: %+v", nodeID, what, clients(t, r))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitAck waits until nodeID's ack is at version.
func waitAck(t testing.TB, r *ringdtest.Ring, nodeID string, version uint64) {
	t.Helper()
	c := waitFor(t, r, nodeID, fmt.Sprintf("acked version %d", version), func(c client) bool { return c.Version >= version })
	if c.Version != version || c.Kind != "proxy" {
		t.Fatalf("%s acked %+v, want version %d as a proxy", nodeID, c, version)
	}
}

// insecureBackends are the credentials of the channel to the backends,
// which serve plain gRPC; the xDS stream has its own, from the bootstrap.
func insecureBackends() credentials.TransportCredentials { return insecure.NewCredentials() }

// ringOfBackends makes an envoy_ring_hash ring of n backends, n0 to
// n<n-1> with weights 1 to n, and returns it with its version.
func ringOfBackends(t testing.TB, s *ringdtest.Server, name string, n int) (*ringdtest.Ring, uint64) {
	t.Helper()
	r := s.Ring(name)
	r.Create(map[string]any{"algorithm": "envoy_ring_hash"})
	var ops []ringdtest.Op
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		ops = append(ops, ringdtest.Upsert(ringdtest.Node{ID: id, Address: startBackend(t, id).addr, Weight: i + 1}))
	}
	return r, r.Change(ops...)
}
