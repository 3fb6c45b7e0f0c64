package ringd

import (
	"testing"
	"time"
)

// TestKeepsRoutingOnADeletedRingUntilItIsRecreated deletes the ring under
// a stream: the client says so and keeps its last version; the ring
// created again arrives as a reset, which replaces it.
func TestKeepsRoutingOnADeletedRingUntilItIsRecreated(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	a.change(upsert("a", 1))
	a.change(upsert("b", 1))
	c, err := NewClient([]string{s.URL}, "r", fast("deleted")...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := waitVersion(t, c, 3)
	fp3 := st.Fingerprint
	a.do("DELETE", "", nil, 204)
	waitFor(t, "the client to see the deletion", 10*time.Second, func() bool { return c.Status().Deleted })
	if st := c.Status(); st.Version != 3 || st.Fingerprint != fp3 {
		t.Fatalf("status %+v", st)
	}
	if o, ok := c.OwnerString("k"); !ok || (o != "a" && o != "b") {
		t.Fatalf("owner %q after the deletion", o)
	}
	// Created again: version 1 of a new history, one node.
	a.create(map[string]any{})
	a.change(upsert("z", 1))
	waitFor(t, "the new ring", 10*time.Second, func() bool {
		st := c.Status()
		return st.Version == 2 && !st.Deleted
	})
	if o, _ := c.OwnerString("k"); o != "z" {
		t.Fatalf("owner %q on the new ring", o)
	}
	if st := c.Status(); st.Refused != 0 {
		t.Fatalf("status %+v", st)
	}
}
