// What moves between two placements: the moved fraction, the from → to
// transfer matrix, each node's gains and losses, and the exact moved
// ranges or partitions. Shared by the history's diff panel and the
// editor's preview.

import { h, fill, pct, section } from "../dom.js";
import { get, ringPath } from "../api.js";

const MATRIX_MAX = 40; // sources and destinations shown; the rest summed up
const RANGES_SHOWN = 50;
const label = (id, side) => (id === null ? (side === "from" ? "(new)" : "(gone)") : id);

export function transferMatrix(transfers) {
  const mass = (key) => {
    const m = new Map();
    for (const t of transfers) m.set(t[key], (m.get(t[key]) || 0) + t.fraction);
    return m;
  };
  // The largest sources and destinations when there are too many to show.
  const pick = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, MATRIX_MAX).map((e) => e[0])
    .sort((a, b) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0));
  const fromM = mass("from");
  const toM = mass("to");
  const rows = pick(fromM);
  const cols = pick(toM);
  const key = (f, t) => JSON.stringify([f, t]); // ids are free text: no separator is safe
  const cell = new Map(transfers.map((t) => [key(t.from, t.to), t.fraction]));
  const max = Math.max(0, ...transfers.map((t) => t.fraction));
  const table = h("table", { testid: "transfer-matrix", class: "data matrix" },
    h("caption", null, "Share of the keyspace moving from each node (rows) to each node (columns)"),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "from \\ to"),
      cols.map((c) => h("th", { scope: "col", dataset: { to: c ?? "" } }, label(c, "to"))))),
    h("tbody", null, rows.map((r) => h("tr", { dataset: { from: r ?? "" } },
      h("th", { scope: "row" }, label(r, "from")),
      cols.map((c) => {
        const f = cell.get(key(r, c));
        const td = h("td", { class: "num", dataset: { to: c ?? "", value: f ?? 0 } }, f ? pct(f) : "");
        // Intensity by fraction; the text carries the same without colour.
        if (f) {
          td.style.setProperty("--heat", String(max ? Math.max(0.08, f / max) : 0));
          td.classList.add("heat");
        }
        return td;
      })))));
  const hidden = fromM.size - rows.length + (toM.size - cols.length);
  // Scrolls sideways on its own, so a wide matrix never widens the panel.
  const wrapped = h("div", { class: "hscroll" }, table);
  return hidden > 0
    ? h("div", null, wrapped, h("p", { class: "muted" },
      `Showing the ${rows.length} largest sources and ${cols.length} largest destinations of ${fromM.size} and ${toM.size}.`))
    : wrapped;
}

export function movementTable(nodes) {
  return h("table", { class: "data", testid: "diff-nodes" },
    h("caption", null, "Per node: share before and after, gained and lost"),
    h("thead", null, h("tr", null, ["Node", "Before", "After", "Gained", "Lost"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", null, nodes.map((n) => h("tr", { dataset: { node: n.id } },
      h("th", { scope: "row" }, n.id),
      h("td", { class: "num", dataset: { col: "before", value: n.before } }, pct(n.before)),
      h("td", { class: "num", dataset: { col: "after", value: n.after } }, pct(n.after)),
      h("td", { class: "num gain", dataset: { col: "gained", value: n.gained } }, n.gained ? `+${pct(n.gained)}` : "—"),
      h("td", { class: "num loss", dataset: { col: "lost", value: n.lost } }, n.lost ? `−${pct(n.lost)}` : "—")))));
}

function rangesList(d) {
  if (d.basis === "partitions" && Array.isArray(d.table_moves)) {
    const total = d.table_moves_total ?? d.table_moves.length;
    return h("div", { testid: "diff-partitions" },
      h("h3", null, `Moved partition slots: ${total.toLocaleString("en")}` +
        (d.replicas_moved !== null && d.replicas_moved !== undefined ? `, replicas to copy: ${d.replicas_moved.toLocaleString("en")}` : "")),
      h("ul", { class: "ranges" }, d.table_moves.slice(0, RANGES_SHOWN).map((m) =>
        h("li", null, `partition ${m.partition} slot ${m.slot}: ${label(m.from, "from")} → ${label(m.to, "to")}`))),
      total > RANGES_SHOWN ? h("p", { class: "muted" }, `and ${total - RANGES_SHOWN} more`) : null);
  }
  const ranges = d.moved_ranges || [];
  if (!ranges.length) return h("p", { class: "muted" }, `No range list for basis ${d.basis}.`);
  const total = d.moved_ranges_total ?? ranges.length;
  return h("div", { testid: "diff-ranges" },
    h("h3", null, `Moved ranges: ${total.toLocaleString("en")}`),
    h("ul", { class: "ranges" }, ranges.slice(0, RANGES_SHOWN).map((r) =>
      h("li", null, h("code", null, `${r.first} – ${r.last}`), `: ${label(r.from, "from")} → ${label(r.to, "to")}`))),
    total > RANGES_SHOWN ? h("p", { class: "muted" }, `and ${total - RANGES_SHOWN} more`) : null);
}

export function diffBody(d, { movedTestid, digits }) {
  return [
    h("p", { class: "moved-line" }, `Moved (basis ${d.basis}): `,
      h("strong", { testid: movedTestid, dataset: { value: d.moved_fraction } }, pct(d.moved_fraction, digits))),
    d.transfers.length ? transferMatrix(d.transfers) : h("p", { class: "muted" }, "Nothing moves."),
    movementTable(d.nodes),
    rangesList(d),
  ];
}

export function createDiffPanel(ring) {
  const body = h("div", { class: "diff-body" }, h("p", { class: "muted" }, "Pick two versions."));
  const el = section("Diff", "diff", body);
  let seq = 0;
  async function load(from, to) {
    const mine = ++seq;
    el.dataset.from = from;
    el.dataset.to = to;
    el.setAttribute("aria-busy", "true");
    try {
      const res = await get(ringPath(ring, `/diff?from=${from}&to=${to}`));
      if (mine !== seq) return;
      fill(body, h("p", null, `From v${from} to v${to}.`), diffBody(res.diff, { movedTestid: "diff-moved", digits: 4 }));
      el.dataset.loaded = `${from}-${to}`;
    } catch (e) {
      if (mine !== seq) return;
      fill(body, h("p", { class: "error", role: "alert" }, e.message));
    } finally {
      if (mine === seq) el.removeAttribute("aria-busy");
    }
  }
  return { el, load };
}
