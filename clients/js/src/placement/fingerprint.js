// The fingerprint (spec 9): SHA-256 of the canonical encoding as 64
// lowercase hex digits. Web Crypto computes it, as `globalThis.crypto`
// offers it in browsers and in Node.js (20 and later; 18 with
// --experimental-global-webcrypto), so this module imports nothing.

/**
 * SHA-256 of `bytes`, as 64 lowercase hex digits.
 * @param {Uint8Array} bytes
 * @returns {Promise<string>}
 */
export async function fingerprint(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) {
    throw new Error(
      'Web Crypto (globalThis.crypto.subtle) is not available: Node.js 18 needs --experimental-global-webcrypto',
    );
  }
  const digest = new Uint8Array(await subtle.digest('SHA-256', /** @type {Uint8Array<ArrayBuffer>} */ (bytes)));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Whether s is a fingerprint as written: 64 lowercase hex digits.
 * @param {string} s
 * @returns {boolean}
 */
export function isFingerprint(s) {
  return /^[0-9a-f]{64}$/.test(s);
}
