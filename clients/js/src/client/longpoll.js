// One long-poll: GET …/snapshot?after=N&wait=D, filling gaps one version
// at a time so that listeners see every version, as on a stream.

import { decodeSnapshot, describeSnapshot } from './core.js';
import { ApiError, MalformedError } from './errors.js';

/** @typedef {import("./watch.js").Watcher} Watcher */
/** @typedef {import("./watch.js").Failure} Failure */

/** The most missing versions fetched one by one; a larger gap is bridged
 * by jumping to the newest (a reset). */
export const MAX_GAP = 64;

/**
 * Writes ms as the API's durations: 30s, 500ms.
 * @param {number} ms
 */
export function formatWait(ms) {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${Math.round(ms)}ms`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Makes one long-poll; null after a new version, an empty wait, or when
 * the client is closed.
 * @param {Watcher} w
 * @returns {Promise<Failure | null>}
 */
export async function longPollOnce(w) {
  const { longPollWait } = w.settings;
  let path = `/v1/rings/${w.ring}/snapshot`;
  const held = w.resumeAfter();
  if (held > 0) path += `?after=${held}&wait=${formatWait(longPollWait)}`;
  // The server may add up to 1/16 of the wait as jitter.
  const timeout = longPollWait + longPollWait / 16 + w.eps.requestTimeout;
  let a;
  try {
    a = await w.eps.call('GET', path, { signal: w.signal, timeout });
  } catch (e) {
    if (w.signal.aborted) return null;
    return w.refused(e);
  }
  w.connected('long-poll', a.server);
  w.backoff.reset();
  if (a.status === 304) return null;
  let reset = a.headers.get('ringd-reset') === 'true';
  let s;
  try {
    s = decodeSnapshot(utf8.decode(a.body));
  } catch (e) {
    const error = new MalformedError(a.server + path, e);
    w.reject(0, '', error);
    // Refused without a version to resume after: back off rather than
    // ask again at once.
    return { server: a.server, error };
  }
  const version = describeSnapshot(s).version;
  if (held > 0 && !reset) {
    if (version > held + 1 + MAX_GAP) {
      reset = true;
    } else {
      for (let v = held + 1; v < version; v++) {
        const p = `/v1/rings/${w.ring}/snapshots/${v}`;
        let b;
        try {
          b = await w.eps.call('GET', p, { signal: w.signal });
        } catch (e) {
          if (w.signal.aborted) return null;
          if (e instanceof ApiError && (e.status === 404 || e.status === 410)) {
            reset = true; // pruned: bridge the gap
            break;
          }
          return w.refused(e);
        }
        let text;
        try {
          text = utf8.decode(b.body);
        } catch (e) {
          w.reject(v, '', new MalformedError(b.server + p, e));
          continue;
        }
        await w.applyJSON(text, b.server + p, false, v);
      }
    }
  }
  await w.apply(s, reset);
  return null;
}
