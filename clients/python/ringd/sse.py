"""A Server-Sent Events decoder, bytes in, events out, following the
WHATWG event-stream rules ringd's watch stream uses (as src/client/sse.rs)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str
    id: str | None = None


class SseDecoder:
    """Incremental WHATWG event-stream decoder (as src/client/sse.rs): CRLF,
    CR or LF end a line, `:` starts a comment, `data` lines join with LF, an
    event without data is dropped, a blank line ends an event."""

    MAX_LINE = 64 << 20  # a snapshot of a 10,000-node ring is a few MB

    def __init__(self) -> None:
        self._line = bytearray()
        self._after_cr = False
        self._event: str | None = None
        self._id: str | None = None
        self._data: list[str] | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        out: list[SseEvent] = []
        buf = bytes(chunk)
        # The previous chunk ended in CR, so a leading LF belongs to it.
        start = 1 if self._after_cr and buf[:1] == b"\n" else 0
        self._after_cr = False
        n = len(buf)
        while True:
            lf, cr = buf.find(b"\n", start), buf.find(b"\r", start)
            ends = [p for p in (lf, cr) if p >= 0]
            if not ends:
                break
            pos = min(ends)
            self._line += buf[start:pos]
            start = pos + 1
            if buf[pos] == 0x0D:
                if start < n and buf[start] == 0x0A:
                    start += 1
                elif start == n:
                    self._after_cr = True
            line, self._line = bytes(self._line), bytearray()
            self._line_done(line, out)
        self._line += buf[start:]
        if len(self._line) > self.MAX_LINE:
            raise ValueError(f"malformed event stream: a line is over {self.MAX_LINE} bytes")
        return out

    def _line_done(self, raw: bytes, out: list[SseEvent]) -> None:
        if not raw:
            if self._data is not None:
                out.append(SseEvent(self._event or "message", "\n".join(self._data), self._id))
            self._event, self._id, self._data = None, None, None
            return
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"malformed event stream: {e}") from None
        if line.startswith(":"):
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "data":
            self._data = (self._data or []) + [value]
