// The loop that follows the ring: it streams or long-polls, verifies
// each version against its fingerprint and swaps it in.

import { buildPlacement, decodeSnapshot, describeSnapshot } from './core.js';
import { ApiError, asError, MalformedError, RingdError, SnapshotRefusedError, UnreachableError } from './errors.js';
import { longPollOnce } from './longpoll.js';
import { streamOnce } from './stream.js';
import { Backoff, sleep } from './timing.js';
import { RingView } from './view.js';

/** @typedef {import("./core.js").Snapshot} Snapshot */
/** @typedef {import("./core.js").Placement} Placement */
/** @typedef {import("./state.js").Transport} Transport */

/**
 * The settings the watch reads; times in milliseconds.
 * @typedef {object} WatchSettings
 * @property {import("./state.js").WatchMode} mode
 * @property {number} backoffMin
 * @property {number} backoffMax
 * @property {number} longPollWait
 * @property {number} idleTimeout
 * @property {number} sseRetry
 * @property {number} ownerCache string keys whose owner() each version remembers; 0 for none
 */

/**
 * Why one watch attempt ended.
 * @typedef {object} Failure
 * @property {boolean} [unsupported] the stream cannot be used through
 *   this server or a proxy in front of it (the route is missing, refused,
 *   or delivers nothing), so "auto" long-polls instead
 * @property {string} [server] the server to move behind the next one
 * @property {number} [retryAfter] the wait a 503 or 429 asked for with
 *   `Retry-After`, in milliseconds: the next attempt waits
 *   Backoff.afterRefusal of it rather than the backoff's next wait
 * @property {Error} error
 */

export class Watcher {
  /**
   * The newest version refused and its stated fingerprint. Watching
   * resumes after it: fetching it again would only fail again (a
   * tampered copy, or rules this client does not share), so the client
   * waits for the next version instead.
   */
  rejected = 0;
  rejectedFP = '';

  /**
   * @param {string} ring
   * @param {WatchSettings} settings
   * @param {import("./endpoints.js").Endpoints} eps
   * @param {import("./state.js").Shared} shared
   * @param {AbortSignal} signal the client's: aborted by close()
   * @param {() => void} onApplied tells the ack loop
   */
  constructor(ring, settings, eps, shared, signal, onApplied) {
    this.ring = ring;
    this.settings = settings;
    this.eps = eps;
    this.shared = shared;
    this.signal = signal;
    this.onApplied = onApplied;
    this.backoff = new Backoff(settings.backoffMin, settings.backoffMax);
  }

  /** Runs until the signal aborts; never rejects. */
  async run() {
    const { mode, sseRetry } = this.settings;
    let useStream = mode !== 'long-poll';
    let streamAgain = 0;
    while (!this.signal.aborted) {
      if (!useStream && mode === 'auto' && streamAgain > 0 && Date.now() >= streamAgain) {
        useStream = true;
        streamAgain = 0;
      }
      /** @type {Failure | null} */
      let f;
      try {
        f = useStream ? await streamOnce(this) : await longPollOnce(this);
      } catch (e) {
        // A bug of ours or of the core must not end the watch for good.
        f = { error: asError(e) };
      }
      if (f === null || this.signal.aborted) continue;
      if (f.unsupported && useStream && mode === 'auto') {
        // Only a stream falls back; a refused long-poll backs off.
        useStream = false;
        streamAgain = Date.now() + sseRetry;
        this.shared.setError(f.error);
        continue;
      }
      if (f.server !== undefined) this.eps.demote(f.server);
      const error = f.error;
      this.shared.update((s) => {
        s.transport = 'connecting';
        s.server = '';
        s.lastError = error;
        s.lastErrorAt = new Date();
        s.reconnects++;
      });
      this.shared.emit('disconnected', { server: f.server ?? '', error });
      const wait = f.retryAfter === undefined ? this.backoff.next() : this.backoff.afterRefusal(f.retryAfter);
      await sleep(wait, this.signal);
    }
  }

  /** The version routed on, 0 for none. */
  held() {
    return this.shared.current()?.version ?? 0;
  }

  /** Where to resume: after the version held, or after a newer refused one. */
  resumeAfter() {
    return Math.max(this.held(), this.rejected);
  }

  /**
   * @param {Transport} transport
   * @param {string} server
   */
  connected(transport, server) {
    let changed = false;
    this.shared.update((s) => {
      changed = s.transport !== transport || s.server !== server;
      s.transport = transport;
      s.server = server;
    });
    if (changed) this.shared.emit('connected', { server, transport });
  }

  /**
   * Turns a failed request into a failure, noting a deleted ring. A 503
   * or 429 with a `Retry-After` (a ringd at its --max-watchers answers
   * 503 `at-capacity`) holds the next attempt back (Backoff.afterRefusal).
   * It names no server to demote: after a 503, Endpoints.open has already
   * tried every other server within the attempt (a 429 is not tried
   * elsewhere, as for any request), and the next attempt starts again
   * from the preferred one.
   * @param {unknown} e
   * @returns {Failure}
   */
  refused(e) {
    const error = asError(e);
    if (error instanceof ApiError) {
      if (error.slug === 'ring-not-found') {
        if (this.held() > 0) this.markDeleted();
      } else if ((error.status === 503 || error.status === 429) && error.retryAfter !== undefined) {
        return { error, retryAfter: error.retryAfter };
      } else if ([404, 405, 406, 501].includes(error.status)) {
        return { unsupported: true, error };
      }
    }
    return { error };
  }

