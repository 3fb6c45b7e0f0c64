"""The watching client against the real `ringd serve`, on SQLite and, when
`etcd` is on PATH, on a real etcd: convergence of both flavours to the
server's lookups, resume after a restart, long-poll, refusal of a tampered
snapshot, acks, problem details, and a server at its `--max-watchers`
(Retry-After honoured, the other servers tried first)."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import (
    KEYS,
    BrokenWatchProxy,
    Etcd,
    Ringd,
    ScriptedWatch,
    Stub,
    change,
    check_lookups,
    free_port,
    reply,
    server_lookups,
    unique,
    up,
    wait_until,
)

from ringd import (
    Api,
    ApiError,
    AsyncApi,
    Change,
    ClientClosed,
    Conflict,
    Event,
    Forbidden,
    InvalidRequest,
    Node,
    NotFound,
    Placement,
    PlacementError,
    PreconditionFailed,
    Rejected,
    RingClient,
    RingConfig,
    Unauthorized,
    Unprocessable,
)
from ringd.aio import AsyncRingClient
from ringd.envoy_ring_hash import check_address

HASHES = ("xxh3", "md5", "sha256", "murmur3")
COMBOS = [(a, h) for a in ("ring", "maglev", "jump", "rendezvous", "table") for h in HASHES]
COMBOS.insert(4, ("ketama", "md5"))
COMBOS += [("envoy_ring_hash", "xxh64"), ("envoy_maglev", "xxh64")]  # their only hash
# On etcd, one ring per algorithm, with this hash (the store changes nothing
# in placement); on SQLite, every algorithm with every hash. Every ring gets
# owners and preference lists of all 100,000 keys checked.
PRIMARY = {
    "ring": "xxh3",
    "ketama": "md5",
    "maglev": "murmur3",
    "jump": "sha256",
    "rendezvous": "md5",
    "table": "xxh3",
    "envoy_ring_hash": "xxh64",
    "envoy_maglev": "xxh64",
}
EXACT_BASES = {
    "ring": "ranges",
    "ketama": "ranges",
    "maglev": "table_entries",
    "envoy_maglev": "table_entries",
    "table": "partitions",
}
# The algorithms that take ramps.
RAMPS = ("ring", "maglev", "rendezvous", "envoy_ring_hash", "envoy_maglev")
# The xDS modes' nodes are endpoints: each needs an IP address and a port
# (an IPv6 one among them), which places nothing.
XDS = ("envoy_ring_hash", "envoy_maglev")
ENDPOINTS = {
    "a": "10.0.0.1:8080",
    "b": "10.0.0.2:8080",
    "c": "[2001:db8::c]:8080",
    "d": "10.0.0.4:8080",
    "e": "10.0.0.5:8080",
    "f": "[::ffff:10.0.0.6]:8080",
    "g": "10.0.0.7:8080",
}


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Etcd | None]:
    if shutil.which("etcd") is None:
        yield None
        return
    e = Etcd(tmp_path_factory.mktemp("etcd"))
    yield e
    e.stop()


@pytest.fixture(params=["sqlite", "etcd"])
def store(request: pytest.FixtureRequest, etcd: Etcd | None, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/ringd.db"
    if etcd is None:
        pytest.skip("etcd is not on PATH")
    return etcd.store


@pytest.fixture
def server(store: str, tmp_path: Path) -> Iterator[Ringd]:
    s = Ringd(store, tmp_path)
    yield s
    s.stop()


def test_convergence_sync_and_async(server: Ringd, store: str) -> None:
    api = Api(server.url)
    # On etcd the store changes nothing in placement: one ring per algorithm.
    combos = (
        COMBOS if store.startswith("sqlite") else [(a, h) for a, h in COMBOS if PRIMARY[a] == h]
    )
    rings = {unique(f"{a}-{h}"): (a, h) for a, h in combos}
    for i, (ring, (alg, h)) in enumerate(rings.items()):
        # Zone-aware on every other ring, but not `table`, whose zones would
        # need weights balanced to hold a replica of every partition each.
        config: dict[str, Any] = {
            "algorithm": alg,
            "hash": h,
            "zone_aware": i % 2 == 1 and alg != "table",
        }
        if alg == "table":
            config["partitions"] = 4096
        if alg in ("maglev", "envoy_maglev"):
            config["table_size"] = 4093  # prime; Python builds 65537 slots slowly
        assert api.json("PUT", f"/v1/rings/{ring}", config)["version"] == 1
    seen: dict[str, list[Change]] = {r: [] for r in rings}
    sync = {
        r: RingClient(server.url, r, client_id=f"sync-{i}", ack=False, on_change=seen[r].append)
        for i, r in enumerate(rings)
    }
    for c in sync.values():
        assert c.ready(10).version == 1

    async def flavour_async() -> dict[str, tuple[int, str, list[Any], Any]]:
        aapi = AsyncApi(server.url)
        clients = {r: AsyncRingClient(server.url, r, ack=False) for r in rings}
        got: dict[str, tuple[int, str, list[Any], Any]] = {}
        for c in clients.values():
            await c.start()
            await c.ready(10)
        subs = {r: c.changes() for r, c in clients.items()}
        for ring, (alg, _) in rings.items():
            ramp = {"ramp": 30000} if alg in RAMPS else {}

            steps = [
                [
                    node(alg, "a", weight=1, zone="z1"),
                    node(alg, "b", weight=2, zone="z2"),
                    node(alg, "c", zone="z3"),
                    node(alg, "d", weight=3, zone="z1"),
                    node(alg, "e", zone="z2", state="draining"),
                ],
                [{"op": "remove", "id": "b"}],
                [node(alg, "f", weight=2, zone="z3"), node(alg, "c", weight=4, zone="z3")],
                [node(alg, "a", zone="z1", state="draining"), node(alg, "g", zone="z2", **ramp)],
            ]
            for v, ops in enumerate(steps, start=2):
                r = await aapi.json("POST", f"/v1/rings/{ring}/changes", {"ops": ops})
                assert r["version"] == v
        for ring, c in clients.items():
            view = await c.wait_for_version(5, 20)
            tos = [await subs[ring].get(5) for _ in range(4)]
            got[ring] = (
                view.version,
                view.placement.fingerprint(),
                [(x.from_version, x.to, x.reset) for x in tos],
                c.status(),
            )
            _, expected = server_lookups(api, ring, KEYS[:5000])
            check_lookups(c, expected, KEYS[:5000], 5000)
            await c.close()
        await aapi.close()
        return got

    from_async = asyncio.run(flavour_async())
    for ring, (alg, h) in rings.items():
        c = sync[ring]
        info = api.json("GET", f"/v1/rings/{ring}")
        c.wait_for_version(5, 20)
        assert (
            (c.version, c.placement.fingerprint() if c.placement else None)
            == (info["version"], info["fingerprint"])
            == from_async[ring][:2]
        )
        assert from_async[ring][2] == [
            (1, 2, False),
            (2, 3, False),
            (3, 4, False),
            (4, 5, False),
        ], from_async[ring]
        assert [(ch.from_version, ch.to, ch.reset) for ch in seen[ring]] == [
            (None, 1, False),
            (1, 2, False),
            (2, 3, False),
            (3, 4, False),
            (4, 5, False),
        ]
        assert seen[ring][0].diff is None  # nothing to compare the first version with
        version, expected = server_lookups(api, ring, KEYS)
        assert version == 5
        assert len(expected) == 100_000
        check_lookups(c, expected, KEYS, len(KEYS))
        primary = PRIMARY[alg] == h
        st = c.status()
        if alg == "table":
            # Held v-1 each time: moves when the snapshot carries them (they
            # are sent only when shorter than the table), else a download.
            with_moves = sum(
                api.json("GET", f"/v1/rings/{ring}/snapshots/{v}").get("table_moves") is not None
                for v in range(2, 6)
            )
            assert (st.table_moves_applied, st.table_downloads) == (with_moves, 4 - with_moves)
            assert with_moves >= 1
        if alg != "jump" or primary:  # jump's is sampled: 65,536 keys a version
            check_diffs(api, ring, alg, seen[ring][1:])
        c.close()


def node(alg: str, n: str, /, **fields: Any) -> dict[str, Any]:
    """An upsert of node `n`, with its address in a ring of an xDS mode."""
    if alg in XDS:
        fields["address"] = ENDPOINTS[n]
    return up(n, **fields)


def check_diffs(api: Api, ring: str, alg: str, changes: list[Change]) -> None:
    for ch in changes:
        d = api.json("GET", f"/v1/rings/{ring}/diff?from={ch.from_version}&to={ch.to}")["diff"]
        mine = ch.diff
        assert mine is not None
        if alg not in EXACT_BASES:  # sampled here; the server's exact model
            assert mine.basis == "sampled"
            assert abs(mine.moved_fraction - d["moved_fraction"]) < 0.01
            continue
        assert mine.basis == d["basis"] == EXACT_BASES[alg]
        assert mine.moved_fraction == d["moved_fraction"]
        theirs = [
            (n["id"], n["before"], n["after"], n["gained"], n["lost"])
            for n in d["nodes"]
            if n["gained"] > 0 or n["lost"] > 0
        ]
        assert [(n.id, n.before, n.after, n.gained, n.lost) for n in mine.nodes] == theirs


def test_resume_after_restart_and_failover(store: str, tmp_path: Path) -> None:
    srv = Ringd(store, tmp_path, port=free_port())
    dead = f"http://127.0.0.1:{free_port()}"  # nobody listens: skipped on connect
    ring = unique("restart")
    api = Api(srv.url)
    try:
        api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "jump"})
        change(api, ring, up("a"), up("b"))
        seen: list[Change] = []
        with RingClient(
            [dead, srv.url], ring, ack=False, backoff=(0.05, 0.2), on_change=seen.append
        ) as c:
            assert c.ready(10).version == 2
            assert c.status().server == srv.url
            assert c.status().transport == "sse"
            srv.stop()
            wait_until(lambda: c.status().transport == "connecting", 10, "the stream to break")
            srv.start()  # same store, same port
            assert change(api, ring, up("c")) == 3
            assert change(api, ring, {"op": "remove", "id": "a"}) == 4
            c.wait_for_version(4, 15)
            # Resumed with Last-Event-ID: every version once, none reset.
            assert [(x.from_version, x.to, x.reset) for x in seen] == [
                (None, 2, False),
                (2, 3, False),
                (3, 4, False),
            ]
            assert c.placement is not None
            assert c.placement.fingerprint() == api.json("GET", f"/v1/rings/{ring}")["fingerprint"]
            assert c.status().server == srv.url
    finally:
        srv.stop()


# Addresses as the server takes or refuses them for envoy_ring_hash (Rust's
# SocketAddr, written back as given); the client must agree on each.
ENVOY_ADDRESSES = [
    "10.0.0.9:8080",
    "255.255.255.255:65535",
    "[2001:db8::1]:8080",
    "[::1]:80",
    "[::]:1",
    "[::ffff:10.0.0.1]:80",
    "[::102:304]:80",
    "[2001:db8:0:1:1:1:1:1]:80",
    "[2001:db8::1:0:0:1]:80",
    "10.0.0.1",
    "10.0.0.1:0",
    "10.0.0.1:65536",
    "10.0.0.1:080",
    "010.0.0.1:80",
    "cache.local:80",
    "2001:db8::1:80",
    "[2001:DB8::1]:80",
    "[::0001]:80",
    "[2001:db8:0:0:1::1]:80",
    "[::1.2.3.4]:80",
    "[::ffff:a00:1]:80",
    "[fe80::1%3]:80",
    "[fe80::1%eth0]:80",
]


def test_envoy_ring_hash_agrees_with_the_server(server: Ringd) -> None:
    """Ring sizes in the config, every address check and node-set refusal
    as the server makes them, a replacement through `hash_key`, a change
    of ring size, and the watching client on the server's lookups."""
    api, ring = Api(server.url), unique("envoy")
    created = api.json(
        "PUT",
        f"/v1/rings/{ring}",
        {"algorithm": "envoy_ring_hash", "minimum_ring_size": 64, "maximum_ring_size": 256},
    )
    config = created["config"]
    assert (config["hash"], config["minimum_ring_size"], config["maximum_ring_size"]) == (
        "xxh64",
        64,
        256,
    )
    nodes = [
        up("a", address="10.0.0.1:80"),
        up("b", weight=3, address="[2001:db8::b]:80"),
        up("c", weight=2, ramp=20000, address="10.0.0.3:80", hash_key="cache-c"),
    ]
    assert change(api, ring, *nodes) == 2
    snap = api.json("GET", f"/v1/rings/{ring}/snapshot")
    assert snap["config"]["minimum_ring_size"] == 64
    local_nodes = [Node.from_json(n) for n in snap["nodes"]]
    local_config = RingConfig.from_json(snap["config"])
    assert Placement.from_snapshot(snap).fingerprint() == snap["fingerprint"]
    version = 2
    for address in ENVOY_ADDRESSES:
        # A draining node: its address is checked all the same.
        local = check_address(address)
        op = up("x", address=address, state="draining")
        if local is None:
            version = change(api, ring, op)
            version = change(api, ring, {"op": "remove", "id": "x"})
            continue
        with pytest.raises(InvalidRequest) as refused:
            change(api, ring, op)
        assert (refused.value.status, refused.value.field) == (400, "address"), address
        assert "cannot be a server for envoy_ring_hash" in refused.value.detail
    assert version == 2 + 2 * sum(check_address(a) is None for a in ENVOY_ADDRESSES)
    check_xds_refusals(api, ring, local_config, local_nodes)
    with pytest.raises(InvalidRequest) as inverted:
        change(api, ring, {"op": "update_config", "config": {"minimum_ring_size": 257}})
    assert "minimum_ring_size" in (inverted.value.field or "")
    with pytest.raises(PlacementError) as e:
        RingConfig(algorithm="envoy_ring_hash", minimum_ring_size=257, maximum_ring_size=256)
    assert e.value.kind == "RingSizesInverted"
    seen: list[Change] = []
    with RingClient(server.url, ring, ack=False, on_change=seen.append) as c:
        c.ready(10)
        _, expected_lookups = server_lookups(api, ring, KEYS[:20_000])
        check_lookups(c, expected_lookups, KEYS[:20_000], 5000)
        before = c.placement
        assert before is not None
        # A replacement takes b's label and keeps every key b had.
        version = change(
            api,
            ring,
            up("b", weight=3, address="[2001:db8::b]:80", state="draining"),
            up("b2", weight=3, address="10.0.0.22:80", hash_key="b"),
        )
        after = c.wait_for_version(version, 15).placement
        keys = KEYS[:20_000]
        assert [after.owner(k) for k in keys] == [
            "b2" if before.owner(k) == "b" else before.owner(k) for k in keys
        ]
        # A bigger ring: every entry re-cut, the fingerprint the server's.
        version = change(
            api,
            ring,
            {"op": "update_config", "config": {"minimum_ring_size": 512, "maximum_ring_size": 512}},
        )
        view = c.wait_for_version(version, 15)
        assert view.placement.config is not None
        assert view.placement.config.minimum_ring_size == 512
        assert len(view.placement.points() or []) == 512
        assert view.placement.fingerprint() == api.json("GET", f"/v1/rings/{ring}")["fingerprint"]
        _, expected_lookups = server_lookups(api, ring, keys)
        check_lookups(c, expected_lookups, keys, 5000)
        # Sampled diffs, as the server's for this algorithm.
        wait_until(lambda: bool(seen) and seen[-1].to == version, 5, "the change")
        last = seen[-1].diff
        assert last is not None
        assert last.basis == "sampled"
        d = api.json("GET", f"/v1/rings/{ring}/diff?from={version - 1}&to={version}")["diff"]
        assert abs(last.moved_fraction - d["moved_fraction"]) < 0.01


