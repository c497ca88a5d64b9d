// The Memories tab: an agent's or a workspace's memories in the server's order,
// with an inline row to add one, and edit, pin and delete on each row.
//
// Pages loaded with "Load more" stay loaded through every action. A changed row
// is replaced in place with the memory the server answers; since a change can
// move it (pinned first, then importance, then key or recency, in the database's
// collation, which the page cannot reproduce), the rows loaded so far are then
// fetched again, as many as were shown. A deleted row is simply removed: the
// others keep their order, and the next page still starts where it did.
//
// Memories a newer fact superseded are left out, as the service lists them, unless
// "Show superseded" asks for them; they are shown dimmed, with what replaced them.
// Likewise memories past their expiry that the service has not deleted yet: only
// with "Show expired", each marked expired, with when.
//
// The find bar narrows the list (words in the key or value, source, pin) and
// orders it; the service filters (AIP-160) and counts what matches. A key opens
// the memory's detail: tags, groundings, history and expiry.

import { MEMORY_PAGE_SIZE } from "./api.js";
import { dayEl, el, icon, refreshButton, tableHead, timeEl, viewHead } from "./dom.js";
import { HELD_WHY, heldLabel, openMemoryDetail } from "./memory_detail.js";

const SOURCES = {
  MEMORY_SOURCE_MANUAL: "manual",
  MEMORY_SOURCE_AUTO: "auto",
  MEMORY_SOURCE_DIRECTOR: "director",
  MEMORY_SOURCE_MEMORIZE: "memorize",
};
const READ_ONLY_LABEL = "auto-captured · read-only";
const COLUMNS = 7;
const SEARCH_DELAY_MS = 250;
const ORDERS = [
  ["", "Service order"],
  ["updated_at desc", "Recently updated"],
  ["created_at desc", "Newest first"],
  ["importance desc", "Most important"],
  ["key", "Key, A to Z"],
];

/** A string as an AIP-160 literal: quoted, its quotes and backslashes escaped. */
function literal(text) {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The filter the find bar's choices make, in the service's filter language. The words
 * typed are found each wherever it is, as a search box finds them (the service reads a
 * quoted text as a phrase); a text typed in quotes stays a phrase.
 */
export function filterOf({ text, source, pinned, held }) {
  const parts = [];
  const typed = text.trim();
  const phrase = /^"[^"]+"$/.test(typed);
  const words = phrase ? [typed.slice(1, -1)] : typed.split(/\s+/).filter(Boolean);
  for (const word of words) parts.push(`text:${literal(word)}`);
  if (source) parts.push(`source = ${source}`);
  if (pinned) parts.push(`pinned = ${pinned}`);
  if (held) parts.push(`held_for_review = ${held}`);
  return parts.join(" AND ");
}

const CONTENT_KEY = /^memorize:[0-9a-f]{40}$/;
const LEARNING_KEY = /^director:learning:(\d{4}-\d\d-\d\dT[\d:.]+Z)$/;

/**
 * A key in monospace, breakable after its separators. A key the service made
 * (a Memorize content hash, a director learning's time stamp) says so instead of
 * showing a hash or a time stamp as if someone had chosen it; the whole key is
 * its title.
 */
function keyEl(key) {
  if (CONTENT_KEY.test(key)) {
    return el(
      "span",
      { class: "generated-key", title: key },
      el("code", { class: "key" }, `${key.slice(0, 17)}…`),
      el("span", { class: "muted small" }, " generated from the content"),
    );
  }
  const learning = LEARNING_KEY.exec(key);
  if (learning) {
    return el(
      "span",
      { class: "generated-key", title: key },
      el("code", { class: "key" }, "director:learning"),
      el("span", { class: "muted small" }, " of "),
      timeEl(learning[1]),
    );
  }
  const parts = key.split(/(?<=[:./_])/);
  return el(
    "code",
    { class: "key" },
    parts.flatMap((part, i) => (i ? [el("wbr"), part] : [part])),
  );
}

const CLAMP_CHARS = 280;

