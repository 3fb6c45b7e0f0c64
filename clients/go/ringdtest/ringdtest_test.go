package ringdtest_test

import (
	"net"
	"testing"

	"github.com/ringd/ringd/clients/go/ringdtest"
)

// The helpers against a real ringd: create, change, and a batch lookup
// that names only nodes the ring has.
func TestServerRingLookup(t *testing.T) {
	s := ringdtest.Start(t)
	r := s.Ring("t")
	if v := r.Create(map[string]any{"algorithm": "ring"}); v != 1 {
		t.Fatalf("created at version %d", v)
	}
	v := r.Change(ringdtest.Upsert(ringdtest.Node{ID: "a", Address: "127.0.0.1:1", Weight: 1}),
		ringdtest.Upsert(ringdtest.Node{ID: "b", Weight: 2}))
	keys := make([]string, ringdtest.MaxLookupKeys+5)
	for i := range keys {
		keys[i] = "k" + string(rune('a'+i%26))
	}
	owners := r.Lookup(v, keys)
	if len(owners) != len(keys) {
		t.Fatalf("%d owners for %d keys", len(owners), len(keys))
	}
	for i, o := range owners {
		if o != "a" && o != "b" {
			t.Fatalf("owner of %s is %q", keys[i], o)
		}
	}
	if got := r.Lookup(1, keys[:1]); got[0] != "" {
		t.Fatalf("owner in the empty version 1: %q", got[0])
	}
}

// A daemon listens on its port until the test ends.
func TestDaemon(t *testing.T) {
	for _, start := range []func(testing.TB) *ringdtest.Daemon{ringdtest.Redis, ringdtest.Memcached} {
		d := start(t)
		c, err := net.Dial("tcp", d.Addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
}