def check_xds_refusals(api: Api, ring: str, config: RingConfig, nodes: list[Node]) -> None:
    """Node sets an xDS ring (holding `a` at 10.0.0.1:80) refuses: the
    client with each kind, the server naming the field for it."""
    refusals = [
        ([up("y")], "MissingAddress", "address"),
        ([up("y", address="10.0.0.9:80", hash_key="a")], "EndpointKeyTaken", "hash_key"),
        ([up("y", address="10.0.0.1:80")], "DuplicateAddress", "address"),
        (
            [
                up("y", address="10.0.0.9:80", weight=1_000_000),
                up("z", address="10.0.0.10:80", ramp=1),
            ],
            "WeightShareTooSmall",
            "weight",
        ),
        ([up("y", address="cache.local:80")], "AddressNotServer", "address"),
    ]
    for ops, expected, field in refusals:
        mine = [*nodes, *(Node.from_json(op["node"]) for op in ops)]
        with pytest.raises(PlacementError) as e:
            Placement.build(config, mine)
        assert e.value.kind == expected
        with pytest.raises(InvalidRequest) as theirs:
            change(api, ring, *ops)
        assert theirs.value.field == field, (expected, theirs.value.body)
        if expected == "AddressNotServer":
            phrase = f"cannot be a server for {config.algorithm}"
            assert phrase in str(e.value)
            assert phrase in theirs.value.detail


