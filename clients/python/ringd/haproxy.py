"""`haproxy` (spec 5.8): HAProxy 2.6's `hash-type consistent`. Each server
has 16 points per unit of weight, `full_hash(id * 4096 + k)` of its stable
numeric server id; a key goes to the point *nearest* its hash (3.6), the
one before it on a tie. The nearest-point rule is the successor rule over
each point's last position ("boundary"), so the layout is a `Continuum` of
boundaries, with HAProxy's own points kept for the encoding."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping, Sequence
from typing import Callable

from .errors import InvalidEncoding, PlacementError
from .model import Node
from .ring import Continuum

MASK32 = 0xFFFFFFFF
POINTS_PER_WEIGHT = 16  # HAProxy's BE_WEIGHT_SCALE
ID_STRIDE = 4096  # SRV_EWGHT_RANGE: 256 weights x 16 points
MAX_WEIGHT = 256
MAX_SERVER_ID = (1 << 20) - 1
HASHES = ("sdbm", "djb2", "wt6", "crc32")  # the default first

_LE32 = struct.Struct("<I")
Hash32 = Callable[[bytes], int]


def sdbm(data: bytes) -> int:
    """`h = c + (h << 6) + (h << 16) - h` over unsigned bytes, from 0."""
    h = 0
    for c in data:
        h = (c + (h << 6) + (h << 16) - h) & MASK32
    return h


def djb2(data: bytes) -> int:
    """`h = h * 33 + c`, from 5381."""
    h = 5381
    for c in data:
        h = (h * 33 + c) & MASK32
    return h


def _rotl(x: int, s: int) -> int:
    return ((x << s) | (x >> (32 - s))) & MASK32 if s else x


def wt6(data: bytes) -> int:
    """Willy Tarreau's wt6; a rotation by 0 leaves its input as it is."""
    h0, h1, step0, step1 = 0xA53C965A, 0x5CA6953A, 6, 18
    for c in data:
        h0 = ~(h0 ^ c) & MASK32
        h1 = ~(h1 + c) & MASK32
        h0, h1 = _rotl(h1, step0), _rotl(h0, step1)
        t = ((h0 >> 16) ^ h1) & 0xFFFF
        step0, step1 = t & 0x1F, t >> 11
    return h0 ^ h1


def crc32(data: bytes) -> int:
    """The standard CRC-32 (IEEE)."""
    return zlib.crc32(data) & MASK32


HASH32: dict[str, Hash32] = {"sdbm": sdbm, "djb2": djb2, "wt6": wt6, "crc32": crc32}


def full_hash(a: int) -> int:
    """HAProxy's avalanche: Bob Jenkins' integer mix, times 3221225473."""
    a = (a + 0x7ED55D16 + (a << 12)) & MASK32
    a = (a ^ 0xC761C23C ^ (a >> 19)) & MASK32
    a = (a + 0x165667B1 + (a << 5)) & MASK32
    a = ((a + 0xD3A2646C) ^ (a << 9)) & MASK32
    a = (a + 0xFD7046C5 + (a << 3)) & MASK32
    a = (a ^ 0xB55A4F09 ^ (a >> 16)) & MASK32
    return (a * 3221225473) & MASK32


def key_hasher(hash_name: str, avalanche: bool) -> Hash32:
    """The key hash of 3.6: HAProxy's function, then `full_hash` if on."""
    f = HASH32[hash_name]
    if avalanche:
        return lambda key: full_hash(f(key))
    return f


def point_key(server_id: int, k: int) -> int:
    return full_hash((server_id * ID_STRIDE + k) & MASK32)


class Haproxy(Continuum):
    """A `Continuum` of boundaries (successor rule, 32-bit circle)."""

    def __init__(
        self,
        ids: Sequence[str],
        server_ids: Sequence[int],
        points: list[tuple[int, int]],
        key_hash: Hash32,
        avalanche: bool,
    ) -> None:
        """`points` are HAProxy's `(key, node index)`, sorted by key."""
        n = len(points)
        boundaries = []
        for j, (key, owner) in enumerate(points):
            gap = (points[(j + 1) % n][0] - key - 1) % (1 << 32) + 1  # 2^32 for a lone point
            boundaries.append(((key + gap // 2) & MASK32) << 32 | owner)
        super().__init__(ids, boundaries, key_hash, 32)
        self.server_ids = list(server_ids)
        self.haproxy_points = points
        self.avalanche = avalanche

    def encode_body(self) -> bytes:
        out = bytearray([int(self.avalanche)])
        for s in self.server_ids:
            out += _LE32.pack(s)
        out += _LE32.pack(len(self.haproxy_points))
        for key, owner in self.haproxy_points:
            out += _LE32.pack(key) + _LE32.pack(owner)
        return bytes(out)

    @classmethod
    def decode_body(cls, active: Sequence[Node], body: bytes, hash_name: str) -> Haproxy:
        """A body of 9.1: the points are recomputed from the ids and the
        weights, and the caller re-encodes to check they are the ones sent."""
        n = len(active)
        if len(body) < 5 + 4 * n or body[0] > 1:
            raise InvalidEncoding("the haproxy body ends early or its avalanche byte is not 0 or 1")
        server_ids = [_LE32.unpack_from(body, 1 + 4 * i)[0] for i in range(n)]
        return build(
            active,
            dict(zip((x.id for x in active), server_ids)),
            hash_name,
            body[0] == 1,
            error=InvalidEncoding,
        )


def build(
    active: Sequence[Node],
    server_ids: Mapping[str, int],
    hash_name: str,
    avalanche: bool,
    error: Callable[[str], Exception] = lambda m: PlacementError("InvalidServerIds", m),
) -> Haproxy:
    """Every active node's points from its server id (1 ..= 2^20 - 1,
    distinct) and weight (at most 256)."""
    ids: list[int] = []
    for node in active:
        s = server_ids.get(node.id)
        if not isinstance(s, int) or isinstance(s, bool) or not 1 <= s <= MAX_SERVER_ID:
            raise error(f"node {node.id!r} has server id {s!r}: 1..={MAX_SERVER_ID}")
        if node.weight > MAX_WEIGHT:
            raise PlacementError("WeightTooHighForProxy", f"{node.id}: weight {node.weight} > 256")
        ids.append(s)
    if len(set(ids)) != len(ids):
        raise error("two active nodes share a server id")
    points = sorted(
        (point_key(s, k), i)
        for i, (node, s) in enumerate(zip(active, ids))
        for k in range(POINTS_PER_WEIGHT * node.weight)
    )
    return Haproxy([x.id for x in active], ids, points, key_hasher(hash_name, avalanche), avalanche)


def initial_ids(nodes: Sequence[Node]) -> dict[str, int]:
    """A placement built from scratch: every node, in any state, in id
    order, numbered from 1 (5.8.3)."""
    return {node_id: i for i, node_id in enumerate(sorted({n.id for n in nodes}), start=1)}
