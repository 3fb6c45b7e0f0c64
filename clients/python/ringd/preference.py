"""Preference lists (spec 6.2): the first distinct nodes of a successor
order, zones first when zone awareness is on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def select(
    order: Iterable[int], r: int, node_count: int, zones: tuple[Sequence[int], int] | None
) -> list[int]:
    """Up to `min(r, node_count)` distinct node indices from `order`.

    With `zones` (zone number per node, zone count), the first
    `S = min(R', zone_count)` entries are the first nodes that each bring a
    new zone and the rest the earliest nodes not yet taken, so the result
    need not be in successor order. A node seen again is skipped, or
    dropped as it was the first time, which is why walking runs instead of
    buckets (jump) gives the same list."""
    want = min(r, node_count)
    picked: list[int] = []
    if want <= 0:
        return picked
    if zones is None:
        seen = set()
        for n in order:
            if n not in seen:
                seen.add(n)
                picked.append(n)
                if len(picked) == want:
                    break
        return picked
    zone_of, zone_count = zones
    spread = min(want, zone_count)
    used = set()
    rest: list[int] = []
    for n in order:
        if n in picked or n in rest:
            continue
        z = zone_of[n]
        if len(picked) < spread and z not in used:
            used.add(z)
            picked.append(n)
        elif len(rest) < want - spread:
            rest.append(n)
        if len(picked) == spread and len(rest) == want - spread:
            break
    return picked + rest
