// A rollout with `gate: 1` waits on the acks of a JavaScript client.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RingClient } from '../../src/client/index.js';
import { FAST, Ringd, SKIP, upsert, waitUntil } from './ringd.js';

/** @typedef {import("./ringd.js").Api} Api */

/**
 * Starts a three-step rollout of ops gated on every live client.
 * @param {Api} api @param {...object} ops @returns {Promise<number>}
 */
async function startRollout(api, ...ops) {
  const r = await api.do('POST', '/rollouts', { ops, policy: { steps: 3, gate: 1, gate_timeout: '5m' } }, 201);
  return r.id;
}

/**
 * Reads rollout id until cond holds.
 * @param {Api} api @param {number} id @param {(r: any) => boolean} cond
 */
async function rolloutWhen(api, id, cond) {
  /** @type {any} */
  let r;
  await waitUntil(
    `rollout ${id}`,
    async () => {
      r = await api.do('GET', `/rollouts/${id}`, undefined, 200);
      return cond(r);
    },
    30_000,
  );
  return r;
}

/** The versions the rollout's committed steps made. @param {any} r @returns {number[]} */
const stepVersions = (r) =>
  r.plan.map((/** @type {any} */ s) => s.version).filter((/** @type {unknown} */ v) => typeof v === 'number');

/**
 * GET …/clients: id is the one client, at version v (with fingerprint fp
 * unless empty).
 * @param {Api} api @param {string} id @param {number} v @param {string} fp
 */
async function checkClientEntry(api, id, v, fp) {
  const { clients } = await api.do('GET', '/clients', undefined, 200);
  assert.equal(clients.length, 1);
  const got = clients[0];
  assert.deepEqual([got.client_id, got.version, got.divergent], [id, v, false]);
  if (fp !== '') assert.equal(got.fingerprint, fp);
}

test("a rollout with gate 1 waits for the JavaScript client's acks", { skip: SKIP }, async (t) => {
  const s = await Ringd.start(t);
  const api = s.api('r');
  await api.create({ algorithm: 'ring' });
  const v = await api.change(upsert('a'), upsert('b'), upsert('c'));
  const id = 'js-gated';
  /** @type {Set<number>} */
  const acked = new Set();
  const follow = () => {
    const c = new RingClient(s.url, 'r', { ...FAST, clientId: id });
    c.addEventListener('acked', (e) => {
      const ev = /** @type {import("../../src/client/index.js").RingEvent} */ (e);
      if (ev.error === null) acked.add(ev.version);
    });
    t.after(() => c.close());
    return c;
  };
  const signal = AbortSignal.timeout(40_000);
  let c = follow();
  await c.waitFor((st) => st.acked === v, { signal });

  // 1. Followed and acked: the rollout runs to the end, each step's
  // version acked by the client before the next was committed.
  const first = await startRollout(api, upsert('d'));
  let steps = stepVersions(await rolloutWhen(api, first, (r) => r.state === 'done'));
  assert.deepEqual(steps, [v + 1, v + 2, v + 3]);
  let last = steps[2];
  await c.waitFor((st) => st.acked === last, { signal });
  for (const sv of steps) assert.ok(acked.has(sv), `step version ${sv} never acked (acked ${[...acked]})`);
  await checkClientEntry(api, id, last, c.status().fingerprint);

  // 2. The client stops; its ack stays live, so the next rollout's first
  // step waits for it.
  await c.close();
  const second = await startRollout(api, upsert('e'));
  const waiting = await rolloutWhen(api, second, (r) => r.state === 'waiting_for_gate' && r.step === 1);
  const stepOne = stepVersions(waiting)[0];
  assert.equal(stepOne, last + 1);
  await new Promise((r) => setTimeout(r, 1500));
  const still = await api.do('GET', `/rollouts/${second}`, undefined, 200);
  assert.deepEqual(
    [still.state, still.step, still.gate?.lagging, still.gate?.version, still.gate?.live, still.gate?.acked],
    ['waiting_for_gate', 1, [id], stepOne, 1, 0],
  );
  await checkClientEntry(api, id, last, '');

  // 3. Back under the same id: it applies and acks each step, and the
  // rollout finishes.
  c = follow();
  steps = stepVersions(await rolloutWhen(api, second, (r) => r.state === 'done'));
  last = steps[steps.length - 1];
  assert.deepEqual([steps[0], last], [stepOne, stepOne + 2]);
  await c.waitFor((st) => st.acked === last, { signal });
  await checkClientEntry(api, id, last, c.status().fingerprint);
  assert.equal((await api.do('GET', '', undefined, 200)).version, last);
});
