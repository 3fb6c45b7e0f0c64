"""A following client holds one connection to the server, its watch's (or
its parked long-poll's), once it has acked: each ack's connection ends with
its answer (the client sends `Connection: close`, and ringd closes it too).
Kept in the pool, it would idle beside the watch, and a fleet would hold
twice its size in server connections. The server's sockets are counted
from /proc/<pid>/fd; the test's own requests close their connections, so
`before` is what the server holds before any request."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import Ringd, wait_until

from ringd import RingClient
from ringd.aio import AsyncRingClient

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc to count in")


def sockets_of(pid: int) -> int:
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        # A descriptor closed between the listing and the read counts as none.
        with contextlib.suppress(FileNotFoundError):
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return n


def send(srv: Ringd, method: str, path: str, body: Any = None) -> Any:
    """One request of the test's own, on a connection closed with it."""
    r = httpx.request(
        method, srv.url + path, json=body, headers={"Connection": "close"}, timeout=10
    )
    assert r.is_success, f"{method} {path}: {r.status_code} {r.text}"
    return r.json()


def add(srv: Ringd, node: str) -> int:
    ops = [{"op": "upsert", "node": {"id": node}}]
    return int(send(srv, "POST", "/v1/rings/r/changes", {"ops": ops})["version"])


def one_connection_per_client(srv: Ringd, pid: int, before: int, follow: Any) -> None:
    """Two versions, each followed and acked (`follow(v)`): the first ack's
    connection must not stay open for the second to reuse either."""
    for node in ("c", "d"):
        v = add(srv, node)
        follow(v)
        listed = send(srv, "GET", "/v1/rings/r/clients")["clients"]
        assert [(c["client_id"], c["version"]) for c in listed] == [("fleet-member", v)]
        # Kept alive, the ack's connection would stay for httpx's 5 s
        # keep-alive (or ringd's 30 s header-read timeout).
        wait_until(lambda: sockets_of(pid) == before + 1, 2, f"one connection at v{v}")
        time.sleep(0.3)
        assert sockets_of(pid) - before == 1, f"v{v}: the server's connections for one client"


def start(tmp_path: Path) -> tuple[Ringd, int, int]:
    srv = Ringd(f"sqlite://{tmp_path}/ringd.db", tmp_path)
    assert srv.proc is not None
    pid = srv.proc.pid
    before = sockets_of(pid)  # the listener and the runtime's own
    send(srv, "PUT", "/v1/rings/r", {})
    add(srv, "a")
    wait_until(lambda: sockets_of(pid) == before, 10, "the test's own connections closed")
    return srv, pid, before


@pytest.mark.parametrize("mode", ["sse", "long_poll"])
def test_a_following_client_holds_one_connection_once_it_has_acked(
    tmp_path: Path, mode: str
) -> None:
    srv, pid, before = start(tmp_path)
    try:
        with RingClient([srv.url], "r", mode=mode, client_id="fleet-member") as c:

            def follow(v: int) -> None:
                c.wait_for_version(v, 20)
                wait_until(lambda: (c.status().acked or 0) >= v, 20, f"the ack of v{v}")

            one_connection_per_client(srv, pid, before, follow)
    finally:
        srv.stop()


def test_an_async_client_holds_one_connection_once_it_has_acked(tmp_path: Path) -> None:
    srv, pid, before = start(tmp_path)

    async def run() -> None:
        c = await AsyncRingClient([srv.url], "r", client_id="fleet-member").start()
        try:
            for node in ("c", "d"):
                v = await asyncio.to_thread(add, srv, node)
                await c.wait_for_version(v, 20)
                deadline = time.monotonic() + 20
                while (c.status().acked or 0) < v:
                    assert time.monotonic() < deadline, f"no ack of v{v}"
                    await asyncio.sleep(0.02)
                await asyncio.to_thread(
                    wait_until, lambda: sockets_of(pid) == before + 1, 2, f"one connection at v{v}"
                )
                await asyncio.sleep(0.3)
                assert sockets_of(pid) - before == 1
        finally:
            await c.close()

    try:
        asyncio.run(run())
    finally:
        srv.stop()
