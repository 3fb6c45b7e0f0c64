"""What the grpcio check runs: ringd, the backends and the xDS client
process, and the HTTP calls to ringd; check_grpcio.py drives them."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent import futures
from typing import IO, Any

# grpcio's C-core (1.85) still ignores EDS endpoints' `envoy.lb` hash_key
# (gRFC A76) unless this is false; ringd places every node by its hash_key.
CLIENT_ENV = {"GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT": "false"}
RING = "cache"
NODE_ID = "grpcio-1"  # the bootstrap's node.id: the client's id in ringd
HASH_HEADER = "ringd-key"  # ringd's --xds-hash-header default
METHOD = "/ringd.test.Echo/Who"
ACK_TIMEOUT = 30.0  # from the change to the client's ack in GET .../clients
SETTLE_TIMEOUT = 5.0  # from the ack to the client routing on it
PROBES = 50  # keys whose routing tells that the client took a version
IN_FLIGHT = 500  # RPCs the client has outstanding at once
LOOKUP_BATCH = 10_000

Json = dict[str, Any]
Owners = list[str | None]


class Failure(Exception):
    """The check failed; the message says how."""


def tail(path: str, lines: int = 40) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({path}: {e})\n"


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Client:
    """The child process with the xDS channel."""

    def __init__(self, xds: str, workdir: str, env: dict[str, str]) -> None:
        bootstrap = {
            "xds_servers": [
                {
                    "server_uri": xds,
                    "channel_creds": [{"type": "insecure"}],
                    "server_features": ["xds_v3"],
                }
            ],
            "node": {"id": NODE_ID},
        }
        self.log = os.path.join(workdir, "client.log")
        child_env = {**os.environ, "GRPC_XDS_BOOTSTRAP_CONFIG": json.dumps(bootstrap), **env}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_grpcio.py"),
                    "client",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env=child_env,
            )
        self.statuses: dict[str, int] = {}  # answers that were errors, by code

    def alive(self) -> None:
        if self.proc.poll() is not None:
            raise Failure(f"the grpcio client exited ({self.proc.returncode}):\n{tail(self.log)}")

    def route(self, keys: list[str]) -> Owners:
        """Where each key went: its backend's node id, None for an error."""
        self.alive()
        stdin: IO[str] | None = self.proc.stdin
        stdout: IO[str] | None = self.proc.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps({"keys": keys}) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            self.alive()
            raise Failure(f"the grpcio client answered nothing:\n{tail(self.log)}")
        self.statuses = {}
        out: Owners = []
        for a in json.loads(line)["answers"]:
            if a.startswith("error:"):
                self.statuses[a[6:]] = self.statuses.get(a[6:], 0) + 1
                out.append(None)
            else:
                out.append(a)
        return out

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        stop(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


# The server side: ringd and the backends.


class Ringd:
    """`ringd serve` with its xDS server, on a temporary SQLite store."""

    def __init__(self, binary: str, workdir: str) -> None:
        self.log = os.path.join(workdir, "ringd.log")
        store = "sqlite://" + os.path.join(workdir, "ringd.db")
        cmd = [binary, "serve", "--listen", "127.0.0.1:0", "--xds-listen", "127.0.0.1:0"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [*cmd, "--store", store], stdout=subprocess.PIPE, stderr=log, text=True
            )
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line.rstrip("\n"))

        threading.Thread(target=read, daemon=True).start()
        self.url = ""
        self.xds = ""
        deadline = time.monotonic() + 30
        while not (self.url and self.xds):
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise Failure(
                        f"ringd did not print both its addresses (exit status "
                        f"{self.proc.poll()}):\n{tail(self.log)}"
                    ) from None
                continue
            if line.startswith("ringd listening on "):
                self.url = line.removeprefix("ringd listening on ").strip()
            elif line.startswith("ringd serving xDS on "):
                self.xds = line.removeprefix("ringd serving xDS on ").strip()

    def call(self, method: str, path: str, body: Any = None, ok: int = 200) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        if status != ok:
            raise Failure(f"{method} {path} answered {status}: {text.decode(errors='replace')}")
        return json.loads(text) if text else None

    def owners(self, version: int, keys: list[str]) -> Owners:
        out: Owners = []
        for i in range(0, len(keys), LOOKUP_BATCH):
            body = {"keys": keys[i : i + LOOKUP_BATCH], "replicas": 1, "version": version}
            answer = self.call("POST", f"/v1/rings/{RING}/lookup", body)
            if answer["version"] != version:
                raise Failure(f"lookup at version {version} answered {answer['version']}")
            out.extend(r.get("owner") for r in answer["results"])
        return out

    def client(self) -> Json | None:
        for c in self.call("GET", f"/v1/rings/{RING}/clients")["clients"]:
            if c.get("client_id") == NODE_ID:
                return dict(c)
        return None

    def stop(self) -> None:
        stop(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Backends:
    """A grpc server on 127.0.0.1 for each node, answering its node id."""

    def __init__(self) -> None:
        import grpc  # type: ignore[import-untyped]  # grpcio ships no type stubs

        self.grpc = grpc
        self.servers: dict[str, Any] = {}
        self.ports: dict[str, int] = {}

    def address(self, node_id: str) -> str:
        if node_id not in self.servers:
            grpc = self.grpc
            answer = node_id.encode()

            def who(_request: bytes, _context: Any) -> bytes:
                return answer

            server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
            handler = grpc.method_handlers_generic_handler(
                "ringd.test.Echo", {"Who": grpc.unary_unary_rpc_method_handler(who)}
            )
            server.add_generic_rpc_handlers((handler,))
            self.ports[node_id] = server.add_insecure_port("127.0.0.1:0")
            server.start()
            self.servers[node_id] = server
        return f"127.0.0.1:{self.ports[node_id]}"

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop(None)
