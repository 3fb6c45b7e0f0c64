package placement

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// vectorsDir is the shared known-answer vectors, read in place: the Rust
// tests and the Python client read the same files.
const vectorsDir = "../../../tests/placement/vectors"

// vectorChecks maps every file under vectorsDir to its check. A file that
// is not recognised fails the test, so a new vector file cannot be skipped
// silently: give it a check here.
func vectorCheck(rel string) func(*testing.T, string) {
	switch rel {
	case "hashes/twemproxy.json":
		return checkTwemproxyHashFile
	case "reference/libketama.json":
		return checkLibketama
	case "reference/envoy-maglev.json":
		return checkEnvoyMaglev
	case "reference/jump.json":
		return checkJumpReference
	}
	if !strings.Contains(rel, "/") && strings.HasSuffix(rel, ".json") {
		return checkPlacementVector
	}
	return nil
}

func TestEveryVectorFile(t *testing.T) {
	var files []string
	err := filepath.WalkDir(vectorsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(vectorsDir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatalf("reading %s: %v", vectorsDir, err)
	}
	sort.Strings(files)
	// 106 placement vectors (spec 12: 85, envoy_ring_hash's 11 and
	// envoy_maglev's 10), the twemproxy hashes and three reference files
	// when this was written; more may come, none may be left unchecked.
	if len(files) < 110 {
		t.Fatalf("found %d vector files, expected at least 110", len(files))
	}
	for _, rel := range files {
		check := vectorCheck(rel)
		if check == nil {
			t.Errorf("%s: not a vector file this test recognises: add a check for it", rel)
			continue
		}
		t.Run(rel, func(t *testing.T) { check(t, filepath.Join(vectorsDir, rel)) })
	}
}

// vector is a placement vector file (spec 12). Decoding refuses fields it
// does not name, so a file that starts carrying something new fails until
// the test checks it.
type vector struct {
	Algorithm       string            `json:"algorithm"`
	Shape           string            `json:"shape"`
	Config          json.RawMessage   `json:"config"`
	Nodes           json.RawMessage   `json:"nodes"`
	Buckets         json.RawMessage   `json:"buckets"`
	ServerIDs       map[string]uint32 `json:"server_ids"`
	Table           [][]string        `json:"table"`
	Fingerprint     string            `json:"fingerprint"`
	Ownership       vectorOwnership   `json:"ownership"`
	Lookups         []vectorLookup    `json:"lookups"`
	PreferenceLists []vectorList      `json:"preference_lists"`
}

type vectorOwnership struct {
	Basis       string  `json:"basis"`
	TotalUnits  string  `json:"total_units"`
	MaxOverMean float64 `json:"max_over_mean"`
	Nodes       []struct {
		ID            string  `json:"id"`
		Units         string  `json:"units"`
		Share         float64 `json:"share"`
		ExpectedShare float64 `json:"expected_share"`
		Ratio         float64 `json:"ratio"`
		Replicas      *int    `json:"replicas"`
	} `json:"nodes"`
}

type vectorLookup struct {
	Key   string  `json:"key"`
	Hash  string  `json:"hash"`
	Owner *string `json:"owner"`
}

type vectorList struct {
	Key      string   `json:"key"`
	Replicas []string `json:"replicas"`
}

// decodeStrict decodes JSON refusing unknown fields.
func decodeStrict(t testing.TB, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: %v (a new field needs a check in this test)", path, err)
	}
}

var vectorCache sync.Map // path → *vector

func loadVector(t testing.TB, path string) *vector {
	t.Helper()
	if v, ok := vectorCache.Load(path); ok {
		return v.(*vector)
	}
	v := new(vector)
	decodeStrict(t, path, v)
	vectorCache.Store(path, v)
	return v
}

// inputs reads a vector's inputs: config, nodes and stored state.
func (v *vector) inputs(t testing.TB) (Config, []Node, *Stored) {
	t.Helper()
	c, err := ParseConfig(v.Config)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	nodes, err := ParseNodes(v.Nodes)
	if err != nil {
		t.Fatalf("nodes: %v", err)
	}
	stored := &Stored{ServerIDs: v.ServerIDs, TableRows: v.Table}
	if len(v.Buckets) > 0 && !isNull(v.Buckets) {
		if stored.Buckets, err = ParseBuckets(v.Buckets); err != nil {
			t.Fatalf("buckets: %v", err)
		}
	}
	return c, nodes, stored
}

var builtCache sync.Map // *vector → *Placement

