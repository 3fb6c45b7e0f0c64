// The placement picture: the ring as a circle (ring, ketama), a table as a
// grid of slots (maglev, envoy_maglev) or partitions' primaries (table), jump's buckets
// as a bar, and rendezvous (which has no structure) as a bar of shares.
// Drawn on a canvas; the legend and the node table say the same in text.

import { h, fill, pct } from "./dom.js";
import { NO_NODE } from "./placement.js";
import { drawCircle, drawGrid, drawBar, drawShares } from "./draw.js";
import { HOLE } from "./colours.js";

const KIND = { ring: "circle", ketama: "circle", nginx: "circle", haproxy: "circle", twemproxy: "circle", envoy_ring_hash: "circle", maglev: "grid", envoy_maglev: "grid", table: "grid", jump: "bar", rendezvous: "shares" };
const LEGEND_MAX = 24;

export function createPicture() {
  const canvas = h("canvas", { role: "img", "aria-label": "placement picture", tabindex: 0 });
  const tip = h("div", { class: "tip", testid: "picture-tip", role: "tooltip", hidden: true });
  const note = h("p", { class: "muted" });
  const check = h("p", { class: "muted", testid: "picture-check", role: "status" });
  const legend = h("ul", { class: "legend", "aria-label": "legend" });
  const el = h("figure", { class: "picture", testid: "picture" },
    h("div", { class: "canvas-wrap" }, canvas, tip), note, check, h("figcaption", null, legend));
  let state = null;

  function showAt(x, y) {
    const hit = state && state.hit(x, y);
    if (!hit) {
      tip.hidden = true;
      return;
    }
    fill(tip,
      h("strong", null, hit.id), h("br"),
      h("span", { class: "swatch", dataset: { c: hit.colour.hex } }), ` ${hit.colour.name}`, h("br"),
      `share ${pct(hit.share)}`, hit.extra ? [h("br"), hit.extra] : null);
    paintSwatches(tip);
    tip.hidden = false;
    const r = canvas.getBoundingClientRect();
    const px = (x / state.w) * r.width;
    const py = (y / state.h) * r.height;
    tip.style.left = `${Math.max(0, Math.min(px + 14, r.width - 180))}px`;
    tip.style.top = `${py + 14}px`;
  }
  canvas.addEventListener("mousemove", (e) => {
    if (!state) return;
    const r = canvas.getBoundingClientRect();
    showAt(((e.clientX - r.left) / r.width) * state.w, ((e.clientY - r.top) / r.height) * state.h);
  });
  // The keyboard walks the same picture: arrows move a cursor through the
  // keyspace (Shift for bigger steps), and the tooltip follows it.
  let cursor = 0;
  canvas.addEventListener("keydown", (e) => {
    if (!state) return;
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (!step) return;
    e.preventDefault();
    cursor = (cursor + step * (e.shiftKey ? 0.05 : 0.005) + 1) % 1;
    const [x, y] = state.at(cursor);
    showAt(x, y);
  });
  canvas.addEventListener("blur", () => { tip.hidden = true; });
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });

  // data: {decoded, ownership, colours (Map id → colour), algorithm, version,
  // check (readPlacement's)}. decoded is null when the encoding could not
  // be used: the picture then says why instead of drawing.
  function update(data) {
    const kind = KIND[data.algorithm] || "shares";
    el.dataset.kind = kind;
    const shares = new Map((data.ownership?.nodes || []).map((n) => [n.id, n.share]));
    const ids = data.decoded ? data.decoded.nodes.map((n) => n.id) : [...shares.keys()];
    const colourOf = (i) => (i === NO_NODE || i >= ids.length ? HOLE : data.colours.get(ids[i]) || HOLE);
    const info = (i, extra) => (i === NO_NODE || i >= ids.length
      ? { id: "(hole)", colour: HOLE, share: null, extra }
      : { id: ids[i], colour: colourOf(i), share: shares.get(ids[i]) ?? 0, extra });
    note.textContent = "";
    showCheck(check, data);
    if (!data.decoded) {
      state = null;
      canvas.hidden = true;
    } else if (ids.length === 0) {
      state = null;
      canvas.hidden = true;
      note.textContent = "No active node: the ring places no key.";
    } else {
      canvas.hidden = false;
      const draw = { circle: drawCircle, grid: drawGrid, bar: drawBar, shares: drawShares }[kind];
      state = draw(canvas, data, ids, colourOf, info, shares, note);
    }
    canvas.setAttribute("aria-label",
      `${data.algorithm} placement of ${ids.length} active nodes; arrow keys move through the keyspace; the legend and the node table list each node's share`);
    renderLegend(legend, ids, data.colours, shares);
  }
  return { el, update };
}

// What the picture says about the encoding it was drawn from.
function showCheck(p, { check, version }) {
  p.dataset.state = check.state;
  p.className = check.state === "verified" || check.state === "unchecked" ? "muted" : "error";
  p.setAttribute("role", p.className === "error" ? "alert" : "status");
  const short = (f) => `${String(f).slice(0, 16)}…`;
  p.textContent = {
    verified: `Drawn from version ${version}'s encoding, whose SHA-256 is its fingerprint ${short(check.expected)}.`,
    unchecked: `Drawn without checking the encoding against its fingerprint: this browser offers Web Crypto ` +
      `(crypto.subtle) only in a secure context (HTTPS, or http://127.0.0.1 or http://localhost).`,
    mismatch: `Not drawn: the placement encoding downloaded for version ${version} does not match its fingerprint ` +
      `(its SHA-256 is ${short(check.actual)}, the fingerprint ${short(check.expected)}). ` +
      `Something between ringd and this browser changed it; the shares shown are the server's.`,
    invalid: `Not drawn: the placement encoding of version ${version} could not be decoded (${check.message}); ` +
      `the shares shown are the server's.`,
  }[check.state];
}

function renderLegend(ul, ids, colours, shares) {
  const shown = ids.slice(0, LEGEND_MAX);
  fill(ul, shown.map((id) => {
    const c = colours.get(id) || HOLE;
    return h("li", { dataset: { node: id, share: String(shares.get(id) ?? 0) } },
      h("span", { class: "swatch", dataset: { c: c.hex } }), " ",
      h("span", { class: "id" }, id), ` ${c.name}, ${pct(shares.get(id) ?? 0)}`);
  }), ids.length > LEGEND_MAX
    ? h("li", { class: "muted" }, `and ${ids.length - LEGEND_MAX} more (see the node table)`)
    : null);
  paintSwatches(ul);
}

// Swatch colours are set from script (the CSP forbids style attributes in
// markup, not the style property).
export function paintSwatches(root) {
  for (const s of root.querySelectorAll(".swatch[data-c]")) s.style.backgroundColor = s.dataset.c;
}
