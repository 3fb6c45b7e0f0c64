// The node table: each node with its colour (by name as well as swatch),
// its state and health, and its exact share next to its weight share.

import { h, pct, fixed, section, ago } from "../dom.js";
import { HOLE } from "../colours.js";

const COLS = [
  ["id", "Node"], ["colour", "Colour"], ["address", "Address"], ["zone", "Zone"],
  ["weight", "Weight"], ["state", "State"], ["health", "Health"], ["heartbeat", "Heartbeat"],
  ["share", "Share"], ["weight-share", "Weight share"], ["ratio", "Ratio"],
];

export function createNodesPanel() {
  const tbody = h("tbody");
  const mom = h("span", { testid: "max-over-mean" }, "—");
  const caption = h("caption", null, "Nodes");
  const table = h("table", { testid: "nodes-table", class: "data" },
    caption,
    h("thead", null, h("tr", null, COLS.map(([k, label]) => h("th", { scope: "col",
      title: k === "ratio" ? "share divided by weight share: 1.00 is exactly its weight's due" : null }, label)))),
    tbody);
  const el = section("Nodes", "nodes",
    h("p", null, "Largest share relative to weight share (max/mean): ", mom),
    h("div", { class: "scroll" }, table));

  // data: {nodes (GET …/nodes), ownership, colours}
  function update({ nodes, ownership, colours }) {
    const own = new Map((ownership?.nodes || []).map((n) => [n.id, n]));
    let maxRatio = 1;
    for (const n of own.values()) if (n.ratio > maxRatio) maxRatio = n.ratio;
    mom.textContent = fixed(ownership?.max_over_mean, 2);
    mom.title = String(ownership?.max_over_mean ?? "");
    caption.textContent = `${nodes.length} nodes, ${own.size} active; ownership basis: ${ownership?.basis ?? "—"}`;
    const frag = document.createDocumentFragment();
    for (const n of nodes) frag.appendChild(row(n, own.get(n.id), colours.get(n.id) || HOLE, maxRatio));
    tbody.replaceChildren(frag);
  }
  return { el, update };
}

// One row is built once as a template and cloned: a 1,000-node ring makes
// 12,000 cells, and cloning plus textContent is several times faster than
// creating each element.
let template = null;
function rowTemplate() {
  if (template) return template;
  const td = (col, ...c) => h("td", { dataset: { col } }, ...c);
  template = h("tr", null,
    h("th", { scope: "row", dataset: { col: "id" } }),
    h("td", { dataset: { col: "colour" }, class: "swatch-cell" }),
    td("address"), td("zone"), td("weight"),
    td("state"), td("health"),
    td("heartbeat"),
    h("td", { dataset: { col: "share" }, class: "num" }),
    td("weight-share"),
    h("td", { dataset: { col: "ratio" }, class: "num bar-cell" }));
  return template;
}

function row(n, o, colour, maxRatio) {
  const tr = rowTemplate().cloneNode(true);
  const c = tr.children;
  tr.dataset.node = n.id;
  tr.dataset.state = n.state;
  tr.dataset.health = n.health || "";
  c[0].textContent = n.id;
  // Swatch and bar are backgrounds of their cells, not boxes of their own:
  // 3,000 fewer boxes to lay out in a 1,000-node ring.
  c[1].style.setProperty("--c", colour.hex);
  c[1].textContent = colour.name;
  c[2].textContent = n.address ?? "—";
  c[3].textContent = n.zone ?? "—";
  c[4].textContent = String(n.weight);
  // Plain text coloured by class: a badge box per cell cost a tenth of the
  // table's layout.
  c[5].textContent = n.state;
  c[5].className = `state-${n.state}`;
  c[6].textContent = n.health ?? "—";
  c[6].className = `health-${n.health}`;
  if (n.last_heartbeat) {
    c[7].appendChild(h("time", {
      datetime: n.last_heartbeat,
      title: `last heartbeat ${n.last_heartbeat}; lease until ${n.lease_deadline || "—"}`,
    }, ago(n.last_heartbeat)));
  } else {
    c[7].textContent = "—";
  }
  if (o) {
    c[8].dataset.value = String(o.share);
    c[8].textContent = pct(o.share);
    c[9].textContent = pct(o.expected_share);
    c[10].style.setProperty("--bar", `${Math.min(80, (o.ratio / maxRatio) * 80).toFixed(1)}px`);
    c[10].textContent = fixed(o.ratio, 2);
  } else {
    // Not active: it owns nothing, so no share (the tests read its absence).
    c[8].textContent = "— (not active)";
    c[9].textContent = "—";
    c[10].textContent = "—";
    c[10].classList.remove("bar-cell");
  }
  return tr;
}
