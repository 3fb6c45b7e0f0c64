package goredisring_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/goredisring"
	"github.com/ringd/ringd/clients/go/ringdtest"
)

const nKeys = 20_000

// cluster is ringd, a ring, the Redis servers its nodes name, and a
// go-redis Ring following it through the adapter.
type cluster struct {
	t      *testing.T
	ring   *ringdtest.Ring
	redis  map[string]*ringdtest.Daemon // node id → its redis-server
	down   map[string]bool              // nodes whose redis-server the test stopped
	client *ringd.Client
	shard  *goredisring.Sharding
	errs   chan error
}

func newCluster(t *testing.T, algorithm map[string]any, servers int) *cluster {
	s := ringdtest.Start(t)
	cl := &cluster{t: t, ring: s.Ring("cache"), redis: map[string]*ringdtest.Daemon{},
		down: map[string]bool{}, errs: make(chan error, 16)}
	cl.ring.Create(algorithm)
	for i := 0; i < servers; i++ {
		cl.redis[fmt.Sprintf("redis-%d", i)] = ringdtest.Redis(t)
	}
	c, err := ringd.NewClient([]string{s.URL}, "cache", ringd.WithClientID("goredisring-test"),
		ringd.WithBackoff(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	cl.client = c
	cl.shard, err = goredisring.New(c, &redis.RingOptions{HeartbeatFrequency: 100 * time.Millisecond},
		goredisring.WithErrorHandler(func(err error) { cl.errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.shard.Close() })
	return cl
}

// node is the record of node id, at its Redis's address.
func (cl *cluster) node(id string, weight int, state string) ringdtest.Node {
	return ringdtest.Node{ID: id, Address: cl.redis[id].Addr, Weight: weight, State: state}
}

// change applies ops and waits until the Ring routes on the new version.
func (cl *cluster) change(ops ...ringdtest.Op) uint64 {
	cl.t.Helper()
	v := cl.ring.Change(ops...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := cl.shard.WaitForVersion(ctx, v)
	if err != nil {
		cl.t.Fatal(err)
	}
	if st.Version != v {
		cl.t.Fatalf("the Ring routes on version %d, want %d", st.Version, v)
	}
	want := map[string]string{}
	for _, id := range cl.ring.Nodes() {
		if n, _ := cl.ring.Node(id); (n.State == "" || n.State == "active") && n.Address != "" {
			want[id] = n.Address
		}
	}
	if !maps.Equal(st.Shards, want) {
		cl.t.Fatalf("version %d: shards %v, want the active nodes %v", v, st.Shards, want)
	}
	return v
}

// keysOf are version v's keys, each with the part go-redis hashes: the
// whole key, or its {hash tag} for every tenth.
func keysOf(v uint64) (keys, hashed []string) {
	keys, hashed = make([]string, nKeys), make([]string, nKeys)
	for i := range keys {
		if i%10 == 9 {
			hashed[i] = fmt.Sprintf("tag-%d", i/10)
			keys[i] = fmt.Sprintf("v%d:{%s}:cart", v, hashed[i])
		} else {
			keys[i] = fmt.Sprintf("v%d:user:%d", v, i)
			hashed[i] = keys[i]
		}
	}
	return keys, hashed
}

// check writes version v's keys through the Ring, reads each server's
// own keys back with SCAN, and requires every key on the server of
// ringd's owner (POST …/lookup at v; for keys whose owner is not a
// live shard, the first of its preference list that is), and on no
// other.
func (cl *cluster) check(v uint64) {
	t := cl.t
	t.Helper()
	ctx := context.Background()
	keys, hashed := keysOf(v)
	for start := 0; start < len(keys); start += 2000 {
		_, err := cl.shard.Ring().Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys[start:min(start+2000, len(keys))] {
				p.Set(ctx, k, k, 0)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("version %d: writing through the Ring: %v", v, err)
		}
	}
	where := map[string]string{} // key → the address of the server holding it
	for id, d := range cl.redis {
		if cl.down[id] {
			continue
		}
		rdb := redis.NewClient(&redis.Options{Addr: d.Addr})
		iter := rdb.Scan(ctx, 0, fmt.Sprintf("v%d:*", v), 1000).Iterator()
		for iter.Next(ctx) {
			if other, dup := where[iter.Val()]; dup {
				t.Fatalf("version %d: %s is on %s and on %s", v, iter.Val(), other, d.Addr)
			}
			where[iter.Val()] = d.Addr
		}
		if err := iter.Err(); err != nil {
			t.Fatalf("SCAN on %s (%s): %v", id, d.Addr, err)
		}
		_ = rdb.Close()
	}
	lists := cl.ring.Replicas(v, hashed, 64)
	for i, k := range keys {
		want := ""
		for _, id := range lists[i] {
			if n, _ := cl.ring.Node(id); n.Address != "" && !cl.down[id] {
				want = n.Address
				break
			}
		}
		if where[k] != want {
			t.Fatalf("version %d: %s (hashed as %s) is on %q; ringd's owner %s (preference %v) is at %q",
				v, k, hashed[i], where[k], lists[i][0], lists[i], want)
		}
	}
	if len(where) != len(keys) {
		t.Fatalf("version %d: the servers hold %d keys, %d were written", v, len(where), len(keys))
	}
}

// TestRoutesEveryKeyToRingdsOwner writes 20,000 keys through a go-redis
// Ring following a maglev ring over five redis-servers, and finds each
// on the server of ringd's owner, at the first version and after each
// change: nodes added, re-weighted, drained, removed, and a node without
// an address (reported, its keys on the next node of their preference
// list).
func TestRoutesEveryKeyToRingdsOwner(t *testing.T) {
	cl := newCluster(t, map[string]any{"algorithm": "maglev"}, 5)
	steps := []struct {
		what string
		ops  func() []ringdtest.Op
	}{
		{"three nodes", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Upsert(cl.node("redis-0", 1, "")),
				ringdtest.Upsert(cl.node("redis-1", 1, "")), ringdtest.Upsert(cl.node("redis-2", 1, ""))}
		}},
		{"add redis-3", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("redis-3", 1, ""))} }},
		{"add redis-4 at weight 3", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("redis-4", 3, ""))} }},
		{"drain redis-1", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Upsert(cl.node("redis-1", 1, "draining"))}
		}},
		{"re-weight redis-0 to 4", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("redis-0", 4, ""))} }},
		{"remove redis-1, drain redis-2, re-weight redis-3", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Remove("redis-1"), ringdtest.Upsert(cl.node("redis-2", 1, "draining")),
				ringdtest.Upsert(cl.node("redis-3", 2, ""))}
		}},
		{"a node without an address", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Upsert(ringdtest.Node{ID: "nowhere", Weight: 2})}
		}},
		{"redis-1 back, the node without an address gone", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Upsert(cl.node("redis-1", 1, "")), ringdtest.Remove("nowhere")}
		}},
	}
	for _, step := range steps {
		v := cl.change(step.ops()...)
		t.Logf("version %d: %s", v, step.what)
		cl.check(v)
		if _, ok := cl.ring.Node("nowhere"); ok {
			select {
			case err := <-cl.errs:
				var nae *goredisring.NodeAddressError
				if !errors.As(err, &nae) || !errors.Is(err, goredisring.ErrNoAddress) ||
					nae.Version != v || len(nae.Nodes) != 1 || nae.Nodes[0] != "nowhere" {
					t.Fatalf("version %d: reported %v", v, err)
				}
			default:
				t.Fatalf("version %d: the node without an address was not reported", v)
			}
		}
	}
	if st := cl.shard.Status(); st.Applied != uint64(len(steps))+1 || st.LastError == nil {
		t.Fatalf("status %+v", st)
	}
}

