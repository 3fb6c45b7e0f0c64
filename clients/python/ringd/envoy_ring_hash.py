"""`envoy_ring_hash` (spec 5.10): the ring of Envoy's `RING_HASH` load
balancer and of gRPC's `ring_hash`, entry for entry. Its EDS weights and
node checks are also `envoy_maglev`'s (5.11, in `envoy_maglev`).

Its nodes are xDS endpoints: every active node needs an address (an IP
address and a port, written as Envoy writes it back), but is placed by its
label (`hash_key`, else id), which ringd sends as the endpoint's hash key.
ringd shares 2^31 out over the active nodes as their EDS weights (by
largest remainders over `weight × ramp`); from those, each endpoint in
label byte order gets its entries as Envoy and gRPC count them in binary64,
entry `i` at `XXH64("<label>_<i>")`, and a key goes to the first entry at
or after `XXH64(key)`, wrapping."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Sequence

from .errors import PlacementError
from .hashes import xxh64_0
from .model import Node
from .ring import Continuum, decode_points

#: The sum of the EDS weights ringd gives a ring's endpoints: the one
#: total at which Envoy's division of the weights by their sum and gRPC's
#: 31-bit fixed-point fractions of them agree exactly (5.10.1).
WEIGHT_TOTAL = 1 << 31
_PORT = re.compile(r"[0-9]+\Z")


def endpoint_key(node: Node) -> bytes:
    """The bytes Envoy and gRPC hash for a node's endpoint: its label."""
    return node.label.encode()


def _ipv6_text(packed: bytes) -> str:
    """An IPv6 address as Rust (and so Envoy's spelling ringd checks
    against) writes it: RFC 5952, lowercase, the first longest run of two or
    more zero groups as `::`, and an IPv4-mapped address as
    `::ffff:a.b.c.d`. (Python's own `str` writes the mapped form only from
    3.13 on.)"""
    groups = [int.from_bytes(packed[i : i + 2], "big") for i in range(0, 16, 2)]
    if groups[:6] == [0, 0, 0, 0, 0, 0xFFFF]:
        return "::ffff:" + ".".join(str(b) for b in packed[12:])
    start, length, run = 0, 0, 0
    for i, g in enumerate(groups):
        run = run + 1 if g == 0 else 0
        if run > length:
            start, length = i - run + 1, run
    if length < 2:
        return ":".join(f"{g:x}" for g in groups)
    head = ":".join(f"{g:x}" for g in groups[:start])
    tail = ":".join(f"{g:x}" for g in groups[start + length :])
    return f"{head}::{tail}"


def check_address(address: str) -> str | None:
    """Why `address` cannot be an xDS endpoint's (5.10.4), or None: an IP
    address and a port from 1 to 65535, written as Envoy writes it back
    (`10.0.0.1:8080`, `[2001:db8::1]:8080`: no leading zeros, IPv6 in
    brackets in RFC 5952 form, no zone)."""
    host, colon, port = address.rpartition(":")
    unparsed = (
        "an xDS endpoint needs an IP address and a port, as `10.0.0.1:8080` or "
        "`[2001:db8::1]:8080` (EDS does not resolve host names)"
    )
    if not colon or not _PORT.match(port) or int(port) > 65_535:
        return unparsed
    ipv6 = len(host) > 2 and host[0] == "[" and host[-1] == "]"
    inner = host[1:-1] if ipv6 else host
    zone = "%" in inner
    text: str | None = None
    try:
        if ipv6:
            # Python reads a zone (`%eth0`) where Rust reads only a number:
            # either way it is refused below.
            text = f"[{_ipv6_text(ipaddress.IPv6Address(inner.split('%')[0]).packed)}]"
        elif not zone:
            text = str(ipaddress.IPv4Address(inner))
    except ValueError:
        text = None
    if text is None:
        return unparsed
    if int(port) == 0:
        return "the port must be from 1 to 65535"
    if zone:
        return "an xDS endpoint's address takes no IPv6 zone"
    if f"{text}:{int(port)}" != address:
        return (
            "write the address as Envoy writes it back: IPv4 without leading zeros, "
            "IPv6 in brackets in its shortest lowercase form (RFC 5952)"
        )
    return None


