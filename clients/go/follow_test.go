package ringd

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// keys are the keys every check places on the client and on the server.
var keys = func() []string {
	k := make([]string, 40)
	for i := range k {
		k[i] = fmt.Sprintf("user:%d", i)
	}
	return k
}()

// assertRoutesLikeServer compares the client's owner of every key with
// the server's lookup at version v, and its handoff with version before.
func assertRoutesLikeServer(t *testing.T, a api, c *Client, v, before uint64) {
	t.Helper()
	for _, k := range keys {
		got, ok := c.OwnerString(k)
		want := a.lookup(k, v)
		if !ok || got != want {
			t.Fatalf("v%d: owner of %s is %q (%v), server says %q", v, k, got, ok, want)
		}
		h := c.Handoff([]byte(k))
		if h.Version != v || h.OwnerNow != want || h.VersionBefore != before {
			t.Fatalf("v%d: handoff %+v", v, h)
		}
		if before > 0 {
			if wantBefore := a.lookup(k, before); h.OwnerBefore != wantBefore {
				t.Fatalf("v%d: owner before of %s is %q, server says %q", v, k, h.OwnerBefore, wantBefore)
			}
		}
	}
}

// TestFollowsATableRingThroughTwentyChanges follows a table ring over its
// stream through 20 changes: node additions, weight changes, removals and
// a change of partitions. A version is built from the previous one and
// its moves exactly when the server sends moves, else from the
// downloaded table, and every version routes as the server looks up.
func TestFollowsATableRingThroughTwentyChanges(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "t"}
	a.create(map[string]any{"algorithm": "table", "partitions": 4096})
	for _, id := range []string{"a", "b", "c", "d"} {
		a.change(upsert(id, 1))
	}
	var events []Event
	eventsCh := make(chan Event, 256)
	c, err := NewClient([]string{s.URL}, "t", append(fast("follow"), WithWatchMode(WatchSSE),
		WithObserver(func(e Event) { eventsCh <- e }))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	st := waitVersion(t, c, 5)
	// Nothing held yet: the table is downloaded.
	if st.TableDownloads != 1 || st.TableMovesApplied != 0 || st.Transport != SSE || st.Server != s.URL {
		t.Fatalf("status %+v", st)
	}
	assertRoutesLikeServer(t, a, c, 5, 0)

	changes := [][]map[string]any{
		{upsert("e", 1)}, {upsert("b", 3)}, {upsert("f", 2)}, {remove("a")},
		{upsert("g", 1)}, {upsert("c", 2)}, {upsert("h", 1)}, {upsert("i", 1)},
		{{"op": "update_config", "config": map[string]any{"partitions": 1024}}},
		{upsert("j", 1)}, {remove("e")}, {upsert("k", 4)}, {upsert("d", 2)},
		{upsert("l", 1)}, {remove("f")}, {upsert("m", 1)}, {upsert("n", 1), upsert("o", 1)},
		{upsert("b", 1)}, {remove("g")}, {upsert("p", 2)},
	}
	moves, downloads := uint64(0), uint64(1)
	for i, ops := range changes {
		v := a.change(ops...)
		if v != uint64(6+i) {
			t.Fatalf("change %d made version %d", i, v)
		}
		// What the server sent decides how the client must build it.
		if snap := a.do("GET", fmt.Sprintf("/snapshots/%d", v), nil, 200); snap["table_moves"] != nil {
			moves++
		} else {
			downloads++
		}
		st := waitVersion(t, c, v)
		if st.TableMovesApplied != moves || st.TableDownloads != downloads || st.Refused != 0 {
			t.Fatalf("v%d: moves %d downloads %d refused %d, want %d %d 0 (%v)", v, st.TableMovesApplied, st.TableDownloads, st.Refused, moves, downloads, st.LastError)
		}
		assertRoutesLikeServer(t, a, c, v, v-1)
	}
	// The partitions change cannot be reached by moves; most others are.
	if moves < 15 || downloads < 2 {
		t.Fatalf("moves %d, downloads %d", moves, downloads)
	}
	st = c.Status()
	if st.Applied != 21 || st.Version != 25 || st.LastError != nil {
		t.Fatalf("status %+v", st)
	}
	// The observer saw every version applied, in order.
	c.Close() // the observer is called no more once Close returns
	close(eventsCh)
	for e := range eventsCh {
		if e.Kind == EventApplied {
			events = append(events, e)
		}
	}
	if len(events) != 21 {
		t.Fatalf("%d applied events", len(events))
	}
	for i, e := range events {
		if e.Version != uint64(5+i) || (i > 0 && e.From != uint64(4+i)) {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
}
