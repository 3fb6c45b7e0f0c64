// A ring member as placement sees it (spec 2.2): its fields, their checks
// and its JSON form.

import { excerpt, fail } from './errors.js';
import { jsonInt, jsonString, objectFields, parseJson } from './json.js';

/** @typedef {import('./json.js').JsonInput} JsonInput */

/**
 * A node's lifecycle state; only active nodes own keys.
 * @typedef {'active' | 'draining' | 'joining'} NodeState
 */

/**
 * A node with every field given or defaulted.
 * @typedef {object} Node
 * @property {string} id 1-128 bytes of [A-Za-z0-9._:-], starting with a letter or digit
 * @property {string | null} hashKey hashed instead of the id when set (the node's label)
 * @property {number} weight 1..=1,000,000
 * @property {string | null} zone a failure domain
 * @property {NodeState} state whether the node owns keys
 * @property {number} ramp parts per 65,536 of its weight the node takes, 1..=65,536
 * @property {string | null} address host:port; places only under nginx and twemproxy, and
 *   envoy_ring_hash and envoy_maglev need an IP:port on every active node
 */

/**
 * A node with any field but the id left out: weight 1, active, full ramp.
 * @typedef {Partial<Node> & { id: string }} NodeInput
 */

/** A node's ramp when it takes all of its weight. */
export const FULL_RAMP = 65_536;
/** The largest node weight. */
export const MAX_WEIGHT = 1_000_000;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const CONTROL = /\p{Cc}/u;
const SPACE = /\p{White_Space}/u;

/**
 * The node with defaults filled in, not yet validated.
 * @param {NodeInput} input
 * @returns {Node}
 */
export function makeNode(input) {
  return {
    id: input.id,
    hashKey: input.hashKey ?? null,
    weight: input.weight ?? 1,
    zone: input.zone ?? null,
    state: input.state ?? 'active',
    ramp: input.ramp ?? FULL_RAMP,
    address: input.address ?? null,
  };
}

/**
 * What is hashed to place the node: its hashKey if set, else its id.
 * @param {Node} n
 * @returns {string}
 */
export function label(n) {
  return n.hashKey ?? n.id;
}

/**
 * Checks the node's own fields against spec 2.2, in the order id,
 * hash_key, zone, weight, state, ramp, address.
 * @param {Node} n
 */
export function validateNode(n) {
  checkId(n.id);
  if (n.hashKey !== null) checkHashKey(n.hashKey);
  if (n.zone !== null) checkZone(n.zone);
  checkWeight(n.weight);
  if (n.state !== 'active' && n.state !== 'draining' && n.state !== 'joining') {
    throw fail('InvalidState', `node ${n.id}: ${JSON.stringify(n.state)} is not one of active, draining, joining`);
  }
  checkRamp(n.ramp);
  if (n.address !== null) checkAddress(n.address);
}

/** @param {string} id */
function checkId(id) {
  if (typeof id !== 'string' || id === '') throw fail('EmptyNodeId', 'a node id must not be empty');
  if (id.length > 128 || !NAME.test(id)) {
    throw fail(
      'InvalidNodeId',
      `${JSON.stringify(excerpt(id))}: 1-128 bytes of [A-Za-z0-9._:-], starting with a letter or digit`,
    );
  }
}

/** @param {string} z */
function checkZone(z) {
  if (typeof z !== 'string' || z.length > 64 || !NAME.test(z)) {
    throw fail(
      'InvalidZone',
      `${JSON.stringify(excerpt(String(z)))}: 1-64 bytes of [A-Za-z0-9._:-], starting with a letter or digit`,
    );
  }
}

/** @param {string} k */
function checkHashKey(k) {
  const size = typeof k === 'string' ? utf8Length(k) : -1;
  if (size < 1 || size > 255 || CONTROL.test(k)) {
    throw fail('InvalidHashKey', `${JSON.stringify(excerpt(String(k)))}: 1-255 bytes of UTF-8, no control character`);
  }
}

/** @param {string} a */
function checkAddress(a) {
  const size = typeof a === 'string' ? utf8Length(a) : -1;
  if (size < 1 || size > 255 || CONTROL.test(a) || SPACE.test(a)) {
    throw fail(
      'InvalidAddress',
      `${JSON.stringify(excerpt(String(a)))}: 1-255 bytes without spaces or control characters`,
    );
  }
}

/** @param {number} w */
function checkWeight(w) {
  if (!Number.isInteger(w) || w < 1 || w > MAX_WEIGHT) throw fail('WeightOutOfRange', `weight ${w} not in 1..=1000000`);
}

/** @param {number} r */
function checkRamp(r) {
  if (!Number.isInteger(r) || r < 1 || r > FULL_RAMP) throw fail('RampOutOfRange', `ramp ${r} not in 1..=65536`);
}

/**
 * The length of s in UTF-8, or -1 when s holds a lone surrogate (it has
 * no UTF-8 form).
 * @param {string} s
 * @returns {number}
 */
export function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return -1;
      n += 4;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return -1;
    else n += 3;
  }
  return n;
}

/**
 * Byte order of the UTF-8 forms of a and b, which is code point order (not
 * JavaScript's UTF-16 order: spec 11.2).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareUtf8(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Reads one node from its JSON form. Absent and null fields take their
 * defaults; fields that place nothing (labels, health) are ignored. The
 * first bad field in the document is reported (2.4 check 0).
 * @param {JsonInput} input
 * @returns {Node}
 */
export function parseNode(input) {
  const n = makeNode({ id: '' });
  for (const [name, value] of objectFields(parseJson(input, 'node'), 'node')) {
    switch (name) {
      case 'id':
        n.id = jsonString(value, name);
        checkId(n.id);
        break;
      case 'hash_key':
        n.hashKey = jsonString(value, name);
        checkHashKey(n.hashKey);
        break;
      case 'zone':
        n.zone = jsonString(value, name);
        checkZone(n.zone);
        break;
      case 'weight':
        n.weight = jsonInt(value, name);
        checkWeight(n.weight);
        break;
      case 'ramp':
        n.ramp = jsonInt(value, name);
        checkRamp(n.ramp);
        break;
      case 'state': {
        const s = jsonString(value, name);
        if (s !== 'active' && s !== 'draining' && s !== 'joining') {
          throw fail('InvalidState', `${JSON.stringify(s)} is not one of active, draining, joining`);
        }
        n.state = s;
        break;
      }
      case 'address':
        n.address = jsonString(value, name);
        checkAddress(n.address);
        break;
    }
  }
  if (n.id === '') throw fail('EmptyNodeId', 'a node needs an id');
  return n;
}

/**
 * Reads a JSON array of nodes; the first bad node in input order is
 * reported, whatever the config (2.4 check 0).
 * @param {JsonInput} input
 * @returns {Node[]}
 */
export function parseNodes(input) {
  const value = parseJson(input, 'nodes');
  if (!Array.isArray(value)) throw fail('InvalidJson', 'nodes must be a JSON array of objects');
  return value.map((v) => parseNode(v));
}
