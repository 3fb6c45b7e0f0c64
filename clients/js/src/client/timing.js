// Waits, backoff and signals, on nothing but timers and AbortSignal, so
// they run the same in Node.js 18 (which lacks AbortSignal.any) and in
// browsers.

/**
 * Doubles from min to max; each wait is drawn uniformly from the upper
 * half of the current step ("equal jitter"): never shorter than half the
 * step, so a flapping server is not hammered, yet spread out so that
 * clients that lost the same server do not return together.
 */
export class Backoff {
  /**
   * @param {number} min milliseconds
   * @param {number} max milliseconds
   * @param {() => number} [random] uniform in [0, 1), for tests
   */
  constructor(min, max, random = Math.random) {
    this.min = min;
    this.max = max;
    this.step = min;
    this.random = random;
  }

  /** Back to the shortest wait, after something worked. */
  reset() {
    this.step = this.min;
  }

  /** The next wait, in milliseconds. */
  next() {
    const step = this.step;
    this.step = Math.min(2 * this.step, this.max);
    return step / 2 + this.random() * (step / 2);
  }

  /**
   * The next wait after a watch or long-poll attempt refused with 503 or
   * 429 and a `Retry-After` of retryAfter milliseconds: retryAfterWait of
   * the backoff's next wait (so the backoff advances as after any
   * failure), its maximum and a jitter uniform in [0, 1 s).
   * @param {number} retryAfter milliseconds
   */
  afterRefusal(retryAfter) {
    return retryAfterWait(this.next(), retryAfter, this.max, this.random() * 1000);
  }
}

/**
 * The wait before the next watch or long-poll attempt after one was
 * answered 503 or 429 with a `Retry-After` in delta-seconds, the rule of
 * every ringd client (milliseconds throughout):
 *
 *     max(next, min(retryAfter, max) + jitter)
 *
 * So a refused client comes back no sooner than its backoff would, nor
 * sooner than the server asked; the ask is cut to the backoff's maximum,
 * so a server cannot park a client for long; and the jitter spreads the
 * clients told the same whole second (ringd draws it from 1 to 10 s when
 * at its `--max-watchers`) over that second instead of bringing them back
 * in one instant.
 * @param {number} next the backoff's next wait
 * @param {number} retryAfter what Retry-After asked for
 * @param {number} max the backoff's maximum
 * @param {number} jitter uniform in [0, 1000)
 * @returns {number}
 */
export function retryAfterWait(next, retryAfter, max, jitter) {
  return Math.max(next, Math.min(retryAfter, max) + jitter);
}

/**
 * Waits ms, or until signal aborts; resolves true after the full wait,
 * false on abort. Never rejects.
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<boolean>}
 */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A signal that aborts when parent does or after ms (if given), with a
 * TimeoutError DOMException then, as AbortSignal.timeout does. Call
 * `done` when the work ends, so that neither the timer nor the listener
 * outlives it.
 * @param {AbortSignal} parent
 * @param {number} [ms]
 * @returns {{ signal: AbortSignal, controller: AbortController, done: () => void }}
 */
export function childSignal(parent, ms) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  if (parent.aborted) {
    controller.abort(parent.reason);
  } else {
    parent.addEventListener('abort', onAbort, { once: true });
    if (ms !== undefined) {
      timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
    }
  }
  const done = () => {
    clearTimeout(timer);
    parent.removeEventListener('abort', onAbort);
  };
  return { signal: controller.signal, controller, done };
}

/**
 * A wake-up with a capacity of one: notify() before anyone waits is kept
 * for the next wait, and several notifies count as one (the newest state
 * is what the waiter reads anyway).
 */
export class Notifier {
  #pending = false;
  /** @type {(() => void) | undefined} */
  #wake;

  notify() {
    if (this.#wake !== undefined) {
      this.#wake();
    } else {
      this.#pending = true;
    }
  }

  /**
   * Waits for a notify, ms, or signal; never rejects.
   * @param {number} ms
   * @param {AbortSignal} signal
   * @returns {Promise<void>}
   */
  wait(ms, signal) {
    if (this.#pending || signal.aborted) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      signal.addEventListener('abort', finish, { once: true });
      this.#wake = finish;
    });
  }
}