  markDeleted() {
    let newly = false;
    this.shared.update((s) => {
      newly = !s.deleted;
      s.deleted = true;
    });
    if (newly) this.shared.emit('deleted', { version: this.held() });
  }

  /**
   * Records a refused version; the view held stays.
   * @param {number} version
   * @param {string} stated its fingerprint, "" when unknown
   * @param {unknown} cause
   */
  reject(version, stated, cause) {
    if (stated !== '') {
      if (this.rejected === version && this.rejectedFP === stated) return;
      if (this.rejected <= version) {
        this.rejected = version;
        this.rejectedFP = stated;
      }
    }
    const error = new SnapshotRefusedError(this.ring, version, cause);
    this.shared.update((s) => {
      s.refused++;
      s.lastError = error;
      s.lastErrorAt = new Date();
    });
    this.shared.emit('refused', { version, error });
  }

  /**
   * Decodes a snapshot's JSON and applies it.
   * @param {string} text
   * @param {string} what where it came from, for errors
   * @param {boolean} reset
   * @param {number} id the version the event or URL named, 0 for none
   */
  async applyJSON(text, what, reset, id) {
    let s;
    try {
      s = decodeSnapshot(text);
    } catch (e) {
      this.reject(id, '', new MalformedError(what, e));
      return;
    }
    await this.apply(s, reset);
  }

  /**
   * Verifies s and, if it holds, routes on it from now on.
   * @param {Snapshot} s
   * @param {boolean} reset
   */
  async apply(s, reset) {
    const info = describeSnapshot(s);
    const held = this.shared.current();
    if (held !== null) {
      const same = info.version === held.version && info.fingerprint === held.fingerprint;
      if (same || (!reset && info.version <= held.version)) return;
    }
    if (info.ring !== '' && info.ring !== this.ring) {
      const why = new RingdError(`it names ring ${info.ring}`);
      this.reject(info.version, info.fingerprint, new MalformedError('snapshot', why));
      return;
    }
    const start = Date.now();
    /** @type {Placement} */
    let placement;
    /** @type {"snapshot" | "moves" | "download"} */
    let built;
    try {
      [placement, built] = await this.verified(held, s, info);
    } catch (e) {
      if (this.signal.aborted) return;
      if (e instanceof UnreachableError || (e instanceof ApiError && (e.type === undefined || e.status >= 500))) {
        // A table download that did not get through says nothing about
        // the version: keep the one held and take it again as it comes.
        this.shared.setError(asError(e));
        return;
      }
      this.reject(info.version, info.fingerprint, e);
      return;
    }
    if (reset || this.rejected <= info.version) {
      // Past the refused version, or on a history without it.
      this.rejected = 0;
      this.rejectedFP = '';
    }
    const previous = this.shared.swap(new RingView(s, placement, this.settings.ownerCache));
    this.shared.update((st) => {
      st.version = info.version;
      st.fingerprint = info.fingerprint;
      st.deleted = false;
      st.applied++;
      if (built === 'moves') st.tableMovesApplied++;
      if (built === 'download') st.tableDownloads++;
      // An ack of a higher version belongs to a deleted ring's history.
      if (st.acked > info.version) st.acked = 0;
    });
    this.onApplied();
    this.shared.emit('applied', {
      version: info.version,
      from: previous?.version ?? 0,
      reset,
      took: Date.now() - start,
    });
  }

  /**
   * Builds and verifies s's placement. A table snapshot carries no table:
   * it is completed from the version held and this version's moves when
   * the client holds version − 1, otherwise (or when the moves do not
   * verify) by downloading …/snapshots/{v}/table. Either way the result
   * must hash to the snapshot's fingerprint.
   * @param {RingView | null} held
   * @param {Snapshot} s
   * @param {ReturnType<typeof describeSnapshot>} info
   * @returns {Promise<[Placement, "snapshot" | "moves" | "download"]>}
   */
  async verified(held, s, info) {
    if (!info.isTable || info.activeNodes.length === 0) {
      // No active node: an empty table, nothing to download.
      return [await buildPlacement(s, {}), 'snapshot'];
    }
    if (
      held !== null &&
      info.hasMoves &&
      held.version + 1 === info.version &&
      describeSnapshot(held.snapshot).isTable
    ) {
      try {
        return [await buildPlacement(s, { previous: held.placement }), 'moves'];
      } catch {
        // Moves that do not verify are no reason to refuse the version:
        // the table itself may still be good.
      }
    }
    const path = `/v1/rings/${this.ring}/snapshots/${info.version}/table`;
    const a = await this.eps.call('GET', path, { signal: this.signal });
    return [await buildPlacement(s, { table: a.body }), 'download'];
  }
}
