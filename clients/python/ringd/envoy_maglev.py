"""`envoy_maglev` (spec 5.11): the table of Envoy's `MAGLEV` load balancer,
slot for slot.

Its nodes are xDS endpoints, checked as `envoy_ring_hash`'s (an IP address
and a port each, placed by its label) and given the same EDS weights: 2^31
shared out by largest remainders over `weight × ramp` (5.10.1). Envoy
divides those by their sum, 2^31, so every weight, product and running
target it compares in binary64 is exact, and its turn test is `maglev`'s
integer one on the EDS weights: the table is `maglev`'s fill (5.3) with
them as the weights. A key goes to `table[XXH64(key) mod M]`."""

from __future__ import annotations

from collections.abc import Sequence

from .envoy_ring_hash import endpoint_weights
from .hashes import xxh64_0
from .maglev import Maglev, fill
from .model import Node


def build(active: Sequence[Node], table_size: int) -> Maglev:
    """The table of the (checked) active nodes, as node indices: labels in
    byte order, permutations from XXH64 with seeds 0 and 1, each node
    taking turns by its EDS weight."""
    table = fill([n.label for n in active], endpoint_weights(active), table_size)
    return Maglev([n.id for n in active], table, xxh64_0)
