"""Small Maglev tables with small unequal weights, where Envoy's binary64
arithmetic and plain integer Maglev part (spec 5.3): the envoy_maglev
ring's last versions, each shown slot by slot as Envoy routes it, as
ringd's lookup places it, and as ringd's integer `maglev` fills it from
the same labels and weights."""

from __future__ import annotations

import json

from common import Failure, Json
from life import Life
from ringd_api import RingApi

Table = list[set[str]]  # the nodes the keys of each slot reached


def table(size: int, hashes: list[int], owners: list[str | None]) -> Table:
    """The slots of a table of size, from keys with these hashes (Maglev's
    slot is the hash mod the size) and the nodes they went to."""
    slots: Table = [set() for _ in range(size)]
    for h, o in zip(hashes, owners, strict=True):
        slots[h % size].add(str(o))
    return slots


def shown(slots: Table) -> str:
    return " ".join("/".join(sorted(s)) if s else "-" for s in slots)


class SmallTables:
    """The envoy_maglev life's small tables, and their integer twins in a
    ring of ringd's `maglev` (which the xDS server does not serve)."""

    def __init__(self, life: Life, url: str) -> None:
        self.life = life
        self.integer = RingApi(url, life.api.ring + "-integer")
        self.integer_nodes: set[str] = set()
        self.slot_differences = 0  # slots where Envoy's table is not ringd's
        self.integer_differences = 0  # slots where Envoy's is not integer Maglev's

    def run(self) -> None:
        life = self.life
        if set(life.nodes) != {"n00", "n01", "r07"}:
            raise Failure(f"the small tables start from n00, n01 and r07, not {sorted(life.nodes)}")
        # 5, 1 and 1 at 13: Envoy skips a tied turn of a weight-1 node.
        self.version(
            13,
            [life.reweight("n00", 5), life.reweight("n01", 1), life.reweight("r07", 1)],
        )
        # The spec's example (5.3): labels 10.0.0.1:80, weight 5, and
        # 10.0.0.2:80, weight 1, at 7: integer Maglev [a, b, a, a, b, a, a],
        # Envoy [a, a, a, a, b, a, a].
        self.version(
            7,
            [
                life.remove("r07"),
                life.upsert("n00", 5, hash_key="10.0.0.1:80"),
                life.upsert("n01", 1, hash_key="10.0.0.2:80"),
            ],
        )

    def version(self, size: int, ops: list[Json]) -> None:
        """A version of table_size size with the nodes ops leave, checked
        key by key, then compared slot by slot."""
        life = self.life
        life.change([{"op": "update_config", "config": {"table_size": size}}, *ops])
        keys, _, got = life.check(f"table size {size}, {self.nodes()}")
        results = life.api.lookup(life.version, keys)
        envoy = table(size, [int(r["hash"]) for r in results], got)
        ringd = table(size, [int(r["hash"]) for r in results], [r.get("owner") for r in results])
        integer = self.integer_table(size, keys)
        print(f"  table size {size} slot by slot (a key's slot: its xxh64 mod {size}):")
        print(f"    Envoy routes      {shown(envoy)}")
        print(f"    ringd looks up    {shown(ringd)}{self.differs(envoy, ringd)}")
        print(f"    integer `maglev`  {shown(integer)}{self.differs(envoy, integer)}")
        print(f"    Envoy's weights   {self.envoy_weights()}")
        split = [i for i, s in enumerate(envoy) if len(s) != 1]
        if split:
            # Counted below, as slots where Envoy's table is not ringd's.
            print(
                f"    Envoy sent the keys of slots {split} to more than one backend (or "
                "none): it did not route them by their xxh64 mod the table size"
            )
        self.slot_differences += sum(1 for e, r in zip(envoy, ringd, strict=True) if e != r)
        self.integer_differences += sum(1 for e, i in zip(envoy, integer, strict=True) if e != i)

    def nodes(self) -> str:
        """The nodes by id, weight and label (where it is not the id)."""
        shown = []
        for n in self.life.nodes.values():
            label = f" (hash_key {n['hash_key']})" if "hash_key" in n else ""
            shown.append(f"{n['id']} weight {n['weight']}{label}")
        return ", ".join(shown)

    @staticmethod
    def differs(envoy: Table, other: Table) -> str:
        slots = [i for i, (e, o) in enumerate(zip(envoy, other, strict=True)) if e != o]
        if not slots:
            return "  (Envoy's table)"
        return f"  (not Envoy's at slot{'s'[: len(slots) - 1]} {', '.join(map(str, slots))})"

    def integer_table(self, size: int, keys: list[str]) -> Table:
        """The table ringd's `maglev` fills from the life's nodes (labels
        and weights) at size, from its own lookup of keys (its key hash is
        xxh3, so its slots come from its own hashes)."""
        config = {"table_size": size}
        nodes = self.life.nodes
        if not self.integer_nodes:
            self.integer.create({"algorithm": "maglev", **config})
        ops: list[Json] = [{"op": "update_config", "config": config}]
        ops += [{"op": "upsert", "node": n} for n in nodes.values()]
        ops += [{"op": "remove", "id": i} for i in sorted(self.integer_nodes - set(nodes))]
        version = self.integer.change(ops)
        self.integer_nodes = set(nodes)
        results = self.integer.lookup(version, keys)
        return table(size, [int(r["hash"]) for r in results], [r.get("owner") for r in results])

    def envoy_weights(self) -> str:
        """The ring's hosts and their weights as Envoy's admin /clusters
        shows them: the EDS weights ringd sent (2^31 in all)."""
        text = self.life.envoy.admin_get("/clusters?format=json")[1]
        for cluster in json.loads(text).get("cluster_statuses", []):
            if cluster.get("name") != self.life.api.ring:
                continue
            hosts = []
            for h in cluster.get("host_statuses", []):
                a = h["address"]["socket_address"]
                node = next(
                    (
                        i
                        for i, n in self.life.nodes.items()
                        if n["address"] == f"{a['address']}:{a['port_value']}"
                    ),
                    "?",
                )
                hosts.append(f"{node} {h.get('weight')}")
            return ", ".join(sorted(hosts))
        return "(Envoy's /clusters shows no such cluster)"
