package goredisring

import (
	"fmt"
	"testing"

	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/placement"
)

// set is a version of a rendezvous ring over ids, each at an address.
func set(t *testing.T, version uint64, ids ...string) *shardSet {
	t.Helper()
	var nodes []placement.Node
	addrs := map[string]string{}
	for _, id := range ids {
		n := placement.NewNode(id)
		n.Address = id + ":6379"
		nodes = append(nodes, n)
		addrs[id] = n.Address
	}
	p, err := placement.Build(placement.DefaultConfig(placement.Rendezvous), nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := &placement.Snapshot{Version: version, Nodes: nodes}
	return &shardSet{view: &ringd.View{Snapshot: snap, Placement: p}, addrs: addrs}
}

// The hash go-redis builds while SetAddrs installs a version: the new
// version's when the shards are all its nodes, the old one's when a
// shard is a node only the old version has (a heartbeat rebuild over the
// old shards), and never a name outside the shards it was given.
func TestNewHashPicksTheVersionOfTheShards(t *testing.T) {
	old, next := set(t, 1, "a", "b", "c"), set(t, 2, "a", "b", "d")
	s := &Sharding{}
	s.install.Store(&installing{pending: next, installed: old})
	if h := s.newHash([]string{"a", "b", "d"}).(*hash); h.p != next.view.Placement {
		t.Fatal("SetAddrs(2) got a hash of another version")
	}
	if h := s.newHash([]string{"a", "b", "c"}).(*hash); h.p != old.view.Placement {
		t.Fatal("a heartbeat over version 1's shards got a hash of another version")
	}
	s.install.Store(&installing{installed: next})
	h := s.newHash([]string{"a", "d"}) // b found down
	for i := 0; i < 2000; i++ {
		key := fmt.Sprintf("k%d", i)
		got := h.Get(key)
		owner, _ := next.view.Placement.OwnerString(key)
		switch {
		case owner != "b" && got != owner:
			t.Fatalf("%s: %q, owner %s", key, got, owner)
		case owner == "b" && got != next.view.Placement.PreferenceList([]byte(key), 2)[1]:
			t.Fatalf("%s of the down b: %q, preference %v", key, got, next.view.Placement.PreferenceList([]byte(key), 3))
		}
	}
	if got := s.newHash(nil).Get("k1"); got != "" {
		t.Fatalf("no live shard: %q", got)
	}
	empty := &Sharding{} // New before the client's first version
	empty.install.Store(&installing{pending: &shardSet{addrs: map[string]string{}}})
	if got := empty.newHash(nil).Get("k1"); got != "" {
		t.Fatalf("no version: %q", got)
	}
}
