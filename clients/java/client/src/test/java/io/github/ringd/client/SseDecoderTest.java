package io.github.ringd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The event-stream decoder on its own. */
class SseDecoderTest {
  private static final byte[] INPUT =
      String.join(
              "",
              ": hello\r\n",
              "event: snapshot\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n",
              "event: keepalive\rdata: x\r\r",
              "data:y\n\n",
              "event: nothing\n\n",
              "event:\ndata: z\n\n")
          .getBytes(StandardCharsets.UTF_8);

  private static final List<SseDecoder.Event> WANT =
      List.of(
          new SseDecoder.Event("snapshot", "7", "{\"a\":\n1}"),
          new SseDecoder.Event("keepalive", null, "x"),
          new SseDecoder.Event("message", null, "y"),
          new SseDecoder.Event("message", null, "z"));

  /** One stream cut into pieces of every size, with CRLF, CR and LF line ends. */
  @Test
  void eventsSurviveAnyChunkingAndLineEnding() throws Exception {
    for (int piece = 1; piece <= INPUT.length; piece++) {
      SseDecoder d = new SseDecoder();
      List<SseDecoder.Event> got = new ArrayList<>();
      for (int i = 0; i < INPUT.length; i += piece) {
        int n = Math.min(piece, INPUT.length - i);
        byte[] chunk = new byte[n];
        System.arraycopy(INPUT, i, chunk, 0, n);
        d.feed(chunk, n, got);
      }
      assertEquals(WANT, got, "pieces of " + piece);
    }
  }

  /** Random cuts (seeded): the same events. */
  @Test
  void eventsSurviveRandomCuts() throws Exception {
    long seed = 0x55e;
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int round = 0; round < 500; round++) {
      SseDecoder d = new SseDecoder();
      List<SseDecoder.Event> got = new ArrayList<>();
      int i = 0;
      while (i < INPUT.length) {
        int n = Math.min(1 + rnd.nextInt(12), INPUT.length - i);
        byte[] chunk = new byte[n + 3];
        System.arraycopy(INPUT, i, chunk, 0, n); // the tail past n is garbage, never read
        chunk[n] = (byte) 0xff;
        d.feed(chunk, n, got);
        i += n;
      }
      assertEquals(WANT, got, "seed " + seed + ", round " + round);
    }
  }

  /** A line that is not UTF-8 is an error; the events before it are kept. */
  @Test
  void invalidUtf8IsAnError() {
    byte[] b = "data: ok\n\ndata: \u0000".replace('\u0000', '?').getBytes(StandardCharsets.UTF_8);
    b[b.length - 1] = (byte) 0xff;
    byte[] withEnd = new byte[b.length + 1];
    System.arraycopy(b, 0, withEnd, 0, b.length);
    withEnd[b.length] = '\n';
    List<SseDecoder.Event> got = new ArrayList<>();
    SseDecoder d = new SseDecoder();
    assertThrows(
        SseDecoder.MalformedStreamException.class, () -> d.feed(withEnd, withEnd.length, got));
    assertEquals(List.of(new SseDecoder.Event("message", null, "ok")), got);
  }
}
