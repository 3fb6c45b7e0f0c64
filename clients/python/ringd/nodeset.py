"""Validating a node set and deriving what placement needs from it: the
normalization and the checks across nodes every build starts with (spec
2.3; 2.4 checks 2 to 6)."""

from __future__ import annotations

from collections.abc import Sequence

from . import envoy_ring_hash, twemproxy
from .errors import PlacementError
from .ketama import digest_count
from .model import (
    MAX_POINTS,
    NEEDS_ADDRESS,
    RAMP_FULL,
    TABLE_SIZE_LIMITS,
    XDS_ALGORITHMS,
    Node,
    RingConfig,
)
from .nginx import POINTS_PER_WEIGHT, check_address


def ramped(active: Sequence[Node]) -> bool:
    """Whether some active node is below full ramp (2.2)."""
    return any(n.ramp != RAMP_FULL for n in active)


def zone_numbers(zone_aware: bool, active: Sequence[Node]) -> tuple[list[int], int] | None:
    """Each active node's zone number and the zone count (2.3 step 4), or
    None without zone awareness. Sorting str compares code points, which for
    ASCII names is byte order."""
    if not zone_aware:
        return None
    names = sorted({n.zone for n in active if n.zone is not None})
    number = {z: i for i, z in enumerate(names)}
    return [number[n.zone] for n in active if n.zone is not None], len(names)


def _ketama_digests(active: Sequence[Node]) -> list[int]:
    total = sum(n.weight for n in active)
    return [digest_count(n.weight, total, len(active)) for n in active]


def normalize(config: RingConfig, nodes: Sequence[Node]) -> list[Node]:
    """Checks 2 to 6 of 2.4 in their order (3a included); returns the active nodes sorted
    by id in byte order (ids are ASCII, so str order is byte order).
    Check 7 belongs to the server computing a table, which a client never does."""
    every = sorted(nodes, key=lambda n: n.id)
    for a, b in zip(every, every[1:]):
        if a.id == b.id:
            raise PlacementError("DuplicateNodeId", a.id)
    active = [n for n in every if n.state == "active"]
    if config.zone_aware:
        for n in active:
            if n.zone is None:
                raise PlacementError("MissingZone", n.id)
    if config.algorithm in NEEDS_ADDRESS:
        for n in active:
            if n.address is None:
                raise PlacementError("MissingAddress", f"{n.id} under {config.algorithm}")
    if config.algorithm == "nginx":
        seen: dict[str, list[str]] = {}
        for n in active:
            assert n.address is not None  # just checked
            reason = check_address(n.address)
            if reason is not None:
                raise PlacementError("AddressNotServer", f"{n.id} at {n.address!r}: {reason}")
            seen.setdefault(n.address, []).append(n.id)
        for address, ids in sorted(seen.items()):
            if len(ids) > 1:
                raise PlacementError("DuplicateAddress", f"{ids[0]} and {ids[1]} at {address!r}")
    if config.algorithm == "twemproxy":
        # Every node's name is checked, in id order, not only the active
        # ones': a node nutcracker could not be given is refused when it is
        # written, not when it is activated.
        for n in every:
            twemproxy.server_name(n)
        twemproxy.names(active)
    if config.algorithm in XDS_ALGORITHMS:
        # envoy_ring_hash and envoy_maglev: the same endpoints, checked alike.
        envoy_ring_hash.check_nodes(every, active, config.algorithm)
    if config.algorithm in ("ketama", "jump", "table", "nginx", "haproxy", "twemproxy"):
        for n in active:
            if n.ramp != RAMP_FULL:
                raise PlacementError(
                    "RampNotSupported", f"{n.id} at ramp {n.ramp} under {config.algorithm}"
                )
    if config.algorithm == "table":
        cells = config.partitions * min(config.replication_factor, len(active))
        if cells > MAX_POINTS:
            raise PlacementError("TableTooLarge", f"{cells} cells > {MAX_POINTS}")
    if config.algorithm == "haproxy":
        for n in active:
            if n.weight > 256:
                raise PlacementError(
                    "WeightTooHighForProxy", f"{n.id} has weight {n.weight}; haproxy takes 1..=256"
                )
    points = 0
    if config.algorithm == "haproxy":
        points = 16 * sum(n.weight for n in active)
    if config.algorithm == "ring":
        # Full points, whatever the ramp (2.4 step 5).
        points = config.vnodes_per_weight * sum(n.weight for n in active)
    elif config.algorithm == "ketama":
        points = 4 * sum(_ketama_digests(active))
    elif config.algorithm == "jump":
        points = sum(n.weight for n in active)
    elif config.algorithm == "nginx":
        points = POINTS_PER_WEIGHT * sum(n.weight for n in active)
    elif config.algorithm == "twemproxy":
        points = sum(twemproxy.point_counts(active))
    elif config.algorithm == "envoy_ring_hash":
        points = envoy_ring_hash.total_entries(
            active, config.minimum_ring_size, config.maximum_ring_size
        )
    if points > MAX_POINTS:
        raise PlacementError("TooManyPoints", f"{points} > {MAX_POINTS}")
    if config.algorithm in TABLE_SIZE_LIMITS and config.table_size < len(active):
        raise PlacementError(
            "TableSizeOutOfRange", f"table_size {config.table_size} < {len(active)} active nodes"
        )
    return active