// build is the placement from the file's inputs alone (spec 12), built
// once per file: placements are immutable, so tests can share them.
func (v *vector) build(t testing.TB) *Placement {
	t.Helper()
	if p, ok := builtCache.Load(v); ok {
		return p.(*Placement)
	}
	c, nodes, stored := v.inputs(t)
	p, err := Build(c, nodes, stored)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	builtCache.Store(v, p)
	return p
}

func checkPlacementVector(t *testing.T, path string) {
	v := loadVector(t, path)
	if want := v.Algorithm + "-" + v.Shape + ".json"; filepath.Base(path) != want {
		t.Fatalf("file named %s holds %s", filepath.Base(path), want)
	}
	p := v.build(t)
	if p.Algorithm().String() != v.Algorithm {
		t.Fatalf("algorithm %s, file says %s", p.Algorithm(), v.Algorithm)
	}
	t.Run("fingerprint", func(t *testing.T) {
		if got := p.Fingerprint(); got != v.Fingerprint {
			t.Errorf("fingerprint %s, want %s", got, v.Fingerprint)
		}
	})
	t.Run("lookups", func(t *testing.T) { checkLookups(t, p, v) })
	t.Run("preference_lists", func(t *testing.T) { checkPreferenceLists(t, p, v) })
	t.Run("ownership", func(t *testing.T) { checkOwnership(t, p, v) })
	t.Run("layout_inputs", func(t *testing.T) { checkLayoutInputs(t, p, v) })
	t.Run("thin_client", func(t *testing.T) {
		// The encoding alone reproduces everything, and re-encodes to itself.
		q, err := Decode(p.Encode(), v.Fingerprint)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q.Encode(), p.Encode()) || q.Fingerprint() != v.Fingerprint {
			t.Fatal("the decoded placement encodes differently")
		}
		checkLookups(t, q, v)
		checkPreferenceLists(t, q, v)
		checkOwnership(t, q, v)
	})
	t.Run("snapshot", func(t *testing.T) { checkSnapshot(t, p, v) })
}

