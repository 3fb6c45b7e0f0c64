package placement

// keyHasher computes section 4's key hash for one placement. It is a
// small value switched on at every lookup rather than a func value, so
// that a lookup is a direct call the compiler can see does not let the
// key escape.
type keyHasher struct {
	algorithm Algorithm
	hash      Hash
	avalanche bool   // haproxy: full_hash after the hash
	tag       string // twemproxy: hash only the tagged part
}

func (k *keyHasher) sum(key []byte) uint64 {
	switch k.algorithm {
	case Ketama:
		return uint64(md5First32(key))
	case Nginx:
		return uint64(crc32IEEE(key))
	case Haproxy:
		h := hash32(k.hash, key)
		if k.avalanche {
			h = fullHash(h)
		}
		return uint64(h)
	case Twemproxy:
		// An empty tagged part hashes to 0: nutcracker does not hash it.
		if t := taggedKey(k.tag, key); len(t) > 0 {
			return uint64(hash32(k.hash, t))
		}
		return 0
	}
	return hash64(k.hash, key)
}