def test_envoy_maglev_agrees_with_the_server(server: Ringd) -> None:
    """Table sizes in the config (Envoy's bound), the node-set refusals as
    the server makes them, a ramped node, a replacement through
    `hash_key`, and the watching client on the server's lookups and exact
    diffs."""
    api, ring = Api(server.url), unique("envoy-maglev")
    # Config refusals: each kind here, the server naming the field.
    # 5,000,017 (= 11 × 454,547) is refused as out of range, checked first;
    # 5,000,077 is a prime above Envoy's bound that `maglev` takes.
    bad_configs: list[tuple[dict[str, Any], str, str]] = [
        ({"table_size": 5_000_017}, "TableSizeOutOfRange", "table_size"),
        ({"table_size": 5_000_077}, "TableSizeOutOfRange", "table_size"),
        ({"table_size": 65_536}, "TableSizeNotPrime", "table_size"),
        ({"table_size": 1}, "TableSizeOutOfRange", "table_size"),
        ({"hash": "xxh3"}, "HashNotAccepted", "hash"),
    ]
    for config, expected, field in bad_configs:
        with pytest.raises(PlacementError) as e:
            RingConfig.from_json({"algorithm": "envoy_maglev", **config})
        assert e.value.kind == expected, config
        with pytest.raises(InvalidRequest) as theirs:
            api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "envoy_maglev", **config})
        assert theirs.value.field == field, (config, theirs.value.body)
    assert RingConfig(algorithm="maglev", table_size=5_000_077).table_size == 5_000_077
    largest = {"algorithm": "envoy_maglev", "table_size": 5_000_011}
    assert api.json("PUT", f"/v1/rings/{ring}-big", largest)["config"]["table_size"] == 5_000_011
    assert RingConfig.from_json(largest).table_size == 5_000_011
    created = api.json(
        "PUT", f"/v1/rings/{ring}", {"algorithm": "envoy_maglev", "table_size": 1009}
    )
    assert (created["config"]["hash"], created["config"]["table_size"]) == ("xxh64", 1009)
    nodes = [
        up("a", address="10.0.0.1:80"),
        up("b", weight=3, address="[2001:db8::b]:80"),
        up("c", weight=2, ramp=20000, address="10.0.0.3:80", hash_key="cache-c"),
    ]
    assert change(api, ring, *nodes) == 2
    snap = api.json("GET", f"/v1/rings/{ring}/snapshot")
    local_nodes = [Node.from_json(n) for n in snap["nodes"]]
    local_config = RingConfig.from_json(snap["config"])
    assert local_config.table_size == 1009
    assert Placement.from_snapshot(snap).fingerprint() == snap["fingerprint"]
    check_xds_refusals(api, ring, local_config, local_nodes)
    # A table smaller than the active node count (check 6).
    with pytest.raises(PlacementError) as e:
        Placement.build(RingConfig(algorithm="envoy_maglev", table_size=2), local_nodes)
    assert e.value.kind == "TableSizeOutOfRange"
    with pytest.raises(InvalidRequest) as theirs:
        change(api, ring, {"op": "update_config", "config": {"table_size": 2}})
    assert theirs.value.field == "table_size"
    seen: list[Change] = []
    with RingClient(server.url, ring, ack=False, on_change=seen.append) as c:
        c.ready(10)
        keys = KEYS[:20_000]
        _, expected_lookups = server_lookups(api, ring, keys)
        check_lookups(c, expected_lookups, keys, 5000)
        before = c.placement
        assert before is not None
        # A replacement takes b's label and keeps every slot b had.
        version = change(
            api,
            ring,
            up("b", weight=3, address="[2001:db8::b]:80", state="draining"),
            up("b2", weight=3, address="10.0.0.22:80", hash_key="b"),
        )
        after = c.wait_for_version(version, 15).placement
        assert after.maglev_table() == [
            "b2" if x == "b" else x for x in before.maglev_table() or []
        ]
        # The ramped node at full weight: its EDS weight grows, slots move.
        version = change(api, ring, up("c", weight=2, address="10.0.0.3:80", hash_key="cache-c"))
        view = c.wait_for_version(version, 15)
        assert view.placement.fingerprint() == api.json("GET", f"/v1/rings/{ring}")["fingerprint"]
        _, expected_lookups = server_lookups(api, ring, keys)
        check_lookups(c, expected_lookups, keys, 5000)
        wait_until(lambda: bool(seen) and seen[-1].to == version, 5, "the change")
        check_diffs(api, ring, "envoy_maglev", seen[1:])


