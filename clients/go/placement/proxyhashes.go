package placement

import (
	"encoding/binary"
	"math/bits"
)

// The proxies' own 32-bit key hashes: HAProxy's (spec 3.6) and
// nutcracker's (3.7), bit for bit, quirks included. They are small and
// spec-defined, so they live here rather than in a dependency: most have
// no well-kept Go module, and none would carry nutcracker's sign extension.

// hash32 is the 32-bit key hash f of a proxy mode (nginx's crc32, HAProxy's
// four, twemproxy's ten), before any avalanche or hash tag.
func hash32(f Hash, data []byte) uint32 {
	switch f {
	case CRC32, Crc32a:
		return crc32IEEE(data)
	case Sdbm:
		return sdbm(data)
	case Djb2:
		return djb2(data)
	case Wt6:
		return wt6(data)
	case MD5:
		return md5First32(data)
	case Fnv1a64:
		return fnv1a64(data)
	case Fnv164:
		return fnv164(data)
	case Fnv1a32:
		return fnv1a32(data)
	case Fnv132:
		return fnv132(data)
	case OneAtATime:
		return oneAtATime(data)
	case Murmur:
		return murmur2(data)
	case Jenkins:
		return jenkins(data)
	case Hsieh:
		return hsieh(data)
	}
	return 0 // not reached: configs are validated before a hash is chosen
}

// sdbm is HAProxy's: h = c + (h << 6) + (h << 16) − h over unsigned bytes.
func sdbm(data []byte) uint32 {
	var h uint32
	for _, c := range data {
		h = uint32(c) + (h << 6) + (h << 16) - h
	}
	return h
}

// djb2 is HAProxy's: h = h × 33 + c, from 5381.
func djb2(data []byte) uint32 {
	h := uint32(5381)
	for _, c := range data {
		h = h*33 + uint32(c)
	}
	return h
}

// wt6 is Willy Tarreau's hash from HAProxy. bits.RotateLeft32 by 0 is the
// identity, which is what HAProxy's shift by 32 gives on x86 (3.6).
func wt6(data []byte) uint32 {
	h0, h1 := uint32(0xa53c965a), uint32(0x5ca6953a)
	s0, s1 := 6, 18
	for _, c := range data {
		h0 = ^(h0 ^ uint32(c))
		h1 = ^(h1 + uint32(c))
		h0, h1 = bits.RotateLeft32(h1, s0), bits.RotateLeft32(h0, s1)
		t := ((h0 >> 16) ^ h1) & 0xffff
		s0 = int(t & 31)
		s1 = int(t >> 11)
	}
	return h0 ^ h1
}

// fullHash is HAProxy's avalanche: Bob Jenkins' integer mix, then a
// multiplication; a bijection on u32 (3.6).
func fullHash(a uint32) uint32 {
	a = (a + 0x7ed55d16) + (a << 12)
	a = (a ^ 0xc761c23c) ^ (a >> 19)
	a = (a + 0x165667b1) + (a << 5)
	a = (a + 0xd3a2646c) ^ (a << 9)
	a = (a + 0xfd7046c5) + (a << 3)
	a = (a ^ 0xb55a4f09) ^ (a >> 16)
	return a * 3221225473
}

// sx is a byte read through a signed C char and widened to u32: bytes
// from 0x80 up are sign-extended (nutcracker on x86 and ARM Linux, 3.7).
func sx(b byte) uint32 { return uint32(int32(int8(b))) }

// fnv1a64 is nutcracker's fnv1a_64: the 64-bit basis and prime cut to
// their low 32 bits, over sign-extended bytes; a 32-bit hash.
func fnv1a64(data []byte) uint32 {
	h := uint32(0x84222325)
	for _, b := range data {
		h = (h ^ sx(b)) * 0x1b3
	}
	return h
}

// fnv164 is 64-bit FNV-1 over bytes sign-extended to 64 bits; the low 32 bits.
func fnv164(data []byte) uint32 {
	h := uint64(0xcbf29ce484222325)
	for _, b := range data {
		h = (h * 0x100000001b3) ^ uint64(int64(int8(b)))
	}
	return uint32(h)
}

func fnv1a32(data []byte) uint32 {
	h := uint32(0x811c9dc5)
	for _, b := range data {
		h = (h ^ sx(b)) * 0x01000193
	}
	return h
}

func fnv132(data []byte) uint32 {
	h := uint32(0x811c9dc5)
	for _, b := range data {
		h = (h * 0x01000193) ^ sx(b)
	}
	return h
}

func oneAtATime(data []byte) uint32 {
	var h uint32
	for _, b := range data {
		h += sx(b)
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

// murmur2 is nutcracker's murmur: MurmurHash2 (32-bit) seeded with
// 0xdeadbeef × length, over unsigned bytes.
func murmur2(data []byte) uint32 {
	const m = 0x5bd1e995
	n := uint32(len(data))
	h := (0xdeadbeef * n) ^ n
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		k *= m
		k ^= k >> 24
		k *= m
		h = (h * m) ^ k
		data = data[4:]
	}
	if len(data) > 0 {
		for i, b := range data {
			h ^= uint32(b) << (8 * i)
		}
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// jenkins is Bob Jenkins' lookup3 hashlittle(key, len, 13), over
// unsigned bytes.
func jenkins(data []byte) uint32 {
	a := 0xdeadbeef + uint32(len(data)) + 13
	b, c := a, a
	if len(data) == 0 {
		return c
	}
	rot := bits.RotateLeft32
	for len(data) > 12 {
		a += binary.LittleEndian.Uint32(data[0:])
		b += binary.LittleEndian.Uint32(data[4:])
		c += binary.LittleEndian.Uint32(data[8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
		data = data[12:]
	}
	var last [12]byte // the last block, zero-padded
	copy(last[:], data)
	a += binary.LittleEndian.Uint32(last[0:])
	b += binary.LittleEndian.Uint32(last[4:])
	c += binary.LittleEndian.Uint32(last[8:])
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return c
}

// hsieh is Paul Hsieh's SuperFastHash from 0 (not from the length); only
// the third byte of a 3-byte tail is sign-extended (3.7).
func hsieh(data []byte) uint32 {
	if len(data) == 0 {
		return 0
	}
	var h uint32
	for len(data) >= 4 {
		h += uint32(binary.LittleEndian.Uint16(data))
		tmp := (uint32(binary.LittleEndian.Uint16(data[2:])) << 11) ^ h
		h = (h << 16) ^ tmp
		h += h >> 11
		data = data[4:]
	}
	switch len(data) {
	case 3:
		h += uint32(binary.LittleEndian.Uint16(data))
		h ^= h << 16
		h ^= sx(data[2]) << 18
		h += h >> 11
	case 2:
		h += uint32(binary.LittleEndian.Uint16(data))
		h ^= h << 11
		h += h >> 17
	case 1:
		h += uint32(data[0])
		h ^= h << 10
		h += h >> 1
	}
	h ^= h << 3
	h += h >> 5
	h ^= h << 4
	h += h >> 17
	h ^= h << 25
	h += h >> 6
	return h
}
