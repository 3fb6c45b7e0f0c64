// The node table: each node with its colour (by name as well as swatch),
// its state and health, and its exact share next to its weight share.

import { h, fill, pct, fixed, section, ago } from "../dom.js";
import { paintSwatches } from "../picture.js";
import { HOLE } from "../colours.js";

const COLS = [
  ["id", "Node"], ["colour", "Colour"], ["address", "Address"], ["zone", "Zone"],
  ["weight", "Weight"], ["state", "State"], ["health", "Health"], ["heartbeat", "Heartbeat"],
  ["share", "Share"], ["weight-share", "Weight share"], ["ratio", "Share / weight share"],
];

export function createNodesPanel() {
  const tbody = h("tbody");
  const mom = h("span", { testid: "max-over-mean" }, "—");
  const caption = h("caption", null, "Nodes");
  const table = h("table", { testid: "nodes-table", class: "data" },
    caption,
    h("thead", null, h("tr", null, COLS.map(([, label]) => h("th", { scope: "col" }, label)))),
    tbody);
  const el = section("Nodes", "nodes",
    h("p", null, "Largest share relative to weight share (max/mean): ", mom),
    h("div", { class: "scroll" }, table));

  // data: {nodes (GET …/nodes), ownership, colours}
  function update({ nodes, ownership, colours }) {
    const own = new Map((ownership?.nodes || []).map((n) => [n.id, n]));
    const maxRatio = Math.max(1, ...[...own.values()].map((n) => n.ratio || 0));
    mom.textContent = fixed(ownership?.max_over_mean, 2);
    mom.title = String(ownership?.max_over_mean ?? "");
    caption.textContent = `${nodes.length} nodes, ${own.size} active; ownership basis: ${ownership?.basis ?? "—"}`;
    fill(tbody, nodes.map((n) => row(n, own.get(n.id), colours.get(n.id) || HOLE, maxRatio)));
    paintSwatches(tbody);
    // Bars are sized from script: no style attributes under the CSP.
    for (const bar of tbody.querySelectorAll(".bar > span[data-w]")) bar.style.width = bar.dataset.w;
  }
  return { el, update };
}

function row(n, o, colour, maxRatio) {
  const td = (col, ...c) => h("td", { dataset: { col } }, ...c);
  const share = o ? o.share : 0;
  const ratio = o ? o.ratio : null;
  const hb = n.last_heartbeat
    ? h("time", { datetime: n.last_heartbeat, title: `last heartbeat ${n.last_heartbeat}; lease until ${n.lease_deadline || "—"}` }, ago(n.last_heartbeat))
    : "—";
  return h("tr", { dataset: { node: n.id, state: n.state, health: n.health || "" } },
    h("th", { scope: "row", dataset: { col: "id" } }, n.id),
    td("colour", h("span", { class: "swatch", dataset: { c: colour.hex } }), " ", colour.name),
    td("address", n.address ?? "—"),
    td("zone", n.zone ?? "—"),
    td("weight", String(n.weight)),
    td("state", h("span", { class: `badge state-${n.state}` }, n.state)),
    td("health", h("span", { class: `badge health-${n.health}` }, n.health ?? "—")),
    td("heartbeat", hb),
    h("td", { dataset: { col: "share", value: String(share) }, class: "num" }, o ? pct(share) : "— (not active)"),
    td("weight-share", o ? pct(o.expected_share) : "—"),
    h("td", { dataset: { col: "ratio" }, class: "num" },
      ratio === null ? "—" : [
        h("span", { class: "bar", "aria-hidden": "true" },
          h("span", { dataset: { w: `${Math.min(100, (ratio / maxRatio) * 100).toFixed(1)}%` } })),
        " ", fixed(ratio, 2),
      ]));
}
