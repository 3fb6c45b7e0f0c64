"""The watch's logic without a server: event-stream decoding, backoff, the
bounded-load rule (the Rust client's test values), applying, refusing and
resuming, long-poll gaps, handoff and the mapping of problem details."""

from __future__ import annotations

import json
import math
from typing import Any, Callable

import pytest

from ringd import (
    ApiError,
    BoundedLoad,
    Change,
    Conflict,
    Deleted,
    Forbidden,
    Gone,
    InvalidRequest,
    Node,
    NotFound,
    Placement,
    PreconditionFailed,
    Rejected,
    RingConfig,
    ServerError,
    Unauthorized,
    Unprocessable,
)
from ringd.errors import api_error
from ringd.sse import SseDecoder, SseEvent
from ringd.watch_state import Backoff, WatchCore, drive_sync, handoff_of


def test_events_survive_any_chunking_and_line_ending() -> None:
    data = (
        b': hello\r\nevent: snapshot\r\nid: 7\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'
        b"event: keepalive\rdata: x\r\rdata:y\n\n"
    )
    expected = [
        SseEvent("snapshot", '{"a":\n1}', "7"),
        SseEvent("keepalive", "x"),
        SseEvent("message", "y"),
    ]
    for piece in (1, 2, 3, 7, len(data)):
        d = SseDecoder()
        out: list[SseEvent] = []
        for i in range(0, len(data), piece):
            out += d.feed(data[i : i + piece])
        assert out == expected, piece


def test_an_event_without_data_is_dropped_and_invalid_utf8_refused() -> None:
    d = SseDecoder()
    assert d.feed(b"event: nothing\n\nevent: later\ndata: 1\n") == []
    assert d.feed(b"\n") == [SseEvent("later", "1")]
    with pytest.raises(ValueError, match="malformed event stream"):
        SseDecoder().feed(b"data: \xff\n")


def constant(x: float) -> Callable[[], float]:
    return lambda: x


def test_backoff_doubles_with_full_jitter_and_resets() -> None:
    for r, expected in ((0.0, [0.0] * 6), (0.5, [0.05, 0.1, 0.2, 0.4, 0.5, 0.5])):
        b = Backoff(0.1, 1.0, rand=constant(r))
        assert [b.next_wait() for _ in range(6)] == pytest.approx(expected)
    b = Backoff(0.1, 1.0, rand=lambda: 0.999)
    b.next_wait(), b.next_wait()
    b.reset()
    assert b.next_wait() == pytest.approx(0.0999)


def test_bounded_load_bound_is_the_ceiling_of_factor_times_average() -> None:
    b = BoundedLoad(1.25)
    assert b.bound(99, 10) == 13  # (99 + 1) / 10 x 1.25 = 12.5 -> 13
    assert b.bound(0, 4) == 1  # an idle cluster takes requests
    assert BoundedLoad(1.0).bound(7, 8) == 1  # exactly 1: no rounding up
    assert b.bound(5, 0) == 0
    for f in (0.99, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="balance factor"):
            BoundedLoad(f)


def test_bounded_load_picks_the_first_node_under_the_bound() -> None:
    p = Placement.build(RingConfig(algorithm="rendezvous"), [Node(f"n{i}") for i in range(6)])
    key = b"hot"
    order = p.preference_list(key, 6)
    b = BoundedLoad(1.25)
    assert b.pick(p, key, lambda n: 0) == order[0]
    # Owner at 10 of 12 in flight: bound ceil(1.25 x 13 / 6) = 3.
    loads = dict.fromkeys(order, 0)
    loads[order[0]] = 10
    loads[order[1]] = 2
    assert b.bound(12, 6) == 3
    assert b.pick(p, key, loads.__getitem__) == order[1]
    loads[order[1]] = 3  # at the bound is not below it
    assert b.pick(p, key, loads.__getitem__) == order[2]
    # The first four all over ceil(1.25 x 41 / 6) = 9: the walk goes on.
    loads = {n: 10 if i < 4 else 0 for i, n in enumerate(order)}
    assert b.bound(40, 6) == 9
    assert b.pick(p, key, loads.__getitem__) == order[4]
    empty = Placement.build(RingConfig(), [])
    assert b.pick(empty, key, lambda n: 0) is None


