package placement

import "strconv"

// Algorithm is a placement algorithm (spec 2.1). Its value is its code in
// the canonical encoding (9.1).
type Algorithm uint8

// The eleven algorithms, valued as their encoding codes.
const (
	// Ring is the virtual-node ring with 64-bit positions (5.1).
	Ring Algorithm = 1
	// Ketama is libketama's continuum (5.2).
	Ketama Algorithm = 2
	// Maglev is the Maglev lookup table with Envoy's weighted fill (5.3).
	Maglev Algorithm = 3
	// Jump is jump consistent hash over a persisted bucket order (5.4).
	Jump Algorithm = 4
	// Rendezvous is weighted highest random weight in integers (5.5).
	Rendezvous Algorithm = 5
	// Table is a stored partition table (5.6).
	Table Algorithm = 6
	// Nginx is nginx's `hash $key consistent` (5.7).
	Nginx Algorithm = 7
	// Haproxy is HAProxy 2.6's `hash-type consistent` (5.8).
	Haproxy Algorithm = 8
	// Twemproxy is nutcracker 0.5.0's `distribution: ketama` (5.9).
	Twemproxy Algorithm = 9
	// EnvoyRingHash is the ring of Envoy's RING_HASH load balancer and of
	// gRPC's ring_hash, entry for entry (5.10).
	EnvoyRingHash Algorithm = 10
	// EnvoyMaglev is the table of Envoy's MAGLEV load balancer, slot for
	// slot: maglev's fill on the EDS weights ringd sends (5.11).
	EnvoyMaglev Algorithm = 11
)

// lastAlgorithm is the highest algorithm code.
const lastAlgorithm = EnvoyMaglev

var algorithmNames = [...]string{
	Ring: "ring", Ketama: "ketama", Maglev: "maglev", Jump: "jump", Rendezvous: "rendezvous",
	Table: "table", Nginx: "nginx", Haproxy: "haproxy", Twemproxy: "twemproxy",
	EnvoyRingHash: "envoy_ring_hash", EnvoyMaglev: "envoy_maglev",
}

// Algorithms lists every algorithm in code order.
func Algorithms() []Algorithm {
	return []Algorithm{Ring, Ketama, Maglev, Jump, Rendezvous, Table, Nginx, Haproxy, Twemproxy, EnvoyRingHash, EnvoyMaglev}
}

// String returns the algorithm's name as the JSON and the spec write it.
func (a Algorithm) String() string {
	if a.valid() {
		return algorithmNames[a]
	}
	return "Algorithm(" + strconv.Itoa(int(a)) + ")"
}

func (a Algorithm) valid() bool { return a >= Ring && a <= lastAlgorithm }

// ParseAlgorithm returns the algorithm named name, or ErrUnknownAlgorithm.
func ParseAlgorithm(name string) (Algorithm, error) {
	for a := Ring; a <= lastAlgorithm; a++ {
		if algorithmNames[a] == name {
			return a, nil
		}
	}
	return 0, errorf(ErrUnknownAlgorithm, "%q is not an algorithm", name)
}

// placesByAddress reports whether the algorithm hashes a node's address
// instead of its label, so that its encoding carries addresses (2.2, 9.1).
func (a Algorithm) placesByAddress() bool { return a == Nginx || a == Twemproxy }

// needsAddress reports whether every active node needs an address (2.4
// check 3a): the algorithms that place by it, and the xDS modes, whose
// nodes are endpoints (an address to connect to) placed by their label.
func (a Algorithm) needsAddress() bool { return a.placesByAddress() || a.isXDS() }

// isXDS reports whether a ring of the algorithm is served over xDS, its
// nodes sent as EDS endpoints with ringd's weights (5.10.1):
// envoy_ring_hash and envoy_maglev.
func (a Algorithm) isXDS() bool { return a == EnvoyRingHash || a == EnvoyMaglev }

// usesTableSize reports whether the algorithm fills a Maglev table of
// table_size slots (2.1): maglev and envoy_maglev.
func (a Algorithm) usesTableSize() bool { return a == Maglev || a == EnvoyMaglev }

// maxTableSize is the largest table_size the algorithm takes (2.1):
// Envoy's bound for envoy_maglev, 2^24 otherwise.
func (a Algorithm) maxTableSize() int {
	if a == EnvoyMaglev {
		return MaxEnvoyTableSize
	}
	return MaxTableSize
}

// takesRamps reports whether a node may be below full ramp (2.4 check 4).
func (a Algorithm) takesRamps() bool {
	return a == Ring || a == Rendezvous || a == Maglev || a.isXDS()
}

// Hash is a hash function (spec 3). Its value is its code in the canonical
// encoding (9.1).
type Hash uint8

