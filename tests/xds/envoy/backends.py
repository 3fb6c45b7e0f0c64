"""The HTTP/1.1 backends Envoy routes to, one a node, each answering
every GET with its node id: served by a child process (this file run as
a script), so that they and the clients sending keys through Envoy do not
take turns at one interpreter's lock."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from common import Failure
from processes import stop_process


class Backend:
    """An HTTP/1.1 server on loopback that answers every GET with its node id."""

    def __init__(self, node_id: str) -> None:
        body = node_id.encode()
        # The whole answer in one write: headers and body in two would wait
        # out Nagle's algorithm against Envoy's delayed ACK, 40 ms a key.
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: %d\r\n\r\n"
        answer = head % len(body) + body
        refusal = (
            b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def handle_one_request(self) -> None:
                # Envoy's requests are GETs without a body: the request line
                # and the header lines up to the blank one are all there is
                # to read, and every answer is the same. http.server's own
                # parsing (the email package's) would cost more CPU than
                # Envoy's routing and halve the keys checked per second.
                line = self.rfile.readline(65537)
                if not line:
                    self.close_connection = True
                    return
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                self.close_connection = not line.startswith(b"GET ")
                self.wfile.write(refusal if self.close_connection else answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Backends:
    """The backends' child process, and the address of each node's backend.
    Rings share them: a node id has one backend whichever ring it is in."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.addresses: dict[str, str] = {}

    def address(self, node_id: str) -> str:
        """The address of node_id's backend, started on first use."""
        if node_id not in self.addresses:
            assert self.proc.stdin is not None
            assert self.proc.stdout is not None
            self.proc.stdin.write(node_id + "\n")
            self.proc.stdin.flush()
            address = self.proc.stdout.readline().strip()
            if not address:
                raise Failure(f"the backends' process started no backend for {node_id}")
            self.addresses[node_id] = address
        return self.addresses[node_id]

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # its end of input: it stops its servers and exits
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def serve() -> int:
    """The child process of Backends: starts a backend for each node id
    read from stdin and writes its address to stdout, until stdin ends."""
    backends = []
    for line in sys.stdin:
        backend = Backend(line.strip())
        backends.append(backend)
        print(backend.address, flush=True)
    for b in backends:
        b.stop()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
