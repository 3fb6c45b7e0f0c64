package xds

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ringd/ringd/clients/go/ringdtest"
)

// TestGrpcRefusesAMaglevRingAndSaysSo: gRPC has no Maglev balancer, so
// when a ring it follows is switched to envoy_maglev, grpc-go refuses the
// new cluster (a NACK). ringd lists grpc-go at the version it still runs,
// with the refused one as its failure in grpc-go's own words, and grpc-go
// keeps routing every key as that version places it.
func TestGrpcRefusesAMaglevRingAndSaysSo(t *testing.T) {
	s := ringdtest.Start(t, "--xds-listen", "127.0.0.1:0")
	r, v := ringOfBackends(t, s, "cache", 4)
	c := dial(t, s.XDS, "grpc-go-1", "cache")
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("maglev-%d", i)
	}
	want := owners(t, r, v, keys)
	if got := route(t, c, keys); !slices.Equal(got, want) {
		t.Fatal("grpc-go does not route on the ring_hash version")
	}
	waitAck(t, r, "grpc-go-1", v)

	switched := r.Change(ringdtest.Op{"op": "update_config", "config": map[string]any{"algorithm": "envoy_maglev"}})
	failed := waitFor(t, r, "grpc-go-1", "reported a failure", func(c client) bool { return c.Failure != nil })
	if failed.Version != v || failed.Failure.Version != switched || !strings.Contains(failed.Failure.Error, "MAGLEV") {
		t.Fatalf("after the switch: %+v, want version %d and a failure of %d naming MAGLEV", failed, v, switched)
	}
	t.Logf("grpc-go's refusal, as ringd lists it: %q", failed.Failure.Error)
	if got := route(t, c, keys); !slices.Equal(got, want) {
		t.Fatal("grpc-go stopped routing on the version it holds")
	}
}
