// Test helpers about the machine the live tests run on: the programs they
// start (found on PATH) and loopback ports to start them on.

import { accessSync, constants, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * The first executable file called name on PATH, or null.
 * @param {string} name
 * @returns {string | null}
 */
export function onPath(name) {
  return (
    (process.env.PATH ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '')
      .map((dir) => join(dir, name))
      .find((path) => {
        try {
          accessSync(path, constants.X_OK);
          return statSync(path).isFile();
        } catch {
          return false;
        }
      }) ?? null
  );
}

/**
 * A loopback port nobody listens on right now. Another process could take
 * it before the program started on it binds it; that is rare and shows
 * up as a start-up failure naming the port, not as a wrong result.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}
