"""The shared known-answer vectors (tests/placement/vectors) and the
reference results of other projects (vectors/reference), run through the
client. Every comparison is exact, floats included: the Rust test compares
the files as JSON values, so a float must be the same binary64 here."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ringd import FingerprintMismatch, Node, Placement, RingConfig
from ringd.hashes import md5_32
from ringd.jump import jump_hash
from ringd.ketama import digest_count

VECTORS = (Path(__file__).parent / "../../../tests/placement/vectors").resolve()
REFERENCE = VECTORS / "reference"
FILES = sorted(p.name for p in VECTORS.glob("*.json"))
REFERENCE_FILES = sorted(p.name for p in REFERENCE.glob("*.json"))

ALGORITHMS = [
    "ring",
    "ketama",
    "maglev",
    "jump",
    "rendezvous",
    "table",
    "nginx",
    "haproxy",
    "twemproxy",
    "envoy_ring_hash",
    "envoy_maglev",
]
SHAPES = ["single", "weighted", "zoned", "colliding", "nodes-1000"]
RAMPED = ["ring", "rendezvous", "maglev", "envoy_ring_hash", "envoy_maglev"]
# One input each that the shapes leave at its default (spec 12), and every
# algorithm with nothing active.
EXTRAS = [
    "ring-md5-vnodes",
    "rendezvous-sha256",
    "maglev-murmur3-table-size",
    "jump-md5-holes",
    "table-murmur3-partitions",
    "ketama-zero-digests",
    "nginx-forty",
]
EXTRAS += [f"{a}-no-active" for a in ALGORITHMS]
# haproxy: each key hash with and without avalanche, 40 servers, ids with
# gaps after removals, and a replacement that took over an id.
EXTRAS += ["haproxy-sdbm-avalanche-40", "haproxy-sdbm", "haproxy-removals", "haproxy-replacement"]
EXTRAS += [f"haproxy-{h}{m}" for h in ("djb2", "wt6", "crc32") for m in ("", "-avalanche")]
# twemproxy: a hash tag, servers named each way, and every other key hash.
EXTRAS += ["twemproxy-hash-tag", "twemproxy-names"]
EXTRAS += [
    f"twemproxy-{h}"
    for h in (
        "md5",
        "crc32a",
        "one_at_a_time",
        "murmur",
        "jenkins",
        "hsieh",
        "fnv1_64",
        "fnv1a_32",
        "fnv1_32",
    )
]
# envoy_ring_hash: Envoy's own UnevenHosts ring, the hosts of its Basic and
# BasicWithMetadataHashKey tests, and 40 nodes over IPv4 and IPv6.
EXTRAS += [f"envoy_ring_hash-{s}" for s in ("two-hosts", "six-hosts", "hash-keys", "forty")]
# envoy_maglev: the hosts of Envoy's maglev `Basic` test at table 7, weights
# 5 and 1 at table 7 (where `maglev` is not Envoy's table, 5.3), and the 40
# endpoints on a table of 251.
EXTRAS += [f"envoy_maglev-{s}" for s in ("six-hosts", "five-and-one", "forty")]


@cache
def load(path: Path) -> Any:
    return json.loads(path.read_text())


def vector(name: str) -> dict[str, Any]:
    v: dict[str, Any] = load(VECTORS / name)
    return v


@cache
def built(name: str) -> Placement:
    """The placement from the file's inputs alone (spec 12)."""
    v = vector(name)
    return Placement.build(
        RingConfig.from_json(v["config"]),
        [Node.from_json(n) for n in v["nodes"]],
        buckets=v.get("buckets"),
        table=v.get("table"),
        server_ids=v.get("server_ids"),
    )


@cache
def thin(name: str) -> Placement:
    """The same placement decoded from its canonical encoding alone (9.2)."""
    return Placement.from_table_encoding(built(name).encode(), vector(name)["fingerprint"])


def check_lookups(p: Placement, v: dict[str, Any]) -> None:
    wrong = [
        (x["key"], str(p.key_hash(x["key"])), p.owner(x["key"]), x["hash"], x["owner"])
        for x in v["lookups"]
        if str(p.key_hash(x["key"])) != x["hash"] or p.owner(x["key"]) != x["owner"]
    ]
    assert not wrong, f"{len(wrong)} lookups differ (key, hash, owner, expected...): {wrong[:5]}"


