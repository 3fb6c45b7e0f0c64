"""What the client refuses (spec 2.4, 5.4.4, 5.6.3, 9.2, 9.4), and the
table moves a snapshot may carry instead of its table."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from ringd import (
    FingerprintMismatch,
    InvalidEncoding,
    InvalidTable,
    Node,
    Placement,
    PlacementError,
    RingConfig,
    TableRequired,
)


def kind(f: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(PlacementError) as e:
        f(*args, **kw)
    return e.value.kind


def test_config_refusals() -> None:
    assert kind(RingConfig, algorithm="ketama", hash="xxh3") == "HashNotSupported"
    assert kind(RingConfig, algorithm="consistent") == "UnknownAlgorithm"
    assert kind(RingConfig, hash="crc64") == "UnknownHash"
    # A proxy's hashes belong to its mode, and its mode takes no other.
    assert kind(RingConfig, hash="crc32") == "HashNotAccepted"  # nginx's and haproxy's
    assert kind(RingConfig, algorithm="haproxy", hash="xxh3") == "HashNotAccepted"
    assert kind(RingConfig, algorithm="nginx", hash="sdbm") == "HashNotAccepted"
    assert kind(RingConfig, algorithm="jump", avalanche=True) == "AvalancheNotSupported"
    assert (RingConfig(algorithm="haproxy").hash, RingConfig(algorithm="haproxy").avalanche) == (
        "sdbm",
        True,
    )
    assert kind(RingConfig, hash="fnv1a_64") == "HashNotAccepted"  # twemproxy's only
    assert kind(RingConfig, algorithm="twemproxy", hash="xxh3") == "HashNotAccepted"
    assert kind(RingConfig, algorithm="twemproxy", hash="crc32") == "HashNotAccepted"
    assert (RingConfig(algorithm="twemproxy").hash, RingConfig(algorithm="twemproxy").hash_tag) == (
        "fnv1a_64",
        None,
    )
    assert kind(RingConfig, algorithm="nginx", hash="md5") == "HashNotAccepted"
    assert RingConfig(algorithm="nginx").hash == "crc32"
    assert kind(RingConfig, vnodes_per_weight=0) == "VnodesOutOfRange"
    assert kind(RingConfig, replication_factor=65) == "ReplicationOutOfRange"
    assert kind(RingConfig, partitions=1000) == "PartitionsOutOfRange"
    assert kind(RingConfig, algorithm="maglev", table_size=65536) == "TableSizeNotPrime"
    assert kind(RingConfig, algorithm="maglev", table_size=1) == "TableSizeOutOfRange"
    RingConfig(table_size=65536)  # not checked outside maglev and envoy_maglev
    assert RingConfig(algorithm="ketama").hash == "md5"


def test_envoy_ring_hash_config_refusals() -> None:
    envoy = RingConfig(algorithm="envoy_ring_hash")
    assert (envoy.hash, envoy.minimum_ring_size, envoy.maximum_ring_size) == ("xxh64", 1024, 4096)
    # xxh64 is envoy_ring_hash's only hash, and no other algorithm's but
    # envoy_maglev's (tests/test_envoy_maglev.py).
    for other in ("xxh3", "md5", "crc32", "fnv1a_64"):
        assert kind(RingConfig, algorithm="envoy_ring_hash", hash=other) == "HashNotAccepted"
    for algorithm in ("ring", "maglev", "nginx", "twemproxy", "haproxy"):
        assert kind(RingConfig, algorithm=algorithm, hash="xxh64") == "HashNotAccepted"
    assert kind(RingConfig, algorithm="envoy_ring_hash", avalanche=True) == "AvalancheNotSupported"
    assert kind(RingConfig, algorithm="envoy_ring_hash", hash_tag="{}") == "HashTagNotSupported"
    # Ring sizes: 1 ..= 2^23, checked whatever the algorithm.
    for algorithm in ("envoy_ring_hash", "ring", "jump"):
        for field in ("minimum_ring_size", "maximum_ring_size"):
            for bad in (0, (1 << 23) + 1, -1, True, "1024", 1024.0):
                assert kind(RingConfig, algorithm=algorithm, **{field: bad}) == (
                    "RingSizeOutOfRange"
                ), (algorithm, field, bad)
    big = RingConfig(
        algorithm="envoy_ring_hash", minimum_ring_size=1 << 23, maximum_ring_size=1 << 23
    )
    assert (big.minimum_ring_size, big.maximum_ring_size) == (1 << 23, 1 << 23)
    RingConfig(algorithm="envoy_ring_hash", minimum_ring_size=1, maximum_ring_size=1)
    # The minimum above the maximum: refused for envoy_ring_hash, which
    # uses them (after the range of both is checked).
    assert kind(RingConfig, algorithm="envoy_ring_hash", minimum_ring_size=4097) == (
        "RingSizesInverted"
    )
    assert kind(
        RingConfig, algorithm="envoy_ring_hash", minimum_ring_size=0, maximum_ring_size=0
    ) == ("RingSizeOutOfRange")
    RingConfig(algorithm="ring", minimum_ring_size=4097)  # another algorithm's sizes place nothing
    # Read from JSON as a snapshot's config carries them.
    read = RingConfig.from_json(
        {"algorithm": "envoy_ring_hash", "minimum_ring_size": 3, "maximum_ring_size": 9}
    )
    assert (read.minimum_ring_size, read.maximum_ring_size) == (3, 9)
    assert RingConfig.from_json({"algorithm": "envoy_ring_hash"}) == envoy


def test_hash_tag_refusals() -> None:
    assert RingConfig(algorithm="twemproxy", hash_tag="{}").hash_tag == "{}"
    assert RingConfig.from_json({"algorithm": "twemproxy", "hash_tag": None}).hash_tag is None
    for algorithm in ("ring", "ketama", "nginx", "haproxy"):
        assert kind(RingConfig, algorithm=algorithm, hash_tag="{}") == "HashTagNotSupported"
    for bad in ("", "{", "{}}", "{ ", '"}', "'}", "\\}", "é}", "é", "\t}"):
        assert kind(RingConfig, algorithm="twemproxy", hash_tag=bad) == "InvalidHashTag", bad
    # A bad tag is refused first, whatever the algorithm (the server reads it first).
    assert kind(RingConfig, algorithm="ring", hash_tag="{") == "InvalidHashTag"
    assert kind(RingConfig, algorithm="twemproxy", hash_tag=7) == "InvalidConfig"


def test_node_refusals() -> None:
    assert kind(Node, "") == "EmptyNodeId"
    assert kind(Node, "-leading-dash") == "InvalidNodeId"
    assert kind(Node, "x" * 129) == "InvalidNodeId"
    assert kind(Node, "n", hash_key="tab\there") == "InvalidHashKey"
    assert kind(Node, "n", hash_key="\u0085") == "InvalidHashKey"  # C1 control
    Node("n", hash_key="10.0.0.9:11211 é ✓")  # spaces and non-ASCII are fine
    assert kind(Node, "n", zone="us east") == "InvalidZone"
    assert kind(Node, "n", weight=0) == "WeightOutOfRange"
    assert kind(Node, "n", weight=True) == "WeightOutOfRange"
    assert kind(Node, "n", ramp=65_537) == "RampOutOfRange"
    assert kind(Node, "n", state="leaving") == "InvalidState"


def test_haproxy_refusals() -> None:
    haproxy = RingConfig(algorithm="haproxy")
    assert kind(Placement.build, haproxy, [Node("a", weight=257)]) == "WeightTooHighForProxy"
    assert kind(Placement.build, haproxy, [Node("a", ramp=100)]) == "RampNotSupported"
    assert (
        kind(Placement.build, haproxy, [Node("a"), Node("b")], server_ids={"a": 1, "b": 1})
        == "InvalidServerIds"
    )


def test_node_set_refusals() -> None:
    build = Placement.build
    assert kind(build, RingConfig(), [Node("a"), Node("a", state="draining")]) == "DuplicateNodeId"
    assert kind(build, RingConfig(zone_aware=True), [Node("a")]) == "MissingZone"
    RingConfig(zone_aware=True)  # a draining node needs no zone:
    build(RingConfig(zone_aware=True), [Node("a", zone="z"), Node("b", state="draining")])
    for algorithm in ("ketama", "jump", "table"):
        assert (
            kind(build, RingConfig(algorithm=algorithm), [Node("a", ramp=100)])
            == "RampNotSupported"
        )
    nginx = RingConfig(algorithm="nginx")
    assert kind(build, nginx, [Node("a", ramp=100, address="10.0.0.1:80")]) == "RampNotSupported"
    assert (
        kind(build, RingConfig(vnodes_per_weight=10_000), [Node("a", weight=1000)])
        == "TooManyPoints"
    )
    nodes = [Node(f"n{i}") for i in range(8)]
    assert kind(build, RingConfig(algorithm="maglev", table_size=7), nodes) == "TableSizeOutOfRange"
    assert kind(build, RingConfig(algorithm="table"), [Node("a")]) == "InvalidTable"


def test_twemproxy_refuses_what_nutcracker_could_not_take() -> None:
    build, tw = Placement.build, RingConfig(algorithm="twemproxy")
    assert kind(build, tw, [Node("a")]) == "MissingAddress"
    assert kind(build, tw, [Node("a", hash_key="cache-a")]) == "MissingAddress"
    assert kind(build, tw, [Node("a", address="10.0.0.1:11211", ramp=100)]) == "RampNotSupported"
    for bad in ("10.0.0.1", "10.0.0.1:0", "10.0.0.1:080", "[::1]:11211", "a;b:11211"):
        assert kind(build, tw, [Node("a", address=bad)]) == "AddressNotServer", bad
    assert (
        kind(build, tw, [Node("a", address="h:11211", hash_key="two words")]) == "InvalidServerName"
    )
    # Every node's address and name is checked, not only the active ones'.
    ok = Node("a", address="h:11211")
    assert kind(build, tw, [ok, Node("b", address="h", state="draining")]) == "AddressNotServer"
    assert kind(build, tw, [ok, Node("b", hash_key="a#b", state="joining")]) == "InvalidServerName"
    build(tw, [ok, Node("b", state="draining")])  # no address: fine until active
    # One name for two servers: h alone on 11211, or a hash_key.
    assert kind(build, tw, [ok, Node("b", address="h:11211")]) == "ServerNameTaken"
    assert kind(build, tw, [ok, Node("b", address="x:1", hash_key="h")]) == "ServerNameTaken"
    assert (
        kind(
            build,
            tw,
            [Node("a", address="h:1", hash_key="k"), Node("b", address="h:2", hash_key="k")],
        )
        == "ServerNameTaken"
    )
    build(tw, [ok, Node("b", address="h:11211", state="draining")])  # only active ones
    build(tw, [ok, Node("b", address="h:6379")])  # named `h:6379`


def test_joining_and_draining_nodes_change_nothing() -> None:
    base = [Node("a"), Node("b", weight=3)]
    extra = [Node("c", state="joining"), Node("d", state="draining", weight=9)]
    for algorithm in ("ring", "ketama", "maglev", "jump", "rendezvous"):
        config = RingConfig(algorithm=algorithm)
        assert (
            Placement.build(config, base).encode() == Placement.build(config, base + extra).encode()
        )
    # The xDS modes: a draining or joining node needs no address, and
    # takes no share of 2^31.
    addressed = [Node("a", address="10.0.0.1:80"), Node("b", weight=3, address="10.0.0.2:80")]
    for envoy in (RingConfig(algorithm="envoy_ring_hash"), RingConfig(algorithm="envoy_maglev")):
        assert (
            Placement.build(envoy, addressed).encode()
            == Placement.build(envoy, addressed + extra).encode()
        )


def test_bucket_order_refusals() -> None:
    config, nodes = RingConfig(algorithm="jump"), [Node("a"), Node("b", weight=2)]
    for order in (["a", "b", "b", "c"], ["a", "b"], ["a", "b", "b", None], [["a", 0]]):
        assert kind(Placement.build, config, nodes, buckets=order) == "InvalidBucketOrder"
    runs = Placement.build(config, nodes, buckets=[[None, 2], ["a", 1], ["b", 2]])
    assert runs.bucket_order() == [None, None, "a", "b", "b"]


def test_keys_are_bytes_or_utf8() -> None:
    p = Placement.build(RingConfig(), [Node(f"n{i}") for i in range(5)])
    assert p.owner("é") == p.owner("é".encode())
    assert p.key_hash("é") == p.key_hash(b"\xc3\xa9")
    assert p.owner(b"\xff\x00") is not None  # any byte string places


def test_ketama_zero_digest_nodes_own_nothing() -> None:
    # 11.4: weight 1 next to weight 1000 gets no point.
    p = Placement.build(RingConfig(algorithm="ketama"), [Node("a"), Node("b", weight=1000)])
    assert p.preference_list("k", 2) == ["b"]
    assert p.ownership()["nodes"][0]["units"] == "0"


def test_encoding_refusals() -> None:
    good = Placement.build(RingConfig(), [Node("a"), Node("b")]).encode()

    def thin(data: bytes) -> Placement:
        return Placement.from_table_encoding(data, hashlib.sha256(data).hexdigest())

    assert thin(good).owner("x") is not None
    with pytest.raises(FingerprintMismatch):
        Placement.from_table_encoding(good, "0" * 64)
    bad = [
        b"RINGDPL\x02" + good[8:],  # another format version
        good[:8] + b"\x07" + good[9:],  # unknown algorithm
        good[:11] + b"\x02" + good[12:],  # unknown flag bit
        good[:11] + b"\x01" + good[12:],  # ramped flag, but no ramp records
        good[:-1],  # cut short
        good + b"\x00",  # trailing bytes
        good[:-12] + good[-12:-4] + b"\x05\x00\x00\x00",  # node index 5 of 2
    ]
    for data in bad:
        with pytest.raises(InvalidEncoding):
            thin(data)


def table_placement(rows: list[list[str]], ids: str = "abc") -> Placement:
    config = RingConfig(algorithm="table", partitions=256, replication_factor=2)
    return Placement.build(config, [Node(x) for x in ids], table=rows)


def snapshot(p: Placement, version: int, moves: bytes) -> dict[str, Any]:
    return {
        "ring": "t",
        "version": version,
        "fingerprint": p.fingerprint(),
        "config": {
            "algorithm": "table",
            "hash": "xxh3",
            "vnodes_per_weight": 160,
            "table_size": 65537,
            "replication_factor": 2,
            "zone_aware": False,
            "partitions": 256,
        },
        "nodes": [{"id": n.id, "weight": 1, "state": "active", "labels": {}} for n in p.nodes],
        "table_moves": base64.b64encode(moves).decode(),
    }


def test_table_moves_update_the_previous_table() -> None:
    before = [["a", "b"]] * 256
    previous = table_placement(before)
    previous.version = 4
    after = [list(r) for r in before]
    after[5] = ["c", "b"]
    target = table_placement(after)
    # 9.4's example: partition 5, slot 0 to node index 2.
    moves = bytes.fromhex("0100000005000000000200")
    assert base64.b64encode(moves) == b"AQAAAAUAAAAAAgA="
    p = Placement.from_snapshot(snapshot(target, 5, moves), previous=previous)
    assert p.table_rows() == after
    assert p.fingerprint() == target.fingerprint()
    with pytest.raises(TableRequired):
        Placement.from_snapshot(snapshot(target, 5, moves))
    with pytest.raises(InvalidTable):  # not the version before
        Placement.from_snapshot(snapshot(target, 6, moves), previous=previous)
    twice = bytes.fromhex("020000000500000000020005000000000000")
    with pytest.raises(InvalidTable):  # a slot changed twice
        Placement.from_snapshot(snapshot(target, 5, twice), previous=previous)
    with pytest.raises(InvalidTable):  # length does not match the count
        Placement.from_snapshot(snapshot(target, 5, moves + b"\x00"), previous=previous)
    dup = bytes.fromhex("0100000005000000000100")  # b twice in row 5
    with pytest.raises(InvalidTable):
        Placement.from_snapshot(snapshot(target, 5, dup), previous=previous)
    wrong = bytes.fromhex("0100000006000000000200")  # moves another partition
    with pytest.raises(FingerprintMismatch):
        Placement.from_snapshot(snapshot(target, 5, wrong), previous=previous)


def test_table_moves_across_a_node_change() -> None:
    # `a` leaves: every slot it held is moved, to `d`; indices shift.
    previous = table_placement([["a", "b"]] * 256, "abc")
    after = [["d", "b"]] * 256
    target = table_placement(after, "bcd")
    moves = (256).to_bytes(4, "little") + b"".join(
        p.to_bytes(4, "little") + b"\x00" + (2).to_bytes(2, "little") for p in range(256)
    )
    p = Placement.from_snapshot(snapshot(target, 2, moves), previous=previous)
    assert p.table_rows() == after


def test_an_empty_table_snapshot_needs_no_download() -> None:
    empty = Placement.build(
        RingConfig(algorithm="table", partitions=256, replication_factor=2),
        [Node("a", state="draining")],
        table=[[]] * 256,
    )
    s = snapshot(empty, 3, b"")
    del s["table_moves"]
    s["nodes"] = [{"id": "a", "weight": 1, "state": "draining"}]
    p = Placement.from_snapshot(s)
    assert (p.owner("k"), p.fingerprint()) == (None, empty.fingerprint())


def test_nginx_places_by_address_and_refuses_what_nginx_could_not_take() -> None:
    build, nginx = Placement.build, RingConfig(algorithm="nginx")
    assert kind(build, nginx, [Node("a")]) == "MissingAddress"
    build(nginx, [Node("a", address="10.0.0.1:80"), Node("b", state="draining")])
    for bad in (
        "10.0.0.1",
        "10.0.0.1:0",
        "10.0.0.1:65536",
        "a;b:80",
        "a}:80",
        "a#b:80",
        "'a':80",
        "$host:80",
        "unix:80",
        "[zz]:80",
    ):
        assert kind(build, nginx, [Node("a", address=bad)]) == "AddressNotServer", bad
    assert kind(Node, "a", address="a b:80") == "InvalidAddress"
    assert (
        kind(build, nginx, [Node("a", address="h:1"), Node("b", address="h:1")])
        == "DuplicateAddress"
    )
    # hash_key and id place nothing: only the address does.
    one = build(nginx, [Node("a", address="10.0.0.1:80", hash_key="x")])
    other = build(nginx, [Node("a", address="10.0.0.1:80")])
    assert one.encode() == other.encode()