def snapshot(version: int, nodes: list[str], algorithm: str = "ring") -> dict[str, Any]:
    cfg = RingConfig(algorithm=algorithm, vnodes_per_weight=8)
    p = Placement.build(cfg, [Node(n) for n in nodes])
    return {
        "ring": "r",
        "version": version,
        "fingerprint": p.fingerprint(),
        "config": {
            "algorithm": algorithm,
            "hash": "xxh3",
            "vnodes_per_weight": 8,
            "table_size": 65537,
            "replication_factor": 3,
            "zone_aware": False,
            "partitions": 65536,
        },
        "nodes": [{"id": n, "weight": 1, "state": "active", "labels": {}} for n in nodes],
    }


def no_fetch(path: str) -> bytes:
    raise AssertionError(f"unexpected fetch of {path}")


def test_apply_swaps_refuses_a_mismatch_and_resumes_after_it() -> None:
    core = WatchCore("r")
    assert core.watch_request() == ("/v1/rings/r/watch", {"accept": "text/event-stream"})
    ev = drive_sync(core.apply(snapshot(1, ["a", "b"]), False), no_fetch)
    assert [(e.from_version, e.to) for e in ev if isinstance(e, Change)] == [(None, 1)]
    bad = snapshot(2, ["a", "b", "c"])
    bad["nodes"][2]["weight"] = 2
    ev = drive_sync(core.apply(bad, False), no_fetch)
    assert len(ev) == 1
    assert isinstance(ev[0], Rejected)
    assert ev[0].version == 2
    assert "FingerprintMismatch" in ev[0].error
    assert core.view is not None
    assert core.view.version == 1
    assert core.status.rejected == 1
    assert core.status.last_error == ev[0].error
    # The same copy again is not reported twice; resuming skips it.
    assert drive_sync(core.apply(bad, False), no_fetch) == []
    assert core.watch_request()[1]["last-event-id"] == "2"
    good = drive_sync(core.apply(snapshot(3, ["a", "c"]), False), no_fetch)
    assert isinstance(good[0], Change)
    assert (good[0].from_version, good[0].to) == (1, 3)
    assert core.rejected is None
    assert core.watch_request()[1]["last-event-id"] == "3"
    diff = good[0].diff
    assert diff is not None
    assert diff.basis == "ranges"
    assert (diff.added, diff.removed) == (("c",), ("b",))
    # Older versions are ignored unless the server resets the client.
    assert drive_sync(core.apply(snapshot(2, ["a"]), False), no_fetch) == []
    reset = drive_sync(core.apply(snapshot(2, ["a"]), True), no_fetch)
    assert isinstance(reset[0], Change)
    assert reset[0].reset
    assert core.status.version == 2


def test_handoff_reads_both_owners_from_one_view() -> None:
    core = WatchCore("r")
    assert handoff_of(core.view, "k") == handoff_of(None, "k")
    drive_sync(core.apply(snapshot(1, ["a"]), False), no_fetch)
    h = handoff_of(core.view, "k")
    assert (h.owner_now, h.owner_before, h.version, h.version_before, h.moved) == (
        "a",
        None,
        1,
        None,
        False,
    )
    drive_sync(core.apply(snapshot(2, ["b"]), False), no_fetch)
    h = handoff_of(core.view, "k")
    assert (h.owner_now, h.owner_before, h.version, h.version_before, h.moved) == (
        "b",
        "a",
        2,
        1,
        True,
    )


