"""What moves between two verified placements, computed locally, as the Rust
client's `DiffSummary` (src/placement/diff): exact for the algorithms whose
layouts line up (`ring`/`ketama` arcs, `maglev` and `envoy_maglev` slots,
`table` partitions, on the same hash), and from 65,536 sample keys
otherwise. The Rust side is exact for `jump` and `rendezvous` too
(closed-form models); this client samples them, and says so in `basis`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .placement import Placement

#: Stands for "no owner" (no active node on that side), sorted last as the
#: Rust tally's `u32::MAX` is, so sums run in the same order.
NONE = 1 << 32
SAMPLE_KEYS = 65_536


@dataclass(frozen=True)
class NodeMovement:
    """One node's change in share of the keyspace."""

    id: str
    before: float
    after: float
    gained: float
    lost: float


@dataclass(frozen=True)
class DiffSummary:
    """`basis` is `ranges`, `table_entries`, `partitions` (all exact, equal to
    the server's `GET …/diff` bit for bit) or `sampled`. `nodes` lists the
    nodes that gained or lost keyspace, in id order."""

    basis: str
    moved_fraction: float
    nodes: tuple[NodeMovement, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]


def _arcs(p: Placement, space: int) -> list[tuple[int, int]]:
    """(last position, owner index) of every arc, in order, covering the
    circle: the arc ending at a point belongs to it; the wrap piece past
    the last point belongs to the first."""
    pts = p.points() or []
    if not pts:
        return [(space - 1, NONE)]
    index = {n.id: i for i, n in enumerate(p.nodes)}
    out: list[tuple[int, int]] = []
    prev = -1
    for pos, node in pts:
        if pos > prev:  # a tied point owns nothing: the lower index won
            out.append((pos, index[node]))
            prev = pos
    if prev < space - 1:
        out.append((space - 1, index[pts[0][1]]))
    return out


def _sweep_arcs(
    a: Placement, b: Placement, space: int, same: dict[int, int], moved: dict[tuple[int, int], int]
) -> None:
    xs, ys = _arcs(a, space), _arcs(b, space)
    i = j = 0
    cursor = 0
    while i < len(xs) and j < len(ys):
        (xl, xo), (yl, yo) = xs[i], ys[j]
        end = min(xl, yl)
        if same.get(xo, -1) != yo:
            moved[(xo, yo)] = moved.get((xo, yo), 0) + end - cursor + 1
        cursor = end + 1
        i += xl == end
        j += yl == end


def _owners(ids: Sequence[str | None] | None, size: int, index: dict[str, int]) -> list[int]:
    got = list(ids or [])
    return [index[x] if x is not None else NONE for x in got] + [NONE] * (size - len(got))


def summarize(before: Placement, after: Placement) -> DiffSummary:
    """The movement from `before` to `after`."""
    a_idx = {n.id: i for i, n in enumerate(before.nodes)}
    b_idx = {n.id: i for i, n in enumerate(after.nodes)}
    # Old index -> new index of the same id; NONE maps to NONE.
    same = {i: b_idx[n.id] for i, n in enumerate(before.nodes) if n.id in b_idx}
    same[NONE] = NONE
    moved: dict[tuple[int, int], int] = {}
    same_hash = before.hash == after.hash and before.algorithm == after.algorithm
    alg = before.algorithm
    ca, cb = before.config, after.config
    if same_hash and alg in ("ring", "ketama"):
        space = 1 << (32 if alg == "ketama" else 64)
        _sweep_arcs(before, after, space, same, moved)
        basis = "ranges"
    elif (
        same_hash
        and alg in ("maglev", "envoy_maglev")
        and ca
        and cb
        and ca.table_size == cb.table_size
    ):
        space = ca.table_size
        _tally(
            _owners(before.maglev_table(), space, a_idx),
            _owners(after.maglev_table(), space, b_idx),
            same,
            moved,
        )
        basis = "table_entries"
    elif same_hash and alg == "table" and ca and cb and ca.partitions == cb.partitions:
        space = ca.partitions
        prim = [r[0] if r else None for r in before.table_rows() or []]
        prim_b = [r[0] if r else None for r in after.table_rows() or []]
        _tally(_owners(prim, space, a_idx), _owners(prim_b, space, b_idx), same, moved)
        basis = "partitions"
    else:
        space = SAMPLE_KEYS
        xs, ys = [], []
        for k in range(SAMPLE_KEYS):
            key = f"ringd-sample-{k}".encode()
            oa, ob = before.owner(key), after.owner(key)
            xs.append(NONE if oa is None else a_idx[oa])
            ys.append(NONE if ob is None else b_idx[ob])
        _tally(xs, ys, same, moved)
        basis = "sampled"
    return _finish(before, after, basis, {k: v / space for k, v in moved.items()})


def _tally(
    xs: list[int], ys: list[int], same: dict[int, int], moved: dict[tuple[int, int], int]
) -> None:
    for x, y in zip(xs, ys):
        if same.get(x, -1) != y:
            moved[(x, y)] = moved.get((x, y), 0) + 1


def _finish(
    before: Placement, after: Placement, basis: str, flows: dict[tuple[int, int], float]
) -> DiffSummary:
    shares: dict[str, list[float]] = {}
    for s in before.ownership()["nodes"]:
        shares.setdefault(s["id"], [0.0, 0.0, 0.0, 0.0])[0] = s["share"]
    for s in after.ownership()["nodes"]:
        shares.setdefault(s["id"], [0.0, 0.0, 0.0, 0.0])[1] = s["share"]
    total = 0.0
    # Summed in (old index, new index) order, as the Rust tally's BTreeMap.
    for (x, y), mass in sorted(flows.items()):
        if x != NONE:
            shares[before.nodes[x].id][3] += mass
        if y != NONE:
            shares[after.nodes[y].id][2] += mass
        total += mass
    nodes = tuple(
        NodeMovement(i, v[0], v[1], v[2], v[3])
        for i, v in sorted(shares.items())
        if v[2] > 0.0 or v[3] > 0.0
    )
    a_ids = {n.id for n in before.nodes}
    b_ids = {n.id for n in after.nodes}
    return DiffSummary(
        basis,
        total,
        nodes,
        tuple(n.id for n in after.nodes if n.id not in a_ids),
        tuple(n.id for n in before.nodes if n.id not in b_ids),
    )
