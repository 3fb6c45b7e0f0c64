"""`twemproxy` (spec 5.9) piece by piece: nutcracker's binary32 point
counts, its server names and their order, the hash tag, and the tie order
of equal points, which the thin client takes from the encoding."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from ringd import InvalidEncoding, Node, Placement, PlacementError, RingConfig
from ringd.twemproxy import hashed_part, name_key, point_count, server_name
from ringd.twemproxy_hashes import TWEMPROXY_HASHES

TWEMPROXY = RingConfig(algorithm="twemproxy")


def kind(f: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(PlacementError) as e:
        f(*args, **kw)
    return e.value.kind


def thin(data: bytes) -> Placement:
    return Placement.from_table_encoding(data, hashlib.sha256(data).hexdigest())


@pytest.mark.parametrize(
    ("weight", "total", "servers", "expected"),
    [
        (1, 1, 1, 160),
        (1, 3, 3, 160),
        (2, 3, 2, 212),
        (1, 3, 2, 104),
        (5, 11, 3, 216),
        # Where binary64 would floor one lower (1/7 × 40 × 7 = 39.99…): 156.
        (1, 7, 7, 160),
        (3, 21, 7, 160),
        (1, 28, 7, 40),
        (999_983, 1_000_000, 1, 156),
        (1, 1_000_000, 7, 0),
    ],
)
def test_point_counts_in_binary32(weight: int, total: int, servers: int, expected: int) -> None:
    # As nutcracker's `floorf(pct * 160 / 4 * (float)n + 1e-10) * 4` built
    # with a C compiler gives them.
    assert point_count(weight, total, servers) == expected


def name(address: str | None, hash_key: str | None = None) -> str | None:
    return server_name(Node("a", address=address, hash_key=hash_key))


def test_servers_are_named_by_hash_key_else_host_on_11211_else_host_and_port() -> None:
    assert name("10.0.0.1:11211") == "10.0.0.1"
    assert name("10.0.0.1:6379") == "10.0.0.1:6379"
    assert name("cache-1.internal:11211") == "cache-1.internal"
    assert name("10.0.0.1:6379", "cache-1") == "cache-1"
    assert name("10.0.0.1:6379", "a:b!~") == "a:b!~"
    assert name(None, "cache-1") == "cache-1"  # placed by name; refused unless active
    assert name(None) is None
    assert name("h_1.x-y:65535") == "h_1.x-y:65535"


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "10.0.0.1:",
        "10.0.0.1:0",
        "10.0.0.1:011211",
        "10.0.0.1:65536",
        "10.0.0.1:+80",
        ":11211",
        "[::1]:11211",
        "a#b:11211",
        "a'b:11211",
        "a,b:11211",
    ],
)
def test_addresses_nutcracker_could_not_take(address: str) -> None:
    assert kind(name, address) == "AddressNotServer"
    # Even under a hash_key: nutcracker still connects to the address.
    assert kind(name, address, "cache-1") == "AddressNotServer"


@pytest.mark.parametrize("hash_key", ["two words", "a#b", 'a"b', "a'b", "a\\b", "é"])
def test_names_nutcracker_could_not_read_back(hash_key: str) -> None:
    assert kind(name, "10.0.0.1:11211", hash_key) == "InvalidServerName"


def test_servers_sort_by_name_length_then_bytes() -> None:
    names = ["b", "aa", "10.0.0.10", "ab", "a", "10.0.0.9", "Z"]
    assert sorted(names, key=name_key) == ["Z", "a", "b", "aa", "ab", "10.0.0.9", "10.0.0.10"]


def test_the_hashed_part_as_nutcracker_finds_it() -> None:
    tag = "{}"
    assert hashed_part(tag, b"user:{42}:cart") == b"42"
    # The first opening character, then the first closing one after it.
    assert hashed_part(tag, b"a{b{c}d}") == b"b{c"
    assert hashed_part(tag, b"a}b{c}") == b"c"
    # Empty, unclosed or missing tags hash the whole key.
    for whole in (b"a{}b", b"a{b", b"ab", b"}{", b""):
        assert hashed_part(tag, whole) == whole
    assert hashed_part("::", b"x:y:z") == b"y"
    assert hashed_part(None, b"{42}") == b"{42}"
    # The vectors' tag (twemproxy-hash-tag.json): "key-21" hashes "-2".
    assert hashed_part("y1", b"key-21") == b"-2"


def nodes(count: int) -> list[Node]:
    return [Node(f"n-{i}", weight=i, address=f"10.0.0.{i}:11211") for i in range(1, count + 1)]


@pytest.mark.parametrize("hash_name", sorted(TWEMPROXY_HASHES))
def test_key_hashes_follow_the_tag_and_leave_the_empty_key_at_zero(hash_name: str) -> None:
    plain = Placement.build(RingConfig(algorithm="twemproxy", hash=hash_name), nodes(3))
    tagged = Placement.build(
        RingConfig(algorithm="twemproxy", hash=hash_name, hash_tag="{}"), nodes(3)
    )
    for p in (plain, tagged):
        assert p.key_hash("") == 0
        assert p.key_hash(b"") == 0
    assert tagged.key_hash("user:{42}:cart") == plain.key_hash("42")
    assert tagged.owner("user:{42}:cart") == plain.owner("42")
    assert tagged.key_hash("{}") == plain.key_hash("{}") == TWEMPROXY_HASHES[hash_name](b"{}")
    # Same points, other key hashes: only the encoding's tag differs.
    assert tagged.points() == plain.points()
    assert (tagged.hash_tag, plain.hash_tag) == ("{}", None)


def test_key_hash_values() -> None:
    # From the vectors (twemproxy-single.json and -md5.json).
    p = Placement.build(TWEMPROXY, nodes(1))
    assert (p.key_hash("key-0"), p.key_hash("key-1")) == (2515697753, 2515697318)
    md5 = Placement.build(RingConfig(algorithm="twemproxy", hash="md5"), nodes(1))
    assert md5.key_hash("key-0") == int.from_bytes(hashlib.md5(b"key-0").digest()[:4], "little")


def test_equal_points_go_to_the_name_that_sorts_first() -> None:
    # cache-01214 and cache-03171 share the point 2115640176 (the vectors'
    # `colliding` shape): nutcracker sorts servers by name, so the point is
    # `replacement`'s though `original` comes first by id.
    ns = [
        Node("replacement", address="cache-01214:11211"),
        Node("original", address="cache-03171:11211"),
    ]
    p = Placement.build(TWEMPROXY, ns)
    points = p.points()
    assert points is not None
    assert len(points) == 320
    tied = [node_id for pos, node_id in points if pos == 2115640176]
    assert tied == ["replacement", "original"]
    assert [n.id for n in p.nodes] == ["original", "replacement"]
    # Keys hashing into that arc go to the first of the tied points, and
    # the thin client keeps the order from the encoding.
    q = thin(p.encode())
    assert q.points() == points
    assert p._layout.owner_index(2115640176) == q._layout.owner_index(2115640176) == 1


def test_the_encoding_carries_the_tag_and_the_addresses() -> None:
    p = Placement.build(RingConfig(algorithm="twemproxy", hash_tag="<>"), nodes(2))
    data = p.encode()
    q = thin(data)
    assert (q.algorithm, q.hash, q.hash_tag, q.encode()) == ("twemproxy", "fnv1a_64", "<>", data)
    assert [n.address for n in q.nodes] == ["10.0.0.1:11211", "10.0.0.2:11211"]
    assert q.owner("a<k>b") == p.owner("k")
    start = data.index(b"<>") - 1
    assert data[start] == 2
    bad = [
        data[:start] + b"\x01<" + data[start + 3 :],  # a tag of one byte
        data[:start] + b"\x02 >" + data[start + 3 :],  # a space in the tag
        data[:start] + b'\x02"}' + data[start + 3 :],  # a quote in the tag
        data[:start],  # no body
        data.replace(b"10.0.0.1:11211", b"10.0.0.1:01211"),  # not a server address
    ]
    # The hash must be one of twemproxy's.
    bad.append(data[:9] + b"\x01" + data[10:])
    for b in bad:
        with pytest.raises(InvalidEncoding):
            thin(b)
    # Positions out of order are refused; ties in any order are not (the
    # encoding carries no names): the fingerprint vouches for them.
    body = start + 3 + 4
    first, second = data[body : body + 8], data[body + 8 : body + 16]
    with pytest.raises(InvalidEncoding):
        thin(data[:body] + second + first + data[body + 16 :])


def test_no_active_node_owns_nothing() -> None:
    p = Placement.build(TWEMPROXY, [Node("a", state="draining")])
    assert (p.owner("k"), p.points(), p.preference_list("k")) == (None, [], [])
    assert p.key_hash("k") == TWEMPROXY_HASHES["fnv1a_64"](b"k")
    assert thin(p.encode()).encode() == p.encode()
