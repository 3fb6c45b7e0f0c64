"""`envoy_maglev` (spec 5.11) piece by piece: the table is `maglev`'s fill
on the EDS weights of 5.10.1, which a literal port of Envoy's binary64
fill reproduces slot for slot where `maglev`'s plain weights do not; the
refusals it shares with `envoy_ring_hash`, Envoy's bound on the table
size, placement by label rather than by address, exact diffs, and the thin
client's decoding of the body."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ringd import InvalidEncoding, Node, Placement, PlacementError, RingConfig
from ringd.diff import summarize
from ringd.envoy_ring_hash import WEIGHT_TOTAL, endpoint_weights
from ringd.hashes import xxh64
from ringd.maglev import fill

ENVOY = RingConfig(algorithm="envoy_maglev")
REFERENCE = Path(__file__).parent / "../../../tests/placement/vectors/reference/envoy-maglev.json"


def kind(f: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(PlacementError) as e:
        f(*args, **kw)
    return e.value.kind


def thin(data: bytes) -> Placement:
    return Placement.from_table_encoding(data, hashlib.sha256(data).hexdigest())


def table(m: int) -> RingConfig:
    return RingConfig(algorithm="envoy_maglev", table_size=m)


def endpoints(labels: Sequence[str], weights: Sequence[int]) -> list[Node]:
    """Nodes `n000`, `n001`, … keyed by `labels`, each at its own address."""
    return [
        Node(f"n{i:03}", weight=w, hash_key=label, address=f"10.9.{i // 250}.{i % 250 + 1}:80")
        for i, (label, w) in enumerate(zip(labels, weights))
    ]


def envoy_table(hosts: Sequence[tuple[str, float]], m: int) -> list[int]:
    """Envoy's `OriginalMaglevTable::constructImplementationInternals`
    (`maglev_lb.cc`) as written, in binary64: `hosts` are (hash key, weight
    as Envoy normalizes it), the result each slot's position in `hosts`."""
    order = sorted(range(len(hosts)), key=lambda h: hosts[h][0].encode())
    offset = [xxh64(hosts[h][0].encode(), 0) % m for h in order]
    skip = [xxh64(hosts[h][0].encode(), 1) % (m - 1) + 1 for h in order]
    weight = [hosts[h][1] for h in order]
    target = [0.0] * len(order)
    nxt = [0] * len(order)
    top = max(weight)
    slots = [-1] * m
    filled, iteration = 0, 1
    while filled < m:
        for e, host in enumerate(order):
            if filled == m:
                break
            if float(iteration) * weight[e] < target[e]:
                continue
            target[e] += top
            c = (offset[e] + skip[e] * nxt[e]) % m
            while slots[c] != -1:
                nxt[e] += 1
                c = (offset[e] + skip[e] * nxt[e]) % m
            slots[c] = host
            nxt[e] += 1
            filled += 1
        iteration += 1
    return slots


def normalized(weights: Sequence[int]) -> list[float]:
    """Envoy divides each weight by their sum."""
    total = float(sum(weights))
    return [float(w) / total for w in weights]


def ringd_table(labels: Sequence[str], weights: Sequence[int], m: int) -> list[int]:
    """ringd's table, as positions in `labels` (ids sort as the labels' order
    of input, so node index = position)."""
    p = Placement.build(table(m), endpoints(labels, weights))
    index = {n.id: i for i, n in enumerate(p.nodes)}
    return [index[x] for x in p.maglev_table() or []]


def envoy_from_ringd(labels: Sequence[str], weights: Sequence[int], m: int) -> list[int]:
    """What Envoy builds from the EDS weights ringd sends for these nodes."""
    eds = endpoint_weights(endpoints(labels, weights))
    return envoy_table(list(zip(labels, normalized(eds))), m)


def test_defaults_and_the_key_hash() -> None:
    assert (ENVOY.hash, ENVOY.table_size) == ("xxh64", 65_537)
    p = Placement.build(table(7), [Node("a", address="10.0.0.1:80")])
    assert p.key_hash("hello") == 0x26C7827D889F6DA3 == xxh64(b"hello", 0)
    # A single endpoint holds every slot (Envoy's DegenerateMaglevTable).
    assert p.maglev_table() == ["a"] * 7
    assert p.ownership()["basis"] == "table_entries"
    assert p.ownership()["total_units"] == "7"


