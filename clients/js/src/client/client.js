// RingClient: follows one ring and answers lookups from a verified copy
// of its placement in memory, with no network call on the lookup path.

import { ackLoop } from './ack.js';
import { ClosedError, InvalidOptionError, WaitError } from './errors.js';
import { Endpoints, parseUrls } from './endpoints.js';
import { Shared } from './state.js';
import { Backoff, Notifier } from './timing.js';
import { Watcher } from './watch.js';

/** @typedef {import("./state.js").Status} Status */
/** @typedef {import("./state.js").RingEvent} RingEvent */
/** @typedef {import("./view.js").RingView} RingView */
/** @typedef {import("./view.js").Key} Key */

/**
 * Settings of a RingClient; times are milliseconds.
 * @typedef {object} RingClientOptions
 * @property {string} [token] sent as `Authorization: Bearer …`; the read token is enough
 * @property {string} [clientId] the id acks are sent under: 1-128 of A-Z a-z 0-9 . _ - :
 *   (default: `js-` and 8 random hex digits, new on every start: set one in production so
 *   that a restarted process is the same client to the server and its rollout gates)
 * @property {boolean} [ack] send acks (default true)
 * @property {number} [ackInterval] re-ack the current version this often, below the
 *   server's --client-ttl (default 60,000)
 * @property {"library" | "proxy"} [kind] what kind of client acks (default "library")
 * @property {import("./state.js").WatchMode} [watchMode] "auto" streams and long-polls while
 *   the stream is unusable; "sse" and "long-poll" pin one transport (default "auto")
 * @property {number} [backoffMin] first wait after a failure (default 100); it doubles
 *   up to backoffMax, each wait drawn from the upper half of the step
 * @property {number} [backoffMax] longest wait (default 10,000). A watch or long-poll
 *   answered 503 or 429 with a `Retry-After` in delta-seconds (a ringd at its
 *   --max-watchers answers 503 `at-capacity` with 1 to 10 s drawn at random), once every
 *   server was tried, waits max(the backoff's next wait, min(Retry-After, backoffMax) +
 *   a jitter uniform in [0, 1 s)) before the next attempt, and the backoff advances as
 *   after any failure: so a backoffMax below 10,000 also cuts what a full server asks for
 * @property {number} [longPollWait] each long-poll's wait, 1 to 300,000 (default 30,000)
 * @property {number} [idleTimeout] reopen a stream silent this long; also the wait for a
 *   stream's first event before "auto" takes it for unusable (default 60,000)
 * @property {number} [ownerCache] remember owner() for this many recent string keys of each
 *   version, as hashring does (default 0, none): an answer then costs a Map lookup
 * @property {number} [sseRetry] how long "auto" long-polls before streaming again (default 300,000)
 * @property {number} [requestTimeout] time limit of plain requests (default 10,000)
 * @property {typeof fetch} [fetch] the fetch to use (default globalThis.fetch)
 * @property {(event: RingEvent) => void} [observer] called with every event, like the
 *   listeners; it must not block, and what it throws is dropped
 */

/**
 * A key's owner now and before the last change, from one read (never a
 * pair from two swaps).
 * @typedef {object} Handoff
 * @property {string | null} ownerNow
 * @property {string | null} ownerBefore null before a second version, or when that
 *   version had no active node
 * @property {number} version the version routed on (0 for none)
 * @property {number} versionBefore the version applied before it (0 for none): after
 *   a skip (a reset, a restart) it says which
 * @property {boolean} moved the key changed owner in the last change: a miss on
 *   ownerNow may be served by ownerBefore, which still holds it
 */

const RING_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Follows one ring: a background loop watches it (a Server-Sent Events
 * stream, or long-polls), verifies each version against its fingerprint,
 * swaps it in at once and acks it. Lookups answer from the verified copy
 * without waiting. Events ("applied", "refused", "connected",
 * "disconnected", "acked", "deleted") are RingEvents dispatched on the
 * client, for metrics and logs.
 */
