// Every ring at a glance, live: /v1/watch announces each new version of any
// ring and the row refetches its summary; client columns are polled, since
// acks are not events.

import { h, fill, pct, pctShort, timeEl } from "../dom.js";
import { get, ringPath, ProblemError } from "../api.js";
import { watchAllRings } from "../watch.js";

const CLIENTS_EVERY_MS = 2000;
const COLS = [["name", "Ring"], ["algorithm", "Algorithm"], ["version", "Version"], ["nodes", "Nodes"],
  ["on-latest", "Clients on latest"], ["divergent", "Divergent clients"], ["last-change", "Last change"],
  ["moved", "Moved by last change"]];

export function ringsPage(root) {
  const tbody = h("tbody");
  const empty = h("p", { class: "muted", hidden: true }, "No rings yet. Create one with ",
    h("code", null, "ringd ring create NAME"), " or PUT /v1/rings/NAME.");
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const live = h("span", { class: "live", role: "status" }, "connecting");
  fill(root, h("div", { testid: "rings-page" },
    h("div", { class: "page-head" }, h("h1", null, "Rings"), h("p", null, live)),
    error,
    h("div", { class: "scroll" }, h("table", { testid: "rings-table", class: "data" },
      h("caption", null, "Rings, their newest version and how far their clients have followed"),
      h("thead", null, h("tr", null, COLS.map(([, t]) => h("th", { scope: "col" }, t)))),
      tbody)),
    empty));

  const rows = new Map(); // ring → {tr, cells, version, movedFor}
  let destroyed = false;

  function rowFor(name) {
    let r = rows.get(name);
    if (r) return r;
    const cells = {};
    const tr = h("tr", { dataset: { ring: name } }, COLS.map(([k]) => {
      cells[k] = h("td", { dataset: { col: k } });
      return cells[k];
    }));
    fill(cells.name, h("a", { href: `#/rings/${encodeURIComponent(name)}` }, name));
    cells["on-latest"].textContent = "—";
    cells.divergent.textContent = "0";
    r = { tr, cells, version: 0, movedFor: 0 };
    rows.set(name, r);
    // Rows stay in name order.
    const after = [...rows.keys()].sort().find((k) => k > name && rows.get(k).tr.isConnected);
    tbody.insertBefore(tr, after ? rows.get(after).tr : null);
    empty.hidden = true;
    return r;
  }

  function removeRow(name) {
    const r = rows.get(name);
    if (r) r.tr.remove();
    rows.delete(name);
    empty.hidden = rows.size > 0;
  }

  function showSummary(s) {
    const r = rowFor(s.ring);
    if (s.version < r.version) return;
    r.version = s.version;
    r.cells.algorithm.textContent = s.config.algorithm;
    r.cells.version.textContent = String(s.version);
    r.cells.nodes.textContent = String(s.nodes);
    r.cells.nodes.title = `${s.active_nodes} active`;
    fill(r.cells["last-change"], timeEl(s.created_at));
    if (r.movedFor !== s.version) loadMoved(s.ring, s.version);
  }

  // The summary has no moved fraction: the version's snapshot has it.
  async function loadMoved(name, version) {
    const r = rows.get(name);
    r.movedFor = version;
    try {
      const snap = await get(ringPath(name, `/snapshots/${version}`));
      const mf = snap.change ? snap.change.moved_fraction : null;
      if (rows.get(name) === r && r.version === version) {
        r.cells.moved.textContent = pct(mf);
        r.cells.moved.dataset.value = String(mf);
      }
    } catch {
      r.movedFor = 0;
    }
  }

  async function refreshRing(name, version) {
    const r = rows.get(name);
    if (r && version && r.version >= version) return;
    try {
      showSummary(await get(ringPath(name)));
      refreshClients(name);
    } catch (e) {
      if (e instanceof ProblemError && e.status === 404) removeRow(name);
    }
  }

  async function refreshClients(name) {
    try {
      const c = await get(ringPath(name, "/clients"));
      const r = rows.get(name);
      if (!r) return;
      r.cells["on-latest"].textContent = c.summary.clients ? pctShort(c.summary.on_latest_share) : "—";
      r.cells["on-latest"].title = `${c.summary.on_latest} of ${c.summary.clients} clients`;
      r.cells.divergent.textContent = String(c.summary.divergent);
      r.tr.classList.toggle("has-divergent", c.summary.divergent > 0);
    } catch { /* retried on the next tick */ }
  }

  async function refreshAll() {
    try {
      const list = await get("/v1/rings");
      if (destroyed) return;
      error.hidden = true;
      const names = new Set(list.rings.map((s) => s.ring));
      for (const name of [...rows.keys()]) if (!names.has(name)) removeRow(name);
      for (const s of list.rings) showSummary(s);
      empty.hidden = list.rings.length > 0;
      await Promise.all(list.rings.map((s) => refreshClients(s.ring)));
    } catch (e) {
      error.hidden = false;
      error.textContent = `Could not list the rings: ${e.message}`;
    }
  }

  const stream = watchAllRings({
    onState: (s) => { live.textContent = s === "open" ? "live" : "reconnecting…"; live.dataset.state = s; },
    onRing: (name, version) => refreshRing(name, version),
    onDeleted: (name) => removeRow(name),
  });
  const poll = setInterval(() => {
    if (document.visibilityState !== "visible") return;
    for (const name of rows.keys()) refreshClients(name);
  }, CLIENTS_EVERY_MS);
  refreshAll();

  return {
    destroy() {
      destroyed = true;
      stream.close();
      clearInterval(poll);
    },
  };
}
