package memcacheselector_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/memcacheselector"
	"github.com/ringd/ringd/clients/go/ringdtest"
)

const nKeys = 20_000

// cluster is ringd, a ring, the memcacheds its nodes name, and a
// gomemcache client whose selector follows the ring.
type cluster struct {
	t       *testing.T
	ring    *ringdtest.Ring
	servers map[string]*ringdtest.Daemon // node id → its memcached
	client  *ringd.Client
	sel     *memcacheselector.Selector
	mc      *memcache.Client
}

func newCluster(t *testing.T, config map[string]any, n int) *cluster {
	s := ringdtest.Start(t)
	cl := &cluster{t: t, ring: s.Ring("cache"), servers: map[string]*ringdtest.Daemon{}}
	cl.ring.Create(config)
	for i := 0; i < n; i++ {
		cl.servers[fmt.Sprintf("mc-%d", i)] = ringdtest.Memcached(t)
	}
	c, err := ringd.NewClient([]string{s.URL}, "cache", ringd.WithClientID("memcacheselector-test"),
		ringd.WithBackoff(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	cl.client, cl.sel = c, memcacheselector.New(c)
	cl.mc = memcache.NewFromSelector(cl.sel)
	cl.mc.MaxIdleConns = 8
	cl.mc.Timeout = 2 * time.Second
	t.Cleanup(func() { _ = cl.mc.Close() })
	return cl
}

func (cl *cluster) node(id string, weight int, state string) ringdtest.Node {
	return ringdtest.Node{ID: id, Address: cl.servers[id].Addr, Weight: weight, State: state}
}

// change applies ops and waits until the selector answers from the new
// version.
func (cl *cluster) change(ops ...ringdtest.Op) uint64 {
	cl.t.Helper()
	v := cl.ring.Change(ops...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cl.client.WaitForVersion(ctx, v); err != nil {
		cl.t.Fatal(err)
	}
	if got := cl.sel.Version(); got != v {
		cl.t.Fatalf("the selector answers from version %d, want %d", got, v)
	}
	return v
}

// check writes version v's keys through gomemcache (eight at a time),
// gets every key from each memcached alone, and requires each key on the
// server of ringd's owner (POST …/lookup at v) and on no other; keys of
// an owner without an address must fail with ErrNoAddress and be nowhere.
func (cl *cluster) check(v uint64) {
	t := cl.t
	t.Helper()
	keys := make([]string, nKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("v%d:user:%d", v, i)
	}
	owners := cl.ring.Lookup(v, keys)
	var wg sync.WaitGroup
	errs := make([]error, len(keys))
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(keys); i += 8 {
				errs[i] = cl.mc.Set(&memcache.Item{Key: keys[i], Value: []byte(keys[i])})
			}
		}(w)
	}
	wg.Wait()
	where := map[string]string{} // key → address of the memcached holding it
	for id, d := range cl.servers {
		one := memcache.New(d.Addr)
		for start := 0; start < len(keys); start += 1000 {
			got, err := one.GetMulti(keys[start:min(start+1000, len(keys))])
			if err != nil {
				t.Fatalf("get on %s (%s): %v", id, d.Addr, err)
			}
			for k, it := range got {
				if other, dup := where[k]; dup {
					t.Fatalf("version %d: %s is on %s and on %s", v, k, other, d.Addr)
				}
				if string(it.Value) != k {
					t.Fatalf("version %d: %s on %s holds %q", v, k, d.Addr, it.Value)
				}
				where[k] = d.Addr
			}
		}
		_ = one.Close()
	}
	unroutable := 0
	for i, k := range keys {
		owner, _ := cl.ring.Node(owners[i])
		want := owner.Address
		if want == "" {
			unroutable++
			var nae *memcacheselector.NodeAddressError
			if !errors.Is(errs[i], memcacheselector.ErrNoAddress) || !errors.As(errs[i], &nae) ||
				nae.Node != owners[i] || nae.Version != v {
				t.Fatalf("version %d: writing %s, owned by %s without an address: %v", v, k, owners[i], errs[i])
			}
		} else if errs[i] != nil {
			t.Fatalf("version %d: writing %s: %v", v, k, errs[i])
		}
		if where[k] != want {
			t.Fatalf("version %d: %s is on %q; ringd's owner %s is at %q", v, k, where[k], owners[i], want)
		}
	}
	if len(where) != len(keys)-unroutable {
		t.Fatalf("version %d: the servers hold %d keys, %d were written", v, len(where), len(keys)-unroutable)
	}
}

// TestPicksRingdsOwner writes 20,000 keys through gomemcache over four
// memcacheds of a ketama ring and finds each on ringd's owner, at the
// first version and after each change: nodes added, re-weighted,
// drained, removed, and a node without an address (its keys refused
// with a NodeAddressError, written nowhere).
func TestPicksRingdsOwner(t *testing.T) {
	cl := newCluster(t, map[string]any{"algorithm": "ketama", "hash": "md5"}, 4)
	steps := []struct {
		what string
		ops  func() []ringdtest.Op
	}{
		{"two nodes", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Upsert(cl.node("mc-0", 1, "")), ringdtest.Upsert(cl.node("mc-1", 1, ""))}
		}},
		{"add mc-2 at weight 2", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("mc-2", 2, ""))} }},
		{"add mc-3", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("mc-3", 1, ""))} }},
		{"drain mc-0", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("mc-0", 1, "draining"))} }},
		{"re-weight mc-1 to 5", func() []ringdtest.Op { return []ringdtest.Op{ringdtest.Upsert(cl.node("mc-1", 5, ""))} }},
		{"remove mc-0, a node without an address", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Remove("mc-0"), ringdtest.Upsert(ringdtest.Node{ID: "nowhere", Weight: 2})}
		}},
		{"mc-0 back at weight 3, the node without an address gone", func() []ringdtest.Op {
			return []ringdtest.Op{ringdtest.Upsert(cl.node("mc-0", 3, "")), ringdtest.Remove("nowhere")}
		}},
	}
	for _, step := range steps {
		v := cl.change(step.ops()...)
		t.Logf("version %d: %s", v, step.what)
		cl.check(v)
		_, nowhere := cl.ring.Node("nowhere")
		if bad := cl.sel.Unroutable(); nowhere != (len(bad) == 1 && bad[0].Node == "nowhere") || !nowhere && len(bad) > 0 {
			t.Fatalf("version %d: unroutable %v", v, bad)
		}
	}
	n := 0
	if err := cl.sel.Each(func(net.Addr) error { n++; return nil }); err != nil || n != 4 {
		t.Fatalf("Each: %d servers, %v", n, err)
	}
}
