package placement

import (
	"errors"
	"reflect"
	"testing"
)

// envoy_ring_hash (spec 5.10.4 and 9.1): the addresses an xDS endpoint can
// have, the order of the checks, and decoding an encoding.

// TestEnvoyAddresses: an address is an xDS endpoint's when it reads back
// as Rust's SocketAddr writes it (which Envoy's spelling is). The
// verdicts are Rust's, from parsing each and comparing its Display.
func TestEnvoyAddresses(t *testing.T) {
	for address, ok := range map[string]bool{
		"10.0.0.1:8080":              true,
		"1.2.3.4:65535":              true,
		"[2001:db8::1]:8080":         true,
		"[::1]:80":                   true,
		"[::]:80":                    true,
		"[::ffff:1.2.3.4]:80":        true,
		"[::ffff:0.0.0.0]:80":        true,
		"[::ffff:255.255.255.255]:1": true,
		"[::102:304]:80":             true,
		"[1:0:0:1::1]:80":            true,
		"[1::]:80":                   true,
		"[::2:0:0]:80":               true,
		"[0:0:1::]:80":               true,
		"[0:1:2:3:4:5:6:7]:80":       true,
		"[2001:db8:0:1:1:1:1:1]:80":  true,
		"[::ffff:102:304]:80":        false, // Rust writes ::ffff:1.2.3.4
		"[::1.2.3.4]:80":             false, // Rust writes ::102:304
		"[::0.0.0.1]:80":             false,
		"[::ffff:0:0]:80":            false,
		"[1:0:0:1:0:0:0:1]:80":       false, // the longer run of zeros is compressed
		"[1::1:0:0:0:1]:80":          false,
		"[2001:db8::1:1:1:1:1]:80":   false, // a single zero is not
		"[0:0:0:0:0:0:0:1]:80":       false,
		"[1:0::]:80":                 false,
		"[::0:1:2:3:4:5:6]:80":       false,
		"[2001:DB8::1]:80":           false, // lowercase
		"[fe80::1%1]:80":             false, // no zone
		"[fe80::1%eth0]:80":          false,
		"[::ffff:1.2.3.4%1]:80":      false,
		"010.0.0.1:80":               false,
		"1.2.3.4:080":                false,
		"1.2.3.4:0":                  false,
		"1.2.3.4:65536":              false,
		"1.2.3.4":                    false,
		"[1.2.3.4]:80":               false,
		"2001:db8::1:80":             false,
		"cache.local:11211":          false, // EDS resolves no host names
		"localhost:80":               false,
	} {
		if got := envoyAddressProblem(address) == ""; got != ok {
			t.Errorf("%s: accepted %v, want %v (%s)", address, got, ok, envoyAddressProblem(address))
		}
	}
}

