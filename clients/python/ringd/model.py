"""Placement inputs: the ring config (spec 2.1) and nodes (2.2), each
checked as it is made (2.4 check 1, and each node's own fields); the checks
across a node set are in `nodeset`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import PlacementError
from .hashes import GENERAL, HASH_CODES

ALGORITHM_CODES: dict[str, int] = {
    "ring": 1,
    "ketama": 2,
    "maglev": 3,
    "jump": 4,
    "rendezvous": 5,
    "table": 6,
    "nginx": 7,
    "haproxy": 8,
    "twemproxy": 9,
    "envoy_ring_hash": 10,
    "envoy_maglev": 11,
}
# The algorithms that place a node by its `address` (2.2): only their
# encodings carry addresses (9.1).
ADDRESS_ALGORITHMS: frozenset[str] = frozenset({"nginx", "twemproxy"})
# The xDS modes (5.10, 5.11): their nodes are endpoints, sent to the proxies
# with ringd's EDS weights (5.10.1) and placed by their label.
XDS_ALGORITHMS: frozenset[str] = frozenset({"envoy_ring_hash", "envoy_maglev"})
# The algorithms whose active nodes need an `address` (2.4 check 3a): those
# that place by it, and the xDS modes, whose nodes are endpoints placed by
# their label.
NEEDS_ADDRESS: frozenset[str] = ADDRESS_ALGORITHMS | XDS_ALGORITHMS
# The largest Maglev table, and Envoy's bound on its `MAGLEV` table size.
MAX_TABLE_SIZE = 1 << 24
MAX_ENVOY_TABLE_SIZE = 5_000_011
# The algorithms that fill a Maglev table of `table_size` slots, and the
# largest size each takes (2.1).
TABLE_SIZE_LIMITS: dict[str, int] = {
    "maglev": MAX_TABLE_SIZE,
    "envoy_maglev": MAX_ENVOY_TABLE_SIZE,
}
# The hashes each algorithm accepts, its default first (2.1).
ACCEPTED_HASHES: dict[str, tuple[str, ...]] = {
    "ketama": ("md5",),
    "nginx": ("crc32",),
    "haproxy": ("sdbm", "djb2", "wt6", "crc32"),
    "twemproxy": (
        "fnv1a_64",
        "md5",
        "crc32a",
        "one_at_a_time",
        "murmur",
        "jenkins",
        "hsieh",
        "fnv1_64",
        "fnv1a_32",
        "fnv1_32",
    ),
    "envoy_ring_hash": ("xxh64",),
    "envoy_maglev": ("xxh64",),
}
STATES = ("active", "draining", "joining")
RAMP_FULL = 65_536
MAX_POINTS = 1 << 23
MAX_WEIGHT = 1_000_000
MIN_PARTITIONS, MAX_PARTITIONS, DEFAULT_PARTITIONS = 1 << 8, 1 << 20, 1 << 16
# `envoy_ring_hash`'s ring sizes (2.1): Envoy's and gRPC's minimum default,
# gRPC's cap as the maximum default, and Envoy's bound on both.
DEFAULT_MINIMUM_RING_SIZE, DEFAULT_MAXIMUM_RING_SIZE, MAX_RING_SIZE = 1024, 4096, 1 << 23

# Ids and zones: ASCII only, so `re.ASCII` keeps \d and friends out of it
# and the explicit classes say exactly what 2.2 allows.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*\Z")


def _is_int(v: object) -> bool:
    # JSON `true` is a Python bool, which is an int: refuse it as a number.
    return isinstance(v, int) and not isinstance(v, bool)


def _check_name(kind: str, s: object, limit: int) -> str:
    if not isinstance(s, str) or not s:
        raise PlacementError(
            "EmptyNodeId" if kind == "InvalidNodeId" else kind, f"{s!r} must be a non-empty string"
        )
    if len(s.encode()) > limit or not _NAME.match(s):
        raise PlacementError(
            kind, f"{s!r}: 1-{limit} bytes of [A-Za-z0-9._:-], starting with a letter or digit"
        )
    return s


def _is_control(c: str) -> bool:
    # Unicode general category Cc is exactly these two ranges.
    o = ord(c)
    return o <= 0x1F or 0x7F <= o <= 0x9F


def hash_tag_problem(tag: str) -> str | None:
    """What is wrong with a `hash_tag`, or None: two printable ASCII
    characters other than a space, a quote or a backslash (2.1), so that
    it goes into nutcracker's YAML as it is."""
    if len(tag.encode()) != 2:
        return 'must be exactly two characters, as "{}"'
    if not all("!" <= c <= "~" and c not in "\"'\\" for c in tag):
        return "must be printable ASCII other than a space, a quote or a backslash"
    return None


