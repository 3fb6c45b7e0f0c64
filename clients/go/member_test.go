package ringd

import (
	"context"
	"errors"
	"testing"
	"time"
)

// nodes is the ring's nodes by id, as GET …/nodes lists them.
func (a api) nodes() map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, n := range a.do("GET", "/nodes", nil, 200)["nodes"].([]any) {
		n := n.(map[string]any)
		out[n["id"].(string)] = n
	}
	return out
}

func waitMember(t *testing.T, m *Member, what string, done func(MemberStatus) bool) MemberStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	st, err := m.WaitFor(ctx, done)
	if err != nil {
		t.Fatalf("waiting for %s: %v (status %+v)", what, err, st)
	}
	return st
}

// TestMemberRegistersRenewsRecoversAndLeaves registers a node with a 1 s
// lease, sees it renewed, releases its lease behind its back (it
// registers again under a new lease), then leaves: the node is gone from
// the ring, as a Client following it sees.
func TestMemberRegistersRenewsRecoversAndLeaves(t *testing.T) {
	s := startServer(t, "--admin-token", "adm")
	a := api{t: t, base: s.URL, ring: "r", token: "adm"}
	a.create(map[string]any{})
	c, err := NewClient([]string{s.URL}, "r", append(fast("member-watcher"), WithToken("adm"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := NewMember(context.Background(), []string{s.URL}, "r",
		NodeRecord{ID: "cache-7", Address: "10.0.0.7:11211", Weight: 2, Labels: map[string]string{"team": "x"}},
		WithToken("adm"), WithLeaseTTL(time.Second), WithBackoff(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	st := waitMember(t, m, "registered", func(s MemberStatus) bool { return s.State.HoldsLease() })
	if st.Version != 2 || len(st.LeaseID) != 32 || st.Server != s.URL || st.Losses != 0 {
		t.Fatalf("status %+v", st)
	}
	n := a.nodes()["cache-7"]
	if n["health"] != "healthy" || n["address"] != "10.0.0.7:11211" || n["weight"] != 2.0 {
		t.Fatalf("node %v", n)
	}
	waitVersion(t, c, 2)
	if o, _ := c.OwnerString("k"); o != "cache-7" {
		t.Fatalf("owner %q", o)
	}
	first := st.LeaseID
	st = waitMember(t, m, "two renewals", func(s MemberStatus) bool { return s.State == MemberRenewing && s.Heartbeats >= 3 })
	if st.LeaseID != first {
		t.Fatalf("a renewal changed the lease: %+v", st)
	}

	// Released behind its back: the next renewal is refused with
	// lease-not-found and it registers again, under a new lease id.
	a.do("DELETE", "/nodes/cache-7/lease/"+first, nil, 200)
	st = waitMember(t, m, "a new lease", func(s MemberStatus) bool { return s.Losses == 1 && s.State.HoldsLease() })
	if st.LeaseID == first || st.LastError != nil {
		t.Fatalf("status %+v", st)
	}
	if n := a.nodes()["cache-7"]; n["health"] != "healthy" {
		t.Fatalf("node %v", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if st := m.Status(); st.State != MemberLeft {
		t.Fatalf("status %+v", st)
	}
	if _, ok := a.nodes()["cache-7"]; ok {
		t.Fatal("the node is still in the ring after Leave")
	}
	waitFor(t, "the client to see the node leave", 10*time.Second, func() bool {
		_, ok := c.OwnerString("k")
		return !ok
	})
}

// TestMemberReleasesWhenItsContextEnds cancels a member's context: it
// releases its lease and stops.
func TestMemberReleasesWhenItsContextEnds(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{})
	ctx, cancel := context.WithCancel(context.Background())
	m, err := NewMember(ctx, []string{s.URL}, "r", NodeRecord{ID: "n1"}, WithLeaseTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	waitMember(t, m, "registered", func(s MemberStatus) bool { return s.State == MemberRegistered })
	if _, ok := a.nodes()["n1"]; !ok {
		t.Fatal("not registered")
	}
	cancel()
	select {
	case <-m.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the member did not stop")
	}
	if _, ok := a.nodes()["n1"]; ok || m.Status().State != MemberLeft {
		t.Fatalf("after cancel: node still there (%v) or state %v", ok, m.Status().State)
	}
}

// TestMemberStopsOnARefusal registers with the read token: ringd answers
// 403, which no retry can change, so the member fails with ErrForbidden.
func TestMemberStopsOnARefusal(t *testing.T) {
	s := startServer(t, "--admin-token", "adm", "--read-token", "rd")
	a := api{t: t, base: s.URL, ring: "r", token: "adm"}
	a.create(map[string]any{})
	m, err := NewMember(context.Background(), []string{s.URL}, "r", NodeRecord{ID: "n1"}, WithToken("rd"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := m.WaitFor(ctx, func(s MemberStatus) bool { return s.State == MemberFailed })
	var api *APIError
	if err != nil || !errors.Is(st.LastError, ErrForbidden) || !errors.As(st.LastError, &api) || api.Status != 403 {
		t.Fatalf("status %+v, %v", st, err)
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMember(ctx, []string{s.URL}, "r", NodeRecord{ID: "n1"}, WithLeaseTTL(500*time.Millisecond)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("a 500ms TTL: %v", err)
	}
}
