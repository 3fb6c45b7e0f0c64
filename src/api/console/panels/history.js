// The version timeline, newest first, and the two version pickers that
// choose what the diff panel compares.

import { h, fill, pct, section, timeEl } from "../dom.js";

export function summarizeOps(ops) {
  if (!Array.isArray(ops)) return `${ops ?? 0} ops`;
  const parts = ops.slice(0, 4).map((op) => {
    if (op.op === "upsert") {
      const n = op.node || {};
      const bits = [`weight ${n.weight ?? 1}`];
      if (n.state && n.state !== "active") bits.push(n.state);
      return `upsert ${n.id} (${bits.join(", ")})`;
    }
    if (op.op === "remove") return `remove ${op.id}`;
    if (op.op === "set_config") return `set config (${op.config?.algorithm ?? "?"})`;
    if (op.op === "update_config") return "update config";
    return op.op;
  });
  if (ops.length > 4) parts.push(`and ${ops.length - 4} more`);
  return parts.join("; ") || "no ops";
}

export function createHistoryPanel({ onPick }) {
  const list = h("ol", { class: "timeline", reversed: true });
  const from = h("select", { testid: "diff-from", id: "diff-from", name: "from" });
  const to = h("select", { testid: "diff-to", id: "diff-to", name: "to" });
  const changed = () => onPick(Number(from.value), Number(to.value));
  from.addEventListener("change", changed);
  to.addEventListener("change", changed);
  const pickers = h("div", { class: "pickers" },
    h("label", { for: "diff-from" }, "Compare version "), from,
    h("label", { for: "diff-to" }, " with version "), to);
  const el = section("History", "history", pickers, h("div", { class: "scroll tall" }, list));
  let versions = [];

  // entries: oldest first, as the server lists them.
  function update(entries) {
    const newest = [...entries].reverse();
    const prevVersions = versions;
    versions = newest.map((e) => e.version);
    fill(list, newest.map((e) => h("li", { dataset: { version: e.version } },
      h("div", { class: "line" },
        h("strong", null, `v${e.version}`), " ", timeEl(e.created_at), " · moved ",
        h("span", { class: "moved", dataset: { value: e.moved_fraction } }, pct(e.moved_fraction)),
        e.version > 1 && versions.includes(e.version - 1)
          ? [" ", h("button", { type: "button", class: "link", onclick: () => pick(e.version - 1, e.version) }, "diff with previous")]
          : null),
      h("div", { class: "ops" }, summarizeOps(e.ops)),
      h("div", { class: "reason" }, e.reason ? `reason: ${e.reason}` : "no reason given",
        e.role ? h("span", { class: "muted" }, ` (by ${e.role})`) : null))));
    // Keep the operator's choice when it is still retained, else follow the
    // newest change.
    const keep = prevVersions.length && Number(to.value) !== prevVersions[0] &&
      versions.includes(Number(from.value)) && versions.includes(Number(to.value));
    const f = keep ? Number(from.value) : (versions[1] ?? versions[0]);
    const t = keep ? Number(to.value) : versions[0];
    const opts = () => versions.map((v) => h("option", { value: v }, `v${v}`));
    fill(from, opts());
    fill(to, opts());
    if (f !== undefined) from.value = String(f);
    if (t !== undefined) to.value = String(t);
    return f === undefined ? null : { from: f, to: t };
  }

  function pick(f, t) {
    from.value = String(f);
    to.value = String(t);
    changed();
  }
  return { el, update };
}