def is_prime(n: int) -> bool:
    """Trial division: table sizes are at most 2^24 (2.4 step 1)."""
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


@dataclass(frozen=True)
class RingConfig:
    """A ring config; `hash=None` takes the algorithm's default (2.1), and
    `avalanche=None` too (on for `haproxy`, which alone has the modifier).
    `hash_tag` is `twemproxy`'s alone: two characters, as `"{}"`, around
    the part of a key that is hashed; None hashes whole keys.
    `minimum_ring_size` and `maximum_ring_size` size an `envoy_ring_hash`
    ring (5.10); they are checked whatever the algorithm. `table_size` is
    the slot count of a `maglev` or `envoy_maglev` table, checked for those
    two only."""

    algorithm: str = "ring"
    hash: str | None = None
    vnodes_per_weight: int = 160
    table_size: int = 65_537
    replication_factor: int = 3
    zone_aware: bool = False
    partitions: int = DEFAULT_PARTITIONS
    avalanche: bool | None = None
    hash_tag: str | None = None
    minimum_ring_size: int = DEFAULT_MINIMUM_RING_SIZE
    maximum_ring_size: int = DEFAULT_MAXIMUM_RING_SIZE

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHM_CODES:
            raise PlacementError("UnknownAlgorithm", repr(self.algorithm))
        if self.hash is None:
            object.__setattr__(self, "hash", ACCEPTED_HASHES.get(self.algorithm, GENERAL)[0])
        if self.avalanche is None:
            object.__setattr__(self, "avalanche", self.algorithm == "haproxy")
        if self.hash not in HASH_CODES:
            raise PlacementError("UnknownHash", repr(self.hash))
        self.validate()

    @property
    def hash_name(self) -> str:
        assert self.hash is not None  # set in __post_init__
        return self.hash

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> RingConfig:
        """A config from its JSON form. Unknown fields are ignored, not
        refused: a snapshot's config also carries `membership`, and whatever
        else a newer server adds cannot change placement without changing
        the encoding, which the fingerprint check covers."""
        known = {f: obj[f] for f in cls.__dataclass_fields__ if f in obj}
        return cls(**known)

    def validate(self) -> None:
        """Check 1 of 2.4, in its order (a bad `hash_tag` first: the server
        refuses it as it reads the field)."""
        if self.hash_tag is not None:
            if not isinstance(self.hash_tag, str):
                raise PlacementError("InvalidConfig", "hash_tag must be a string or null")
            problem = hash_tag_problem(self.hash_tag)
            if problem is not None:
                raise PlacementError("InvalidHashTag", f"{self.hash_tag!r} {problem}")
        if self.algorithm == "ketama" and self.hash != "md5":
            raise PlacementError("HashNotSupported", "ketama only supports md5")
        accepted = ACCEPTED_HASHES.get(self.algorithm, GENERAL)
        if self.hash not in accepted:
            raise PlacementError(
                "HashNotAccepted", f"{self.algorithm} takes {accepted}, not {self.hash!r}"
            )
        if not isinstance(self.avalanche, bool):
            raise PlacementError("InvalidConfig", "avalanche must be a boolean")
        if self.avalanche and self.algorithm != "haproxy":
            raise PlacementError("AvalancheNotSupported", "avalanche applies to haproxy only")
        if self.hash_tag is not None and self.algorithm != "twemproxy":
            raise PlacementError(
                "HashTagNotSupported", f"hash_tag applies to twemproxy only, not {self.algorithm}"
            )
        v, r, p = self.vnodes_per_weight, self.replication_factor, self.partitions
        if not _is_int(v) or not 1 <= v <= 10_000:
            raise PlacementError("VnodesOutOfRange", f"{v!r} not in 1..=10000")
        if not _is_int(r) or not 1 <= r <= 64:
            raise PlacementError("ReplicationOutOfRange", f"{r!r} not in 1..=64")
        if not _is_int(p) or not MIN_PARTITIONS <= p <= MAX_PARTITIONS or p & (p - 1):
            raise PlacementError("PartitionsOutOfRange", f"{p!r}: a power of two in 2^8..=2^20")
        if not isinstance(self.zone_aware, bool):
            raise PlacementError("InvalidConfig", "zone_aware must be a boolean")
        for name in ("minimum_ring_size", "maximum_ring_size"):
            size = getattr(self, name)
            if not _is_int(size) or not 1 <= size <= MAX_RING_SIZE:
                raise PlacementError("RingSizeOutOfRange", f"{name} {size!r} not in 1..=2^23")
        lo, hi = self.minimum_ring_size, self.maximum_ring_size
        if self.algorithm == "envoy_ring_hash" and lo > hi:
            raise PlacementError(
                "RingSizesInverted", f"minimum_ring_size {lo} is above maximum_ring_size {hi}"
            )
        limit = TABLE_SIZE_LIMITS.get(self.algorithm)
        if limit is not None:
            m = self.table_size
            if not _is_int(m) or not 2 <= m <= limit:
                bound = "2^24" if limit == MAX_TABLE_SIZE else f"{limit} (Envoy's bound)"
                raise PlacementError("TableSizeOutOfRange", f"{m!r} not in 2..={bound}")
            if not is_prime(m):
                raise PlacementError("TableSizeNotPrime", str(m))


