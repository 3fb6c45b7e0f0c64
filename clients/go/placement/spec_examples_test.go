package placement

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// The worked examples of docs/placement-spec.md (sections 5, 6, 9, 10),
// produced by the reference implementation (spec 12).

func node(id string, weight int) Node {
	n := NewNode(id)
	n.Weight = weight
	return n
}

func mustBuild(t *testing.T, c Config, nodes []Node, stored *Stored) *Placement {
	t.Helper()
	p, err := Build(c, nodes, stored)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// abc is the spec's a w1, b w1, c w2 under algorithm a.
func abc(t *testing.T, c Config) *Placement {
	return mustBuild(t, c, []Node{node("a", 1), node("b", 1), node("c", 2)}, nil)
}

func owner(p *Placement, key string) string {
	o, _ := p.OwnerString(key)
	return o
}

func list(p *Placement, key string, r int) string {
	return strings.Join(p.PreferenceList([]byte(key), r), ",")
}

func units(p *Placement) []string {
	var out []string
	for _, n := range p.Ownership().Nodes {
		out = append(out, n.Units.String())
	}
	return out
}

func TestRingPointsAndRamps(t *testing.T) {
	in := []byte("\x06\x00\x00\x00node-a\x00\x00\x00\x00")
	if h := hash64(Xxh3, in); h != 0xf2fffe2fa1fb92f0 {
		t.Errorf("point 0: %#x", h)
	}
	in[len(in)-4] = 1
	if h := hash64(Xxh3, in); h != 0xddeae1a3581b2e6b {
		t.Errorf("point 1: %#x", h)
	}
	n := node("n", 2)
	n.Ramp = 19_661
	if c := ringPointCount(160, &n); c != 97 {
		t.Errorf("weight 2 at ramp 19661: %d points, want 97", c)
	}
	n.Weight, n.Ramp = 1, 1
	if c := ringPointCount(160, &n); c != 1 {
		t.Errorf("ramp 1: %d points, want at least 1", c)
	}
}

func TestMaglevExample(t *testing.T) {
	for label, want := range map[string][2]uint64{"a": {6, 1}, "b": {4, 3}, "c": {1, 2}} {
		if o, s := maglevPermutation(label, 7); o != want[0] || s != want[1] {
			t.Errorf("%s: offset/skip %d/%d, want %v", label, o, s, want)
		}
	}
	c := DefaultConfig(Maglev)
	c.TableSize = 7
	p := abc(t, c)
	if got := strings.Join(p.MaglevTable(), ""); got != "accbbca" {
		t.Errorf("table %s, want accbbca", got)
	}
	if owner(p, "hello") != "c" || list(p, "hello", 3) != "c,b,a" {
		t.Errorf("hello: %s %s", owner(p, "hello"), list(p, "hello", 3))
	}
	if u := units(p); !reflect.DeepEqual(u, []string{"2", "2", "3"}) {
		t.Errorf("units %v", u)
	}
}

func TestJumpExamples(t *testing.T) {
	if JumpHash(256, 1024) != 520 || JumpHash(0xdeadbeef, 100) != 87 || JumpHash(0, 1) != 0 {
		t.Error("jump test values")
	}
	p := abc(t, DefaultConfig(Jump))
	if got := p.BucketOrder(); !reflect.DeepEqual(got, []BucketRun{{"a", 1}, {"b", 1}, {"c", 2}}) || owner(p, "hello") != "a" {
		t.Errorf("initial order %v, hello → %s", got, owner(p, "hello"))
	}
	hello := uint64(0x9555e8555c62dcfd)
	if fmix64(hello+jumpRehash) != 0x56f1a10a2abd675b {
		t.Error("re-hash of hello")
	}
	q := mustBuild(t, DefaultConfig(Jump), []Node{node("b", 1), node("c", 2)}, &Stored{Buckets: []BucketRun{{"", 1}, {"b", 1}, {"c", 2}}})
	if owner(q, "hello") != "c" {
		t.Errorf("after a's removal hello → %s, want c", owner(q, "hello"))
	}
	// 9.3's encodings.
	wantHex := "52494e4744504c01" + "04010000" + "03000000" + "03000000" +
		"016100" + "01000000" + "016200" + "01000000" + "016300" + "02000000" +
		"04000000" + "00000000" + "01000000" + "02000000" + "02000000"
	if got := hex.EncodeToString(p.Encode()); got != wantHex {
		t.Errorf("encoding %s", got)
	}
	if p.Fingerprint() != "b40c22a1728f6070c5a60ae894827c7a3d789974aed4564bb24aed2e2d5e4795" {
		t.Errorf("fingerprint %s", p.Fingerprint())
	}
	if got := hex.EncodeToString(q.Encode()); !strings.HasSuffix(got, "04000000ffffffff000000000100000001000000") {
		t.Errorf("encoding with a hole %s", got)
	}
	if q.Fingerprint() != "bdc6f1f9eb6cb3e8c4e18953d80e4f51d42413163dfcb803ac74b21a40e428a1" {
		t.Errorf("fingerprint with a hole %s", q.Fingerprint())
	}
}

func TestRendezvousExamples(t *testing.T) {
	for x, want := range map[uint64]uint64{1: 0, 2: 1 << 32, 3: 0x195c01a39, 10: 0x35269e12f, 1 << 63: 0x3f00000000} {
		if got := log2Q32(x - 1); got != want {
			t.Errorf("L(%d) = %#x, want %#x", x, got, want)
		}
	}
	if log2Q32(1<<64-2) != 0x3fffffffff || log2Q32(1<<64-1) != 0x4000000000 {
		t.Error("L(2^64 − 1) or L(2^64)")
	}
	nhA, nhB := hash64(Xxh3, []byte("a")), hash64(Xxh3, []byte("b"))
	if nhA != 0xe6c632b61e964e1f || nhB != 0x575a0b1c44d8843f {
		t.Errorf("label hashes %#x %#x", nhA, nhB)
	}
	k := uint64(0x9555e8555c62dcfd)
	if fmix64(k^nhA) != 0x26084b71cf35724e || fmix64(k^nhB) != 0xa350d25491afd8d0 {
		t.Error("draws")
	}
	if rendezvousCost(0x26084b71cf35724e) != 11814780198 || rendezvousCost(0xa350d25491afd8d0) != 2785201421 {
		t.Error("costs")
	}
	two := mustBuild(t, DefaultConfig(Rendezvous), []Node{node("a", 1), node("b", 1)}, nil)
	if owner(two, "hello") != "b" {
		t.Errorf("hello → %s, want b", owner(two, "hello"))
	}
	p := abc(t, DefaultConfig(Rendezvous))
	for key, want := range map[string]string{"hello": "c,b,a", "": "a,c,b", "user:42": "c,a,b", "key-7": "a,b,c"} {
		if got := list(p, key, 3); got != want {
			t.Errorf("%q: %s, want %s", key, got, want)
		}
	}
	if u := units(p); !reflect.DeepEqual(u, []string{"1", "1", "2"}) || p.Ownership().TotalUnits.String() != "4" {
		t.Errorf("units %v", u)
	}
	empty := mustBuild(t, DefaultConfig(Rendezvous), nil, nil)
	if got := hex.EncodeToString(empty.Encode()); got != "52494e4744504c01050100000300000000000000" {
		t.Errorf("empty encoding %s", got)
	}
	if o, ok := empty.OwnerString("x"); ok || o != "" || len(empty.PreferenceList([]byte("x"), 3)) != 0 {
		t.Error("an empty placement owns nothing")
	}
	if o := empty.Ownership(); o.Basis != "weights" || o.TotalUnits.Sign() != 0 || len(o.Nodes) != 0 || o.MaxOverMean != 0 {
		t.Errorf("empty ownership %+v", o)
	}
}

func TestTableExamples(t *testing.T) {
	c := DefaultConfig(Table)
	c.Partitions = 256
	rows := make([][]string, 256)
	for i := range rows {
		rows[i] = []string{"cache-a"}
	}
	p := mustBuild(t, c, []Node{NewNode("cache-a")}, &Stored{TableRows: rows})
	l := p.lay.(*tableLayout)
	if uint64(0x9555e8555c62dcfd)>>l.shift != 149 || uint64(0x2d06800538d394c2)>>l.shift != 45 {
		t.Error("partitions of hello and the empty key")
	}
	enc := p.Encode()
	if hex.EncodeToString(enc[:38]) != "52494e4744504c01060100000300000001000000"+"0763616368652d610001000000"+"0001000001" || len(enc) != 550 {
		t.Errorf("encoding %x… (%d bytes)", enc[:38], len(enc))
	}
	if p.Fingerprint() != "2c3c5cda3a57b7ee3781d676fdf8fc8ccfa3729fb44c88c3f7b33acd1f97632d" {
		t.Errorf("fingerprint %s", p.Fingerprint())
	}
	empty := mustBuild(t, DefaultConfig(Table), nil, nil)
	if hex.EncodeToString(empty.Encode()) != "52494e4744504c01060100000300000000000000"+"0000010000" {
		t.Errorf("empty encoding %x", empty.Encode())
	}
	if _, ok := empty.OwnerString("x"); ok || len(empty.PreferenceList([]byte("x"), 5)) != 0 {
		t.Error("an empty table owns nothing")
	}
}

func TestPreferenceSelectionExamples(t *testing.T) {
	walkOf := func(order ...uint32) func(func(uint32) bool) {
		return func(visit func(uint32) bool) {
			for _, n := range order {
				if !visit(n) {
					return
				}
			}
		}
	}
	// 6.2: a(z1), d(z1), b(z2) with R = 3, two zones → [a, b, d].
	if got := selectReplicas(walkOf(0, 2, 1), 3, 3, []int32{0, 1, 0}, 2); !reflect.DeepEqual(got, []uint32{0, 1, 2}) {
		t.Errorf("zones: %v", got)
	}
	// Table rows [a,b], [c,a], [b,d] give [a,b,c,d] for R = 4.
	if got := selectReplicas(walkOf(0, 1, 2, 0, 1, 3), 4, 4, nil, 0); !reflect.DeepEqual(got, []uint32{0, 1, 2, 3}) {
		t.Errorf("table: %v", got)
	}
}

func TestWorkedExampleRingWithZones(t *testing.T) {
	c := DefaultConfig(Ring)
	c.VnodesPerWeight, c.ReplicationFactor, c.ZoneAware = 2, 2, true
	b := node("b", 2)
	b.Zone, b.HashKey = "z2", "b-old"
	a, cc, d := node("a", 1), node("c", 1), node("d", 1)
	a.Zone, cc.Zone, cc.State, d.Zone = "z1", "z1", Draining, "z1"
	p := mustBuild(t, c, []Node{b, a, cc, d}, nil)
	want := []Point{
		{0x033fb1030c27875c, "b"}, {0x332d8fde124825df, "a"}, {0x8eba5b899f433b93, "b"}, {0x93b35c5ec6ea75e5, "d"},
		{0x98123f6cec13a4c3, "a"}, {0xa6e2e7cd96b9ab4c, "d"}, {0xb4ce337a8a340004, "b"}, {0xdd00318079a551cb, "b"},
	}
	if got := p.Points(); !reflect.DeepEqual(got, want) {
		t.Errorf("points %v", got)
	}
	for key, w := range map[string]struct {
		hash uint64
		list string
	}{
		"hello": {0x9555e8555c62dcfd, "a,b,d"}, "": {0x2d06800538d394c2, "a,b,d"},
		"user:42": {0x9fc1e605fa7174aa, "d,b,a"}, "key-7": {0xe683dd62c3f8ac4f, "b,a,d"},
	} {
		if h, l := p.KeyHash([]byte(key)), list(p, key, 3); h != w.hash || l != w.list || owner(p, key) != l[:1] {
			t.Errorf("%q: %#x %s, want %#x %s", key, h, l, w.hash, w.list)
		}
	}
	if u := units(p); !reflect.DeepEqual(u, []string{"3768600195400060257", "13252287072643379652", "1425856805666111707"}) {
		t.Errorf("units %v", u)
	}
	if p.Ownership().TotalUnits.String() != "18446744073709551616" {
		t.Error("total units")
	}
	if p.Fingerprint() != "b19d4a0a0eddfd52d0b31587a9fbe503d15dd1a56221bce0739a4772d583811f" {
		t.Errorf("fingerprint %s", p.Fingerprint())
	}
	prefix := "52494e4744504c01" + "01010100" + "02000000" + "03000000" + "0161" + "027a31" + "01000000" + "0162" + "027a32" + "02000000" +
		"0164" + "027a31" + "01000000" + "08000000" + "5c87270c03b13f03" + "01000000"
	if got := hex.EncodeToString(p.Encode()); !strings.HasPrefix(got, prefix) {
		t.Errorf("encoding %s", got[:len(prefix)])
	}
}

func TestKetamaExample(t *testing.T) {
	p := mustBuild(t, DefaultConfig(Ketama), []Node{node("a", 1), node("b", 1)}, nil)
	pts := p.Points()
	if len(pts) != 320 || !reflect.DeepEqual(pts[:3], []Point{{3747649, "a"}, {35374473, "a"}, {61840307, "a"}}) {
		t.Errorf("%d points, first %v", len(pts), pts[:3])
	}
	if p.KeyHash([]byte("hello")) != 708854109 || owner(p, "hello") != "a" || p.KeyHash(nil) != 3649838548 || owner(p, "") != "b" {
		t.Error("hello and the empty key")
	}
}

func TestNginxPoints(t *testing.T) {
	n := node("n", 3)
	n.Address = "10.0.0.1:11211"
	p := mustBuild(t, DefaultConfig(Nginx), []Node{n}, nil)
	pts := p.Points()
	var has0, has1 bool
	for _, pt := range pts {
		has0 = has0 || pt.Position == 1016082558
		has1 = has1 || pt.Position == 3442865372
	}
	if len(pts) != 480 || !has0 || !has1 {
		t.Errorf("%d points; q0 %v q1 %v", len(pts), has0, has1)
	}
}

func TestHaproxyPointKey(t *testing.T) {
	p := mustBuild(t, DefaultConfig(Haproxy), []Node{NewNode("a")}, nil)
	pts := p.Points()
	found := false
	for _, pt := range pts {
		found = found || pt.Position == 0x49c2008b // id 1, k = 0
	}
	if len(pts) != 16 || !found {
		t.Errorf("%d points, full_hash(4096) found: %v", len(pts), found)
	}
}
