package ringd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ringd/ringd/clients/go/placement"

	"github.com/ringd/ringd/clients/go/ringdtest"
)

// Key counts of the agreement test. Every algorithm's default hash gets
// the 100,000 keys; each other (algorithm, hash) pair gets fewer,
// so that the 42 rings on each of two stores stay well under a minute on
// two cores, under -race too. The hash functions themselves are checked bit for bit on every
// shared vector (package placement); what the smaller count still covers
// is each pair's lookup path end to end against the server.
const (
	agreementKeysDefault = 100_000
	agreementKeysOther   = 20_000
	// lookupBatch is the most keys one POST …/lookup takes (api.md).
	lookupBatch = 10_000
	// agreementReplicas is the preference list length compared.
	agreementReplicas = 3
)

// agreementScale divides the key counts under -race, which makes the Go
// side five times slower (150 s instead of 26 s for both stores): the
// race run is for the client's goroutines, which a tenth of the keys
// exercises as well, and ./.ci/go-client runs the full counts without
// -race.
var agreementScale = map[bool]int{false: 1, true: 10}[raceEnabled]

// agreementKeys are the keys every ring places: the even ones UTF-8 text
// (ASCII, twemproxy hash-tagged, non-ASCII), the odd ones random bytes
// with a 0xFF, which is never UTF-8, so exactly half are not text. One
// fixed seed: a failure names keys that reproduce.
var agreementKeys = func() [][]byte {
	rng := rand.New(rand.NewPCG(0x5eed, 42))
	keys := make([][]byte, agreementKeysDefault)
	for i := range keys {
		if i%2 == 1 {
			k := make([]byte, 1+rng.IntN(40))
			for j := range k {
				k[j] = byte(rng.UintN(256))
			}
			k[rng.IntN(len(k))] = 0xFF
			keys[i] = k
			continue
		}
		switch i % 6 {
		case 0:
			keys[i] = []byte(fmt.Sprintf("user:%d", i))
		case 2:
			keys[i] = []byte(fmt.Sprintf("item:{%d}:cart", i/6))
		default:
			keys[i] = []byte(fmt.Sprintf("ключ-%d-ü", i))
		}
	}
	return keys
}()

// agreementCase is one ring: an (algorithm, hash) pair and the variant of
// its config that pair gets.
type agreementCase struct {
	alg       placement.Algorithm
	hash      placement.Hash
	zoneAware bool // odd-numbered hashes of an algorithm are not zone aware
	keys      int
}

// name is the ring's name and the subtest's.
func (c agreementCase) name() string {
	name := c.alg.String() + "-" + strings.ReplaceAll(c.hash.String(), "_", "-")
	if !c.zoneAware {
		name += "-flat"
	}
	return name
}

// config is the ring's config. The odd-numbered variant of each
// algorithm (zone_aware off) also turns off haproxy's avalanche, gives
// twemproxy the hash tag {}, envoy_ring_hash ring sizes other than the
// defaults and envoy_maglev a table of 10,007 slots (the zone-aware one
// has the default, 65,537), so both sides of each switch are compared.
// (Envoy's largest, 5,000,011, takes ringd about 1.5 s a change, and
// over etcd such a change can miss the 800 ms write deadline: a 503.)
func (c agreementCase) config() map[string]any {
	cfg := map[string]any{"algorithm": c.alg.String(), "hash": c.hash.String(), "zone_aware": c.zoneAware}
	switch c.alg {
	case placement.Table:
		cfg["partitions"] = 4096
	case placement.Maglev:
		cfg["table_size"] = 10_007 // prime, and not the default 65,537
	case placement.Haproxy:
		cfg["avalanche"] = c.zoneAware
	case placement.Twemproxy:
		if !c.zoneAware {
			cfg["hash_tag"] = "{}"
		}
	case placement.EnvoyRingHash:
		if !c.zoneAware {
			cfg["minimum_ring_size"], cfg["maximum_ring_size"] = 2000, 20_000
		}
	case placement.EnvoyMaglev:
		if !c.zoneAware {
			cfg["table_size"] = 10_007
		}
	}
	return cfg
}

