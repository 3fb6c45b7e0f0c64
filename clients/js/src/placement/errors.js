// Refusals of the placement core. Each carries a `code`: the name of the
// Rust PlacementError variant the server reports for the same input (spec
// 2.4), so a refusal can be matched across languages, plus a few of the
// client's own (InvalidState, InvalidJson, InvalidSnapshot,
// FingerprintMismatch, TableRequired), which the server reports while
// parsing JSON or never needs.

/**
 * The codes a refusal can carry.
 * @typedef {'EmptyNodeId' | 'InvalidNodeId' | 'DuplicateNodeId' | 'InvalidHashKey' | 'InvalidZone'
 *   | 'WeightOutOfRange' | 'RampOutOfRange' | 'InvalidAddress' | 'InvalidState' | 'UnknownAlgorithm'
 *   | 'UnknownHash' | 'HashNotSupported' | 'HashNotAccepted' | 'AvalancheNotSupported' | 'InvalidHashTag'
 *   | 'HashTagNotSupported' | 'VnodesOutOfRange' | 'ReplicationOutOfRange' | 'PartitionsOutOfRange'
 *   | 'TableSizeOutOfRange' | 'TableSizeNotPrime' | 'MissingZone' | 'MissingAddress' | 'AddressNotServer'
 *   | 'DuplicateAddress' | 'InvalidServerName' | 'ServerNameTaken' | 'EndpointKeyTaken' | 'WeightShareTooSmall'
 *   | 'RingSizeOutOfRange' | 'RingSizesInverted' | 'RampNotSupported'
 *   | 'WeightTooHighForProxy' | 'TooManyPoints' | 'TableTooLarge' | 'InvalidServerIds'
 *   | 'InvalidBucketOrder' | 'InvalidTable' | 'InvalidEncoding' | 'InvalidJson' | 'InvalidSnapshot'
 *   | 'TableRequired' | 'FingerprintMismatch'} ErrorCode
 */

/** A refusal: `code` says why, `message` says what, for people (not normative). */
export class PlacementError extends Error {
  /**
   * @param {ErrorCode} code
   * @param {string} message
   */
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'PlacementError';
    /** @type {ErrorCode} */
    this.code = code;
  }

  /**
   * Whether the refusal is of kind `code`. A TableRequired refusal is also
   * an InvalidTable one, as the server calls it.
   * @param {ErrorCode} code
   * @returns {boolean}
   */
  is(code) {
    return this.code === code || (this.code === 'TableRequired' && code === 'InvalidTable');
  }
}

/**
 * A placement rebuilt from a snapshot or an encoding does not hash to the
 * fingerprint it was sent with. Never route on such a placement.
 */
export class FingerprintMismatchError extends PlacementError {
  /**
   * @param {string} expected the advertised fingerprint
   * @param {string} actual the fingerprint computed here
   */
  constructor(expected, actual) {
    super('FingerprintMismatch', `expected fingerprint ${expected}, computed ${actual}`);
    this.name = 'FingerprintMismatchError';
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * @param {ErrorCode} code
 * @param {string} message
 * @returns {PlacementError}
 */
export function fail(code, message) {
  return new PlacementError(code, message);
}

/**
 * Shortens text for an error message, on a code point boundary.
 * @param {string} s
 * @returns {string}
 */
export function excerpt(s) {
  const points = Array.from(s);
  return points.length <= 64 ? s : `${points.slice(0, 64).join('')}…`;
}
