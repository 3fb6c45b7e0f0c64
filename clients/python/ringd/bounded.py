"""Bounded-load selection for hot keys, each client computing it alone, with
the Rust client's rule (src/client/bounded.rs): a request goes to the first
node on the key's preference list whose in-flight count is below
`ceil(factor × (total in flight + 1) / active nodes)`, the average load
counting the request being placed, times the balance factor ("consistent
hashing with bounded loads", as HAProxy's `hash-balance-factor`).

The loads are the caller's own, so two clients may send a hot key to
different replicas; placement and `owner` stay identical everywhere. Use it
for requests any replica can serve, never to decide where data lives."""

from __future__ import annotations

import math
from typing import Callable

from .placement import Key, Placement

_U64_MAX = (1 << 64) - 1


class BoundedLoad:
    """A balance factor, a finite number of at least 1 (1 is perfect
    balance, at the price of moving many requests off their owner)."""

    def __init__(self, factor: float) -> None:
        if not math.isfinite(factor) or factor < 1.0:
            raise ValueError(
                f"balance factor {factor} is invalid: use a number of at least 1, e.g. 1.25"
            )
        self.factor = float(factor)
        # Scaled to millionths and rounded half away from zero (Rust's
        # `f64::round`; Python's round() goes to even), so every platform
        # and language computes the same integer bound.
        x = self.factor * 1e6
        whole = math.floor(x)
        self._scaled = whole + (1 if x - whole >= 0.5 else 0)

    def bound(self, in_flight: int, nodes: int) -> int:
        """The most requests a node may have in flight and still take one
        more: `ceil(factor × (in_flight + 1) / nodes)`, in integers."""
        if nodes == 0:
            return 0
        numerator = self._scaled * (in_flight + 1)
        denominator = 1_000_000 * nodes
        return min(-(-numerator // denominator), _U64_MAX)

    def pick(self, placement: Placement, key: Key, load: Callable[[str], int]) -> str | None:
        """The node to send a request for `key` to: the first on its
        preference list whose load (`load(node_id)`, asked once per active
        node) is below `bound`. One always is when `load` is consistent,
        since not every node can be above the average. None when no node
        is active."""
        nodes = placement.nodes
        if not nodes:
            return None
        loads = {n.id: load(n.id) for n in nodes}
        bound = self.bound(sum(loads.values()), len(nodes))
        # Growing prefixes of the list: a hot key's owner is usually under
        # the bound, and the full list costs a walk of the whole ring.
        checked, r = 0, min(len(nodes), 4)
        while True:
            order = placement.preference_list(key, r)
            for node in order[checked:]:
                if loads[node] < bound:
                    return node
            if r == len(nodes):
                return order[0] if order else None  # only if `load` was inconsistent
            checked, r = len(order), min(r * 4, len(nodes))
