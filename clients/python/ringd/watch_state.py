"""The watch's logic without its I/O, shared by the blocking `RingClient`
and the asyncio `AsyncRingClient`: Server-Sent Events decoding, backoff,
verifying and applying a snapshot, long-poll answers, failure triage and
the events reported. Steps that need the network are generators: they
yield the path to GET and receive its body, so each flavour drives them
with its own HTTP (`drive_sync` here, `aio._drive` there)."""

from __future__ import annotations

import json
import os
import random
import re
import socket
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, NamedTuple, Union

from .diff import DiffSummary, summarize
from .errors import (
    ApiError,
    FingerprintMismatch,
    InvalidTable,
    NotFound,
    RingdError,
    TableRequired,
    Unreachable,
)
from .placement import Placement
from .sse import SseEvent

#: A step that GETs paths (yields them, is sent the body) and returns T.
Steps = Generator[str, bytes, Any]
#: Most missing versions a long-poll fetches one by one; a larger gap is
#: bridged by jumping to the newest, as a reset.
MAX_GAP = 64


# -- waiting between attempts -------------------------------------------------


class Backoff:
    """Doubles from `min` to `max` seconds; each wait is drawn uniformly
    from [0, step) ("full jitter"), so clients that lost the same server
    spread their returns over the whole step. (The Rust client draws from
    the step's upper half instead.)"""

    def __init__(
        self, min: float = 0.1, max: float = 10.0, rand: Callable[[], float] = random.random
    ) -> None:
        self.min, self.max, self.step = min, max, min
        self._rand = rand

    def reset(self) -> None:
        self.step = self.min

    def next_wait(self) -> float:
        step = self.step
        self.step = min(step * 2, self.max)
        return step * self._rand()

    def after_refusal(self, retry_after: float) -> float:
        """The wait after a watch or long-poll refused with 503 or 429 and a
        `Retry-After` of `retry_after` seconds: `retry_after_wait` of the
        backoff's next wait (so the backoff advances as after any failure)
        and a jitter drawn uniformly from [0, 1 s)."""
        return retry_after_wait(self.next_wait(), retry_after, self.max, self._rand())


def retry_after_wait(next_wait: float, retry_after: float, max_wait: float, jitter: float) -> float:
    """The rule every ringd client follows when a watch or long-poll attempt
    is answered 503 or 429 with a `Retry-After` in delta-seconds (the
    HTTP-date form and garbage are ignored): the next attempt waits

        max(next_wait, min(retry_after, max_wait) + jitter)

    seconds, where `next_wait` is the backoff's next wait, `max_wait` its
    maximum and `jitter` uniform in [0, 1). So a refused client comes back
    neither sooner than its backoff would nor sooner than the server asked;
    the ask is cut to the maximum, so a server cannot park a client for
    long; and the jitter spreads the clients told the same whole second
    (ringd draws it from 1 to 10 s at `--max-watchers`) over that second
    instead of bringing them back in one instant."""
    return max(next_wait, min(retry_after, max_wait) + jitter)


# -- what readers see -----------------------------------------------------------


class View(NamedTuple):
    """What the client routes on, swapped as one attribute: the version,
    its verified placement, the placement applied before it (None before a
    second version) and the snapshot as received (node records)."""

    version: int
    placement: Placement
    previous: Placement | None
    snapshot: Mapping[str, Any]


@dataclass(frozen=True)
class Handoff:
    """A key's owner now and in the version applied before (Rust `Handoff`)."""

    owner_now: str | None = None
    owner_before: str | None = None
    version: int | None = None
    version_before: int | None = None

    @property
    def moved(self) -> bool:
        """The key changed owner in the last change: a miss on `owner_now`
        may be served by `owner_before`."""
        return self.owner_before is not None and self.owner_before != self.owner_now


@dataclass
class Status:
    """`transport` is `connecting`, `sse` or `long_poll`."""

    version: int | None = None
    acked: int | None = None
    deleted: bool = False
    transport: str = "connecting"
    server: str | None = None
    last_error: str | None = None
    rejected: int = 0
    table_downloads: int = 0
    table_moves_applied: int = 0


@dataclass(frozen=True)
class Change:
    """A version verified and swapped in. `diff` is computed on first use
    (a sweep of two placements), never on the watch's path."""

    from_version: int | None
    to: int
    reset: bool
    view: View = field(repr=False)

    @cached_property
    def diff(self) -> DiffSummary | None:
        prev = self.view.previous
        return None if prev is None else summarize(prev, self.view.placement)


@dataclass(frozen=True)
class Rejected:
    """A version refused: it failed verification; the previous one is kept."""

    version: int
    error: str


@dataclass(frozen=True)
class Deleted:
    """The server says the ring was deleted; the last version is kept."""


Event = Union[Change, Rejected, Deleted]


