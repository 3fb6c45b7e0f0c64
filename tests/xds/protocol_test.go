package xds

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	listenerpb "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	discoverypb "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/ringd/ringd/clients/go/ringdtest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fingerprint is the ring's current fingerprint.
func fingerprint(t *testing.T, r *ringdtest.Ring) string {
	t.Helper()
	var out struct{ Fingerprint string }
	r.Do("GET", "", nil, &out, http.StatusOK)
	return out.Fingerprint
}

// rollout reads rollout id.
func rollout(r *ringdtest.Ring, id uint64) map[string]any {
	var out map[string]any
	r.Do("GET", fmt.Sprintf("/rollouts/%d", id), nil, &out, http.StatusOK)
	return out
}

// TestANackIsAFailureAndHoldsARollout: a proxy that refuses a rollout's
// first step (a NACK, with its own error detail) shows in GET …/clients
// at the version it still runs, with the refused version as its failure,
// and the rollout, gated on every client, waits for it; once it takes the
// step, the rollout goes on and the failure is gone.
func TestANackIsAFailureAndHoldsARollout(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	r := s.Ring("cache")
	r.Create(map[string]any{"algorithm": "envoy_ring_hash"})
	v := r.Change(
		ringdtest.Upsert(ringdtest.Node{ID: "a", Address: "127.0.0.1:1001"}),
		ringdtest.Upsert(ringdtest.Node{ID: "b", Address: "127.0.0.1:1002"}),
	)
	proxy := openADS(t, s.XDS, "proxy-1", "")
	proxy.send(endpointsType, []string{"cache"}, "", "", "")
	first := proxy.must(endpointsType)
	if want := fmt.Sprintf("cache:%d/%s", v, fingerprint(t, r)); first.VersionInfo != want {
		t.Fatalf("version_info %q, want %q", first.VersionInfo, want)
	}
	proxy.send(endpointsType, []string{"cache"}, first.VersionInfo, first.Nonce, "")
	waitAck(t, r, "proxy-1", v)

	var started struct{ ID uint64 }
	r.Do("POST", "/rollouts", map[string]any{
		"ops":    []ringdtest.Op{ringdtest.Upsert(ringdtest.Node{ID: "c", Address: "127.0.0.1:1003", Weight: 4})},
		"policy": map[string]any{"steps": 2, "gate": 1, "gate_timeout": "5m"},
	}, &started, http.StatusCreated)
	step := proxy.must(endpointsType)
	const refusal = "envoy.config.endpoint.v3.ClusterLoadAssignment rejected: refused for the test"
	proxy.send(endpointsType, []string{"cache"}, first.VersionInfo, step.Nonce, refusal)
	failed := waitFor(t, r, "proxy-1", "reported a failure", func(c client) bool { return c.Failure != nil })
	if failed.Version != v || failed.Failure.Version != v+1 || failed.Failure.Error != refusal {
		t.Fatalf("after the NACK: %+v, want version %d with failure %d %q", failed, v, v+1, refusal)
	}
	time.Sleep(time.Second)
	if got := rollout(r, started.ID); got["state"] != "waiting_for_gate" {
		t.Fatalf("the rollout did not wait for the refusing proxy: %v", got)
	}

	// The proxy takes the step after all, and every step after it.
	proxy.send(endpointsType, []string{"cache"}, step.VersionInfo, step.Nonce, "")
	last := step
	for deadline := time.Now().Add(30 * time.Second); rollout(r, started.ID)["state"] != "done"; {
		if time.Now().After(deadline) {
			t.Fatalf("the rollout never finished: %v", rollout(r, started.ID))
		}
		if next, err := proxy.recvWithin(200 * time.Millisecond); err == nil && next != nil {
			proxy.send(endpointsType, []string{"cache"}, next.VersionInfo, next.Nonce, "")
			last = next
		}
	}
	done := waitFor(t, r, "proxy-1", "acked the rollout's last step", func(c client) bool { return c.Version == v+2 })
	if done.Failure != nil || !strings.HasPrefix(last.VersionInfo, fmt.Sprintf("cache:%d/", v+2)) {
		t.Fatalf("after the rollout: %+v, last response %q", done, last.VersionInfo)
	}
}

