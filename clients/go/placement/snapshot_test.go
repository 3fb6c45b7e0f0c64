package placement

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// tableVector is table-weighted's placement and its rows.
func tableVector(t *testing.T) (*vector, *Placement) {
	v := loadVector(t, vectorsDir+"/table-weighted.json")
	return v, v.build(t)
}

// tableSnapshot is a table snapshot of nodes with fingerprint fp.
func tableSnapshot(t *testing.T, v *vector, version uint64, fp string, moves []byte) *Snapshot {
	t.Helper()
	c, nodes, _ := v.inputs(t)
	return &Snapshot{Ring: "r", Version: version, Config: c, Nodes: nodes, Fingerprint: fp, TableMoves: moves}
}

// movesOf encodes moves (partition, slot, node index) with u16 indices.
func movesOf(moves ...[3]int) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(moves)))
	for _, m := range moves {
		out = binary.LittleEndian.AppendUint32(out, uint32(m[0]))
		out = append(out, byte(m[1]))
		out = binary.LittleEndian.AppendUint16(out, uint16(m[2]))
	}
	return out
}

func TestTableMovesExample(t *testing.T) {
	// 9.4: partition 5, slot 0 to node index 2.
	if got := base64.StdEncoding.EncodeToString(movesOf([3]int{5, 0, 2})); got != "AQAAAAUAAAAAAgA=" {
		t.Errorf("moves %s", got)
	}
}

func TestTableFromMoves(t *testing.T) {
	v, prev := tableVector(t)
	prev.version = 6
	c, nodes, _ := v.inputs(t)
	// Version 7 swaps partition 5's primary and second replica.
	rows := prev.TableRows()
	rows[5][0], rows[5][1] = rows[5][1], rows[5][0]
	next := mustBuild(t, c, nodes, &Stored{TableRows: rows})
	index := func(id string) int {
		return slices.IndexFunc(next.nodes, func(n Node) bool { return n.ID == id })
	}
	moves := movesOf([3]int{5, 0, index(rows[5][0])}, [3]int{5, 1, index(rows[5][1])})
	s := tableSnapshot(t, v, 7, next.Fingerprint(), moves)
	p, err := s.Placement(TableSource{Previous: prev})
	if err != nil {
		t.Fatal(err)
	}
	if p.Fingerprint() != next.Fingerprint() || p.Version() != 7 {
		t.Errorf("fingerprint %s version %d", p.Fingerprint(), p.Version())
	}
	for name, c := range map[string]struct {
		version uint64
		moves   []byte
		want    error
	}{
		"changed twice":         {7, movesOf([3]int{5, 0, 1}, [3]int{5, 0, 2}), ErrInvalidTable},
		"past the partitions":   {7, movesOf([3]int{256, 0, 1}), ErrInvalidTable},
		"past the replicas":     {7, movesOf([3]int{5, 3, 1}), ErrInvalidTable},
		"no such node":          {7, movesOf([3]int{5, 0, 6}), ErrInvalidTable},
		"a node twice in a row": {7, movesOf([3]int{5, 0, index(rows[5][0])}), ErrInvalidTable},
		"cut short":             {7, movesOf([3]int{5, 0, 1})[:8], ErrInvalidTable},
		"not the next version":  {9, moves, ErrInvalidTable},
		"another table":         {7, movesOf(), ErrFingerprintMismatch},
	} {
		s := tableSnapshot(t, v, c.version, next.Fingerprint(), c.moves)
		if _, err := s.Placement(TableSource{Previous: prev}); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func TestTableSnapshotNeedsItsTable(t *testing.T) {
	v, _ := tableVector(t)
	s := tableSnapshot(t, v, 7, v.Fingerprint, nil)
	_, err := s.Placement(TableSource{})
	if !errors.Is(err, ErrTableRequired) || !errors.Is(err, ErrInvalidTable) {
		t.Errorf("without a table: %v", err)
	}
	if _, err := s.Placement(TableSource{Encoding: []byte("RINGDPL\x01")}); !errors.Is(err, ErrInvalidTable) {
		t.Errorf("a short encoding: %v", err)
	}
}

func TestHaproxySnapshotServerIDs(t *testing.T) {
	base := func() *Snapshot {
		c := DefaultConfig(Haproxy)
		return &Snapshot{Config: c, Nodes: []Node{NewNode("a"), NewNode("b")}, Fingerprint: "x",
			ServerIDs: map[string]uint32{"a": 1, "b": 2}, NextServerID: 3}
	}
	good := base()
	p, err := Build(good.Config, good.Nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	good.Fingerprint = p.Fingerprint()
	if _, err := good.Placement(TableSource{}); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Snapshot){
		"no ids":         func(s *Snapshot) { s.ServerIDs = nil },
		"a node missing": func(s *Snapshot) { delete(s.ServerIDs, "b") },
		"a stranger":     func(s *Snapshot) { s.ServerIDs["c"] = 2 },
		"shared":         func(s *Snapshot) { s.ServerIDs["b"] = 1 },
		"zero":           func(s *Snapshot) { s.ServerIDs["a"] = 0 },
		"not below next": func(s *Snapshot) { s.NextServerID = 2 },
	} {
		s := base()
		change(s)
		if _, err := s.Placement(TableSource{}); !errors.Is(err, ErrInvalidServerIDs) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseSnapshotRefusals(t *testing.T) {
	ok := map[string]any{"config": map[string]any{"algorithm": "ring"}, "nodes": []any{}, "fingerprint": "0000000000000000000000000000000000000000000000000000000000000000"}
	for name, c := range map[string]struct {
		change func(map[string]any)
		want   error
	}{
		"no fingerprint": {func(m map[string]any) { delete(m, "fingerprint") }, ErrInvalidSnapshot},
		"uppercase fingerprint": {func(m map[string]any) {
			m["fingerprint"] = "A000000000000000000000000000000000000000000000000000000000000000"
		}, ErrInvalidSnapshot},
		"no nodes":       {func(m map[string]any) { delete(m, "nodes") }, ErrInvalidSnapshot},
		"bad config":     {func(m map[string]any) { m["config"] = map[string]any{"algorithm": "chord"} }, ErrUnknownAlgorithm},
		"bad node":       {func(m map[string]any) { m["nodes"] = []any{map[string]any{"id": "-x"}} }, ErrInvalidNodeID},
		"bad moves":      {func(m map[string]any) { m["table_moves"] = "not base64!" }, ErrInvalidTable},
		"bad buckets":    {func(m map[string]any) { m["buckets"] = []any{1} }, ErrInvalidBucketOrder},
		"bad server ids": {func(m map[string]any) { m["server_ids"] = []any{} }, ErrInvalidJSON},
	} {
		doc := map[string]any{}
		for k, v := range ok {
			doc[k] = v
		}
		c.change(doc)
		data, _ := json.Marshal(doc)
		if _, err := ParseSnapshot(data); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := ParseSnapshot([]byte(`{"config": {}, "nodes": [], "fingerprint": "` + ok["fingerprint"].(string) + `"} trailing`)); !errors.Is(err, ErrInvalidJSON) {
		t.Errorf("trailing data: %v", err)
	}
}
