"""`nginx` (spec 5.7): nginx's `hash $key consistent`. A node is placed by
its address, `host:port`: 160 points per unit of weight, each the CRC-32 of
host, a zero byte, port and the previous point (little-endian, 0 at
first); of equal points only the first in node order stays."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from .model import Node
from .ring import Continuum

POINTS_PER_WEIGHT = 160


def key_hash(key: bytes) -> int:
    """CRC-32 (IEEE) of the key (3.5)."""
    return zlib.crc32(key)


def host_and_port(address: str) -> tuple[bytes, bytes] | None:
    """Split as nginx splits a `server` to hash it: at the last `:` that
    only digits follow (5.7)."""
    host, colon, port = address.rpartition(":")
    if not colon or not port or not all("0" <= c <= "9" for c in port):
        return None
    return host.encode(), port.encode()


_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
_IPV6 = frozenset("0123456789abcdefABCDEF:.")


def check_address(address: str) -> str | None:
    """Why `address` cannot be an nginx `server` (5.7), or None: `host:port`
    with a decimal port 1..65535 and a host name, IPv4 or bracketed IPv6
    host, so that nothing in it can end, open or comment out a directive."""
    parts = host_and_port(address)
    if parts is None:
        return "nginx rings need `host:port`, with a decimal port"
    host, port = parts[0].decode(), parts[1].decode()
    if len(port) > 5 or not 1 <= int(port) <= 65_535:
        return "the port must be from 1 to 65535"
    ipv6 = len(host) > 2 and host[0] == "[" and host[-1] == "]" and set(host[1:-1]) <= _IPV6
    if not host or not (set(host) <= _NAME or ipv6):
        return "the host must be a host name, an IPv4 address or a bracketed IPv6 address"
    if host.lower() == "unix":
        return "unix sockets are not supported"
    return None


def server_points(address: str, weight: int) -> list[int]:
    """One server's points in the order nginx makes them."""
    host, port = host_and_port(address) or (address.encode(), b"")
    base = zlib.crc32(host + b"\0" + port)
    points, prev = [], 0
    for _ in range(weight * POINTS_PER_WEIGHT):
        # crc32(b, crc32(a)) is crc32(a + b): the chain continues from base.
        prev = zlib.crc32(prev.to_bytes(4, "little"), base)
        points.append(prev)
    return points


def build(active: Sequence[Node]) -> Continuum:
    points: list[int] = []
    for i, node in enumerate(active):
        assert node.address is not None  # checked by `normalize`
        points.extend(p << 32 | i for p in server_points(node.address, node.weight))
    points.sort()
    # Of equal positions only the lowest index stays, as nginx keeps the
    # first of equal points in its server order.
    distinct = [p for k, p in enumerate(points) if k == 0 or p >> 32 != points[k - 1] >> 32]
    return Continuum([n.id for n in active], distinct, key_hash, 32)
