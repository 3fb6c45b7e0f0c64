// Node colours: Okabe–Ito (without black), which stays distinguishable
// under the common colour-vision deficiencies, then lighter and darker
// variants of the same hues. Every colour has a name, because the name is
// what tells two nodes apart for a reader who cannot see the difference.

const BASE = [
  ["orange", [0xe6, 0x9f, 0x00]],
  ["sky blue", [0x56, 0xb4, 0xe9]],
  ["bluish green", [0x00, 0x9e, 0x73]],
  ["yellow", [0xf0, 0xe4, 0x42]],
  ["blue", [0x00, 0x72, 0xb2]],
  ["vermillion", [0xd5, 0x5e, 0x00]],
  ["reddish purple", [0xcc, 0x79, 0xa7]],
  // Okabe–Ito's black, lightened so that it shows on the dark theme; no
  // lighter, or it nears reddish purple for deuteranopes (the browser
  // test checks every pair under simulated protan, deutan and tritan
  // vision).
  ["grey", [0x66, 0x66, 0x66]],
];

const mix = (rgb, to, t) => rgb.map((c, i) => Math.round(c + (to[i] - c) * t));
const hex = (rgb) => "#" + rgb.map((c) => c.toString(16).padStart(2, "0")).join("");

export const PALETTE = [
  ...BASE.map(([n, rgb]) => ({ name: n, rgb })),
  ...BASE.map(([n, rgb]) => ({ name: `${n} (dark)`, rgb: mix(rgb, [0, 0, 0], 0.45) })),
  ...BASE.map(([n, rgb]) => ({ name: `${n} (light)`, rgb: mix(rgb, [255, 255, 255], 0.55) })),
].map((c) => ({ ...c, hex: hex(c.rgb) }));

// Past 24 nodes colours repeat; the name then carries the round ("orange 2")
// so that it still identifies one node in tooltips and the table.
export function colourAt(i) {
  const c = PALETTE[i % PALETTE.length];
  const round = Math.floor(i / PALETTE.length);
  return round === 0 ? c : { ...c, name: `${c.name} ${round + 1}` };
}

// Colours go by the node's place among all of the ring's nodes in id order
// (draining and joining ones included), so a node keeps its colour while it
// drains.
export function colourMap(ids) {
  const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const m = new Map();
  sorted.forEach((id, i) => m.set(id, colourAt(i)));
  return m;
}

// Light, and far from the node grey: a hole must not read as a node.
export const HOLE = { name: "hole (no node)", hex: "#e0e0e0", rgb: [0xe0, 0xe0, 0xe0] };
