"""`rendezvous` (spec 5.5): weighted highest random weight in exact integer
arithmetic, with no platform logarithm."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from functools import cmp_to_key

from .errors import InvalidEncoding
from .hashes import Hash64, fmix64
from .layout import Layout
from .model import Node

_TOP = 64 << 32  # L(2^64)
_LE64 = struct.Struct("<Q")

#: (cost, weight, draw, index): what the order of 5.5 compares.
_Score = tuple[int, int, int, int]


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

# Why a float pre-filter: the exact cost takes 32 big-int squarings a node
# (~12 us a node in CPython), so an owner among five weighted nodes took
# ~70 us. `(64 − log2(draw + 1)) / w` in binary64 is within 5·10⁻¹⁰/w of
# the exact `cost / (2^32·w)`: L is ⌊2^32·log2 x⌋ up to one unit (2^-32 in
# log2 terms, doubled for the truncating squarings) and math.log2 of a
# 64-bit value adds ~10⁻¹³. A node whose float score is more than
# 2·_SLACK/w_min from another's is ordered by the floats alone; nodes
# closer than that are ordered by the exact rule, so the result is always
# the exact order of 5.5. _SLACK keeps a 10x margin over the bound.
_SLACK = 5e-9


class Rendezvous(Layout):
    basis = "weights"

    def __init__(
        self,
        ids: Sequence[str],
        node_hashes: list[int],
        weights: list[int],
        is_ramped: bool,
        key_hash: Hash64,
    ) -> None:
        """`weights` are the raw weights, or `weight × ramp` in a ramped set."""
        super().__init__(ids)
        self.node_hashes = node_hashes
        self.weights = weights
        self.is_ramped = is_ramped
        # Equal weights: the order is by draw alone (the shortcut of 5.5),
        # which skips the logarithm.
        self.uniform = len(set(weights)) <= 1
        self._hash = key_hash
        # The float scores' error bound, the same for every node (the
        # largest): uniform intervals make "apart from its neighbour in
        # float order" mean "apart from every later node".
        self._eps = _SLACK / min(weights) if weights else 0.0
        self._inv_w = [1.0 / w for w in weights]

    def key_hash(self, key: bytes) -> int:
        return self._hash(key)

    def owner_index(self, h: int) -> int | None:
        if not self.node_hashes:
            return None
        if self.uniform:
            # max() keeps the first of equal draws: the lowest index.
            draws = [fmix64(h ^ n) for n in self.node_hashes]
            return max(range(len(draws)), key=draws.__getitem__)
        draws = [fmix64(h ^ n) for n in self.node_hashes]
        approx = self._approx(draws)
        best = min(approx)
        near = [i for i, f in enumerate(approx) if f <= best + 2 * self._eps]
        if len(near) == 1:
            return near[0]
        return min(self._scores(draws, near), key=_by_order)[3]

    def _approx(self, draws: list[int]) -> list[float]:
        """Each node's score `cost / (2^32·w)` in binary64, near the exact one."""
        log2 = math.log2
        return [(64.0 - log2(d + 1)) * iw for d, iw in zip(draws, self._inv_w)]

    def _scores(self, draws: list[int], indices: Iterable[int]) -> list[_Score]:
        """The exact scores of these nodes."""
        return [(cost(draws[i]), self.weights[i], draws[i], i) for i in indices]

    def successors(self, h: int) -> Iterable[int]:
        if self.uniform:
            draws = [fmix64(h ^ n) for n in self.node_hashes]
            return sorted(range(len(draws)), key=lambda i: (-draws[i], i))
        draws = [fmix64(h ^ n) for n in self.node_hashes]
        approx = self._approx(draws)
        order = sorted(range(len(draws)), key=approx.__getitem__)
        # Runs of nodes whose float scores lie within 2·eps of the next are
        # put in the exact order; the rest are already in it.
        out: list[int] = []
        run: list[int] = []
        for i in order:
            if run and approx[i] - approx[run[-1]] > 2 * self._eps:
                out.extend(self._exact(draws, run))
                run = []
            run.append(i)
        out.extend(self._exact(draws, run))
        return out

    def _exact(self, draws: list[int], run: list[int]) -> list[int]:
        if len(run) == 1:
            return run
        return [s[3] for s in sorted(self._scores(draws, run), key=_by_order)]

    def units(self) -> tuple[list[int], int]:
        # Weights, or `weight × ramp` in a ramped set (7).
        return list(self.weights), sum(self.weights)

    def encode_body(self) -> bytes:
        return b"".join(_LE64.pack(h) for h in self.node_hashes)

    @classmethod
    def decode(
        cls, active: Sequence[Node], body: bytes, is_ramped: bool, key_hash: Hash64
    ) -> Rendezvous:
        if len(body) != 8 * len(active):
            raise InvalidEncoding(f"{len(active)} label hashes need {8 * len(active)} bytes")
        hashes = [h for (h,) in _LE64.iter_unpack(body)]
        return cls([n.id for n in active], hashes, _weights(active, is_ramped), is_ramped, key_hash)


def _weights(active: Sequence[Node], is_ramped: bool) -> list[int]:
    return [n.scaled_weight if is_ramped else n.weight for n in active]


def build(active: Sequence[Node], hash_fn: Hash64, is_ramped: bool) -> Rendezvous:
    hashes = [hash_fn(n.label.encode()) for n in active]
    return Rendezvous(
        [n.id for n in active], hashes, _weights(active, is_ramped), is_ramped, hash_fn
    )
