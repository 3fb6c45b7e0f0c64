"""`maglev` (spec 5.3): a Maglev lookup table filled the way Envoy fills
it, with integer weights (scaled by ramps in a ramped set)."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from itertools import chain, islice

from .errors import InvalidEncoding
from .hashes import Hash64, xxh64
from .layout import Layout
from .model import MAX_TABLE_SIZE, Node, is_prime

_LE32 = struct.Struct("<I")
_EMPTY = -1


def permutation_seeds(label: str, m: int) -> tuple[int, int]:
    """`(offset, skip)` of a node's permutation of the M slots."""
    b = label.encode()
    return xxh64(b, 0) % m, xxh64(b, 1) % (m - 1) + 1


def fill(labels: Sequence[str], weights: Sequence[int], m: int) -> list[int]:
    """The table of 5.3 for nodes in index order with these labels and
    weights. Weights may be raw or scaled (`weight × ramp`): scaling all
    alike changes no comparison, so callers pass what the set uses;
    `envoy_maglev` passes its EDS weights (5.11)."""
    if not labels:
        return []
    # Fill order: labels in byte order (not str order: hash keys may be
    # any UTF-8, 11.2), ties by node index.
    order = sorted(range(len(labels)), key=lambda i: (labels[i].encode(), i))
    seeds = [permutation_seeds(labels[i], m) for i in order]
    nxt = [0] * len(order)
    target = [0] * len(order)
    w = [weights[i] for i in order]
    top = max(w)
    table = [_EMPTY] * m
    filled, rnd = 0, 1
    while filled < m:
        for e, node in enumerate(order):
            if filled == m:
                break
            if rnd * w[e] < target[e]:
                continue  # not this node's turn
            target[e] += top
            offset, skip = seeds[e]
            j = nxt[e]
            c = (offset + skip * j) % m
            while table[c] != _EMPTY:
                j += 1
                c = (offset + skip * j) % m
            table[c] = node
            nxt[e] = j + 1
            filled += 1
        rnd += 1
    return table


class Maglev(Layout):
    basis = "table_entries"

    def __init__(self, ids: Sequence[str], table: list[int], key_hash: Hash64) -> None:
        super().__init__(ids)
        self.table = table
        self._hash = key_hash
        self._ids_at = [self.ids[i] for i in table]

    def key_hash(self, key: bytes) -> int:
        return self._hash(key)

    def owner(self, key: bytes) -> str | None:
        if not self.table:
            return None
        return self._ids_at[self._hash(key) % len(self.table)]

    def owner_index(self, h: int) -> int | None:
        return self.table[h % len(self.table)] if self.table else None

    def successors(self, h: int) -> Iterable[int]:
        if not self.table:
            return ()
        s = h % len(self.table)
        return chain(islice(self.table, s, None), islice(self.table, s))

    def units(self) -> tuple[list[int], int]:
        units = [0] * len(self.ids)
        for i in self.table:
            units[i] += 1
        return units, len(self.table)

    def encode_body(self) -> bytes:
        return _LE32.pack(len(self.table)) + struct.pack(f"<{len(self.table)}I", *self.table)

    @classmethod
    def decode(
        cls, ids: Sequence[str], body: bytes, key_hash: Hash64, max_size: int = MAX_TABLE_SIZE
    ) -> Maglev:
        """A body of 9.1: a table of a prime length up to `max_size` (2^24,
        or Envoy's bound for `envoy_maglev`), naming every node. Which node
        holds which slot is vouched for by the fingerprint."""
        if len(body) < 4:
            raise InvalidEncoding("the maglev table ends early")
        (m,) = _LE32.unpack_from(body)
        if len(body) != 4 + 4 * m:
            raise InvalidEncoding(f"a table of {m} slots needs {4 + 4 * m} body bytes")
        if (m == 0) != (not ids) or (ids and m < len(ids)):
            raise InvalidEncoding(f"a table of {m} slots for {len(ids)} nodes")
        if m and (m > max_size or not is_prime(m)):
            raise InvalidEncoding(f"a table of {m} slots: not a prime up to {max_size}")
        table = list(struct.unpack_from(f"<{m}I", body, 4))
        if any(i >= len(ids) for i in table):
            raise InvalidEncoding("a slot names a node beyond the node records")
        return cls(ids, table, key_hash)


def build(active: Sequence[Node], key_hash: Hash64, table_size: int, is_ramped: bool) -> Maglev:
    weights = [n.scaled_weight if is_ramped else n.weight for n in active]
    table = fill([n.label for n in active], weights, table_size)
    return Maglev([n.id for n in active], table, key_hash)
