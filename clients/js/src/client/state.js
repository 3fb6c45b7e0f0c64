// The state a client's watch and ack loops share with its methods: the
// views routed on, the status, its waiters and the events.

/** @typedef {import("./view.js").RingView} RingView */
/** @typedef {"connecting" | "sse" | "long-poll"} Transport */
/** @typedef {"auto" | "sse" | "long-poll"} WatchMode */
/** @typedef {"applied" | "refused" | "connected" | "disconnected" | "acked" | "deleted"} RingEventType */

/**
 * What the watch is doing, for health checks, metrics and tests.
 * Counters only grow.
 * @typedef {object} Status
 * @property {number} version the version routed on; 0 before the first
 * @property {string} fingerprint that version's verified fingerprint ("" before)
 * @property {number} acked the newest version whose ack the server accepted while it was routed on
 * @property {boolean} deleted the server said the ring was deleted (the client keeps routing on `version`)
 * @property {Transport} transport how new versions arrive now
 * @property {string} server the server the watch is connected to, "" for none
 * @property {Error | null} lastError the most recent failure; not cleared by success
 * @property {Date | null} lastErrorAt
 * @property {number} applied versions verified and swapped in
 * @property {number} refused versions refused
 * @property {number} reconnects watch attempts that failed and were made again
 * @property {number} tableDownloads table versions built from a downloaded table
 * @property {number} tableMovesApplied table versions built from the previous one and its moves
 * @property {number} acks acks the server accepted
 * @property {number} ackFailures acks it did not
 */

/**
 * @typedef {object} RingEventFields
 * @property {number} [version]
 * @property {number} [from]
 * @property {boolean} [reset]
 * @property {string} [server]
 * @property {Transport} [transport]
 * @property {Error | null} [error]
 * @property {number} [took]
 */

/**
 * An event of a RingClient, for metrics and logs; the fields its type
 * names are set, the others are their zero values.
 */
export class RingEvent extends Event {
  /**
   * @param {RingEventType} type
   * @param {RingEventFields} fields
   */
  constructor(type, fields) {
    super(type);
    /** @readonly @type {RingEventType} */ this.kind = type;
    /** The version concerned. @readonly */ this.version = fields.version ?? 0;
    /** The version held before an "applied", 0 for none. @readonly */ this.from = fields.from ?? 0;
    /** An "applied" that replaced the client's history. @readonly */ this.reset = fields.reset ?? false;
    /** @readonly */ this.server = fields.server ?? '';
    /** @readonly @type {Transport} */ this.transport = fields.transport ?? 'connecting';
    /** The failure, if any. @readonly @type {Error | null} */ this.error = fields.error ?? null;
    /** Milliseconds spent verifying (and completing a table), for "applied". @readonly */
    this.took = fields.took ?? 0;
  }
}

/** @returns {Status} */
function initialStatus() {
  return {
    version: 0,
    fingerprint: '',
    acked: 0,
    deleted: false,
    transport: 'connecting',
    server: '',
    lastError: null,
    lastErrorAt: null,
    applied: 0,
    refused: 0,
    reconnects: 0,
    tableDownloads: 0,
    tableMovesApplied: 0,
    acks: 0,
    ackFailures: 0,
  };
}

export class Shared {
  /** @type {{ current: RingView, previous: RingView | null } | null} */
  views = null;
  /** @type {Status} */
  #status = initialStatus();
  /** @type {Set<() => void>} */
  #waiters = new Set();

  /**
   * @param {EventTarget} target where events are dispatched
   * @param {((event: RingEvent) => void) | undefined} observer
   */
  constructor(target, observer) {
    this.target = target;
    this.observer = observer;
  }

  /** The view routed on, null before the first version. */
  current() {
    return this.views === null ? null : this.views.current;
  }

  /** @returns {Readonly<Status>} a copy */
  status() {
    return Object.freeze({ ...this.#status });
  }

  /**
   * Changes the status and wakes the waiters.
   * @param {(s: Status) => void} f
   */
  update(f) {
    f(this.#status);
    for (const w of [...this.#waiters]) w();
  }

  /**
   * Records a failure.
   * @param {Error} error
   */
  setError(error) {
    this.update((s) => {
      s.lastError = error;
      s.lastErrorAt = new Date();
    });
  }

  /**
   * Calls wake on every status change until the returned function is
   * called.
   * @param {() => void} wake
   */
  onChange(wake) {
    this.#waiters.add(wake);
    return () => this.#waiters.delete(wake);
  }

  /**
   * Installs view, keeping the one it replaces as the previous one; one
   * assignment, so no lookup pairs views of two swaps.
   * @param {RingView} view
   */
  swap(view) {
    const previous = this.current();
    this.views = Object.freeze({ current: view, previous });
    return previous;
  }

  /**
   * Tells the observer and the listeners. Their failures are theirs: they
   * must never stop the watch, nor become an unhandled rejection of it.
   * @param {RingEventType} type
   * @param {RingEventFields} fields
   */
  emit(type, fields) {
    const event = new RingEvent(type, fields);
    if (this.observer !== undefined) {
      try {
        this.observer(event);
      } catch {
        // documented: an observer must not throw
      }
    }
    this.target.dispatchEvent(event);
  }
}