// checkSnapshot builds the placement from the file as `GET …/snapshot`
// would send it, and checks that a wrong fingerprint is refused.
func checkSnapshot(t *testing.T, built *Placement, v *vector) {
	t.Helper()
	var config map[string]any
	if err := json.Unmarshal(v.Config, &config); err != nil {
		t.Fatal(err)
	}
	config["membership"] = map[string]any{"mode": "manual"} // places nothing: ignored
	doc := map[string]any{
		"ring": "vectors", "version": 7, "config": config, "nodes": v.Nodes,
		"fingerprint": v.Fingerprint, "created_at": "2026-01-01T00:00:00Z", "change": map[string]any{},
	}
	if len(v.Buckets) > 0 && !isNull(v.Buckets) {
		doc["buckets"] = v.Buckets
	}
	if v.ServerIDs != nil {
		// A snapshot's ids name every node, active or not (the file's only
		// the active ones), and next is above them all.
		ids := map[string]uint32{}
		next := uint32(1)
		for id, s := range v.ServerIDs {
			ids[id] = s
			next = max(next, s+1)
		}
		_, nodes, _ := v.inputs(t)
		for _, n := range nodes {
			if _, ok := ids[n.ID]; !ok {
				ids[n.ID] = next
				next++
			}
		}
		doc["server_ids"] = map[string]any{"ids": ids, "next": next}
	}
	src := TableSource{}
	if built.Algorithm() == Table {
		src.Encoding = built.Encode() // the download of …/snapshots/{v}/table
	}
	for _, fingerprint := range []string{v.Fingerprint, strings.Repeat("0", 64)} {
		doc["fingerprint"] = fingerprint
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseSnapshot(data)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Placement(src)
		if fingerprint != v.Fingerprint {
			var mismatch *FingerprintMismatchError
			if !errors.As(err, &mismatch) || !errors.Is(err, ErrFingerprintMismatch) || mismatch.Actual != v.Fingerprint || p != nil {
				t.Errorf("a wrong fingerprint gave %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Fingerprint() != v.Fingerprint || p.Version() != 7 || s.Ring != "vectors" {
			t.Errorf("fingerprint %s version %d ring %s", p.Fingerprint(), p.Version(), s.Ring)
		}
		checkLookups(t, p, v)
	}
}

func checkLookups(t *testing.T, p *Placement, v *vector) {
	t.Helper()
	if len(v.Lookups) == 0 {
		t.Fatal("no lookups")
	}
	bad := 0
	for _, l := range v.Lookups {
		key := []byte(l.Key)
		hash := new(big.Int).SetUint64(p.KeyHash(key)).String()
		owner, ok := p.Owner(key)
		wantOwner, wantOK := "", l.Owner != nil
		if wantOK {
			wantOwner = *l.Owner
		}
		if hash != l.Hash || owner != wantOwner || ok != wantOK {
			if bad++; bad <= 5 {
				t.Errorf("key %q: hash %s owner %q (%v), want hash %s owner %q (%v)", l.Key, hash, owner, ok, l.Hash, wantOwner, wantOK)
			}
		}
		if s, sok := p.OwnerString(l.Key); s != owner || sok != ok {
			t.Errorf("key %q: OwnerString %q, Owner %q", l.Key, s, owner)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d lookups differ", bad, len(v.Lookups))
	}
}

func checkPreferenceLists(t *testing.T, p *Placement, v *vector) {
	t.Helper()
	if len(v.PreferenceLists) == 0 {
		t.Fatal("no preference lists")
	}
	bad := 0
	for _, l := range v.PreferenceLists {
		got := p.PreferenceList([]byte(l.Key), p.ReplicationFactor())
		if len(got) == 0 && len(l.Replicas) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, l.Replicas) {
			if bad++; bad <= 5 {
				t.Errorf("key %q: %v, want %v", l.Key, got, l.Replicas)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d preference lists differ", bad, len(v.PreferenceLists))
	}
}

func checkOwnership(t *testing.T, p *Placement, v *vector) {
	t.Helper()
	o, want := p.Ownership(), v.Ownership
	if o.Basis != want.Basis || o.TotalUnits.String() != want.TotalUnits || o.MaxOverMean != want.MaxOverMean {
		t.Errorf("basis %s total %s max/mean %v, want %s %s %v", o.Basis, o.TotalUnits, o.MaxOverMean, want.Basis, want.TotalUnits, want.MaxOverMean)
	}
	if len(o.Nodes) != len(want.Nodes) {
		t.Fatalf("%d nodes, want %d", len(o.Nodes), len(want.Nodes))
	}
	isTable := p.Algorithm() == Table
	for i, n := range o.Nodes {
		w := want.Nodes[i]
		// Floats compare exactly: the spec's recipe is normative (7).
		if n.ID != w.ID || n.Units.String() != w.Units || n.Share != w.Share || n.ExpectedShare != w.ExpectedShare || n.Ratio != w.Ratio {
			t.Errorf("node %d: %+v, want %+v", i, n, w)
		}
		if (w.Replicas != nil) != isTable || w.Replicas != nil && *w.Replicas != n.Replicas {
			t.Errorf("node %s: replicas %d, want %v", n.ID, n.Replicas, w.Replicas)
		}
	}
}

// checkLayoutInputs reads back the stored state the file gives: jump's
// buckets, table's rows, haproxy's server ids.
func checkLayoutInputs(t *testing.T, p *Placement, v *vector) {
	t.Helper()
	var wantBuckets []*string
	if len(v.Buckets) > 0 && !isNull(v.Buckets) {
		if err := json.Unmarshal(v.Buckets, &wantBuckets); err != nil {
			t.Fatal(err)
		}
	}
	var gotBuckets []*string
	for _, r := range p.BucketOrder() {
		for k := 0; k < r.Count; k++ {
			id := r.ID
			if id == "" {
				gotBuckets = append(gotBuckets, nil)
			} else {
				gotBuckets = append(gotBuckets, &id)
			}
		}
	}
	if (p.Algorithm() == Jump) != (wantBuckets != nil) || !reflect.DeepEqual(gotBuckets, wantBuckets) && len(wantBuckets) > 0 {
		t.Errorf("bucket order %v, want %s", p.BucketOrder(), v.Buckets)
	}
	if rows := p.TableRows(); !reflect.DeepEqual(rows, v.Table) && !(len(rows) == len(v.Table) && allEmpty(rows) && allEmpty(v.Table)) {
		t.Errorf("table rows differ from the file's")
	}
	if ids := p.ServerIDs(); !reflect.DeepEqual(ids, v.ServerIDs) {
		t.Errorf("server ids %v, want %v", ids, v.ServerIDs)
	}
}

func allEmpty(rows [][]string) bool {
	for _, r := range rows {
		if len(r) > 0 {
			return false
		}
	}
	return true
}
