// Reading the JSON forms of configs, nodes and snapshots. Fields are walked
// in document order because spec 2.4 check 0 reports, within a config or a
// node, the first bad field in the document. Unknown fields are ignored: a
// snapshot's config carries `membership` and its nodes `labels`, which place
// nothing; whatever else places keys is in the encoding, and so checked by
// the fingerprint.

import { fail } from './errors.js';

/**
 * A JSON document already parsed, or its text.
 * @typedef {string | JsonValue} JsonInput
 */
/**
 * A parsed JSON value.
 * @typedef {null | boolean | number | string | JsonArray | JsonObject} JsonValue
 */
/** @typedef {JsonValue[]} JsonArray */
/** @typedef {{ [key: string]: JsonValue }} JsonObject */

/**
 * Parses text, or takes a parsed value as it is.
 * @param {JsonInput} input
 * @param {string} what
 * @returns {JsonValue}
 */
export function parseJson(input, what) {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch (e) {
    throw fail('InvalidJson', `${what}: ${e instanceof Error ? e.message : 'not JSON'}`);
  }
}

/**
 * The members of a JSON object, in document order; null members are absent.
 * @param {JsonValue} value
 * @param {string} what
 * @returns {[string, JsonValue][]}
 */
export function objectFields(value, what) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw fail('InvalidJson', `${what}: not a JSON object`);
  }
  return Object.entries(value).filter(([, v]) => v !== null && v !== undefined);
}

/**
 * @param {JsonValue} value
 * @param {string} what
 * @returns {string}
 */
export function jsonString(value, what) {
  if (typeof value !== 'string') throw fail('InvalidJson', `${what} must be a string`);
  return value;
}

/**
 * @param {JsonValue} value
 * @param {string} what
 * @returns {boolean}
 */
export function jsonBool(value, what) {
  if (typeof value !== 'boolean') throw fail('InvalidJson', `${what} must be true or false`);
  return value;
}

/**
 * An integer literal. A value too large to be exact still compares as
 * too large, so it fails its range check with the field's own kind (2.4:
 * "also for values not fitting u32") rather than as bad JSON.
 * @param {JsonValue} value
 * @param {string} what
 * @returns {number}
 */
export function jsonInt(value, what) {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw fail('InvalidJson', `${what} must be an integer`);
  }
  return value;
}