def test_the_spec_example_five_and_one() -> None:
    labels, weights = ["10.0.0.1:80", "10.0.0.2:80"], [5, 1]
    nodes = [
        Node(i, weight=w, hash_key=label, address=label)
        for i, label, w in zip("ab", labels, weights)
    ]
    assert endpoint_weights(nodes) == [1789569707, 357913941]
    assert sum(endpoint_weights(nodes)) == WEIGHT_TOTAL
    p = Placement.build(table(7), nodes)
    assert p.maglev_table() == list("aaaabaa")
    # Envoy's table from the plain weights, and `maglev`'s (5.3), which
    # takes the turn Envoy's rounding skips.
    assert envoy_table(list(zip(labels, normalized(weights))), 7) == [0, 0, 0, 0, 1, 0, 0]
    maglev = Placement.build(RingConfig(algorithm="maglev", table_size=7), nodes)
    assert maglev.maglev_table() == list("abaabaa")
    assert fill(labels, weights, 7) == [0, 1, 0, 0, 1, 0, 0]
    assert fill(labels, endpoint_weights(nodes), 7) == [0, 0, 0, 0, 1, 0, 0]
    # Ownership counts slots; expected shares stay the scaled weights'.
    shares = p.ownership()["nodes"]
    assert [(s["units"], s["expected_share"]) for s in shares] == [("6", 5 / 6), ("1", 1 / 6)]


def test_the_port_of_envoys_fill_gives_envoys_own_tables() -> None:
    cases = json.loads(REFERENCE.read_text())["cases"]
    assert len(cases) == 6
    for case in cases:
        hosts = [(h["hashed"], h["weight"]) for h in case["hosts"]]
        got = envoy_table(
            list(zip([k for k, _ in hosts], normalized([w for _, w in hosts]))), case["table_size"]
        )
        assert got == case["expected_table"], case["name"]


def test_envoys_table_from_ringds_weights_is_ringds() -> None:
    # Envoy's Basic hosts: six shares of 2^31 are not equal, yet Envoy's
    # fill on them is ringd's table (the envoy_maglev-six-hosts vector).
    six = [f"127.0.0.1:{p}" for p in range(90, 96)]
    assert ringd_table(six, [1] * 6, 7) == envoy_from_ringd(six, [1] * 6, 7)
    five_and_one = ["10.0.0.1:80", "10.0.0.2:80"]
    assert ringd_table(five_and_one, [5, 1], 7) == envoy_from_ringd(five_and_one, [5, 1], 7)
    # Envoy's Weighted hosts at table 17, through ringd's weights.
    two = ["127.0.0.1:90", "127.0.0.1:91"]
    assert ringd_table(two, [1, 2], 17) == envoy_from_ringd(two, [1, 2], 17)


def test_ringds_table_is_envoys_for_random_rings() -> None:
    # A small deterministic xorshift, so a failure names its case.
    state = 0x9E3779B97F4A7C15

    def rand(bound: int) -> int:
        nonlocal state
        state ^= (state << 13) & (2**64 - 1)
        state ^= state >> 7
        state ^= (state << 17) & (2**64 - 1)
        return state % bound

    primes = [7, 13, 17, 101, 257, 1009]
    differs = 0
    for case in range(300):
        count = 1 + rand(12)
        fitting = [p for p in primes if p >= count]
        m = fitting[rand(len(fitting))]
        labels = [f"10.0.{case}.{i}:80" for i in range(count)]
        weights = [1 + rand(10) for _ in range(count)]
        assert ringd_table(labels, weights, m) == envoy_from_ringd(labels, weights, m), (
            case,
            weights,
            m,
        )
        differs += fill(labels, weights, m) != envoy_table(
            list(zip(labels, normalized(weights))), m
        )
    # `maglev`'s plain weights are not Envoy's table for some of them (5.3).
    assert differs > 0


def test_ramps_scale_the_eds_weights() -> None:
    half = [Node("a", weight=2, ramp=32_768, address="10.0.0.1:80"), Node("b", address="[::1]:80")]
    equal = [Node("a", address="10.0.0.1:80"), Node("b", address="[::1]:80")]
    ramped, plain = Placement.build(table(101), half), Placement.build(table(101), equal)
    assert ramped.maglev_table() == plain.maglev_table()
    # The ramp is in the encoding (flags bit 0, a ramp per record), not
    # in the body.
    assert ramped.is_ramped
    assert ramped.encode()[11] == 1
    assert ramped.encode()[-4 * 102 :] == plain.encode()[-4 * 102 :]
    assert ramped.fingerprint() != plain.fingerprint()
    # A node ramping up takes slots as its EDS weight grows.
    counts = []
    for ramp in (1, 16_384, 32_768, 65_536):
        nodes = [Node("a", address="10.0.0.1:80"), Node("b", ramp=ramp, address="10.0.0.2:80")]
        t = Placement.build(table(1009), nodes).maglev_table() or []
        counts.append(t.count("b"))
    assert counts == sorted(counts)
    assert counts[0] == 1
    assert 480 < counts[-1] < 530