def endpoint_weights(active: Sequence[Node]) -> list[int]:
    """The EDS weights ringd gives the active nodes, in their order: 2^31
    shared out in proportion to `weight × ramp` by largest remainders, equal
    remainders in label byte order (5.10.1). A node whose share rounds to 0
    cannot be an endpoint: `WeightShareTooSmall`, the first in id order."""
    scaled = [n.scaled_weight for n in active]
    total = sum(scaled)
    if total == 0:
        return []
    weights = [s * WEIGHT_TOTAL // total for s in scaled]
    rest = WEIGHT_TOTAL - sum(weights)
    order = sorted(
        range(len(active)),
        key=lambda i: (-(scaled[i] * WEIGHT_TOTAL % total), endpoint_key(active[i])),
    )
    for i in order[:rest]:
        weights[i] += 1
    for n, w in zip(active, weights):
        if w == 0:
            raise PlacementError(
                "WeightShareTooSmall",
                f"{n.id} has {n.scaled_weight} of the {total} total weight (weight × ramp), "
                "less than one part in 2^31",
            )
    return weights


def entry_counts(weights: Sequence[int], minimum: int, maximum: int) -> list[int]:
    """How many entries each endpoint gets, endpoints in the order the
    proxy takes them, with their EDS weights: Envoy's ring and grpc-go's
    `newRing`, step for step in binary64 (5.10.2). CPython rounds every
    operation on its own, so `target + scale * x` is never fused."""
    total = float(sum(weights))
    normalized = [float(w) / total for w in weights]
    lightest = min(normalized, default=1.0)
    scale = min(float(math.ceil(lightest * float(minimum))) / lightest, float(maximum))
    counts: list[int] = []
    current = target = 0.0
    for x in normalized:
        target = target + scale * x
        count = 0
        while current < target:
            count += 1
            current += 1.0
        counts.append(count)
    return counts


def total_entries(active: Sequence[Node], minimum: int, maximum: int) -> int:
    """The number of entries the (checked) active nodes place."""
    return sum(entry_counts(endpoint_weights(active), minimum, maximum))


def check_nodes(every: Sequence[Node], active: Sequence[Node], algorithm: str) -> None:
    """Check 3a for an xDS mode, `envoy_ring_hash` or `envoy_maglev`
    (5.10.4, 5.11), after `MissingAddress`: every node's address, in id
    order, active or not (a node no xDS client could be given is refused
    when it is written, not when it is activated); then, among the active
    nodes, one label each (`EndpointKeyTaken`), one address each
    (`DuplicateAddress`: gRPC keys endpoints by address) and a share of
    2^31 each (`WeightShareTooSmall`)."""
    for n in every:
        if n.address is not None:
            reason = check_address(n.address)
            if reason is not None:
                raise PlacementError(
                    "AddressNotServer",
                    f"{n.id} at {n.address!r} cannot be a server for {algorithm}: {reason}",
                )
    keyed = sorted((endpoint_key(n), n.id) for n in active)
    for (key, first), (other, second) in zip(keyed, keyed[1:]):
        if key == other:
            raise PlacementError(
                "EndpointKeyTaken",
                f"{first} and {second} would both be hashed as {key.decode()!r} by Envoy and "
                "gRPC: give one a distinct hash_key",
            )
    addressed = sorted((n.address.encode(), n.id) for n in active if n.address is not None)
    for (address, first), (other, second) in zip(addressed, addressed[1:]):
        if address == other:
            raise PlacementError(
                "DuplicateAddress", f"{first} and {second} at {address.decode()!r}"
            )
    endpoint_weights(active)


class EnvoyRingHash(Continuum):
    """The ring on the 64-bit circle: entries sorted by position, equal
    positions in the order generated (label order), not index order."""

    def __init__(self, ids: Sequence[str], points: list[int]) -> None:
        """`points` are `(position << 32) | node index` in generation order:
        a stable sort by position keeps equal positions in it."""
        points.sort(key=lambda p: p >> 32)
        super().__init__(ids, points, xxh64_0, 64, presorted=True)

    @classmethod
    def decode_body(cls, active: Sequence[Node], body: bytes) -> EnvoyRingHash:
        """A body of 9.1, as `ring`'s. The order of equal positions cannot
        be checked without the labels, which the encoding does not carry:
        the fingerprint vouches for it."""
        ids = [n.id for n in active]
        return cls(ids, decode_points(ids, body, 64, ties_by_index=False))


def ring_entries(
    endpoints: Sequence[tuple[bytes, int]], minimum: int, maximum: int
) -> list[tuple[int, int]]:
    """The ring of endpoints `(hash key, EDS weight)` in the order the
    proxy takes them: entries `(XXH64("<key>_<i>"), endpoint index)` sorted
    by position, equal positions in the order generated (5.10.2)."""
    counts = entry_counts([w for _, w in endpoints], minimum, maximum)
    points: list[int] = []
    for e, ((key, _), count) in enumerate(zip(endpoints, counts)):
        prefix = key + b"_"
        points.extend(xxh64_0(prefix + str(i).encode()) << 32 | e for i in range(count))
    points.sort(key=lambda p: p >> 32)
    return [(p >> 32, p & 0xFFFFFFFF) for p in points]


def build(active: Sequence[Node], minimum: int, maximum: int) -> EnvoyRingHash:
    """The ring of the (checked) active nodes: endpoints in label byte
    order, as ringd's xDS server sends them and gRPC sorts them, with the
    weights of `endpoint_weights`."""
    weights = endpoint_weights(active)
    order = sorted(range(len(active)), key=lambda i: endpoint_key(active[i]))
    entries = ring_entries([(endpoint_key(active[i]), weights[i]) for i in order], minimum, maximum)
    # Already sorted: the layout's stable sort keeps the order of equal positions.
    return EnvoyRingHash([n.id for n in active], [p << 32 | order[e] for p, e in entries])
