// The placement picture: the ring as a circle (ring, ketama), a table as a
// grid of slots (maglev) or partitions' primaries (table), jump's buckets
// as a bar, and rendezvous (which has no structure) as a bar of shares.
// Drawn on a canvas; the legend and the node table say the same in text.

import { h, fill, pct } from "./dom.js";
import { pointAt, NO_NODE } from "./encoding.js";
import { HOLE } from "./colours.js";

const KIND = { ring: "circle", ketama: "circle", maglev: "grid", table: "grid", jump: "bar", rendezvous: "shares" };
const EXACT_POINTS = 8192; // above this, sample the circle in angular bins
const BINS = 4096;
const LEGEND_MAX = 24;

export function createPicture() {
  const canvas = h("canvas", { role: "img", "aria-label": "placement picture", tabindex: 0 });
  const tip = h("div", { class: "tip", testid: "picture-tip", role: "tooltip", hidden: true });
  const note = h("p", { class: "muted" });
  const legend = h("ul", { class: "legend", "aria-label": "legend" });
  const el = h("figure", { class: "picture", testid: "picture" },
    h("div", { class: "canvas-wrap" }, canvas, tip), note, h("figcaption", null, legend));
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

  // data: {decoded, ownership, colours (Map id → colour), algorithm}
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
    if (ids.length === 0) {
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

function setup(canvas, w, hgt) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(hgt * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.aspectRatio = `${w} / ${hgt}`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, hgt);
  return ctx;
}

const cssVar = (name, fallback) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

// Runs of [from, to) fractions of the keyspace per node index, adjacent
// arcs of one node merged. Point i owns (p[i-1], p[i]]; point 0 also owns
// the wrap-around past the last point.
function circleRuns(points) {
  const { pos, owner } = points;
  const n = pos.length;
  const runs = [];
  const push = (a, b, o) => {
    const last = runs[runs.length - 1];
    if (last && last.o === o && last.b === a) last.b = b;
    else runs.push({ a, b, o });
  };
  if (n <= EXACT_POINTS) {
    push(0, pos[0], owner[0]);
    for (let i = 1; i < n; i++) push(pos[i - 1], pos[i], owner[i]);
    push(pos[n - 1], 1, owner[0]);
  } else {
    // Sample each bin's centre: arcs narrower than a bin are not visible.
    let j = 0;
    for (let b = 0; b < BINS; b++) {
      const f = (b + 0.5) / BINS;
      while (j < n && pos[j] < f) j++;
      push(b / BINS, (b + 1) / BINS, owner[j === n ? 0 : j]);
    }
  }
  return runs;
}

function drawCircle(canvas, data, ids, colourOf, info) {
  const S = 420;
  const ctx = setup(canvas, S, S);
  const c = S / 2;
  const R = S / 2 - 8;
  const r = R * 0.62;
  const runs = circleRuns(data.decoded.points);
  // One path per colour: a few dozen fills instead of one per arc.
  const byColour = new Map();
  for (const run of runs) {
    const hex = colourOf(run.o).hex;
    if (!byColour.has(hex)) byColour.set(hex, []);
    byColour.get(hex).push(run);
  }
  const ang = (f) => -Math.PI / 2 + f * 2 * Math.PI;
  for (const [hex, list] of byColour) {
    ctx.beginPath();
    for (const { a, b } of list) {
      ctx.moveTo(c + r * Math.cos(ang(a)), c + r * Math.sin(ang(a)));
      ctx.arc(c, c, R, ang(a), ang(b));
      ctx.arc(c, c, r, ang(b), ang(a), true);
      ctx.closePath();
    }
    ctx.fillStyle = hex;
    ctx.fill();
  }
  ctx.fillStyle = cssVar("--fg", "#222");
  ctx.font = "12px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.fillText("0", c, c - r + 16);
  ctx.fillText(`${data.decoded.points.pos.length.toLocaleString("en")} points`, c, c + 4);
  ctx.fillText("clockwise from 0", c, c + 20);
  const points = data.decoded.points;
  const mid = (R + r) / 2;
  return {
    w: S, h: S,
    at: (k) => [c + mid * Math.cos(ang(k)), c + mid * Math.sin(ang(k))],
    hit(x, y) {
      let f = (Math.atan2(y - c, x - c) + Math.PI / 2) / (2 * Math.PI);
      if (f < 0) f += 1;
      return info(points.owner[pointAt(points, f)], `position ${pct(f)} of the keyspace`);
    },
  };
}

function drawGrid(canvas, data, ids, colourOf, info, shares, note) {
  const d = data.decoded;
  const table = data.algorithm === "table";
  const n = table ? d.partitions : d.cells.length;
  const stride = table ? d.replicas : 1;
  const cols = Math.ceil(Math.sqrt(n));
  const rows = Math.ceil(n / cols);
  const W = 520;
  const cell = W / cols;
  const H = Math.max(cell * rows, 20);
  const ctx = setup(canvas, W, H);
  const off = document.createElement("canvas");
  off.width = cols;
  off.height = rows;
  const octx = off.getContext("2d");
  const img = octx.createImageData(cols, rows);
  const px = img.data;
  for (let i = 0; i < n; i++) {
    const rgb = colourOf(stride ? d.cells[i * stride] : NO_NODE).rgb;
    px[i * 4] = rgb[0];
    px[i * 4 + 1] = rgb[1];
    px[i * 4 + 2] = rgb[2];
    px[i * 4 + 3] = 255;
  }
  octx.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, 0, 0, cols * cell, rows * cell);
  note.textContent = table
    ? `${n.toLocaleString("en")} partitions, coloured by primary, row by row from partition 0`
    : `${n.toLocaleString("en")} table slots, row by row from slot 0`;
  return {
    w: W, h: H,
    at: (k) => {
      const i = Math.floor(k * n);
      return [(i % cols + 0.5) * cell, (Math.floor(i / cols) + 0.5) * cell];
    },
    hit(x, y) {
      const i = Math.min(n - 1, Math.max(0, Math.floor(y / cell) * cols + Math.floor(x / cell)));
      if (!table) return info(d.cells[i], `slot ${i}`);
      const row = Array.from(d.cells.subarray(i * stride, (i + 1) * stride), (k) => ids[k] ?? "?");
      return info(stride ? d.cells[i * stride] : NO_NODE, `partition ${i}: ${row.join(", ")}`);
    },
  };
}

