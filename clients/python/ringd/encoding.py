"""The canonical encoding's header (spec 9.1) and the fingerprint. Bodies
belong to the algorithm modules; `placement` puts the two together."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import InvalidEncoding, PlacementError
from .hashes import HASH_CODES
from .model import ADDRESS_ALGORITHMS, ALGORITHM_CODES, RAMP_FULL, Node

MAGIC = b"RINGDPL\x01"  # "RINGDPL", then format version 1
FLAG_RAMPED = 0x01
_LE32 = struct.Struct("<I")
_ALGORITHMS = {code: name for name, code in ALGORITHM_CODES.items()}
_HASHES = {code: name for name, code in HASH_CODES.items()}


def fingerprint_of(encoding: bytes) -> str:
    """SHA-256 of the encoding as 64 lowercase hex digits (9)."""
    return hashlib.sha256(encoding).hexdigest()


def encode_header(
    algorithm: str,
    hash_name: str,
    zone_aware: bool,
    replication_factor: int,
    active: Sequence[Node],
    is_ramped: bool,
) -> bytes:
    out = bytearray(MAGIC)
    out += bytes(
        [
            ALGORITHM_CODES[algorithm],
            HASH_CODES[hash_name],
            int(zone_aware),
            FLAG_RAMPED if is_ramped else 0,
        ]
    )
    out += _LE32.pack(replication_factor) + _LE32.pack(len(active))
    for n in active:
        node_id = n.id.encode()
        # A zone is written only when it can affect placement (zone_aware).
        zone = n.zone.encode() if zone_aware and n.zone is not None else b""
        out += bytes([len(node_id)]) + node_id + bytes([len(zone)]) + zone
        out += _LE32.pack(n.weight)
        if is_ramped:
            out += _LE32.pack(n.ramp)
        if algorithm in ADDRESS_ALGORITHMS:
            address = (n.address or "").encode()
            out += bytes([len(address)]) + address
    return bytes(out)


def header_length(active: Sequence[Node], zone_aware: bool, is_ramped: bool, algorithm: str) -> int:
    """Bytes before the body: 20, plus per node 1 + id + 1 + zone + 4, 4
    more per node for its ramp when the set is ramped, and 1 + address
    under an algorithm that places by address (9.1)."""
    per_node = 6 + (4 if is_ramped else 0)
    by_address = algorithm in ADDRESS_ALGORITHMS
    return 20 + sum(
        per_node
        + len(n.id.encode())
        + (len(n.zone.encode()) if zone_aware and n.zone is not None else 0)
        + (1 + len((n.address or "").encode()) if by_address else 0)
        for n in active
    )


@dataclass(frozen=True)
class Header:
    algorithm: str
    hash: str
    zone_aware: bool
    ramped: bool
    replication_factor: int
    nodes: list[Node]


def decode_header(data: bytes) -> tuple[Header, int]:
    """Parse the header (9.2): returns it and the offset of the body.
    Refuses another magic or version, unknown codes, flag bits other than
    bit 0, and node records that break 2.2 or the id order."""
    if data[:8] != MAGIC:
        raise InvalidEncoding("not a ringd placement encoding of format version 1")
    if len(data) < 20:
        raise InvalidEncoding("the header ends early")
    algorithm = _ALGORITHMS.get(data[8])
    hash_name = _HASHES.get(data[9])
    if algorithm is None or hash_name is None:
        raise InvalidEncoding(f"unknown algorithm code {data[8]} or hash code {data[9]}")
    if data[10] > 1 or data[11] & ~FLAG_RAMPED:
        raise InvalidEncoding(f"zone_aware byte {data[10]} or flags {data[11]:#04x} not known")
    zone_aware, ramped = data[10] == 1, bool(data[11] & FLAG_RAMPED)
    (rf,) = _LE32.unpack_from(data, 12)
    (count,) = _LE32.unpack_from(data, 16)
    pos = 20

    def text(encoding: str = "ascii") -> str:
        # A length byte, then that many bytes: ASCII for ids and zones,
        # UTF-8 for addresses.
        nonlocal pos
        end = pos + 1 + data[pos]
        if end > len(data):
            raise IndexError("a name runs past the end")
        s = data[pos + 1 : end].decode(encoding)
        pos = end
        return s

    nodes: list[Node] = []
    try:
        for _ in range(count):
            node_id = text()
            zone = text() or None
            (weight,) = _LE32.unpack_from(data, pos)
            pos += 4
            ramp = RAMP_FULL
            if ramped:
                (ramp,) = _LE32.unpack_from(data, pos)
                pos += 4
            address = text("utf-8") if algorithm in ADDRESS_ALGORITHMS else None
            nodes.append(Node(node_id, weight=weight, zone=zone, ramp=ramp, address=address))
    except (IndexError, struct.error, UnicodeDecodeError) as e:
        raise InvalidEncoding(f"a node record is cut short or not ASCII ({e})") from None
    except PlacementError as e:
        raise InvalidEncoding(f"a node record is invalid: {e}") from None
    if any(a.id >= b.id for a, b in zip(nodes, nodes[1:])):
        raise InvalidEncoding("node records are not in strictly ascending id order")
    if zone_aware and any(n.zone is None for n in nodes):
        raise InvalidEncoding("zone_aware, but a node record has no zone")
    if not zone_aware and any(n.zone is not None for n in nodes):
        raise InvalidEncoding("a zone is written but zone_aware is 0")
    if ramped != any(n.ramp != RAMP_FULL for n in nodes):
        raise InvalidEncoding("the ramped flag does not match the node records' ramps")
    return Header(algorithm, hash_name, zone_aware, ramped, rf, nodes), pos
