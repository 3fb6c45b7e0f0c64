"""ringd's Python client: places every key exactly as the server and every
other client holding the same ring version (docs/placement-spec.md)."""

from .errors import (FingerprintMismatch, InvalidEncoding, InvalidTable, PlacementError,
                     TableRequired)
from .model import Node, RingConfig
from .placement import Key, NodeShare, Ownership, Placement

__version__ = "0.1.0"

__all__ = [
    "FingerprintMismatch", "InvalidEncoding", "InvalidTable", "Key", "Node", "NodeShare",
    "Ownership", "Placement", "PlacementError", "RingConfig", "TableRequired",
]