/** A value, a long one clamped to a few lines with a button that shows it whole. */
function valueEl(value) {
  if (value.length <= CLAMP_CHARS && value.split("\n").length <= 4) return value;
  const text = el("div", { class: "clamped" }, value);
  const toggle = el(
    "button",
    {
      type: "button",
      class: "link-button small",
      "aria-expanded": "false",
      onclick: () => {
        const open = text.classList.toggle("clamped");
        toggle.setAttribute("aria-expanded", String(!open));
        toggle.textContent = open ? "Show all" : "Show less";
      },
    },
    "Show all",
  );
  return [text, toggle];
}

/** A row's "Pinned" cell: the chip, or a dash that says it is not. */
function pinnedCell(pinned) {
  return el(
    "td",
    { class: "col-pinned" },
    pinned
      ? el("span", { class: "pinned-chip" }, icon("pin"), "Pinned")
      : el("span", { class: "muted", "aria-label": "Not pinned" }, "—"),
  );
}

/** A row's last cell: its buttons, side by side. */
function actionsCell(...buttons) {
  return el("td", { class: "col-actions" }, el("div", { class: "row-actions" }, ...buttons));
}

/** Whether the memory's expiry has passed: the service lists it only when asked. */
function isExpired(memory) {
  return Boolean(memory.expireTime) && Date.parse(memory.expireTime) <= Date.now();
}

function sourceName(memory) {
  return SOURCES[memory.source] || "manual";
}

