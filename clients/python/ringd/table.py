"""`table` (spec 5.6): a stored partition table. A client never computes
one; it restores the server's from an encoding's body (5.6.3), from rows of
ids (the vector files), or from the previous version and its moves (9.4)."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence

from .errors import InvalidTable
from .hashes import Hash64
from .layout import Layout
from .model import Node

_LE32 = struct.Struct("<I")


def index_width(nodes: int) -> int:
    """Bytes per node index: u16 up to 65,535 nodes, else u32 (9.1)."""
    return 2 if nodes <= 0xFFFF else 4


def _index_format(nodes: int, count: int) -> str:
    return f"<{count}{'H' if index_width(nodes) == 2 else 'I'}"


class PartitionTable(Layout):
    basis = "partitions"

    def __init__(
        self, ids: Sequence[str], partitions: int, replicas: int, cells: list[int], key_hash: Hash64
    ) -> None:
        """`cells`: `partitions × replicas` node indices, row by row,
        already checked by `restore`."""
        super().__init__(ids)
        self.partitions = partitions
        self.replicas = replicas
        self.cells = cells
        self._shift = 64 - (partitions.bit_length() - 1)  # top b bits
        self._hash = key_hash
        # Owner ids per partition, so owner() is a shift and one index.
        self._primary_ids = [ids[c] for c in cells[::replicas]] if replicas else []

    def key_hash(self, key: bytes) -> int:
        return self._hash(key)

    def partition_of(self, h: int) -> int:
        return h >> self._shift

    def owner(self, key: bytes) -> str | None:
        if not self.replicas:
            return None
        return self._primary_ids[self._hash(key) >> self._shift]

    def owner_index(self, h: int) -> int | None:
        return self.cells[(h >> self._shift) * self.replicas] if self.replicas else None

    def row(self, p: int) -> list[int]:
        r = self.replicas
        return self.cells[p * r : (p + 1) * r]

    def rows(self) -> list[list[str]]:
        """Every partition's node ids, primary first."""
        return [[self.ids[c] for c in self.row(p)] for p in range(self.partitions)]

    def successors(self, h: int) -> Iterable[int]:
        # The key's row, then the following rows, wrapping (6.1).
        if not self.replicas:
            return ()
        first, count = h >> self._shift, self.partitions

        def walk() -> Iterator[int]:
            for k in range(count):
                yield from self.row((first + k) % count)

        return walk()

    def units(self) -> tuple[list[int], int]:
        units = [0] * len(self.ids)
        for c in self.cells[:: self.replicas] if self.replicas else ():
            units[c] += 1
        return units, self.partitions

    def replica_counts(self) -> list[int]:
        """Cells (slots, primary or not) holding each node (7, "Replicas")."""
        held = [0] * len(self.ids)
        for c in self.cells:
            held[c] += 1
        return held

    def encode_body(self) -> bytes:
        fmt = _index_format(len(self.ids), len(self.cells))
        return _LE32.pack(self.partitions) + bytes([self.replicas]) + struct.pack(fmt, *self.cells)


def restore(
    active: Sequence[Node], partitions: int, replication_factor: int, body: bytes, key_hash: Hash64
) -> PartitionTable:
    """A table body accepted as in 5.6.3: partition count as configured,
    `r = min(replication_factor, n)` replicas, exactly `P × r` indices of the
    width of 9.1, every index below n, no node twice in a row."""
    n = len(active)
    if len(body) < 5:
        raise InvalidTable("the table body ends early")
    (p,) = _LE32.unpack_from(body)
    r = body[4]
    if p != partitions:
        raise InvalidTable(f"it has {p} partitions, the config {partitions}")
    if r != min(replication_factor, n):
        raise InvalidTable(f"it has {r} replicas per partition, not {min(replication_factor, n)}")
    width = index_width(n)
    if len(body) - 5 != p * r * width:
        raise InvalidTable(f"its body is {len(body) - 5} bytes, not {p * r * width}")
    cells = list(struct.unpack_from(_index_format(n, p * r), body, 5))
    return from_cells(active, p, r, cells, key_hash)


def from_cells(
    active: Sequence[Node], partitions: int, replicas: int, cells: list[int], key_hash: Hash64
) -> PartitionTable:
    n = len(active)
    if any(c >= n for c in cells):
        raise InvalidTable("a row names a node that is not active")
    for k in range(0, len(cells), max(replicas, 1)):
        row = cells[k : k + replicas]
        if len(set(row)) != len(row):
            raise InvalidTable(f"partition {k // replicas} names a node twice")
    return PartitionTable([x.id for x in active], partitions, replicas, cells, key_hash)


def from_rows(
    active: Sequence[Node],
    partitions: int,
    replication_factor: int,
    rows: Sequence[Sequence[str]],
    key_hash: Hash64,
) -> PartitionTable:
    """A table given as rows of node ids, primary first (the vectors' `table`)."""
    index = {x.id: i for i, x in enumerate(active)}
    r = min(replication_factor, len(active))
    if len(rows) != partitions:
        raise InvalidTable(f"{len(rows)} rows for {partitions} partitions")
    cells: list[int] = []
    for row in rows:
        if len(row) != r:
            raise InvalidTable(f"a row holds {len(row)} replicas, not {r}")
        for node_id in row:
            if node_id not in index:
                raise InvalidTable(f"{node_id!r} is not an active node")
            cells.append(index[node_id])
    return from_cells(active, partitions, r, cells, key_hash)


def apply_moves(
    previous: PartitionTable,
    active: Sequence[Node],
    partitions: int,
    replication_factor: int,
    moves: bytes,
    key_hash: Hash64,
) -> PartitionTable:
    """Version v's table from version v − 1's and v's `table_moves` (9.4)."""
    n = len(active)
    r = min(replication_factor, n)
    width = index_width(n)
    if previous.partitions != partitions:
        raise InvalidTable("moves cannot change the partition count")
    if len(moves) < 4:
        raise InvalidTable("the moves end early")
    (count,) = _LE32.unpack_from(moves)
    if len(moves) != 4 + count * (5 + width):
        raise InvalidTable("the moves' length does not match their count")
    # Rows as ids: indices shift when nodes come and go. Cut or padded to r.
    old = [
        [previous.ids[c] for c in previous.row(p)] if previous.replicas else []
        for p in range(partitions)
    ]
    rows: list[list[str | None]] = [(list(row) + [None] * r)[:r] for row in old]
    ids = [x.id for x in active]
    rec = struct.Struct("<IB" + ("H" if width == 2 else "I"))
    for k in range(count):
        part, slot, to = rec.unpack_from(moves, 4 + k * rec.size)
        if to >= n:
            raise InvalidTable("a move names no node")
        if part >= partitions or slot >= r:
            raise InvalidTable(f"a move to partition {part} slot {slot} is out of the table")
        before = old[part][slot] if slot < len(old[part]) else None
        if rows[part][slot] != before:
            raise InvalidTable(f"partition {part} slot {slot} changed twice")
        rows[part][slot] = ids[to]
    if any(x is None for row in rows for x in row):
        raise InvalidTable("the moves leave a slot empty")
    return from_rows(
        active,
        partitions,
        replication_factor,
        [[x for x in row if x is not None] for row in rows],
        key_hash,
    )