def test_long_poll_fetches_the_gap_and_bridges_a_pruned_one() -> None:
    core = WatchCore("r")
    drive_sync(core.apply(snapshot(1, ["a"]), False), no_fetch)
    assert core.long_poll_path(30) == "/v1/rings/r/snapshot?after=1&wait=30000ms"
    fetched: list[str] = []

    def fetch(path: str) -> bytes:
        fetched.append(path)
        return json.dumps(snapshot(int(path.rsplit("/", 1)[1]), ["a", "b"])).encode()

    body = json.dumps(snapshot(4, ["a", "b", "c"])).encode()
    ev = drive_sync(core.on_long_poll(1, 200, False, body), fetch)
    assert fetched == ["/v1/rings/r/snapshots/2", "/v1/rings/r/snapshots/3"]
    # v3 has v2's fingerprint and nodes, so it is a change of nothing.
    assert [(e.to, e.reset) for e in ev if isinstance(e, Change)] == [
        (2, False),
        (3, False),
        (4, False),
    ]

    def pruned(path: str) -> bytes:
        raise NotFound(410, "urn:ringd:problem:version-pruned", "Gone", "pruned")

    ev = drive_sync(
        core.on_long_poll(4, 200, False, json.dumps(snapshot(7, ["c"])).encode()), pruned
    )
    assert [(e.to, e.reset) for e in ev if isinstance(e, Change)] == [(7, True)]
    assert drive_sync(core.on_long_poll(7, 304, False, b""), no_fetch) == []


def test_deleted_is_reported_once_and_ring_not_found_marks_it() -> None:
    core = WatchCore("r")
    assert drive_sync(core.on_sse(SseEvent("deleted", "{}")), no_fetch) == [Deleted()]
    assert drive_sync(core.on_sse(SseEvent("deleted", "{}")), no_fetch) == []
    core = WatchCore("r")
    drive_sync(core.apply(snapshot(1, ["a"]), False), no_fetch)
    failure, events = core.refused(NotFound(404, "urn:ringd:problem:ring-not-found", "", ""))
    assert events == [Deleted()]
    assert not failure.unsupported
    failure, _ = core.refused(api_error(404, "text/plain", b"nope", "http://x/watch"))
    assert failure.unsupported


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, InvalidRequest),
        (401, Unauthorized),
        (403, Forbidden),
        (404, NotFound),
        (409, Conflict),
        (410, Gone),
        (412, PreconditionFailed),
        (422, Unprocessable),
        (503, ServerError),
        (418, ApiError),
    ],
)
def test_problem_documents_map_to_their_exception(status: int, cls: type) -> None:
    body = {
        "type": "urn:ringd:problem:x",
        "title": "T",
        "status": status,
        "detail": "D",
        "field": "ops[0]",
    }
    e = api_error(status, "application/problem+json", json.dumps(body).encode(), "http://u/p")
    assert type(e) is cls
    assert (e.status, e.type, e.title, e.detail, e.field, e.slug, e.problem) == (
        status,
        "urn:ringd:problem:x",
        "T",
        "D",
        "ops[0]",
        "x",
        True,
    )
    plain = api_error(status, "text/html", b"<h1>bad gateway</h1>", "http://u/p")
    assert type(plain) is cls
    assert not plain.problem
    assert plain.type == "about:blank"
    none: str | None = plain.field
    assert none is None


def test_a_subscription_skips_the_view_current_when_it_was_made() -> None:
    from ringd import RingClient

    # Never started against a server: a dead URL; only the queue matters.
    c = RingClient("http://127.0.0.1:9", "r", ack=False, backoff=(5, 5))
    try:
        first = drive_sync(c._core.apply(snapshot(1, ["a"]), False), no_fetch)
        sub = c.changes()  # v1 is swapped in but not delivered yet
        c._deliver(first)
        second = drive_sync(c._core.apply(snapshot(2, ["a", "b"]), False), no_fetch)
        c._deliver(second)
        assert sub.get(1).to == 2
        with pytest.raises(TimeoutError):
            sub.get(0.05)
    finally:
        c.close()