def test_long_poll_mode_fetches_every_version(server: Ringd) -> None:
    api, ring = Api(server.url), unique("lp")
    api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "maglev", "table_size": 1009})
    seen: list[Change] = []
    with RingClient(
        server.url, ring, mode="long_poll", long_poll_wait=5, ack=False, on_change=seen.append
    ) as c:
        c.ready(10)
        assert c.status().transport == "long_poll"
        # A burst: one long-poll answers with the newest, the client fetches
        # the versions in between so each is reported.
        for i in range(4):
            change(api, ring, up(f"n{i}", weight=i + 1))
        c.wait_for_version(5, 15)
        assert [x.to for x in seen] == [1, 2, 3, 4, 5]
        assert all(not x.reset for x in seen)
        assert (
            c.owner(b"\xff\x00")
            == api.json("GET", f"/v1/rings/{ring}/lookup?key_b64=/wA=")["owner"]
        )


def test_auto_falls_back_to_long_poll_when_the_watch_is_broken(server: Ringd) -> None:
    api, ring = Api(server.url), unique("proxy")
    api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "table", "partitions": 256})
    proxy = BrokenWatchProxy(server.url)
    try:
        with (
            RingClient(proxy.url, ring, mode="auto", long_poll_wait=2, ack=False) as c,
            RingClient(proxy.url, ring, mode="sse", ack=False, backoff=(0.05, 0.1)) as pinned,
        ):
            c.ready(10)
            change(api, ring, up("a"), up("b"))
            change(api, ring, up("c"))
            view = c.wait_for_version(3, 15)
            st = c.status()
            assert (st.transport, st.server) == ("long_poll", proxy.url)
            assert (
                view.placement.fingerprint() == api.json("GET", f"/v1/rings/{ring}")["fingerprint"]
            )
            assert proxy.watch_hits >= 1
            # Pinned to streams, it never gets a version and says why.
            wait_until(lambda: "404" in (pinned.status().last_error or ""), 5, "the 404")
            assert pinned.version is None
            assert pinned.owner("k") is None
    finally:
        proxy.close()


