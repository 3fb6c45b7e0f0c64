package io.github.ringd.client;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Decodes the WHATWG event-stream format incrementally, as the Rust and Go clients do: {@code
 * field: value} lines; CRLF, CR or LF end a line; {@code :} starts a comment; data lines join with
 * LF; a blank line ends an event, which is dropped if it had no data. Written out rather than taken
 * from a library: it is short, and an SSE library would own the HTTP request (no failover, no
 * Last-Event-ID of ours). Used by one thread.
 */
final class SseDecoder {
  /**
   * The longest line: a snapshot of a 10,000-node ring is a few MB; a longer line is a broken or
   * hostile server.
   */
  static final int MAX_LINE = 64 << 20;

  /** One decoded event; event is "message" when the stream named none. */
  record Event(String event, @Nullable String id, String data) {}

  /** A stream that breaks the event-stream format. */
  static final class MalformedStreamException extends Exception {
    private static final long serialVersionUID = 1L;

    MalformedStreamException(String message) {
      super("malformed event stream: " + message);
    }
  }

  private final CharsetDecoder utf8 =
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT);
  private byte[] line = new byte[256];
  private int lineLength;
  private boolean afterCr;
  private @Nullable String event;
  private @Nullable String id;
  private final StringBuilder data = new StringBuilder();
  private boolean hasData;

  /**
   * Decodes buf[0, n), adding the events it completes to out; on a malformed stream, out still
   * holds the events completed before the fault.
   */
  void feed(byte[] buf, int n, List<Event> out) throws MalformedStreamException {
    int i = 0;
    if (afterCr) {
      afterCr = false;
      if (n > 0 && buf[0] == '\n') {
        i = 1;
      }
    }
    int start = i;
    for (; i < n; i++) {
      byte b = buf[i];
      if (b != '\r' && b != '\n') {
        continue;
      }
      append(buf, start, i - start);
      if (b == '\r') {
        if (i + 1 < n && buf[i + 1] == '\n') {
          i++;
        } else if (i + 1 == n) {
          afterCr = true;
        }
      }
      lineDone(out);
      lineLength = 0;
      start = i + 1;
    }
    append(buf, start, n - start);
  }

  private void append(byte[] buf, int from, int len) throws MalformedStreamException {
    if (len <= 0) {
      return;
    }
    if (lineLength + len > MAX_LINE) {
      throw new MalformedStreamException("a line is over " + MAX_LINE + " bytes");
    }
    if (lineLength + len > line.length) {
      line = Arrays.copyOf(line, Math.max(lineLength + len, Math.min(2 * line.length, MAX_LINE)));
    }
    System.arraycopy(buf, from, line, lineLength, len);
    lineLength += len;
  }

  private void lineDone(List<Event> out) throws MalformedStreamException {
    if (lineLength == 0) {
      if (hasData) {
        out.add(
            new Event(event == null || event.isEmpty() ? "message" : event, id, data.toString()));
      }
      event = null;
      id = null;
      data.setLength(0);
      hasData = false;
      return;
    }
    String text;
    try {
      text = utf8.decode(ByteBuffer.wrap(line, 0, lineLength)).toString();
    } catch (CharacterCodingException e) {
      throw new MalformedStreamException("invalid UTF-8");
    }
    if (lineLength > 4096) {
      line = new byte[256]; // do not keep a snapshot-sized buffer between snapshots
    }
    if (text.startsWith(":")) {
      return;
    }
    int colon = text.indexOf(':');
    String field = colon < 0 ? text : text.substring(0, colon);
    String value = colon < 0 ? "" : text.substring(colon + 1);
    if (value.startsWith(" ")) {
      value = value.substring(1);
    }
    switch (field) {
      case "event" -> event = value;
      case "id" -> {
        if (value.indexOf('\0') < 0) {
          id = value;
        }
      }
      case "data" -> {
        if (hasData) {
          data.append('\n');
        }
        data.append(value);
        hasData = true;
      }
      default -> {
        // retry and unknown fields: ignored, as the format asks
      }
    }
  }
}
