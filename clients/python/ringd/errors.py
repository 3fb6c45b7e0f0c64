"""Typed errors. `PlacementError.kind` names the Rust `PlacementError`
variant the server would report for the same input (spec 2.4), so a
refusal can be matched across languages; messages are informative only.
Two kinds have no variant because Rust refuses them while parsing JSON:
`InvalidState` (a state other than active, draining, joining) and
`InvalidConfig` (a `zone_aware` that is not a boolean)."""

from __future__ import annotations


class PlacementError(ValueError):
    """A config, node set, layout or encoding the placement core refuses."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class InvalidEncoding(PlacementError):
    """A canonical encoding (spec 9) that does not parse or is not canonical."""

    def __init__(self, message: str) -> None:
        super().__init__("InvalidEncoding", message)


class InvalidTable(PlacementError):
    """A `table` body or a version's moves that do not fit (spec 5.6.3, 9.4)."""

    def __init__(self, message: str) -> None:
        super().__init__("InvalidTable", message)


class TableRequired(InvalidTable):
    """A `table` snapshot carries no table: the caller must download
    `GET …/snapshots/{v}/table` (or hold version v − 1 and its moves)."""


class FingerprintMismatch(PlacementError):
    """The placement rebuilt here does not hash to the advertised
    fingerprint: never route on it."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(
            "FingerprintMismatch",
            f"expected fingerprint {expected}, computed {actual}",
        )
        self.expected = expected
        self.actual = actual
