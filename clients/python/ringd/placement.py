"""`Placement`: who owns every key of one ring version, built from a
snapshot or from a downloaded canonical encoding, and verified against the
fingerprint before it answers anything."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict, Union

from . import (
    envoy_maglev,
    envoy_ring_hash,
    haproxy,
    jump,
    ketama,
    maglev,
    nginx,
    rendezvous,
    ring,
    twemproxy,
)
from . import table as table_mod  # `table` is also a parameter of build()
from .encoding import decode_header, encode_header, fingerprint_of, header_length
from .errors import (
    FingerprintMismatch,
    InvalidEncoding,
    InvalidTable,
    PlacementError,
    TableRequired,
)
from .hashes import GENERAL, HASHES, Hash64, md5_32
from .layout import Layout
from .model import ACCEPTED_HASHES, TABLE_SIZE_LIMITS, Node, RingConfig
from .nodeset import normalize, ramped, zone_numbers
from .preference import select
from .twemproxy_hashes import TWEMPROXY_HASHES

Key = Union[bytes, str]
Snapshot = Union[Mapping[str, Any], str, bytes]


class _NodeShareBase(TypedDict):
    id: str
    units: str  # decimal: ring units reach 2^64, beyond JSON's exact range
    share: float
    expected_share: float
    ratio: float


class NodeShare(_NodeShareBase, total=False):
    replicas: int  # `table` only


class Ownership(TypedDict):
    """Spec 7, in the JSON form of the vectors and `GET …/ownership`."""

    basis: str
    total_units: str
    nodes: list[NodeShare]
    max_over_mean: float


def _key_hash_fn(algorithm: str, hash_name: str) -> Hash64:
    # Section 4: ketama always hashes keys with md5_32 (nginx's crc32 is
    # its only hash, so HASHES gives it); haproxy and twemproxy layouts make
    # their own (32-bit hashes, with or without avalanche or hash tag).
    if algorithm == "haproxy":
        return haproxy.HASH32[hash_name]
    if algorithm == "twemproxy":
        return TWEMPROXY_HASHES[hash_name]
    return md5_32 if algorithm == "ketama" else HASHES[hash_name]


class Placement:
    """An immutable placement. Build it with `from_snapshot`,
    `from_table_encoding` or `build`; keys are bytes, or str taken as UTF-8."""

    def __init__(
        self,
        algorithm: str,
        hash_name: str,
        zone_aware: bool,
        replication_factor: int,
        active: list[Node],
        layout: Layout,
        config: RingConfig | None,
    ) -> None:
        self.algorithm = algorithm
        self.hash = hash_name
        self.zone_aware = zone_aware
        self.replication_factor = replication_factor
        #: Active nodes in id order; a node's index is its position (2.3).
        self.nodes: tuple[Node, ...] = tuple(active)
        #: The full config, or None for a placement decoded from an
        #: encoding, which does not carry vnodes_per_weight, table_size (but
        #: a maglev table's length), hash keys, ring sizes or, outside `table`,
        #: partitions (a `twemproxy` body carries its hash tag: see `hash_tag`).
        self.config = config
        self.is_ramped = ramped(active)
        self.version: int | None = None
        self.ring: str | None = None
        self._layout = layout
        self._zones = zone_numbers(zone_aware, active)
        self._fingerprint: str | None = None

    # -- building ---------------------------------------------------------

    @classmethod
    def build(
        cls,
        config: RingConfig,
        nodes: Sequence[Node],
        *,
        buckets: Iterable[Any] | None = None,
        table: bytes | Sequence[Sequence[str]] | None = None,
        server_ids: Mapping[str, int] | None = None,
    ) -> Placement:
        """A placement of `config` over `nodes` (any states, any order).
        `jump` takes its persisted bucket order from `buckets` (ids or None
        per bucket, or `[id, count]` runs; the initial order without it).
        `haproxy` takes its stored server ids from `server_ids` (node id to
        HAProxy's `id`; every node numbered from 1 in id order without it).
        `table` needs `table`: the encoding's table body (bytes) or rows of
        node ids, primary first; a client never computes a table."""
        active = normalize(config, nodes)
        is_ramped = ramped(active)
        h = _key_hash_fn(config.algorithm, config.hash_name)
        layout: Layout
        if config.algorithm == "ring":
            layout = ring.build(active, h, config.vnodes_per_weight)
        elif config.algorithm == "ketama":
            layout = ketama.build(active)
        elif config.algorithm == "nginx":
            layout = nginx.build(active)
        elif config.algorithm == "twemproxy":
            layout = twemproxy.build(active, config.hash_name, config.hash_tag)
        elif config.algorithm == "envoy_ring_hash":
            layout = envoy_ring_hash.build(
                active, config.minimum_ring_size, config.maximum_ring_size
            )
        elif config.algorithm == "maglev":
            layout = maglev.build(active, h, config.table_size, is_ramped)
        elif config.algorithm == "envoy_maglev":
            layout = envoy_maglev.build(active, config.table_size)
        elif config.algorithm == "jump":
            order = jump.initial_runs(active) if buckets is None else jump.parse_order(buckets)
            layout = jump.restore(active, order, h)
        elif config.algorithm == "rendezvous":
            layout = rendezvous.build(active, h, is_ramped)
        elif config.algorithm == "haproxy":
            ids = haproxy.initial_ids(nodes) if server_ids is None else server_ids
            layout = haproxy.build(active, ids, config.hash_name, bool(config.avalanche))
        elif table is None:
            raise TableRequired("a table placement needs its stored table")
        elif isinstance(table, (bytes, bytearray, memoryview)):
            layout = table_mod.restore(
                active, config.partitions, config.replication_factor, bytes(table), h
            )
        else:
            layout = table_mod.from_rows(
                active, config.partitions, config.replication_factor, table, h
            )
        return cls(
            config.algorithm,
            config.hash_name,
            config.zone_aware,
            config.replication_factor,
            active,
            layout,
            config,
        )

    @classmethod
    def from_snapshot(
        cls,
        snapshot: Snapshot,
        *,
        table_encoding: bytes | None = None,
        previous: Placement | None = None,
    ) -> Placement:
        """The placement of a `GET /v1/rings/{ring}/snapshot` (or
        `…/snapshots/{v}`, or a watch event's) JSON, verified: raises
        `FingerprintMismatch` unless it hashes to the snapshot's fingerprint.

        A `table` snapshot carries no table. Pass `table_encoding`, the body
        of `GET …/snapshots/{v}/table`, or `previous`, the verified placement
        of version v − 1, whose table the snapshot's `table_moves` update
        (9.4); on `InvalidTable` or `FingerprintMismatch` from the moves,
        download the table. Without either, `TableRequired` is raised."""
        obj: Mapping[str, Any] = (
            json.loads(snapshot) if isinstance(snapshot, (str, bytes)) else snapshot
        )
        config = RingConfig.from_json(obj["config"])
        nodes = [Node.from_json(n) for n in obj["nodes"]]
        expected = obj["fingerprint"]
        version = obj.get("version")
        if config.algorithm != "table":
            ids = obj.get("server_ids")
            p = cls.build(
                config,
                nodes,
                buckets=obj.get("buckets"),
                server_ids=None if ids is None else ids["ids"],
            )
        elif not normalize(config, nodes):
            # No active node: every row is empty (r = 0), nothing to fetch.
            p = cls.build(config, nodes, table=[[]] * config.partitions)
        elif table_encoding is not None:
            active = normalize(config, nodes)
            start = header_length(active, config.zone_aware, ramped(active), config.algorithm)
            if len(table_encoding) < start:
                raise InvalidTable("the encoding ends before its table")
            p = cls.build(config, nodes, table=table_encoding[start:])
        elif previous is not None and obj.get("table_moves") is not None:
            p = cls._from_moves(config, nodes, previous, obj["table_moves"], version)
        else:
            raise TableRequired(
                "the snapshot carries no table: download "
                f"…/snapshots/{version}/table or apply its moves"
            )
        p._verify(expected)
        p.version = version
        p.ring = obj.get("ring")
        return p

    @classmethod
    def _from_moves(
        cls,
        config: RingConfig,
        nodes: Sequence[Node],
        previous: Placement,
        moves_b64: str,
        version: int | None,
    ) -> Placement:
        prev = previous._layout
        if not isinstance(prev, table_mod.PartitionTable):
            raise InvalidTable("the previous placement is not a table")
        if version is not None and previous.version is not None and previous.version != version - 1:
            raise InvalidTable(f"moves apply to version {version - 1}, not {previous.version}")
        try:
            moves = base64.b64decode(moves_b64, validate=True)
        except ValueError:
            raise InvalidTable("table_moves is not standard base64") from None
        active = normalize(config, nodes)
        h = _key_hash_fn(config.algorithm, config.hash_name)
        layout = table_mod.apply_moves(
            prev, active, config.partitions, config.replication_factor, moves, h
        )
        return cls(
            config.algorithm,
            config.hash_name,
            config.zone_aware,
            config.replication_factor,
            active,
            layout,
            config,
        )

    @classmethod
    def from_table_encoding(cls, data: bytes, expected_fingerprint: str) -> Placement:
        """Thin mode (9.2): a placement from the canonical encoding alone, as
        `GET …/snapshots/{v}/table` serves it for every algorithm. Its
        SHA-256 must equal `expected_fingerprint` (the snapshot's, or the
        `ringd-fingerprint` header), else `FingerprintMismatch`; an encoding
        that does not decode, or does not re-encode to the same bytes, is
        `InvalidEncoding`."""
        data = bytes(data)
        actual = fingerprint_of(data)
        if actual != expected_fingerprint:
            raise FingerprintMismatch(expected_fingerprint, actual)
        header, start = decode_header(data)
        body, active, alg = data[start:], header.nodes, header.algorithm
        if header.hash not in ACCEPTED_HASHES.get(alg, GENERAL):
            raise InvalidEncoding(f"{alg} with hash {header.hash}")
        if header.ramped and alg in ("ketama", "jump", "table", "nginx", "haproxy", "twemproxy"):
            raise InvalidEncoding(f"{alg} cannot be ramped")
        if not 1 <= header.replication_factor <= 64:
            raise InvalidEncoding(f"replication factor {header.replication_factor}")
        h = _key_hash_fn(alg, header.hash)
        ids = [n.id for n in active]
        layout: Layout
        if alg in ("ring", "ketama", "nginx"):
            circle = ring.Continuum.decode(ids, body, h, 64 if alg == "ring" else 32)
            layout = circle
            positions = [p for p, _ in circle.points]
            if alg == "nginx" and any(a == b for a, b in zip(positions, positions[1:])):
                raise InvalidEncoding("nginx keeps one of equal points (5.7)")
        elif alg in TABLE_SIZE_LIMITS:  # maglev, envoy_maglev: the same body
            layout = maglev.Maglev.decode(ids, body, h, TABLE_SIZE_LIMITS[alg])
        elif alg == "jump":
            layout = jump.Jump.decode(active, body, h)
        elif alg == "rendezvous":
            layout = rendezvous.Rendezvous.decode(active, body, header.ramped, h)
        elif alg == "twemproxy":
            layout = twemproxy.Twemproxy.decode_body(active, body, header.hash)
        elif alg == "envoy_ring_hash":
            layout = envoy_ring_hash.EnvoyRingHash.decode_body(active, body)
        elif alg == "haproxy":
            try:
                layout = haproxy.Haproxy.decode_body(active, body, header.hash)
            except PlacementError as e:
                raise InvalidEncoding(f"bad haproxy body: {e}") from None
        else:
            if len(body) < 4:
                raise InvalidEncoding("the table body ends early")
            partitions = int.from_bytes(body[:4], "little")
            try:
                # The body's own partition count; restore checks the rest.
                RingConfig(algorithm="table", partitions=partitions)
                layout = table_mod.restore(active, partitions, header.replication_factor, body, h)
            except (InvalidTable, ValueError) as e:
                raise InvalidEncoding(f"bad table body: {e}") from None
        p = cls(
            alg, header.hash, header.zone_aware, header.replication_factor, active, layout, None
        )
        # Decoding is only right if it loses nothing: the bytes must come back.
        if p.encode() != data:
            raise InvalidEncoding("the encoding is not canonical")
        p._fingerprint = actual
        return p

    def _verify(self, expected: str) -> None:
        actual = self.fingerprint()
        if actual != expected:
            raise FingerprintMismatch(expected, actual)

    # -- lookups ------------------------------------------------------------

    def key_hash(self, key: Key) -> int:
        """The key's hash in the algorithm's space (4): 32 bits for ketama."""
        return self._layout.key_hash(key.encode() if isinstance(key, str) else key)

    def owner(self, key: Key) -> str | None:
        """Id of the node owning `key`; None when no node is active."""
        return self._layout.owner(key.encode() if isinstance(key, str) else key)

    def preference_list(self, key: Key, r: int | None = None) -> list[str]:
        """Up to `r` (default: the replication factor) distinct node ids,
        owner first (6); zones first when the ring is zone-aware."""
        want = self.replication_factor if r is None else r
        h = self.key_hash(key)
        picked = select(self._layout.successors(h), want, len(self.nodes), self._zones)
        ids = self._layout.ids
        return [ids[i] for i in picked]

    # -- inspection -----------------------------------------------------------

    def ownership(self) -> Ownership:
        """Exact ownership units (7) with the derived floats computed as the
        reference computes them: each integer converted to binary64, then
        one division, so they compare equal to the server's bit for bit."""
        units, total = self._layout.units()
        if not self.nodes:
            total = 0
        weight_total = float(sum(n.scaled_weight for n in self.nodes))
        replicas = (
            self._layout.replica_counts()
            if isinstance(self._layout, table_mod.PartitionTable)
            else None
        )
        shares: list[NodeShare] = []
        for i, (n, u) in enumerate(zip(self.nodes, units)):
            share = float(u) / float(total)
            expected = float(n.scaled_weight) / weight_total
            s: NodeShare = {
                "id": n.id,
                "units": str(u),
                "share": share,
                "expected_share": expected,
                "ratio": share / expected,
            }
            if replicas is not None:
                s["replicas"] = replicas[i]
            shares.append(s)
        return {
            "basis": self._layout.basis,
            "total_units": str(total),
            "nodes": shares,
            "max_over_mean": max([0.0] + [s["ratio"] for s in shares]),
        }

    def encode(self) -> bytes:
        """The canonical encoding (9.1)."""
        return (
            encode_header(
                self.algorithm,
                self.hash,
                self.zone_aware,
                self.replication_factor,
                self.nodes,
                self.is_ramped,
            )
            + self._layout.encode_body()
        )

    def fingerprint(self) -> str:
        """SHA-256 of the canonical encoding, 64 lowercase hex digits."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint_of(self.encode())
        return self._fingerprint

    def points(self) -> list[tuple[int, str]] | None:
        """`ring`/`ketama`/`nginx`/`twemproxy`/`envoy_ring_hash`: the sorted
        point list (entries) as (position, node id), tied points in the
        algorithm's order."""
        lay = self._layout
        if not isinstance(lay, ring.Continuum) or isinstance(lay, haproxy.Haproxy):
            return None
        return [(p, lay.ids[i]) for p, i in lay.points]

    @property
    def hash_tag(self) -> str | None:
        """`twemproxy`: the hash tag keys are hashed inside, or None."""
        lay = self._layout
        return lay.tag if isinstance(lay, twemproxy.Twemproxy) else None

    def maglev_table(self) -> list[str] | None:
        """`maglev`, `envoy_maglev`: the lookup table as node ids, slot by slot."""
        lay = self._layout
        return [lay.ids[i] for i in lay.table] if isinstance(lay, maglev.Maglev) else None

    def bucket_order(self) -> list[str | None] | None:
        """`jump`: the bucket order, one id or None (a hole) per bucket."""
        lay = self._layout
        return lay.bucket_order() if isinstance(lay, jump.Jump) else None

    def server_ids(self) -> dict[str, int] | None:
        """`haproxy`: each active node's server id (HAProxy's `id`)."""
        lay = self._layout
        if not isinstance(lay, haproxy.Haproxy):
            return None
        return dict(zip(lay.ids, lay.server_ids))

    def table_rows(self) -> list[list[str]] | None:
        """`table`: every partition's node ids, primary first."""
        lay = self._layout
        return lay.rows() if isinstance(lay, table_mod.PartitionTable) else None

    def __repr__(self) -> str:
        return (
            f"Placement({self.algorithm}, {len(self.nodes)} active nodes, "
            f"version={self.version}, fingerprint={self.fingerprint()[:12]}…)"
        )
