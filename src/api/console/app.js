// Start-up and routing. The console asks /v1/access what the presented
// token may do before anything else, then routes by the URL's hash:
// #/ lists the rings, #/rings/<name> shows one.

import { access, getToken, setToken, onUnauthorized } from "./api.js";
import { restartAll } from "./watch.js";
import { h, fill } from "./dom.js";
import { ringsPage } from "./pages/rings.js";
import { ringPage } from "./pages/ring.js";

const main = document.getElementById("main");
const modeEl = document.querySelector("[data-testid=mode]");
const kindEl = document.querySelector("[data-testid=token-kind]");
const dialog = document.getElementById("token-dialog");
const form = document.getElementById("token-form");
const input = document.getElementById("token-input");
const tokenError = document.getElementById("token-error");
const tokenWhy = document.getElementById("token-why");
const signIn = document.getElementById("sign-in");
const signOut = document.getElementById("sign-out");

let rights = null;
let page = null;
let routedWith = null; // the rights the current page was built for

function openTokenDialog(message) {
  tokenError.hidden = !message;
  tokenError.textContent = message || "";
  tokenWhy.textContent = rights && rights.read
    ? "Enter a token with more rights (the admin token makes changes)."
    : "This ringd needs a token to read rings.";
  input.value = "";
  if (!dialog.open) dialog.showModal();
  input.focus();
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  setToken(input.value.trim());
  const ok = await refreshAccess();
  if (ok && rights.token !== "invalid") {
    dialog.close();
    restartAll();
  } else if (rights && rights.token === "invalid") {
    openTokenDialog("That token was not accepted.");
  }
});
document.getElementById("token-cancel").addEventListener("click", () => dialog.close());
signIn.addEventListener("click", () => openTokenDialog());
signOut.addEventListener("click", async () => {
  setToken("");
  await refreshAccess();
  restartAll();
});

// A 401 on any request means the token is gone or was rotated.
let reopening = false;
onUnauthorized(() => {
  if (reopening) return;
  reopening = true;
  setTimeout(() => { reopening = false; }, 1000);
  refreshAccess().then(() => openTokenDialog(getToken() ? "The server refused the token." : ""));
});

async function refreshAccess() {
  try {
    rights = await access();
  } catch (e) {
    fill(main, h("p", { class: "error", role: "alert" }, `Cannot reach ringd: ${e.message}`));
    modeEl.textContent = "…";
    return false;
  }
  modeEl.textContent = rights.write ? "read-write" : "read-only";
  document.body.dataset.mode = rights.write ? "read-write" : "read-only";
  kindEl.textContent = { none: "no token", read: "read token", admin: "admin token", invalid: "token refused" }[rights.token] || "";
  signOut.hidden = !getToken();
  signIn.hidden = rights.write || !(rights.read_token_required || rights.admin_token_required);
  if (!rights.read) {
    stop();
    fill(main, h("p", null, "A token is needed to read this ringd."));
    routedWith = null;
    openTokenDialog(rights.token === "invalid" ? "That token was not accepted." : "");
    return true;
  }
  // Rebuild the page when the rights it was built with changed (the editor
  // exists only with write access).
  const key = `${rights.read}/${rights.write}`;
  if (routedWith !== key) route();
  return true;
}

function stop() {
  if (page) page.destroy();
  page = null;
}

function route() {
  const start = performance.now();
  stop();
  if (!rights || !rights.read) return;
  routedWith = `${rights.read}/${rights.write}`;
  const hash = location.hash || "#/";
  const m = hash.match(/^#\/rings\/([^/]+)$/);
  if (m) {
    let name;
    try {
      name = decodeURIComponent(m[1]);
    } catch {
      name = m[1];
    }
    document.title = `${name} · ringd console`;
    page = ringPage(main, name, { access: rights, routeStart: start });
  } else {
    document.title = "ringd console";
    page = ringsPage(main);
  }
}

window.addEventListener("hashchange", route);
refreshAccess();
