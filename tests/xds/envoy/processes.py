"""The check's ringd and Envoy processes: starting them, waiting for them
to serve, reading Envoy's admin interface and log, and stopping them."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import subprocess
import threading
import time
from typing import Any

from common import NODE_ID, Failure

BOOTSTRAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bootstrap.yaml")
LISTENER = "ingress"  # the bootstrap's listener


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


class RingdProcess:
    """`ringd serve` with its xDS server, on a temporary SQLite store:
    url is its HTTP API, xds its xDS address."""

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


def bootstrap(xds: str, rings: dict[str, str]) -> str:
    """bootstrap.yaml with its placeholders filled in: ringd's xDS at xds,
    ports Envoy picks, and rings, each ring placeholder's name (say
    MAGLEV_RING) to the ring it routes to."""
    host, port = xds.rsplit(":", 1)
    values = {
        "NODE_ID": NODE_ID,
        "XDS_HOST": host,
        "XDS_PORT": port,
        "ADMIN_PORT": "0",
        "LISTEN_PORT": "0",
        **rings,
    }
    with open(BOOTSTRAP, encoding="utf-8") as f:
        text = f.read()
    for name, value in values.items():
        if "{{" + name + "}}" not in text:
            raise Failure(f"{BOOTSTRAP} has no placeholder {{{{{name}}}}}")
        text = text.replace("{{" + name + "}}", value)
    left = sorted(set(re.findall(r"\{\{\w+\}\}", text)))
    if left:
        raise Failure(f"{BOOTSTRAP}: the check fills in no {', '.join(left)}")
    return text


class Envoy:
    """An Envoy process following ringd, with its admin API and listener."""

    def __init__(self, binary: str, workdir: str, xds: str, rings: dict[str, str]) -> None:
        self.log = os.path.join(workdir, "envoy.log")
        # A .yaml path: Envoy reads the file as YAML.
        config = os.path.join(workdir, "envoy.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(bootstrap(xds, rings))
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
            if listener["name"] == LISTENER:
                self.port = int(listener["local_address"]["socket_address"]["port_value"])
        if not self.port:
            raise Failure(f"Envoy's admin /listeners names no {LISTENER} listener: {text}")

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

    def stats(self, prefix: str) -> dict[str, str]:
        """Envoy's stats whose names start with prefix, by the rest of
        their names."""
        # Ring names take a-z, 0-9, `.`, `_` and `-`: of those only the dot
        # needs escaping in Envoy's regex.
        text = self.admin_get("/stats?filter=^" + prefix.replace(".", "\\."))[1]
        stats = {}
        for line in text.splitlines():
            name, _, value = line.partition(":")
            if name.startswith(prefix):
                stats[name.removeprefix(prefix)] = value.strip()
        return stats
