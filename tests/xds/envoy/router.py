"""Sending keys through Envoy's listener, and reading which backend each
reached."""

from __future__ import annotations

import http.client
import threading

from common import HASH_HEADER, Failure, Owners

ROUTE_THREADS = 8  # clients sending keys through Envoy at once


class Router:
    """Sends keys through Envoy's listener on port to the ring named ring
    (the request's Host, as the bootstrap's virtual hosts match it), each
    as the hash header of one GET, from several threads on keep-alive
    connections."""

    def __init__(self, port: int, ring: str) -> None:
        self.port = port
        self.headers = {"host": ring}
        self.statuses: dict[int, int] = {}  # the last call's answers other than 200

    def route(self, keys: list[str]) -> Owners:
        """The node id of the backend each key reached (None where Envoy
        answered other than 200, as counted in statuses)."""
        out: Owners = [None] * len(keys)
        errors: list[Exception] = []
        statuses: dict[int, int] = {}
        lock = threading.Lock()

        def send(conn: http.client.HTTPConnection, key: str) -> tuple[int, str]:
            for attempt in range(3):
                try:
                    conn.request("GET", "/", headers={**self.headers, HASH_HEADER: key})
                    resp = conn.getresponse()
                    return resp.status, resp.read().decode()
                except (OSError, http.client.HTTPException):
                    conn.close()  # the next request connects again
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

        def work(first: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                for i in range(first, len(keys), ROUTE_THREADS):
                    status, body = send(conn, keys[i])
                    if status == 200:
                        out[i] = body
                    else:
                        with lock:
                            statuses[status] = statuses.get(status, 0) + 1
            except (OSError, http.client.HTTPException, UnicodeDecodeError) as e:
                errors.append(e)
            finally:
                conn.close()

        threads = [threading.Thread(target=work, args=(t,)) for t in range(ROUTE_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise Failure(f"sending keys through Envoy failed: {errors[0]!r}")
        self.statuses = statuses
        return out
