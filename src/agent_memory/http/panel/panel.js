// The memory panel: sign-in, the agent or workspace picker, the tabs, and the
// shared status line and confirmation dialog. Each tab's content lives in its
// own module (memories.js, blocks.js, session.js, cost.js).

import { Api } from "./api.js";
import * as blocks from "./blocks.js";
import * as cost from "./cost.js";
import { el, icon } from "./dom.js";
import * as memories from "./memories.js";
import * as preview from "./preview.js";
import * as session from "./session.js";

// Everything the panel keeps lives in this tab's sessionStorage.
const STORAGE = {
  key: "agent-memory.panel.key",
  target: "agent-memory.panel.target",
  recent: "agent-memory.panel.recent",
};
const RECENT_LIMIT = 8;

const VIEWS = { memories, blocks, preview, session, cost };
const TAB_ORDER = ["memories", "blocks", "preview", "session", "cost"];

const $ = (id) => document.getElementById(id);

const state = {
  api: null,
  caller: null, // { tenantId, userId, role, keyId }: what the key stands for
  target: null, // { kind: "agent" | "workspace", id }
  tab: "memories",
  generation: 0, // bumped on every view change, so late answers of an old view are dropped
  owners: 0, // bumped by every reading of the tenant's list, so an overtaken one is dropped
};

// -- storage --------------------------------------------------------------------

function readJson(name, fallback) {
  try {
    const value = JSON.parse(sessionStorage.getItem(name));
    return value ?? fallback;
  } catch {
    return fallback;
  }
}

function recentTargets() {
  const list = readJson(STORAGE.recent, []);
  return Array.isArray(list) ? list.filter((t) => t && t.id && t.kind) : [];
}

function remember(target) {
  const rest = recentTargets().filter((t) => !(t.kind === target.kind && t.id === target.id));
  const list = [target, ...rest].slice(0, RECENT_LIMIT);
  sessionStorage.setItem(STORAGE.recent, JSON.stringify(list));
  sessionStorage.setItem(STORAGE.target, JSON.stringify(target));
}

// -- status line ------------------------------------------------------------------

/**
 * The status line stands where the person is: in an open dialog, in the dialog's
 * flow under its head, pushing what follows down rather than floating over the
 * dialog's buttons (which the page's place for it, under the dialog, would also
 * be); else at the end of the page, kept in view at the bottom of the window.
 */
function placeStatus() {
  const region = $("status");
  const dialogs = [...document.querySelectorAll("dialog[open]")];
  const slot = dialogs.length ? dialogs[dialogs.length - 1].querySelector(".dialog-status") : null;
  const home = slot || $("content");
  if (region.parentElement !== home) home.append(region);
  return region;
}

function clearStatus() {
  $("status").replaceChildren();
}

function showStatus(kind, ...content) {
  const dismiss = el(
    "button",
    { type: "button", class: "notice-close", "aria-label": "Dismiss", onclick: clearStatus },
    "×",
  );
  const region = placeStatus();
  region.replaceChildren(
    el(
      "div",
      { class: `notice ${kind}` },
      el("div", { class: "notice-body" }, ...content),
      dismiss,
    ),
  );
  if (region.closest("dialog")) region.scrollIntoView({ block: "nearest" });
}

function notify(message) {
  showStatus("success", el("p", {}, message));
}

/**
 * How an ApiError reads to a person: an optional lead ("Saving x failed:"), the
 * server's message and its reason, then any field violations the message does not
 * already say.
 */
function describeError(error, lead = "") {
  const line = el(
    "p",
    {},
    lead ? [el("strong", {}, lead), " "] : null,
    el("span", { class: "error-message" }, error.message),
    error.reason ? [" ", el("code", { class: "reason" }, error.reason)] : null,
  );
  const extra = (error.violations || []).filter((v) => !error.message.includes(v.description));
  if (extra.length === 0) return [line];
  return [
    line,
    el(
      "ul",
      { class: "violations" },
      extra.map((v) =>
        el("li", {}, v.field ? [el("code", {}, v.field), ": "] : null, v.description),
      ),
    ),
  ];
}

/** Report a failed action; an unknown or revoked key goes back to sign-in. */
function fail(action, error) {
  if (error && error.unauthenticated) {
    signOut(error.message + (error.reason ? ` (${error.reason})` : ""));
    return;
  }
  if (!error || !("httpStatus" in error)) {
    // A bug of the panel itself, not an answer of the server.
    console.error(error);
    showStatus(
      "error",
      el("p", {}, el("strong", {}, `${action} failed.`), " Something went wrong in the page."),
    );
    return;
  }
  showStatus("error", ...describeError(error, `${action} failed:`));
}

// -- confirmation dialog --------------------------------------------------------------

