// Acks: tells the server which version the client routes on, under its
// client id, so operators see its lag and rollouts can gate on it.

import { ApiError, asError } from './errors.js';
import { Backoff } from './timing.js';

/**
 * Acks each version once it is applied (only the newest if several
 * arrive while an ack is in flight), and the current one again every
 * interval so it does not expire under the server's --client-ttl. Runs
 * until the signal aborts; never rejects.
 * @param {object} o
 * @param {string} o.ring
 * @param {string} o.clientId
 * @param {"library" | "proxy"} o.kind
 * @param {number} o.interval milliseconds
 * @param {Backoff} o.backoff
 * @param {import("./endpoints.js").Endpoints} o.eps
 * @param {import("./state.js").Shared} o.shared
 * @param {import("./timing.js").Notifier} o.applied notified on each version applied
 * @param {AbortSignal} o.signal
 */
export async function ackLoop(o) {
  const path = `/v1/rings/${o.ring}/clients/${o.clientId}/ack`;
  while (!o.signal.aborted) {
    let wait = o.interval;
    const view = o.shared.current();
    if (view !== null) {
      // kind is left out for a library, so acks stay readable by servers
      // from before kinds existed (they refuse unknown fields).
      /** @type {{ version: number, fingerprint: string, kind?: string }} */
      const body = { version: view.version, fingerprint: view.fingerprint };
      if (o.kind !== 'library') body.kind = o.kind;
      /** @type {Error | null} */
      let error = null;
      try {
        // Connection: close, so the ack's connection ends with its answer
        // instead of idling in the pool beside the watch's (which holds
        // its own): a fleet would hold twice its size in server
        // connections. Node's fetch honours it; a browser drops the
        // header (it is forbidden there) and keeps its own pool. ringd
        // closes an ack's connection anyway; this covers a proxy in front
        // that does not.
        await o.eps.call('POST', path, {
          body: JSON.stringify(body),
          headers: { Connection: 'close' },
          signal: o.signal,
        });
      } catch (e) {
        error = asError(e);
      }
      if (o.signal.aborted) return;
      if (error === null) {
        o.backoff.reset();
        o.shared.update((s) => {
          s.acks++;
          // Only while that version is still the one routed on: a late
          // answer must not mark a recreated ring as acked.
          const cur = o.shared.current();
          if (cur !== null && cur.version === view.version && cur.fingerprint === view.fingerprint) {
            s.acked = view.version;
          }
        });
      } else {
        const failed = error;
        o.shared.update((s) => {
          s.ackFailures++;
          s.lastError = failed;
          s.lastErrorAt = new Date();
        });
        // A 4xx: the ring was deleted or recreated below this version;
        // the watch will bring what replaces it, so wait for that rather
        // than ask again soon.
        if (!(error instanceof ApiError && error.status >= 400 && error.status < 500)) {
          wait = o.backoff.next();
        }
      }
      o.shared.emit('acked', { version: view.version, error });
    }
    // A newer version cuts the wait short.
    await o.applied.wait(wait, o.signal);
  }
}