// TestStreamsNeedTheReadToken: with tokens set, a stream without one, or
// with a wrong one, is refused as unauthenticated; the read token serves.
func TestStreamsNeedTheReadToken(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0", "--read-token", "reader", "--admin-token", "admin")
	for token, want := range map[string]string{
		"":      "reads need `Authorization: Bearer <token>`",
		"wrong": "the bearer token is not valid",
	} {
		ads := openADS(t, s.XDS, "proxy-1", token)
		ads.send(listenerType, nil, "", "", "")
		_, err := ads.recv()
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(status.Convert(err).Message(), want) {
			t.Fatalf("token %q: %v, want Unauthenticated saying %q", token, err, want)
		}
	}
	for _, token := range []string{"reader", "admin"} {
		ads := openADS(t, s.XDS, "proxy-1", token)
		ads.send(listenerType, nil, "", "", "")
		if got := ads.must(listenerType); len(got.Resources) != 0 {
			t.Fatalf("listeners of no ring: %v", got.Resources)
		}
	}
}

// TestAStreamMustNameItsNode: the node id is the client id acks are
// recorded under, so a stream without one is refused, saying so.
func TestAStreamMustNameItsNode(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	for node, want := range map[string]string{
		"":         "set `node.id` in the bootstrap",
		"pod~10.1": "node.id: ",
	} {
		ads := openADS(t, s.XDS, node, "")
		if node == "" {
			ads.node = nil
		}
		ads.send(listenerType, nil, "", "", "")
		_, err := ads.recv()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), want) {
			t.Fatalf("node %q: %v, want InvalidArgument saying %q", node, err, want)
		}
	}
}

// TestIncrementalIsRefused: ringd speaks state of the world only, and a
// delta stream is told so.
func TestIncrementalIsRefused(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	delta, err := discoverypb.NewAggregatedDiscoveryServiceClient(connOf(t, s.XDS)).DeltaAggregatedResources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = delta.Recv()
	if status.Code(err) != codes.Unimplemented || !strings.Contains(status.Convert(err).Message(), "DELTA_GRPC") {
		t.Fatalf("delta stream: %v, want Unimplemented naming DELTA_GRPC", err)
	}
}

// TestListenersFollowTheRings: a wildcard LDS subscription lists every
// envoy_ring_hash ring, no other, and is sent again when one is created
// or deleted.
func TestListenersFollowTheRings(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	s.Ring("a").Create(map[string]any{"algorithm": "envoy_ring_hash"})
	s.Ring("b").Create(map[string]any{"algorithm": "envoy_ring_hash"})
	s.Ring("c").Create(map[string]any{"algorithm": "ring"})
	ads := openADS(t, s.XDS, "proxy-1", "")
	ads.send(listenerType, nil, "", "", "")
	names := func(r *discoverypb.DiscoveryResponse) []string {
		var out []string
		for _, any := range r.Resources {
			var l listenerpb.Listener
			if err := any.UnmarshalTo(&l); err != nil {
				t.Fatal(err)
			}
			out = append(out, l.Name)
		}
		return out
	}
	got := ads.must(listenerType)
	if n := names(got); !slices.Equal(n, []string{"a", "b"}) {
		t.Fatalf("listeners %v, want [a b]", n)
	}
	ads.send(listenerType, nil, got.VersionInfo, got.Nonce, "")
	s.Ring("b").Do("DELETE", "", nil, nil, http.StatusNoContent)
	got = ads.must(listenerType)
	if n := names(got); !slices.Equal(n, []string{"a"}) {
		t.Fatalf("after deleting b: %v, want [a]", n)
	}
	ads.send(listenerType, nil, got.VersionInfo, got.Nonce, "")
	s.Ring("d").Create(map[string]any{"algorithm": "envoy_ring_hash"})
	if n := names(ads.must(listenerType)); !slices.Equal(n, []string{"a", "d"}) {
		t.Fatalf("after creating d: %v, want [a d]", n)
	}
}
