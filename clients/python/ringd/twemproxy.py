"""`twemproxy` (spec 5.9): nutcracker 0.5.0's `distribution: ketama`.

It differs from libketama (`ketama`) in three ways that move keys: it
counts a server's points in binary32 (`floorf(pct * 160 / 4 * n)`, each
step rounded to float); it places a server by its name (the node's
`hash_key`, else the host alone on port 11211, else `host:port`); and it
sorts its servers by name before building the ring, so of equal points the
server whose name sorts first comes first, whatever its node index. Keys
are hashed with twemproxy's hashes (3.7), only the part inside the ring's
`hash_tag` when there is one."""

from __future__ import annotations

import hashlib
import math
import re
import struct
from collections.abc import Sequence

from .errors import InvalidEncoding, PlacementError
from .ketama import f32
from .model import Node, hash_tag_problem
from .ring import Continuum, decode_points
from .twemproxy_hashes import TWEMPROXY_HASHES, Hash32

_DIGEST = struct.Struct("<4I")
#: The port on which nutcracker names an unnamed server by its host alone.
DEFAULT_PORT = 11211
_HOST = re.compile(r"[A-Za-z0-9._-]+\Z")
_PORT = re.compile(r"[1-9][0-9]{0,4}\Z")
# Refused in a server name, besides spaces and what is not printable ASCII.
_NAME_BAD = frozenset("#\"'\\")


def point_count(weight: int, total: int, servers: int) -> int:
    """Points nutcracker gives a server of `weight` among `servers` live
    servers of total weight `total`: `floorf(pct * 160 / 4 * n) * 4`, each
    step in binary32. (nutcracker adds 1e-10 in binary64 and narrows back to
    binary32 before the floor, which never changes it.)"""
    pct = f32(f32(float(weight)) / f32(float(total)))
    per_hash = f32(f32(f32(pct * 160.0) / 4.0) * f32(float(servers)))
    return math.floor(f32(per_hash + 1e-10)) * 4


def point_counts(active: Sequence[Node]) -> list[int]:
    """Every active node's point count, in index order."""
    total = sum(n.weight for n in active)
    return [point_count(n.weight, total, len(active)) for n in active]


def split_address(address: str) -> tuple[str, int]:
    """`host:port` as nutcracker reads it: a host name or IPv4 address
    (letters, digits, `.`, `-`, `_`) and a port from 1 to 65535 without
    leading zeros; else `AddressNotServer`'s reason as a ValueError."""
    host, colon, port = address.rpartition(":")
    if not colon:
        raise ValueError("twemproxy rings need `host:port`")
    if not _HOST.match(host):
        raise ValueError(
            "the host must be a host name or an IPv4 address (letters, digits, '.', '-', '_')"
        )
    if not _PORT.match(port) or int(port) > 65_535:
        raise ValueError("the port must be from 1 to 65535, without leading zeros")
    return host, int(port)


def server_name(node: Node) -> str | None:
    """The name nutcracker places `node` by: its `hash_key`, else the host
    alone on port 11211, else `host:port`; None with neither an address nor
    a `hash_key`. Checks the address (`AddressNotServer`), then the name
    (`InvalidServerName`): nutcracker must read it back as written."""
    split = None
    if node.address is not None:
        try:
            split = split_address(node.address)
        except ValueError as e:
            raise PlacementError(
                "AddressNotServer", f"{node.id} at {node.address!r}: {e}"
            ) from None
    if node.hash_key is not None:
        key = node.hash_key
        if not all("!" <= c <= "~" and c not in _NAME_BAD for c in key):
            raise PlacementError(
                "InvalidServerName",
                f"{node.id} has hash_key {key!r}: a twemproxy server name "
                "is printable ASCII without spaces, '#', quotes or "
                "backslashes",
            )
        return key
    if split is None:
        return None
    host, port = split
    return host if port == DEFAULT_PORT else f"{host}:{port}"


def name_key(name: str) -> tuple[int, bytes]:
    """nutcracker's server order: shorter names first, then byte by byte."""
    b = name.encode()
    return len(b), b


