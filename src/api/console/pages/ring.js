// One ring: its placement picture, nodes, history and diffs, clients,
// lookups and (with write access) the change editor. Everything shown is
// refetched when the watch stream announces a version.

import { h, fill, section } from "../dom.js";
import { get, ringPath, ProblemError } from "../api.js";
import { readPlacement } from "../placement.js";
import { colourMap } from "../colours.js";
import { watchRing } from "../watch.js";
import { createPicture } from "../picture.js";
import { createNodesPanel } from "../panels/nodes.js";
import { createHistoryPanel } from "../panels/history.js";
import { createDiffPanel } from "../panels/diff.js";
import { createClientsPanel } from "../panels/clients.js";
import { createLookupPanel } from "../panels/lookup.js";
import { createEditor } from "../panels/editor.js";
import { createRolloutPanel } from "../panels/rollout.js";

const CLIENTS_EVERY_MS = 2000; // acks are not events: poll them

export function ringPage(root, ring, { access, routeStart }) {
  const versionEl = h("span", { testid: "ring-version" }, "…");
  const configEl = h("p", { class: "config muted" });
  const liveEl = h("span", { class: "live", testid: "live", role: "status" }, "connecting");
  const banner = h("p", { class: "error", role: "alert", hidden: true });
  const picture = createPicture();
  const nodes = createNodesPanel();
  const diff = createDiffPanel(ring);
  let diffShown = null;
  const history = createHistoryPanel({ onPick: (f, t) => { diffShown = `${f}-${t}`; diff.load(f, t); } });
  const clients = createClientsPanel();
  const lookup = createLookupPanel(ring);
  const rollout = createRolloutPanel(ring, { write: access.write });
  let last = null; // the data last rendered, for partial refreshes
  const editor = access.write ? createEditor(ring, {
    nodeIds: () => (last ? last.nodes.map((n) => n.id) : []),
    onApplied: (v) => { showVersion(v); schedule(); },
    onRollout: (r) => rollout.show(r),
    reloadBase: () => schedule(),
  }) : null;

  const page = h("div", { class: "ring-page", testid: "ring-page", dataset: { ring } },
    h("div", { class: "page-head" },
      h("h1", null, h("a", { href: "#/" }, "Rings"), " / ", h("span", { class: "ring-name" }, ring)),
      h("p", { class: "version" }, "Version ", versionEl, " ", liveEl)),
    configEl, banner,
    h("div", { class: "cols picture-row" }, section("Placement", "placement", picture.el), nodes.el),
    h("div", { class: "cols" }, history.el, diff.el),
    h("div", { class: "cols" }, clients.el, lookup.el),
    editor ? h("div", { class: "cols" }, editor.el, rollout.el) : rollout.el);
  fill(root, page);

  let latest = 0; // the newest version heard of, from loads or the watch
  let fetched = 0; // the newest version a load has fetched (or is fetching)
  let loading = null;
  let again = false;
  let measured = false;
  let destroyed = false;

  const showVersion = (v) => {
    if (v > latest) latest = v;
    versionEl.textContent = String(latest);
  };

  async function load() {
    const summary = await get(ringPath(ring));
    showVersion(summary.version);
    const v = summary.version;
    if (v > fetched) fetched = v;
    const [nodeList, hist, cl, table] = await Promise.all([
      get(ringPath(ring, "/nodes")),
      get(ringPath(ring, "/history")),
      get(ringPath(ring, "/clients")),
      get(ringPath(ring, `/snapshots/${v}/table`), { raw: true }).then((r) => r.arrayBuffer()),
    ]);
    if (destroyed) return;
    const marks = !measured; // the first render's phases, for whoever profiles it
    if (marks) performance.mark("ringd:ring-page:fetched");
    // Checked against the fingerprint, decoded and measured by the package's
    // modules; the server's ownership only when the encoding is unusable.
    const { check, decoded, ownership: own } = await readPlacement(table, summary.fingerprint);
    const ownership = own ?? await get(ringPath(ring, `/ownership?version=${v}`));
    if (destroyed) return;
    const ids = new Set([...nodeList.nodes.map((n) => n.id), ...(decoded ? decoded.nodes : ownership.nodes).map((n) => n.id)]);
    const colours = colourMap(ids);
    last = { summary, nodes: nodeList.nodes, ownership, colours };
    const c = summary.config;
    configEl.textContent = `${c.algorithm}, hash ${c.hash}, replication factor ${c.replication_factor}` +
      (c.algorithm === "ring" ? `, ${c.vnodes_per_weight} points per weight` : "") +
      (c.table_size ? `, table size ${c.table_size}` : "") + (c.partitions ? `, ${c.partitions} partitions` : "") +
      (c.zone_aware ? ", zone aware" : "") + `; fingerprint ${summary.fingerprint.slice(0, 16)}…`;
    picture.update({ algorithm: c.algorithm, version: v, decoded, ownership, colours, check });
    nodes.update(last);
    const pick = history.update(hist.entries);
    clients.update(cl);
    if (editor) editor.update();
    if (marks) performance.mark("ringd:ring-page:built");
    // Rendered means painted: wait for the frame that shows it.
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    if (destroyed) return;
    if (!measured) {
      measured = true;
      performance.measure("ringd:ring-page", { start: routeStart, end: performance.now() });
    }
    page.dataset.rendered = String(v);
    // The diff is not part of the first paint: it follows the newest change
    // unless the operator picked versions of their own.
    if (pick && diffShown !== `${pick.from}-${pick.to}`) {
      diffShown = `${pick.from}-${pick.to}`;
      diff.load(pick.from, pick.to);
    }
    if (nodeList.version > v && nodeList.version > latest) showVersion(nodeList.version);
  }

  // One load at a time; a version announced meanwhile that the load did
  // not fetch causes one more (as does an explicit request, e.g. after an
  // apply or a health event).
  function schedule() {
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      do {
        again = false;
        try {
          await load();
          banner.hidden = true;
          if (page.dataset.deleted) {
            // Created again: a stream that saw the deletion hears no more.
            delete page.dataset.deleted;
            stream.restart();
          }
        } catch (e) {
          if (destroyed) return;
          banner.hidden = false;
          banner.textContent = e instanceof ProblemError && e.status === 404
            ? `Ring ${ring} does not exist (any more).`
            : `Could not load the ring: ${e.message}`;
          break; // the next event or apply tries again
        }
      } while ((again || latest > fetched) && !destroyed);
      loading = null;
    })();
    return loading;
  }

  const stream = watchRing(ring, {
    onState: (s) => { liveEl.textContent = s === "open" ? "live" : "reconnecting…"; liveEl.dataset.state = s; },
    onVersion: (v, data, type) => {
      // A reset may go back: the ring was deleted and created again.
      if (type === "reset" && v < latest) {
        latest = v;
        fetched = 0;
      }
      showVersion(v);
      if (v > fetched && !loading) schedule();
    },
    onDeleted: () => {
      // Whatever version comes next is a new ring's: load it.
      latest = 0;
      fetched = 0;
      banner.hidden = false;
      banner.textContent = `Ring ${ring} was deleted.`;
      page.dataset.deleted = "true";
    },
    onRollout: (r) => rollout.show(r),
    onHealth: () => refreshNodes(),
  });

  let healthTimer = null;
  function refreshNodes() {
    clearTimeout(healthTimer);
    healthTimer = setTimeout(async () => {
      if (!last) return;
      try {
        const list = await get(ringPath(ring, "/nodes"));
        last = { ...last, nodes: list.nodes };
        nodes.update(last);
      } catch { /* the next version reloads it anyway */ }
    }, 200);
  }

  const poll = setInterval(async () => {
    if (document.visibilityState !== "visible") return;
    // A deleted ring may be created again: look for it at the same pace.
    if (page.dataset.deleted) {
      schedule();
      return;
    }
    if (!page.dataset.rendered) return;
    try {
      clients.update(await get(ringPath(ring, "/clients")));
    } catch { /* shown again on the next tick */ }
  }, CLIENTS_EVERY_MS);

  // The newest rollout, if the ring has one; events keep it current.
  get(ringPath(ring, "/rollouts")).then((r) => r.rollouts && r.rollouts[0] && rollout.show(r.rollouts[0])).catch(() => {});

  schedule();
  return {
    destroy() {
      destroyed = true;
      stream.close();
      clearInterval(poll);
      clearTimeout(healthTimer);
    },
  };
}