function drawBar(canvas, data, ids, colourOf, info, shares, note) {
  const cells = data.decoded.cells;
  const n = cells.length;
  const W = 720;
  const H = 56;
  const ctx = setup(canvas, W, H);
  // Merge runs of one owner; past 4 buckets a pixel, sample per half pixel.
  const steps = Math.min(n, W * 2);
  let start = 0;
  let cur = cells[0];
  for (let s = 1; s <= steps; s++) {
    const k = s === steps ? -1 : cells[Math.floor((s * n) / steps)];
    if (k !== cur) {
      ctx.fillStyle = colourOf(cur).hex;
      ctx.fillRect((start / steps) * W, 0, ((s - start) / steps) * W + 0.5, H);
      start = s;
      cur = k;
    }
  }
  const holes = cells.reduce((a, k) => a + (k === NO_NODE ? 1 : 0), 0);
  note.textContent = `${n.toLocaleString("en")} buckets in jump order` +
    (holes ? `, ${holes} of them holes (grey)` : "");
  return {
    w: W, h: H,
    at: (k) => [k * W, H / 2],
    hit(x) {
      const i = Math.min(n - 1, Math.max(0, Math.floor((x / W) * n)));
      return info(cells[i], `bucket ${i}`);
    },
  };
}

function drawShares(canvas, data, ids, colourOf, info, shares, note) {
  const W = 720;
  const H = 56;
  const ctx = setup(canvas, W, H);
  const spans = [];
  let x = 0;
  ids.forEach((id, i) => {
    const w = (shares.get(id) || 0) * W;
    ctx.fillStyle = colourOf(i).hex;
    ctx.fillRect(x, 0, w + 0.5, H);
    spans.push({ a: x, b: x + w, i });
    x += w;
  });
  note.textContent = "Rendezvous hashing has no layout to draw: each node's share of the keyspace, in id order";
  return {
    w: W, h: H,
    at: (k) => [k * x, H / 2],
    hit(px) {
      const s = spans.find((sp) => px >= sp.a && px < sp.b) || spans[spans.length - 1];
      return info(s.i);
    },
  };
}

function renderLegend(ul, ids, colours, shares) {
  const shown = ids.slice(0, LEGEND_MAX);
  fill(ul, shown.map((id) => {
    const c = colours.get(id) || HOLE;
    return h("li", { dataset: { node: id } },
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