def names(active: Sequence[Node]) -> list[str]:
    """The active nodes' names, index by index, checked: every one has a
    name, and no two share one (`ServerNameTaken`, naming the field to
    change: `hash_key` if either node has one, else `address`)."""
    out: list[str] = []
    for n in active:
        name = server_name(n)
        if name is None:
            raise PlacementError("MissingAddress", f"{n.id} under twemproxy")
        out.append(name)
    order = sorted(range(len(active)), key=lambda i: name_key(out[i]))
    for a, b in zip(order, order[1:]):
        if out[a] == out[b]:
            x, y = active[a], active[b]
            field = "hash_key" if x.hash_key is not None or y.hash_key is not None else "address"
            raise PlacementError(
                "ServerNameTaken",
                f"{x.id} and {y.id} would both be the twemproxy server "
                f"{out[a]!r}: give one a distinct {field}",
            )
    return out


def hashed_part(tag: str | None, key: bytes) -> bytes:
    """The part of `key` nutcracker hashes: after the first opening
    character of `tag`, up to the first closing one after it, when both are
    found and the part is not empty; else the whole key."""
    if tag is None:
        return key
    start = key.find(tag[0].encode())
    if start < 0:
        return key
    end = key.find(tag[1].encode(), start + 1)
    return key[start + 1 : end] if end > start + 1 else key


def key_hasher(hash_name: str, tag: str | None) -> Hash32:
    """The key hash: twemproxy's `hash_name` of the hashed part; 0 when
    that is empty (nutcracker does not hash an empty key)."""
    f = TWEMPROXY_HASHES[hash_name]
    if tag is None:
        return lambda key: f(key) if key else 0

    def key_hash(key: bytes) -> int:
        part = hashed_part(tag, key)
        return f(part) if part else 0

    return key_hash


class Twemproxy(Continuum):
    """nutcracker's continuum on the 32-bit circle: equal points in server
    name order, not index order, and a body that starts with the hash tag
    (9.1)."""

    def __init__(
        self, ids: Sequence[str], points: list[int], hash_name: str, tag: str | None
    ) -> None:
        """`points` are `(position << 32) | node index` in nutcracker's
        order before its sort: a stable sort by position keeps equal points
        in it, as glibc's `qsort` (a merge sort) does."""
        points.sort(key=lambda p: p >> 32)
        super().__init__(ids, points, key_hasher(hash_name, tag), 32, presorted=True)
        self.tag = tag

    def encode_body(self) -> bytes:
        tag = b"" if self.tag is None else self.tag.encode()
        return bytes([len(tag)]) + tag + super().encode_body()

    @classmethod
    def decode_body(cls, active: Sequence[Node], body: bytes, hash_name: str) -> Twemproxy:
        """A body of 9.1: the hash tag, then the points. Their order among
        equal positions cannot be checked without the servers' names, which
        the encoding does not carry: the fingerprint vouches for it."""
        if not body or body[0] not in (0, 2) or len(body) < 1 + body[0]:
            raise InvalidEncoding("a twemproxy body starts with a hash tag of 0 or 2 bytes")
        tag: str | None = None
        if body[0]:
            raw = body[1:3]
            tag = raw.decode("latin-1")
            problem = hash_tag_problem(tag)
            if problem is not None:
                raise InvalidEncoding(f"hash_tag {raw!r} {problem}")
        for n in active:
            try:
                split_address(n.address or "")
            except ValueError as e:
                raise InvalidEncoding(f"node {n.id} at {n.address!r}: {e}") from None
        points = decode_points([n.id for n in active], body[1 + body[0] :], 32, ties_by_index=False)
        return cls([n.id for n in active], points, hash_name, tag)


def build(active: Sequence[Node], hash_name: str, tag: str | None) -> Twemproxy:
    """Servers in name order, each with its points in order (digest k of
    `"<name>-<k>"`, then its four little-endian words)."""
    server_names = names(active)
    counts = point_counts(active)
    points: list[int] = []
    for i in sorted(range(len(active)), key=lambda i: name_key(server_names[i])):
        prefix = server_names[i].encode() + b"-"
        for k in range(counts[i] // 4):
            d = hashlib.md5(prefix + str(k).encode()).digest()
            points.extend(p << 32 | i for p in _DIGEST.unpack(d))
    return Twemproxy([n.id for n in active], points, hash_name, tag)
