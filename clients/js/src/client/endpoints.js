// Requests to a set of equivalent ringd servers over fetch, with
// failover: every instance in front of the same store answers the same.

import { apiError, InvalidOptionError, MalformedError, UnreachableError } from './errors.js';
import { childSignal } from './timing.js';

/** A plain answer is bounded, so a broken server cannot make the client
 * allocate without end (a table at 2^20 partitions is a few MB). */
export const MAX_BODY = 256 << 20;

/**
 * Splits comma-separated lists (as RINGD_ADDR is), trims, checks the
 * scheme and drops a trailing slash.
 * @param {string | readonly string[]} urls
 * @returns {string[]}
 */
export function parseUrls(urls) {
  const out = [];
  for (const item of typeof urls === 'string' ? [urls] : urls) {
    for (const raw of String(item).split(',')) {
      const u = raw.trim().replace(/\/+$/, '');
      if (u === '') continue;
      const rest = /^https?:\/\/(.*)$/.exec(u)?.[1];
      if (rest === undefined || rest === '' || /\s/.test(rest)) {
        throw new InvalidOptionError(`server URL "${u}": use http://host:port or https://host:port`);
      }
      out.push(u);
    }
  }
  if (out.length === 0) throw new InvalidOptionError('no server URL given');
  return out;
}

/**
 * @typedef {object} Answer
 * @property {number} status
 * @property {Headers} headers
 * @property {Uint8Array} body
 * @property {string} server
 */

/**
 * @typedef {object} RequestInit2
 * @property {string} [body] JSON text
 * @property {Record<string, string>} [headers]
 * @property {AbortSignal} signal
 */

export class Endpoints {
  /** the index of the server tried first: the one that answered last */
  #preferred = 0;

  /**
   * @param {readonly string[]} urls
   * @param {{ token?: string, fetch?: typeof fetch, requestTimeout: number }} options
   */
  constructor(urls, options) {
    this.urls = urls;
    this.token = options.token ?? '';
    // Bound to globalThis: a browser's fetch refuses another `this`.
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.requestTimeout = options.requestTimeout;
  }

