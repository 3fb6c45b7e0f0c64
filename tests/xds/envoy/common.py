"""What the check's modules share: its failure, its JSON and owner types,
and the names Envoy, ringd and the check agree on."""

from __future__ import annotations

from typing import Any

NODE_ID = "envoy-1"  # the bootstrap's node.id: Envoy's client id in ringd
HASH_HEADER = "ringd-key"  # ringd's --xds-hash-header default, and the bootstrap's

Owners = list[str | None]
Json = dict[str, Any]


class Failure(Exception):
    """The check failed; the message says how."""
