"""HAProxy's key hashes and `full_hash` (spec 3.6), and the nearest-point
rule (5.8.2) against HAProxy's own steps."""

from __future__ import annotations

from bisect import bisect_left

import pytest

from ringd import Node, Placement, RingConfig
from ringd.haproxy import HASH32, Haproxy, full_hash

VALUES = {  # spec 3.6, hex
    b"": ("0", "1505", "f99a0360", "0"),
    b"hello": ("28d19932", "0f923099", "d2e6e6b7", "3610a686"),
    b"node-a": ("5921ae76", "1087a399", "b84aac1b", "78994dab"),
}


@pytest.mark.parametrize("data", list(VALUES))
def test_hash_values(data: bytes) -> None:
    got = tuple(HASH32[f](data) for f in ("sdbm", "djb2", "wt6", "crc32"))
    assert got == tuple(int(x, 16) for x in VALUES[data])


def test_full_hash_values() -> None:
    assert full_hash(0) == 0xAB4ED927
    assert full_hash(1) == 0x348681B6
    assert full_hash(4096) == 0x49C2008B
    assert full_hash(HASH32["sdbm"](b"hello")) == 0x7AE088A6


def nearest(points: list[tuple[int, str]], h: int) -> str:
    """HAProxy's steps: the first point at or after h (wrapping), the one
    before it, and the nearer of the two, the one before on a tie."""
    keys = [k for k, _ in points]
    nxt = bisect_left(keys, h) % len(points)
    prev = nxt - 1
    dp = (h - points[prev][0]) % (1 << 32)
    dn = (points[nxt][0] - h) % (1 << 32)
    return points[prev][1] if dp <= dn else points[nxt][1]


def test_owner_is_the_nearest_point() -> None:
    nodes = [Node("a", weight=2), Node("b"), Node("c", weight=3)]
    p = Placement.build(
        RingConfig(algorithm="haproxy", hash="crc32", avalanche=False),
        nodes,
        server_ids={"a": 4, "b": 9, "c": 2},
    )
    assert p.server_ids() == {"a": 4, "b": 9, "c": 2}
    lay = p._layout
    assert isinstance(lay, Haproxy)
    points = [(k, lay.ids[i]) for k, i in lay.haproxy_points]
    probes = [0, 1, (1 << 32) - 1]
    for (a, _), (b, _) in zip(points, points[1:]):
        mid = a + (b - a) // 2
        probes += [a, b, mid - 1, mid, mid + 1]
    for h in probes:
        i = lay.owner_index(h)
        assert i is not None, h
        assert lay.ids[i] == nearest(points, h), h
