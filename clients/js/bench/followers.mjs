// The JavaScript client's fleet for the reconnect-storm benchmark
// (benches/load/reconnect_storm): N followers of ringd rings in one
// Node.js process, each a RingClient as an application makes one.
//
//   node bench/followers.mjs --url http://127.0.0.1:PORT --rings bench-000,bench-001 \
//     --followers N --protocol sse|long-poll
//
// Follower i follows ring rings[i % rings.length]. All N clients are
// started at once, in one loop, each with the library's default settings
// (backoff 100 ms doubling to 10 s, acks on, the default client id) but
// for the watch mode: "auto" for sse (the default: streams, long-polls
// where streams cannot get through), "long-poll" for long-poll.
//
// For every version follower i applies (its "applied" event, the moment
// from which its lookups use the version) the program writes the line
// "<i> <version>\n" to stdout, within a few milliseconds. Nothing else
// goes to stdout; diagnostics go to stderr. It runs until killed
// (SIGTERM, SIGINT, SIGKILL) or until stdin reaches EOF.

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { RingClient } from '../src/index.js';

/**
 * @param {string} why
 * @returns {never}
 */
function usage(why) {
  process.stderr.write(
    `followers: ${why}\n` +
      'usage: followers --url http://127.0.0.1:PORT --rings bench-000,bench-001,... --followers N --protocol sse|long-poll\n',
  );
  process.exit(2);
}

/** The command line's options; a bad one ends the program with its usage. */
function options() {
  try {
    return parseArgs({
      options: {
        url: { type: 'string' },
        rings: { type: 'string' },
        followers: { type: 'string' },
        protocol: { type: 'string', default: 'sse' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
}

const args = options();
const url = args.url ?? usage('--url is required');
const rings = (args.rings ?? '')
  .split(',')
  .map((r) => r.trim())
  .filter((r) => r !== '');
if (rings.length === 0) usage('--rings names no ring');
const n = Number(args.followers);
if (!Number.isInteger(n) || n < 1) usage(`--followers must be an integer of at least 1, not ${args.followers}`);
/** @type {Record<string, "auto" | "long-poll">} */
const MODES = { sse: 'auto', 'long-poll': 'long-poll' };
const mode = MODES[args.protocol ?? 'sse'] ?? usage(`--protocol is sse or long-poll, not ${args.protocol}`);

// Connections. Each follower holds one connection, its watch stream or
// its long-poll, all to one origin. Node's fetch (undici) pools them per
// origin in its global dispatcher, an Agent whose per-origin Pool has no
// bound on connections by default (`connections: null`): it dials a new
// one whenever every pooled one is busy, so 10,000 concurrent streams to
// one origin need no setting, and each long-poll's connection goes back
// to the pool for the next long-poll. No Agent of ours is needed for
// that (and the client takes none; the undici package is not a
// dependency).
//
// The acks need nothing either: each follower acks every version it
// applies while its stream stays open, and ringd answers an ack with
// "Connection: close", so its connection ends with it instead of staying
// in the pool beside the stream's (10,000 followers would otherwise hold
// 20,000 descriptors on both sides for the pool's keep-alive time).

// The lines. process.stdout on a pipe writes asynchronously on POSIX (a
// write goes to the pipe at once if it has room, and is queued if not),
// and one write per line from 10,000 followers would be 10,000 writes
// after every change. So lines gather in a string and go out in one
// write at the end of the event loop's turn (setImmediate), or at once
// when the first line waiting is 2 ms old, so a long turn cannot hold
// them back past the driver's few milliseconds.
let pending = '';
let pendingSince = 0;
let due = false;
let linesOut = 0;
let stdoutFailed = false;

/**
 * @param {number} i
 * @param {number} version
 */
function addLine(i, version) {
  if (pending === '') pendingSince = performance.now();
  pending += `${i} ${version}\n`;
  linesOut++;
  if (!due) {
    due = true;
    setImmediate(() => {
      due = false;
      flush();
    });
  } else if (performance.now() - pendingSince >= 2) {
    flush();
  }
}

/**
 * Writes the lines gathered so far in one write.
 * @param {() => void} [then] called once the write is done (at once if none)
 */
function flush(then) {
  const batch = pending;
  pending = '';
  if (batch === '' || stdoutFailed) {
    then?.();
    return;
  }
  process.stdout.write(batch, then);
}

process.stdout.on('error', (e) => {
  // The driver is gone: nothing more can be reported. Stay up until
  // stdin closes or a signal, as the contract says.
  if (!stdoutFailed) process.stderr.write(`followers: writing stdout: ${e.message}\n`);
  stdoutFailed = true;
});

/** @type {RingClient[]} */
const clients = [];
for (let i = 0; i < n; i++) {
  const c = new RingClient(url, rings[i % rings.length], { watchMode: mode });
  c.addEventListener('applied', (e) => addLine(i, /** @type {import('../src/index.js').RingEvent} */ (e).version));
  clients.push(c);
}
process.stderr.write(
  `followers: ${n} clients of ${rings.length} ring(s) on ${url} (${args.protocol}, watch mode ${mode})\n`,
);

let stopping = false;
/** @param {string} why */
function stop(why) {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`followers: stopping (${why}), ${linesOut} lines written\n`);
  // The lines already reported go out first. The clients are not closed
  // one by one (10,000 of them would delay the exit for nothing): the
  // process ends and takes their connections with it. A write the
  // driver no longer reads must not hold the exit back for long.
  setTimeout(() => process.exit(0), 2000);
  flush(() => process.exit(0));
}

process.stdin.on('end', () => stop('stdin closed'));
process.stdin.on('error', (e) => stop(`stdin: ${e.message}`));
process.stdin.resume();
for (const sig of /** @type {const} */ (['SIGTERM', 'SIGINT'])) process.on(sig, () => stop(sig));
