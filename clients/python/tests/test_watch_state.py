"""The watch's logic without a server: event-stream decoding, backoff and
the Retry-After rule (the Go client's test values), the
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
from ringd.errors import api_error, parse_retry_after
from ringd.sse import SseDecoder, SseEvent
from ringd.watch_state import Backoff, WatchCore, drive_sync, handoff_of, retry_after_wait


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


#: Just under 1 s, the largest jitter these tests draw: dyadic, so every sum
#: below is exact in binary floating point.
UNDER_1 = 1 - 2**-20


@pytest.mark.parametrize(
    ("next_wait", "retry_after", "max_wait", "jitter", "want"),
    [
        # What the server asked, plus the jitter, at both ends of [0, 1).
        (0.05, 3, 10, 0, 3),
        (0.05, 3, 10, UNDER_1, 3 + UNDER_1),
        (0.05, 1, 10, 0.25, 1.25),
        # Cut to the backoff's maximum, the jitter still added.
        (0.05, 3600, 10, 0, 10),
        (0.05, 3600, 10, UNDER_1, 10 + UNDER_1),
        (0.05, 10, 10, 0, 10),
        (0.05, float((1 << 64) - 1), 10, UNDER_1, 10 + UNDER_1),
        (0.1, 5, 0.25, 0.25, 0.5),
        # The backoff's own wait wins when it is the longer one.
        (6, 1, 10, UNDER_1, 6),
        (6, 5, 10, UNDER_1, 6),
        (5.5, 5, 10, 0.5, 5.5),
        (6, 5, 10, 1.125, 6.125),  # (a jitter past the range, to show the sum)
        # Retry-After: 0 still waits the jitter.
        (0.01, 0, 10, 0.375, 0.375),
        (0.01, 0, 10, 0, 0.01),
    ],
)
def test_retry_after_wait_rule(
    next_wait: float, retry_after: float, max_wait: float, jitter: float, want: float
) -> None:
    got = retry_after_wait(next_wait, retry_after, max_wait, jitter)
    assert got == want  # exactly: every value above is exact in binary
    # The bounds: [min(ask, max), that + 1 s) or the backoff's own wait.
    floor = min(retry_after, max_wait)
    if jitter < 1:
        assert got == next_wait or floor <= got < floor + 1


def test_backoff_after_refusal_advances_and_honours_retry_after() -> None:
    # Constant draws: the backoff's full jitter and the rule's jitter are
    # both half their range.
    b = Backoff(0.1, 10.0, rand=constant(0.5))
    assert b.after_refusal(3) == 3.5  # max(0.1 × 0.5, 3 + 0.5)
    assert b.after_refusal(3600) == 10.5  # max(0.2 × 0.5, 10 + 0.5)
    assert b.after_refusal(0) == 0.5  # max(0.4 × 0.5, 0 + 0.5)
    # Three refusals advanced the step 0.1 → 0.2 → 0.4 → 0.8, as failures do.
    assert b.step == 0.1 * 8
    assert b.next_wait() == 0.1 * 8 * 0.5
    # The backoff wins when longer: steps of 8 and 16 s drawn at 0.75.
    b = Backoff(8.0, 64.0, rand=constant(0.75))
    assert b.after_refusal(1) == 6.0
    assert b.after_refusal(1) == 12.0
    b.reset()
    assert b.step == 8.0
    # Real draws stay within the bounds.
    for _ in range(2000):
        b = Backoff(0.1, 10.0)
        assert 3 <= b.after_refusal(3) < 4
        assert 10 <= b.after_refusal(3600) < 11
        assert 0 <= b.after_refusal(0) < 1
        assert b.step == 0.1 * 8


@pytest.mark.parametrize(
    ("header", "want"),
    [
        ("1", 1.0),
        ("10", 10.0),
        (" 7 ", 7.0),
        ("\t7", 7.0),
        ("0", 0.0),
        ("007", 7.0),
        ("3600", 3600.0),
        ("0" * 30 + "5", 5.0),
        (str((1 << 64) - 1), float((1 << 64) - 1)),  # the longest wait read
        (str(1 << 64), None),  # past 2^64 − 1 s: garbage
        ("9" * 5000, None),
        (None, None),
        ("", None),
        ("   ", None),
        ("-1", None),
        ("+5", None),
        ("1.5", None),
        ("5s", None),
        ("1 2", None),
        ("\u0661", None),  # ARABIC-INDIC DIGIT ONE: a digit, not ASCII
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("soon", None),
    ],
)
def test_parse_retry_after_reads_delta_seconds_only(header: str | None, want: float | None) -> None:
    assert parse_retry_after(header) == want


def test_a_refusal_with_retry_after_holds_the_next_attempt_back() -> None:
    core = WatchCore("r")
    body = json.dumps(
        {"type": "urn:ringd:problem:at-capacity", "title": "At capacity", "status": 503}
    ).encode()
    ctype = "application/problem+json"
    full = api_error(503, ctype, body, "http://x/watch", "", "4")
    assert (type(full), full.slug, full.retry_after) == (ServerError, "at-capacity", 4.0)
    failure, events = core.refused(full)
    assert (failure.retry_after, failure.unsupported, events) == (4.0, False, [])
    assert "at-capacity" in str(failure)
    # A 429, even from a proxy without a problem document.
    failure, _ = core.refused(api_error(429, "text/plain", b"slow down", "http://x", "", "2"))
    assert (failure.retry_after, failure.unsupported) == (2.0, False)
    # No Retry-After, an HTTP date, or another status: an ordinary failure.
    for status, header in ((503, None), (503, "Wed, 21 Oct 2015 07:28:00 GMT"), (500, "3")):
        e = api_error(status, ctype, body, "http://x/watch", "", header)
        failure, _ = core.refused(e)
        assert (failure.retry_after, failure.unsupported) == (None, False)
    # A 404 keeps its meaning with a Retry-After: the route is missing.
    failure, _ = core.refused(api_error(404, "text/plain", b"nope", "http://x", "", "3"))
    assert failure.unsupported
    assert failure.retry_after is None


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
