// Typed errors of the ring-following client. Every error the client
// reports (thrown, rejected, in status().lastError or an event) is a
// RingdError, so a caller can branch with `instanceof` instead of
// parsing messages; the errors of the placement core (a fingerprint
// mismatch) arrive as the `cause` of a SnapshotRefusedError.

/** The base class of every error of this client. */
export class RingdError extends Error {
  /**
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A setting out of range, a malformed URL, ring name or client id. */
export class InvalidOptionError extends RingdError {}

/** The client was closed. */
export class ClosedError extends RingdError {
  constructor() {
    super('ringd: the client is closed');
  }
}

/**
 * @typedef {object} Problem
 * @property {number} status the HTTP status
 * @property {string} url the URL asked
 * @property {string} [type] `urn:ringd:problem:<slug>`; absent without a problem document
 * @property {string} [title]
 * @property {string} [detail] what went wrong and how to fix it
 * @property {string} [field] the offending input, if any
 * @property {number} [retryAfter] the answer's `Retry-After` in delta-seconds, as
 *   milliseconds; absent without one, or in the HTTP-date form, or unreadable
 */

/**
 * An error status from ringd, with its RFC 9457 problem document when the
 * server sent one (a proxy's own error page has none: then only `status`
 * and `url` are set).
 */
export class ApiError extends RingdError {
  /** @param {Problem} problem */
  constructor(problem) {
    const slug = slugOf(problem.type);
    super(
      problem.type === undefined
        ? `ringd answered ${problem.status} from ${problem.url}`
        : `ringd refused ${problem.url}: ${problem.status} ${slug}: ${problem.detail ?? ''}`,
    );
    /** @readonly */ this.status = problem.status;
    /** @readonly */ this.url = problem.url;
    /** @readonly @type {string | undefined} */ this.type = problem.type;
    /** @readonly @type {string | undefined} */ this.title = problem.title;
    /** @readonly @type {string | undefined} */ this.detail = problem.detail;
    /** @readonly @type {string | undefined} */ this.field = problem.field;
    /**
     * The wait the answer's `Retry-After` asks for, in milliseconds, when
     * it has one in delta-seconds ("7"); undefined for none, the HTTP-date
     * form or garbage. ringd sends one with a watch or long-poll refused
     * because the instance serves its `--max-watchers` (503 `at-capacity`,
     * 1 to 10 s drawn at random); the watch honours it (retryAfterWait).
     * @readonly @type {number | undefined}
     */
    this.retryAfter = problem.retryAfter;
  }

  /** The last part of `type` ("ring-not-found"), "" without one. */
  get slug() {
    return slugOf(this.type);
  }
}

/** 401: the server wants a token and got none, or a wrong one. */
export class UnauthorizedError extends ApiError {}

/** 403: the token may not do that (the read token for a mutation). */
export class ForbiddenError extends ApiError {}

/** 404 `ring-not-found`. */
export class RingNotFoundError extends ApiError {}

/**
 * The ApiError subclass a problem names.
 * @param {Problem} problem
 * @returns {ApiError}
 */
export function apiError(problem) {
  if (problem.status === 401) return new UnauthorizedError(problem);
  if (problem.status === 403) return new ForbiddenError(problem);
  if (problem.status === 404 && slugOf(problem.type) === 'ring-not-found') {
    return new RingNotFoundError(problem);
  }
  return new ApiError(problem);
}

/** @param {string | undefined} type */
function slugOf(type) {
  return type === undefined ? '' : type.replace(/^urn:ringd:problem:/, '');
}

/** No server answered: every URL was tried. `cause` is the last failure. */
export class UnreachableError extends RingdError {
  /**
   * @param {readonly string[]} urls
   * @param {unknown} cause
   */
  constructor(urls, cause) {
    super(`no ringd server reachable (${urls.join(',')}): ${describe(cause)}`, { cause });
    /** @readonly */ this.urls = urls;
  }
}

/** A body or event that is not what the API documents. */
export class MalformedError extends RingdError {
  /**
   * @param {string} what what was being read: a URL or an event type
   * @param {unknown} cause
   */
  constructor(what, cause) {
    super(`unexpected response from ringd: ${what}: ${describe(cause)}`, { cause });
    /** @readonly */ this.what = what;
  }
}

/**
 * A ring version refused: its placement did not hash to its fingerprint,
 * the placement core refused it, or it could not be decoded. The client
 * keeps routing on the version it held. `cause` is the placement core's
 * error (a fingerprint mismatch names both fingerprints) or a
 * MalformedError.
 */
export class SnapshotRefusedError extends RingdError {
  /**
   * @param {string} ring
   * @param {number} version 0 when the event did not say
   * @param {unknown} cause
   */
  constructor(ring, version, cause) {
    super(`ring ${ring} v${version} refused: ${describe(cause)}`, { cause });
    /** @readonly */ this.ring = ring;
    /** @readonly */ this.version = version;
  }
}

/**
 * A wait (ready, waitForVersion, waitFor) that ended before its condition
 * held: its signal was aborted (`reason` is the signal's reason) or the
 * client was closed (`reason` is a ClosedError). `lastError` is the last
 * failure the client met, so a caller sees why it never got there (a
 * wrong token is an UnauthorizedError).
 */
export class WaitError extends RingdError {
  /**
   * @param {unknown} reason
   * @param {Error | null} lastError
   */
  constructor(reason, lastError) {
    super(
      lastError === null
        ? `ringd: wait ended: ${describe(reason)}`
        : `ringd: wait ended: ${describe(reason)} (last error: ${lastError.message})`,
      { cause: lastError ?? reason },
    );
    /** @readonly */ this.reason = reason;
    /** @readonly */ this.lastError = lastError;
  }
}

/**
 * @param {unknown} e
 * @returns {string}
 */
export function describe(e) {
  if (e instanceof Error) {
    // fetch's TypeError hides the socket error in its cause.
    const inner = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return e.message + inner;
  }
  return String(e);
}

/**
 * An error for status and events: errors of other kinds are wrapped.
 * @param {unknown} e
 * @returns {Error}
 */
export function asError(e) {
  return e instanceof Error ? e : new RingdError(String(e));
}