// agreementCases lists every pair ringd accepts (spec 2.1: the hashes
// each algorithm takes, its default first; TestServerRefusesOtherPairs
// checks that the server takes no other). An algorithm with one hash gets
// that pair twice, zone aware and not.
func agreementCases() []agreementCase {
	var cases []agreementCase
	for _, a := range placement.Algorithms() {
		hashes := a.AcceptedHashes()
		for i, h := range hashes {
			n := agreementKeysOther / agreementScale
			if i == 0 {
				n = agreementKeysDefault / agreementScale
			}
			cases = append(cases, agreementCase{alg: a, hash: h, zoneAware: i%2 == 0, keys: n})
		}
		if len(hashes) == 1 {
			cases = append(cases, agreementCase{alg: a, hash: hashes[0], keys: agreementKeysOther / agreementScale})
		}
	}
	return cases
}

// agreementNode is node i of the set every ring of algorithm alg gets:
// three zones of equal weight (so a zone-aware table passes check 7 of
// spec 2.4), weights 1 to 4, and an address each proxy mode takes (nginx
// and twemproxy place by it); the xDS endpoints of envoy_ring_hash and
// envoy_maglev, which need an IP address but are placed by their labels,
// also get IPv6 addresses and an IPv4-mapped one.
func agreementNode(i int, state string, alg placement.Algorithm) map[string]any {
	address := fmt.Sprintf("10.0.%d.%d:11211", i/3, 10+i)
	if alg == placement.EnvoyRingHash || alg == placement.EnvoyMaglev {
		switch {
		case i == 5:
			address = "[::ffff:10.9.0.5]:8080"
		case i%4 == 1:
			address = fmt.Sprintf("[2001:db8::a:%x]:8080", i)
		}
	}
	n := map[string]any{
		"id":      fmt.Sprintf("node-%02d", i),
		"weight":  1 + (i/3)%4,
		"zone":    fmt.Sprintf("zone-%c", 'a'+i%3),
		"address": address,
		"state":   state,
	}
	if i == 7 {
		n["hash_key"] = "spare-7" // placed by its hash key, not its id
	}
	return n
}

// TestAgreesWithServerLookup: for every algorithm and hash pair, on a
// real ringd over SQLite and (when `etcd` is on PATH) over a one-member
// etcd, a Client following the ring gives the owner and 3-node
// preference list that POST …/lookup gives with keys_b64, for 100,000
// keys under each algorithm's default hash and 20,000 under every other
// hash (see agreementKeysOther), half of them not UTF-8; a tenth of that
// under -race (agreementScale). Comparisons are exact; a failure prints
// the first differing keys.
func TestAgreesWithServerLookup(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: places 1.7 million keys per store")
	}
	ringdtest.Binary(t) // skip before starting etcd when there is no server
	stores := []struct {
		name  string
		store func(*testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"etcd", startEtcd},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := startServerOn(t, st.store(t))
			for _, c := range agreementCases() {
				t.Run(c.name(), func(t *testing.T) {
					t.Parallel()
					checkAgreement(t, s.URL, c)
				})
			}
		})
	}
}