/** Ask before a destructive action; resolves true when the person confirms. */
function confirmAction({ title, body, confirmLabel }) {
  const dialog = $("confirm-dialog");
  $("confirm-title").textContent = title;
  $("confirm-body").replaceChildren(...(Array.isArray(body) ? body : [body]));
  $("confirm-ok").textContent = confirmLabel;
  dialog.returnValue = "";
  // What an earlier action said is not this question's: it would stand in the dialog.
  clearStatus();
  const opener = document.activeElement;
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        if (opener && opener.isConnected) opener.focus();
        resolve(dialog.returnValue === "confirm");
      },
      { once: true },
    );
    dialog.showModal();
    // The safe choice has the focus; Escape cancels (the dialog's own behaviour).
    $("confirm-cancel").focus();
  });
}

// -- sign-in ----------------------------------------------------------------------------

function showSignIn(message = "") {
  state.api = null;
  $("app").hidden = true;
  $("session-controls").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message;
  const input = $("api-key");
  input.value = "";
  input.setAttribute("aria-invalid", message ? "true" : "false");
  input.focus();
}

function signOut(message = "") {
  for (const name of Object.values(STORAGE)) sessionStorage.removeItem(name);
  state.target = null;
  clearStatus();
  showSignIn(message);
}

function keyLabel(key) {
  // Keys read amk_<id>_<secret>: the id part is safe to show.
  const parts = key.split("_");
  return parts.length === 3 ? `Key ${parts[0]}_${parts[1]}` : "Signed in";
}

async function enterApp(key, caller = null) {
  state.api = new Api(key);
  if (!caller) {
    try {
      caller = (await state.api.getCaller()).caller;
    } catch (failure) {
      if (failure.unauthenticated) {
        signOut(failure.message + (failure.reason ? ` (${failure.reason})` : ""));
        return;
      }
      caller = null; // unknown: the views offer what the key may try
    }
  }
  state.caller = caller;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("session-controls").hidden = false;
  const who = caller
    ? [" ", el("span", {}, caller.userId), " · ", el("span", { class: "role" }, caller.role)]
    : [];
  $("signed-in-as").replaceChildren(icon("key"), " ", keyLabel(key), ...who);
  renderRecent();
  const saved = readJson(STORAGE.target, null);
  if (saved && saved.id && saved.kind) {
    // Which lists the tenant's agents and workspaces too.
    openTarget(saved, { restoring: true });
  } else {
    renderOwners();
    showNoTarget();
    $("target-id").focus();
  }
}

async function onSignIn(event) {
  event.preventDefault();
  const input = $("api-key");
  const key = input.value.trim();
  const error = $("signin-error");
  if (!key) {
    error.textContent = "Enter an API key.";
    input.setAttribute("aria-invalid", "true");
    input.focus();
    return;
  }
  const button = event.target.querySelector("button[type=submit]");
  button.disabled = true;
  error.textContent = "";
  let caller;
  try {
    // Who the key stands for proves it, and says what it may do.
    caller = (await new Api(key).getCaller()).caller;
  } catch (failure) {
    error.textContent = failure.message + (failure.reason ? ` (${failure.reason})` : "");
    input.setAttribute("aria-invalid", "true");
    input.select();
    return;
  } finally {
    button.disabled = false;
  }
  sessionStorage.setItem(STORAGE.key, key);
  enterApp(key, caller);
}

// -- agent or workspace -------------------------------------------------------------------

function syncTargetLabel() {
  const kind = new FormData($("target-form")).get("kind");
  $("target-id-label").textContent = kind === "workspace" ? "Workspace id" : "Agent id";
}

/** A button that opens an agent or a workspace, with a word on it at the end. */
function targetButton(target, aside, attrs = {}) {
  return el(
    "li",
    {},
    el(
      "button",
      { type: "button", class: "recent-item", onclick: () => openTarget(target), ...attrs },
      icon(target.kind === "workspace" ? "workspace" : "agent"),
      el("span", { class: "mono" }, target.id),
      el("span", { class: "recent-kind" }, aside),
    ),
  );
}

function renderRecent() {
  const list = recentTargets();
  $("recent-empty").hidden = list.length > 0;
  $("recent-list").replaceChildren(
    ...list.map((target) => {
      const current =
        state.target && state.target.kind === target.kind && state.target.id === target.id;
      return targetButton(target, target.kind, { "aria-current": current ? "true" : false });
    }),
  );
}

/**
 * The tenant's agents and workspaces, each a button that opens it, with how many
 * memories it holds: read again after every change the panel makes and whenever a
 * view is shown, so no count is older than the person's own last action.
 */