def test_config_refusals() -> None:
    for other in ("xxh3", "md5", "sha256", "murmur3", "crc32", "fnv1a_64"):
        assert kind(RingConfig, algorithm="envoy_maglev", hash=other) == "HashNotAccepted"
    assert kind(RingConfig, algorithm="maglev", hash="xxh64") == "HashNotAccepted"
    assert kind(RingConfig, algorithm="envoy_maglev", avalanche=True) == "AvalancheNotSupported"
    assert kind(RingConfig, algorithm="envoy_maglev", hash_tag="{}") == "HashTagNotSupported"
    # Prime, 2 ..= 5,000,011 (Envoy's bound), the range checked first:
    # 5,000,017 = 11 × 454,547 is out of range, 5,000,077 a prime above it.
    assert kind(table, 65_536) == "TableSizeNotPrime"
    for bad in (0, 1, 5_000_017, 5_000_077, 1 << 24, True, "7"):
        assert kind(table, bad) == "TableSizeOutOfRange", bad
    with pytest.raises(PlacementError, match=r"^TableSizeOutOfRange: 5000077 not in 2\.\.=5000011"):
        table(5_000_077)
    assert (table(2).table_size, table(5_000_011).table_size) == (2, 5_000_011)
    # `maglev` takes what lies between Envoy's bound and 2^24.
    assert RingConfig(algorithm="maglev", table_size=5_000_077).table_size == 5_000_077
    assert RingConfig.from_json({"algorithm": "envoy_maglev", "table_size": 251}) == table(251)


def test_node_refusals_in_their_order() -> None:
    build = Placement.build
    ok = Node("a", address="10.0.0.1:80")
    assert kind(build, ENVOY, [Node("a")]) == "MissingAddress"
    with pytest.raises(PlacementError, match=r"^MissingAddress: a under envoy_maglev"):
        build(ENVOY, [Node("a", hash_key="10.0.0.1:80")])
    build(ENVOY, [ok, Node("b", state="draining")])  # no address: fine until active
    # Every node's address is checked, active or not, as Envoy writes it back.
    for bad in ("h:80", "10.0.0.1", "010.0.0.1:80", "[2001:DB8::1]:80", "10.0.0.1:0"):
        joining = Node("b", address=bad, state="joining")
        assert kind(build, ENVOY, [ok, joining]) == "AddressNotServer", bad
    with pytest.raises(
        PlacementError,
        match=r"^AddressNotServer: b at 'h:80' cannot be a server for envoy_maglev: ",
    ):
        build(ENVOY, [ok, Node("b", address="h:80")])
    # One label each (the first in byte order named), then one address each.
    same_label = [ok, Node("b", hash_key="a", address="10.0.0.2:80")]
    with pytest.raises(PlacementError, match=r"^EndpointKeyTaken: a and b would both be hashed"):
        build(ENVOY, same_label)
    assert kind(build, ENVOY, [ok, Node("b", address="10.0.0.1:80")]) == "DuplicateAddress"
    both = [ok, Node("b", hash_key="a", address="10.0.0.1:80")]
    assert kind(build, ENVOY, both) == "EndpointKeyTaken"
    # Only active nodes collide.
    build(ENVOY, [ok, Node("b", hash_key="a", address="10.0.0.1:80", state="draining")])
    # A share of 2^31 that rounds to 0.
    tiny = [Node("a", ramp=1, address="10.0.0.1:80"), Node("b", weight=65_536, address="[::1]:80")]
    assert kind(build, ENVOY, tiny) == "WeightShareTooSmall"
    # At least one slot per active node (check 6), after the node checks.
    three = [ok, Node("b", address="10.0.0.2:80"), Node("c", address="10.0.0.3:80")]
    assert kind(build, table(2), three) == "TableSizeOutOfRange"
    assert kind(build, table(2), [*three[:2], Node("c", address="x")]) == "AddressNotServer"
    assert Placement.build(table(3), three).maglev_table() is not None


