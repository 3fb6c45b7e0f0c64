"""ringd's xDS server against Python's grpcio (gRPC C-core's xDS client and
ring_hash policy), key by key through an envoy_ring_hash ring's life: empty,
1 node, 5, 17 (weights 1 to 10), a re-weight, a drain, a removal, a
replacement through a hash_key and back to 3. After each change it waits
until `GET /v1/rings/cache/clients` shows the client's ack of the version
and the client routes probe keys on it, then sends the version's keys
through an `xds:///cache` channel and counts those that reach another
backend than `POST .../lookup` names.

The backends are grpc servers in this process, one a node, each answering
`/ringd.test.Echo/Who` with its node id. The xDS client runs in a child
process (this script with `client`), with GRPC_XDS_BOOTSTRAP_CONFIG in its
environment before grpc is imported there; it reads lines of JSON keys on
stdin and answers with where each key went.

Usage: check_grpcio.py [--ringd BIN] [--keys N] [--seed S]
(BIN defaults to $RINGD_BIN). Needs grpcio; exits 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from typing import Any

# grpcio's C-core (1.85) still ignores EDS endpoints' `envoy.lb` hash_key
# (gRFC A76) unless this is false; ringd places every node by its hash_key.
from processes import (
    ACK_TIMEOUT,
    CLIENT_ENV,
    HASH_HEADER,
    IN_FLIGHT,
    METHOD,
    NODE_ID,
    PROBES,
    RING,
    SETTLE_TIMEOUT,
    Backends,
    Client,
    Failure,
    Json,
    Owners,
    Ringd,
    tail,
)

# The client side, in the child process.


def client_main() -> None:
    """Routes each line of keys read on stdin through `xds:///cache` and
    writes where each went: a node id, or `error:<status code>`."""
    import grpc  # type: ignore[import-untyped]  # after the bootstrap is in the environment

    channel = grpc.insecure_channel(f"xds:///{RING}")
    channel.subscribe(lambda _state: None, try_to_connect=True)
    who = channel.unary_unary(METHOD)

    def answer(call: Any) -> str:
        try:
            return bytes(call.result()).decode()
        except grpc.RpcError as e:
            return f"error:{e.code().name}"

    for line in sys.stdin:
        keys: list[str] = json.loads(line)["keys"]
        answers: list[str] = []
        for i in range(0, len(keys), IN_FLIGHT):
            calls = [
                who.future(b"", timeout=10, metadata=((HASH_HEADER, k),))
                for k in keys[i : i + IN_FLIGHT]
            ]
            answers.extend(answer(c) for c in calls)
        sys.stdout.write(json.dumps({"answers": answers}) + "\n")
        sys.stdout.flush()


class Life:
    """The ring's life, checked through the grpcio client at every version."""

    def __init__(self, ringd: Ringd, client: Client, backends: Backends, args: Any) -> None:
        self.ringd = ringd
        self.client = client
        self.backends = backends
        self.keys_per_version: int = args.keys
        self.rng = random.Random(args.seed)
        self.key_rng = random.Random(args.seed + 1)
        self.nodes: dict[str, Json] = {}
        self.version = 0
        self.checked = 0
        self.versions = 0
        self.disagreements = 0
        self.timeouts = 0

    def upsert(self, node_id: str, weight: int, **fields: Any) -> Json:
        node = {"id": node_id, "address": self.backends.address(node_id), "weight": weight}
        node.update(fields)
        self.nodes[node_id] = node
        return {"op": "upsert", "node": node}

    def remove(self, node_id: str) -> Json:
        del self.nodes[node_id]
        return {"op": "remove", "id": node_id}

    def active(self) -> int:
        return sum(1 for n in self.nodes.values() if n.get("state", "active") == "active")

    def keys(self, n: int, tag: str = "") -> list[str]:
        v = self.version
        return [f"v{v}{tag}-{i}-{self.key_rng.getrandbits(64):016x}" for i in range(n)]

    def change(self, ops: list[Json]) -> None:
        version = int(self.ringd.call("POST", f"/v1/rings/{RING}/changes", {"ops": ops})["version"])
        if version <= self.version:
            raise Failure(f"the change made no new version (still {version}): {ops}")
        self.version = version

    def wait_ack(self) -> Json:
        deadline = time.monotonic() + ACK_TIMEOUT
        while True:
            self.client.alive()
            seen = self.ringd.client()
            if seen is not None and seen.get("version") == self.version:
                return seen
            if time.monotonic() > deadline:
                raise Failure(
                    f"version {self.version}: {NODE_ID} did not ack it within "
                    f"{ACK_TIMEOUT:.0f} s; GET /v1/rings/{RING}/clients shows it as "
                    f"{json.dumps(seen)}\nclient log:\n{tail(self.client.log)}"
                )
            # Traffic keeps the channel out of idle, so that it follows; its
            # key draws nothing from key_rng, so a seed gives the same keys.
            self.client.route([f"poke-{time.monotonic_ns()}"])
            time.sleep(0.02)

    def settle(self) -> float:
        """Waits until probe keys whose owner this version changed reach
        their new owner; answers the share of probe keys that moved."""
        probe = self.keys(2000, "-probe")
        now = self.ringd.owners(self.version, probe)
        before = self.ringd.owners(self.version - 1, probe)
        changed = [i for i in range(len(probe)) if before[i] != now[i]]
        picked = changed[:PROBES] if changed else list(range(PROBES))
        keys = [probe[i] for i in picked]
        want = [now[i] for i in picked]
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:
            got = self.client.route(keys)
            if got == want:
                return len(changed) / len(probe)
            if time.monotonic() > deadline:
                wrong = [(k, g, w) for k, g, w in zip(keys, got, want, strict=True) if g != w]
                k, g, w = wrong[0]
                print(
                    f"  version {self.version}: {SETTLE_TIMEOUT:.0f} s after its ack grpcio still "
                    f"routes {len(wrong)} of {len(keys)} probe keys elsewhere, e.g. {k!r} to "
                    f"{g}, ringd's owner {w} (errors: {self.client.statuses})"
                )
                self.timeouts += 1
                return len(changed) / len(probe)
            time.sleep(0.02)

    def compare(self, what: str, keys: list[str], want: Owners) -> int:
        got = self.client.route(keys)
        wrong = [(k, g, w) for k, g, w in zip(keys, got, want, strict=True) if g != w]
        for k, g, w in wrong[:5]:
            print(f"  version {self.version} ({what}): key {k!r} went to {g}, ringd's owner {w}")
        if self.client.statuses:
            print(f"  version {self.version} ({what}): errors {self.client.statuses}")
        self.checked += len(keys)
        self.disagreements += len(wrong)
        return len(wrong)

    def check(self, what: str) -> tuple[list[str], Owners]:
        started = time.monotonic()
        seen = self.wait_ack()
        acked = time.monotonic()
        if self.active() == 0:
            got = self.client.route(self.keys(20, "-none"))
            if any(got) or set(self.client.statuses) != {"UNAVAILABLE"}:
                raise Failure(
                    f"version {self.version} ({what}): no active node, yet grpcio answered "
                    f"{self.client.statuses} and reached {sorted({g for g in got if g})}"
                )
            print(f"version {self.version} ({what}): no active node, grpcio fails UNAVAILABLE")
            return [], []
        moved = self.settle()
        settled = time.monotonic()
        keys = self.keys(self.keys_per_version)
        want = self.ringd.owners(self.version, keys)
        routing = time.monotonic()
        wrong = self.compare(what, keys, want)
        rate = len(keys) / max(time.monotonic() - routing, 1e-9)
        self.versions += 1
        print(
            f"version {self.version} ({what}): {self.active()} active, {len(keys)} keys, "
            f"{wrong} disagreements; {moved:.1%} of keys moved; acked (kind "
            f"{seen.get('kind')}) after {acked - started:.2f} s, routed on "
            f"{settled - acked:.2f} s later, {rate:.0f} keys/s"
        )
        return keys, want

    def run(self) -> None:
        self.version = int(
            self.ringd.call(
                "PUT", f"/v1/rings/{RING}", {"algorithm": "envoy_ring_hash"}, ok=201
            ).get("version", 1)
        )
        self.check("empty")
        self.change([self.upsert("n00", self.rng.randint(1, 10))])
        self.check("1 node")
        for first, last in ((1, 5), (5, 17)):
            self.change(
                [self.upsert(f"n{i:02d}", self.rng.randint(1, 10)) for i in range(first, last)]
            )
            self.check(f"{last} nodes")
        self.change([self.upsert(i, self.rng.randint(1, 10)) for i in ("n03", "n11", "n14")])
        self.check("3 re-weighted")
        self.change([self.upsert("n05", self.nodes["n05"]["weight"], state="draining")])
        self.check("n05 draining")
        self.change([self.remove("n05")])
        before_keys, before_owners = self.check("n05 removed")

        weight = self.nodes["n07"]["weight"]
        self.change(
            [
                self.upsert("n07", weight, state="draining"),
                self.upsert("r07", weight, hash_key="n07"),
            ]
        )
        after = self.ringd.owners(self.version, before_keys)
        moved = 0
        for k, b, a in zip(before_keys, before_owners, after, strict=True):
            if (b == "n07" and a != "r07") or (b != "n07" and a != b):
                raise Failure(f"ringd moved key {k!r} from {b} to {a} in the replacement")
            moved += b == "n07"
        self.check(f"n07 replaced by r07, {moved} keys moved")
        wrong = self.compare("replacement", before_keys, after)
        print(
            f"version {self.version}: the previous version's {len(before_keys)} keys again, "
            f"{moved} of n07's now at r07, {wrong} disagreements"
        )
        self.change([self.remove("n07")])
        self.check("n07 removed")
        self.change([self.remove(i) for i in sorted(self.nodes) if i not in ("n00", "n01", "r07")])
        self.check("back to 3")


