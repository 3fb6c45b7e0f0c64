// Who owns a key, at the newest version or a retained one.

import { h, fill, section } from "../dom.js";
import { get, ringPath } from "../api.js";

export function createLookupPanel(ring) {
  const key = h("input", { name: "key", id: "lookup-key", required: true, autocomplete: "off", spellcheck: "false" });
  const version = h("input", { name: "version", id: "lookup-version-input", type: "number", min: 1, step: 1, inputmode: "numeric", placeholder: "latest" });
  const out = h("div", { class: "lookup-out", "aria-live": "polite" });
  const form = h("form", { testid: "lookup", class: "inline-form" },
    h("label", { for: "lookup-key" }, "Key"), key,
    h("label", { for: "lookup-version-input" }, "Version (blank for the latest)"), version,
    h("button", { type: "submit" }, "Look up"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = new URLSearchParams({ key: key.value });
    if (version.value.trim()) q.set("version", version.value.trim());
    fill(out, h("p", { class: "muted" }, "Looking up…"));
    try {
      const r = await get(ringPath(ring, `/lookup?${q}`));
      fill(out, h("dl", { class: "kv" },
        h("dt", null, "Owner"), h("dd", { testid: "lookup-owner" }, r.owner ?? "(no node)"),
        h("dt", null, "Replicas, in order"), h("dd", { testid: "lookup-replicas" }, (r.replicas || []).join(", ")),
        h("dt", null, "Version"), h("dd", { testid: "lookup-version" }, String(r.version)),
        h("dt", null, "Key hash"), h("dd", null, h("code", null, String(r.hash)))));
    } catch (err) {
      fill(out, h("p", { class: "error", role: "alert", testid: "lookup-error" }, err.message));
    }
  });
  const el = section("Lookup", "lookup-panel", form, out);
  return { el };
}