def test_tampered_snapshot_is_refused_and_never_routed_on(server: Ringd) -> None:
    api, ring = Api(server.url), unique("tamper")
    api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "ring", "vnodes_per_weight": 16})
    change(api, ring, up("a"), up("b"), up("c"))
    change(api, ring, up("d", weight=3))
    change(api, ring, {"op": "remove", "id": "a"})
    snap = {v: api.json("GET", f"/v1/rings/{ring}/snapshots/{v}") for v in (2, 3, 4)}
    bad = json.loads(json.dumps(snap[3]))
    bad["nodes"][-1]["weight"] = 1  # d's weight back to 1, fingerprint kept
    stub = ScriptedWatch(ring)
    events: list[Event] = []
    versions_seen: list[int | None] = []
    try:
        with RingClient(stub.url, ring, client_id="tamper-test", on_event=events.append) as c:
            deadline = time.monotonic() + 10

            def sample() -> None:  # a reader racing the watch, until it sees v4
                while time.monotonic() < deadline:
                    versions_seen.append(c.version)
                    if versions_seen[-1] == 4:
                        return

            t = threading.Thread(target=sample)
            t.start()
            stub.frames.put(("snapshot", 2, json.dumps(snap[2])))
            c.wait_for_ack(2, 5)
            stub.frames.put(("snapshot", 3, json.dumps(bad)))
            wait_until(lambda: c.status().rejected == 1, 5, "the refusal")
            st = c.status()
            assert c.version == 2
            assert st.version == 2
            assert "FingerprintMismatch" in (st.last_error or "")
            assert snap[3]["fingerprint"] in (st.last_error or "")
            p2 = Placement.from_snapshot(snap[2])
            assert [c.owner(k) for k in KEYS[:2000]] == [p2.owner(k) for k in KEYS[:2000]]
            stub.frames.put(("snapshot", 4, json.dumps(snap[4])))
            c.wait_for_ack(4, 5)
            t.join()
            assert set(versions_seen) <= {None, 2, 4}
            assert 4 in versions_seen
            rejected = [e for e in events if isinstance(e, Rejected)]
            assert [r.version for r in rejected] == [3]
            assert [(e.from_version, e.to) for e in events if isinstance(e, Change)] == [
                (None, 2),
                (2, 4),
            ]
            assert {(a["version"], a["fingerprint"]) for a in stub.acks} == {
                (2, snap[2]["fingerprint"]),
                (4, snap[4]["fingerprint"]),
            }
            stub.frames.put(None)  # the stream ends; the client resumes after 4
            wait_until(lambda: len(stub.last_event_ids) >= 2, 5, "the reconnect")
            assert stub.last_event_ids[:2] == [None, "4"]
    finally:
        stub.frames.put(None)
        stub.close()


