// Clients that acked a version: who lags, who computed a different
// placement (divergent) than the server for the version it holds, and
// which proxies could not load a newer version (with the proxy's own
// message, shown as text).

import { h, fill, pctShort, section, timeEl } from "../dom.js";

export function createClientsPanel() {
  const summary = h("p", { testid: "clients-summary" });
  const tbody = h("tbody");
  const table = h("table", { testid: "clients-table", class: "data" },
    h("caption", null, "Clients by their latest ack"),
    h("thead", null, h("tr", null, ["Client", "Kind", "Version", "Lag", "Last seen", "Fingerprint", "Status"]
      .map((t) => h("th", { scope: "col" }, t)))),
    tbody);
  const el = section("Clients", "clients", summary, h("div", { class: "scroll" }, table));

  function update(res) {
    const s = res.summary || {};
    summary.textContent = s.clients
      ? `${s.clients} clients, ${s.on_latest} on version ${res.version} (${pctShort(s.on_latest_share)}), ${s.divergent} divergent`
        + (s.failing ? `, ${s.failing} failing` : "")
      : "No client has acked a version yet.";
    fill(tbody, (res.clients || []).map((c) => h("tr", {
      dataset: { client: c.client_id, divergent: c.divergent ? "true" : "false", kind: c.kind },
      class: c.divergent ? "divergent" : null,
    },
    h("th", { scope: "row", dataset: { col: "id" } }, c.client_id),
    h("td", { dataset: { col: "kind" } }, c.kind === "proxy" ? h("span", { class: "badge" }, "proxy") : "library"),
    h("td", { dataset: { col: "version" }, class: "num" }, String(c.version)),
    h("td", { dataset: { col: "lag" }, class: "num" }, String(c.lag)),
    h("td", { dataset: { col: "last-seen" } }, timeEl(c.last_seen)),
    h("td", { dataset: { col: "fingerprint" } }, h("code", { title: c.fingerprint }, String(c.fingerprint).slice(0, 12) + "…")),
    h("td", { dataset: { col: "status" } },
      c.divergent
        ? h("span", { class: "badge flag-divergent", testid: "divergent-flag" }, "divergent")
        : c.matches === null ? h("span", { class: "badge" }, "version pruned: cannot check")
          : c.on_latest ? h("span", { class: "badge ok" }, "on latest")
            : h("span", { class: "badge" }, `behind by ${c.lag}`),
      c.failure ? failure(c.failure) : null))));
  }
  return { el, update };
}

// A version the client could not apply, with the message of the program
// that refused it: free text, so it only ever becomes a text node.
function failure(f) {
  return h("details", { class: "failure", testid: "client-failure", dataset: { version: f.version } },
    h("summary", null, h("span", { class: "badge flag-divergent" }, `could not apply version ${f.version}`)),
    h("pre", null, f.error));
}
