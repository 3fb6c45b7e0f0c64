package io.github.ringd.client;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread shared by every client for its time limits (a stream's idle timeout, a body
 * read's deadline): each limit is one scheduled task that closes what it guards.
 */
final class Scheduler {
  private Scheduler() {}

  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private static ScheduledThreadPoolExecutor timer() {
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread th = new Thread(r, "ringd-client-timer");
              th.setDaemon(true);
              return th;
            });
    t.setRemoveOnCancelPolicy(true);
    return t;
  }

  static ScheduledFuture<?> after(long nanos, Runnable task) {
    return TIMER.schedule(task, Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  /**
   * An idle limit: fires once nothing {@link #touch touched} it for the idle time. Touching costs a
   * volatile write; the timer re-arms itself for what remains when it finds a recent touch.
   */
  static final class Idle {
    private final long idleNanos;
    private final Runnable onIdle;
    private volatile long last = System.nanoTime();
    private volatile boolean fired;
    private volatile boolean cancelled;
    private volatile ScheduledFuture<?> task;

    Idle(long idleNanos, Runnable onIdle) {
      this.idleNanos = idleNanos;
      this.onIdle = onIdle;
      this.task = after(idleNanos, this::check);
    }

    void touch() {
      last = System.nanoTime();
    }

    boolean fired() {
      return fired;
    }

    void cancel() {
      cancelled = true;
      task.cancel(false);
    }

    private void check() {
      if (cancelled) {
        return;
      }
      long quiet = System.nanoTime() - last;
      if (quiet < idleNanos) {
        task = after(idleNanos - quiet, this::check);
        return;
      }
      fired = true;
      onIdle.run();
    }
  }
}
