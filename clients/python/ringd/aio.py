"""`AsyncRingClient`: `RingClient` for asyncio. The same logic
(`ringd.watch_state`), driven by tasks and `httpx.AsyncClient`; snapshot
verification runs in a worker thread so the event loop never waits on it.

    async with AsyncRingClient("http://10.0.0.1:7420", "cache") as client:
        await client.ready()
        client.owner("user:42")
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Sequence
from typing import Any, Callable

import httpx

from .client import Reader, Settings
from .errors import ApiError, ClientClosed, RingdError
from .http import CLOSE, AsyncApi, Urls
from .sse import SseDecoder
from .watch_state import Backoff, Change, Event, Failure, Steps, View, WatchCore, delivers

log = logging.getLogger("ringd.client")


def _step(send: Callable[[], str]) -> tuple[bool, Any]:
    # StopIteration cannot cross a Future, so the result is a pair.
    try:
        return False, send()
    except StopIteration as stop:
        return True, stop.value


class AsyncSubscription:
    """An async iterator over events of one kind; it ends when the client
    closes. `await get(timeout)` raises TimeoutError."""

    _END = object()

    def __init__(self, owner: AsyncRingClient, kind: type[Any]) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._owner, self.kind = owner, kind
        # The view current now may still be on its way to the subscribers
        # (swapped, not yet delivered): it is not a change "from now on".
        self._current = owner._core.view
        owner._subs.append(self)

    def put(self, ev: Any) -> None:
        if delivers(ev, self.kind, self._current, self._END):
            self._queue.put_nowait(ev)

    async def get(self, timeout: float | None = None) -> Any:
        try:
            ev = await asyncio.wait_for(self._queue.get(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no event within {timeout} s") from None
        if ev is self._END:
            self._queue.put_nowait(ev)
            raise ClientClosed("the client is closed")
        return ev

    def __aiter__(self) -> AsyncSubscription:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.get()
        except ClientClosed:
            raise StopAsyncIteration from None

    def close(self) -> None:
        if self in self._owner._subs:
            self._owner._subs.remove(self)


class AsyncRingClient(Reader):
    """Takes `RingClient`'s arguments. Start it with `async with` (or
    `await client.start()`), stop it with `await client.close()`."""

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
        self._backoff = Backoff(*s.backoff)
        self._subs: list[AsyncSubscription] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    async def start(self) -> AsyncRingClient:
        if not self._tasks:
            s = self.settings
            self._api = AsyncApi(s.endpoints.urls, endpoints=s.endpoints, timeout=s.request_timeout)
            self._signal = asyncio.Event()
            self._ack_wake = asyncio.Event()
            self._tasks.append(asyncio.ensure_future(self._run()))
            if s.ack:
                self._tasks.append(asyncio.ensure_future(self._ack_loop()))
        return self

    # -- waiting and events -----------------------------------------------------

    async def ready(self, timeout: float = 10.0) -> View:
        return await self.wait_for_version(1, timeout)

    async def wait_for_version(self, version: int, timeout: float = 10.0) -> View:
        await self._wait(
            lambda: self.version is not None and self.version >= version,
            timeout,
            f"version {version}",
        )
        assert self._core.view is not None
        return self._core.view

    async def wait_for_ack(self, version: int, timeout: float = 10.0) -> None:
        await self._wait(
            lambda: (self._core.status.acked or 0) >= version, timeout, f"ack {version}"
        )

    async def _wait(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if self._closed:
                raise ClientClosed("the client is closed")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"{what} not reached within {timeout} s; "
                    f"last error: {self._core.status.last_error}"
                )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._signal.wait(), left)

    def changes(self) -> AsyncSubscription:
        """`async for change in client.changes()`: every version applied."""
        return AsyncSubscription(self, Change)

    def events(self) -> AsyncSubscription:
        return AsyncSubscription(self, object)

    def _deliver(self, events: list[Event]) -> None:
        # Wake every waiter: they re-check their condition.
        self._signal.set()
        self._signal = asyncio.Event()
        if any(isinstance(e, Change) for e in events):
            self._ack_wake.set()
        self._callbacks(events)
        for ev in events:
            for sub in list(self._subs):
                sub.put(ev)

    async def _drive(self, steps: Steps) -> Any:
        done, value = await asyncio.to_thread(_step, functools.partial(next, steps))
        while not done:
            try:
                send = functools.partial(steps.send, await self._api.get_bytes(value))
            # Forwarded, not swallowed: the steps get whatever the fetch
            # raised, as `yield from` would hand it on, and decide.
            except Exception as e:  # noqa: BLE001
                send = functools.partial(steps.throw, e)
            done, value = await asyncio.to_thread(_step, send)
        return value

    # -- the watch ----------------------------------------------------------------

    async def _run(self) -> None:
        mode = self.settings.mode
        use_stream, again_at = mode != "long_poll", None
        while not self._closed:
            if again_at is not None and time.monotonic() >= again_at:
                use_stream, again_at = True, None
            try:
                await (self._stream() if use_stream else self._long_poll())
                continue
            except Failure as f:
                if f.unsupported and use_stream and mode == "auto":
                    log.info("ringd: %s: watch stream unusable (%s); long-polling", self.ring, f)
                    use_stream, again_at = False, time.monotonic() + self.settings.sse_retry
                    self._core.status.last_error = str(f)
                    continue
                server, error, retry_after = f.server, str(f), f.retry_after
            except asyncio.CancelledError:
                raise
            # The watch task must outlive any failure: a surprise is
            # recorded as the last error and retried after a backoff.
            except Exception as e:  # noqa: BLE001
                server, error, retry_after = None, f"{type(e).__name__}: {e}", None
            if server:
                self.settings.endpoints.demote(server)
            self._core.disconnected(error)
            self._deliver([])
            await asyncio.sleep(self._wait_after(retry_after))

    async def _open(self, path: str, **kw: Any) -> tuple[httpx.Response, str]:
        try:
            return await self._api.request("GET", path, **kw)
        except (RingdError, httpx.HTTPError) as e:  # what a request raises
            failure, events = self._core.refused(e)
            self._deliver(events)
            raise failure from e

    async def _stream(self) -> None:
        path, headers = self._core.watch_request()
        idle = self.settings.idle_timeout
        resp, server = await self._open(path, headers=headers, timeout=idle, stream=True)
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
                async for chunk in resp.aiter_raw():
                    for ev in decoder.feed(chunk):
                        if not got_any:
                            got_any = True
                            self._backoff.reset()
                        self._deliver(await self._drive(self._core.on_sse(ev)))
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
            await resp.aclose()

    async def _long_poll(self) -> None:
        after = self._core.resume_after()
        wait = self.settings.long_poll_wait
        resp, server = await self._open(
            self._core.long_poll_path(wait), timeout=wait + wait / 16 + 10
        )
        self._core.connected("long_poll", server)
        self._backoff.reset()
        reset = resp.headers.get("ringd-reset") == "true"
        try:
            events = await self._drive(
                self._core.on_long_poll(after, resp.status_code, reset, resp.content)
            )
        except Exception as e:
            failure, events = self._core.refused(e, server)
            self._deliver(events)
            raise failure from e
        self._deliver(events)

    async def _ack_loop(self) -> None:
        backoff = Backoff(*self.settings.backoff)
        while not self._closed:
            self._ack_wake.clear()
            target = self._core.ack_target()
            wait: float | None = None
            if target is not None:
                try:
                    await self._api.request(
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
                    # 4xx: the ring was deleted or recreated below this
                    # version; what replaces it will be acked instead.
                    wait = self.settings.ack_interval if e.status < 500 else backoff.next_wait()
                # The ack task must outlive any failure: it backs off and
                # acks again, as the watch task goes on.
                except Exception:  # noqa: BLE001
                    wait = backoff.next_wait()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ack_wake.wait(), wait)

    # -- lifetime -------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._tasks:
            self._signal.set()
            await self._api.close()
        for sub in list(self._subs):
            sub.put(AsyncSubscription._END)

    async def __aenter__(self) -> AsyncRingClient:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
