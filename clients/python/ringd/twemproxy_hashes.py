"""twemproxy's key hashes (spec 3.7), bit for bit as nutcracker 0.5.0
computes them. Each returns an unsigned 32-bit int. Several read the key
through a signed `char`, so a byte above 0x7F enters sign-extended: that
quirk is reproduced on purpose."""

from __future__ import annotations

import hashlib
import zlib
from typing import Callable

Hash32 = Callable[[bytes], int]

M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
FNV_64_INIT = 0xCBF29CE484222325
FNV_64_PRIME = 0x100000001B3
FNV_32_INIT = 0x811C9DC5
FNV_32_PRIME = 0x01000193


def _signed32(b: int) -> int:
    """A byte as `(uint32_t)(char)b`: sign-extended above 0x7F."""
    return b | 0xFFFFFF00 if b & 0x80 else b


def md5(key: bytes) -> int:
    """First four MD5 bytes as a little-endian u32."""
    return int.from_bytes(hashlib.md5(key).digest()[:4], "little")


def fnv1a_64(key: bytes) -> int:
    """FNV-1a in 32 bits with the 64-bit basis and prime truncated."""
    h = FNV_64_INIT & M32
    p = FNV_64_PRIME & M32
    for b in key:
        h = ((h ^ _signed32(b)) * p) & M32
    return h


def fnv1_64(key: bytes) -> int:
    """64-bit FNV-1 over bytes sign-extended to 64 bits, low 32 bits."""
    h = FNV_64_INIT
    for b in key:
        h = ((h * FNV_64_PRIME) & M64) ^ (b | 0xFFFFFFFFFFFFFF00 if b & 0x80 else b)
    return h & M32


def fnv1a_32(key: bytes) -> int:
    h = FNV_32_INIT
    for b in key:
        h = ((h ^ _signed32(b)) * FNV_32_PRIME) & M32
    return h


def fnv1_32(key: bytes) -> int:
    h = FNV_32_INIT
    for b in key:
        h = ((h * FNV_32_PRIME) & M32) ^ _signed32(b)
    return h


def crc32a(key: bytes) -> int:
    """The standard CRC-32 (zlib's)."""
    return zlib.crc32(key) & M32


def one_at_a_time(key: bytes) -> int:
    h = 0
    for b in key:
        h = (h + _signed32(b)) & M32
        h = (h + (h << 10)) & M32
        h ^= h >> 6
    h = (h + (h << 3)) & M32
    h ^= h >> 11
    return (h + (h << 15)) & M32


def murmur(key: bytes) -> int:
    """MurmurHash2 with the seed 0xdeadbeef * length."""
    m = 0x5BD1E995
    n = len(key)
    h = ((0xDEADBEEF * n) & M32) ^ (n & M32)
    full = n - n % 4
    for i in range(0, full, 4):
        k = int.from_bytes(key[i : i + 4], "little")
        k = (k * m) & M32
        k ^= k >> 24
        k = (k * m) & M32
        h = ((h * m) & M32) ^ k
    tail = key[full:]
    if tail:
        for i, b in enumerate(tail):
            h ^= b << (8 * i)
        h = (h * m) & M32
    h ^= h >> 13
    h = (h * m) & M32
    return h ^ (h >> 15)


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & M32


def jenkins(key: bytes) -> int:
    """lookup3 `hashlittle` with initial value 13."""
    a = b = c = (0xDEADBEEF + len(key) + 13) & M32
    if not key:
        return c
    rest = key
    while len(rest) > 12:
        a = (a + int.from_bytes(rest[0:4], "little")) & M32
        b = (b + int.from_bytes(rest[4:8], "little")) & M32
        c = (c + int.from_bytes(rest[8:12], "little")) & M32
        a = ((a - c) & M32) ^ _rot(c, 4)
        c = (c + b) & M32
        b = ((b - a) & M32) ^ _rot(a, 6)
        a = (a + c) & M32
        c = ((c - b) & M32) ^ _rot(b, 8)
        b = (b + a) & M32
        a = ((a - c) & M32) ^ _rot(c, 16)
        c = (c + b) & M32
        b = ((b - a) & M32) ^ _rot(a, 19)
        a = (a + c) & M32
        c = ((c - b) & M32) ^ _rot(b, 4)
        b = (b + a) & M32
        rest = rest[12:]
    last = rest.ljust(12, b"\0")
    a = (a + int.from_bytes(last[0:4], "little")) & M32
    b = (b + int.from_bytes(last[4:8], "little")) & M32
    c = (c + int.from_bytes(last[8:12], "little")) & M32
    c = ((c ^ b) - _rot(b, 14)) & M32
    a = ((a ^ c) - _rot(c, 11)) & M32
    b = ((b ^ a) - _rot(a, 25)) & M32
    c = ((c ^ b) - _rot(b, 16)) & M32
    a = ((a ^ c) - _rot(c, 4)) & M32
    b = ((b ^ a) - _rot(a, 14)) & M32
    c = ((c ^ b) - _rot(b, 24)) & M32
    return c


def hsieh(key: bytes) -> int:
    """SuperFastHash from 0; the third byte of a 3-byte tail sign-extended."""
    if not key:
        return 0
    h = 0
    full = len(key) - len(key) % 4
    for i in range(0, full, 4):
        h = (h + key[i] + (key[i + 1] << 8)) & M32
        tmp = (((key[i + 2] + (key[i + 3] << 8)) << 11) ^ h) & M32
        h = ((h << 16) & M32) ^ tmp
        h = (h + (h >> 11)) & M32
    tail = key[full:]
    if len(tail) == 3:
        h = (h + tail[0] + (tail[1] << 8)) & M32
        h ^= (h << 16) & M32
        h ^= (_signed32(tail[2]) << 18) & M32
        h = (h + (h >> 11)) & M32
    elif len(tail) == 2:
        h = (h + tail[0] + (tail[1] << 8)) & M32
        h ^= (h << 11) & M32
        h = (h + (h >> 17)) & M32
    elif len(tail) == 1:
        h = (h + tail[0]) & M32
        h ^= (h << 10) & M32
        h = (h + (h >> 1)) & M32
    h ^= (h << 3) & M32
    h = (h + (h >> 5)) & M32
    h ^= (h << 4) & M32
    h = (h + (h >> 17)) & M32
    h ^= (h << 25) & M32
    return (h + (h >> 6)) & M32


# The key hashes of `twemproxy` rings, by name (2.1, 3.7).
TWEMPROXY_HASHES: dict[str, Hash32] = {
    "fnv1a_64": fnv1a_64,
    "md5": md5,
    "crc32a": crc32a,
    "one_at_a_time": one_at_a_time,
    "murmur": murmur,
    "jenkins": jenkins,
    "hsieh": hsieh,
    "fnv1_64": fnv1_64,
    "fnv1a_32": fnv1a_32,
    "fnv1_32": fnv1_32,
}
