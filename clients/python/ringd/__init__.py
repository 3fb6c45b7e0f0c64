"""ringd's Python client: places every key exactly as the server and every
other client holding the same ring version (docs/placement-spec.md), and
follows a ring live (`RingClient`, `ringd.aio.AsyncRingClient`)."""

from .bounded import BoundedLoad
from .client import RingClient, Subscription
from .diff import DiffSummary, NodeMovement
from .errors import (
    ApiError,
    AuthError,
    ClientClosed,
    Conflict,
    FingerprintMismatch,
    Forbidden,
    Gone,
    InvalidEncoding,
    InvalidRequest,
    InvalidTable,
    NotFound,
    PlacementError,
    PreconditionFailed,
    RingdError,
    ServerError,
    TableRequired,
    Unauthorized,
    Unprocessable,
    Unreachable,
)
from .http import Api, AsyncApi
from .model import Node, RingConfig
from .placement import Key, NodeShare, Ownership, Placement
from .watch_state import Change, Deleted, Event, Handoff, Rejected, Status, View

__version__ = "0.1.0"

__all__ = [
    "Api",
    "ApiError",
    "AsyncApi",
    "AuthError",
    "BoundedLoad",
    "Change",
    "ClientClosed",
    "Conflict",
    "Deleted",
    "DiffSummary",
    "Event",
    "FingerprintMismatch",
    "Forbidden",
    "Gone",
    "Handoff",
    "InvalidEncoding",
    "InvalidRequest",
    "InvalidTable",
    "Key",
    "Node",
    "NodeMovement",
    "NodeShare",
    "NotFound",
    "Ownership",
    "Placement",
    "PlacementError",
    "PreconditionFailed",
    "Rejected",
    "RingClient",
    "RingConfig",
    "RingdError",
    "ServerError",
    "Status",
    "Subscription",
    "TableRequired",
    "Unauthorized",
    "Unprocessable",
    "Unreachable",
    "View",
]
