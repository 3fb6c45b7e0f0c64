"""`ketama` (spec 5.2): libketama's continuum, 32-bit points from MD5
digests, including libketama's binary32 arithmetic for digest counts."""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Sequence

from .hashes import md5_32
from .model import Node
from .ring import Continuum

_F32 = struct.Struct("<f")
_DIGEST = struct.Struct("<4I")


def f32(x: float) -> float:
    """Round a binary64 to binary32 (nearest, ties to even) and back: what
    C does when it stores a double into a float."""
    return float(_F32.unpack(_F32.pack(x))[0])


def digest_count(weight: int, total: int, servers: int) -> int:
    """libketama's `floorf(pct * 40.0 * n)` (5.2). `pct` is a binary32
    quotient: dividing the two binary32 values in binary64 and rounding once
    gives exactly that. `float(int)` is exact below 2^53, so `f32(float(w))`
    rounds once, as C's int-to-float conversion does."""
    pct = f32(f32(float(weight)) / f32(float(total)))
    product = pct * 40.0 * f32(float(servers))  # binary64, left to right
    return math.floor(f32(product))


def build(active: Sequence[Node]) -> Continuum:
    total = sum(n.weight for n in active)
    points: list[int] = []
    for i, node in enumerate(active):
        for k in range(digest_count(node.weight, total, len(active))):
            d = hashlib.md5(f"{node.label}-{k}".encode()).digest()
            points.extend(p << 32 | i for p in _DIGEST.unpack(d))
    return Continuum([n.id for n in active], points, md5_32, 32)
