"""The worked examples of docs/placement-spec.md (sections 3, 5, 6, 9, 10),
which the reference implementation produced (spec 12)."""

from __future__ import annotations

import hashlib

import pytest

from ringd import Node, Placement, RingConfig
from ringd.hashes import crc32, fmix64, hash64, md5_32, xxh64
from ringd.jump import jump_hash, next_order
from ringd.ketama import digest_count
from ringd.maglev import permutation_seeds
from ringd.nginx import server_points
from ringd.preference import select
from ringd.rendezvous import cost, log2_q32
from ringd.ring import point_count, point_input


@pytest.mark.parametrize(
    ("data", "xxh3", "md5", "sha256", "murmur3"),
    [
        (b"", 0x2D06800538D394C2, 0x04B2008FD98C1DD4, 0x141CFC9842C4B0E3, 0),
        (b"hello", 0x9555E8555C62DCFD, 0x762A4BBC2A40415D, 0x0EA3B05FBA4DF22C, 0xCBD8A7B341BD9B02),
        (b"node-a", 0xDADEA24AA12481FE, 0x5CE83AB35B8AEC6C, 0x0474205AF00F5766, 0x44A5BCEC4B0764BF),
    ],
)
def test_hash64_values(data: bytes, xxh3: int, md5: int, sha256: int, murmur3: int) -> None:
    assert [hash64(f, data) for f in ("xxh3", "md5", "sha256", "murmur3")] == [
        xxh3,
        md5,
        sha256,
        murmur3,
    ]


def test_other_primitives() -> None:
    assert [xxh64(b"", 0), xxh64(b"", 1)] == [0xEF46DB3751D8E999, 0xD5AFBA1336A3BE4B]
    assert [xxh64(b"hello", 0), xxh64(b"hello", 1)] == [0x26C7827D889F6DA3, 0x23DD71CB04D0A1B2]
    assert [xxh64(b"node-a", 0), xxh64(b"node-a", 1)] == [0x05378E2C8885D70B, 0xF7F4751E959874AB]
    assert [md5_32(b""), md5_32(b"hello"), md5_32(b"node-a")] == [3649838548, 708854109, 1535831148]
    assert hash64("murmur3", b"The quick brown fox jumps over the lazy dog") == 0xE34BBC7BBC071B6C
    assert hash64("murmur3", b"0123456789abcdefX") == 0xCDEBD2ACB570D6F7
    assert (fmix64(0), fmix64(1)) == (0, 0xB456BCFC34C2CB2C)


def test_ring_points_and_ramp_counts() -> None:
    assert point_input(b"node-a", 0).hex() == "060000006e6f64652d6100000000"
    assert hash64("xxh3", point_input(b"node-a", 0)) == 0xF2FFFE2FA1FB92F0
    assert hash64("xxh3", point_input(b"node-a", 1)) == 0xDDEAE1A3581B2E6B
    assert point_count(160, Node("n", weight=2, ramp=19_661)) == 97
    assert point_count(160, Node("n", weight=2)) == 320
    assert point_count(160, Node("n", ramp=1)) == 1  # at least one point


def test_ketama_digest_counts_and_points() -> None:
    cases = [
        ((1, 4, 4), 40),
        ((1, 10, 10), 40),
        ((1, 100, 100), 40),
        ((1, 61, 61), 39),
        ((1, 1001, 2), 0),
    ]
    assert [digest_count(*args) for args, _ in cases] == [d for _, d in cases]
    d = hashlib.md5(b"node-a-0").digest()
    assert [int.from_bytes(d[i : i + 4], "little") for i in (0, 4, 8, 12)] == [
        557956318,
        2720864358,
        2511631120,
        2397260398,
    ]


def abc(algorithm: str, **config: object) -> Placement:
    nodes = [Node("a"), Node("b"), Node("c", weight=2)]
    return Placement.build(RingConfig(algorithm=algorithm, **config), nodes)  # type: ignore[arg-type]


def test_maglev_example() -> None:
    assert [permutation_seeds(x, 7) for x in "abc"] == [(6, 1), (4, 3), (1, 2)]
    p = abc("maglev", table_size=7)
    assert p.maglev_table() == list("accbbca")
    assert p.owner("hello") == "c"
    assert p.preference_list("hello") == ["c", "b", "a"]
    assert [n["units"] for n in p.ownership()["nodes"]] == ["2", "2", "3"]