class Failure(Exception):
    """One watch attempt ended. `unsupported`: the stream cannot get
    through this server or a proxy before it (fall back to long-polls).
    `retry_after`: the attempt was refused with 503 or 429 and this
    `Retry-After` in seconds; the next one waits `Backoff.after_refusal`."""

    def __init__(
        self,
        error: str,
        server: str | None = None,
        unsupported: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(error)
        self.server, self.unsupported, self.retry_after = server, unsupported, retry_after


def default_client_id() -> str:
    """`<host>-<pid>`, cut to the client-id rules, as the Rust client."""
    host = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname().strip())[:100]
    host = re.sub(r"^[^A-Za-z0-9]+", "", host)
    return f"{host}-{os.getpid()}" if host else f"client-{os.getpid()}"


def drive_sync(steps: Steps, fetch: Callable[[str], bytes]) -> Any:
    """Runs `steps`, answering each path it yields with `fetch`; an error
    of the fetch is thrown into the steps, which may handle it."""
    try:
        path = next(steps)
        while True:
            try:
                data = fetch(path)
            # Forwarded, not swallowed: the steps get whatever the fetch
            # raised, as `yield from` would hand it on, and decide.
            except Exception as e:  # noqa: BLE001
                path = steps.throw(e)
                continue
            path = steps.send(data)
    except StopIteration as stop:
        return stop.value


