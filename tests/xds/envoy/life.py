"""A ring's life, checked through Envoy at every version: 1 node to 40 and
back to 3, with additions, re-weights, a drain, removals, a size change
and a replacement through a hash_key. After each change it waits until
`GET /v1/rings/{ring}/clients` shows Envoy's ack of the version and Envoy
routes on it, sends the version's keys through Envoy and counts those
that reach another backend than the owner `POST .../lookup` names."""

from __future__ import annotations

import json
import random
import time
from typing import Any

from algorithms import Algorithm
from backends import Backends
from common import NODE_ID, Failure, Json, Owners
from processes import Envoy
from ringd_api import RingApi
from router import Router

ACK_TIMEOUT = 30.0  # from the change to Envoy's ack in GET .../clients
SETTLE_TIMEOUT = 5.0  # from the ack to Envoy's worker routing on it
PROBES = 50  # keys whose routing tells that Envoy took a version


class Life:
    """One ring's life, checked through Envoy at every version."""

    def __init__(
        self,
        algorithm: Algorithm,
        api: RingApi,
        envoy: Envoy,
        backends: Backends,
        version: int,
        keys: int,
        seed: int,
    ) -> None:
        self.algorithm = algorithm
        self.api = api
        self.envoy = envoy
        self.router = Router(envoy.port, api.ring)
        self.backends = backends
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

    def reweight(self, node_id: str, weight: int) -> Json:
        """The node as last upserted (its hash_key and state with it), at weight."""
        node = {**self.nodes[node_id], "weight": weight}
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
        version = self.api.change(ops)
        if version <= self.version:
            raise Failure(f"the change made no new version (still {version}): {ops}")
        self.version = version
        return version

    def wait_ack(self, version: int) -> None:
        """Waits until ringd lists Envoy as a proxy of the ring at version."""
        deadline = time.monotonic() + ACK_TIMEOUT
        while True:
            self.envoy.alive()
            self.envoy.check_log()
            seen = self.api.client(NODE_ID)
            if seen is not None and seen.get("kind") == "proxy" and seen.get("version") == version:
                return
            if time.monotonic() > deadline:
                raise Failure(
                    f"{self.api.ring} version {version}: Envoy did not ack it within "
                    f"{ACK_TIMEOUT:.0f} s; GET /v1/rings/{self.api.ring}/clients shows "
                    f"{NODE_ID} as {json.dumps(seen)}"
                )
            time.sleep(0.02)

    def settle(self, version: int, previous: int) -> float:
        """Waits until Envoy routes probe keys whose owner this version
        changed to their new owner: Envoy acks an EDS update once its main
        thread has taken it, and its worker builds the ring a moment later.
        Answers the share of the probe keys the version moved."""
        probe = self.keys(version, 2000, "-probe")
        now = self.api.owners(version, probe)
        before = self.api.owners(previous, probe)
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

    def compare(self, version: int, what: str, keys: list[str], want: Owners) -> Owners:
        """Routes keys through Envoy, counts those that reached another
        backend than want names and prints the first few. Answers where
        each key went."""
        got = self.router.route(keys)
        wrong = [(k, g, w) for k, g, w in zip(keys, got, want, strict=True) if g != w]
        for k, g, w in wrong[:5]:
            print(f"  version {version} ({what}): key {k!r} went to {g}, ringd's owner is {w}")
        if self.router.statuses:
            print(f"  version {version} ({what}): answers other than 200: {self.router.statuses}")
        if wrong:
            print(f"  version {version}: {len(wrong)} disagreements; {self.describe(version)}")
        self.checked += len(keys)
        self.disagreements += len(wrong)
        return got

    def describe(self, version: int) -> str:
        """The ring at version as a reproduction needs it: its sizes and
        every node's id, weight, state and hash_key."""
        snapshot = self.api.snapshot(version)
        nodes = []
        for n in snapshot["nodes"]:
            shown = [f"{k} {n[k]}" for k in ("state", "hash_key", "ramp") if k in n]
            fields = ", ".join(
                [str(n.get("weight", 1)), *(f for f in shown if f != "state active")]
            )
            nodes.append(f"{n['id']} ({fields}) at {n.get('address')}")
        return f"{self.algorithm.sizes(snapshot['config'])}; nodes (weight): " + ", ".join(nodes)

    def check(self, what: str) -> tuple[list[str], Owners, Owners]:
        """Waits for Envoy's ack of the current version and for it to route
        on it, then routes the version's keys and counts disagreements.
        Answers the keys, their owners and where Envoy sent them."""
        version = self.version
        started = time.monotonic()
        self.wait_ack(version)
        acked = time.monotonic()
        if self.active() == 0:
            got = self.router.route(self.keys(version, 20, "-none"))
            if any(got) or set(self.router.statuses) != {503}:
                raise Failure(
                    f"{self.api.ring} version {version} ({what}): no active node, yet Envoy "
                    f"answered {self.router.statuses} and reached {sorted({g for g in got if g})}"
                )
            print(f"version {version} ({what}): no active node, Envoy answers 503")
            return [], [], []
        moved = self.settle(version, version - 1)
        settled = time.monotonic()
        keys = self.keys(version, self.keys_per_version)
        want = self.api.owners(version, keys)
        routing = time.monotonic()
        got = self.compare(version, what, keys, want)
        wrong = sum(1 for g, w in zip(got, want, strict=True) if g != w)
        rate = len(keys) / max(time.monotonic() - routing, 1e-9)
        self.versions += 1
        print(
            f"version {version} ({what}): {self.active()} active, {len(keys)} keys, "
            f"{wrong} disagreements; {moved:.1%} of keys moved, "
            f"{self.algorithm.built(self.envoy)}; acked after {acked - started:.2f} s, "
            f"routed on {settled - acked:.2f} s later, {rate:.0f} keys/s"
        )
        return keys, want, got

    def run(self) -> None:
        self.check("empty")

        self.change([self.upsert("n00", 1)])
        self.check("1 node")
        for first, last in ((1, 5), (5, 17), (17, 40)):
            self.change([self.upsert(f"n{i:02d}", self.weight()) for i in range(first, last)])
            self.check(f"{last} nodes")

        self.change([self.reweight(f"n{i:02d}", self.weight()) for i in (3, 11, 19, 27, 35)])
        self.check("5 re-weighted")

        drained = ["n05", "n15", "n25"]
        self.change([self.upsert(i, self.nodes[i]["weight"], state="draining") for i in drained])
        self.check("3 draining")
        self.change([self.remove(i) for i in drained])
        self.check("3 removed")

        resize = {self.algorithm.resize_field: self.algorithm.resize_to}
        self.change([{"op": "update_config", "config": resize}])
        before_keys, before_owners, _ = self.check(self.algorithm.resized())

        self.replace(before_keys, before_owners)

        self.change([self.remove("n07")])
        self.check("n07 removed")
        self.change([self.remove(i) for i in sorted(self.nodes) if i not in ("n00", "n01", "r07")])
        self.check("back to 3")

    def replace(self, before_keys: list[str], before_owners: Owners) -> None:
        """n07 is replaced by r07 at another address: r07 takes n07's label
        as its hash_key while n07 drains, so every key of n07 moves to r07
        and no other key moves, in ringd and through Envoy."""
        previous = self.version
        weight = self.nodes["n07"]["weight"]
        self.change(
            [
                self.upsert("n07", weight, state="draining"),
                self.upsert("r07", weight, hash_key="n07"),
            ]
        )
        after_owners = self.api.owners(self.version, before_keys)
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
        got = self.compare(self.version, "replacement", before_keys, after_owners)
        wrong = sum(1 for g, w in zip(got, after_owners, strict=True) if g != w)
        print(
            f"version {self.version}: version {previous}'s {len(before_keys)} keys again, "
            f"{moved} of n07's now at r07, {wrong} disagreements"
        )
