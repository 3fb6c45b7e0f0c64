// Where the ring's newest rollout stands, kept live by the watch's rollout
// events; with write access, its controls.

import { h, fill, pct, section } from "../dom.js";
import { post, ringPath } from "../api.js";

const ACTIVE = new Set(["planned", "running", "waiting_for_gate", "paused"]);

export function createRolloutPanel(ring, { write }) {
  const body = h("div", { testid: "rollout", "aria-live": "polite" });
  const err = h("p", { class: "error", role: "alert", hidden: true });
  const el = section("Rollout", "rollout-panel", body, err);
  el.hidden = true;
  let current = null;

  function control(action, payload) {
    return h("button", {
      type: "button", testid: `rollout-${action}`,
      onclick: async () => {
        err.hidden = true;
        try {
          show(await post(ringPath(ring, `/rollouts/${current.id}/${action}`), payload));
        } catch (e) {
          err.textContent = e.message;
          err.hidden = false;
        }
      },
    }, action === "abort" ? "abort (walk back)" : action);
  }

  function show(r) {
    if (!r || (current && r.id < current.id)) return;
    // Events of an older revision may arrive after a control's answer.
    if (current && r.id === current.id && r.revision < current.revision) return;
    current = r;
    el.hidden = false;
    body.dataset.state = r.state;
    body.dataset.step = r.step;
    body.dataset.steps = r.steps;
    const active = ACTIVE.has(r.state);
    const gate = r.gate;
    fill(body,
      h("p", null, h("strong", null, `Rollout ${r.id}: `),
        h("span", { testid: "rollout-state", class: `badge rollout-${r.state}` }, r.state.replaceAll("_", " ")),
        " ", h("span", { testid: "rollout-step" }, `step ${r.step} of ${r.steps}`),
        r.direction === "back" ? " (walking back)" : ""),
      r.reason ? h("p", null, `reason: ${r.reason}`) : null,
      r.pause_reason ? h("p", null, `paused: ${r.pause_reason}`) : null,
      gate ? h("p", null, `gate on version ${gate.version}: ${gate.acked} of ${gate.live} live clients acked (${pct(gate.acked_share)}, needs ${pct(gate.needed)})` +
        (gate.lagging?.length ? `; lagging: ${gate.lagging.join(", ")}` : "") +
        (gate.divergent?.length ? `; divergent: ${gate.divergent.join(", ")}` : "")) : null,
      active && r.eta_seconds !== null && r.eta_seconds !== undefined ? h("p", { class: "muted" }, `about ${Math.round(r.eta_seconds)} s to go`) : null,
      h("ol", { class: "steps" }, (r.plan || []).map((s) => h("li", {
        class: s.step <= r.step ? "done" : null,
      }, `${s.summary} — moves ${pct(s.moved_fraction, 4)}${s.version ? ` (version ${s.version})` : ""}`))),
      write && active ? h("div", { class: "buttons" },
        r.state === "paused" ? control("resume") : control("pause"),
        control("advance"), control("abort"), control("abort", { immediate: true })) : null);
    // The two abort buttons need telling apart.
    const aborts = body.querySelectorAll("[data-testid=rollout-abort]");
    if (aborts[1]) {
      aborts[1].textContent = "abort now (straight back to the base)";
      aborts[1].dataset.testid = "rollout-abort-now";
    }
  }
  return { el, show };
}