def test_jump_function_and_holes() -> None:
    assert (jump_hash(256, 1024), jump_hash(0xDEADBEEF, 100), jump_hash(0, 1)) == (520, 87, 0)
    config = RingConfig(algorithm="jump")
    p = abc("jump")
    assert p.bucket_order() == ["a", "b", "c", "c"]
    assert p.owner("hello") == "a"
    q = Placement.build(config, [Node("b"), Node("c", weight=2)], buckets=[None, "b", "c", "c"])
    assert fmix64(0x9555E8555C62DCFD + 0x9E3779B97F4A7C15 & (1 << 64) - 1) == 0x56F1A10A2ABD675B
    assert q.owner("hello") == "c"


def test_jump_next_order_sequence() -> None:
    def n(spec: str) -> list[Node]:
        return [Node(x[0], weight=int(x[1:])) for x in spec.split()]

    o1 = next_order([], n("a2 b1 c1 d2"))
    assert o1 == list("aabcdd")
    o2 = next_order(o1, n("b1 c1 d2"))
    assert o2 == [None, None, "b", "c", "d", "d"]
    o3 = next_order(o2, n("b1 c3 d1 e1"))
    assert o3 == list("ccbcde")
    assert next_order(o3, n("b1 c1")) == ["c", None, "b"]
    assert next_order([], n("b1 a2 c1")) == list("aabc")


def test_rendezvous_log_and_example() -> None:
    values = {
        1: 0,
        2: 1 << 32,
        3: 0x195C01A39,
        10: 0x35269E12F,
        1 << 63: 0x3F00000000,
        (1 << 64) - 1: 0x3FFFFFFFFF,
        1 << 64: 0x4000000000,
    }
    assert {x: log2_q32(x) for x in values} == values
    nh_a, nh_b = hash64("xxh3", b"a"), hash64("xxh3", b"b")
    assert (nh_a, nh_b) == (0xE6C632B61E964E1F, 0x575A0B1C44D8843F)
    k = 0x9555E8555C62DCFD
    assert (fmix64(k ^ nh_a), fmix64(k ^ nh_b)) == (0x26084B71CF35724E, 0xA350D25491AFD8D0)
    assert (cost(0x26084B71CF35724E), cost(0xA350D25491AFD8D0)) == (11814780198, 2785201421)
    two = Placement.build(RingConfig(algorithm="rendezvous"), [Node("a"), Node("b")])
    assert two.owner("hello") == "b"
    p = abc("rendezvous")
    expected = {"hello": "cba", "": "acb", "user:42": "cab", "key-7": "abc"}
    assert {k: "".join(p.preference_list(k)) for k in expected} == expected
    assert [n["units"] for n in p.ownership()["nodes"]] == ["1", "1", "2"]
    assert p.ownership()["total_units"] == "4"


def test_table_partitions() -> None:
    rows = [["a"]] * 256
    p = Placement.build(RingConfig(algorithm="table", partitions=256), [Node("a")], table=rows)
    lay = p._layout
    assert lay.partition_of(0x9555E8555C62DCFD) == 149  # type: ignore[attr-defined]
    assert lay.partition_of(0x2D06800538D394C2) == 45  # type: ignore[attr-defined]


def test_preference_selection_examples() -> None:
    # 6.2: a(z1), d(z1), b(z2) with R = 3, two zones -> [a, b, d].
    a, b, d = 0, 1, 2
    assert select(iter([a, d, b]), 3, 3, ([0, 1, 0], 2)) == [a, b, d]
    # 6.2, table without zones: rows [a,b], [c,a], [b,d] give [a,b,c,d] for R = 4.
    assert select(iter([0, 1, 2, 0, 1, 3]), 4, 4, None) == [0, 1, 2, 3]


def test_encodings_of_section_9_3() -> None:
    p = abc("jump")
    assert p.encode().hex() == (
        "52494e4744504c01"
        "04010000"
        "03000000"
        "03000000"
        "016100"
        "01000000"
        "016200"
        "01000000"
        "016300"
        "02000000"
        "04000000"
        "00000000"
        "01000000"
        "02000000"
        "02000000"
    )
    assert p.fingerprint() == "b40c22a1728f6070c5a60ae894827c7a3d789974aed4564bb24aed2e2d5e4795"
    q = Placement.build(
        RingConfig(algorithm="jump"),
        [Node("b"), Node("c", weight=2)],
        buckets=[None, "b", "c", "c"],
    )
    assert q.encode().hex().endswith("04000000ffffffff000000000100000001000000")
    assert q.fingerprint() == "bdc6f1f9eb6cb3e8c4e18953d80e4f51d42413163dfcb803ac74b21a40e428a1"
    empty = Placement.build(RingConfig(algorithm="rendezvous"), [])
    assert empty.encode().hex() == "52494e4744504c01050100000300000000000000"
    assert (empty.owner("x"), empty.preference_list("x"), empty.ownership()) == (
        None,
        [],
        {"basis": "weights", "total_units": "0", "nodes": [], "max_over_mean": 0.0},
    )