async function renderOwners() {
  if (!state.api) return;
  const mine = ++state.owners;
  let owners;
  try {
    owners = await state.api.listOwners();
  } catch {
    return; // the list is a help, not a need: opening by id still works
  }
  if (mine !== state.owners || !state.api) return; // a newer reading is under way
  const item = (kind, owner) => {
    const count = owner.memoryCount || 0;
    const said = `${owner.id}, ${kind}, ${count} ${count === 1 ? "memory" : "memories"}`;
    const attrs = { title: said, "aria-label": said, dataset: { owner: `${kind}:${owner.id}` } };
    return targetButton({ kind, id: owner.id }, String(count), attrs);
  };
  const focused = document.activeElement;
  const refocus = focused && $("owners-list").contains(focused) ? focused.dataset.owner : null;
  const items = [
    ...owners.agents.map((o) => item("agent", o)),
    ...owners.workspaces.map((o) => item("workspace", o)),
  ];
  if (owners.more) items.push(el("li", { class: "muted small" }, "More: open one by its id."));
  $("owners-list").replaceChildren(...items);
  $("owners-empty").hidden = items.length > 0;
  if (refocus !== null) {
    // The person was on one of the buttons: the focus stays with it.
    const buttons = [...$("owners-list").querySelectorAll("button")];
    const same = buttons.find((b) => b.dataset.owner === refocus);
    if (same) same.focus();
  }
}

function showNoTarget() {
  $("no-target").hidden = false;
  $("target-view").hidden = true;
}

/**
 * Open an agent or a workspace: on its memories, or, when the page comes back to
 * one it had open, on the tab its address names.
 */
function openTarget(target, { restoring = false } = {}) {
  state.target = { kind: target.kind, id: target.id };
  remember(state.target);
  renderRecent();
  clearStatus();
  $("no-target").hidden = true;
  $("target-view").hidden = false;
  $("target-kind").textContent = target.kind === "workspace" ? "Workspace" : "Agent";
  $("target-title").textContent = target.id;
  const fromHash = location.hash.slice(1);
  const tab = restoring && TAB_ORDER.includes(fromHash) ? fromHash : "memories";
  selectTab(tab, { focus: false });
}

function onOpenTarget(event) {
  event.preventDefault();
  const data = new FormData(event.target);
  const id = String(data.get("id") || "").trim();
  if (!id) {
    $("target-id").focus();
    return;
  }
  openTarget({ kind: data.get("kind") === "workspace" ? "workspace" : "agent", id });
  $("target-id").value = "";
}

// -- tabs ---------------------------------------------------------------------------------

function selectTab(name, { focus = true } = {}) {
  if (name !== state.tab) clearStatus();
  state.tab = name;
  state.generation += 1;
  for (const tab of TAB_ORDER) {
    const button = $(`tab-${tab}`);
    const selected = tab === name;
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`view-${tab}`).hidden = !selected;
  }
  if (focus) $(`tab-${name}`).focus();
  if (location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
  renderOwners(); // a view shown again shows the counts as they are now
  const generation = state.generation;
  const container = $(`view-${name}`);
  VIEWS[name].mount(container, {
    api: state.api,
    target: state.target,
    // A reader's key may look, not change: the views offer no write then.
    canWrite: !state.caller || state.caller.role !== "reader",
    caller: state.caller,
    notify,
    fail,
    clearStatus,
    // Called after every write or delete the view makes: the counts follow it.
    changed: renderOwners,
    confirm: confirmAction,
    describeError,
    // A view checks this before drawing an answer that may have come late.
    current: () => generation === state.generation,
  });
}

function onTabKey(event) {
  const index = TAB_ORDER.indexOf(state.tab);
  const moves = { ArrowRight: 1, ArrowLeft: -1, Home: -index, End: TAB_ORDER.length - 1 - index };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const next = (index + moves[event.key] + TAB_ORDER.length) % TAB_ORDER.length;
  selectTab(TAB_ORDER[next]);
}

// -- start --------------------------------------------------------------------------------

function start() {
  // A dialog opening or closing takes the status line with it, or gives it back.
  new MutationObserver(placeStatus).observe(document.body, {
    subtree: true,
    attributeFilter: ["open"],
  });
  $("signin-form").addEventListener("submit", onSignIn);
  $("sign-out").addEventListener("click", () => signOut());
  $("target-form").addEventListener("submit", onOpenTarget);
  $("target-form").addEventListener("change", syncTargetLabel);
  // Back to this browser tab: the counts may have moved meanwhile.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && !$("app").hidden) renderOwners();
  });
  for (const tab of TAB_ORDER) {
    $(`tab-${tab}`).addEventListener("click", () => selectTab(tab));
    $(`tab-${tab}`).addEventListener("keydown", onTabKey);
  }
  const key = sessionStorage.getItem(STORAGE.key);
  if (key) enterApp(key);
  else showSignIn();
}

start();
