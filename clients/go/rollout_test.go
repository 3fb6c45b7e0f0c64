package ringd

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestRolloutIsGatedOnAGoClientsAcks runs two rollouts with `gate: 1`
// against a Go client. While it follows and acks, the first walks its
// ramp to the end, and the client acks every step's version. Once it has
// stopped (its last ack still live), the second rollout commits its first
// step and waits, naming the client as lagging; a client started again
// under the same id applies the step and acks it, and the rollout goes on
// to the end.
func TestRolloutIsGatedOnAGoClientsAcks(t *testing.T) {
	s := startServer(t)
	a := api{t: t, base: s.URL, ring: "r"}
	a.create(map[string]any{"algorithm": "ring"})
	v := a.change(upsert("a", 1), upsert("b", 1), upsert("c", 1))

	const id = "go-gated"
	acked := map[uint64]bool{}
	ackedCh := make(chan uint64, 64)
	follow := func() *Client {
		opts := append(fast(id), WithObserver(func(e Event) {
			if e.Kind == EventAcked && e.Err == nil {
				ackedCh <- e.Version
			}
		}))
		c, err := NewClient([]string{s.URL}, "r", opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := follow()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(st Status) bool { return st.Acked == v }); err != nil {
		t.Fatal(err)
	}

	// 1. Followed and acked: the rollout runs to the end, each step's
	// version acked by the client before the next was committed.
	first := startRollout(a, upsert("d", 1))
	done := rolloutWhen(t, a, first, func(r map[string]any) bool { return r["state"] == "done" })
	steps := stepVersions(t, done)
	if want := []uint64{v + 1, v + 2, v + 3}; !slices.Equal(steps, want) {
		t.Fatalf("steps committed versions %v, want %v", steps, want)
	}
	last := steps[len(steps)-1]
	if _, err := c.WaitFor(ctx, func(st Status) bool { return st.Acked == last }); err != nil {
		t.Fatal(err)
	}
	for len(ackedCh) > 0 {
		acked[<-ackedCh] = true
	}
	for _, sv := range steps {
		if !acked[sv] {
			t.Fatalf("the client never acked step version %d (acked %v)", sv, acked)
		}
	}
	checkClientEntry(t, a, id, last, c.Status().Fingerprint)

	// 2. The client stops; its ack stays live, so the next rollout's
	// first step waits for it.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	second := startRollout(a, upsert("e", 1))
	waiting := rolloutWhen(t, a, second, func(r map[string]any) bool {
		return r["state"] == "waiting_for_gate" && r["step"] == 1.0
	})
	stepOne := stepVersions(t, waiting)[0]
	if stepOne != last+1 {
		t.Fatalf("second rollout's first step is version %d, want %d", stepOne, last+1)
	}
	time.Sleep(1500 * time.Millisecond)
	still := a.do("GET", fmt.Sprintf("/rollouts/%d", second), nil, 200)
	gate, _ := still["gate"].(map[string]any)
	if still["state"] != "waiting_for_gate" || still["step"] != 1.0 || gate == nil ||
		fmt.Sprint(gate["lagging"]) != "["+id+"]" || gate["version"] != float64(stepOne) ||
		gate["live"] != 1.0 || gate["acked"] != 0.0 {
		t.Fatalf("with the client stopped the rollout should wait for it: %v", still)
	}
	checkClientEntry(t, a, id, last, "")

	// 3. The client is back under the same id: it applies and acks each
	// step, and the rollout finishes.
	c = follow()
	defer c.Close()
	done = rolloutWhen(t, a, second, func(r map[string]any) bool { return r["state"] == "done" })
	steps = stepVersions(t, done)
	last = steps[len(steps)-1]
	if steps[0] != stepOne || last != stepOne+2 {
		t.Fatalf("second rollout's steps %v, want %d to %d", steps, stepOne, stepOne+2)
	}
	if _, err := c.WaitFor(ctx, func(st Status) bool { return st.Acked == last }); err != nil {
		t.Fatal(err)
	}
	checkClientEntry(t, a, id, last, c.Status().Fingerprint)
	if got := a.do("GET", "", nil, 200)["version"]; got != float64(last) {
		t.Fatalf("ring at version %v after the rollout, want %d", got, last)
	}
}

// startRollout starts a three-step rollout of ops gated on every live
// client; it returns the rollout's id.
func startRollout(a api, ops ...map[string]any) uint64 {
	r := a.do("POST", "/rollouts", map[string]any{
		"ops":    ops,
		"policy": map[string]any{"steps": 3, "gate": 1, "gate_timeout": "5m"},
	}, 201)
	return uint64(r["id"].(float64))
}

// rolloutWhen reads rollout id until cond holds.
func rolloutWhen(t *testing.T, a api, id uint64, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	var r map[string]any
	waitFor(t, fmt.Sprintf("rollout %d", id), 30*time.Second, func() bool {
		r = a.do("GET", fmt.Sprintf("/rollouts/%d", id), nil, 200)
		return cond(r)
	})
	return r
}

// stepVersions are the versions the rollout's committed steps made.
func stepVersions(t *testing.T, r map[string]any) []uint64 {
	t.Helper()
	var out []uint64
	for _, s := range r["plan"].([]any) {
		if v, ok := s.(map[string]any)["version"].(float64); ok {
			out = append(out, uint64(v))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no committed step in %v", r)
	}
	return out
}

// checkClientEntry checks GET …/clients: id is the one client, at version
// v (with fingerprint fp, unless empty).
func checkClientEntry(t *testing.T, a api, id string, v uint64, fp string) {
	t.Helper()
	clients := a.do("GET", "/clients", nil, 200)["clients"].([]any)
	if len(clients) != 1 {
		t.Fatalf("clients %v, want only %s", clients, id)
	}
	got := clients[0].(map[string]any)
	if got["client_id"] != id || got["version"] != float64(v) || got["divergent"] != false ||
		(fp != "" && got["fingerprint"] != fp) {
		t.Fatalf("client entry %v, want %s at version %d", got, id, v)
	}
}
