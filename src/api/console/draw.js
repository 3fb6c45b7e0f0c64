// The four ways of drawing a placement on a canvas. Each returns the
// picture's size, at(k) (a point for fraction k of the picture, for the
// keyboard) and hit(x, y) (what is under a point, for the tooltip).

import { pct } from "./dom.js";
import { pointAt, NO_NODE } from "./placement.js";

const EXACT_POINTS = 8192; // above this, paint the circle from angular bins
const BINS = 4096;

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

// The text colour of the theme, without getComputedStyle (which would make
// the browser compute the whole page's style in the middle of building it).
const textColour = () => (matchMedia("(prefers-color-scheme: dark)").matches ? "#ececf1" : "#1d1d1f");

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
  push(0, pos[0], owner[0]);
  for (let i = 1; i < n; i++) push(pos[i - 1], pos[i], owner[i]);
  push(pos[n - 1], 1, owner[0]);
  return runs;
}

// Past EXACT_POINTS arcs are narrower than pixels: paint the donut pixel by
// pixel from the owner at the centre of each of BINS angular bins, which
// costs the same for 1,000 points as for 1,000,000.
function rasterDonut(ctx, S, c, R, r, points, colourOf) {
  const { pos, owner } = points;
  const n = pos.length;
  const bins = new Uint8Array(BINS * 3);
  for (let b = 0, j = 0; b < BINS; b++) {
    const f = (b + 0.5) / BINS;
    while (j < n && pos[j] < f) j++;
    bins.set(colourOf(owner[j === n ? 0 : j]).rgb, b * 3);
  }
  const dpr = window.devicePixelRatio || 1;
  const N = Math.round(S * dpr);
  const off = document.createElement("canvas");
  off.width = N;
  off.height = N;
  const octx = off.getContext("2d");
  const img = octx.createImageData(N, N);
  const px = img.data;
  const cc = N / 2;
  const outer = (R * dpr + 1) ** 2;
  const inner = Math.max(0, r * dpr - 1) ** 2;
  const perRadian = BINS / (2 * Math.PI);
  for (let y = 0; y < N; y++) {
    const dy = y + 0.5 - cc;
    for (let x = 0; x < N; x++) {
      const dx = x + 0.5 - cc;
      const d2 = dx * dx + dy * dy;
      if (d2 > outer || d2 < inner) continue;
      // Clockwise from 12 o'clock, as the keyspace runs.
      let a = Math.atan2(dx, -dy);
      if (a < 0) a += 2 * Math.PI;
      const b = Math.min(BINS - 1, (a * perRadian) | 0) * 3;
      const o = (y * N + x) * 4;
      px[o] = bins[b];
      px[o + 1] = bins[b + 1];
      px[o + 2] = bins[b + 2];
      px[o + 3] = 255;
    }
  }
  octx.putImageData(img, 0, 0);
  // The clip smooths the donut's edges.
  ctx.save();
  ctx.beginPath();
  ctx.arc(c, c, R, 0, 2 * Math.PI);
  ctx.arc(c, c, r, 0, 2 * Math.PI, true);
  ctx.clip();
  ctx.drawImage(off, 0, 0, S, S);
  ctx.restore();
}

export function drawCircle(canvas, data, ids, colourOf, info) {
  const S = 420;
  const ctx = setup(canvas, S, S);
  const c = S / 2;
  const R = S / 2 - 8;
  const r = R * 0.62;
  const ang = (f) => -Math.PI / 2 + f * 2 * Math.PI;
  if (data.decoded.points.pos.length > EXACT_POINTS) {
    rasterDonut(ctx, S, c, R, r, data.decoded.points, colourOf);
  } else {
    // One path per colour: a few fills instead of one per arc.
    const byColour = new Map();
    for (const run of circleRuns(data.decoded.points)) {
      const hex = colourOf(run.o).hex;
      if (!byColour.has(hex)) byColour.set(hex, []);
      byColour.get(hex).push(run);
    }
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
  }
  ctx.fillStyle = textColour();
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

export function drawGrid(canvas, data, ids, colourOf, info, shares, note) {
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

export function drawBar(canvas, data, ids, colourOf, info, shares, note) {
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

export function drawShares(canvas, data, ids, colourOf, info, shares, note) {
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

