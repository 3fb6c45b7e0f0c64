"""Processes and stand-ins for the live tests: the real `ringd serve` on a
temporary SQLite file or a real etcd, and small local HTTP servers (a
scripted event stream, a proxy whose watch route is broken)."""

from __future__ import annotations

import base64
import http.server
import os
import queue
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

import httpx

from ringd import Api

REPO = Path(__file__).resolve().parents[3]


def ringd_bin() -> str:
    return os.environ.get("RINGD_BIN") or str(REPO / "target" / "release" / "ringd")


def free_port() -> int:
    # Another process could take it before it is bound; rare, and it shows
    # up as a start-up failure, not a wrong result.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(done: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Etcd:
    """A single-member etcd on free loopback ports and a temporary data
    directory, started with the flags tests/support/etcd.rs passes."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir / "etcd"
        self.port, peer = free_port(), free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        peer_url = f"http://127.0.0.1:{peer}"
        # etcd writes to it as long as it runs: stop() closes it.
        self.log = open(workdir / "etcd.log", "ab")  # noqa: SIM115
        etcd = shutil.which("etcd")
        assert etcd is not None
        self.proc = subprocess.Popen(
            [
                etcd,
                "--name=test",
                f"--data-dir={self.dir / 'data'}",
                f"--listen-client-urls={self.endpoint}",
                f"--advertise-client-urls={self.endpoint}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=test={peer_url}",
                "--logger=zap",
                "--log-level=warn",
            ],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
        )
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, f"etcd exited: {self.proc.returncode}"
            try:
                if httpx.get(f"{self.endpoint}/health", timeout=1).json().get("health") == "true":
                    return
            except (httpx.HTTPError, ValueError):
                pass
            assert time.monotonic() < deadline, "etcd did not start within 30 s"
            time.sleep(0.05)

    @property
    def store(self) -> str:
        return f"etcd://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.log.close()


class Ringd:
    """`ringd serve` on 127.0.0.1, its URL read from what it prints; `args`
    are more flags of `serve` (e.g. `--max-watchers 1`)."""

    def __init__(
        self,
        store: str,
        workdir: Path,
        port: int = 0,
        env: dict[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> None:
        self.store, self.workdir, self.port = store, workdir, port
        self.env = dict(os.environ, **(env or {}))
        self.args = list(args)
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.start()

    def start(self) -> None:
        n = len(list(self.workdir.glob("ringd-*.out")))
        out, err = self.workdir / f"ringd-{n}.out", self.workdir / f"ringd-{n}.err"
        with open(out, "wb") as o, open(err, "wb") as e:
            self.proc = subprocess.Popen(
                [
                    ringd_bin(),
                    "serve",
                    "--listen",
                    f"127.0.0.1:{self.port}",
                    "--store",
                    self.store,
                    "--watch-keepalive",
                    "1s",
                    *self.args,
                ],
                stdin=subprocess.DEVNULL,
                stdout=o,
                stderr=e,
                env=self.env,
            )
        deadline = time.monotonic() + 20
        while True:
            m = re.search(r"^ringd listening on (http://\S+)", out.read_text(), re.M)
            if m:
                self.url = m.group(1)
                self.port = int(self.url.rsplit(":", 1)[1])
                return
            assert self.proc.poll() is None, f"ringd exited:\n{err.read_text()}"
            assert time.monotonic() < deadline, f"ringd did not start:\n{err.read_text()}"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def metric(self, name: str) -> float:
        """One unlabelled sample of `GET /metrics`, e.g. `ringd_watchers`."""
        text = httpx.get(f"{self.url}/metrics", timeout=10).text
        m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
        assert m is not None, f"{name} is not in /metrics"
        return float(m.group(1))


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that closed its stream mid-write is expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Stub:
    """A local HTTP server whose handler is a function of (method, path,
    headers, body) that writes the answer itself."""

    def __init__(self, handle: Callable[[http.server.BaseHTTPRequestHandler, bytes], None]) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                handle(self, self.rfile.read(length) if length else b"")

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def reply(
    h: http.server.BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    ctype: str = "application/json",
    extra: tuple[tuple[str, str], ...] = (),
) -> None:
    h.send_response(status)
    h.send_header("content-type", ctype)
    h.send_header("content-length", str(len(body)))
    for k, v in extra:
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(body)


class BrokenWatchProxy(Stub):
    """Forwards everything to `target` except the watch route, which gets a
    proxy's own plain-text 404 (no problem document)."""

    def __init__(self, target: str) -> None:
        self.watch_hits = 0
        http_ = httpx.Client(timeout=None)

        def handle(h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
            if "/watch" in h.path:
                self.watch_hits += 1
                return reply(h, 404, b"404 page not found", "text/plain")
            keep = {
                k: v
                for k, v in h.headers.items()
                if k.lower() in ("authorization", "content-type", "accept")
            }
            try:
                r = http_.request(h.command, target + h.path, content=body or None, headers=keep)
            except httpx.TransportError:
                # ringd went away under a long-poll (the test is ending):
                # answer as a proxy does, instead of a traceback on stderr.
                return reply(h, 502, b"502 bad gateway", "text/plain")
            passed = tuple(
                (k, v) for k, v in r.headers.items() if k.lower() in ("ringd-reset", "etag")
            )
            reply(h, r.status_code, r.content, r.headers.get("content-type", "text/plain"), passed)

        super().__init__(handle)


class ScriptedWatch(Stub):
    """Serves one ring's watch from a queue of (event, id, data) frames the
    test puts, and records every ack posted."""

    def __init__(self, ring: str) -> None:
        self.frames: queue.Queue[tuple[str, int, str] | None] = queue.Queue()
        self.acks: list[dict[str, Any]] = []
        self.last_event_ids: list[str | None] = []

        def handle(h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
            import json

            if h.command == "POST" and h.path.endswith("/ack"):
                self.acks.append(json.loads(body))
                return reply(h, 200, b"{}")
            if h.path.startswith(f"/v1/rings/{ring}/watch"):
                self.last_event_ids.append(h.headers.get("last-event-id"))
                h.send_response(200)
                h.send_header("content-type", "text/event-stream")
                h.send_header("cache-control", "no-cache")
                h.end_headers()
                while True:
                    frame = self.frames.get()
                    if frame is None:
                        h.close_connection = True  # ends the stream: EOF
                        return
                    event, vid, data = frame
                    h.wfile.write(f"event: {event}\nid: {vid}\ndata: {data}\n\n".encode())
                    h.wfile.flush()
            reply(
                h,
                404,
                b'{"type":"urn:ringd:problem:not-found","title":"Not found",'
                b'"status":404,"detail":"no such route"}',
                "application/problem+json",
            )

        super().__init__(handle)


# -- rings and keys -------------------------------------------------------------


def unique(name: str) -> str:
    # Rings of every test share one etcd: names must not collide.
    return f"{name}-{random.randrange(1 << 30):x}"


def change(api: Api, ring: str, *ops: dict[str, Any]) -> int:
    return int(api.json("POST", f"/v1/rings/{ring}/changes", {"ops": list(ops)})["version"])


def up(node: str, **fields: Any) -> dict[str, Any]:
    return {"op": "upsert", "node": {"id": node, **fields}}


def make_keys(n: int) -> list[bytes]:
    rng = random.Random(20260101)
    keys: list[bytes] = []
    for i in range(n):
        if i % 2:  # not UTF-8: 0xff never occurs in it
            keys.append(b"\xff" + rng.randbytes(rng.randrange(0, 24)))
        else:
            text = "".join(rng.choice("abcz09:/-é€😀") for _ in range(rng.randrange(1, 20)))
            keys.append(text.encode())
    return keys


KEYS = make_keys(100_000)


def server_lookups(api: Api, ring: str, keys: list[bytes]) -> tuple[int, list[Any]]:
    """Owner and preference list of every key from `POST …/lookup`, 10,000
    keys a request (the API's limit): text keys as `keys`, the others (not
    UTF-8) as `keys_b64`."""
    out: list[Any] = [None] * len(keys)
    versions = set()
    text = [(i, k) for i, k in enumerate(keys) if not k.startswith(b"\xff")]
    raw = [(i, k) for i, k in enumerate(keys) if k.startswith(b"\xff")]
    for group, form in ((text, "keys"), (raw, "keys_b64")):
        for j in range(0, len(group), 10_000):
            batch = group[j : j + 10_000]
            sent = [
                k.decode() if form == "keys" else base64.b64encode(k).decode() for _, k in batch
            ]
            r = api.json("POST", f"/v1/rings/{ring}/lookup", {form: sent, "replicas": 3})
            versions.add(r["version"])
            assert [x.get("key", x.get("key_b64")) for x in r["results"]] == sent
            for (i, _), x in zip(batch, r["results"]):
                out[i] = (x["owner"], x["replicas"])
    assert len(versions) == 1
    return versions.pop(), out


def check_lookups(client: Any, expected: list[Any], keys: list[bytes], n_pl: int) -> None:
    owners = [client.owner(k) for k in keys]
    assert owners == [o for o, _ in expected]
    assert [client.preference_list(k, 3) for k in keys[:n_pl]] == [r for _, r in expected[:n_pl]]