def check_preference_lists(p: Placement, v: dict[str, Any]) -> None:
    r = v["config"]["replication_factor"]
    wrong = [
        (x["key"], p.preference_list(x["key"], r), x["replicas"])
        for x in v["preference_lists"]
        if p.preference_list(x["key"], r) != x["replicas"]
    ]
    assert not wrong, f"{len(wrong)} preference lists differ: {wrong[:5]}"
    # The default R is the replication factor.
    for x in v["preference_lists"][:5]:
        assert p.preference_list(x["key"]) == x["replicas"]


def test_every_vector_file_is_here() -> None:
    expected = {f"{a}-{s}.json" for a in ALGORITHMS for s in SHAPES}
    expected |= {f"{a}-ramped.json" for a in RAMPED}
    expected |= {f"{e}.json" for e in EXTRAS}
    # 106: the 96 of the Rust vectors test and the 10 of its haproxy ones.
    assert set(FILES) == expected
    assert len(FILES) == 106
    assert set(REFERENCE_FILES) == set(REFERENCE_CHECKS)


@pytest.mark.parametrize("name", FILES)
def test_fingerprint(name: str) -> None:
    assert built(name).fingerprint() == vector(name)["fingerprint"]


@pytest.mark.parametrize("name", FILES)
def test_lookups(name: str) -> None:
    check_lookups(built(name), vector(name))


@pytest.mark.parametrize("name", FILES)
def test_preference_lists(name: str) -> None:
    check_preference_lists(built(name), vector(name))


@pytest.mark.parametrize("name", FILES)
def test_ownership(name: str) -> None:
    # The whole object: basis, total_units and per node units (decimal
    # strings), share, expected_share, ratio (floats, exact), replicas
    # (table), and max_over_mean.
    assert built(name).ownership() == vector(name)["ownership"]


@pytest.mark.parametrize("name", FILES)
def test_layout_inputs_read_back(name: str) -> None:
    v, p = vector(name), built(name)
    assert p.bucket_order() == v["buckets"]
    assert p.table_rows() == v.get("table")
    assert p.server_ids() == v.get("server_ids")
    # Ring sizes are written for envoy_ring_hash (and for another algorithm
    # only when not the defaults, which no other file has).
    c = v["config"]
    envoy = c["algorithm"] == "envoy_ring_hash"
    assert ("minimum_ring_size" in c, "maximum_ring_size" in c) == (envoy, envoy)
    assert p.config is not None
    sizes = (p.config.minimum_ring_size, p.config.maximum_ring_size)
    assert sizes == (c.get("minimum_ring_size", 1024), c.get("maximum_ring_size", 4096))


@pytest.mark.parametrize("name", FILES)
def test_thin_client_from_encoding(name: str) -> None:
    # The encoding alone reproduces everything, and re-encodes to itself.
    v, q = vector(name), thin(name)
    assert q.encode() == built(name).encode()
    assert q.fingerprint() == v["fingerprint"]
    check_lookups(q, v)
    check_preference_lists(q, v)
    assert q.ownership() == v["ownership"]


def snapshot_of(v: dict[str, Any]) -> dict[str, Any]:
    """The file as `GET …/snapshot` would send it (SnapshotView)."""
    s: dict[str, Any] = {
        "ring": "vectors",
        "version": 7,
        "config": dict(v["config"]),
        "nodes": v["nodes"],
        "fingerprint": v["fingerprint"],
        "created_at": "2026-01-01T00:00:00Z",
        "change": {},
    }
    s["config"]["membership"] = {"mode": "manual"}  # not placement: ignored
    if v["buckets"] is not None:
        s["buckets"] = v["buckets"]
    if "server_ids" in v:
        ids = v["server_ids"]
        s["server_ids"] = {"ids": ids, "next": max(ids.values(), default=0) + 1}
    return s


