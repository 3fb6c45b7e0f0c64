"""The hash functions of spec section 3, each with its exact bytes-to-integer
rule. All results are unsigned Python ints; nothing passes through floats."""

from __future__ import annotations

import hashlib
import zlib
from typing import Callable

import mmh3
import xxhash

Hash64 = Callable[[bytes], int]

MASK64 = (1 << 64) - 1

# The 64-bit hash `H(f, bytes)` (3.1). xxh3 is the C function itself, so a
# ring lookup with the default hash pays one C call and no Python frame.
xxh3_64: Hash64 = xxhash.xxh3_64_intdigest


def md5_64(data: bytes) -> int:
    """First 8 bytes of the MD5 digest, read little-endian."""
    return int.from_bytes(hashlib.md5(data).digest()[:8], "little")


def sha256_64(data: bytes) -> int:
    """First 8 bytes of the SHA-256 digest, read little-endian."""
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "little")


def murmur3_64(data: bytes) -> int:
    """MurmurHash3_x64_128 with seed 0: the first half, h1 (unsigned)."""
    return mmh3.hash64(data, 0, signed=False)[0]


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE), nginx's only hash (3.5): a u32."""
    return zlib.crc32(data)


# XXH64 with seed 0 (3.2), `envoy_ring_hash`'s only hash: the C function
# itself, as xxh3 (its seed defaults to 0).
xxh64_0: Hash64 = xxhash.xxh64_intdigest


HASHES: dict[str, Hash64] = {
    "xxh3": xxh3_64,
    "md5": md5_64,
    "sha256": sha256_64,
    "murmur3": murmur3_64,
    "crc32": crc32,
    "xxh64": xxh64_0,
}

# Codes in the canonical encoding (2.1).
HASH_CODES: dict[str, int] = {
    "xxh3": 1,
    "md5": 2,
    "sha256": 3,
    "murmur3": 4,
    # nginx's CRC-32 (3.5) and HAProxy's key hashes (3.6), for those rings
    # only.
    "crc32": 5,
    "sdbm": 6,
    "djb2": 7,
    "wt6": 8,
    # twemproxy's key hashes (3.7), for `twemproxy` rings only.
    "fnv1a_64": 9,
    "fnv1_64": 10,
    "fnv1a_32": 11,
    "fnv1_32": 12,
    "crc32a": 13,
    "one_at_a_time": 14,
    "murmur": 15,
    "jenkins": 16,
    "hsieh": 17,
    # Envoy's and gRPC's XXH64 (seed 0), for `envoy_ring_hash` rings only.
    "xxh64": 18,
}
# The hashes of the general algorithms, which place by 64-bit hashes; the
# proxy modes take their proxy's own (haproxy: `haproxy.HASHES`), and
# `envoy_ring_hash` only `xxh64`.
GENERAL = ("xxh3", "md5", "sha256", "murmur3")


def hash64(name: str, data: bytes) -> int:
    """`H(name, data)`."""
    return HASHES[name](data)


def xxh64(data: bytes, seed: int) -> int:
    """Classic XXH64 with a u64 seed (maglev's permutations, 5.3)."""
    return xxhash.xxh64_intdigest(data, seed)


def md5_32(data: bytes) -> int:
    """First 4 MD5 bytes as a little-endian u32: ketama's key hash (3.2)."""
    return int.from_bytes(hashlib.md5(data).digest()[:4], "little")


def fmix64(k: int) -> int:
    """MurmurHash3's 64-bit finalizer, a bijection on u64 (3.2). Masked after
    every multiplication because Python ints do not wrap."""
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    k ^= k >> 33
    return k