def test_acks_are_visible_in_clients(server: Ringd) -> None:
    api, ring = Api(server.url), unique("acks")
    api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "rendezvous"})
    change(api, ring, up("a"), up("b"))
    with (
        RingClient(server.url, ring, client_id="web-7") as c,
        RingClient(server.url, ring, client_id="silent", ack=False) as quiet,
    ):
        c.wait_for_ack(2, 10)
        quiet.ready(10)
        listed = api.json("GET", f"/v1/rings/{ring}/clients")
        assert [
            (
                x["client_id"],
                x["version"],
                x["fingerprint"],
                x["lag"],
                x["on_latest"],
                x["divergent"],
            )
            for x in listed["clients"]
        ] == [("web-7", 2, listed["fingerprint"], 0, True, False)]
        v = change(api, ring, up("c"))
        c.wait_for_ack(v, 10)
        listed = api.json("GET", f"/v1/rings/{ring}/clients")
        assert [(x["client_id"], x["version"]) for x in listed["clients"]] == [("web-7", 3)]
        assert c.status().acked == 3


def test_problem_details_become_typed_exceptions(tmp_path: Path) -> None:
    srv = Ringd(
        f"sqlite://{tmp_path}/ringd.db",
        tmp_path,
        env={"RINGD_ADMIN_TOKEN": "admin-t", "RINGD_READ_TOKEN": "read-t"},
    )
    api = Api(srv.url, token="admin-t")
    try:
        api.json("PUT", "/v1/rings/p", {"algorithm": "ring"})
        cases: list[tuple[Any, type, int, str, str | None]] = [
            (lambda: api.json("GET", "/v1/rings/nope"), NotFound, 404, "ring-not-found", None),
            (
                lambda: api.json("GET", "/v1/rings/p/snapshots/99"),
                NotFound,
                404,
                "version-not-found",
                "version",
            ),
            (
                lambda: api.json("PUT", "/v1/rings/p", {"algorithm": "jump"}),
                Conflict,
                409,
                "conflict",
                None,
            ),
            (
                lambda: api.json(
                    "POST", "/v1/rings/p/clients/x/ack", {"version": 9, "fingerprint": "0" * 64}
                ),
                Conflict,
                409,
                "conflict",
                "version",
            ),
            (
                lambda: api.json(
                    "POST", "/v1/rings/p/changes", {"ops": [up("a")], "expected_version": 7}
                ),
                PreconditionFailed,
                412,
                "precondition-failed",
                None,
            ),
            (
                lambda: api.json("POST", "/v1/rings/p/lookup", {"keys_b64": ["/w="]}),
                InvalidRequest,
                400,
                "invalid-input",
                "keys_b64[0]",
            ),
            (
                lambda: api.json("GET", "/v1/rings/p/snapshot?after=1&wait=6m"),
                InvalidRequest,
                400,
                "invalid-input",
                "wait",
            ),
            (
                lambda: api.json("POST", "/v1/rings/p/changes", {"ops": [up("a", weight=0)]}),
                InvalidRequest,
                400,
                "invalid-input",
                "ops[0].node.weight",
            ),
            (
                lambda: Api(srv.url).json("GET", "/v1/rings/p"),
                Unauthorized,
                401,
                "unauthorized",
                None,
            ),
            (
                lambda: Api(srv.url, token="read-t").json("PUT", "/v1/rings/q", {}),
                Forbidden,
                403,
                "forbidden",
                None,
            ),
        ]
        api.json(
            "POST", "/v1/rings/p/changes", {"ops": [up("a")]}, headers={"idempotency-key": "k1"}
        )
        cases.append(
            (
                lambda: api.json(
                    "POST",
                    "/v1/rings/p/changes",
                    {"ops": [up("b")]},
                    headers={"idempotency-key": "k1"},
                ),
                Unprocessable,
                422,
                "idempotency-key-reused",
                "Idempotency-Key",
            )
        )
        for call, cls, status, slug, field in cases:
            with pytest.raises(cls) as info:
                call()
            e = info.value
            assert type(e) is cls
            assert isinstance(e, ApiError)
            assert (e.status, e.type, e.field) == (status, f"urn:ringd:problem:{slug}", field)
            assert e.problem
            assert e.title
            assert e.detail == e.body["detail"]
        with pytest.raises(PreconditionFailed) as pre:
            api.json("POST", "/v1/rings/p/changes", {"ops": [up("z")], "expected_version": 1})
        assert pre.value.current_version == 2
        # The watching client reports a refusal by type too.
        with RingClient(srv.url, "p", token="wrong", ack=False, backoff=(0.05, 0.1)) as c:
            wait_until(lambda: "unauthorized" in (c.status().last_error or ""), 5, "the 401")
            assert c.version is None
    finally:
        srv.stop()


