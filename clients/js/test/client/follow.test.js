// Following a table ring through 20 changes on a real ringd: each version
// routes as the server's POST …/lookup says, and is built from the
// previous version and its moves exactly when the server sent moves.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RingClient } from '../../src/client/index.js';
import { assertRoutesLikeServer, FAST, remove, Ringd, SKIP, upsert, waitVersion } from './ringd.js';

test('follows a table ring through twenty changes, moves and a partitions change', { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('t');
  await api.create({ algorithm: 'table', partitions: 4096 });
  for (const id of ['a', 'b', 'c', 'd']) await api.change(upsert(id));
  /** @type {import("../../src/client/index.js").RingEvent[]} */
  const applied = [];
  // An owner cache smaller than the keys checked: each version's answers
  // must come from that version, through evictions too.
  const c = new RingClient([s.url], 't', { ...FAST, clientId: 'follow', watchMode: 'sse', ownerCache: 25 });
  t.after(() => c.close());
  c.addEventListener('applied', (e) => applied.push(/** @type {import("../../src/client/index.js").RingEvent} */ (e)));
  const view = await c.ready({ signal: AbortSignal.timeout(20_000) });
  assert.equal(view.version, 5);
  let st = c.status();
  // Nothing held yet: the table is downloaded.
  assert.deepEqual(
    [st.version, st.tableDownloads, st.tableMovesApplied, st.transport, st.server],
    [5, 1, 0, 'sse', s.url],
  );
  await assertRoutesLikeServer(api, c, 5, 0);

  const changes = [
    [upsert('e')],
    [upsert('b', 3)],
    [upsert('f', 2)],
    [remove('a')],
    [upsert('g')],
    [upsert('c', 2)],
    [upsert('h')],
    [upsert('i')],
    [{ op: 'update_config', config: { partitions: 1024 } }],
    [upsert('j')],
    [remove('e')],
    [upsert('k', 4)],
    [upsert('d', 2)],
    [upsert('l')],
    [remove('f')],
    [upsert('m')],
    [upsert('n'), upsert('o')],
    [upsert('b', 1)],
    [remove('g')],
    [upsert('p', 2)],
  ];
  let moves = 0;
  let downloads = 1;
  for (const [i, ops] of changes.entries()) {
    const v = await api.change(...ops);
    assert.equal(v, 6 + i);
    // What the server sent decides how the client must build it.
    const snap = await api.do('GET', `/snapshots/${v}`, undefined, 200);
    if (snap.table_moves !== undefined && snap.table_moves !== null) moves++;
    else downloads++;
    st = await waitVersion(c, v);
    assert.deepEqual(
      [st.tableMovesApplied, st.tableDownloads, st.refused, st.lastError],
      [moves, downloads, 0, null],
      `v${v}`,
    );
    await assertRoutesLikeServer(api, c, v, v - 1);
  }
  // The partitions change cannot be reached by moves; most others are.
  assert.ok(moves >= 15 && downloads >= 2, `moves ${moves}, downloads ${downloads}`);
  st = c.status();
  assert.deepEqual([st.applied, st.version, st.lastError], [21, 25, null]);
  await c.close();
  // Every version applied, in order, each from the one before.
  assert.deepEqual(
    applied.map((e) => [e.version, e.from, e.reset]),
    Array.from({ length: 21 }, (_, i) => [5 + i, i === 0 ? 0 : 4 + i, false]),
  );
});