// checkAgreement makes the case's ring in two versions (nodes added; one
// node replaced, one draining), follows it, and compares the client with
// the server's batch lookup at that version.
func checkAgreement(t *testing.T, base string, c agreementCase) {
	a := api{t: t, base: base, ring: c.name()}
	a.create(c.config())
	ops := make([]map[string]any, 0, 21)
	for i := 0; i < 21; i++ {
		ops = append(ops, map[string]any{"op": "upsert", "node": agreementNode(i, "active", c.alg)})
	}
	a.change(ops...)
	// node-21 takes node-03's zone and weight: zone weights stay equal.
	v := a.change(remove("node-03"),
		map[string]any{"op": "upsert", "node": agreementNode(21, "active", c.alg)},
		map[string]any{"op": "upsert", "node": agreementNode(22, "draining", c.alg)})

	cl, err := NewClient([]string{base}, c.name(), append(fast("agree-"+c.name()), WithAck(false))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	waitVersion(t, cl, v)

	var diffs []string
	for start := 0; start < c.keys && len(diffs) < 5; start += lookupBatch {
		batch := agreementKeys[start:min(start+lookupBatch, c.keys)]
		for j, r := range serverLookup(t, a, batch, v) {
			key := batch[j]
			owner, ok := cl.Owner(key)
			prefs := cl.PreferenceList(key, agreementReplicas)
			wantOwner := ""
			if r.Owner != nil {
				wantOwner = *r.Owner
			}
			if owner != wantOwner || ok != (r.Owner != nil) || !slices.Equal(prefs, r.Replicas) {
				diffs = append(diffs, fmt.Sprintf("key #%d %s (b64 %s): client owner %q %v, list %q; server owner %q, list %q",
					start+j, hex.EncodeToString(key), r.KeyB64, owner, ok, prefs, wantOwner, r.Replicas))
				if len(diffs) == 5 {
					break
				}
			}
		}
	}
	if len(diffs) > 0 {
		t.Errorf("v%d: the client disagrees with POST …/lookup; first differing keys:\n%s", v, strings.Join(diffs, "\n"))
	}
}

// keyPlacement is one result of POST …/lookup (openapi: KeyPlacement).
type keyPlacement struct {
	KeyB64   string   `json:"key_b64"`
	Owner    *string  `json:"owner"`
	Replicas []string `json:"replicas"`
}

// serverLookup asks the server where keys live at version v, sending
// every key as keys_b64, and checks that each answer echoes its key.
func serverLookup(t *testing.T, a api, keys [][]byte, v uint64) []keyPlacement {
	t.Helper()
	b64 := make([]string, len(keys))
	for i, k := range keys {
		b64[i] = base64.StdEncoding.EncodeToString(k)
	}
	body, _ := json.Marshal(map[string]any{"keys_b64": b64, "replicas": agreementReplicas, "version": v})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", a.base+"/v1/rings/"+a.ring+"/lookup", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST lookup: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST lookup: %d %v: %.500s", resp.StatusCode, err, raw)
	}
	var out struct {
		Version  uint64         `json:"version"`
		Replicas int            `json:"replicas"`
		Results  []keyPlacement `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST lookup: %v", err)
	}
	if out.Version != v || out.Replicas != agreementReplicas || len(out.Results) != len(keys) {
		t.Fatalf("POST lookup: version %d, replicas %d, %d results; want %d, %d, %d",
			out.Version, out.Replicas, len(out.Results), v, agreementReplicas, len(keys))
	}
	for i, r := range out.Results {
		if r.KeyB64 != b64[i] {
			t.Fatalf("POST lookup: result %d is for key_b64 %q, sent %q", i, r.KeyB64, b64[i])
		}
	}
	return out.Results
}

// TestServerRefusesOtherPairs checks that the pairs agreementCases
// leaves out are the ones the server refuses, so "every valid pair" rests
// on the server's word and not only on package placement's list.
func TestServerRefusesOtherPairs(t *testing.T) {
	s := startServer(t)
	for _, alg := range placement.Algorithms() {
		for h := placement.Xxh3; h <= placement.Xxh64; h++ {
			if slices.Contains(alg.AcceptedHashes(), h) {
				continue
			}
			a := api{t: t, base: s.URL, ring: "refused"}
			a.do("PUT", "", map[string]any{"algorithm": alg.String(), "hash": h.String()}, http.StatusBadRequest)
		}
	}
}

// TestAgreementKeys checks the key set's promise: half not UTF-8.
func TestAgreementKeys(t *testing.T) {
	invalid := 0
	for _, k := range agreementKeys {
		if !utf8.Valid(k) {
			invalid++
		}
	}
	if invalid != len(agreementKeys)/2 {
		t.Fatalf("%d of %d keys are not UTF-8", invalid, len(agreementKeys))
	}
}
