"""`jump` (spec 5.4): jump consistent hash over a persisted bucket order,
held as runs (maximal stretches of buckets with one owner, or of holes), so
that a weight of 1,000,000 is one run and not a million list entries."""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from typing import Any, Optional

from .errors import InvalidEncoding, PlacementError
from .hashes import MASK64, Hash64, fmix64
from .layout import HOLE, Layout
from .model import MAX_POINTS, Node

_LE32 = struct.Struct("<I")
REHASH_INCREMENT = 0x9E3779B97F4A7C15

#: A run: (node id, or None for holes; number of consecutive buckets).
Run = tuple[Optional[str], int]


def jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach (5.4.1). Both operands of the division are exact
    binary64 values (below 2^53), the division and the multiplication are
    single binary64 operations, and int() truncates toward zero: the float
    steps of the reference, bit for bit."""
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & MASK64
        j = int((b + 1) * (2147483648.0 / ((key >> 33) + 1)))
    return b


class Jump(Layout):
    basis = "buckets"

    def __init__(
        self, ids: Sequence[str], runs: Sequence[tuple[int, int]], key_hash: Hash64
    ) -> None:
        """`runs` are (node index or HOLE, count), already validated."""
        super().__init__(ids)
        self._hash = key_hash
        self.starts: list[int] = []
        self.owners: list[int] = []
        n = 0
        for owner, count in runs:
            if count == 0:
                continue
            if not self.owners or self.owners[-1] != owner:
                self.starts.append(n)
                self.owners.append(owner)
            n += count
        self.length = n

    def key_hash(self, key: bytes) -> int:
        return self._hash(key)

    def runs(self) -> Iterator[tuple[int, int]]:
        """(owner index or HOLE, count) in bucket order."""
        ends = [*self.starts[1:], self.length]
        return zip(self.owners, (e - s for s, e in zip(self.starts, ends)))

    def lookup(self, h: int) -> int:
        """The run holding the live bucket a key hash lands on (5.4.2):
        jump, and re-hash past holes."""
        starts, owners, n = self.starts, self.owners, self.length
        while True:
            r = bisect_right(starts, jump_hash(h, n)) - 1
            if owners[r] != HOLE:
                return r
            h = fmix64((h + REHASH_INCREMENT) & MASK64)

    def owner_index(self, h: int) -> int | None:
        return self.owners[self.lookup(h)] if self.length else None

    def successors(self, h: int) -> Iterable[int]:
        # One step per run instead of per bucket (the informative note of
        # 6.1): the order in which nodes first appear is the same, and the
        # part of the first run before the key's bucket would only repeat
        # the first node at the very end.
        if not self.length:
            return ()
        r = self.lookup(h)
        walk = self.owners[r:] + self.owners[:r]
        return (o for o in walk if o != HOLE)

    def units(self) -> tuple[list[int], int]:
        units = [0] * len(self.ids)
        for owner, count in self.runs():
            if owner != HOLE:
                units[owner] += count
        return units, sum(units)

    def encode_body(self) -> bytes:
        # A run is one word repeated: bytes repetition, no per-bucket loop.
        return _LE32.pack(self.length) + b"".join(
            _LE32.pack(owner) * count for owner, count in self.runs()
        )

    def bucket_order(self) -> list[str | None]:
        """The order one entry per bucket, None for holes (as snapshots send it)."""
        out: list[str | None] = []
        for owner, count in self.runs():
            out.extend([None if owner == HOLE else self.ids[owner]] * count)
        return out

    @classmethod
    def decode(cls, active: Sequence[Node], body: bytes, key_hash: Hash64) -> Jump:
        if len(body) < 4:
            raise InvalidEncoding("the bucket list ends early")
        (n,) = _LE32.unpack_from(body)
        if len(body) != 4 + 4 * n:
            raise InvalidEncoding(f"{n} buckets need {4 + 4 * n} body bytes, not {len(body)}")
        buckets = struct.unpack_from(f"<{n}I", body, 4)
        ids = [x.id for x in active]
        try:
            # Runs straight away: a weight of a million is one entry.
            order = [
                (None if b == HOLE else ids[b], sum(1 for _ in g)) for b, g in groupby(buckets)
            ]
        except IndexError:
            raise InvalidEncoding("a bucket names a node beyond the node records") from None
        return restore(active, order, key_hash)


def parse_order(order: Iterable[Any]) -> list[Run]:
    """A bucket order as JSON carries it: one id or null per bucket, or
    `[id or null, count]` runs (both forms are accepted, as the server's
    reader accepts them)."""
    runs: list[Run] = []
    for entry in order:
        if entry is None or isinstance(entry, str):
            runs.append((entry, 1))
        elif (
            isinstance(entry, (list, tuple))
            and len(entry) == 2
            and (entry[0] is None or isinstance(entry[0], str))
            and isinstance(entry[1], int)
            and entry[1] >= 1
        ):
            runs.append((entry[0], entry[1]))
        else:
            raise PlacementError("InvalidBucketOrder", f"not a bucket or a run: {entry!r}")
    return runs


def restore(active: Sequence[Node], order: Iterable[Run], key_hash: Hash64) -> Jump:
    """A persisted order, accepted only if every id in it is active, each
    active node holds exactly `weight` buckets and the last is no hole (5.4.4)."""
    index: dict[str, int] = {n.id: i for i, n in enumerate(active)}
    held = [0] * len(active)
    runs: list[tuple[int, int]] = []
    total, last_hole = 0, False
    for owner, count in order:
        if count == 0:
            continue
        total += count
        if total > MAX_POINTS:
            raise PlacementError("TooManyPoints", f"{total} buckets > {MAX_POINTS}")
        last_hole = owner is None
        if owner is None:
            runs.append((HOLE, count))
            continue
        i = index.get(owner)
        if i is None:
            raise PlacementError(
                "InvalidBucketOrder", f"{owner!r} holds a bucket but is not active"
            )
        held[i] += count
        runs.append((i, count))
    for n, h in zip(active, held):
        if h != n.weight:
            raise PlacementError(
                "InvalidBucketOrder", f"{n.id} has weight {n.weight} but holds {h}"
            )
    if last_hole:
        raise PlacementError("InvalidBucketOrder", "the last bucket is a hole")
    return Jump([n.id for n in active], runs, key_hash)


def next_order(previous: Sequence[str | None], nodes: Sequence[Node]) -> list[str | None]:
    """The bucket order after a change (5.4.3), bucket by bucket as the spec
    states it. Clients take orders from snapshots; this is what the server
    does, for tools and tests. `next_order([], nodes)` is the initial order."""
    active = sorted((n for n in nodes if n.state == "active"), key=lambda n: n.id)
    want = {n.id: n.weight for n in active}
    held: dict[str, int] = {}
    order: list[str | None] = []
    for slot in previous:
        if slot is not None and held.get(slot, 0) < want.get(slot, 0):
            held[slot] = held.get(slot, 0) + 1
            order.append(slot)
        else:
            order.append(None)
    holes = iter([i for i, s in enumerate(order) if s is None])
    for n in active:
        for _ in range(n.weight - held.get(n.id, 0)):
            i = next(holes, None)
            if i is None:
                order.append(n.id)
            else:
                order[i] = n.id
    while order and order[-1] is None:
        order.pop()
    return order


def initial_runs(active: Sequence[Node]) -> list[Run]:
    """The initial order (5.4.3) as runs: each node's weight, in id order."""
    return [(n.id, n.weight) for n in active]
