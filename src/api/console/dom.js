// A tiny DOM builder. Server data (node ids, reasons, zones) is free text,
// so it only ever reaches the page as text nodes or attribute values, never
// as markup.

export function h(tag, attrs, ...children) {
  const svg = tag.startsWith("svg:");
  const el = svg
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") {
        el.addEventListener(k.slice(2).toLowerCase(), v);
      } else if (k === "class") {
        el.setAttribute("class", v);
      } else if (k === "dataset") {
        for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv);
      } else if (k === "testid") {
        el.setAttribute("data-testid", v);
      } else if (k === "value" && "value" in el) {
        el.value = v;
      } else if (k === "checked" || k === "disabled" || k === "selected") {
        el[k] = Boolean(v);
      } else {
        el.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// Replace an element's children in one go (a DocumentFragment keeps a
// 1,000-row table to a single reflow).
export function fill(el, ...children) {
  const frag = document.createDocumentFragment();
  append(frag, children);
  el.replaceChildren(frag);
  return el;
}

// Percentages: shares with 2 decimals, moved fractions in previews with 4.
export function pct(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return "—";
  return `${(x * 100).toFixed(digits)} %`;
}

// Share of clients: a whole number when it is one ("75 %"), else 2 decimals.
export function pctShort(x) {
  if (x === null || x === undefined) return "—";
  const p = x * 100;
  const r = Math.round(p);
  return Math.abs(p - r) < 1e-9 ? `${r} %` : `${p.toFixed(2)} %`;
}

export function fixed(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return "—";
  return Number(x).toFixed(digits);
}

// Times: local date and time to the second, with the exact RFC 3339 value
// in a <time> element for anyone who needs it.
export function timeEl(iso) {
  if (!iso) return h("span", null, "—");
  const d = new Date(iso);
  return h("time", { datetime: iso, title: `${iso} (${ago(iso)})` }, localTime(d));
}

export function localTime(d) {
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function ago(iso) {
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 0) return `in ${-s} s`;
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function section(title, testid, ...children) {
  return h("section", { class: "panel", testid, "aria-label": title },
    h("h2", null, title), ...children);
}
