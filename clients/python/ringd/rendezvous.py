"""`rendezvous` (spec 5.5): weighted highest random weight in exact integer
arithmetic, with no platform logarithm."""

from __future__ import annotations

import struct
from functools import cmp_to_key
from typing import Iterable, List, Optional, Sequence, Tuple

from .errors import InvalidEncoding
from .hashes import Hash64, fmix64
from .layout import Layout
from .model import Node

_TOP = 64 << 32  # L(2^64)
_LE64 = struct.Struct("<Q")

#: (cost, weight, draw, index): what the order of 5.5 compares.
_Score = Tuple[int, int, int, int]


def log2_q32(x: int) -> int:
    """`L(x) = ⌊2^32 · log2 x⌋` for 1 ≤ x ≤ 2^64, by repeated squaring of the
    1.63 fixed-point mantissa (5.5). Python ints are exact at any width, so
    the 128-bit products need no care."""
    e = x.bit_length() - 1
    m = x << (63 - e) if e <= 63 else x >> (e - 63)
    frac = 0
    for _ in range(32):
        m = (m * m) >> 63
        frac <<= 1
        if m >= 1 << 64:
            m >>= 1
            frac |= 1
    return (e << 32) | frac


def cost(draw: int) -> int:
    """`64·2^32 − L(draw + 1)`."""
    return _TOP - log2_q32(draw + 1)


def _better(a: _Score, b: _Score) -> int:
    """Rule 1: cost_a/w_a < cost_b/w_b, as exact cross products; rule 2:
    the larger draw; rule 3: the lower index."""
    lhs, rhs = a[0] * b[1], b[0] * a[1]
    if lhs != rhs:
        return -1 if lhs < rhs else 1
    if a[2] != b[2]:
        return -1 if a[2] > b[2] else 1
    return -1 if a[3] < b[3] else (1 if a[3] > b[3] else 0)


_by_order = cmp_to_key(_better)


class Rendezvous(Layout):
    basis = "weights"

    def __init__(self, ids: Sequence[str], node_hashes: List[int],
                 weights: List[int], is_ramped: bool, key_hash: Hash64) -> None:
        """`weights` are the raw weights, or `weight × ramp` in a ramped set."""
        super().__init__(ids)
        self.node_hashes = node_hashes
        self.weights = weights
        self.is_ramped = is_ramped
        # Equal weights: the order is by draw alone (the shortcut of 5.5),
        # which skips the logarithm.
        self.uniform = len(set(weights)) <= 1
        self._hash = key_hash

    def key_hash(self, key: bytes) -> int:
        return self._hash(key)

    def owner_index(self, h: int) -> Optional[int]:
        if not self.node_hashes:
            return None
        if self.uniform:
            # max() keeps the first of equal draws: the lowest index.
            draws = [fmix64(h ^ n) for n in self.node_hashes]
            return max(range(len(draws)), key=draws.__getitem__)
        return min(self._scores(h), key=_by_order)[3]

    def _scores(self, h: int) -> List[_Score]:
        out = []
        for i, (n, w) in enumerate(zip(self.node_hashes, self.weights)):
            d = fmix64(h ^ n)
            out.append((cost(d), w, d, i))
        return out

    def successors(self, h: int) -> Iterable[int]:
        if self.uniform:
            draws = [fmix64(h ^ n) for n in self.node_hashes]
            return sorted(range(len(draws)), key=lambda i: (-draws[i], i))
        return [s[3] for s in sorted(self._scores(h), key=_by_order)]

    def units(self) -> Tuple[List[int], int]:
        # Weights, or `weight × ramp` in a ramped set (7).
        return list(self.weights), sum(self.weights)

    def encode_body(self) -> bytes:
        return b"".join(_LE64.pack(h) for h in self.node_hashes)

    @classmethod
    def decode(cls, active: Sequence[Node], body: bytes, is_ramped: bool,
               key_hash: Hash64) -> Rendezvous:
        if len(body) != 8 * len(active):
            raise InvalidEncoding(f"{len(active)} label hashes need {8 * len(active)} bytes")
        hashes = [h for (h,) in _LE64.iter_unpack(body)]
        return cls([n.id for n in active], hashes, _weights(active, is_ramped),
                   is_ramped, key_hash)


def _weights(active: Sequence[Node], is_ramped: bool) -> List[int]:
    return [n.scaled_weight if is_ramped else n.weight for n in active]


def build(active: Sequence[Node], hash_fn: Hash64, is_ramped: bool) -> Rendezvous:
    hashes = [hash_fn(n.label.encode()) for n in active]
    return Rendezvous([n.id for n in active], hashes, _weights(active, is_ramped),
                      is_ramped, hash_fn)
