package placement

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"

	"github.com/cespare/xxhash/v2"
	"github.com/twmb/murmur3"
	"github.com/zeebo/xxh3"
)

// The general hashes of spec 3.1 and the primitives of 3.2. None of them
// allocates: lookups call them on every key.

// hash64 is H(f, data) of spec 3.1 for the four general hashes, and
// XXH64(data, 0) for xxh64 (3.2), envoy_ring_hash's key and entry hash
// and envoy_maglev's key hash.
func hash64(f Hash, data []byte) uint64 {
	switch f {
	case Xxh64:
		return xxhash.Sum64(data)
	case MD5:
		return md5First64(data)
	case SHA256:
		d := sha256.Sum256(data)
		return binary.LittleEndian.Uint64(d[:8])
	case Murmur3:
		h1, _ := murmur3.Sum128(data)
		return h1
	default:
		return xxh3.Hash(data)
	}
}

// md5First64 is the first 8 MD5 digest bytes as a little-endian u64.
func md5First64(data []byte) uint64 {
	d := md5.Sum(data)
	return binary.LittleEndian.Uint64(d[:8])
}

// md5First32 is md5_32 of spec 3.2: the first 4 MD5 digest bytes as a
// little-endian u32, ketama's and twemproxy's md5 key hash.
func md5First32(data []byte) uint32 {
	d := md5.Sum(data)
	return binary.LittleEndian.Uint32(d[:4])
}

// xxh64 is classic XXH64 with a seed; the permutations of maglev and
// envoy_maglev use seeds 0 and 1 (5.3, 5.11). Only builds call it, once or twice per node, so the
// digest it allocates does not matter.
func xxh64(data []byte, seed uint64) uint64 {
	d := xxhash.NewWithSeed(seed)
	_, _ = d.Write(data) // never fails
	return d.Sum64()
}

// crc32IEEE is the standard CRC-32 (3.5): nginx's only hash, one of
// HAProxy's and twemproxy's crc32a.
func crc32IEEE(data []byte) uint32 { return crc32.ChecksumIEEE(data) }

// fmix64 is MurmurHash3's 64-bit finalizer, a bijection on u64 (3.2).
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
