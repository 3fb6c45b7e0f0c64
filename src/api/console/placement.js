// The placement a ring page draws, from the version's canonical encoding
// (GET …/snapshots/{v}/table, placement-spec 9). Checking its fingerprint,
// decoding it and computing each node's ownership are the JavaScript
// package's own modules (@ringd/client's clients/js/src/placement/, which
// ringd serves as they are under /ui/lib/): this file only adapts their
// exact output to what the picture needs. Positions become fractions of
// the keyspace in [0, 1) as doubles: exact enough for pixels.

import { decodeEncoding } from "./lib/placement/encoding.js";
import { fingerprint } from "./lib/placement/fingerprint.js";
import { haproxyBoundaries } from "./lib/placement/haproxy.js";
import { HOLE, runLength } from "./lib/placement/jump.js";
import { ownershipOf } from "./lib/placement/ownership.js";

/** The node number of a jump hole (and of nothing, for the picture). */
export const NO_NODE = HOLE;

const TWO32 = 4294967296;
const TWO64 = TWO32 * TWO32;

// Whether this page may use Web Crypto: browsers offer crypto.subtle only
// in a secure context (HTTPS, or plain HTTP to 127.0.0.1 or localhost).
export const canCheckFingerprints = () => globalThis.crypto?.subtle !== undefined;

// Reads an encoding downloaded for a version whose fingerprint is
// `expected`. Resolves to {check, decoded, ownership}:
// - check.state: "verified" (its SHA-256 is the fingerprint), "unchecked"
//   (no Web Crypto here: decoded without the check), "mismatch" (not
//   decoded; check.actual is what the bytes hash to) or "invalid" (the
//   package refused the encoding; check.message says why);
// - decoded: what draw.js draws (null unless verified or unchecked);
// - ownership: section 7's report in the shape GET …/ownership answers
//   (null when decoded is).
export async function readPlacement(buffer, expected) {
  const bytes = new Uint8Array(buffer);
  let state = "unchecked";
  if (canCheckFingerprints()) {
    const actual = await fingerprint(bytes);
    if (actual !== expected) return { check: { state: "mismatch", expected, actual }, decoded: null, ownership: null };
    state = "verified";
  }
  let encoded;
  try {
    encoded = decodeEncoding(bytes);
  } catch (e) {
    return { check: { state: "invalid", expected, message: e.message }, decoded: null, ownership: null };
  }
  return { check: { state, expected }, decoded: drawable(encoded), ownership: ownershipView(ownershipOf(encoded)) };
}

// The decoded encoding as the picture reads it: the active nodes in index
// order, and per kind of picture points (pos, owner), cells (maglev's and
// envoy_maglev's slots, jump's buckets) or a table's partitions × replicas
// cells.
function drawable(e) {
  const body = e.body;
  const out = { nodes: e.nodes };
  switch (body.algorithm) {
    case "ring":
    case "ketama":
    case "nginx":
    case "twemproxy":
    case "envoy_ring_hash":
      out.points = fractions(body.points);
      break;
    case "haproxy":
      // A key goes to the nearest point (placement-spec 5.8.2): to the
      // first point at or after it among the boundaries key + gap/2, which
      // are drawn, so pointAt answers haproxy as it answers the others.
      out.points = fractions(haproxyBoundaries(body.points));
      break;
    case "maglev":
    case "envoy_maglev":
      out.cells = body.table;
      break;
    case "jump":
      out.cells = buckets(body.runs);
      break;
    case "table":
      out.partitions = body.partitions;
      out.replicas = body.replicas;
      out.cells = body.cells;
      break;
    // rendezvous has no layout: its picture is the nodes' shares.
  }
  return out;
}

// The package's positions are halves (hi, lo) of a u64, 32-bit circles
// keeping theirs in hi with lo 0: (hi·2^32 + lo) / 2^64 is the fraction
// for both.
function fractions({ hi, lo, owner }) {
  const pos = new Float64Array(owner.length);
  for (let i = 0; i < pos.length; i++) pos[i] = (hi[i] * TWO32 + lo[i]) / TWO64;
  return { pos, owner };
}

// Jump's bucket order, held as runs of one owner, one cell per bucket.
function buckets(runs) {
  const cells = new Uint32Array(runs.length);
  for (let r = 0; r < runs.owners.length; r++) {
    cells.fill(runs.owners[r], runs.starts[r], runs.starts[r] + runLength(runs, r));
  }
  return cells;
}

// The package's ownership report with GET …/ownership's field names, so
// the picture and the node table read either.
function ownershipView(o) {
  return {
    basis: o.basis,
    total_units: String(o.totalUnits),
    nodes: o.nodes.map((n) => ({
      id: n.id,
      units: String(n.units),
      share: n.share,
      expected_share: n.expectedShare,
      ratio: n.ratio,
      replicas: n.replicas,
    })),
    max_over_mean: o.maxOverMean,
  };
}

// The point that owns fraction f of a circle: the first at or after it,
// else the first point (the wrap-around). Binary search over sorted positions.
export function pointAt(points, f) {
  const { pos } = points;
  let lo = 0;
  let hi = pos.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pos[mid] < f) lo = mid + 1;
    else hi = mid;
  }
  return lo === pos.length ? 0 : lo;
}