export function mount(container, ctx) {
  const { api, target, canWrite } = ctx;
  let rows = [];
  let nextPageToken = "";
  let editing = null; // the id of the memory being edited
  // An edit the server refused as stale: the user's text, kept beside the stored one.
  let conflict = null; // { id, value, importance }
  let generation = 0; // bumped by every listing, so an overtaken answer is dropped
  let showSuperseded = false;
  let showExpired = false;
  const find = { text: "", source: "", pinned: "", held: "", orderBy: "" };
  let total = null; // how many match, as the service counted them
  let searchTimer = 0;

  const tbody = el("tbody");
  const loadMore = el(
    "button",
    { type: "button", class: "button", hidden: true, onclick: () => load(nextPageToken) },
    "Load more",
  );
  const editForm = el("form", { id: "memory-edit-form", class: "detached-form" });
  const createForm = el("form", { id: "memory-create-form", class: "detached-form" });
  editForm.addEventListener("submit", onSave);
  createForm.addEventListener("submit", onCreate);

  const owner = target.kind === "workspace" ? "workspace" : "agent";
  const order =
    target.kind === "workspace"
      ? "pinned first, then by importance, then most recently updated"
      : "pinned first, then by importance, then by key";

  const supersededToggle = el(
    "label",
    { class: "check" },
    el("input", {
      type: "checkbox",
      onchange: (event) => {
        showSuperseded = event.target.checked;
        load();
      },
    }),
    el("span", {}, "Show superseded"),
  );
  const expiredToggle = el(
    "label",
    { class: "check" },
    el("input", {
      type: "checkbox",
      onchange: (event) => {
        showExpired = event.target.checked;
        load();
      },
    }),
    el("span", {}, "Show expired"),
  );

  const count = el("p", { class: "muted small find-count", "aria-live": "polite" });
  // How many of the owner's memories are held for review, whatever the find bar shows.
  let heldAsked = 0;
  const heldNote = el("div", { class: "notice warning inline held-note", role: "note", hidden: true });
  const findBar = el(
    "form",
    { class: "find-bar", role: "search", onsubmit: (event) => event.preventDefault() },
    el("input", {
      type: "search",
      name: "text",
      placeholder: "Search keys and values",
      "aria-label": "Search keys and values",
      autocomplete: "off",
      oninput: (event) => {
        find.text = event.target.value;
        clearTimeout(searchTimer);
        searchTimer = setTimeout(() => load(), SEARCH_DELAY_MS);
      },
    }),
    choice("source", "Source", [["", "Any source"], ...Object.values(SOURCES).map((n) => [n, n])]),
    choice("pinned", "Pinned", [["", "Pinned or not"], ["true", "Pinned"], ["false", "Not pinned"]]),
    choice("held", "Review", [["", "Held or not"], ["true", "Held for review"], ["false", "Not held"]]),
    choice("orderBy", "Order", ORDERS),
  );

  function choice(name, label, options) {
    return el(
      "select",
      {
        name,
        "aria-label": label,
        onchange: (event) => {
          find[name] = event.target.value;
          load();
          if (name === "held") countHeld();
        },
      },
      ...options.map(([value, text]) => el("option", { value }, text)),
    );
  }

  container.replaceChildren(
    viewHead(
      "Memories",
      `Listed as the service orders them: ${order}.`,
      el(
        "div",
        { class: "head-actions" },
        supersededToggle,
        expiredToggle,
        refreshButton(onRefresh),
      ),
    ),
    findBar,
    heldNote,
    count,
    editForm,
    createForm,
    el(
      "div",
      { class: "table-wrap" },
      el(
        "table",
        { class: "table memories" },
        el("caption", { class: "sr-only" }, `Memories of the ${owner} ${target.id}`),
        tableHead(
          ["Source", "col-source"],
          ["Key", "col-key"],
          ["Value", "col-value"],
          ["Importance", "col-num"],
          ["Pinned", "col-pinned"],
          ["Updated", "col-date"],
          [el("span", { class: "sr-only" }, "Actions"), "col-actions"],
        ),
        tbody,
        canWrite ? el("tfoot", {}, createRow()) : null,
      ),
    ),
    el("div", { class: "view-foot" }, loadMore),
  );

  load();
  countHeld(); // again after each change (reload), not at every search

  /** What the list asks the service for: the find bar's filter and order. */
  function asked() {
    return { filter: filterOf(find), orderBy: find.orderBy, showSuperseded, showExpired };
  }

  function filtered() {
    return Boolean(filterOf(find));
  }

  /** Says how many of the owner's memories are held for review, with a way to list them. */
  async function countHeld() {
    const mine = ++heldAsked;
    let answer;
    try {
      answer = await api.listMemories(target, "", 1, { filter: "held_for_review = true" });
    } catch {
      return; // the list says what failed; the note stays as it was
    }
    if (!ctx.current() || mine !== heldAsked) return; // a later count answers
    const held = answer.totalSize || 0;
    heldNote.hidden = held === 0 || find.held === "true";
    if (heldNote.hidden) return;
    const [noun, them] = held === 1 ? ["memory is", "it"] : ["memories are", "them"];
    heldNote.replaceChildren(
      el(
        "div",
        { class: "notice-body" },
        el("strong", {}, `${held} ${noun} held for review.`),
        ` Agents don't see ${them} until a person approves ${them}. `,
        el(
          "button",
          {
            type: "button",
            class: "link-button",
            onclick: () => {
              const select = findBar.querySelector('select[name="held"]');
              select.value = "true";
              find.held = "true";
              load();
              countHeld();
            },
          },
          `Show ${them}`,
        ),
      ),
    );
  }

  /** The first page, or with a token the next one after the rows shown. */
  async function load(pageToken = "") {
    const mine = ++generation;
    try {
      const answer = await api.listMemories(target, pageToken, MEMORY_PAGE_SIZE, asked());
      if (!ctx.current() || mine !== generation) return;
      const page = answer.memories || [];
      rows = pageToken ? rows.concat(page) : page;
      nextPageToken = answer.nextPageToken || "";
      total = answer.totalSize || 0;
      if (!pageToken) editing = null;
      render();
    } catch (error) {
      if (ctx.current() && mine === generation) ctx.fail("Loading memories", error);
    }
  }

  /**
   * The first `count` memories (at least one page) fetched again, in the server's
   * order, so what "Load more" brought in stays. Resolves false when the listing
   * failed or was overtaken, and the rows were left as they were.
   */
  async function reload(count) {
    countHeld();
    const mine = ++generation;
    const wanted = Math.max(count, MEMORY_PAGE_SIZE);
    let fetched = [];
    let token = "";
    try {
      do {
        const size = Math.min(MEMORY_PAGE_SIZE, wanted - fetched.length);
        const answer = await api.listMemories(target, token, size, asked());
        if (!ctx.current() || mine !== generation) return false;
        fetched = fetched.concat(answer.memories || []);
        token = answer.nextPageToken || "";
        total = answer.totalSize || 0;
      } while (token && fetched.length < wanted);
    } catch (error) {
      if (ctx.current() && mine === generation) ctx.fail("Loading memories", error);
      return false;
    }
    rows = fetched;
    nextPageToken = token;
    editing = null;
    render();
    return true;
  }

  /** Show the server's answer for a row in place of the row; an open edit closes. */
  function replaceRow(memory) {
    rows = rows.map((m) => (m.id === memory.id ? memory : m));
    editing = null;
    render();
  }

  function onRefresh() {
    reload(rows.length);
  }

  function render() {
    loadMore.hidden = !nextPageToken;
    const noun = total === 1 ? "memory" : "memories";
    count.textContent =
      total === null
        ? ""
        : rows.length < total
          ? `${rows.length} of ${total} ${noun} shown${filtered() ? " (filtered)" : ""}`
          : `${total} ${noun}${filtered() ? " match" : ""}`;
    if (rows.length === 0) {
      const empty = filtered()
        ? "No memory matches. Change the search or the filters."
        : canWrite
          ? "No memories yet. Add the first one in the row below."
          : "No memories yet.";
      tbody.replaceChildren(
        el("tr", { class: "empty-row" }, el("td", { colspan: COLUMNS }, empty)),
      );
      return;
    }
    tbody.replaceChildren(...rows.map((m) => (m.id === editing ? editRow(m) : viewRow(m))));
  }

  function badge(memory) {
    const name = sourceName(memory);
    return el("span", { class: `badge source-${name}` }, name);
  }

  // What replaced a superseded memory: its key when it is listed, else its id.
  function supersededEl(memory) {
    if (!memory.supersededBy) return null;
    const by = rows.find((m) => m.id === memory.supersededBy);
    return el(
      "div",
      { class: "superseded-label" },
      "superseded by ",
      by ? keyEl(by.key) : el("code", {}, memory.supersededBy.slice(0, 8)),
      " · not in prompts",
    );
  }

  // The memory's tags, small, under its key.
  function tagsEl(memory) {
    const tags = memory.tags || [];
    if (!tags.length) return null;
    return el("div", { class: "tags" }, ...tags.map((t) => el("span", { class: "tag" }, t)));
  }

  function openDetail(memory) {
    openMemoryDetail(memory, ctx, {
      sourceName,
      onChanged: (stored) => {
        ctx.changed();
        if (ctx.current()) replaceRow(stored);
      },
    });
  }

  // When the memory expires (the service stops showing it then), or nothing; one
  // past it says so plainly: agents no longer see it, and it is soon deleted.
  function expiryEl(memory) {
    if (!memory.expireTime) return null;
    if (isExpired(memory)) {
      return el(
        "div",
        { class: "expiry-label expired-label" },
        el("span", { class: "expired-chip" }, "Expired"),
        " ",
        timeEl(memory.expireTime),
        " · not in prompts",
      );
    }
    return el("div", { class: "expiry-label" }, "expires ", timeEl(memory.expireTime));
  }

  // When the fact holds in the world, where it has a period: "valid since 12 Mar",
  // "valid until 31 Mar", or both; one outside its period says agents do not see it.
  function periodEl(memory) {
    const start = memory.validStartTime;
    const end = memory.validEndTime;
    if (!start && !end) return null;
    const now = Date.now();
    const outside = (start && Date.parse(start) > now) || (end && Date.parse(end) <= now);
    return el(
      "div",
      { class: outside ? "period-label outside-period" : "period-label" },
      "valid",
      start ? " since " : null,
      start ? dayEl(start) : null,
      end ? " until " : null,
      end ? dayEl(end) : null,
      outside ? " · not in prompts" : null,
    );
  }

  // When the memory last reached a model (a prompt or a recall), or nothing.
  function usedEl(memory) {
    if (!memory.lastUsedTime) return null;
    return el("div", { class: "used-label" }, "used ", dayEl(memory.lastUsedTime));
  }

  function viewRow(memory) {
    const pinned = Boolean(memory.pinned);
    const readOnly = Boolean(memory.readOnly);
    const classes = [
      readOnly ? "read-only" : "",
      memory.supersededBy ? "superseded" : "",
      isExpired(memory) ? "expired" : "",
      memory.heldForReview ? "held" : "",
    ];
    return el(
      "tr",
      {
        dataset: { memoryId: memory.id, key: memory.key },
        class: classes.filter(Boolean).join(" "),
      },
      el("td", {}, badge(memory)),
      el(
        "td",
        {},
        el(
          "button",
          {
            type: "button",
            class: "link-button key-button",
            "aria-label": `Details of ${memory.key}`,
            title: memory.key,
            onclick: () => openDetail(memory),
          },
          keyEl(memory.key),
        ),
        tagsEl(memory),
        memory.heldForReview
          ? el("div", { class: "held-label", title: HELD_WHY }, heldLabel(memory))
          : null,
        readOnly ? el("div", { class: "read-only-label" }, READ_ONLY_LABEL) : null,
        expiryEl(memory),
        periodEl(memory),
        memory.note ? el("div", { class: "note-label" }, memory.note) : null,
        supersededEl(memory),
      ),
      el("td", { class: "value" }, valueEl(memory.value)),
      el("td", { class: "col-num" }, String(memory.importance || 0)),
      pinnedCell(pinned),
      el("td", { class: "col-date" }, dayEl(memory.updatedAt), usedEl(memory)),
      canWrite ? writeActions(memory, pinned, readOnly) : el("td", { class: "col-actions" }),
    );
  }

  function writeActions(memory, pinned, readOnly) {
    // A credential is rarely one to let through: Delete comes first and stands out, and
    // Approve comes last, a plain button.
    const credential = memory.heldForReview && memory.holdReason === "HOLD_REASON_CREDENTIAL";
    const approve = memory.heldForReview
      ? el(
          "button",
          {
            type: "button",
            class: credential ? "button small" : "button small primary",
            "aria-label": `Approve ${memory.key}`,
            title: "Let agents see it in prompts and recall",
            onclick: () => onApprove(memory),
          },
          "Approve",
        )
      : null;
    const remove = el(
      "button",
      {
        type: "button",
        class: credential ? "button small danger" : "button small danger-text",
        "aria-label": `Delete ${memory.key}`,
        onclick: () => onDelete(memory),
      },
      "Delete",
    );
    return actionsCell(
      credential ? remove : approve,
      el(
        "button",
        {
          type: "button",
          class: "button small",
          "aria-label": `${pinned ? "Unpin" : "Pin"} ${memory.key}`,
          onclick: () => onPin(memory),
        },
        pinned ? "Unpin" : "Pin",
      ),
      el(
        "button",
        {
          type: "button",
          class: "button small",
          "aria-label": `Edit ${memory.key}`,
          title: readOnly ? "Only manual memories can be edited" : false,
          disabled: readOnly,
          onclick: () => startEdit(memory),
        },
        "Edit",
      ),
      credential ? approve : remove,
    );
  }

  function editRow(memory) {
    const mine = conflict && conflict.id === memory.id ? conflict : null;
    const value = el("textarea", {
      form: editForm.id,
      name: "value",
      rows: 3,
      required: true,
      "aria-label": `Value of ${memory.key}`,
      value: mine ? mine.value : memory.value,
      onkeydown: onEditKey,
    });
    const importance = el("input", {
      form: editForm.id,
      name: "importance",
      type: "number",
      min: 0,
      max: 100,
      step: 1,
      required: true,
      class: "narrow",
      "aria-label": `Importance of ${memory.key}`,
      value: String(mine ? mine.importance : memory.importance || 0),
      onkeydown: onEditKey,
    });
    queueMicrotask(() => value.focus());
    return el(
      "tr",
      { dataset: { memoryId: memory.id, key: memory.key }, class: "editing" },
      el("td", {}, badge(memory)),
      el("td", {}, keyEl(memory.key), expiryEl(memory)),
      el(
        "td",
        { class: "value" },
        mine ? conflictNote(memory, mine) : null,
        value,
        el("p", { class: "hint" }, "Enter saves · Shift+Enter adds a line · Esc cancels"),
      ),
      el("td", { class: "col-num" }, importance),
      pinnedCell(memory.pinned),
      el("td", { class: "col-date" }, dayEl(memory.updatedAt)),
      actionsCell(
        el(
          "button",
          { type: "submit", form: editForm.id, class: "button small primary" },
          mine ? "Save mine" : "Save",
        ),
        el(
          "button",
          { type: "button", class: "button small", onclick: cancelEdit },
          mine ? "Discard mine" : "Cancel",
        ),
      ),
    );
  }

  // What the memory says now, above the text the user meant to save.
  function conflictNote(memory, mine) {
    const importance = memory.importance || 0;
    return el(
      "div",
      { class: "notice warning inline conflict-note", role: "alert" },
      el(
        "div",
        { class: "notice-body" },
        el("p", {}, el("strong", {}, "Changed meanwhile."), " Now stored:"),
        el("blockquote", { class: "stored-value" }, memory.value),
        importance !== mine.importance
          ? el("p", { class: "muted" }, `Importance now ${importance}.`)
          : null,
        el("p", { class: "muted" }, "Yours is below."),
      ),
    );
  }

  function createRow() {
    const form = createForm.id;
    return el(
      "tr",
      { class: "create-row" },
      el("td", {}, el("span", { class: "badge source-manual" }, "manual")),
      el(
        "td",
        {},
        el("input", {
          form,
          name: "key",
          required: true,
          spellcheck: "false",
          autocomplete: "off",
          class: "mono",
          placeholder: "key",
          "aria-label": "New memory key",
        }),
      ),
      el(
        "td",
        {},
        el("input", {
          form,
          name: "value",
          required: true,
          autocomplete: "off",
          placeholder: "value",
          "aria-label": "New memory value",
        }),
      ),
      el(
        "td",
        { class: "col-num" },
        el("input", {
          form,
          name: "importance",
          type: "number",
          min: 0,
          max: 100,
          step: 1,
          value: "0",
          class: "narrow",
          "aria-label": "New memory importance",
        }),
      ),
      el(
        "td",
        { class: "col-pinned" },
        el(
          "label",
          { class: "check" },
          el("input", { form, name: "pinned", type: "checkbox" }),
          el("span", {}, "Pin"),
        ),
      ),
      el("td", {}),
      el(
        "td",
        { class: "col-actions" },
        el("button", { type: "submit", form, class: "button small primary" }, "Add memory"),
      ),
    );
  }

  // -- actions ----------------------------------------------------------------------------

  function rowOf(id) {
    return tbody.querySelector(`tr[data-memory-id="${CSS.escape(id)}"]`);
  }

  function focusAction(id, label) {
    const row = rowOf(id);
    const button = row && row.querySelector(`button[aria-label^="${label}"]`);
    if (button && !button.disabled) button.focus();
  }

  /**
   * After a change that may have moved the row: the rows fetched again, then the
   * focus on the row's `label` button where it now is, or, when it now sorts
   * below the rows loaded, a word on that and the focus on "Load more".
   */
  async function settle(memory, label, done) {
    const reloaded = await reload(rows.length);
    if (!reloaded || !ctx.current()) return;
    if (rows.some((m) => m.id === memory.id)) {
      focusAction(memory.id, label);
    } else {
      ctx.notify(`${done} It now sorts below the memories loaded; Load more shows it.`);
      if (!loadMore.hidden) loadMore.focus();
    }
  }

  function startEdit(memory) {
    editing = memory.id;
    render();
  }

  function cancelEdit() {
    const id = editing;
    editing = null;
    conflict = null;
    render();
    if (id) focusAction(id, "Edit");
  }

  function onEditKey(event) {
    if (event.key === "Escape") {
      event.preventDefault();
      cancelEdit();
    } else if (event.key === "Enter" && !event.shiftKey && event.target.tagName === "TEXTAREA") {
      event.preventDefault();
      editForm.requestSubmit();
    }
  }

  async function onSave(event) {
    event.preventDefault();
    const memory = rows.find((m) => m.id === editing);
    if (!memory) return;
    const data = new FormData(editForm);
    const value = String(data.get("value") || "");
    const importance = Number(data.get("importance") || 0);
    let saved;
    try {
      saved = (await api.updateMemory(memory, { value, importance })).memory;
    } catch (error) {
      if (error.reason === "ETAG_MISMATCH") {
        await showConflict(memory, { value, importance }, error);
        return;
      }
      ctx.fail(`Saving ${memory.key}`, error);
      return;
    }
    if (!ctx.current()) return;
    conflict = null;
    ctx.changed();
    const done = `Saved ${memory.key}.`;
    ctx.notify(done);
    replaceRow(saved);
    focusAction(saved.id, "Edit");
    await settle(saved, "Edit", done);
  }

  /** A stale save: the row takes the memory as stored, and the user's text stays. */
  async function showConflict(memory, mine, error) {
    let stored;
    try {
      stored = (await api.getMemory(memory.id)).memory;
    } catch {
      ctx.fail(`Saving ${memory.key}`, error);
      return;
    }
    if (!ctx.current()) return;
    conflict = { id: memory.id, ...mine };
    rows = rows.map((m) => (m.id === stored.id ? stored : m));
    editing = stored.id;
    render();
  }

  async function onCreate(event) {
    event.preventDefault();
    const data = new FormData(createForm);
    const key = String(data.get("key") || "").trim();
    const value = String(data.get("value") || "");
    const importance = Number(data.get("importance") || 0);
    const pinned = data.get("pinned") === "on";
    let answer;
    try {
      answer = await api.createMemory(target, { key, value, importance, pinned });
    } catch (error) {
      ctx.fail(`Adding ${key || "the memory"}`, error);
      // The key is taken: nothing was overwritten; the memory that holds it is the
      // one to change, when it is on the page.
      const held = error.reason === "KEY_TAKEN" && error.metadata && error.metadata.memory_id;
      if (held && rows.some((m) => m.id === held)) focusAction(held, "Edit");
      return;
    }
    if (!ctx.current()) return;
    ctx.changed();
    createForm.reset(); // resets the inputs of the row, which belong to the form
    // The rows shown so far stay shown, and the memory joins them where the server
    // sorts it.
    const added = `Added ${key}.`;
    ctx.notify(added);
    container.querySelector(`input[form="${createForm.id}"][name="key"]`).focus();
    const shown = rows.length + 1;
    if (!(await reload(shown)) || !ctx.current()) return;
    if (!rows.some((m) => m.id === answer.memory.id)) {
      ctx.notify(`${added} It sorts below the memories loaded; Load more shows it.`);
    }
  }

  async function onPin(memory) {
    const pinned = !memory.pinned;
    let changed;
    try {
      changed = (await api.pinMemory(memory.id, pinned)).memory;
    } catch (error) {
      ctx.fail(`${pinned ? "Pinning" : "Unpinning"} ${memory.key}`, error);
      return;
    }
    ctx.changed();
    if (!ctx.current()) return;
    const done = `${pinned ? "Pinned" : "Unpinned"} ${memory.key}.`;
    const label = changed.pinned ? "Unpin" : "Pin";
    ctx.notify(done);
    replaceRow(changed);
    focusAction(changed.id, label);
    await settle(changed, label, done);
  }

  async function onApprove(memory) {
    let changed;
    try {
      changed = (await api.holdMemory(memory, false)).memory;
    } catch (error) {
      ctx.fail(`Approving ${memory.key}`, error);
      return;
    }
    ctx.changed();
    if (!ctx.current()) return;
    const done = `Approved ${memory.key}: agents see it from their next run.`;
    ctx.notify(done);
    replaceRow(changed);
    focusAction(changed.id, "Pin");
    await settle(changed, "Pin", done);
  }

  async function onDelete(memory) {
    const confirmed = await ctx.confirm({
      title: "Delete this memory?",
      body: [
        keyEl(memory.key),
        " will be removed for good. Agents stop seeing it at their next run.",
      ],
      confirmLabel: "Delete",
    });
    if (!confirmed) return;
    try {
      await api.deleteMemory(memory.id);
    } catch (error) {
      ctx.fail(`Deleting ${memory.key}`, error);
      return;
    }
    ctx.changed();
    if (!ctx.current()) return;
    ctx.notify(`Deleted ${memory.key}.`);
    // The focus moves to the row that took its place (or the one above it, or the
    // row to add a memory when none is left).
    const at = rows.findIndex((m) => m.id === memory.id);
    if (at === -1) return; // already gone: a listing since has left it out
    generation += 1; // a listing still under way may hold the row: drop its answer
    rows = rows.filter((m) => m.id !== memory.id);
    if (total) total -= 1;
    editing = null;
    render();
    const next = rows[Math.min(at, rows.length - 1)];
    if (next) focusAction(next.id, "Delete");
    else container.querySelector(`input[form="${createForm.id}"][name="key"]`).focus();
  }
}
