// Test helper: a single-member etcd on free loopback ports with a
// temporary data directory, as the Rust and Go tests start it
// (tests/support/etcd.rs, clients/go/etcd_test.go), for a ringd whose
// store is etcd.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, onPath } from './host.js';

/** The first `etcd` on PATH, or null. */
export const ETCD_BIN = onPath('etcd');

/**
 * false, or why the etcd tests are skipped. A skip and not a failure:
 * these tests exist for the client, SQLite already runs the same checks,
 * and the Rust etcd tests are the ones that must not pass without etcd.
 */
export const ETCD_SKIP = ETCD_BIN === null ? 'no `etcd` on PATH: install etcd-server to run the etcd half' : false;

/**
 * Starts etcd, waits until it answers, and returns the store URL
 * `ringd serve --store` takes (etcd://127.0.0.1:PORT). It is killed and
 * its directory removed when the test ends.
 * @param {import("node:test").TestContext} t
 * @returns {Promise<string>}
 */
export async function startEtcd(t) {
  assert.ok(ETCD_BIN !== null, ETCD_SKIP || 'no etcd');
  const dir = mkdtempSync(join(tmpdir(), 'ringd-js-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const logPath = join(dir, 'etcd.log');
  const log = openSync(logPath, 'w');
  const child = spawn(
    ETCD_BIN,
    [
      '--name=test',
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=test=${peerUrl}`,
      '--logger=zap',
      '--log-level=warn',
    ],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  /** @type {number | string | null | undefined} */
  let exited;
  const gone = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? signal;
      resolve(undefined);
    }),
  );
  t.after(async () => {
    if (exited === undefined) child.kill('SIGKILL');
    await gone;
    rmSync(dir, { recursive: true, force: true });
  });
  // /health answers {"health":"true"} once the member has a leader and
  // serves requests; until then ringd could not open its store.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== undefined) assert.fail(`etcd exited with ${exited}:\n${readFileSync(logPath, 'utf8')}`);
    try {
      const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200 && (await res.text()).includes('"true"')) return `etcd://127.0.0.1:${client}`;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) assert.fail(`etcd did not answer within 30 s:\n${readFileSync(logPath, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