// The hash functions, valued as their encoding codes.
const (
	// Xxh3 is XXH3-64 with seed 0 (3.1).
	Xxh3 Hash = 1
	// MD5 is MD5's first 8 bytes, little-endian (3.1); for ketama and
	// twemproxy keys its first 4 (3.2).
	MD5 Hash = 2
	// SHA256 is SHA-256's first 8 bytes, little-endian (3.1).
	SHA256 Hash = 3
	// Murmur3 is MurmurHash3_x64_128's h1 with seed 0 (3.1).
	Murmur3 Hash = 4
	// CRC32 is the standard CRC-32 (3.5), nginx's and one of HAProxy's.
	CRC32 Hash = 5
	// Sdbm is HAProxy's sdbm (3.6).
	Sdbm Hash = 6
	// Djb2 is HAProxy's djb2 (3.6).
	Djb2 Hash = 7
	// Wt6 is HAProxy's wt6 (3.6).
	Wt6 Hash = 8
	// Fnv1a64 is twemproxy's fnv1a_64, a 32-bit hash despite its name (3.7).
	Fnv1a64 Hash = 9
	// Fnv164 is twemproxy's fnv1_64 (3.7).
	Fnv164 Hash = 10
	// Fnv1a32 is twemproxy's fnv1a_32 (3.7).
	Fnv1a32 Hash = 11
	// Fnv132 is twemproxy's fnv1_32 (3.7).
	Fnv132 Hash = 12
	// Crc32a is twemproxy's crc32a, the standard CRC-32 (3.7).
	Crc32a Hash = 13
	// OneAtATime is twemproxy's one_at_a_time (3.7).
	OneAtATime Hash = 14
	// Murmur is twemproxy's murmur, MurmurHash2 (3.7).
	Murmur Hash = 15
	// Jenkins is twemproxy's jenkins, lookup3's hashlittle (3.7).
	Jenkins Hash = 16
	// Hsieh is twemproxy's hsieh, SuperFastHash (3.7).
	Hsieh Hash = 17
	// Xxh64 is classic XXH64 with seed 0 (3.2), the only hash of
	// envoy_ring_hash and envoy_maglev: Envoy's header hash policy and
	// gRPC's ring_hash hash with it.
	Xxh64 Hash = 18
)

var hashNames = [...]string{
	Xxh3: "xxh3", MD5: "md5", SHA256: "sha256", Murmur3: "murmur3", CRC32: "crc32",
	Sdbm: "sdbm", Djb2: "djb2", Wt6: "wt6", Fnv1a64: "fnv1a_64", Fnv164: "fnv1_64",
	Fnv1a32: "fnv1a_32", Fnv132: "fnv1_32", Crc32a: "crc32a", OneAtATime: "one_at_a_time",
	Murmur: "murmur", Jenkins: "jenkins", Hsieh: "hsieh", Xxh64: "xxh64",
}

// String returns the hash's name as the JSON and the spec write it.
func (h Hash) String() string {
	if h.valid() {
		return hashNames[h]
	}
	return "Hash(" + strconv.Itoa(int(h)) + ")"
}

func (h Hash) valid() bool { return h >= Xxh3 && h <= Xxh64 }

// ParseHash returns the hash named name, or ErrUnknownHash.
func ParseHash(name string) (Hash, error) {
	for h := Xxh3; h <= Xxh64; h++ {
		if hashNames[h] == name {
			return h, nil
		}
	}
	return 0, errorf(ErrUnknownHash, "%q is not a hash", name)
}

// The hashes each algorithm takes, its default first (2.1).
var (
	generalHashes   = []Hash{Xxh3, MD5, SHA256, Murmur3}
	ketamaHashes    = []Hash{MD5}
	nginxHashes     = []Hash{CRC32}
	haproxyHashes   = []Hash{Sdbm, Djb2, Wt6, CRC32}
	twemproxyHashes = []Hash{Fnv1a64, MD5, Crc32a, OneAtATime, Murmur, Jenkins, Hsieh, Fnv164, Fnv1a32, Fnv132}
	envoyHashes     = []Hash{Xxh64}
)

// AcceptedHashes returns the hashes a takes, its default first (2.1).
func (a Algorithm) AcceptedHashes() []Hash {
	var hs []Hash
	switch a {
	case Ketama:
		hs = ketamaHashes
	case Nginx:
		hs = nginxHashes
	case Haproxy:
		hs = haproxyHashes
	case Twemproxy:
		hs = twemproxyHashes
	case EnvoyRingHash, EnvoyMaglev:
		hs = envoyHashes
	default:
		hs = generalHashes
	}
	return append([]Hash(nil), hs...)
}

// DefaultHash returns the hash a ring of algorithm a gets when none is given.
func (a Algorithm) DefaultHash() Hash { return a.AcceptedHashes()[0] }

func (a Algorithm) accepts(h Hash) bool {
	for _, x := range a.AcceptedHashes() {
		if x == h {
			return true
		}
	}
	return false
}
