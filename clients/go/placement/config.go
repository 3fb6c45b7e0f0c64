package placement

// Limits of spec 2.1 and 2.4.
const (
	// MaxPoints caps the materialized size of a layout (2.4).
	MaxPoints = 1 << 23
	// MaxTableSize is the largest maglev table_size.
	MaxTableSize = 1 << 24
	// MaxEnvoyTableSize is the largest envoy_maglev table_size, Envoy's
	// bound on maglev_lb_config.table_size (a prime).
	MaxEnvoyTableSize = 5_000_011
	// DefaultTableSize is maglev's and envoy_maglev's table_size when none
	// is given.
	DefaultTableSize = 65_537
	// DefaultVnodesPerWeight is ring's points per unit of weight.
	DefaultVnodesPerWeight = 160
	// DefaultReplicationFactor is the default preference list length.
	DefaultReplicationFactor = 3
	// DefaultPartitions is table's partition count when none is given.
	DefaultPartitions = 1 << 16
	// DefaultMinimumRingSize is envoy_ring_hash's fewest ring entries
	// when none is given (Envoy's and gRPC's minimum_ring_size default).
	DefaultMinimumRingSize = 1024
	// DefaultMaximumRingSize is envoy_ring_hash's most ring entries when
	// none is given: gRPC's cap (GRPC_RING_HASH_CAP), which a gRPC client
	// applies to whatever it is sent.
	DefaultMaximumRingSize = 4096
	// MaxRingSize is the largest minimum_ring_size and maximum_ring_size,
	// Envoy's bound on both (2^23).
	MaxRingSize    = 1 << 23
	minPartitions  = 1 << 8
	maxPartitions  = 1 << 20
	maxVnodes      = 10_000
	maxReplication = 64
)

// Config is a ring config (spec 2.1). Build one with DefaultConfig, which
// fills in every default, then change what differs: the zero Config is
// not valid (its algorithm is none).
type Config struct {
	// Algorithm places the keys.
	Algorithm Algorithm
	// Hash hashes keys (and, for most algorithms, points); it must be one
	// the algorithm accepts (Algorithm.AcceptedHashes).
	Hash Hash
	// VnodesPerWeight is ring's points per unit of weight (1..=10,000;
	// validated whatever the algorithm).
	VnodesPerWeight int
	// TableSize is the table length of maglev, a prime in 2..=2^24, and
	// of envoy_maglev, a prime in 2..=5,000,011 (checked for those two
	// only).
	TableSize int
	// ReplicationFactor is the default preference list length (1..=64).
	ReplicationFactor int
	// ZoneAware spreads preference lists over zones first.
	ZoneAware bool
	// Partitions is table's partition count, a power of two in
	// 2^8..=2^20 (validated whatever the algorithm).
	Partitions int
	// Avalanche passes haproxy key hashes through HAProxy's full_hash;
	// true under any other algorithm is an error.
	Avalanche bool
	// HashTag is twemproxy's hash_tag, two characters such as "{}", or
	// "" for none; set under any other algorithm it is an error.
	HashTag string
	// MinimumRingSize is envoy_ring_hash's minimum_ring_size, 1..=2^23
	// and at most MaximumRingSize (validated whatever the algorithm; the
	// order only under envoy_ring_hash).
	MinimumRingSize int
	// MaximumRingSize is envoy_ring_hash's maximum_ring_size, 1..=2^23
	// (validated whatever the algorithm).
	MaximumRingSize int
}

// DefaultConfig returns the config a ring of algorithm a gets when no
// other field is given: its default hash, 160 vnodes per weight,
// table_size 65,537, replication factor 3, no zones, 65,536 partitions,
// avalanche for haproxy only, no hash tag, and ring sizes 1,024 to 4,096.
func DefaultConfig(a Algorithm) Config {
	c := Config{
		Algorithm:         a,
		VnodesPerWeight:   DefaultVnodesPerWeight,
		TableSize:         DefaultTableSize,
		ReplicationFactor: DefaultReplicationFactor,
		Partitions:        DefaultPartitions,
		Avalanche:         a == Haproxy,
		MinimumRingSize:   DefaultMinimumRingSize,
		MaximumRingSize:   DefaultMaximumRingSize,
	}
	if a.valid() {
		c.Hash = a.DefaultHash()
	}
	return c
}