def test_nodes_are_placed_by_label_not_by_address() -> None:
    a = [Node("a", address="10.0.0.1:80"), Node("b", weight=2, address="10.0.0.2:80")]
    b = [Node("a", address="[2001:db8::7]:9000"), Node("b", weight=2, address="10.9.9.9:1")]
    pa, pb = Placement.build(table(1009), a), Placement.build(table(1009), b)
    # Addresses are not encoded: the same bytes, the same fingerprint.
    assert pa.encode() == pb.encode()
    assert b"10.0.0.1" not in pa.encode()
    # A replacement given the old node's label takes exactly its slots, and
    # the exact diff says so.
    swapped = [
        Node("a", address="10.0.0.1:80"),
        Node("c", weight=2, hash_key="b", address="10.0.0.3:80"),
    ]
    pc = Placement.build(table(1009), swapped)
    assert pc.maglev_table() == [{"b": "c"}.get(x, x) for x in pa.maglev_table() or []]
    d = summarize(pa, pc)
    assert (d.basis, d.added, d.removed) == ("table_entries", ("c",), ("b",))
    assert d.moved_fraction == (pa.maglev_table() or []).count("b") / 1009


def test_diffs_are_exact_on_one_table_size() -> None:
    nodes = [Node(f"n{i}", weight=i + 1, address=f"10.0.0.{i + 1}:80") for i in range(4)]
    before = Placement.build(table(251), nodes)
    after = Placement.build(table(251), [*nodes, Node("n9", address="10.0.0.9:80")])
    d = summarize(before, after)
    old, new = before.maglev_table() or [], after.maglev_table() or []
    moved = sum(x != y for x, y in zip(old, new))
    assert (d.basis, d.added) == ("table_entries", ("n9",))
    assert d.moved_fraction == pytest.approx(moved / 251, rel=1e-12)
    # Another table size, or `maglev` over the same nodes: sampled.
    assert summarize(before, Placement.build(table(257), nodes)).basis == "sampled"
    maglev = Placement.build(RingConfig(algorithm="maglev", table_size=251), nodes)
    assert summarize(maglev, before).basis == "sampled"


def test_the_thin_client_decodes_the_table() -> None:
    nodes = [
        Node("a", weight=2, ramp=30_000, address="10.0.0.1:80"),
        Node("b", hash_key="é ✓", address="[::1]:80"),
        Node("c", address="10.0.0.3:80", state="draining"),
    ]
    p = Placement.build(table(13), nodes)
    data = p.encode()
    q = thin(data)
    assert (q.algorithm, q.hash, q.config, q.is_ramped) == ("envoy_maglev", "xxh64", None, True)
    assert q.maglev_table() == p.maglev_table()
    assert q.encode() == data
    assert [n.address for n in q.nodes] == [None, None]  # not encoded
    assert [q.owner(f"k{i}") for i in range(200)] == [p.owner(f"k{i}") for i in range(200)]
    assert [q.preference_list(f"k{i}") for i in range(50)] == [
        p.preference_list(f"k{i}") for i in range(50)
    ]
    assert q.ownership() == p.ownership()
    # The header: algorithm 11, hash 18; the body as maglev's.
    assert data[8:12] == bytes([11, 18, 0, 1])
    assert data[-4 * 14 : -4 * 13] == (13).to_bytes(4, "little")
    body = len(data) - 4 * 14
    header = data[:body]
    bad = [
        data[:9] + b"\x01" + data[10:],  # xxh3: not this algorithm's hash
        data[:8] + b"\x03" + data[9:],  # maglev takes no xxh64
        data[:-1],
        data + b"\x00",
        data[:-4] + (2).to_bytes(4, "little"),  # node index 2 of 2
        header + (12).to_bytes(4, "little") + data[body + 4 : -4],  # 12 slots: not prime
        # A prime above Envoy's bound: a length `maglev` could have.
        header + (5_000_077).to_bytes(4, "little") + bytes(4 * 5_000_077),
    ]
    for b in bad:
        with pytest.raises(InvalidEncoding):
            thin(b)


def test_no_active_node_owns_nothing() -> None:
    p = Placement.build(ENVOY, [Node("a", state="draining")])
    assert (p.owner("k"), p.maglev_table(), p.preference_list("k")) == (None, [], [])
    assert p.ownership()["total_units"] == "0"
    assert thin(p.encode()).encode() == p.encode()
