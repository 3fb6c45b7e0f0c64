package io.github.ringd.client;

import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The requests and streams a client's threads have open, so that closing it ends them at once: a
 * thread blocked reading a response body is not woken by an interrupt, only by closing the stream.
 */
final class Inflight {
  private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** Registers c to be closed on {@link #close}; closes it at once if already closed. */
  void track(AutoCloseable c) throws InterruptedException {
    open.add(c);
    if (closed) {
      open.remove(c);
      quietly(c);
      throw new InterruptedException("closed");
    }
  }

  void untrack(AutoCloseable c) {
    open.remove(c);
  }

  boolean closed() {
    return closed;
  }

  /** Closes everything open, and everything tracked from now on. */
  void close() {
    closed = true;
    for (Iterator<AutoCloseable> it = open.iterator(); it.hasNext(); ) {
      AutoCloseable c = it.next();
      it.remove();
      quietly(c);
    }
  }

  static void quietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // Closing to cut a request short: what it says does not matter.
    }
  }
}
