"""`RingClient`: a verified, always-current copy of one ring's placement,
followed by a background daemon thread (the asyncio flavour is
`ringd.aio.AsyncRingClient`). Lookups read one attribute and never touch
the network; see README.md and docs/client-library.md."""

from __future__ import annotations

import contextlib
import logging
import queue
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, Callable, Generic, TypeVar

import httpx

from .errors import ApiError, ClientClosed, RingdError
from .http import CLOSE, Api, Endpoints, Urls
from .placement import Key, Placement
from .sse import SseDecoder
from .watch_state import (
    Backoff,
    Change,
    Event,
    Failure,
    Handoff,
    Status,
    View,
    WatchCore,
    default_client_id,
    delivers,
    drive_sync,
    handoff_of,
    owner_of,
)

log = logging.getLogger("ringd.client")
E = TypeVar("E")
MODES = ("auto", "sse", "long_poll")
_CLIENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")


class Settings:
    """Checked settings shared by both flavours (the Rust builder's)."""

    def __init__(
        self,
        urls: Urls,
        ring: str,
        token: str | None,
        client_id: str | None,
        ack: bool,
        mode: str,
        long_poll_wait: float,
        idle_timeout: float,
        sse_retry: float,
        backoff: Sequence[float],
        ack_interval: float,
        request_timeout: float,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: use one of {', '.join(MODES)}")
        if not 0.001 <= long_poll_wait <= 300:
            raise ValueError("long_poll_wait must be 1 ms to 5 minutes")
        cid = client_id if client_id is not None else default_client_id()
        if not _CLIENT_ID.match(cid):
            raise ValueError(
                f"client id {cid!r}: 1-128 characters of A-Z a-z 0-9 . _ - :, "
                "starting with a letter or digit"
            )
        self.endpoints = Endpoints(urls, token)
        self.ring, self.client_id, self.ack, self.mode = ring, cid, ack, mode
        self.long_poll_wait, self.idle_timeout, self.sse_retry = (
            long_poll_wait,
            idle_timeout,
            sse_retry,
        )
        self.backoff = (float(backoff[0]), float(backoff[1]))
        self.ack_interval, self.request_timeout = ack_interval, request_timeout
        self.ack_path = f"/v1/rings/{ring}/clients/{cid}/ack"


class Reader:
    """The lookups both flavours answer from the current view, and the
    little else they share."""

    _core: WatchCore
    _backoff: Backoff
    _on_change: Callable[[Change], None] | None
    _on_event: Callable[[Event], None] | None

    @property
    def view(self) -> View | None:
        """The current (version, placement, previous placement, snapshot)."""
        return self._core.view

    @property
    def version(self) -> int | None:
        v = self._core.view
        return None if v is None else v.version

    @property
    def placement(self) -> Placement | None:
        v = self._core.view
        return None if v is None else v.placement

    def owner(self, key: Key) -> str | None:
        """The node owning `key` (bytes, or str as UTF-8); None before the
        first version or when no node is active."""
        return owner_of(self._core.view, key)

    def preference_list(self, key: Key, r: int | None = None) -> list[str]:
        v = self._core.view
        return [] if v is None else v.placement.preference_list(key, r)

    def handoff(self, key: Key) -> Handoff:
        """The owner now and in the version applied before, from one read."""
        return handoff_of(self._core.view, key)

    def status(self) -> Status:
        s = self._core.status
        return Status(**vars(s))

    def _wait_after(self, retry_after: float | None) -> float:
        """The wait before the next watch attempt after a failed one: the
        backoff's next wait or, when the attempt was refused with 503 or 429
        and a `Retry-After` (`Failure.retry_after`), `retry_after_wait` of
        it: at least what the server asked, cut to the backoff's maximum,
        plus a jitter in [0, 1 s). The backoff advances either way."""
        if retry_after is None:
            return self._backoff.next_wait()
        return self._backoff.after_refusal(retry_after)

    def _callbacks(self, events: list[Event]) -> None:
        for ev in events:
            for cb, want in ((self._on_event, object), (self._on_change, Change)):
                if cb is not None and isinstance(ev, want):
                    try:
                        cb(ev)  # type: ignore[arg-type]
                    except Exception:  # the application's bug must not stop the watch
                        log.exception("ringd: %s callback failed", self._core.ring)


class Subscription(Generic[E]):
    """An iterator over the events of one kind from its creation on; it
    ends when the client closes. `get(timeout)` raises TimeoutError."""

    _END = object()

    def __init__(self, owner: RingClient, kind: type[Any]) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._owner, self.kind = owner, kind
        # The view current now may still be on its way to the subscribers
        # (swapped, not yet delivered): it is not a change "from now on".
        self._current = owner._core.view
        owner._subs.append(self)

    def put(self, ev: Any) -> None:
        if delivers(ev, self.kind, self._current, self._END):
            self._queue.put(ev)

    def get(self, timeout: float | None = None) -> E:
        try:
            ev = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no event within {timeout} s") from None
        if ev is self._END:
            self._queue.put(ev)
            raise ClientClosed("the client is closed")
        return ev  # type: ignore[no-any-return]

    def __iter__(self) -> Subscription[E]:
        return self

    def __next__(self) -> E:
        try:
            return self.get()
        except ClientClosed:
            raise StopIteration from None

    def close(self) -> None:
        if self in self._owner._subs:
            self._owner._subs.remove(self)


class RingClient(Reader):
    """Follows `ring` on the servers `urls` in a daemon thread: SSE resumed by
    `Last-Event-ID`, long-polls when streams fail (`mode="auto"`) or when
    asked (`"long_poll"`), failover between URLs with backoff (after a 503
    or 429 with `Retry-After`, at least about what it asks:
    `ringd.watch_state.retry_after_wait`). Every
    snapshot is verified before use and each applied version acked under
    `client_id` (default `<hostname>-<pid>`). Use as a context manager or
    call `close()`."""

    def __init__(
        self,
        urls: Urls,
        ring: str,
        *,
        token: str | None = None,
        client_id: str | None = None,
        ack: bool = True,
        mode: str = "auto",
        on_change: Callable[[Change], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        long_poll_wait: float = 30.0,
        idle_timeout: float = 60.0,
        sse_retry: float = 300.0,
        backoff: Sequence[float] = (0.1, 10.0),
        ack_interval: float = 60.0,
        request_timeout: float = 10.0,
    ) -> None:
        self.settings = s = Settings(
            urls,
            ring,
            token,
            client_id,
            ack,
            mode,
            long_poll_wait,
            idle_timeout,
            sse_retry,
            backoff,
            ack_interval,
            request_timeout,
        )
        self.ring, self.client_id = ring, s.client_id
        self._core = WatchCore(ring)
        self._on_change, self._on_event = on_change, on_event
        self._api = Api(s.endpoints.urls, endpoints=s.endpoints, timeout=request_timeout)
        self._backoff = Backoff(*s.backoff)
        self._cond = threading.Condition()
        self._closed = threading.Event()
        self._ack_wake = threading.Event()
        self._subs: list[Subscription[Any]] = []
        self._stream_resp: httpx.Response | None = None
        self._threads = [
            threading.Thread(target=self._run, daemon=True, name=f"ringd-watch-{ring}")
        ]
        if ack:
            self._ack_api = Api(s.endpoints.urls, endpoints=s.endpoints, timeout=request_timeout)
            self._threads.append(
                threading.Thread(target=self._ack_loop, daemon=True, name=f"ringd-ack-{ring}")
            )
        for t in self._threads:
            t.start()

    # -- waiting and events -------------------------------------------------------

    def ready(self, timeout: float = 10.0) -> View:
        """Waits for the first verified version."""
        return self.wait_for_version(1, timeout)

    def wait_for_version(self, version: int, timeout: float = 10.0) -> View:
        """Waits until the client routes on `version` or newer; TimeoutError."""
        self._wait(
            lambda: self._core.view is not None and self._core.view.version >= version,
            timeout,
            f"version {version}",
        )
        assert self._core.view is not None
        return self._core.view

    def wait_for_ack(self, version: int, timeout: float = 10.0) -> None:
        """Waits until the server has recorded an ack of `version` or newer."""
        self._wait(lambda: (self._core.status.acked or 0) >= version, timeout, f"ack {version}")

    def _wait(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done():
                left = deadline - time.monotonic()
                if self._closed.is_set():
                    raise ClientClosed("the client is closed")
                if left <= 0:
                    raise TimeoutError(
                        f"{what} not reached within {timeout} s; "
                        f"last error: {self._core.status.last_error}"
                    )
                self._cond.wait(left)

    def changes(self) -> Subscription[Change]:
        """Every version applied from now on, each with its `diff`."""
        return Subscription(self, Change)

    def events(self) -> Subscription[Event]:
        """Every `Change`, `Rejected` and `Deleted` from now on."""
        return Subscription(self, object)

    def _deliver(self, events: list[Event]) -> None:
        if self._closed.is_set():
            return  # a read that returned after close(): nobody listens now
        with self._cond:
            self._cond.notify_all()
        if any(isinstance(e, Change) for e in events):
            self._ack_wake.set()
        self._callbacks(events)
        for ev in events:
            for sub in list(self._subs):
                sub.put(ev)

    # -- the watch ---------------------------------------------------------------------

    def _run(self) -> None:
        mode = self.settings.mode
        use_stream, again_at = mode != "long_poll", None
        while not self._closed.is_set():
            if again_at is not None and time.monotonic() >= again_at:
                use_stream, again_at = True, None
            try:
                self._stream() if use_stream else self._long_poll()
                continue
            except Failure as f:
                if self._closed.is_set():
                    return
                if f.unsupported and use_stream and mode == "auto":
                    log.info("ringd: %s: watch stream unusable (%s); long-polling", self.ring, f)
                    use_stream, again_at = False, time.monotonic() + self.settings.sse_retry
                    self._core.status.last_error = str(f)
                    continue
                server, error, retry_after = f.server, str(f), f.retry_after
            # The watch thread must outlive any failure: a surprise is
            # recorded as the last error and retried after a backoff.
            except Exception as e:  # noqa: BLE001
                if self._closed.is_set():
                    return
                server, error, retry_after = None, f"{type(e).__name__}: {e}", None
            if server:
                self.settings.endpoints.demote(server)
            self._core.disconnected(error)
            self._deliver([])
            self._closed.wait(self._wait_after(retry_after))

    def _fetch(self, path: str) -> bytes:
        return self._api.get_bytes(path)

    def _open(self, path: str, **kw: Any) -> tuple[httpx.Response, str]:
        try:
            return self._api.request("GET", path, **kw)
        except (RingdError, httpx.HTTPError) as e:  # what a request raises
            failure, events = self._core.refused(e)
            self._deliver(events)
            raise failure from e

    def _stream(self) -> None:
        path, headers = self._core.watch_request()
        idle = self.settings.idle_timeout
        resp, server = self._open(path, headers=headers, timeout=idle, stream=True)
        self._stream_resp = resp
        try:
            ctype = resp.headers.get("content-type", "")
            if not ctype.startswith("text/event-stream"):
                raise Failure(
                    f"{server} answered the watch with `{ctype}`, not an event stream",
                    server,
                    unsupported=True,
                )
            self._core.connected("sse", server)
            self._deliver([])
            decoder, got_any = SseDecoder(), False
            try:
                for chunk in resp.iter_raw():
                    if self._closed.is_set():
                        return
                    for ev in decoder.feed(chunk):
                        if not got_any:
                            got_any = True
                            self._backoff.reset()
                        self._deliver(drive_sync(self._core.on_sse(ev), self._fetch))
            except httpx.ReadTimeout:
                if not got_any:
                    raise Failure(
                        f"{server} sent no event within {idle} s (a buffering proxy?)",
                        server,
                        unsupported=True,
                    ) from None
                raise Failure(f"{server} sent nothing for {idle} s", server) from None
            except (httpx.HTTPError, ValueError) as e:
                raise Failure(f"stream from {server}: {type(e).__name__}: {e}", server) from e
            raise Failure(f"{server} ended the stream", server)
        finally:
            self._stream_resp = None
            resp.close()

    def _long_poll(self) -> None:
        after = self._core.resume_after()
        wait = self.settings.long_poll_wait
        # The server may add up to 1/16 of the wait as jitter.
        resp, server = self._open(self._core.long_poll_path(wait), timeout=wait + wait / 16 + 10)
        self._core.connected("long_poll", server)
        self._backoff.reset()
        reset = resp.headers.get("ringd-reset") == "true"
        try:
            events = drive_sync(
                self._core.on_long_poll(after, resp.status_code, reset, resp.content), self._fetch
            )
        except Exception as e:
            failure, events = self._core.refused(e, server)
            self._deliver(events)
            raise failure from e
        self._deliver(events)

    # -- acks --------------------------------------------------------------------------

    def _ack_loop(self) -> None:
        backoff = Backoff(*self.settings.backoff)
        while not self._closed.is_set():
            self._ack_wake.clear()
            target = self._core.ack_target()
            if target is None:
                self._ack_wake.wait()
                continue
            try:
                self._ack_api.request(
                    "POST",
                    self.settings.ack_path,
                    json={"version": target[0], "fingerprint": target[1]},
                    # The ack's connection ends with its answer instead of idling in
                    # the pool beside the watch's: a fleet would hold twice its size
                    # in server connections (ringd closes it too; this covers a proxy
                    # in front that does not).
                    headers=CLOSE,
                )
                self._core.acked(target)
                self._deliver([])
                backoff.reset()
                wait = self.settings.ack_interval
            except ApiError as e:
                # 4xx: the ring was deleted or recreated below this version;
                # the watch delivers what replaces it, so do not insist.
                log.debug("ringd: %s: ack of v%s failed: %s", self.ring, target[0], e)
                wait = self.settings.ack_interval if e.status < 500 else backoff.next_wait()
            # The ack thread must outlive any failure: it logs, backs off
            # and acks again, as the watch thread goes on.
            except Exception as e:  # noqa: BLE001
                log.debug("ringd: %s: ack of v%s failed: %s", self.ring, target[0], e)
                wait = backoff.next_wait()
            self._ack_wake.wait(wait)  # a newer version cuts the wait short

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Stops the threads; waiters get ClientClosed, iterators end."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._ack_wake.set()
        with self._cond:
            self._cond.notify_all()
        for sub in list(self._subs):
            sub.put(Subscription._END)
        # Closing the stream and the pools breaks a blocking read.
        resp = self._stream_resp
        if resp is not None:
            # Closing from another thread may race the reader, which may
            # raise anything on the way out; close() itself must not fail.
            with contextlib.suppress(Exception):
                resp.close()
        self._api.close()
        if self.settings.ack:
            self._ack_api.close()
        # A read in flight (a long-poll, or a stream from a server that does
        # not notice the close) may not return at once: the daemon thread
        # then ends when it does, doing nothing more, and close() does not
        # wait for it.
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=0.2)

    def __enter__(self) -> RingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RingClient({self.ring!r}, version={self.version}, {self._core.status.transport})"
