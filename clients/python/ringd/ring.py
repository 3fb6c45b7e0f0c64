"""`ring` (spec 5.1): a virtual-node ring with 64-bit positions. The sorted
point list is shared with `ketama` (5.2), which differs only in how points
and key hashes are made and in its 32-bit circle."""

from __future__ import annotations

import struct
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain, islice

from .errors import InvalidEncoding
from .hashes import Hash64
from .layout import Layout
from .model import RAMP_FULL, Node

_LE32 = struct.Struct("<I")


class Continuum(Layout):
    """Points sorted by (position, node index): the tie rule of 5.1, so a
    bisect lands on the lowest index among tied points (`twemproxy` keeps
    its own order of tied points, see `presorted`)."""

    basis = "arcs"

    def __init__(
        self,
        ids: Sequence[str],
        points: list[int],
        key_hash: Hash64,
        space_bits: int,
        presorted: bool = False,
    ) -> None:
        """`points` are `(position << 32) | node index` in any order: as
        plain ints they sort by position, then index, faster than tuples.
        `presorted` points are already sorted by position with ties in the
        algorithm's own order (`twemproxy`'s name order), and kept so."""
        super().__init__(ids)
        if not presorted:
            points.sort()
        self.space_bits = space_bits
        self._hash = key_hash
        # Two parallel lists: bisect compares plain ints, and the owner is
        # one index away. `_ids_at` has one extra entry, the owner of point
        # 0, so that a hash past the last point wraps without a branch; with
        # no point it is [None] and every owner is None.
        self._positions = [p >> 32 for p in points]
        self._owners = [p & 0xFFFFFFFF for p in points]
        self._ids_at: list[str | None] = [self.ids[i] for i in self._owners]
        self._ids_at.append(self._ids_at[0] if points else None)
        # A guide over the top `bits` of a hash: `_lo[g]` is the first point
        # at or after bucket g's start, so the answer for a hash in bucket g
        # lies in `_lo[g] ..= _lo[g + 1]` and the bisect probes a point or
        # two instead of log2(points) scattered ints (3-4x faster at 160,000
        # points). 2 to 4 buckets per point, at most 2^20 (8 MiB).
        bits = min(max(len(points).bit_length() + 1, 1), 20, space_bits)
        self._shift = space_bits - bits
        counts = [0] * (1 << bits)
        for p in self._positions:
            counts[p >> self._shift] += 1
        self._lo = [0, *accumulate(counts)]

    @property
    def points(self) -> list[tuple[int, int]]:
        """(position, node index), sorted."""
        return list(zip(self._positions, self._owners))

    def key_hash(self, key: bytes) -> int:
        return self._hash(key)

    def owner(self, key: bytes) -> str | None:
        # The hot path: one hash, one bounded bisect, one list index; a hash
        # past the last point bisects to len(points), the wrap entry.
        h = self._hash(key)
        g = h >> self._shift
        return self._ids_at[bisect_left(self._positions, h, self._lo[g], self._lo[g + 1])]

    def successor(self, h: int) -> int | None:
        """Index of the first point at or after `h`, wrapping to 0."""
        if not self._positions:
            return None
        g = h >> self._shift
        s = bisect_left(self._positions, h, self._lo[g], self._lo[g + 1])
        return 0 if s == len(self._positions) else s

    def owner_index(self, h: int) -> int | None:
        s = self.successor(h)
        return None if s is None else self._owners[s]

    def successors(self, h: int) -> Iterable[int]:
        s = self.successor(h)
        if s is None:
            return ()
        # Each point once, from s up and round: no copy of the list.
        return chain(islice(self._owners, s, None), islice(self._owners, s))

    def units(self) -> tuple[list[int], int]:
        # Point j owns (p[j-1], p[j]]; point 0 also owns the wrap past the
        # last point (7). Python ints hold the 2^64 total exactly.
        space = 1 << self.space_bits
        units = [0] * len(self.ids)
        prev = -1
        for pos, owner in zip(self._positions, self._owners):
            units[owner] += pos - prev
            prev = pos
        if self._owners:
            units[self._owners[0]] += space - 1 - prev
        return units, space

    def encode_body(self) -> bytes:
        # One C call for the whole list: (position, index) interleaved.
        n = len(self._positions)
        fmt = "<I" + ("QI" if self.space_bits == 64 else "II") * n
        return struct.pack(fmt, n, *chain.from_iterable(zip(self._positions, self._owners)))

    @classmethod
    def decode(
        cls, ids: Sequence[str], body: bytes, key_hash: Hash64, space_bits: int
    ) -> Continuum:
        """The point list of an encoding's body (9.2), refusing one that is
        not in canonical order or names a node that does not exist."""
        return cls(ids, decode_points(ids, body, space_bits), key_hash, space_bits)


def decode_points(
    ids: Sequence[str], body: bytes, space_bits: int, ties_by_index: bool = True
) -> list[int]:
    """A body's point list, `count` then `(position, node)` records, as
    `(position << 32) | node index`, checked: the right length, nodes that
    exist, sorted by position, and equal positions by node index unless the
    algorithm orders them its own way (`ties_by_index` false)."""
    rec = struct.Struct("<QI" if space_bits == 64 else "<II")
    if len(body) < 4:
        raise InvalidEncoding("the point list ends early")
    (count,) = _LE32.unpack_from(body)
    if len(body) != 4 + count * rec.size:
        raise InvalidEncoding(
            f"{count} points need {4 + count * rec.size} body bytes, not {len(body)}"
        )
    points = [p << 32 | i for p, i in rec.iter_unpack(body[4:])]
    if any(p & 0xFFFFFFFF >= len(ids) for p in points):
        raise InvalidEncoding("a point names a node beyond the node records")
    if ties_by_index:
        if any(a > b for a, b in zip(points, points[1:])):
            raise InvalidEncoding("the points are not sorted by (position, node)")
    elif any(a >> 32 > b >> 32 for a, b in zip(points, points[1:])):
        raise InvalidEncoding("the points are not sorted by position")
    return points


def point_count(vnodes_per_weight: int, node: Node) -> int:
    """Points a node places: `c = vnodes × weight`, or at ramp r the first
    ⌈r × c / 65,536⌉ of them, in integers (5.1)."""
    c = vnodes_per_weight * node.weight
    return (node.ramp * c + RAMP_FULL - 1) // RAMP_FULL


def point_input(label: bytes, k: int) -> bytes:
    """`le32(len(B)) ‖ B ‖ le32(k)`: the length prefix keeps labels apart."""
    return _LE32.pack(len(label)) + label + _LE32.pack(k)


def build(active: Sequence[Node], hash_fn: Hash64, vnodes_per_weight: int) -> Continuum:
    points: list[int] = []
    for i, node in enumerate(active):
        label = node.label.encode()
        prefix = _LE32.pack(len(label)) + label
        points.extend(
            hash_fn(prefix + _LE32.pack(k)) << 32 | i
            for k in range(point_count(vnodes_per_weight, node))
        )
    return Continuum([n.id for n in active], points, hash_fn, 64)
