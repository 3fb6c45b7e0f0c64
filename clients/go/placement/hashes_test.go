package placement

import (
	"crypto/md5"
	"encoding/binary"
	"testing"
)

// The hash test values of spec 3.3 to 3.7.

func TestHash64Values(t *testing.T) {
	for _, c := range []struct {
		in                         string
		xxh3, md5, sha256, murmur3 uint64
		xxh64Seed0, xxh64Seed1     uint64
		md532                      uint32
	}{
		{"", 0x2d06800538d394c2, 0x04b2008fd98c1dd4, 0x141cfc9842c4b0e3, 0, 0xef46db3751d8e999, 0xd5afba1336a3be4b, 3649838548},
		{"hello", 0x9555e8555c62dcfd, 0x762a4bbc2a40415d, 0x0ea3b05fba4df22c, 0xcbd8a7b341bd9b02, 0x26c7827d889f6da3, 0x23dd71cb04d0a1b2, 708854109},
		{"node-a", 0xdadea24aa12481fe, 0x5ce83ab35b8aec6c, 0x0474205af00f5766, 0x44a5bcec4b0764bf, 0x05378e2c8885d70b, 0xf7f4751e959874ab, 1535831148},
	} {
		b := []byte(c.in)
		got := [...]uint64{hash64(Xxh3, b), hash64(MD5, b), hash64(SHA256, b), hash64(Murmur3, b), xxh64(b, 0), xxh64(b, 1), uint64(md5First32(b))}
		want := [...]uint64{c.xxh3, c.md5, c.sha256, c.murmur3, c.xxh64Seed0, c.xxh64Seed1, uint64(c.md532)}
		if got != want {
			t.Errorf("%q: %#x, want %#x", c.in, got, want)
		}
		// The hash xxh64, envoy_ring_hash's and envoy_maglev's, is XXH64
		// with seed 0.
		if h := hash64(Xxh64, b); h != c.xxh64Seed0 {
			t.Errorf("%q: xxh64 %#x, want %#x", c.in, h, c.xxh64Seed0)
		}
	}
	// murmur3 beyond one block, and a block plus a tail.
	if h := hash64(Murmur3, []byte("The quick brown fox jumps over the lazy dog")); h != 0xe34bbc7bbc071b6c {
		t.Errorf("murmur3 fox: %#x", h)
	}
	if h := hash64(Murmur3, []byte("0123456789abcdefX")); h != 0xcdebd2acb570d6f7 {
		t.Errorf("murmur3 17 bytes: %#x", h)
	}
	if fmix64(0) != 0 || fmix64(1) != 0xb456bcfc34c2cb2c {
		t.Errorf("fmix64: %#x %#x", fmix64(0), fmix64(1))
	}
}

func TestCRC32Values(t *testing.T) {
	for in, want := range map[string]uint32{"": 0, "hello": 907060870, "123456789": 0xcbf43926, "node-a": 2023312811} {
		if got := crc32IEEE([]byte(in)); got != want {
			t.Errorf("crc32(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestHaproxyHashValues(t *testing.T) {
	for _, c := range []struct {
		in                     string
		sdbm, djb2, wt6, crc32 uint32
	}{
		{"", 0, 0x1505, 0xf99a0360, 0},
		{"hello", 0x28d19932, 0x0f923099, 0xd2e6e6b7, 0x3610a686},
		{"node-a", 0x5921ae76, 0x1087a399, 0xb84aac1b, 0x78994dab},
	} {
		b := []byte(c.in)
		got := [4]uint32{hash32(Sdbm, b), hash32(Djb2, b), hash32(Wt6, b), hash32(CRC32, b)}
		if want := [4]uint32{c.sdbm, c.djb2, c.wt6, c.crc32}; got != want {
			t.Errorf("%q: %#x, want %#x", c.in, got, want)
		}
	}
	for in, want := range map[uint32]uint32{0: 0xab4ed927, 1: 0x348681b6, 4096: 0x49c2008b, sdbm([]byte("hello")): 0x7ae088a6} {
		if got := fullHash(in); got != want {
			t.Errorf("full_hash(%#x) = %#x, want %#x", in, got, want)
		}
	}
}

func TestTwemproxyPublishedValues(t *testing.T) {
	// nutcracker 0.5.0's own test values for "apple" (from libmemcached).
	want := map[Hash]uint32{
		OneAtATime: 2297466611, MD5: 3195025439, Crc32a: 2838417488, Fnv132: 67176023,
		Fnv1a32: 280767167, Fnv164: 473199127, Fnv1a64: 1488911807, Hsieh: 3738850110,
		Jenkins: 1442444624, Murmur: 4142305122,
	}
	if len(want) != len(twemproxyHashes) {
		t.Fatalf("%d values for %d hashes", len(want), len(twemproxyHashes))
	}
	for h, w := range want {
		if got := hash32(h, []byte("apple")); got != w {
			t.Errorf("%s(apple) = %d, want %d", h, got, w)
		}
	}
	// 0xFF enters fnv1a_64 sign-extended, as 0xFFFFFFFF.
	basis := uint32(0x84222325)
	if got, want := fnv1a64([]byte{0xff}), (basis^0xffffffff)*0x1b3; got != want {
		t.Errorf("fnv1a_64(ff) = %#x, want %#x", got, want)
	}
}

func TestKetamaDigestsAndPoints(t *testing.T) {
	for _, c := range []struct {
		w, total uint64
		n, want  int
	}{{1, 4, 4, 40}, {1, 10, 10, 40}, {1, 100, 100, 40}, {1, 61, 61, 39}, {1, 1001, 2, 0}} {
		if got := ketamaDigestCount(c.w, c.total, c.n); got != c.want {
			t.Errorf("digests(%d, %d, %d) = %d, want %d", c.w, c.total, c.n, got, c.want)
		}
	}
	d := md5.Sum([]byte("node-a-0"))
	want := [4]uint32{557956318, 2720864358, 2511631120, 2397260398}
	for k := range want {
		if got := binary.LittleEndian.Uint32(d[4*k:]); got != want[k] {
			t.Errorf("point %d of node-a-0: %d, want %d", k, got, want[k])
		}
	}
}

func TestTwemproxyPointCounts(t *testing.T) {
	for _, c := range []struct {
		weights []int
		want    []int
	}{
		{[]int{1}, []int{160}},
		{[]int{1, 1, 1}, []int{160, 160, 160}},
		{[]int{2, 1}, []int{212, 104}},
	} {
		nodes := make([]Node, len(c.weights))
		for i, w := range c.weights {
			nodes[i] = NewNode("n")
			nodes[i].Weight = w
		}
		if got := twemproxyPointCounts(nodes); !equalInts(got, c.want) {
			t.Errorf("weights %v: %v, want %v", c.weights, got, c.want)
		}
	}
	// 25 servers of weight 1: 156 each, where ketama gives 160.
	nodes := make([]Node, 25)
	for i := range nodes {
		nodes[i] = NewNode("n")
	}
	if got := twemproxyPointCounts(nodes)[0]; got != 156 {
		t.Errorf("25 servers: %d points each, want 156", got)
	}
}

func TestTwemproxyHashTag(t *testing.T) {
	for key, want := range map[string]string{
		"user:{42}:cart": "42", "a{b{c}d}": "b{c", "a}b{c}": "c", "a{}b": "a{}b", "a{b": "a{b", "ab": "ab",
	} {
		if got := string(taggedKey("{}", []byte(key))); got != want {
			t.Errorf("tagged(%q) = %q, want %q", key, got, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