  /** The server tried first. */
  first() {
    return this.urls[this.#preferred % this.urls.length];
  }

  /**
   * Makes the server after url the next one tried, if url is the
   * preferred one: watchers that lost their stream on it move on.
   * @param {string} url
   */
  demote(url) {
    const i = this.urls.indexOf(url);
    if (i >= 0 && i === this.#preferred) this.#preferred = (i + 1) % this.urls.length;
  }

  /**
   * Sends a request to the preferred server, then to each other one while
   * the failure says nothing about the request itself: no connection, or
   * 502, 503, 504 (a 503 `at-capacity` included, so a watch refused by a
   * full instance is tried on the others at once; only when the last one
   * tried refuses too does its Retry-After hold the next attempt back,
   * and the ApiError thrown is that last one's). A request that reached a server but got no answer is
   * tried elsewhere only if it is a GET, since it may have taken effect.
   * Resolves with the open response for 2xx and 304 and the server that
   * gave it; other statuses reject with an ApiError.
   * @param {string} method
   * @param {string} path
   * @param {RequestInit2} init
   * @returns {Promise<{ response: Response, server: string }>}
   */
  async open(method, path, init) {
    const start = this.#preferred;
    /** @type {unknown} */
    let last;
    for (let i = 0; i < this.urls.length; i++) {
      const idx = (start + i) % this.urls.length;
      const server = this.urls[idx];
      /** @type {Record<string, string>} */
      const headers = { ...init.headers };
      if (init.body !== undefined) headers['Content-Type'] = 'application/json';
      if (this.token !== '') headers.Authorization = `Bearer ${this.token}`;
      let response;
      try {
        response = await this.fetch(server + path, {
          method,
          headers,
          body: init.body,
          signal: init.signal,
          // A browser must not answer a long-poll or a version from its
          // cache, nor turn the server's 304 into a cached 200.
          cache: 'no-store',
          redirect: 'error',
        });
      } catch (e) {
        if (init.signal.aborted) throw init.signal.reason;
        last = new UnreachableError(this.urls, e);
        if (method === 'GET' || notConnected(e)) continue;
        throw last;
      }
      if ((response.status >= 200 && response.status < 300) || response.status === 304) {
        this.#preferred = idx;
        return { response, server };
      }
      const err = await problemOf(response, server + path);
      if (response.status >= 502 && response.status <= 504) {
        last = err;
        continue;
      }
      this.#preferred = idx;
      throw err;
    }
    throw last;
  }

  /**
   * open with a time limit (the endpoints' own by default), reading the
   * whole body.
   * @param {string} method
   * @param {string} path
   * @param {RequestInit2 & { timeout?: number }} init
   * @returns {Promise<Answer>}
   */
  async call(method, path, init) {
    const { signal, done } = childSignal(init.signal, init.timeout ?? this.requestTimeout);
    // Past the time limit (not the caller's abort), the server did not
    // answer: a typed error, with the TimeoutError as its cause.
    const late = () => !init.signal.aborted && signal.aborted;
    try {
      let opened;
      try {
        opened = await this.open(method, path, { ...init, signal });
      } catch (e) {
        if (late()) throw new UnreachableError(this.urls, signal.reason);
        throw e;
      }
      const { response, server } = opened;
      let body;
      try {
        body = await readAll(response, MAX_BODY);
      } catch (e) {
        if (late()) throw new UnreachableError([server], signal.reason);
        if (signal.aborted) throw signal.reason;
        throw new MalformedError(server + path, e);
      }
      return { status: response.status, headers: response.headers, body, server };
    } finally {
      done();
    }
  }
}

/**
 * Whether a fetch failure happened before the request was sent (Node's
 * fetch names the socket error's code in its cause; a browser says
 * nothing, and then a non-GET is not retried).
 * @param {unknown} e
 */
function notConnected(e) {
  const cause = e instanceof Error ? e.cause : undefined;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  return ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code);
}

/**
 * Reads a body up to limit bytes.
 * @param {Response} response
 * @param {number} limit
 * @returns {Promise<Uint8Array>}
 */
export async function readAll(response, limit) {
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  /** @type {Uint8Array[]} */
  const pieces = [];
  let length = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > limit) {
        await reader.cancel();
        throw new Error(`body over ${limit} bytes`);
      }
      pieces.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Turns an error response into an ApiError, with the problem document if
 * the body is one.
 * @param {Response} response
 * @param {string} url
 */
export async function problemOf(response, url) {
  /** @type {import("./errors.js").Problem} */
  const problem = { status: response.status, url };
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  if (retryAfter !== undefined) problem.retryAfter = retryAfter;
  try {
    const raw = JSON.parse(new TextDecoder().decode(await readAll(response, 1 << 20)));
    if (typeof raw === 'object' && raw !== null && typeof raw.type === 'string' && raw.type.startsWith('urn:')) {
      problem.type = raw.type;
      for (const k of /** @type {const} */ (['title', 'detail', 'field'])) {
        if (typeof raw[k] === 'string') problem[k] = raw[k];
      }
    }
  } catch {
    // A proxy's error page, or a body cut short: the status says enough.
  }
  return apiError(problem);
}

/** The longest Retry-After read: 2^64 - 1 s, as the Rust and Go clients do. */
const MAX_RETRY_AFTER = 2n ** 64n - 1n;

/**
 * Reads a `Retry-After` header in delta-seconds (RFC 9110 section 10.2.3:
 * digits only; spaces around them allowed) as milliseconds. The HTTP-date
 * form, a sign, a fraction, anything else, or more than 2^64 - 1 s counts
 * as none (undefined). The wait is cut to the backoff's maximum anyway
 * (retryAfterWait).
 * @param {string | null} value the header, null when absent
 * @returns {number | undefined}
 */
export function parseRetryAfter(value) {
  if (value === null) return undefined;
  const v = value.replace(/^[ \t]+|[ \t]+$/g, '');
  if (!/^[0-9]+$/.test(v) || BigInt(v) > MAX_RETRY_AFTER) return undefined;
  return Number(v) * 1000;
}