// TestShardFoundDownGoesToTheNextInPreference stops one of three
// redis-servers: once go-redis's heartbeat finds it down, its keys go to
// the next node of their ringd preference list, and stay so after a
// change that keeps the stopped node in the ring.
func TestShardFoundDownGoesToTheNextInPreference(t *testing.T) {
	cl := newCluster(t, map[string]any{"algorithm": "ring"}, 3)
	v := cl.change(ringdtest.Upsert(cl.node("redis-0", 1, "")), ringdtest.Upsert(cl.node("redis-1", 1, "")),
		ringdtest.Upsert(cl.node("redis-2", 1, "")))
	cl.check(v)

	probes := make([]string, 100)
	for i := range probes {
		probes[i] = fmt.Sprintf("probe:%d", i)
	}
	probe := ""
	for i, owner := range cl.ring.Lookup(v, probes) {
		if owner == "redis-1" {
			probe = probes[i]
			break
		}
	}
	if probe == "" {
		t.Fatal("no probe key of redis-1 among 100")
	}
	cl.redis["redis-1"].Stop()
	cl.down["redis-1"] = true
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for cl.shard.Ring().Set(ctx, probe, "x", 0).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("go-redis did not route around the stopped redis-1 within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cl.check(v)
	v = cl.change(ringdtest.Upsert(cl.node("redis-0", 2, "")))
	cl.check(v)
}
