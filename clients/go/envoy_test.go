package ringd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ringd/ringd/clients/go/placement"
)

// The refusals of envoy_ring_hash and envoy_maglev (spec 2.4 checks 1 and
// 6, 5.10.4, 5.11) against a real ringd: every config and node set below
// is accepted by the server exactly when package placement accepts it,
// and a refusal names the field its kind is about.

// send makes one request and returns the status and the decoded answer.
func send(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// kindOf is the placement kind of err, "" for none.
func kindOf(err error) placement.Kind {
	var e *placement.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if err != nil {
		return placement.Kind(err.Error())
	}
	return ""
}

// checkRefusal compares the server's answer with the client's verdict:
// both accept, or both refuse with want and the server names field.
func checkRefusal(t *testing.T, name string, status, okStatus int, answer map[string]any, clientErr error, want placement.Kind, field string) {
	t.Helper()
	got := kindOf(clientErr)
	if got != want {
		t.Errorf("%s: the client gives %q (%v), want %q", name, got, clientErr, want)
	}
	switch {
	case want == "" && status != okStatus:
		t.Errorf("%s: the client accepts it, the server answers %d: %v", name, status, answer)
	case want != "" && status != http.StatusBadRequest:
		t.Errorf("%s: the client refuses it (%s), the server answers %d", name, want, status)
	case want != "" && answer["field"] != field:
		t.Errorf("%s: the server names field %v (%v), want %s", name, answer["field"], answer["detail"], field)
	}
}

func TestEnvoyConfigsAsTheServerChecksThem(t *testing.T) {
	s := startServer(t)
	for i, c := range []struct {
		config string
		want   placement.Kind
		field  string
	}{
		{`{"algorithm": "envoy_ring_hash"}`, "", ""},
		{`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 1, "maximum_ring_size": 1}`, "", ""},
		{`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 8388608, "maximum_ring_size": 8388608}`, "", ""},
		{`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 0}`, placement.ErrRingSizeOutOfRange, "minimum_ring_size"},
		{`{"algorithm": "envoy_ring_hash", "maximum_ring_size": 8388609}`, placement.ErrRingSizeOutOfRange, "maximum_ring_size"},
		{`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 4097}`, placement.ErrRingSizesInverted, "minimum_ring_size"},
		{`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 5000, "maximum_ring_size": 0}`, placement.ErrRingSizeOutOfRange, "maximum_ring_size"},
		{`{"algorithm": "envoy_ring_hash", "hash": "md5", "minimum_ring_size": 0}`, placement.ErrHashNotAccepted, "hash"},
		{`{"algorithm": "envoy_ring_hash", "hash": "xxh3"}`, placement.ErrHashNotAccepted, "hash"},
		{`{"hash": "xxh64"}`, placement.ErrHashNotAccepted, "hash"},
		{`{"algorithm": "ring", "minimum_ring_size": 5000}`, "", ""}, // only envoy_ring_hash orders them
		{`{"algorithm": "ring", "maximum_ring_size": 0}`, placement.ErrRingSizeOutOfRange, "maximum_ring_size"},
		{`{"algorithm": "envoy_maglev"}`, "", ""},
		{`{"algorithm": "envoy_maglev", "table_size": 2}`, "", ""},
		{`{"algorithm": "envoy_maglev", "table_size": 5000011}`, "", ""},
		{`{"algorithm": "envoy_maglev", "table_size": 5000017}`, placement.ErrTableSizeOutOfRange, "table_size"},
		{`{"algorithm": "envoy_maglev", "table_size": 5000077}`, placement.ErrTableSizeOutOfRange, "table_size"},
		{`{"algorithm": "maglev", "table_size": 5000077}`, "", ""}, // maglev's bound is 2^24
		{`{"algorithm": "envoy_maglev", "table_size": 1}`, placement.ErrTableSizeOutOfRange, "table_size"},
		{`{"algorithm": "envoy_maglev", "table_size": 65536}`, placement.ErrTableSizeNotPrime, "table_size"},
		{`{"algorithm": "envoy_maglev", "hash": "xxh3"}`, placement.ErrHashNotAccepted, "hash"},
		{`{"algorithm": "envoy_maglev", "hash": "md5", "table_size": 4}`, placement.ErrHashNotAccepted, "hash"},
		{`{"algorithm": "envoy_maglev", "minimum_ring_size": 4097}`, "", ""}, // only envoy_ring_hash orders them
		{`{"algorithm": "maglev", "hash": "xxh64"}`, placement.ErrHashNotAccepted, "hash"},
	} {
		var body map[string]any
		if err := json.Unmarshal([]byte(c.config), &body); err != nil {
			t.Fatal(err)
		}
		status, answer := send(t, "PUT", fmt.Sprintf("%s/v1/rings/config-%d", s.URL, i), body)
		_, err := placement.ParseConfig([]byte(c.config))
		checkRefusal(t, c.config, status, http.StatusCreated, answer, err, c.want, c.field)
	}
}

func TestEnvoyNodesAsTheServerChecksThem(t *testing.T) {
	s := startServer(t)
	ep := func(id, address string, more ...any) map[string]any {
		n := map[string]any{"id": id, "address": address}
		for k := 0; k+1 < len(more); k += 2 {
			n[more[k].(string)] = more[k+1]
		}
		return n
	}
	// A node of weight 1 beside k of weight 1,000,000 has less than one
	// unit of 2^31 once k ≥ 2,148. Its remainder, 2^31, is the largest
	// up to k = 2,219, so it gets one of the units left over; at k =
	// 2,220 the others' remainders are larger (2,167,032,666), they take
	// every unit left, and its share is 0.
	crowd := []map[string]any{ep("small", "10.1.0.1:80")}
	for i := 0; i < 2220; i++ {
		crowd = append(crowd, ep(fmt.Sprintf("big-%04d", i), fmt.Sprintf("10.2.%d.%d:80", i/250, i%250), "weight", 1_000_000))
	}
	type nodeCase struct {
		name      string
		nodes     []map[string]any
		want      placement.Kind
		field     string
		tableSize int // envoy_maglev's, when not the default
	}
	three := []map[string]any{ep("a", "10.0.0.1:80"), ep("b", "10.0.0.2:80"), ep("c", "10.0.0.3:80")}
	for i, alg := range []placement.Algorithm{placement.EnvoyRingHash, placement.EnvoyMaglev} {
		cases := []nodeCase{
			{"no address", []map[string]any{{"id": "a"}}, placement.ErrMissingAddress, "address", 0},
			{"missing before a draining node's bad address", []map[string]any{{"id": "b"}, ep("a", "cache:80", "state", "draining")}, placement.ErrMissingAddress, "address", 0},
			{"a draining node's address", []map[string]any{ep("a", "10.0.0.1:80"), ep("b", "cache:80", "state", "draining")}, placement.ErrAddressNotServer, "address", 0},
			{"a draining node without one", []map[string]any{ep("a", "10.0.0.1:80"), {"id": "b", "state": "draining"}}, "", "", 0},
			{"a shared label", []map[string]any{ep("a", "10.0.0.1:80"), ep("b", "10.0.0.2:80", "hash_key", "a")}, placement.ErrEndpointKeyTaken, "hash_key", 0},
			{"a shared label before a shared address", []map[string]any{ep("a", "10.0.0.1:80"), ep("b", "10.0.0.1:80", "hash_key", "a")}, placement.ErrEndpointKeyTaken, "hash_key", 0},
			{"a shared address", []map[string]any{ep("a", "10.0.0.1:80"), ep("b", "10.0.0.1:80")}, placement.ErrDuplicateAddress, "address", 0},
			{"a draining node's label and address", []map[string]any{ep("a", "10.0.0.1:80", "state", "draining"), ep("b", "10.0.0.1:80", "hash_key", "a")}, "", "", 0},
			{"a share too small", crowd, placement.ErrWeightShareTooSmall, "weight", 0},
			{"a share of one unit left over", crowd[:2220], "", "", 0},
			{"a share just below one unit", crowd[:2149], "", "", 0},
			{"ramps", []map[string]any{ep("a", "10.0.0.1:80", "ramp", 1), ep("b", "10.0.0.2:80", "ramp", 19_661)}, "", "", 0},
		}
		if alg == placement.EnvoyMaglev {
			// Check 6 on a table of 2 slots: three active nodes are one
			// too many, found after the endpoint checks of 3a.
			cases = append(cases,
				nodeCase{"more nodes than slots", three, placement.ErrTableSizeOutOfRange, "table_size", 2},
				nodeCase{"a shared label before the slots", append(slices.Clone(three[:2]), ep("c", "10.0.0.3:80", "hash_key", "a")), placement.ErrEndpointKeyTaken, "hash_key", 2},
				nodeCase{"a share too small before the slots", crowd, placement.ErrWeightShareTooSmall, "weight", 2},
				nodeCase{"as many nodes as slots", append(slices.Clone(three[:2]), ep("c", "10.0.0.3:80", "state", "joining")), "", "", 2})
		}
		for _, a := range []string{
			"10.0.0.1:8080", "[2001:db8::1]:8080", "[::ffff:1.2.3.4]:80", "[::ffff:102:304]:80", "[::1.2.3.4]:80",
			"[::102:304]:80", "[1:0:0:1::1]:80", "[1:0:0:1:0:0:0:1]:80", "[2001:db8::1:1:1:1:1]:80",
			"[2001:db8:0:1:1:1:1:1]:80", "[2001:DB8::1]:80", "[fe80::1%1]:80", "[fe80::1%eth0]:80", "010.0.0.1:80",
			"1.2.3.4:080", "1.2.3.4:0", "[1.2.3.4]:80", "cache.local:11211", "[::]:65535",
		} {
			want, field := placement.Kind(""), ""
			if _, err := placement.Build(placement.DefaultConfig(alg), []placement.Node{{ID: "a", Address: a, Weight: 1, Ramp: placement.FullRamp}}, nil); err != nil {
				want, field = placement.ErrAddressNotServer, "address"
			}
			cases = append(cases, nodeCase{"address " + a, []map[string]any{ep("a", a)}, want, field, 0})
		}
		for k, nc := range cases {
			c := placement.DefaultConfig(alg)
			config := map[string]any{"algorithm": alg.String()}
			if nc.tableSize != 0 {
				c.TableSize, config["table_size"] = nc.tableSize, nc.tableSize
			}
			ring := fmt.Sprintf("%s/v1/rings/nodes-%d-%d", s.URL, i, k)
			if status, answer := send(t, "PUT", ring, config); status != http.StatusCreated {
				t.Fatalf("creating the ring: %d %v", status, answer)
			}
			ops := make([]map[string]any, len(nc.nodes))
			for j, n := range nc.nodes {
				ops[j] = map[string]any{"op": "upsert", "node": n}
			}
			status, answer := send(t, "POST", ring+"/changes", map[string]any{"ops": ops})
			nodes, err := placement.ParseNodes(mustJSON(t, nc.nodes))
			if err == nil {
				_, err = placement.Build(c, nodes, nil)
			}
			if f, ok := answer["field"].(string); ok {
				// A refused change names the field within its op.
				answer["field"] = f[strings.LastIndexByte(f, '.')+1:]
			}
			checkRefusal(t, alg.String()+": "+nc.name, status, http.StatusOK, answer, err, nc.want, nc.field)
		}
	}
}

// mustJSON is v as JSON.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