def main() -> int:
    if sys.argv[1:2] == ["client"]:
        client_main()
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ringd", default=os.environ.get("RINGD_BIN", ""))
    parser.add_argument("--keys", type=int, default=5000, help="keys checked a version")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--client-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the grpcio client (repeatable; "
        "GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT=true shows what happens without it)",
    )
    args = parser.parse_args()
    if not args.ringd:
        parser.error("no ringd: pass --ringd or set RINGD_BIN")
    env = {**CLIENT_ENV, **dict(e.split("=", 1) for e in args.client_env)}
    import grpc

    print(f"grpcio {grpc.__version__}; client environment {env or '{}'}")
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="ringd-grpcio-")
    ringd = Ringd(args.ringd, workdir)
    client = backends = None
    ok = False
    try:
        # The child first, before this process's grpc servers start threads.
        client = Client(ringd.xds, workdir, env)
        backends = Backends()
        life = Life(ringd, client, backends, args)
        life.run()
        ok = life.disagreements == 0 and life.timeouts == 0
        print(
            f"grpcio {grpc.__version__}: {life.versions} versions, {life.checked} keys, "
            f"{life.disagreements} disagreements, {life.timeouts} versions not routed on in "
            f"time, {time.monotonic() - started:.1f} s"
        )
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
    finally:
        if client is not None:
            client.stop()
        if backends is not None:
            backends.stop()
        ringd.stop()
        if ok:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"logs kept in {workdir}", file=sys.stderr)
    print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