func TestEnvoyChecksInOrder(t *testing.T) {
	envoy := DefaultConfig(EnvoyRingHash)
	drained := func(n Node) Node { n.State = Draining; return n }
	keyed := func(n Node, key string) Node { n.HashKey = key; return n }
	a, b := endpoint("a", 1, "10.0.0.1:80"), endpoint("b", 1, "10.0.0.2:80")
	tiny := endpoint("t", 1, "10.0.0.9:80")
	tiny.Ramp = 1
	// With two nodes of weight 1,000,000 the total is above 2^32, and
	// tiny's share of 2^31 comes to 0.
	heavy, heavy2 := endpoint("z", 1_000_000, "10.0.0.8:80"), endpoint("y", 1_000_000, "10.0.0.7:80")
	for name, c := range map[string]struct {
		nodes []Node
		want  Kind
	}{
		// Check 3a: missing addresses first, then every node's address.
		"missing before a draining node's bad address": {[]Node{drained(endpoint("a", 1, "h:80")), NewNode("b")}, ErrMissingAddress},
		"a draining node's address":                    {[]Node{a, drained(endpoint("c", 1, "cache:80"))}, ErrAddressNotServer},
		"a bad address before a shared label":          {[]Node{a, keyed(endpoint("c", 1, "[::1.2.3.4]:80"), "a")}, ErrAddressNotServer},
		"a shared label before a shared address":       {[]Node{a, keyed(endpoint("c", 1, "10.0.0.1:80"), "a")}, ErrEndpointKeyTaken},
		"a shared address before a share too small":    {[]Node{a, endpoint("c", 1, "10.0.0.1:80"), tiny, heavy, heavy2}, ErrDuplicateAddress},
		"a share too small":                            {[]Node{a, tiny, heavy, heavy2}, ErrWeightShareTooSmall},
	} {
		if err := buildErr(envoy, c.nodes, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	// Only active nodes must differ: a draining node may keep the label
	// and the address of the node replacing it, and needs no address.
	replacement := keyed(endpoint("replacement", 1, "10.0.0.1:80"), "a")
	p := mustBuild(t, envoy, []Node{drained(a), replacement, b, drained(NewNode("gone"))}, nil)
	q := mustBuild(t, envoy, []Node{a, b}, nil)
	for _, k := range propertyKeys(200) {
		if owner(p, string(k)) == "replacement" != (owner(q, string(k)) == "a") {
			t.Fatalf("key %s: the replacement does not own what a owned", k)
		}
	}
	// Ramps are taken (2.4 check 4 does not name envoy_ring_hash).
	ramped := b
	ramped.Ramp = 19_661
	if _, err := Build(envoy, []Node{a, ramped}, nil); err != nil {
		t.Errorf("ramped: %v", err)
	}
}

// TestEnvoyDecode: a thin client reads the ring from the encoding alone,
// which carries no label and no address, and refuses entries out of
// position order or a hash envoy_ring_hash does not take.
func TestEnvoyDecode(t *testing.T) {
	p := loadVector(t, vectorsDir+"/envoy_ring_hash-two-hosts.json").build(t)
	good := p.Encode()
	q, err := decodeOwn(good)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Points(), p.Points()) || q.Nodes()[0].Address != "" || q.KeyHash([]byte("key-1")) != 15758211584279190174 {
		t.Errorf("decoded %v", q.Points())
	}
	entry := func(b []byte, i int) []byte { return b[len(b)-(4-i)*12:][:12] }
	for name, change := range map[string]func([]byte) []byte{
		"entries swapped": func(b []byte) []byte {
			e0, e1 := append([]byte(nil), entry(b, 0)...), append([]byte(nil), entry(b, 1)...)
			copy(entry(b, 0), e1)
			copy(entry(b, 1), e0)
			return b
		},
		"an entry past the nodes": func(b []byte) []byte { entry(b, 2)[8] = 2; return b },
		"xxh3":                    func(b []byte) []byte { b[9] = byte(Xxh3); return b },
		"one entry too many":      func(b []byte) []byte { b[len(b)-4*12-4] = 5; return b },
	} {
		if _, err := decodeOwn(change(append([]byte(nil), good...))); !errors.Is(err, ErrInvalidEncoding) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Equal positions may name their nodes in either order (label order,
	// which the encoding cannot show), where ring's must ascend by index.
	tied := append([]byte(nil), good...)
	copy(entry(tied, 1)[:8], entry(tied, 0)[:8])
	entry(tied, 0)[8], entry(tied, 1)[8] = 1, 0
	r, err := decodeOwn(tied)
	if err != nil {
		t.Fatal(err)
	}
	if pts := r.Points(); pts[0].Position != pts[1].Position || pts[0].ID != "e-81" || pts[1].ID != "e-80" {
		t.Errorf("a tie decodes as %v", pts)
	}
	if h, _ := r.lay.ownerIndex(r.Points()[0].Position); h != 1 {
		t.Errorf("a tie is owned by node %d, the first entry's is 1", h)
	}
	asRing := append([]byte(nil), tied...)
	asRing[8], asRing[9] = byte(Ring), byte(Xxh3)
	if _, err := decodeOwn(asRing); !errors.Is(err, ErrInvalidEncoding) {
		t.Errorf("as a ring: %v", err)
	}
}