def test_close_is_prompt_and_ends_iterators(server: Ringd) -> None:
    api, ring = Api(server.url), unique("close")
    api.json("PUT", f"/v1/rings/{ring}", {})
    for mode in ("sse", "long_poll"):  # a long-poll in flight waits 30 s
        c = RingClient(server.url, ring, ack=False, mode=mode)
        c.ready(10)
        it = c.changes()
        time.sleep(0.2)  # into the stream read or the long-poll
        started = time.monotonic()
        c.close()
        assert time.monotonic() - started < 1
        assert list(it) == []
        with pytest.raises(ClientClosed):
            c.wait_for_version(99, 1)


# -- a server at its --max-watchers -------------------------------------------------


class Follower:
    """A `RingClient`, or an `AsyncRingClient` on an event loop of its own
    thread, behind one blocking interface, so one test body drives both."""

    def __init__(self, flavour: str, urls: list[str], ring: str, mode: str) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.client: RingClient | AsyncRingClient
        if flavour == "sync":
            self.client = RingClient(urls, ring, mode=mode, ack=False)
            return
        loop = self.loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()

        async def start() -> AsyncRingClient:
            return await AsyncRingClient(urls, ring, mode=mode, ack=False).start()

        self.client = self._run(start())

    def _run(self, coro: Any) -> Any:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def status(self) -> Any:
        return self.client.status()

    def wait_for_version(self, version: int, timeout: float) -> None:
        if isinstance(self.client, RingClient):
            self.client.wait_for_version(version, timeout)
        else:
            self._run(self.client.wait_for_version(version, timeout))

    def close(self) -> None:
        if isinstance(self.client, RingClient):
            self.client.close()
            return
        assert self.loop is not None
        self._run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)