@dataclass(frozen=True)
class Node:
    """A ring member as placement sees it (2.2)."""

    id: str
    weight: int = 1
    zone: str | None = None
    hash_key: str | None = None
    state: str = "active"
    ramp: int = RAMP_FULL
    address: str | None = None
    label: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_name("InvalidNodeId", self.id, 128)
        if self.hash_key is not None:
            k = self.hash_key
            if (
                not isinstance(k, str)
                or not k
                or len(k.encode()) > 255
                or any(_is_control(c) for c in k)
            ):
                raise PlacementError("InvalidHashKey", f"{k!r}: 1-255 bytes, no control character")
        if self.zone is not None:
            _check_name("InvalidZone", self.zone, 64)
        if not _is_int(self.weight) or not 1 <= self.weight <= MAX_WEIGHT:
            raise PlacementError("WeightOutOfRange", f"{self.weight!r} not in 1..=1000000")
        if self.state not in STATES:
            raise PlacementError("InvalidState", f"{self.state!r} not one of {STATES}")
        if not _is_int(self.ramp) or not 1 <= self.ramp <= RAMP_FULL:
            raise PlacementError("RampOutOfRange", f"{self.ramp!r} not in 1..=65536")
        if self.address is not None:
            a = self.address
            if (
                not isinstance(a, str)
                or not a
                or len(a.encode()) > 255
                or any(_is_control(c) or c.isspace() for c in a)
            ):
                raise PlacementError(
                    "InvalidAddress", f"{a!r}: 1-255 bytes without spaces or control characters"
                )
        object.__setattr__(self, "label", self.hash_key if self.hash_key is not None else self.id)

    @property
    def scaled_weight(self) -> int:
        """`weight × ramp`: the weight in parts of 65,536 (2.2)."""
        return self.weight * self.ramp

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Node:
        """A node from a snapshot's `NodeView` or a vector file's record:
        absent and null fields take their defaults; `labels` and the health
        fields do not affect placement and are ignored (`address` places
        only under the algorithms that place by it, 2.2)."""

        def get(name: str, default: Any) -> Any:
            v = obj.get(name)
            return default if v is None else v

        return cls(
            id=obj.get("id", ""),  # checked in __post_init__
            weight=get("weight", 1),
            zone=obj.get("zone"),
            hash_key=obj.get("hash_key"),
            state=get("state", "active"),
            ramp=get("ramp", RAMP_FULL),
            address=obj.get("address"),
        )
