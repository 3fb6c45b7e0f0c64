"""twemproxy's key hashes (spec 3.7): the values nutcracker publishes, and
the shared file tests/placement/vectors/hashes/twemproxy.json that the Rust
tests check too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ringd.twemproxy_hashes import TWEMPROXY_HASHES

SHARED = (
    Path(__file__).parent / "../../../tests/placement/vectors/hashes/twemproxy.json"
).resolve()

# twemproxy 0.5.0's src/test_all.c (from libmemcached's hash_results.h).
APPLE = {
    "one_at_a_time": 2297466611,
    "md5": 3195025439,
    "crc32a": 2838417488,
    "fnv1_32": 67176023,
    "fnv1a_32": 280767167,
    "fnv1_64": 473199127,
    "fnv1a_64": 1488911807,
    "hsieh": 3738850110,
    "jenkins": 1442444624,
    "murmur": 4142305122,
}


def test_published_values() -> None:
    assert {name: TWEMPROXY_HASHES[name](b"apple") for name in APPLE} == APPLE


def shared() -> dict[str, list[int]]:
    hashes: dict[str, list[int]] = json.loads(SHARED.read_text())["hashes"]
    return hashes


def test_the_shared_file_names_every_hash() -> None:
    assert set(shared()) == set(TWEMPROXY_HASHES)


@pytest.mark.parametrize("name", sorted(TWEMPROXY_HASHES))
def test_shared_values(name: str) -> None:
    keys = [bytes.fromhex(k) for k in json.loads(SHARED.read_text())["keys_hex"]]
    f = TWEMPROXY_HASHES[name]
    assert [f(k) for k in keys] == shared()[name]
