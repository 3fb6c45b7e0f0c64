// A following client holds one connection to the server, its watch's (or
// its parked long-poll's), once it has acked: each ack's connection ends
// with its answer (the client sends Connection: close, and ringd closes
// it too). Kept in the pool, it would idle beside the watch, and a fleet
// would hold twice its size in server connections. The server's sockets
// are counted from /proc/<pid>/fd; the test's own requests close their
// connections (ringd.js), so "before" is what the server holds before any
// request.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { test } from 'node:test';
import { RingClient } from '../../src/client/index.js';
import { Ringd, SKIP, upsert, waitUntil } from './ringd.js';

/**
 * The open sockets of process pid (descriptors that read "socket:[inode]").
 * @param {number} pid
 */
function socketsOf(pid) {
  const dir = `/proc/${pid}/fd`;
  let n = 0;
  for (const fd of readdirSync(dir)) {
    try {
      if (readlinkSync(`${dir}/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed between the listing and the read
    }
  }
  return n;
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const watchMode of /** @type {const} */ (['auto', 'long-poll'])) {
  test(`a ${watchMode} client holds one server connection once it has acked`, {
    skip: SKIP || !existsSync('/proc/self/fd'),
    timeout: 60_000,
  }, async (t) => {
    const s = await Ringd.start(t);
    // The listener and the runtime's own (signal handling), before any
    // request.
    const before = socketsOf(s.pid);
    const api = s.api('r');
    await api.create({});
    await api.change(upsert('a'), upsert('b'));
    await waitUntil('the test’s own connections closed', async () => socketsOf(s.pid) === before);
    const c = new RingClient(s.url, 'r', { clientId: 'fleet-member', watchMode });
    t.after(() => c.close());
    // Two versions, each followed and acked: the first ack's connection
    // must not stay open for the second to reuse either.
    for (const node of ['c', 'd']) {
      const v = await api.change(upsert(node));
      await c.waitFor((st) => st.version >= v && st.acked >= v, { signal: AbortSignal.timeout(20_000) });
      const list = await api.do('GET', '/clients', undefined, 200);
      assert.deepEqual(
        list.clients.map((/** @type {{ client_id: string, version: number }} */ x) => [x.client_id, x.version]),
        [['fleet-member', v]],
      );
      // Kept alive, the ack's connection would stay for Node's 4 s
      // keep-alive time (or ringd's 30 s header-read timeout): it must
      // be gone well before.
      await waitUntil(`one connection for the client at v${v}`, async () => socketsOf(s.pid) === before + 1, 2000);
      await sleep(300);
      assert.equal(socketsOf(s.pid) - before, 1, `v${v}: the server's connections for one client`);
    }
  });
}
