"""What every algorithm's materialized layout answers (spec 1, step 3)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

# Node number of a jump hole in the encoding, and of "no node" internally.
HOLE = 0xFFFFFFFF


class Layout(ABC):
    """A layout over the active nodes `ids` (index = position, 2.3)."""

    #: Ownership basis name (spec 7), as the vectors and the API write it.
    basis: str = ""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = list(ids)

    @abstractmethod
    def key_hash(self, key: bytes) -> int:
        """The key hash of section 4 in this algorithm's hash space."""

    @abstractmethod
    def owner_index(self, h: int) -> int | None:
        """Index of the node owning key hash `h`; None with no active node."""

    def owner(self, key: bytes) -> str | None:
        """Id of the node owning `key` (layouts override it with a faster path)."""
        i = self.owner_index(self.key_hash(key))
        return None if i is None else self.ids[i]

    @abstractmethod
    def successors(self, h: int) -> Iterable[int]:
        """The successor order of 6.1 for key hash `h` (with repetitions)."""

    @abstractmethod
    def units(self) -> tuple[list[int], int]:
        """Ownership units per node (index order) and their total (7),
        before the "no active node gives total 0" rule."""

    @abstractmethod
    def encode_body(self) -> bytes:
        """The algorithm's body of the canonical encoding (9.1)."""
