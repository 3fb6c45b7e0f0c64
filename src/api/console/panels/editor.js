// The change editor: build one change, preview it as a dry run, then apply
// exactly what was previewed, on exactly the version it was previewed on.

import { h, fill, pct, section } from "../dom.js";
import { get, post, ringPath } from "../api.js";
import { diffBody } from "./diff.js";

const OPS = [["add", "add a node"], ["reweight", "re-weight a node"], ["drain", "drain a node"], ["remove", "remove a node"]];
// What an upsert may carry back of a node record (an upsert replaces it).
const RECORD = ["id", "address", "hash_key", "weight", "zone", "labels", "state", "ramp"];

export function createEditor(ring, { nodeIds, onApplied, onRollout, reloadBase }) {
  const field = (name, labelText, attrs = {}) => {
    const input = h("input", { name, id: `ed-${name}`, autocomplete: "off", ...attrs });
    return [h("label", { for: `ed-${name}` }, labelText), input];
  };
  const op = h("select", { name: "op", id: "ed-op" }, OPS.map(([v, t]) => h("option", { value: v }, t)));
  const datalist = h("datalist", { id: "ed-node-ids" });
  const [nodeL, node] = field("node", "Node id", { list: "ed-node-ids", required: true, spellcheck: "false" });
  const [addrL, address] = field("address", "Address (add)");
  const [zoneL, zone] = field("zone", "Zone (add)");
  const [weightL, weight] = field("weight", "Weight (add, re-weight)", { type: "number", min: 1, max: 1000000, step: 1 });
  const [reasonL, reason] = field("reason", "Reason");
  const rollout = h("input", { type: "checkbox", name: "rollout", id: "ed-rollout" });
  const [stepsL, steps] = field("steps", "Steps", { type: "number", min: 1, max: 100, step: 1, value: "5" });
  const preview = h("button", { type: "submit", testid: "preview" }, "Preview");
  const apply = h("button", { type: "button", testid: "apply", disabled: true }, "Apply");
  const status = h("p", { testid: "editor-status", role: "status", "aria-live": "polite" });
  const error = h("div", { testid: "editor-error", class: "error", role: "alert", hidden: true });
  const result = h("div", { testid: "preview-result", hidden: true });

  const form = h("form", { testid: "editor", class: "editor", novalidate: true },
    h("div", { class: "grid-form" },
      h("label", { for: "ed-op" }, "Change"), op, nodeL, node, datalist, addrL, address,
      zoneL, zone, weightL, weight, reasonL, reason,
      h("label", { for: "ed-rollout" }, "As a rollout in steps"), h("span", null, rollout),
      stepsL, steps),
    h("div", { class: "buttons" }, preview, apply), status, error, result);
  const el = section("Change", "editor-panel", form);

  let previewed = null; // {sig, base, ops, reason, rollout, steps}
  const signature = () => JSON.stringify([op.value, node.value.trim(), address.value.trim(), zone.value.trim(),
    weight.value.trim(), reason.value, rollout.checked, steps.value.trim()]);
  const relevant = () => {
    const o = op.value;
    for (const [l, set] of [[addrL, ["add"]], [zoneL, ["add"]], [weightL, ["add", "reweight"]]]) {
      l.classList.toggle("unused", !set.includes(o));
    }
    stepsL.classList.toggle("unused", !rollout.checked);
  };
  // Apply is for the previewed form only: any edit asks for a new preview.
  form.addEventListener("input", () => {
    relevant();
    apply.disabled = !previewed || previewed.sig !== signature();
  });
  relevant();

  function showError(e, base) {
    error.hidden = false;
    if (e.status === 412) {
      const now = e.problem.current_version ?? "a newer one";
      fill(error, h("p", null,
        `The ring changed to version ${now} since you loaded version ${base}; review the new state and preview again.`),
      h("button", { type: "button", testid: "reload-base", onclick: reloadAndPreview }, "Reload and preview again"));
    } else {
      fill(error, h("p", null, e.message), e.problem.field ? h("p", { class: "muted" }, `field: ${e.problem.field}`) : null);
    }
  }
  const clearError = () => { error.hidden = true; error.replaceChildren(); };

  async function buildOps() {
    const id = node.value.trim();
    if (!id) throw new Error("Give the node id.");
    const w = weight.value.trim();
    if (op.value === "remove") return [{ op: "remove", id }];
    if (op.value === "add") {
      if (nodeIds().includes(id)) throw new Error(`Node ${id} is already in the ring: re-weight, drain or remove it instead.`);
      const n = { id };
      if (address.value.trim()) n.address = address.value.trim();
      if (zone.value.trim()) n.zone = zone.value.trim();
      if (w) n.weight = Number(w);
      return [{ op: "upsert", node: n }];
    }
    // Re-weight and drain rewrite the node's whole record: read it first.
    const cur = await get(ringPath(ring, `/nodes/${encodeURIComponent(id)}`));
    const n = {};
    for (const k of RECORD) if (cur[k] !== undefined && cur[k] !== null) n[k] = cur[k];
    n.id = id;
    if (op.value === "reweight") {
      if (!w) throw new Error("Give the new weight.");
      n.weight = Number(w);
    } else {
      n.state = "draining";
    }
    return [{ op: "upsert", node: n }];
  }

  async function runPreview() {
    clearError();
    status.textContent = "";
    previewed = null;
    apply.disabled = true;
    // An old preview must not pass for this one while it loads.
    result.hidden = true;
    result.replaceChildren();
    delete result.dataset.base;
    const sig = signature();
    let ops;
    try {
      ops = await buildOps();
      const body = { ops, dry_run: true };
      if (reason.value) body.reason = reason.value;
      const res = await post(ringPath(ring, "/changes"), body);
      const parts = [h("p", null, `Preview on version ${res.base_version}: `,
        res.changed ? `would become version ${res.version}.` : "this change alters nothing.")];
      if (res.diff) parts.push(diffBody(res.diff, { movedTestid: "preview-moved", digits: 4 }));
      if (rollout.checked && res.changed) {
        const plan = await post(ringPath(ring, "/rollouts"),
          { ops, policy: { steps: Number(steps.value) || 1 }, dry_run: true, ...(reason.value ? { reason: reason.value } : {}) });
        parts.push(h("h3", null, `Rollout plan: ${plan.steps.length} steps, ${pct(plan.total_moved_fraction, 4)} moved in all`),
          h("ol", { class: "steps" }, plan.steps.map((s) => h("li", null, `${s.summary} — moves ${pct(s.moved_fraction, 4)}`))),
          (plan.notes || []).map((n) => h("p", { class: "muted" }, n)));
      }
      fill(result, parts);
      result.hidden = false;
      result.dataset.base = res.base_version;
      if (res.changed && sig === signature()) {
        previewed = { sig, base: res.base_version, ops, reason: reason.value, rollout: rollout.checked, steps: Number(steps.value) || 1 };
        apply.disabled = false;
      }
    } catch (e) {
      result.hidden = true;
      showError(e, Number(document.querySelector("[data-testid=ring-version]")?.textContent) || "?");
    }
  }

  async function runApply() {
    if (!previewed || previewed.sig !== signature()) return;
    const p = previewed;
    clearError();
    apply.disabled = true;
    try {
      if (p.rollout) {
        const body = { ops: p.ops, policy: { steps: p.steps }, expected_version: p.base };
        if (p.reason) body.reason = p.reason;
        const r = await post(ringPath(ring, "/rollouts"), body);
        status.textContent = `Rollout ${r.id} started from version ${p.base}`;
        onRollout(r);
      } else {
        const body = { ops: p.ops, expected_version: p.base };
        if (p.reason) body.reason = p.reason;
        const res = await post(ringPath(ring, "/changes"), body);
        status.textContent = res.changed ? `Applied: version ${res.version}` : `Nothing changed: still version ${res.version}`;
        onApplied(res.version);
      }
      previewed = null;
      result.hidden = true;
    } catch (e) {
      showError(e, p.base);
      if (e.status !== 412) apply.disabled = false;
      else previewed = null;
    }
  }

  async function reloadAndPreview() {
    await reloadBase();
    await runPreview();
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    runPreview();
  });
  apply.addEventListener("click", runApply);

  function update() {
    fill(datalist, nodeIds().map((id) => h("option", { value: id })));
  }
  return { el, update };
}