class WatchCore:
    """The state of one ring's watch. The flavour owns the I/O and calls
    these; after each it wakes waiters and delivers the events returned."""

    def __init__(self, ring: str) -> None:
        self.ring = ring
        #: The one attribute readers read: replaced whole, never mutated.
        self.view: View | None = None
        self.status = Status()
        #: The newest version refused and its stated fingerprint: watching
        #: resumes after it, since a second copy would fail the same way.
        self.rejected: tuple[int, str] | None = None

    # -- where to ask ----------------------------------------------------------

    def resume_after(self) -> int | None:
        held = self.view.version if self.view else None
        refused = self.rejected[0] if self.rejected else None
        known = [v for v in (held, refused) if v is not None]
        return max(known) if known else None

    def watch_request(self) -> tuple[str, Mapping[str, str]]:
        headers = {"accept": "text/event-stream"}
        after = self.resume_after()
        if after is not None:
            # The header EventSource sends; it takes precedence over `after`.
            headers["last-event-id"] = str(after)
        return f"/v1/rings/{self.ring}/watch", headers

    def long_poll_path(self, wait: float) -> str:
        after = self.resume_after()
        if after is None:
            return f"/v1/rings/{self.ring}/snapshot"
        return f"/v1/rings/{self.ring}/snapshot?after={after}&wait={max(1, int(wait * 1000))}ms"

    # -- what a failure means ----------------------------------------------------

    def refused(self, e: Exception, server: str | None = None) -> tuple[Failure, list[Event]]:
        events: list[Event] = []
        if isinstance(e, ApiError):
            if e.slug == "ring-not-found":
                if self.view is not None:
                    events = self.mark_deleted()
            elif e.status in (404, 405, 406, 501):
                # Missing or refused route, or a proxy's error page.
                return Failure(str(e), server, unsupported=True), events
            elif e.status in (429, 503) and e.retry_after is not None:
                # Refused for now (a 503 `at-capacity` from a server at its
                # --max-watchers), told when to come back. After a 503 the
                # other servers were already tried within the attempt
                # (`Api.request`); a 429 is not tried elsewhere.
                return Failure(str(e), server, retry_after=e.retry_after), events
        return Failure(str(e), server), events

    def connected(self, transport: str, server: str) -> None:
        self.status.transport, self.status.server = transport, server

    def disconnected(self, error: str) -> None:
        self.status.transport, self.status.server = "connecting", None
        self.status.last_error = error

    def mark_deleted(self) -> list[Event]:
        if self.status.deleted:
            return []
        self.status.deleted = True
        return [Deleted()]

    def reject(self, version: int, stated: str | None, error: str) -> list[Event]:
        if stated is not None:
            if self.rejected == (version, stated):
                return []
            if self.rejected is None or self.rejected[0] <= version:
                self.rejected = (version, stated)
        self.status.last_error = error
        self.status.rejected += 1
        return [Rejected(version, error)]

    # -- applying ----------------------------------------------------------------

    def apply(self, obj: Mapping[str, Any], reset: bool) -> Generator[str, bytes, list[Event]]:
        """Verifies the snapshot and, if it holds, routes on it from now on."""
        held = self.view
        version, stated = obj.get("version"), obj.get("fingerprint")
        if not isinstance(version, int) or not isinstance(stated, str):
            return self.reject(
                version if isinstance(version, int) else 0,
                None,
                "snapshot without version or fingerprint",
            )
        if held is not None:
            same = version == held.version and stated == held.placement.fingerprint()
            if same or (not reset and version <= held.version):
                return []
        try:
            placement, built = yield from self._verified(obj, held)
        # Whatever fails while verifying it (a malformed document can make
        # the parser raise anything), this snapshot is not routed on.
        except Exception as e:  # noqa: BLE001
            transient = isinstance(e, Unreachable) or (
                isinstance(e, ApiError) and (e.status >= 500 or not e.problem)
            )
            if transient:
                # A table download that did not get through says nothing
                # about the version: keep the one held, take the next.
                self.status.last_error = f"v{version}: table download failed: {e}"
                return []
            return self.reject(
                version, stated, f"snapshot {self.ring} v{version} refused: {type(e).__name__}: {e}"
            )
        if built == "moves":
            self.status.table_moves_applied += 1
        elif built == "download":
            self.status.table_downloads += 1
        if reset or (self.rejected is not None and self.rejected[0] <= version):
            self.rejected = None
        new = View(version, placement, held.placement if held else None, obj)
        self.view = new  # the swap: one attribute store
        self.status.version, self.status.deleted = version, False
        if self.status.acked is not None and self.status.acked > version:
            self.status.acked = None  # an ack of a deleted ring's history
        return [Change(held.version if held else None, version, reset, new)]

    def _verified(
        self, obj: Mapping[str, Any], held: View | None
    ) -> Generator[str, bytes, tuple[Placement, str]]:
        version = obj["version"]
        if obj["config"].get("algorithm") == "table":
            prev = held.placement if held and held.version + 1 == version else None
            if (
                prev is not None
                and prev.table_rows() is not None
                and obj.get("table_moves") is not None
            ):
                try:
                    return Placement.from_snapshot(obj, previous=prev), "moves"
                except (InvalidTable, FingerprintMismatch):
                    pass  # the table itself may still be good: download it
            try:
                return Placement.from_snapshot(obj), "snapshot"  # no active node
            except TableRequired:
                data = yield f"/v1/rings/{self.ring}/snapshots/{version}/table"
                return Placement.from_snapshot(obj, table_encoding=data), "download"
        return Placement.from_snapshot(obj), "snapshot"

    # -- transports ----------------------------------------------------------------

    def on_sse(self, ev: SseEvent) -> Generator[str, bytes, list[Event]]:
        if ev.event in ("snapshot", "reset"):
            try:
                obj = json.loads(ev.data)
            except ValueError as e:
                vid = int(ev.id) if ev.id and ev.id.isdigit() else 0
                return self.reject(vid, None, f"undecodable snapshot: {e}")
            return (yield from self.apply(obj, ev.event == "reset"))
        if ev.event == "deleted":
            return self.mark_deleted()
        if ev.event == "keepalive":
            return (yield from self._keepalive(ev.data))
        return []  # health, rollout and later kinds: not asked for, ignored

    def _keepalive(self, data: str) -> Generator[str, bytes, list[Event]]:
        """A keep-alive names the newest version and fingerprint. Holding
        that number with another fingerprint, or a newer number, means the
        ring was recreated while the client was away: fetch it as a reset."""
        try:
            k = json.loads(data)
            version, fp = int(k["version"]), str(k["fingerprint"])
        except (ValueError, KeyError, TypeError):
            return []
        held = self.view
        if held is None or self.rejected == (version, fp):
            return []
        if (
            version == held.version and fp != held.placement.fingerprint()
        ) or version < held.version:
            try:
                body = yield f"/v1/rings/{self.ring}/snapshot"
            except RingdError as e:  # the fetch failed: reported; the stream goes on
                self.status.last_error = str(e)
                return []
            return (yield from self.apply(json.loads(body), True))
        return []

    def on_long_poll(
        self, asked_after: int | None, status: int, reset: bool, body: bytes
    ) -> Generator[str, bytes, list[Event]]:
        """A long-poll's answer: 304, or the newest snapshot. Versions in
        between are fetched one by one so every version is reported."""
        if status == 304:
            return []
        obj = json.loads(body)
        events: list[Event] = []
        if asked_after is not None and not reset:
            if obj["version"] > asked_after + 1 + MAX_GAP:
                reset = True
            for v in range(asked_after + 1, obj["version"]) if not reset else ():
                try:
                    data = yield f"/v1/rings/{self.ring}/snapshots/{v}"
                except NotFound:  # 404, or 410 (Gone)
                    reset = True  # pruned or gone: bridge it
                    break
                events += yield from self.apply(json.loads(data), False)
        events += yield from self.apply(obj, reset)
        return events

    # -- acks ------------------------------------------------------------------------

    def ack_target(self) -> tuple[int, str] | None:
        v = self.view
        return None if v is None else (v.version, v.placement.fingerprint())

    def acked(self, target: tuple[int, str]) -> None:
        # Only while that version is still the one routed on: a late answer
        # must not mark a recreated ring as acked.
        if self.ack_target() == target:
            self.status.acked = target[0]


def owner_of(view: View | None, key: bytes | str) -> str | None:
    return None if view is None else view.placement.owner(key)


def handoff_of(view: View | None, key: bytes | str) -> Handoff:
    """Both owners from one read of the view, never a pair of two swaps."""
    if view is None:
        return Handoff()
    prev = view.previous
    return Handoff(
        view.placement.owner(key),
        prev.owner(key) if prev else None,
        view.version,
        prev.version if prev else None,
    )


def delivers(ev: Any, kind: Any, current: Any, end: object) -> bool:
    """Whether a subscription of `kind`, made while `current` was the view,
    takes `ev`: the end marker always, events of its kind, but never the
    change to the view that was already current when it subscribed (it may
    still be on its way to the subscribers). Shared by both flavours."""
    if isinstance(ev, Change) and ev.view is current:
        return False
    return ev is end or isinstance(ev, kind)
