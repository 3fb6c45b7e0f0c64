// Assembles src/placement/xxh3.wat into src/placement/xxh3-wasm.js, the
// module as base64 that the placement core instantiates: the core has no
// build step (the console embeds its files as they are), so the binary is
// kept beside its text, and test/xxh3.test.js fails when they differ.
// Usage: npm run assemble   (from clients/js)

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabt from 'wabt';

const wat = fileURLToPath(new URL('../src/placement/xxh3.wat', import.meta.url));
const out = fileURLToPath(new URL('../src/placement/xxh3-wasm.js', import.meta.url));

/**
 * The module source xxh3-wasm.js should hold.
 * @returns {Promise<string>}
 */
export async function assembled() {
  const tools = await wabt();
  const module = tools.parseWat('xxh3.wat', readFileSync(wat, 'utf8'));
  module.validate();
  const { buffer } = module.toBinary({});
  module.destroy();
  const base64 = Buffer.from(buffer).toString('base64');
  const lines = base64.match(/.{1,96}/g) ?? [];
  return `// Generated from xxh3.wat by \`npm run assemble\`; do not edit.

/** XXH3-64 for inputs up to 240 bytes, a WebAssembly module (xxh3.wat), as base64. */
export const XXH3_WASM =
${lines.map((l) => `  '${l}'`).join(' +\n')};
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(out, await assembled());
  console.log(`wrote ${out}`);
}
