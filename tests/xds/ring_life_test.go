package xds

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ringd/ringd/clients/go/ringdtest"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// life drives one envoy_ring_hash ring and checks, after each version the
// gRPC client acks, that it routes every key to ringd's owner.
type life struct {
	t        *testing.T
	ring     *ringdtest.Ring
	grpc     testgrpc.TestServiceClient
	nodeID   string
	backends map[string]*backend
	rng      *rand.Rand
	checked  int
	versions int
}

// node is backend id's record with weight (0 for the default).
func (l *life) node(id string, weight int) ringdtest.Node {
	b, ok := l.backends[id]
	if !ok {
		b = startBackend(l.t, id)
		l.backends[id] = b
	}
	return ringdtest.Node{ID: id, Address: b.addr, Weight: weight}
}

// weight is a random weight from 1 to 10.
func (l *life) weight() int { return 1 + l.rng.IntN(10) }

// keys are n keys no other version routes.
func (l *life) keys(version uint64, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("v%d-%d-%016x", version, i, l.rng.Uint64())
	}
	return keys
}

// check waits for the gRPC client's ack of version, then for its balancer
// to route on it (the ack is sent once the resource is accepted, and the
// balancer takes it up a moment later), then routes keysPerVersion keys
// and fails on any that did not reach ringd's owner.
func (l *life) check(version uint64, what string) {
	l.t.Helper()
	waitAck(l.t, l.ring, l.nodeID, version)
	probe := l.keys(version, 200)
	want := owners(l.t, l.ring, version, probe)
	if want[0] == "" {
		l.t.Logf("version %d (%s): no active node, nothing to route", version, what)
		return
	}
	settled := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if slices.Equal(route(l.t, l.grpc, probe), want) {
			settled = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !settled {
		l.t.Fatalf("version %d (%s): gRPC did not route on it within 5 s of its ack", version, what)
	}
	keys := l.keys(version, *keysPerVersion)
	want = owners(l.t, l.ring, version, keys)
	got := route(l.t, l.grpc, keys)
	wrong := 0
	for i := range keys {
		if got[i] != want[i] {
			if wrong < 5 {
				l.t.Errorf("version %d (%s): key %q went to %s, ringd's owner is %s", version, what, keys[i], got[i], want[i])
			}
			wrong++
		}
	}
	if wrong > 0 {
		l.t.Fatalf("version %d (%s): %d of %d keys disagree", version, what, wrong, len(keys))
	}
	l.checked += len(keys)
	l.versions++
	l.t.Logf("version %d (%s): %d keys, 0 disagreements", version, what, len(keys))
}

// upserts adds nodes first..last-1 (named n<i>) with random weights.
func (l *life) upserts(first, last int) []ringdtest.Op {
	var ops []ringdtest.Op
	for i := first; i < last; i++ {
		ops = append(ops, ringdtest.Upsert(l.node(fmt.Sprintf("n%02d", i), l.weight())))
	}
	return ops
}

// TestRingLife follows a ring through grpc-go from one endpoint to 40 and
// back to 3: additions, re-weights, drains, removals, a ring size change,
// and a replacement that takes over a node's keys through its hash_key.
func TestRingLife(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	l := &life{
		t:        t,
		ring:     s.Ring("cache"),
		nodeID:   "grpc-go-1",
		backends: map[string]*backend{},
		rng:      rand.New(rand.NewPCG(43, 1)),
	}
	v := l.ring.Create(map[string]any{"algorithm": "envoy_ring_hash"})
	l.grpc = dial(t, s.XDS, l.nodeID, "cache")
	// The channel starts its xDS client on its first call, which fails
	// while the ring has no endpoint.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, _ = call(ctx, l.grpc, "first")
	cancel()
	l.check(v, "empty")

	v = l.ring.Change(ringdtest.Upsert(l.node("n00", 1)))
	l.check(v, "1 node")
	v = l.ring.Change(l.upserts(1, 5)...)
	l.check(v, "5 nodes")
	v = l.ring.Change(l.upserts(5, 17)...)
	l.check(v, "17 nodes")
	v = l.ring.Change(l.upserts(17, 40)...)
	l.check(v, "40 nodes")

	var reweights []ringdtest.Op
	for _, i := range []int{3, 11, 19, 27, 35} {
		reweights = append(reweights, ringdtest.Upsert(l.node(fmt.Sprintf("n%02d", i), l.weight())))
	}
	v = l.ring.Change(reweights...)
	l.check(v, "5 re-weighted")

	var drains, removals []ringdtest.Op
	for _, i := range []int{5, 15, 25} {
		n, _ := l.ring.Node(fmt.Sprintf("n%02d", i))
		n.State = "draining"
		drains = append(drains, ringdtest.Upsert(n))
		removals = append(removals, ringdtest.Remove(n.ID))
	}
	v = l.ring.Change(drains...)
	l.check(v, "3 draining")
	v = l.ring.Change(removals...)
	l.check(v, "3 removed")

	v = l.ring.Change(ringdtest.Op{"op": "update_config", "config": map[string]any{"minimum_ring_size": 2048}})
	l.check(v, "minimum ring size 2048")

	// n07 is replaced by r07 at another address: r07 takes n07's label as
	// its hash_key while n07 drains, so every key of n07 moves to r07 and
	// no other key moves.
	before := l.keys(v, *keysPerVersion)
	ownersBefore := owners(t, l.ring, v, before)
	old, _ := l.ring.Node("n07")
	old.State = "draining"
	replacement := l.node("r07", old.Weight)
	replacement.HashKey = "n07"
	v = l.ring.Change(ringdtest.Upsert(old), ringdtest.Upsert(replacement))
	ownersAfter := owners(t, l.ring, v, before)
	moved := 0
	for i := range before {
		switch {
		case ownersBefore[i] == "n07" && ownersAfter[i] != "r07":
			t.Fatalf("key %q of n07 went to %s, not its replacement", before[i], ownersAfter[i])
		case ownersBefore[i] != "n07" && ownersAfter[i] != ownersBefore[i]:
			t.Fatalf("key %q moved from %s to %s in a replacement", before[i], ownersBefore[i], ownersAfter[i])
		case ownersBefore[i] == "n07":
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("n07 owned none of the keys")
	}
	l.check(v, fmt.Sprintf("n07 replaced by r07 (%d keys moved)", moved))
	v = l.ring.Change(ringdtest.Remove("n07"))
	l.check(v, "n07 removed")

	var shrink []ringdtest.Op
	for _, id := range l.ring.Nodes() {
		if id != "n00" && id != "n01" && id != "r07" {
			shrink = append(shrink, ringdtest.Remove(id))
		}
	}
	v = l.ring.Change(shrink...)
	l.check(v, "back to 3")
	t.Logf("grpc-go: %d keys checked over %d versions, 0 disagreements", l.checked, l.versions)
}