@pytest.mark.parametrize("name", FILES)
def test_from_snapshot(name: str) -> None:
    v = vector(name)
    s = snapshot_of(v)
    extra: dict[str, Any] = {}
    if v["config"]["algorithm"] == "table":
        # The download of …/snapshots/{v}/table.
        extra["table_encoding"] = built(name).encode()
    p = Placement.from_snapshot(json.dumps(s), **extra)
    assert (p.fingerprint(), p.version, p.ring) == (v["fingerprint"], 7, "vectors")
    check_lookups(p, v)
    s["fingerprint"] = "0" * 64
    with pytest.raises(FingerprintMismatch) as e:
        Placement.from_snapshot(s, **extra)
    assert e.value.actual == v["fingerprint"]


# -- reference results of other implementations ------------------------------


def check_libketama(case: dict[str, Any]) -> None:
    name, servers = case["name"], case["servers"]
    nodes = [Node(s["addr"], weight=s["memory"]) for s in servers]
    p = Placement.build(RingConfig(algorithm="ketama"), nodes)
    points = p.points()
    assert points is not None
    total = sum(s["memory"] for s in servers)
    assert [digest_count(s["memory"], total, len(servers)) for s in servers] == case[
        "ks_per_server"
    ], name
    per_node = Counter(node_id for _, node_id in points)
    assert [per_node[s["addr"]] for s in servers] == case["points_per_server"], name
    assert len(points) == case["numpoints"], name
    assert points[-1][0] == case["last_point"], name
    head = [(x["point"], x["addr"]) for x in case["first_points"]]
    assert points[: len(head)] == head, name
    for c in case["collisions"]:
        # Tied points in libketama's (stable qsort) order, after the given
        # predecessor; a probe hashing into that arc lands on the first.
        tied = [i for i, (pos, _) in enumerate(points) if pos == c["point"]]
        assert [points[i][1] for i in tied] == c["addrs_in_sorted_order"], name
        assert points[tied[0] - 1][0] == c["predecessor_point"], name
        assert c["predecessor_point"] < md5_32(c["probe_key"].encode()) <= c["point"]
        assert p.owner(c["probe_key"]) == c["probe_addr"], name
    looked_up = {x["key"] for x in case["lookups"]}
    for k in case["wrap_keys"]:
        # Past the last point: wraps to the owner of the first.
        assert md5_32(k.encode()) > case["last_point"]
        assert k in looked_up
        assert p.owner(k) == points[0][1]
    assert set(case["probe_keys"]) <= looked_up
    wrong = [
        (x["key"], x["addr"])
        for x in case["lookups"]
        if p.key_hash(x["key"]) != x["hash"] or p.owner(x["key"]) != x["addr"]
    ]
    assert not wrong, f"{name}: {wrong[:5]}"


def check_envoy_maglev(case: dict[str, Any]) -> None:
    hosts = case["hosts"]
    p = Placement.build(
        RingConfig(algorithm="maglev", table_size=case["table_size"]),
        [Node(h["hashed"], weight=h["weight"]) for h in hosts],
    )
    # Envoy's indices are positions in `hosts` as listed: map them to ids.
    assert p.maglev_table() == [hosts[i]["hashed"] for i in case["expected_table"]], case["name"]


def check_jump(case: dict[str, Any]) -> None:
    # The key is a u64 written as a decimal string (spec 12).
    assert isinstance(case["key"], str)
    assert jump_hash(int(case["key"]), case["buckets"]) == case["expected"], case


REFERENCE_CHECKS = {
    "libketama.json": check_libketama,
    "envoy-maglev.json": check_envoy_maglev,
    "jump.json": check_jump,
}


def reference_cases() -> list[tuple[str, int]]:
    return [(f, i) for f in REFERENCE_FILES for i in range(len(load(REFERENCE / f)["cases"]))]


@pytest.mark.parametrize(
    ("name", "index"), reference_cases(), ids=[f"{f}:{i}" for f, i in reference_cases()]
)
def test_reference(name: str, index: int) -> None:
    REFERENCE_CHECKS[name](load(REFERENCE / name)["cases"][index])


def test_reference_case_counts() -> None:
    # As the Rust reference test asserts them.
    assert len(load(REFERENCE / "libketama.json")["cases"]) == 6
    assert len(load(REFERENCE / "envoy-maglev.json")["cases"]) == 6
    jump_cases = load(REFERENCE / "jump.json")["cases"]
    assert len(jump_cases) >= 100
    assert any((c["key"], c["buckets"], c["expected"]) == ("256", 1024, 520) for c in jump_cases)
