// Every request goes to the page's own origin, with the token the operator
// gave (kept for this tab only, in sessionStorage) as a Bearer header.
// Failures become ProblemError carrying the RFC 9457 problem document.

const TOKEN_KEY = "ringd-token";
let unauthorized = () => {};

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}
// The app installs what to do on a 401: reopen the token dialog.
export function onUnauthorized(fn) {
  unauthorized = fn;
}
export function notifyUnauthorized() {
  unauthorized();
}

export function authHeaders(extra = {}) {
  const t = getToken();
  return t ? { ...extra, Authorization: `Bearer ${t}` } : { ...extra };
}

export class ProblemError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
  get slug() {
    const t = this.problem.type || "";
    return t.slice(t.lastIndexOf(":") + 1);
  }
}

async function problemOf(res) {
  try {
    const text = await res.text();
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}

export async function request(method, path, { body, headers, signal, raw } = {}) {
  const init = { method, headers: authHeaders(headers), signal, cache: "no-store" };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ProblemError(0, { title: "Network error", detail: `could not reach the server: ${e.message}` });
  }
  if (!res.ok) {
    const problem = await problemOf(res);
    if (res.status === 401) unauthorized();
    throw new ProblemError(res.status, problem);
  }
  if (raw) return res;
  if (res.status === 204) return null;
  return res.json();
}

export const get = (path, opts) => request("GET", path, opts);
export const post = (path, body, opts) => request("POST", path, { ...opts, body });

export function ringPath(ring, rest = "") {
  return `/v1/rings/${encodeURIComponent(ring)}${rest}`;
}

// Which powers the presented token has. An older server without the
// endpoint is treated as open, so the console still works against it.
export async function access() {
  try {
    return await get("/v1/access");
  } catch (e) {
    if (e instanceof ProblemError && e.status === 404) {
      return { token: "none", read: true, write: true, read_token_required: false, admin_token_required: false };
    }
    throw e;
  }
}
