package ringd

import (
	"errors"
	"math"
	"testing"

	"github.com/ringd/ringd/clients/go/placement"
)

func TestBoundIsTheCeilingOfFactorTimesAverage(t *testing.T) {
	b, _ := NewBoundedLoad(1.25)
	one, _ := NewBoundedLoad(1)
	for _, c := range []struct {
		b        BoundedLoad
		inFlight uint64
		nodes    int
		want     uint64
	}{{b, 99, 10, 13}, {b, 0, 4, 1}, {one, 7, 8, 1}, {b, 5, 0, 0}, {b, math.MaxUint64, 1, math.MaxUint64}} {
		if got := c.b.Bound(c.inFlight, c.nodes); got != c.want {
			t.Errorf("Bound(%d, %d) at %v = %d, want %d", c.inFlight, c.nodes, c.b.Factor(), got, c.want)
		}
	}
	for _, f := range []float64{0.99, -1, math.NaN(), math.Inf(1)} {
		if _, err := NewBoundedLoad(f); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("factor %v: %v", f, err)
		}
	}
}

// TestPickSkipsLoadedNodesInPreferenceOrder loads a key's owner to the
// bound: the pick is the next node of its preference list that is under.
func TestPickSkipsLoadedNodesInPreferenceOrder(t *testing.T) {
	var nodes []placement.Node
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		nodes = append(nodes, placement.NewNode(id))
	}
	p, err := placement.Build(placement.DefaultConfig(placement.Ring), nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("hot")
	pref := p.PreferenceList(key, 6)
	b, _ := NewBoundedLoad(1.25)
	idle := func(string) uint64 { return 0 }
	if got, _ := b.Pick(p, key, idle); got != pref[0] {
		t.Fatalf("idle: %s, want the owner %s", got, pref[0])
	}
	// 12 in flight, all on the first two: bound ceil(1.25 × 13 / 6) = 3.
	busy := func(n string) uint64 {
		if n == pref[0] || n == pref[1] {
			return 6
		}
		return 0
	}
	if got, _ := b.Pick(p, key, busy); got != pref[2] {
		t.Fatalf("busy: %s, want %s (list %v)", got, pref[2], pref)
	}
}
