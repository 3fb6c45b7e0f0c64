"""The Python client's fleet for the reconnect-storm benchmark
(benches/load/reconnect_storm): N followers of ringd rings in one process,
each an `AsyncRingClient` built as an application builds one.

    python clients/python/benchmarks/followers.py --url http://127.0.0.1:PORT \\
        --rings bench-000,bench-001 --followers N --protocol sse|long-poll

Follower i follows ring rings[i mod len(rings)]. All N clients are started
at once, in one event loop, each with the library's default settings
(backoff 100 ms doubling to 10 s, acks on, the default client id) but for
the mode: "auto" for sse (the default: streams, long-polls where streams
cannot get through), "long_poll" for long-poll. The asyncio client, not
`RingClient`: a Python service holding thousands of followers runs them on
an event loop, not on 2 threads each.

For every version follower i applies (its `on_change`, called when its
lookups start using the version) the program writes the line
"<i> <version>\\n" to stdout. Lines are gathered during one turn of the
event loop and written and flushed at the start of the next, so each is at
most one turn late. Nothing else goes to stdout; diagnostics (a summary
every 10 s) go to stderr. It runs until killed (SIGTERM, SIGINT, SIGKILL)
or until stdin reaches EOF.

Connections: every follower has the client's own HTTP client
(`httpx.AsyncClient`), which holds one connection for its watch and
opens one for each ack, closed with its answer (`Connection: close`), far
below httpx's limit of 100 per client, so nothing needs
configuring for 10,000 streams but the open-file limit (the driver raises
it; so does this program, to its hard limit). One `httpx.AsyncClient`
shared by all would be no better: its pool (httpcore) rescans every
connection on each request, which at 10,000 connections costs more than
the requests. The clients share one TLS context (ringd.http); that is the
library's default, not this program's.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import resource
import signal
import sys
import threading
import time
from collections import Counter

from ringd import Change
from ringd.aio import AsyncRingClient

#: How often the summary goes to stderr, in seconds.
SUMMARY_EVERY = 10.0


class Lines:
    """The lines of one loop turn, written and flushed at the next."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pending: list[str] = []
        self._out = sys.stdout.buffer

    def applied(self, i: int, change: Change) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(f"{i} {change.to}\n")

    def flush(self) -> None:
        if self._pending:
            data, self._pending = "".join(self._pending).encode(), []
            self._out.write(data)
            self._out.flush()


def raise_open_files() -> None:
    # One connection per follower (two while it acks), and a few more.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def watch_stdin(loop: asyncio.AbstractEventLoop, done: asyncio.Event) -> None:
    """Sets `done` when stdin reaches EOF (read on a thread: stdin may be a
    file or a terminal, which the event loop cannot wait on)."""

    def read() -> None:
        while os.read(0, 65536):
            pass
        loop.call_soon_threadsafe(done.set)

    threading.Thread(target=read, daemon=True, name="stdin").start()


def summary(clients: list[AsyncRingClient], started: float) -> str:
    statuses = [c.status() for c in clients]
    transports = Counter(s.transport for s in statuses)
    errors = Counter((s.last_error or "")[:60] for s in statuses if s.last_error)
    versions = Counter(s.version for s in statuses)
    top = ", ".join(f"v{v}: {n}" for v, n in sorted(versions.items(), key=lambda x: -x[1])[:3])
    line = (
        f"followers: {time.monotonic() - started:.0f} s: {len(clients)} followers; "
        f"{dict(transports)}; versions {top}"
    )
    if errors:
        line += f"; last errors {errors.most_common(2)}"
    return line


async def run(url: str, rings: list[str], n: int, mode: str) -> None:
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    watch_stdin(loop, done)
    lines = Lines(loop)
    started = time.monotonic()
    clients = [
        AsyncRingClient(
            url,
            rings[i % len(rings)],
            mode=mode,
            on_change=functools.partial(lines.applied, i),
        )
        for i in range(n)
    ]
    for c in clients:  # all at once: start() only creates the client's tasks
        await c.start()
    print(
        f"followers: {n} started in {time.monotonic() - started:.2f} s "
        f"({len(rings)} rings, mode {mode})",
        file=sys.stderr,
        flush=True,
    )
    while not done.is_set():
        try:
            await asyncio.wait_for(done.wait(), SUMMARY_EVERY)
        except asyncio.TimeoutError:
            print(summary(clients, started), file=sys.stderr, flush=True)
    lines.flush()
    print(summary(clients, started), file=sys.stderr, flush=True)
    # Closing 10,000 clients (and asyncio.run cancelling their tasks one by
    # one) would only delay the exit the driver waits for: the lines are
    # flushed, the kernel closes the connections.
    os._exit(0)


def main() -> None:
    p = argparse.ArgumentParser(description="N followers of ringd rings (the Python client)")
    p.add_argument("--url", required=True, help="the ringd server, http://127.0.0.1:PORT")
    p.add_argument("--rings", required=True, help="comma-separated; follower i follows i mod R")
    p.add_argument("--followers", type=int, required=True, help="how many followers")
    p.add_argument("--protocol", choices=("sse", "long-poll"), default="sse")
    args = p.parse_args()
    rings = [r.strip() for r in args.rings.split(",") if r.strip()]
    if not rings:
        p.error("--rings names no ring")
    if args.followers < 1:
        p.error("--followers must be at least 1")
    raise_open_files()
    mode = "long_poll" if args.protocol == "long-poll" else "auto"
    asyncio.run(run(args.url, rings, args.followers, mode))


if __name__ == "__main__":
    main()