// Validate runs check 1 of spec 2.4 in its order (a malformed hash tag
// first: the server refuses it as it reads the field).
func (c Config) Validate() error {
	if !c.Algorithm.valid() {
		return errorf(ErrUnknownAlgorithm, "algorithm code %d", c.Algorithm)
	}
	if !c.Hash.valid() {
		return errorf(ErrUnknownHash, "hash code %d", c.Hash)
	}
	if c.HashTag != "" {
		if err := checkHashTag(c.HashTag); err != nil {
			return err
		}
	}
	if c.Algorithm == Ketama && c.Hash != MD5 {
		return errorf(ErrHashNotSupported, "ketama only supports md5, not %s", c.Hash)
	}
	if !c.Algorithm.accepts(c.Hash) {
		return errorf(ErrHashNotAccepted, "%s takes %v, not %s", c.Algorithm, c.Algorithm.AcceptedHashes(), c.Hash)
	}
	if c.Avalanche && c.Algorithm != Haproxy {
		return errorf(ErrAvalancheNotSupported, "avalanche applies to haproxy only, not %s", c.Algorithm)
	}
	if c.HashTag != "" && c.Algorithm != Twemproxy {
		return errorf(ErrHashTagNotSupported, "hash_tag applies to twemproxy only, not %s", c.Algorithm)
	}
	return c.checkRanges()
}

// checkRanges checks the numeric fields, in the order of 2.4 check 1.
func (c Config) checkRanges() error {
	if err := c.checkCounts(); err != nil {
		return err
	}
	if err := c.checkRingSizes(); err != nil {
		return err
	}
	if c.Algorithm.usesTableSize() {
		if top := c.Algorithm.maxTableSize(); c.TableSize < 2 || c.TableSize > top {
			return errorf(ErrTableSizeOutOfRange, "table_size %d not in 2..=%d for %s", c.TableSize, top, c.Algorithm)
		}
		if !isPrime(c.TableSize) {
			return errorf(ErrTableSizeNotPrime, "table_size %d is not prime", c.TableSize)
		}
	}
	return nil
}

// checkCounts checks vnodes_per_weight, replication_factor and
// partitions, whatever the algorithm, in that order.
func (c Config) checkCounts() error {
	if c.VnodesPerWeight < 1 || c.VnodesPerWeight > maxVnodes {
		return errorf(ErrVnodesOutOfRange, "vnodes_per_weight %d not in 1..=%d", c.VnodesPerWeight, maxVnodes)
	}
	if c.ReplicationFactor < 1 || c.ReplicationFactor > maxReplication {
		return errorf(ErrReplicationOutOfRange, "replication_factor %d not in 1..=%d", c.ReplicationFactor, maxReplication)
	}
	if !validPartitions(int64(c.Partitions)) {
		return errorf(ErrPartitionsOutOfRange, "partitions %d: a power of two in 2^8..=2^20", c.Partitions)
	}
	return nil
}

// checkRingSizes checks minimum_ring_size, then maximum_ring_size, each
// in 1..=2^23 whatever the algorithm, then, under envoy_ring_hash, that
// the minimum is not above the maximum, which Envoy and gRPC refuse.
func (c Config) checkRingSizes() error {
	if c.MinimumRingSize < 1 || c.MinimumRingSize > MaxRingSize {
		return errorf(ErrRingSizeOutOfRange, "minimum_ring_size %d not in 1..=%d", c.MinimumRingSize, MaxRingSize)
	}
	if c.MaximumRingSize < 1 || c.MaximumRingSize > MaxRingSize {
		return errorf(ErrRingSizeOutOfRange, "maximum_ring_size %d not in 1..=%d", c.MaximumRingSize, MaxRingSize)
	}
	if c.Algorithm == EnvoyRingHash && c.MinimumRingSize > c.MaximumRingSize {
		return errorf(ErrRingSizesInverted, "minimum_ring_size %d is above maximum_ring_size %d: Envoy and gRPC refuse such a cluster", c.MinimumRingSize, c.MaximumRingSize)
	}
	return nil
}

func validPartitions(p int64) bool {
	return p >= minPartitions && p <= maxPartitions && p&(p-1) == 0
}

// isPrime is trial division, enough below 2^24 (2.4 check 1).
func isPrime(n int) bool {
	if n < 2 {
		return false
	}
	if n%2 == 0 {
		return n == 2
	}
	for d := 3; d*d <= n; d += 2 {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// checkHashTag checks a hash_tag: two ASCII characters from '!' to '~'
// other than '"', '\” and '\\' (2.1), so it goes into nutcracker's YAML
// as it is.
func checkHashTag(tag string) error {
	if len(tag) != 2 {
		return errorf(ErrInvalidHashTag, "%q must be exactly two characters, as \"{}\"", tag)
	}
	for i := 0; i < 2; i++ {
		c := tag[i]
		if c < '!' || c > '~' || c == '"' || c == '\'' || c == '\\' {
			return errorf(ErrInvalidHashTag, "%q must be printable ASCII other than a space, a quote or a backslash", tag)
		}
	}
	return nil
}
