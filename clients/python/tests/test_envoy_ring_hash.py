"""`envoy_ring_hash` (spec 5.10) piece by piece: the split of 2^31 into
EDS weights, the entry counts in binary64, Envoy's own rings, the
addresses an xDS endpoint can have, placement by label rather than by
address, and the thin client's decoding of the body."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from ringd import InvalidEncoding, Node, Placement, PlacementError, RingConfig
from ringd.envoy_ring_hash import (
    WEIGHT_TOTAL,
    check_address,
    endpoint_weights,
    entry_counts,
    ring_entries,
)
from ringd.hashes import xxh64

ENVOY = RingConfig(algorithm="envoy_ring_hash")
ENVOY_MAX = 8 << 20  # Envoy's default maximum_ring_size, which its tests use


def kind(f: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(PlacementError) as e:
        f(*args, **kw)
    return e.value.kind


def thin(data: bytes) -> Placement:
    return Placement.from_table_encoding(data, hashlib.sha256(data).hexdigest())


def hosts(ports: range, weight: int = 1) -> list[Node]:
    """Nodes keyed as Envoy's test hosts: `h-<port>`, hash key and address
    `127.0.0.1:<port>`."""
    return [
        Node(f"h-{p}", weight=weight, hash_key=f"127.0.0.1:{p}", address=f"127.0.0.1:{p}")
        for p in ports
    ]


def envoy(minimum: int, maximum: int = 4096, **config: Any) -> RingConfig:
    return RingConfig(
        algorithm="envoy_ring_hash", minimum_ring_size=minimum, maximum_ring_size=maximum, **config
    )


def test_the_key_hash_is_xxh64_with_seed_0() -> None:
    p = Placement.build(ENVOY, hosts(range(80, 82)))
    assert (p.hash, ENVOY.hash) == ("xxh64", "xxh64")
    assert p.key_hash("") == 0xEF46DB3751D8E999
    assert p.key_hash("hello") == 0x26C7827D889F6DA3
    assert p.key_hash(b"\xff\x00") == xxh64(b"\xff\x00", 0)
    # From envoy_ring_hash-two-hosts.json.
    assert p.key_hash("key-0") == 1358662563146998643
    assert xxh64(b"127.0.0.1:90_0", 0) == 16117243373044804889


def test_endpoint_weights_share_out_two_to_the_31() -> None:
    assert endpoint_weights([Node("a"), Node("bb", weight=2)]) == [715827883, 1431655765]
    # Equal remainders go in label byte order.
    assert endpoint_weights([Node("a"), Node("bb"), Node("ccc")]) == [
        715827883,
        715827883,
        715827882,
    ]
    assert endpoint_weights([Node("ccc"), Node("a", hash_key="zz"), Node("bb")]) == [
        715827883,
        715827882,
        715827883,
    ]
    six = endpoint_weights(hosts(range(90, 96)))
    assert six == [357913942, 357913942, 357913941, 357913941, 357913941, 357913941]
    assert sum(six) == WEIGHT_TOTAL == 1 << 31
    # Powers of two are exact: Envoy's plain weights give the same ring.
    assert endpoint_weights(hosts(range(80, 82))) == [1 << 30, 1 << 30]
    # Ramps scale the weights (2.2): half a ramp on weight 2 is weight 1.
    ramped = [Node("a", weight=2, ramp=32_768), Node("b")]
    assert endpoint_weights(ramped) == [1 << 30, 1 << 30]
    assert endpoint_weights([]) == []


def test_a_share_that_rounds_to_zero_is_refused() -> None:
    def pair(weight: int) -> list[Node]:
        return [
            Node("a", ramp=1, address="10.0.0.1:80"),
            Node("b", weight=weight, address="10.0.0.2:80"),
        ]

    # a is 1 of 65,535 × 65,536 + 1: its remainder wins the one unit left.
    assert endpoint_weights(pair(65_535)) == [1, (1 << 31) - 1]
    Placement.build(ENVOY, pair(65_535))
    # 1 of 2^32 + 1: b's remainder is the larger, and a gets nothing.
    assert kind(Placement.build, ENVOY, pair(65_536)) == "WeightShareTooSmall"
    assert kind(endpoint_weights, pair(1_000_000)) == "WeightShareTooSmall"
    with pytest.raises(PlacementError, match=r"^WeightShareTooSmall: a has 1 of the 4294967297"):
        endpoint_weights(pair(65_536))


def test_entry_counts_in_binary64() -> None:
    # Six weights that are not powers of two at minimum 12: 13 entries
    # (spec 5.10.1), where Envoy's plain weights 1 give 12.
    six = [357913942, 357913942, 357913941, 357913941, 357913941, 357913941]
    assert entry_counts(six, 12, ENVOY_MAX) == [3, 2, 2, 2, 2, 2]
    assert entry_counts([1] * 6, 12, ENVOY_MAX) == [2] * 6
    # Envoy's HostWeightedTinyRing: weights 1, 2, 3 in a ring of exactly 6.
    assert entry_counts([1, 2, 3], 6, 6) == [1, 2, 3]
    # UnevenHosts: two halves at minimum 3: m = 0.5, scale 4, two each.
    assert entry_counts([1 << 30, 1 << 30], 3, ENVOY_MAX) == [2, 2]
    # The maximum caps the scale; a light endpoint can then get none.
    assert entry_counts([1 << 30, 1 << 30], 1024, 16) == [8, 8]
    assert entry_counts([1 << 30, 1 << 30], 1, 1) == [1, 0]
    # At a maximum of 12 the six weights of 2^31 get 12 entries, not
    # Envoy's 2 each: the scale is cut to 12 and the running sums fall short.
    assert entry_counts(six, 12, 12) == [3, 2, 2, 2, 2, 1]
    assert entry_counts([], 1024, 4096) == []


def test_envoys_basic_ring_from_its_plain_weights() -> None:
    # ring_hash_lb_test.cc `Basic`: six hosts of weight 1, minimum 12.
    endpoints = [(f"127.0.0.1:{p}".encode(), 1) for p in range(90, 96)]
    assert ring_entries(endpoints, 12, ENVOY_MAX) == [
        (833437586790550860, 4),
        (928266305478181108, 2),
        (1033482794131418490, 0),
        (3551244743356806947, 5),
        (3851675632748031481, 3),
        (5583722120771150861, 1),
        (6311230543546372928, 1),
        (7700377290971790572, 3),
        (13144177310400110813, 5),
        (13444792449719432967, 2),
        (15516499411664133160, 4),
        (16117243373044804889, 0),
    ]


def test_envoys_host_weighted_tiny_ring() -> None:
    endpoints = [(f"127.0.0.1:{p}".encode(), w) for p, w in zip(range(90, 93), (1, 2, 3))]
    assert ring_entries(endpoints, 6, 6) == [
        (928266305478181108, 2),
        (4443673547860492590, 2),
        (5583722120771150861, 1),
        (6311230543546372928, 1),
        (13444792449719432967, 2),
        (16117243373044804889, 0),
    ]


def test_two_hosts_give_envoys_uneven_hosts_ring() -> None:
    p = Placement.build(envoy(3, ENVOY_MAX), hosts(range(80, 82)))
    assert p.points() == [
        (5454692015285649509, "h-80"),
        (7859399908942313493, "h-81"),
        (13838424394637650569, "h-80"),
        (16064866803292627174, "h-81"),
    ]
    # The first entry at or after the key hash, wrapping past the last.
    assert p._layout.owner_index(0) == 0
    assert p._layout.owner_index(5454692015285649509) == 0
    assert p._layout.owner_index(5454692015285649510) == 1
    assert p._layout.owner_index(16064866803292627174) == 1
    assert p._layout.owner_index(16064866803292627175) == 0
    assert p._layout.owner_index((1 << 64) - 1) == 0
    # Preference lists walk the ring (6.1), as `ring` does.
    assert p.preference_list("key-0", 3) == ["h-80", "h-81"]
    assert p.preference_list("key-1", 1) == ["h-81"]
    # Arcs (7): (p3, 2^64) and [0, p0] are h-80's.
    units = [int(n["units"]) for n in p.ownership()["nodes"]]
    assert units == [13815593771397911027, 4631150302311640589]
    assert sum(units) == 1 << 64
    assert p.ownership()["basis"] == "arcs"


def test_six_hosts_at_minimum_12_give_13_entries() -> None:
    p = Placement.build(envoy(12, ENVOY_MAX), hosts(range(90, 96)))
    points = p.points()
    assert points is not None
    assert len(points) == 13
    ids = [node_id for _, node_id in points]
    assert [ids.count(f"h-{port}") for port in range(90, 96)] == [3, 2, 2, 2, 2, 2]
    # The twelve of Envoy's Basic ring are among them, and the extra one is
    # `127.0.0.1:90_2`.
    extra = xxh64(b"127.0.0.1:90_2", 0)
    assert (extra, "h-90") in points
    assert [pt for pt in points if pt[0] != extra] == [
        (pos, f"h-{90 + e}")
        for pos, e in ring_entries(
            [(f"127.0.0.1:{p}".encode(), 1) for p in range(90, 96)], 12, ENVOY_MAX
        )
    ]


def test_ring_sizes_bound_the_entries() -> None:
    nodes = hosts(range(80, 82))
    sizes = {}
    for minimum, maximum in ((1, 1), (1, 4096), (3, 3), (1024, 4096), (4096, 4096)):
        points = Placement.build(envoy(minimum, maximum), nodes).points()
        assert points is not None
        sizes[(minimum, maximum)] = len(points)
    assert sizes == {(1, 1): 1, (1, 4096): 2, (3, 3): 3, (1024, 4096): 1024, (4096, 4096): 4096}
    # The maximum cuts the six hosts' ring of 13 to 12.
    six = hosts(range(90, 96))
    assert [len(Placement.build(envoy(12, m), six).points() or []) for m in (12, 13)] == [12, 13]
    weighted = [Node("a", weight=1, address="10.0.0.1:1"), Node("b", weight=3, address="[::1]:1")]
    points = Placement.build(envoy(8), weighted).points()
    assert points is not None
    # m = 1/4, scale = ceil(8/4) × 4 = 8: a ring of 8, a quarter of it a's.
    assert [[x for _, x in points].count(i) for i in "ab"] == [2, 6]


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1:8080",
        "0.0.0.0:1",
        "255.255.255.255:65535",
        "[2001:db8::1]:8080",
        "[::1]:80",
        "[::]:1",
        "[::ffff:10.0.0.1]:80",  # IPv4-mapped: Rust writes it dotted
        "[::102:304]:80",
        "[2001:db8:0:1:1:1:1:1]:80",  # a single zero group is not compressed
        "[2001:db8::1:0:0:1]:80",  # the first of two equal zero runs
        "[1:0:0:2::3]:1",  # the longer zero run
        "[1:2:3:4:5:6:7:8]:80",
    ],
)
def test_addresses_envoy_writes_back(address: str) -> None:
    assert check_address(address) is None


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "10.0.0.1:",
        "10.0.0.1:0",
        "10.0.0.1:65536",
        "10.0.0.1:080",
        "10.0.0.1:+80",
        "010.0.0.1:80",
        "10.0.0:80",
        "cache.local:80",
        "localhost:80",
        "2001:db8::1:80",  # IPv6 without brackets
        "[10.0.0.1]:80",
        "[2001:DB8::1]:80",  # not lowercase
        "[::0001]:80",  # leading zeros
        "[2001:db8:0:0:1::1]:80",  # not the first longest zero run
        "[2001:db8::0:1]:80",
        "[2001:db8:0:0:0:0:0:1]:80",
        "[::1.2.3.4]:80",  # Rust writes ::102:304
        "[::ffff:a00:1]:80",  # Rust writes ::ffff:10.0.0.1
        "[fe80::1%3]:80",  # a zone
        "[fe80::1%eth0]:80",
        "[::1]",
        ":80",
    ],
)
def test_addresses_no_xds_client_could_take(address: str) -> None:
    assert check_address(address) is not None
    assert kind(Placement.build, ENVOY, [Node("a", address=address)]) == "AddressNotServer"


def test_nodes_are_placed_by_label_not_by_address() -> None:
    a = [Node("a", address="10.0.0.1:80"), Node("b", weight=2, address="10.0.0.2:80")]
    b = [Node("a", address="[2001:db8::7]:9000"), Node("b", weight=2, address="10.9.9.9:1")]
    pa, pb = Placement.build(ENVOY, a), Placement.build(ENVOY, b)
    # Addresses are not encoded: the same bytes, the same fingerprint.
    assert pa.encode() == pb.encode()
    assert b"10.0.0.1" not in pa.encode()
    # A replacement given the old node's label takes exactly its entries.
    swapped = [Node("a", address="10.0.0.1:80"), Node("c", weight=2, hash_key="b", address="x")]
    with pytest.raises(PlacementError):
        Placement.build(ENVOY, swapped)  # `x` is no address
    swapped[1] = Node("c", weight=2, hash_key="b", address="10.0.0.3:80")
    pc = Placement.build(ENVOY, swapped)
    before, after = pa.points(), pc.points()
    assert before is not None
    assert after is not None
    assert [(pos, {"b": "c"}.get(n, n)) for pos, n in before] == after


def test_refusals_in_their_order() -> None:
    build = Placement.build
    assert kind(build, ENVOY, [Node("a")]) == "MissingAddress"
    assert kind(build, ENVOY, [Node("a", hash_key="10.0.0.1:80")]) == "MissingAddress"
    build(ENVOY, [Node("a", address="10.0.0.1:80"), Node("b", state="draining")])
    # Every node's address is checked, active or not.
    ok = Node("a", address="10.0.0.1:80")
    assert kind(build, ENVOY, [ok, Node("b", address="h:80", state="joining")]) == (
        "AddressNotServer"
    )
    # One label each (the first in byte order is named), then one address each.
    same_label = [ok, Node("b", hash_key="a", address="10.0.0.2:80")]
    assert kind(build, ENVOY, same_label) == "EndpointKeyTaken"
    with pytest.raises(PlacementError, match=r"^EndpointKeyTaken: a and b would both be hashed"):
        build(ENVOY, same_label)
    assert kind(build, ENVOY, [ok, Node("b", address="10.0.0.1:80")]) == "DuplicateAddress"
    # Only active nodes collide.
    build(ENVOY, [ok, Node("b", hash_key="a", address="10.0.0.1:80", state="draining")])
    # A label is checked before an address, an address before a share.
    both = [ok, Node("b", hash_key="a", address="10.0.0.1:80")]
    assert kind(build, ENVOY, both) == "EndpointKeyTaken"
    tiny = [Node("a", ramp=1, address="10.0.0.1:80"), Node("b", weight=1_000_000, address="h")]
    assert kind(build, ENVOY, tiny) == "AddressNotServer"
    tiny[1] = Node("b", weight=1_000_000, address="10.0.0.1:80")
    assert kind(build, ENVOY, tiny) == "DuplicateAddress"
    # Ramps are allowed: the proxies' EDS weights follow them.
    build(ENVOY, [Node("a", ramp=100, address="10.0.0.1:80"), Node("b", address="[::1]:80")])


def test_the_thin_client_decodes_the_ring() -> None:
    nodes = [
        Node("a", weight=2, ramp=30_000, address="10.0.0.1:80"),
        Node("b", hash_key="é ✓", address="[::1]:80"),
        Node("c", address="10.0.0.3:80", state="draining"),
    ]
    p = Placement.build(envoy(64, 128), nodes)
    data = p.encode()
    q = thin(data)
    assert (q.algorithm, q.hash, q.config, q.is_ramped) == ("envoy_ring_hash", "xxh64", None, True)
    assert q.points() == p.points()
    assert q.encode() == data
    assert [n.address for n in q.nodes] == [None, None]  # not encoded
    assert [q.owner(f"k{i}") for i in range(200)] == [p.owner(f"k{i}") for i in range(200)]
    assert q.ownership() == p.ownership()
    # The header: algorithm 10, hash 18, no address in the node records.
    assert data[8:10] == bytes([10, 18])
    assert data[20:27] == b"\x01a\x00" + (2).to_bytes(4, "little")
    count = len(p.points() or [])
    assert int.from_bytes(data[-(4 + 12 * count) : -12 * count], "little") == count
    body = len(data) - 12 * count
    first, second = data[body : body + 12], data[body + 12 : body + 24]
    bad = [
        data[:9] + b"\x01" + data[10:],  # xxh3: not this algorithm's hash
        data[:body] + second + first + data[body + 24 :],  # entries out of order
        data[:-1],
        data + b"\x00",
        data[:-4] + (2).to_bytes(4, "little"),  # node index 2 of 2
    ]
    for b in bad:
        with pytest.raises(InvalidEncoding):
            thin(b)


def test_no_active_node_owns_nothing() -> None:
    p = Placement.build(ENVOY, [Node("a", state="draining")])
    assert (p.owner("k"), p.points(), p.preference_list("k")) == (None, [], [])
    assert p.ownership()["total_units"] == "0"
    assert thin(p.encode()).encode() == p.encode()
