"""Typed errors. `PlacementError.kind` names the Rust `PlacementError`
variant the server would report for the same input (spec 2.4), so a
refusal can be matched across languages; messages are informative only.
Two kinds have no variant because Rust refuses them while parsing JSON:
`InvalidState` (a state other than active, draining, joining) and
`InvalidConfig` (a `zone_aware` or `avalanche` that is not a boolean, or a
`hash_tag` that is not a string)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any


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


# -- the server's refusals ----------------------------------------------------


class RingdError(Exception):
    """Base of everything the watching client and the HTTP helper raise
    besides placement refusals."""


class Unreachable(RingdError):
    """No server answered (every URL was tried)."""


class ClientClosed(RingdError):
    """The client was closed while a call waited on it."""


class ApiError(RingdError):
    """ringd refused a request. With an `application/problem+json` body
    (RFC 9457) `type`, `title`, `detail` and `field` are the server's; a
    response without one (a proxy's error page) has `type` "about:blank"
    and `problem` False. `body` is the whole problem document.
    `retry_after` is the answer's `Retry-After` in seconds when it had one
    in delta-seconds (`parse_retry_after`), else None: ringd sends one with
    a watch or long-poll refused at its `--max-watchers` (503
    `at-capacity`, 1 to 10 s drawn at random), and the watching clients
    honour it (`ringd.watch_state.retry_after_wait`)."""

    def __init__(
        self,
        status: int,
        type: str,
        title: str,
        detail: str,
        field: str | None = None,
        body: Mapping[str, Any] | None = None,
        url: str | None = None,
        problem: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {type}: {detail}" + (f" (field `{field}`)" if field else ""))
        self.status = status
        self.type = type
        self.title = title
        self.detail = detail
        self.field = field
        self.body: Mapping[str, Any] = body or {}
        self.url = url
        self.problem = problem
        self.retry_after = retry_after

    @property
    def slug(self) -> str:
        """The last part of `type`, e.g. `ring-not-found`."""
        return self.type.rsplit(":", 1)[-1]

    @property
    def reason(self) -> str | None:
        """The machine-readable `reason` of a 409 or 422, if any."""
        r = self.body.get("reason")
        return r if isinstance(r, str) else None


class InvalidRequest(ApiError):
    """400: the request itself is wrong (`field` names the input)."""


class Unprocessable(InvalidRequest):
    """422: well-formed but not satisfiable (`reason` says why)."""


class AuthError(ApiError):
    """401 or 403: a token is missing, wrong or not allowed to do this."""


class Unauthorized(AuthError):
    """401: no token, or a wrong one."""


class Forbidden(AuthError):
    """403: the read token was used for a mutation."""


class NotFound(ApiError):
    """404: unknown ring, node, route or version; 410 (`Gone`) is one too."""


class Gone(NotFound):
    """410: a version that existed but has been pruned."""


class Conflict(ApiError):
    """409: the request conflicts with the ring's state."""


class PreconditionFailed(Conflict):
    """412: the ring is not at the version named; `current_version` is."""

    @property
    def current_version(self) -> int | None:
        v = self.body.get("current_version")
        return v if isinstance(v, int) else None


class ServerError(ApiError):
    """5xx: the store is unavailable, or the server failed."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    412: PreconditionFailed,
    422: Unprocessable,
}


#: Retry-After in delta-seconds (RFC 9110 section 10.2.3): ASCII digits only.
_DELTA_SECONDS = re.compile(r"[0-9]+\Z")
#: The longest Retry-After read, 2^64 − 1 s, as the Go client's; more is
#: garbage rather than a wait (any wait is cut to the backoff's maximum).
_MAX_RETRY_AFTER = (1 << 64) - 1


def parse_retry_after(value: str | None) -> float | None:
    """A `Retry-After` header in delta-seconds ("7", spaces and tabs around
    it allowed) as seconds; None for no header, the HTTP-date form, a sign,
    a fraction, a unit, or anything else (as the Go client reads it)."""
    if value is None:
        return None
    v = value.strip(" \t")
    if not _DELTA_SECONDS.match(v):
        return None
    # Counted before int(): thousands of digits are slow to convert (and
    # refused past 4,300 on recent Pythons).
    digits = v.lstrip("0") or "0"
    if len(digits) > 20:
        return None
    secs = int(digits)
    return float(secs) if secs <= _MAX_RETRY_AFTER else None


def api_error(
    status: int,
    content_type: str,
    content: bytes,
    url: str,
    reason_phrase: str = "",
    retry_after: str | None = None,
) -> ApiError:
    """The typed exception for an error response; `retry_after` is its
    `Retry-After` header, if any (read by `parse_retry_after`)."""
    wait = parse_retry_after(retry_after)
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    body: Any = None
    if "json" in content_type:
        try:
            body = json.loads(content)
        except ValueError:
            body = None
    if isinstance(body, dict) and isinstance(body.get("type"), str):
        field = body.get("field")
        return cls(
            status,
            body["type"],
            str(body.get("title", "")),
            str(body.get("detail", "")),
            field if isinstance(field, str) else None,
            body,
            url,
            retry_after=wait,
        )
    text = content[:200].decode("utf-8", "replace")
    return cls(
        status,
        "about:blank",
        reason_phrase,
        f"{url} answered {status}: {text}",
        None,
        None,
        url,
        problem=False,
        retry_after=wait,
    )