def test_table_encodings_of_section_9_3() -> None:
    single = Placement.build(
        RingConfig(algorithm="table", partitions=256), [Node("cache-a")], table=[["cache-a"]] * 256
    )
    enc = single.encode()
    assert enc[:33].hex() == "52494e4744504c010601000003000000010000000763616368652d610001000000"
    assert enc[33:38].hex() == "0001000001"
    assert enc[38:] == b"\x00\x00" * 256
    assert len(enc) == 550
    assert (
        single.fingerprint() == "2c3c5cda3a57b7ee3781d676fdf8fc8ccfa3729fb44c88c3f7b33acd1f97632d"
    )
    empty = Placement.build(RingConfig(algorithm="table"), [], table=[[]] * 65536)
    assert empty.encode().hex() == "52494e4744504c010601000003000000000000000000010000"
    assert empty.owner("x") is None
    assert empty.preference_list("x", 5) == []


def test_worked_example_ring_with_zones() -> None:
    config = RingConfig(vnodes_per_weight=2, replication_factor=2, zone_aware=True)
    nodes = [
        Node("b", weight=2, zone="z2", hash_key="b-old"),
        Node("a", zone="z1"),
        Node("c", zone="z1", state="draining"),
        Node("d", zone="z1"),
    ]
    p = Placement.build(config, nodes)
    assert p.points() == [
        (0x033FB1030C27875C, "b"),
        (0x332D8FDE124825DF, "a"),
        (0x8EBA5B899F433B93, "b"),
        (0x93B35C5EC6EA75E5, "d"),
        (0x98123F6CEC13A4C3, "a"),
        (0xA6E2E7CD96B9AB4C, "d"),
        (0xB4CE337A8A340004, "b"),
        (0xDD00318079A551CB, "b"),
    ]
    table = {
        "hello": (0x9555E8555C62DCFD, "abd"),
        "": (0x2D06800538D394C2, "abd"),
        "user:42": (0x9FC1E605FA7174AA, "dba"),
        "key-7": (0xE683DD62C3F8AC4F, "bad"),
    }
    for key, (h, pref) in table.items():
        assert (p.key_hash(key), p.owner(key), "".join(p.preference_list(key, 3))) == (
            h,
            pref[0],
            pref,
        )
    o = p.ownership()
    assert [(n["id"], n["units"]) for n in o["nodes"]] == [
        ("a", "3768600195400060257"),
        ("b", "13252287072643379652"),
        ("d", "1425856805666111707"),
    ]
    assert o["total_units"] == str(1 << 64)
    assert p.fingerprint() == "b19d4a0a0eddfd52d0b31587a9fbe503d15dd1a56221bce0739a4772d583811f"
    assert (
        p.encode()
        .hex()
        .startswith(
            "52494e4744504c01"
            "01010100"
            "02000000"
            "03000000"
            "0161"
            "027a31"
            "01000000"
            "0162"
            "027a32"
            "02000000"
            "0164"
            "027a31"
            "01000000"
            "08000000"
            "5c87270c03b13f03"
            "01000000"
        )
    )


def test_ketama_example() -> None:
    p = Placement.build(RingConfig(algorithm="ketama"), [Node("a"), Node("b")])
    points = p.points()
    assert points is not None
    assert len(points) == 320
    assert points[:3] == [(3747649, "a"), (35374473, "a"), (61840307, "a")]
    assert (p.key_hash("hello"), p.owner("hello")) == (708854109, "a")
    assert (p.key_hash(""), p.owner("")) == (3649838548, "b")


def test_nginx_crc32_and_points() -> None:
    # 3.5's test values, and 5.7's example points.
    assert [crc32(b) for b in (b"", b"hello", b"123456789", b"node-a")] == [
        0,
        907060870,
        3421780262,
        2023312811,
    ]
    assert server_points("10.0.0.1:11211", 1)[:2] == [1016082558, 3442865372]
    assert len(server_points("10.0.0.1:11211", 3)) == 480
