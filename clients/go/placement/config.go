package placement

// Limits of spec 2.1 and 2.4.
const (
	// MaxPoints caps the materialized size of a layout (2.4).
	MaxPoints = 1 << 23
	// MaxTableSize is the largest maglev table_size.
	MaxTableSize = 1 << 24
	// DefaultTableSize is maglev's table_size when none is given.
	DefaultTableSize = 65_537
	// DefaultVnodesPerWeight is ring's points per unit of weight.
	DefaultVnodesPerWeight = 160
	// DefaultReplicationFactor is the default preference list length.
	DefaultReplicationFactor = 3
	// DefaultPartitions is table's partition count when none is given.
	DefaultPartitions = 1 << 16
	minPartitions     = 1 << 8
	maxPartitions     = 1 << 20
	maxVnodes         = 10_000
	maxReplication    = 64
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
	// TableSize is maglev's table length, a prime in 2..=2^24 (checked
	// for maglev only).
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
}

// DefaultConfig returns the config a ring of algorithm a gets when no
// other field is given: its default hash, 160 vnodes per weight,
// table_size 65,537, replication factor 3, no zones, 65,536 partitions,
// avalanche for haproxy only and no hash tag.
func DefaultConfig(a Algorithm) Config {
	c := Config{
		Algorithm:         a,
		VnodesPerWeight:   DefaultVnodesPerWeight,
		TableSize:         DefaultTableSize,
		ReplicationFactor: DefaultReplicationFactor,
		Partitions:        DefaultPartitions,
		Avalanche:         a == Haproxy,
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
	if c.Algorithm == Maglev {
		if c.TableSize < 2 || c.TableSize > MaxTableSize {
			return errorf(ErrTableSizeOutOfRange, "table_size %d not in 2..=2^24", c.TableSize)
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
