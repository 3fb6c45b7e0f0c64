package placement

import (
	"errors"
	"strings"
	"testing"
)

// Refusals: each input spec 2.4 refuses gives its kind, matched with
// errors.Is and read with errors.As, and the first failure in 2.4's order.

func buildErr(c Config, nodes []Node, stored *Stored) error {
	_, err := Build(c, nodes, stored)
	return err
}

func TestErrorsMatchTheirKind(t *testing.T) {
	err := buildErr(DefaultConfig(Ring), []Node{NewNode("a"), NewNode("a")}, nil)
	var e *Error
	if !errors.Is(err, ErrDuplicateNodeID) || !errors.As(err, &e) || e.Kind != ErrDuplicateNodeID || errors.Is(err, ErrInvalidNodeID) {
		t.Fatalf("duplicate ids: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "DuplicateNodeId: ") {
		t.Errorf("message %q", err)
	}
}

func TestNodeAndConfigRefusals(t *testing.T) {
	withWeight := func(w int) Node { n := NewNode("a"); n.Weight = w; return n }
	withRamp := func(r int) Node { n := NewNode("a"); n.Ramp = r; return n }
	maglev := func(size int) Config { c := DefaultConfig(Maglev); c.TableSize = size; return c }
	ring := DefaultConfig(Ring)
	for name, c := range map[string]struct {
		config Config
		nodes  []Node
		want   Kind
	}{
		"empty id":          {ring, []Node{NewNode("")}, ErrEmptyNodeID},
		"leading dash":      {ring, []Node{NewNode("-a")}, ErrInvalidNodeID},
		"id of 129 bytes":   {ring, []Node{NewNode(strings.Repeat("x", 129))}, ErrInvalidNodeID},
		"weight 0":          {ring, []Node{withWeight(0)}, ErrWeightOutOfRange},
		"weight 1000001":    {ring, []Node{withWeight(1_000_001)}, ErrWeightOutOfRange},
		"ramp 0":            {ring, []Node{withRamp(0)}, ErrRampOutOfRange},
		"ramp 65537":        {ring, []Node{withRamp(65_537)}, ErrRampOutOfRange},
		"control in key":    {ring, []Node{{ID: "a", HashKey: "a\x7fb", Weight: 1, Ramp: FullRamp}}, ErrInvalidHashKey},
		"bad zone":          {ring, []Node{{ID: "a", Zone: "z one", Weight: 1, Ramp: FullRamp}}, ErrInvalidZone},
		"space in address":  {ring, []Node{{ID: "a", Address: "a b:1", Weight: 1, Ramp: FullRamp}}, ErrInvalidAddress},
		"table_size 3 < 4":  {maglev(3), []Node{NewNode("a"), NewNode("b"), NewNode("c"), NewNode("d")}, ErrTableSizeOutOfRange},
		"table_size 4":      {maglev(4), nil, ErrTableSizeNotPrime},
		"table_size 2^24+1": {maglev(1<<24 + 1), nil, ErrTableSizeOutOfRange},
		"zone missing":      {func() Config { c := ring; c.ZoneAware = true; return c }(), []Node{NewNode("a")}, ErrMissingZone},
		"point cap":         {func() Config { c := ring; c.VnodesPerWeight = 10_000; return c }(), []Node{withWeight(1000)}, ErrTooManyPoints},
		"ketama ramp":       {DefaultConfig(Ketama), []Node{withRamp(5)}, ErrRampNotSupported},
		"haproxy weight":    {DefaultConfig(Haproxy), []Node{withWeight(257)}, ErrWeightTooHighForProxy},
		"nginx no address":  {DefaultConfig(Nginx), []Node{NewNode("a")}, ErrMissingAddress},
		"nginx unix":        {DefaultConfig(Nginx), []Node{{ID: "a", Address: "unix:80", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"nginx port 0":      {DefaultConfig(Nginx), []Node{{ID: "a", Address: "h:0", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"nginx shared":      {DefaultConfig(Nginx), []Node{{ID: "a", Address: "h:1", Weight: 1, Ramp: FullRamp}, {ID: "b", Address: "h:1", Weight: 1, Ramp: FullRamp}}, ErrDuplicateAddress},
		"twemproxy port 01": {DefaultConfig(Twemproxy), []Node{{ID: "a", Address: "h:01", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"twemproxy name":    {DefaultConfig(Twemproxy), []Node{{ID: "a", Address: "h:1", HashKey: "a#b", Weight: 1, Ramp: FullRamp}}, ErrInvalidServerName},
		"twemproxy taken":   {DefaultConfig(Twemproxy), []Node{{ID: "a", Address: "h:11211", Weight: 1, Ramp: FullRamp}, {ID: "b", Address: "x:1", HashKey: "h", Weight: 1, Ramp: FullRamp}}, ErrServerNameTaken},
		"envoy no address":  {DefaultConfig(EnvoyRingHash), []Node{NewNode("a")}, ErrMissingAddress},
		"envoy host name":   {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "cache.local:80", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"envoy uppercase":   {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "[2001:DB8::1]:80", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"envoy zone":        {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "[fe80::1%eth0]:80", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"envoy port 0":      {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "10.0.0.1:0", Weight: 1, Ramp: FullRamp}}, ErrAddressNotServer},
		"envoy label taken": {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "10.0.0.1:80", Weight: 1, Ramp: FullRamp}, {ID: "b", HashKey: "a", Address: "10.0.0.2:80", Weight: 1, Ramp: FullRamp}}, ErrEndpointKeyTaken},
		"envoy shared":      {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "10.0.0.1:80", Weight: 1, Ramp: FullRamp}, {ID: "b", Address: "10.0.0.1:80", Weight: 1, Ramp: FullRamp}}, ErrDuplicateAddress},
		"envoy tiny share":  {DefaultConfig(EnvoyRingHash), []Node{{ID: "a", Address: "10.0.0.1:80", Weight: 1, Ramp: 1}, {ID: "b", Address: "10.0.0.2:80", Weight: 1_000_000, Ramp: FullRamp}}, ErrWeightShareTooSmall},
		"table without one": {DefaultConfig(Table), []Node{NewNode("a")}, ErrTableRequired},
	} {
		if err := buildErr(c.config, c.nodes, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		json string
		want Kind
	}{
		"unknown algorithm":   {`{"algorithm": "chord"}`, ErrUnknownAlgorithm},
		"unknown hash":        {`{"hash": "crc64"}`, ErrUnknownHash},
		"hash first":          {`{"hash": "crc64", "algorithm": "chord"}`, ErrUnknownHash},
		"ketama sha256":       {`{"algorithm": "ketama", "hash": "sha256"}`, ErrHashNotSupported},
		"ring sdbm":           {`{"hash": "sdbm"}`, ErrHashNotAccepted},
		"nginx md5":           {`{"algorithm": "nginx", "hash": "md5"}`, ErrHashNotAccepted},
		"ring avalanche":      {`{"avalanche": true}`, ErrAvalancheNotSupported},
		"ring hash tag":       {`{"hash_tag": "{}"}`, ErrHashTagNotSupported},
		"bad hash tag":        {`{"algorithm": "twemproxy", "hash_tag": "{"}`, ErrInvalidHashTag},
		"quote in tag":        {`{"algorithm": "twemproxy", "hash_tag": "{\""}`, ErrInvalidHashTag},
		"vnodes 0":            {`{"vnodes_per_weight": 0}`, ErrVnodesOutOfRange},
		"vnodes 2^40":         {`{"vnodes_per_weight": 1099511627776}`, ErrVnodesOutOfRange},
		"vnodes huge":         {`{"vnodes_per_weight": 99999999999999999999999}`, ErrVnodesOutOfRange},
		"replication 65":      {`{"replication_factor": 65}`, ErrReplicationOutOfRange},
		"ranges before hash":  {`{"hash": "sdbm", "replication_factor": 0}`, ErrReplicationOutOfRange},
		"partitions 300":      {`{"partitions": 300}`, ErrPartitionsOutOfRange},
		"partitions 2^21":     {`{"partitions": 2097152}`, ErrPartitionsOutOfRange},
		"vnodes 1.5":          {`{"vnodes_per_weight": 1.5}`, ErrInvalidJSON},
		"zone_aware 1":        {`{"zone_aware": 1}`, ErrInvalidJSON},
		"not an object":       {`[]`, ErrInvalidJSON},
		"repeated field":      {`{"hash": "md5", "hash": "xxh3"}`, ErrInvalidJSON},
		"maglev size 10":      {`{"algorithm": "maglev", "table_size": 10}`, ErrTableSizeNotPrime},
		"envoy xxh3":          {`{"algorithm": "envoy_ring_hash", "hash": "xxh3"}`, ErrHashNotAccepted},
		"ring xxh64":          {`{"hash": "xxh64"}`, ErrHashNotAccepted},
		"ring size 0":         {`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 0}`, ErrRingSizeOutOfRange},
		"ring size 2^23+1":    {`{"algorithm": "envoy_ring_hash", "maximum_ring_size": 8388609}`, ErrRingSizeOutOfRange},
		"ring size -1":        {`{"algorithm": "envoy_ring_hash", "maximum_ring_size": -1}`, ErrRingSizeOutOfRange},
		"ring size huge":      {`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 99999999999999999999999}`, ErrRingSizeOutOfRange},
		"ring size 1.5":       {`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 1.5}`, ErrInvalidJSON},
		"ring sizes always":   {`{"algorithm": "ring", "maximum_ring_size": 0}`, ErrRingSizeOutOfRange},
		"ring sizes swapped":  {`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 4097}`, ErrRingSizesInverted},
		"range before order":  {`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 5000, "maximum_ring_size": 0}`, ErrRingSizeOutOfRange},
		"hash before sizes":   {`{"algorithm": "envoy_ring_hash", "hash": "md5", "minimum_ring_size": 0}`, ErrHashNotAccepted},
		"counts before sizes": {`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 0, "partitions": 3}`, ErrPartitionsOutOfRange},
	} {
		if _, err := ParseConfig([]byte(c.json)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	// Defaults follow the algorithm chosen; table_size is not checked
	// outside maglev and envoy_maglev; unknown fields are ignored.
	c, err := ParseConfig([]byte(`{"algorithm": "haproxy", "table_size": 10, "membership": {"mode": "auto"}}`))
	if err != nil || c.Hash != Sdbm || !c.Avalanche || c.ReplicationFactor != 3 || c.Partitions != 65_536 {
		t.Errorf("haproxy defaults: %+v %v", c, err)
	}
	// envoy_ring_hash takes xxh64 and ring sizes 1,024 to 4,096 by
	// default; the sizes are read under any algorithm, and only
	// envoy_ring_hash orders them.
	c, err = ParseConfig([]byte(`{"algorithm": "envoy_ring_hash"}`))
	if err != nil || c.Hash != Xxh64 || c.MinimumRingSize != 1024 || c.MaximumRingSize != 4096 || c.Avalanche {
		t.Errorf("envoy_ring_hash defaults: %+v %v", c, err)
	}
	c, err = ParseConfig([]byte(`{"algorithm": "envoy_ring_hash", "minimum_ring_size": 8388608, "maximum_ring_size": 8388608}`))
	if err != nil || c.MinimumRingSize != MaxRingSize || c.MaximumRingSize != MaxRingSize {
		t.Errorf("ring sizes 2^23: %+v %v", c, err)
	}
	c, err = ParseConfig([]byte(`{"minimum_ring_size": 5000, "maximum_ring_size": 10}`))
	if err != nil || c.Algorithm != Ring || c.MinimumRingSize != 5000 || c.MaximumRingSize != 10 {
		t.Errorf("ring sizes under ring: %+v %v", c, err)
	}
	if d := DefaultConfig(EnvoyRingHash); d.Hash != Xxh64 || d.MinimumRingSize != DefaultMinimumRingSize || d.MaximumRingSize != DefaultMaximumRingSize || d.Validate() != nil {
		t.Errorf("DefaultConfig: %+v", d)
	}
}

func TestNodeJSONRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		json string
		want Kind
	}{
		"no id":             {`{"weight": 2}`, ErrEmptyNodeID},
		"empty hash_key":    {`{"id": "a", "hash_key": ""}`, ErrInvalidHashKey},
		"empty zone":        {`{"id": "a", "zone": ""}`, ErrInvalidZone},
		"state":             {`{"id": "a", "state": "gone"}`, ErrInvalidState},
		"first bad field":   {`{"id": "a", "ramp": 0, "weight": 0}`, ErrRampOutOfRange},
		"weight as text":    {`{"id": "a", "weight": "2"}`, ErrInvalidJSON},
		"empty address":     {`{"id": "a", "address": ""}`, ErrInvalidAddress},
		"null is absent ok": {`{"id": "a", "zone": null, "weight": null}`, ""},
	} {
		n, err := ParseNode([]byte(c.json))
		if c.want == "" {
			if err != nil || n.Weight != 1 || n.Zone != "" || n.Ramp != FullRamp {
				t.Errorf("%s: %+v %v", name, n, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	// The first bad node in input order, whatever the config.
	if _, err := ParseNodes([]byte(`[{"id": "a"}, {"id": "b", "weight": 0}, {"id": ""}]`)); !errors.Is(err, ErrWeightOutOfRange) {
		t.Errorf("nodes: %v", err)
	}
}

func TestStoredStateRefusals(t *testing.T) {
	nodes := []Node{NewNode("a"), node("b", 2)}
	jump := DefaultConfig(Jump)
	for name, runs := range map[string][]BucketRun{
		"a stranger":     {{"a", 1}, {"c", 1}, {"b", 2}},
		"too few":        {{"a", 1}, {"b", 1}},
		"a last hole":    {{"a", 1}, {"b", 2}, {"", 1}},
		"negative count": {{"a", -1}},
	} {
		if err := buildErr(jump, nodes, &Stored{Buckets: runs}); !errors.Is(err, ErrInvalidBucketOrder) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if p := mustBuild(t, jump, nodes, &Stored{Buckets: []BucketRun{{"b", 1}, {"", 1}, {"a", 1}, {"b", 1}}}); p.BucketOrder()[1].ID != "" {
		t.Error("a hole inside the order is kept")
	}
	haproxy := DefaultConfig(Haproxy)
	for name, ids := range map[string]map[string]uint32{
		"missing": {"a": 1},
		"shared":  {"a": 1, "b": 1},
		"zero":    {"a": 0, "b": 1},
		"too big": {"a": 1, "b": MaxServerID + 1},
	} {
		if err := buildErr(haproxy, nodes, &Stored{ServerIDs: ids}); !errors.Is(err, ErrInvalidServerIDs) {
			t.Errorf("%s: %v", name, err)
		}
	}
	table := DefaultConfig(Table)
	table.Partitions = 256
	rows := func(row ...string) [][]string {
		out := make([][]string, 256)
		for i := range out {
			out[i] = row
		}
		return out
	}
	for name, stored := range map[string]*Stored{
		"twice in a row": {TableRows: rows("a", "a")},
		"a stranger":     {TableRows: rows("a", "c")},
		"short rows":     {TableRows: rows("a")},
		"few rows":       {TableRows: rows("a", "b")[:10]},
		"short body":     {TableBody: []byte{0, 1, 0, 0}},
		"wrong replicas": {TableBody: append([]byte{0, 1, 0, 0, 1}, make([]byte, 512)...)},
		"wrong count":    {TableBody: append([]byte{0, 2, 0, 0, 2}, make([]byte, 2048)...)},
	} {
		if err := buildErr(table, nodes, stored); !errors.Is(err, ErrInvalidTable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestBucketJSON(t *testing.T) {
	runs, err := ParseBuckets([]byte(`["a", "a", null, ["b", 3], [null, 2], "c"]`))
	want := []BucketRun{{"a", 2}, {"", 1}, {"b", 3}, {"", 2}, {"c", 1}}
	if err != nil || len(runs) != len(want) {
		t.Fatalf("%v %v", runs, err)
	}
	for i := range want {
		if runs[i] != want[i] {
			t.Errorf("run %d: %v, want %v", i, runs[i], want[i])
		}
	}
	for _, bad := range []string{`{}`, `[1]`, `[["a"]]`, `[["a", 0]]`, `[""]`, `[["a", 1.5]]`} {
		if _, err := ParseBuckets([]byte(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