AT_CAPACITY = (
    b'{"type":"urn:ringd:problem:at-capacity","title":"At capacity","status":503,'
    b'"detail":"this instance already serves 1 watchers, its limit (--max-watchers)"}'
)


@pytest.mark.parametrize(("flavour", "mode"), [("sync", "sse"), ("async", "long_poll")])
def test_a_refused_watch_comes_back_after_retry_after(
    tmp_path: Path, flavour: str, mode: str
) -> None:
    """ringd at `--max-watchers 1`, its slot held by a raw watch: the client
    is refused (503 at-capacity, Retry-After of 1 to 10 s), does not come
    back before 1 s, reports the refusal, and follows once the slot frees."""
    srv = Ringd(f"sqlite://{tmp_path}/ringd.db", tmp_path, args=("--max-watchers", "1"))
    api, ring = Api(srv.url), unique("full")
    raw = httpx.Client(timeout=httpx.Timeout(None, connect=5))
    follower: Follower | None = None
    try:
        api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "jump"})
        change(api, ring, up("a"))
        held = raw.send(
            raw.build_request(
                "GET", f"{srv.url}/v1/rings/{ring}/watch", headers={"accept": "text/event-stream"}
            ),
            stream=True,
        )
        assert held.status_code == 200
        wait_until(lambda: srv.metric("ringd_watchers") == 1, 10, "the held watch admitted")
        assert srv.metric("ringd_watchers_refused_total") == 0
        follower = Follower(flavour, [srv.url], ring, mode)
        # `before`: when the last /metrics that still read 0 was sent. The
        # refusal came after it, so the client, told to wait at least 1 s,
        # cannot be refused again before `before + 1 s`: a read that
        # returned before then must still see 1.
        before, deadline = time.monotonic(), time.monotonic() + 30
        while True:
            sent = time.monotonic()
            refused = srv.metric("ringd_watchers_refused_total")
            if refused:
                break
            before = sent
            assert time.monotonic() < deadline, "the client was never refused"
            time.sleep(0.01)
        assert refused == 1 or time.monotonic() >= before + 1
        time.sleep(max(0.0, before + 0.9 - time.monotonic()))
        refused = srv.metric("ringd_watchers_refused_total")
        read_by = time.monotonic()
        # Only a client that ignored Retry-After can fail this; on a machine
        # so loaded that the read took past `before + 1 s`, it proves nothing.
        assert refused == 1 or read_by >= before + 1, f"{refused} refusals within 1 s"
        st = follower.status()
        assert st.last_error is not None
        assert st.last_error.startswith("503 urn:ringd:problem:at-capacity"), st.last_error
        assert st.transport == "connecting"
        held.close()
        v = change(api, ring, up("b"))
        follower.wait_for_version(v, 30)
        assert follower.status().transport == mode
        assert api.json("GET", f"/v1/rings/{ring}")["version"] == v
    finally:
        if follower is not None:
            follower.close()
        raw.close()
        srv.stop()


@pytest.mark.parametrize(("flavour", "mode"), [("sync", "sse"), ("async", "long_poll")])
def test_a_full_server_sends_the_watch_to_the_next_one(
    tmp_path: Path, flavour: str, mode: str
) -> None:
    """A server listed first that refuses every request at capacity, with
    `Retry-After: 10`: the client follows through the next one at once,
    as for any 503, instead of waiting out the ask."""
    full_hits = []

    def at_capacity(h: Any, body: bytes) -> None:
        full_hits.append(h.path)
        reply(h, 503, AT_CAPACITY, "application/problem+json", (("retry-after", "10"),))

    full = Stub(at_capacity)
    srv = Ringd(f"sqlite://{tmp_path}/ringd.db", tmp_path)
    api, ring = Api(srv.url), unique("next")
    follower: Follower | None = None
    try:
        api.json("PUT", f"/v1/rings/{ring}", {"algorithm": "ring"})
        v = change(api, ring, up("a"))
        follower = Follower(flavour, [full.url, srv.url], ring, mode)
        follower.wait_for_version(v, 8)  # well under the 10 s asked
        assert full_hits
        assert follower.status().server == srv.url
        v = change(api, ring, up("b"))
        follower.wait_for_version(v, 8)
    finally:
        if follower is not None:
            follower.close()
        full.close()
        srv.stop()