export class RingClient extends EventTarget {
  #shared;
  #controller = new AbortController();
  /** @type {Promise<void>} */
  #loops;
  /** @type {Promise<void> | undefined} */
  #closed;

  /**
   * Starts following ring on the servers urls (equivalent ringd
   * instances; each entry may be a comma-separated list, as RINGD_ADDR
   * is). It returns at once: ready() waits for the first version.
   * @param {string | readonly string[]} urls
   * @param {string} ring
   * @param {RingClientOptions} [options]
   */
  constructor(urls, ring, options = {}) {
    super();
    const o = { ...options };
    if (!RING_NAME.test(ring)) {
      throw new InvalidOptionError(
        `ring name "${ring}": 1-63 characters of a-z 0-9 . _ -, starting with a letter or digit`,
      );
    }
    const clientId =
      o.clientId ??
      `js-${Math.floor(Math.random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0')}`;
    if (!CLIENT_ID.test(clientId)) {
      throw new InvalidOptionError(
        `client id "${clientId}": 1-128 characters of A-Z a-z 0-9 . _ - :, starting with a letter or digit`,
      );
    }
    const settings = {
      mode: o.watchMode ?? 'auto',
      backoffMin: o.backoffMin ?? 100,
      backoffMax: o.backoffMax ?? 10_000,
      longPollWait: o.longPollWait ?? 30_000,
      idleTimeout: o.idleTimeout ?? 60_000,
      sseRetry: o.sseRetry ?? 300_000,
      ownerCache: o.ownerCache ?? 0,
    };
    const ackInterval = o.ackInterval ?? 60_000;
    const requestTimeout = o.requestTimeout ?? 10_000;
    const kind = o.kind ?? 'library';
    const positive = (/** @type {number} */ n) => Number.isFinite(n) && n > 0;
    if (!positive(settings.backoffMin) || !(settings.backoffMax >= settings.backoffMin)) {
      throw new InvalidOptionError('the backoff must be more than zero, its maximum at least its minimum');
    }
    if (![settings.idleTimeout, settings.sseRetry, ackInterval, requestTimeout].every(positive)) {
      throw new InvalidOptionError(
        'the idle timeout, SSE retry, ack interval and request timeout must be more than zero',
      );
    }
    if (!(settings.longPollWait >= 1 && settings.longPollWait <= 300_000)) {
      throw new InvalidOptionError('the long-poll wait must be 1 ms to 5 min, the range the server accepts');
    }
    if (!(Number.isInteger(settings.ownerCache) && settings.ownerCache >= 0 && settings.ownerCache <= 2 ** 24)) {
      throw new InvalidOptionError('the owner cache must hold 0 (none) to 16,777,216 keys');
    }
    if (!['auto', 'sse', 'long-poll'].includes(settings.mode)) {
      throw new InvalidOptionError(`watch mode "${settings.mode}": use auto, sse or long-poll`);
    }
    if (kind !== 'library' && kind !== 'proxy') {
      throw new InvalidOptionError(`client kind "${kind}": use library or proxy`);
    }
    const eps = new Endpoints(parseUrls(urls), { token: o.token, fetch: o.fetch, requestTimeout });
    /** @readonly */ this.ring = ring;
    /** @readonly */ this.clientId = clientId;
    this.#shared = new Shared(this, o.observer);
    const signal = this.#controller.signal;
    const applied = new Notifier();
    const watcher = new Watcher(ring, settings, eps, this.#shared, signal, () => applied.notify());
    const loops = [watcher.run()];
    if (o.ack ?? true) {
      const backoff = new Backoff(settings.backoffMin, settings.backoffMax);
      loops.push(
        ackLoop({ ring, clientId, kind, interval: ackInterval, backoff, eps, shared: this.#shared, applied, signal }),
      );
    }
    this.#loops = Promise.all(loops).then(() => {});
  }

  /** The view routed on; null before the first version. */
  current() {
    return this.#shared.current();
  }

  /**
   * The node that owns key (a string, placed as its UTF-8 bytes, or
   * bytes); null before the first version or when no node is active.
   * @param {Key} key
   * @returns {string | null}
   */
  owner(key) {
    return this.#shared.current()?.owner(key) ?? null;
  }

  /**
   * The first r distinct nodes for key, owner first (fewer when fewer
   * nodes are active; none before the first version).
   * @param {Key} key
   * @param {number} r
   * @returns {string[]}
   */
  preferenceList(key, r) {
    return this.#shared.current()?.preferenceList(key, r) ?? [];
  }

  /**
   * The key's owner now and before the last change, so that a cache can
   * read a key that just moved through to its previous owner (and warm
   * the new one) instead of sending every client's misses of the moved
   * share to the backing store at once. Writes go to ownerNow alone.
   * @param {Key} key
   * @returns {Handoff}
   */
  handoff(key) {
    const views = this.#shared.views;
    if (views === null) return { ownerNow: null, ownerBefore: null, version: 0, versionBefore: 0, moved: false };
    const ownerNow = views.current.owner(key);
    const ownerBefore = views.previous?.owner(key) ?? null;
    return {
      ownerNow,
      ownerBefore,
      version: views.current.version,
      versionBefore: views.previous?.version ?? 0,
      moved: ownerBefore !== null && ownerBefore !== ownerNow,
    };
  }

  /**
   * BoundedLoad.pick on the version routed on; null before the first
   * version or with no active node.
   * @param {import("./bounded.js").BoundedLoad} bounded
   * @param {Key} key
   * @param {(node: string) => number} load in-flight requests of a node
   */
  pick(bounded, key, load) {
    const view = this.#shared.current();
    return view === null ? null : bounded.pick(view, key, load);
  }

  /** What the watch is doing now (a frozen copy). */
  status() {
    return this.#shared.status();
  }

  /**
   * Waits until done holds for the status, and resolves with that
   * status; rejects with a WaitError when the signal aborts or the client
   * is closed first, carrying the last error the client met.
   * @param {(status: Readonly<Status>) => boolean} done
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<Readonly<Status>>}
   */
  waitFor(done, { signal } = {}) {
    const shared = this.#shared;
    const closing = this.#controller.signal;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = () => {
        settled = true;
        stop();
        signal?.removeEventListener('abort', onAbort);
        closing.removeEventListener('abort', onClose);
      };
      const check = () => {
        const st = shared.status();
        let ok;
        try {
          ok = done(st);
        } catch (e) {
          finish();
          reject(e);
          return;
        }
        if (ok) {
          finish();
          resolve(st);
        }
      };
      const onAbort = () => {
        finish();
        reject(new WaitError(signal?.reason, shared.status().lastError));
      };
      const onClose = () => {
        finish();
        reject(new WaitError(new ClosedError(), shared.status().lastError));
      };
      const stop = shared.onChange(check);
      check();
      if (settled) return;
      if (signal?.aborted) onAbort();
      else if (closing.aborted) onClose();
      else {
        signal?.addEventListener('abort', onAbort, { once: true });
        closing.addEventListener('abort', onClose, { once: true });
      }
    });
  }

  /**
   * Waits for the first verified version. On failure the WaitError's
   * lastError says why (a wrong token is an UnauthorizedError).
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<RingView>}
   */
  async ready(options) {
    await this.waitFor((s) => s.version > 0, options);
    return /** @type {RingView} */ (this.#shared.current());
  }

  /**
   * Waits until the client routes on version v or a newer one.
   * @param {number} v
   * @param {{ signal?: AbortSignal }} [options]
   */
  waitForVersion(v, options) {
    return this.waitFor((s) => s.version >= v, options);
  }

  /**
   * Stops watching and acking; resolves when both loops have ended (no
   * event is dispatched after). Lookups keep answering from the last
   * version. Safe to call twice.
   * @returns {Promise<void>}
   */
  close() {
    if (this.#closed === undefined) {
      this.#controller.abort(new ClosedError());
      this.#closed = this.#loops;
    }
    return this.#closed;
  }
}
