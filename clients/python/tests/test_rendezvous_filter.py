"""The float pre-filter of weighted `rendezvous` (ringd/rendezvous.py)
changes no result: owners and successor orders equal the exact rule of
spec 5.5 applied to every node, for random weights, scaled (ramped)
weights, colliding label hashes and draws forced into near-ties."""

from __future__ import annotations

import random

import pytest

from ringd.hashes import fmix64
from ringd.rendezvous import Rendezvous, _by_order, cost


def exact_order(r: Rendezvous, h: int) -> list[int]:
    scores = [
        (cost(fmix64(h ^ n)), w, fmix64(h ^ n), i)
        for i, (n, w) in enumerate(zip(r.node_hashes, r.weights))
    ]
    return [s[3] for s in sorted(scores, key=_by_order)]


def layout(hashes: list[int], weights: list[int]) -> Rendezvous:
    return Rendezvous(
        [f"n{i}" for i in range(len(hashes))],
        hashes,
        weights,
        is_ramped=False,
        key_hash=lambda b: 0,
    )


@pytest.mark.parametrize("seed", range(6))
def test_owner_and_order_equal_the_exact_rule(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([2, 5, 40])
    top = rng.choice([4, 1000, 65536 * 50])  # raw weights, or weight × ramp
    weights = [rng.randint(1, top) for _ in range(n)]
    hashes = [rng.getrandbits(64) for _ in range(n)]
    if n > 2:
        hashes[1] = hashes[0]  # colliding labels: equal draws for every key
        weights[1] = weights[0]
    r = layout(hashes, weights)
    assert not r.uniform
    for _ in range(3000):
        h = rng.getrandbits(64)
        want = exact_order(r, h)
        assert list(r.successors(h)) == want
        assert r.owner_index(h) == want[0]


def test_near_ties_fall_back_to_the_exact_rule() -> None:
    # Weights 1 and 2 with draws chosen so that the two costs are within a
    # unit of L of the 2:1 ratio: floats cannot order them, the exact rule
    # must. The draw of node 1 is the draw that puts cost_1 nearest to
    # 2·cost_0, found by bisection on the exact cost.
    rng = random.Random(7)
    checked = 0
    for _ in range(200):
        d0 = rng.getrandbits(63) + (1 << 62)
        target = 2 * cost(d0)
        lo, hi = 0, (1 << 64) - 1  # cost falls as the draw rises
        while lo < hi:
            mid = (lo + hi) // 2
            if cost(mid) > target:
                lo = mid + 1
            else:
                hi = mid
        for d1 in (lo - 1, lo, lo + 1):
            if not 0 <= d1 < 1 << 64:
                continue
            h = 0x5DEECE66D
            # Label hashes that give exactly these draws for key hash h.
            r = layout([h ^ unfmix64(d0), h ^ unfmix64(d1)], [1, 2])
            assert [fmix64(h ^ n) for n in r.node_hashes] == [d0, d1]
            f0, f1 = r._approx([d0, d1])
            assert abs(f0 - f1) <= 2 * r._eps  # the floats cannot decide
            assert list(r.successors(h)) == exact_order(r, h)
            assert r.owner_index(h) == exact_order(r, h)[0]
            checked += 1
    assert checked == 600


def unfmix64(x: int) -> int:
    """The inverse of MurmurHash3's fmix64."""
    m = (1 << 64) - 1
    x ^= x >> 33
    x = (x * 0x9CB4B2F8129337DB) & m  # inverse of 0xC4CEB9FE1A85EC53
    x ^= x >> 33
    x = (x * 0x4F74430C22A54005) & m  # inverse of 0xFF51AFD7ED558CCD
    x ^= x >> 33
    return x
