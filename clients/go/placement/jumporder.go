package placement

import (
	"slices"
	"strings"
)

// NextBucketOrder is the jump bucket order after a change of the node set
// (5.4.3), derived from the previous order; NextBucketOrder(nil, nodes) is
// the initial order. Clients take orders from snapshots; this is what the
// server does, for tools and tests. nodes may include draining and joining
// nodes (they want no bucket).
//
// It works on runs, as the reference does: pass 1 keeps the first
// min(run length, want − held) buckets of each run and turns the rest into
// holes; pass 2 merges the hole runs, in ascending order, with each active
// node's missing buckets, in id order, then appends what is left; trailing
// holes are trimmed.
func NextBucketOrder(previous []BucketRun, nodes []Node) []BucketRun {
	active := make([]Node, 0, len(nodes))
	for _, n := range nodes {
		if n.State == Active {
			active = append(active, n)
		}
	}
	slices.SortFunc(active, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
	want := make(map[string]int, len(active))
	for _, n := range active {
		want[n.ID] = n.Weight
	}
	held := make(map[string]int, len(active))
	var order []BucketRun
	push := func(id string, count int) {
		if count <= 0 {
			return
		}
		if k := len(order) - 1; k >= 0 && order[k].ID == id {
			order[k].Count += count
			return
		}
		order = append(order, BucketRun{id, count})
	}
	// Pass 1: keep each node's lowest-numbered buckets.
	for _, r := range previous {
		keep := 0
		if r.ID != "" {
			keep = max(0, min(r.Count, want[r.ID]-held[r.ID]))
			held[r.ID] += keep
		}
		push(r.ID, keep)
		push("", r.Count-keep)
	}
	// Pass 2: hand out missing buckets, lowest hole first, then append.
	var missing []BucketRun
	for _, n := range active {
		if m := n.Weight - held[n.ID]; m > 0 {
			missing = append(missing, BucketRun{n.ID, m})
		}
	}
	var next []BucketRun
	order, next = next, order
	for _, r := range next {
		for r.ID == "" && r.Count > 0 && len(missing) > 0 {
			take := min(r.Count, missing[0].Count)
			push(missing[0].ID, take)
			r.Count -= take
			if missing[0].Count -= take; missing[0].Count == 0 {
				missing = missing[1:]
			}
		}
		push(r.ID, r.Count)
	}
	for _, m := range missing {
		push(m.ID, m.Count)
	}
	for len(order) > 0 && order[len(order)-1].ID == "" {
		order = order[:len(order)-1]
	}
	return order
}
