// One watch stream (Server-Sent Events over fetch) and its events.

import { describe, MalformedError, RingdError } from './errors.js';
import { SseDecoder } from './sse.js';
import { childSignal } from './timing.js';

/** @typedef {import("./watch.js").Watcher} Watcher */
/** @typedef {import("./watch.js").Failure} Failure */

/**
 * Opens the ring's watch stream after the version held and applies its
 * events until it breaks; it always ends in a failure (null only when the
 * client is closed).
 * @param {Watcher} w
 * @returns {Promise<Failure | null>}
 */
export async function streamOnce(w) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'text/event-stream' };
  const after = w.resumeAfter();
  // Last-Event-ID, as an EventSource resumes: the server replays every
  // version after it.
  if (after > 0) headers['Last-Event-ID'] = String(after);
  const { idleTimeout } = w.settings;
  const link = childSignal(w.signal);
  // The idle timer cuts a stream that sends nothing, not even the
  // keep-alive, for idleTimeout. It is stopped while the client applies
  // what it read, so a long table download is not taken for silence.
  let idled = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let idle;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      idled = true;
      link.controller.abort(new RingdError(`nothing for ${idleTimeout} ms`));
    }, idleTimeout);
  };
  arm();
  try {
    let opened;
    try {
      opened = await w.eps.open('GET', `/v1/rings/${w.ring}/watch`, { headers, signal: link.signal });
    } catch (e) {
      if (idled) {
        return { server: w.eps.first(), error: new RingdError(`no answer to the watch within ${idleTimeout} ms`) };
      }
      if (w.signal.aborted) return null;
      return w.refused(e);
    }
    const { response, server } = opened;
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream') || response.body === null) {
      await response.body?.cancel().catch(() => {});
      const why = new RingdError(`${server} answered the watch with "${type}", not an event stream`);
      return { unsupported: true, server, error: why };
    }
    w.connected('sse', server);
    const decoder = new SseDecoder();
    const reader = response.body.getReader();
    // Cancel the reader itself on abort, not only the fetch: on Node.js 20
    // a fetch can stop hearing its signal after a garbage collection
    // (nodejs/node#55428), and a pending read would then wait for the
    // server's next keep-alive, 15 s, before close() returns.
    const cancel = () => {
      reader.cancel(link.signal.reason).catch(() => {});
    };
    link.signal.addEventListener('abort', cancel, { once: true });
    let gotAny = false;
    try {
      for (;;) {
        /** @type {ReadableStreamReadResult<Uint8Array> | null} */
        let chunk = null;
        /** @type {unknown} */
        let broke;
        try {
          chunk = await reader.read();
        } catch (e) {
          broke = e;
        }
        // A cancelled read ends (done) rather than throwing: whether the
        // client closed or the stream idled decides, before the chunk.
        if (chunk === null || chunk.done || link.signal.aborted) {
          if (idled && !gotAny) {
            const why = new RingdError(`${server} sent no event within ${idleTimeout} ms (a buffering proxy?)`);
            return { unsupported: true, server, error: why };
          }
          if (idled) return { server, error: new RingdError(`${server} sent nothing for ${idleTimeout} ms`) };
          if (w.signal.aborted) return null;
          if (chunk === null) {
            return {
              server,
              error: new RingdError(`stream from ${server} broke: ${describe(broke)}`, { cause: broke }),
            };
          }
          return { server, error: new RingdError(`stream from ${server} ended`) };
        }
        clearTimeout(idle);
        /** @type {import("./sse.js").SseEvent[]} */
        const events = [];
        /** @type {unknown} */
        let fault;
        try {
          decoder.feed(chunk.value, (ev) => events.push(ev));
        } catch (e) {
          fault = e;
        }
        for (const ev of events) {
          if (!gotAny) {
            gotAny = true;
            w.backoff.reset();
          }
          await onEvent(w, ev);
          if (w.signal.aborted) return null;
        }
        if (fault !== undefined) {
          return { server, error: new MalformedError(`${server} watch stream`, fault) };
        }
        arm();
      }
    } finally {
      link.signal.removeEventListener('abort', cancel);
      reader.cancel().catch(() => {});
    }
  } finally {
    clearTimeout(idle);
    link.done();
    // Ends the request if it is still open (a failure we return on).
    link.controller.abort();
  }
}

/**
 * @param {Watcher} w
 * @param {import("./sse.js").SseEvent} ev
 */
async function onEvent(w, ev) {
  switch (ev.event) {
    case 'snapshot':
    case 'reset': {
      const id = /^\d+$/.test(ev.id ?? '') ? Number(ev.id) : 0;
      await w.applyJSON(ev.data, `${ev.event} event`, ev.event === 'reset', id);
      break;
    }
    case 'deleted':
      w.markDeleted();
      break;
    case 'keepalive':
      await checkKeepalive(w, ev.data);
      break;
    default:
    // Other types (health, rollout, stale, and any added later) are not
    // about versions: ignored, as the API asks of clients.
  }
}

/**
 * Compares the newest version a keep-alive names with the one held: the
 * same number with another fingerprint, or a lower number, means the ring
 * was deleted and recreated while the client was away, so the current
 * snapshot replaces what the client holds.
 * @param {Watcher} w
 * @param {string} data
 */
async function checkKeepalive(w, data) {
  /** @type {unknown} */
  let k;
  try {
    k = JSON.parse(data);
  } catch {
    return;
  }
  const held = w.shared.current();
  if (typeof k !== 'object' || k === null || held === null) return;
  const { version: v, fingerprint: fp } = /** @type {{ version?: unknown, fingerprint?: unknown }} */ (k);
  if (typeof v !== 'number' || typeof fp !== 'string') return;
  const diverged = (v === held.version && fp !== held.fingerprint) || v < held.version;
  if (!diverged || (w.rejected === v && w.rejectedFP === fp)) return;
  const path = `/v1/rings/${w.ring}/snapshot`;
  let a;
  try {
    a = await w.eps.call('GET', path, { signal: w.signal });
  } catch (e) {
    if (!w.signal.aborted) w.shared.setError(e instanceof Error ? e : new RingdError(String(e)));
    return;
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(a.body);
  } catch (e) {
    w.reject(0, '', new MalformedError(a.server + path, e));
    return;
  }
  await w.applyJSON(text, a.server + path, true, 0);
}
