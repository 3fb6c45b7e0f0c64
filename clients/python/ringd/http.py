"""Requests to a set of equivalent ringd servers, failing over between them
(as the Rust client's `Endpoints`): the server that answered last is tried
first, then the others in the order given. Error responses become the typed
exceptions of `ringd.errors`."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Union

import httpx

from .errors import ApiError, Unreachable, api_error

#: Time limit of a plain request, in seconds.
DEFAULT_TIMEOUT = 10.0
#: How long a connection attempt may take before the next server is tried.
CONNECT_TIMEOUT = 3.0

Urls = Union[str, Sequence[str]]
Headers = Mapping[str, str]


def parse_urls(urls: Urls) -> list[str]:
    """Splits comma-separated lists (as `RINGD_ADDR` is written), trims,
    checks the scheme and drops a trailing slash."""
    items = [urls] if isinstance(urls, str) else list(urls)
    out: list[str] = []
    for item in items:
        for url in item.split(","):
            url = url.strip().rstrip("/")
            if not url:
                continue
            rest = url.partition("://")[2]
            if (
                not url.startswith(("http://", "https://"))
                or not rest
                or any(c.isspace() for c in rest)
            ):
                raise ValueError(f"invalid server URL `{url}`: use http://host:port")
            out.append(url)
    if not out:
        raise ValueError("no server URL given: use http://host:port (several may be given)")
    return out


class Endpoints:
    """The servers and the one to try first. Shared by the threads or tasks
    of one client; only an int is written, so a lock keeps it simple."""

    def __init__(self, urls: Urls, token: str | None = None) -> None:
        self.urls = parse_urls(urls)
        self.token = token or None
        self._preferred = 0
        self._lock = threading.Lock()

    def order(self) -> list[tuple[int, str]]:
        """(index, url) in the order to try them."""
        start = self._preferred % len(self.urls)
        n = len(self.urls)
        return [((start + i) % n, self.urls[(start + i) % n]) for i in range(n)]

    def answered(self, index: int) -> None:
        with self._lock:
            self._preferred = index

    def demote(self, url: str) -> None:
        """Makes the server after `url` the next one tried, if `url` is the
        preferred one: a watcher that lost its stream there moves on."""
        with self._lock:
            if url in self.urls and self.urls.index(url) == self._preferred:
                self._preferred = (self._preferred + 1) % len(self.urls)

    def headers(self, extra: Headers | None) -> dict[str, str]:
        h = {"authorization": f"Bearer {self.token}"} if self.token else {}
        h.update(extra or {})
        return h


#: The header of a request whose connection should end with its answer:
#: acks, sent about once a minute beside a watch's own connection.
CLOSE: Mapping[str, str] = {"Connection": "close"}

_tls_lock = threading.Lock()
_tls: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    """The one TLS context of every client in the process: httpx's default
    (its CA bundle, `SSL_CERT_FILE` and `SSL_CERT_DIR` honoured), made once.
    Left to itself, each `httpx.Client` loads the CA bundle into a context
    of its own, some 20 ms and 0.8 MB each: a process that follows
    thousands of rings (one client each) would spend minutes and gigabytes
    on copies of one context. A context is safe to share between
    connections and threads."""
    global _tls
    with _tls_lock:
        if _tls is None:
            _tls = httpx.create_ssl_context()
        return _tls


def _replayable(method: str, headers: Headers | None) -> bool:
    # A request that reached a server but got no answer may have taken
    # effect; only a GET or an idempotent change is safe to send elsewhere.
    return method == "GET" or any(k.lower() == "idempotency-key" for k in (headers or {}))


def _failed(resp: httpx.Response, url: str, content: bytes) -> ApiError:
    return api_error(
        resp.status_code,
        resp.headers.get("content-type", ""),
        content,
        url,
        resp.reason_phrase,
        resp.headers.get("retry-after"),
    )


def _timeout(limit: float | None) -> httpx.Timeout:
    # None: no read limit (streams), which the caller bounds itself.
    return httpx.Timeout(limit, connect=CONNECT_TIMEOUT)


class Api:
    """Blocking requests: `request()` returns the response of a 2xx or 304
    and raises `ApiError` subclasses for the rest, `Unreachable` when no
    server answered. `stream=True` leaves the body unread (close it)."""

    def __init__(
        self,
        urls: Urls,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        endpoints: Endpoints | None = None,
    ) -> None:
        self.endpoints = endpoints or Endpoints(urls, token)
        self.timeout = timeout
        self.http = httpx.Client(verify=_tls_context())

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        headers: Headers | None = None,
        timeout: float | None = -1.0,
        stream: bool = False,
    ) -> tuple[httpx.Response, str]:
        """Sends to the preferred server, then to each other one while the
        failure says nothing about the request: unreachable, or 502-504 (a
        503 `at-capacity`, a watch refused by a full instance, included:
        the others are tried at once). Only the last server's refusal is
        raised, with its `retry_after`. Returns the response and the base
        URL of the server that gave it."""
        limit = self.timeout if timeout == -1.0 else timeout
        last: Exception | None = None
        for index, base in self.endpoints.order():
            url = base + path
            req = self.http.build_request(
                method,
                url,
                json=json,
                timeout=_timeout(limit),
                headers=self.endpoints.headers(headers),
            )
            try:
                resp = self.http.send(req, stream=stream)
            except httpx.TransportError as e:
                last = Unreachable(f"{url}: {type(e).__name__}: {e}")
                if isinstance(e, httpx.ConnectError) or _replayable(method, headers):
                    continue
                raise last from e
            if resp.is_success or resp.status_code == 304:
                self.endpoints.answered(index)
                return resp, base
            err = _failed(resp, url, resp.read())
            resp.close()
            if resp.status_code not in (502, 503, 504):
                self.endpoints.answered(index)
                raise err
            last = err
        assert last is not None
        raise last

    def json(self, method: str, path: str, body: Any = None, headers: Headers | None = None) -> Any:
        """A request with an optional JSON body; the decoded JSON answer."""
        resp, _ = self.request(method, path, json=body, headers=headers)
        return resp.json()

    def get_bytes(self, path: str) -> bytes:
        return self.request("GET", path)[0].content

    def close(self) -> None:
        self.http.close()


class AsyncApi:
    """`Api` for asyncio: the same failover and errors, awaited."""

    def __init__(
        self,
        urls: Urls,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        endpoints: Endpoints | None = None,
    ) -> None:
        self.endpoints = endpoints or Endpoints(urls, token)
        self.timeout = timeout
        self.http = httpx.AsyncClient(verify=_tls_context())

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        headers: Headers | None = None,
        timeout: float | None = -1.0,
        stream: bool = False,
    ) -> tuple[httpx.Response, str]:
        limit = self.timeout if timeout == -1.0 else timeout
        last: Exception | None = None
        for index, base in self.endpoints.order():
            url = base + path
            req = self.http.build_request(
                method,
                url,
                json=json,
                timeout=_timeout(limit),
                headers=self.endpoints.headers(headers),
            )
            try:
                resp = await self.http.send(req, stream=stream)
            except httpx.TransportError as e:
                last = Unreachable(f"{url}: {type(e).__name__}: {e}")
                if isinstance(e, httpx.ConnectError) or _replayable(method, headers):
                    continue
                raise last from e
            if resp.is_success or resp.status_code == 304:
                self.endpoints.answered(index)
                return resp, base
            err = _failed(resp, url, await resp.aread())
            await resp.aclose()
            if resp.status_code not in (502, 503, 504):
                self.endpoints.answered(index)
                raise err
            last = err
        assert last is not None
        raise last

    async def json(
        self, method: str, path: str, body: Any = None, headers: Headers | None = None
    ) -> Any:
        resp, _ = await self.request(method, path, json=body, headers=headers)
        return resp.json()

    async def get_bytes(self, path: str) -> bytes:
        return (await self.request("GET", path))[0].content

    async def close(self) -> None:
        await self.http.aclose()
