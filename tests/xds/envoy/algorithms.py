"""What differs between the algorithms the check drives through a ring's
life: the ring's name and bootstrap placeholder, how it is created, its
size change, and how Envoy's stats show what Envoy built."""

from __future__ import annotations

from common import Json
from processes import Envoy


class Algorithm:
    """An xDS algorithm of ringd, and its ring in the check."""

    name = ""  # ringd's algorithm
    ring = ""  # the ring's name, and Envoy's cluster
    placeholder = ""  # the bootstrap's placeholder for the ring's name
    resize_field = ""  # the config field the life's size change sets,
    resize_to = 0  # and its value there

    def create(self) -> Json:
        """The body of the PUT that creates the ring."""
        return {"algorithm": self.name}

    def resized(self) -> str:
        """The life's size change, as its output names it."""
        return f"{self.resize_field.replace('_', ' ')} {self.resize_to}"

    def sizes(self, config: Json) -> str:
        """The config's sizes, as a reproduction needs them."""
        raise NotImplementedError

    def built(self, envoy: Envoy) -> str:
        """What Envoy's gauges say of the ring or table it built last."""
        raise NotImplementedError


class RingHash(Algorithm):
    name = "envoy_ring_hash"
    ring = "ring-hash"
    placeholder = "RING_HASH_RING"
    resize_field = "minimum_ring_size"
    resize_to = 2048

    def sizes(self, config: Json) -> str:
        return (
            f"minimum_ring_size {config.get('minimum_ring_size')}, "
            f"maximum_ring_size {config.get('maximum_ring_size')}"
        )

    def built(self, envoy: Envoy) -> str:
        # The ring's size and the fewest and most entries of a host.
        stats = envoy.stats(f"cluster.{self.ring}.ring_hash_lb.")
        fewest, most = stats.get("min_hashes_per_host"), stats.get("max_hashes_per_host")
        return f"Envoy's ring {stats.get('size')} entries, {fewest}..{most} a host"


class Maglev(Algorithm):
    name = "envoy_maglev"
    ring = "maglev"
    placeholder = "MAGLEV_RING"
    resize_field = "table_size"
    resize_to = 65521  # a prime, as Maglev needs; the default is 65537

    def sizes(self, config: Json) -> str:
        return f"table_size {config.get('table_size')}"

    def built(self, envoy: Envoy) -> str:
        # The fewest and most slots of a host (Envoy has no gauge of the
        # table's size: it is the cluster's table_size).
        stats = envoy.stats(f"cluster.{self.ring}.maglev_lb.")
        fewest, most = stats.get("min_entries_per_host"), stats.get("max_entries_per_host")
        return f"Envoy's table {fewest}..{most} slots a host"


ALGORITHMS: list[Algorithm] = [RingHash(), Maglev()]
