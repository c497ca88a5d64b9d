// The Memories tab: an agent's or a workspace's memories in the server's order,
// with an inline row to add one, and edit, pin and delete on each row.

import { dayEl, el, icon } from "./dom.js";

const SOURCES = {
  MEMORY_SOURCE_MANUAL: "manual",
  MEMORY_SOURCE_AUTO: "auto",
  MEMORY_SOURCE_DIRECTOR: "director",
  MEMORY_SOURCE_MEMORIZE: "memorize",
};
const READ_ONLY_LABEL = "auto-captured · read-only";
const COLUMNS = 7;

/** A key in monospace, breakable after its separators ("director:learning:…"). */
function keyEl(key) {
  const parts = key.split(/(?<=[:./_])/);
  return el(
    "code",
    { class: "key" },
    parts.flatMap((part, i) => (i ? [el("wbr"), part] : [part])),
  );
}

function sourceName(memory) {
  return SOURCES[memory.source] || "manual";
}

export function mount(container, ctx) {
  const { api, target } = ctx;
  let rows = [];
  let nextPageToken = "";
  let editing = null; // the id of the memory being edited

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

  container.replaceChildren(
    el(
      "div",
      { class: "view-head" },
      el(
        "div",
        {},
        el("h2", {}, "Memories"),
        el("p", { class: "muted" }, `Listed as the service orders them: ${order}.`),
      ),
      el("button", { type: "button", class: "button subtle", onclick: () => load() }, "Refresh"),
    ),
    editForm,
    createForm,
    el(
      "div",
      { class: "table-wrap" },
      el(
        "table",
        { class: "table memories" },
        el("caption", { class: "sr-only" }, `Memories of the ${owner} ${target.id}`),
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", { scope: "col", class: "col-source" }, "Source"),
            el("th", { scope: "col", class: "col-key" }, "Key"),
            el("th", { scope: "col", class: "col-value" }, "Value"),
            el("th", { scope: "col", class: "col-num" }, "Importance"),
            el("th", { scope: "col", class: "col-pinned" }, "Pinned"),
            el("th", { scope: "col", class: "col-date" }, "Updated"),
            el(
              "th",
              { scope: "col", class: "col-actions" },
              el("span", { class: "sr-only" }, "Actions"),
            ),
          ),
        ),
        tbody,
        el("tfoot", {}, createRow()),
      ),
    ),
    el("div", { class: "view-foot" }, loadMore),
  );

  load();

  async function load(pageToken = "") {
    try {
      const answer = await api.listMemories(target, pageToken);
      if (!ctx.current()) return;
      const page = answer.memories || [];
      rows = pageToken ? rows.concat(page) : page;
      nextPageToken = answer.nextPageToken || "";
      if (!pageToken) editing = null;
      render();
    } catch (error) {
      if (ctx.current()) ctx.fail("Loading memories", error);
    }
  }

  function render() {
    loadMore.hidden = !nextPageToken;
    if (rows.length === 0) {
      tbody.replaceChildren(
        el(
          "tr",
          { class: "empty-row" },
          el("td", { colspan: COLUMNS }, "No memories yet. Add the first one in the row below."),
        ),
      );
      return;
    }
    tbody.replaceChildren(...rows.map((m) => (m.id === editing ? editRow(m) : viewRow(m))));
  }

  function badge(memory) {
    const name = sourceName(memory);
    return el("span", { class: `badge source-${name}` }, name);
  }

  function viewRow(memory) {
    const pinned = Boolean(memory.pinned);
    const readOnly = Boolean(memory.readOnly);
    return el(
      "tr",
      { dataset: { memoryId: memory.id, key: memory.key }, class: readOnly ? "read-only" : "" },
      el("td", {}, badge(memory)),
      el(
        "td",
        {},
        keyEl(memory.key),
        readOnly ? el("div", { class: "read-only-label" }, READ_ONLY_LABEL) : null,
      ),
      el("td", { class: "value" }, memory.value),
      el("td", { class: "col-num" }, String(memory.importance || 0)),
      el(
        "td",
        { class: "col-pinned" },
        pinned
          ? el("span", { class: "pinned-chip" }, icon("pin"), "Pinned")
          : el("span", { class: "muted", "aria-label": "Not pinned" }, "—"),
      ),
      el("td", { class: "col-date" }, dayEl(memory.updatedAt)),
      el(
        "td",
        { class: "col-actions" },
        el(
          "div",
          { class: "row-actions" },
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
          el(
            "button",
            {
              type: "button",
              class: "button small danger-text",
              "aria-label": `Delete ${memory.key}`,
              onclick: () => onDelete(memory),
            },
            "Delete",
          ),
        ),
      ),
    );
  }

  function editRow(memory) {
    const value = el("textarea", {
      form: editForm.id,
      name: "value",
      rows: 3,
      required: true,
      maxlength: 2000,
      "aria-label": `Value of ${memory.key}`,
      value: memory.value,
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
      value: String(memory.importance || 0),
      onkeydown: onEditKey,
    });
    queueMicrotask(() => value.focus());
    return el(
      "tr",
      { dataset: { memoryId: memory.id, key: memory.key }, class: "editing" },
      el("td", {}, badge(memory)),
      el("td", {}, keyEl(memory.key)),
      el(
        "td",
        { class: "value" },
        value,
        el("p", { class: "hint" }, "Enter saves · Shift+Enter adds a line · Esc cancels"),
      ),
      el("td", { class: "col-num" }, importance),
      el(
        "td",
        { class: "col-pinned" },
        memory.pinned
          ? el("span", { class: "pinned-chip" }, icon("pin"), "Pinned")
          : el("span", { class: "muted" }, "—"),
      ),
      el("td", { class: "col-date" }, dayEl(memory.updatedAt)),
      el(
        "td",
        { class: "col-actions" },
        el(
          "div",
          { class: "row-actions" },
          el(
            "button",
            { type: "submit", form: editForm.id, class: "button small primary" },
            "Save",
          ),
          el("button", { type: "button", class: "button small", onclick: cancelEdit }, "Cancel"),
        ),
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
          maxlength: 255,
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
          maxlength: 2000,
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

  function startEdit(memory) {
    editing = memory.id;
    render();
  }

  function cancelEdit() {
    const id = editing;
    editing = null;
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
    try {
      await api.updateMemory(memory, { value, importance });
    } catch (error) {
      ctx.fail(`Saving ${memory.key}`, error);
      return;
    }
    ctx.notify(`Saved ${memory.key}.`);
    await load();
    focusAction(memory.id, "Edit");
  }

  async function onCreate(event) {
    event.preventDefault();
    const data = new FormData(createForm);
    const key = String(data.get("key") || "").trim();
    const value = String(data.get("value") || "");
    const importance = Number(data.get("importance") || 0);
    const pinned = data.get("pinned") === "on";
    try {
      await api.createMemory(target, { key, value, importance, pinned });
    } catch (error) {
      ctx.fail(`Adding ${key || "the memory"}`, error);
      return;
    }
    createForm.reset(); // resets the inputs of the row, which belong to the form
    ctx.notify(`Added ${key}.`);
    await load();
    container.querySelector(`input[form="${createForm.id}"][name="key"]`).focus();
  }

  async function onPin(memory) {
    const pinned = !memory.pinned;
    try {
      await api.pinMemory(memory.id, pinned);
    } catch (error) {
      ctx.fail(`${pinned ? "Pinning" : "Unpinning"} ${memory.key}`, error);
      return;
    }
    ctx.notify(`${pinned ? "Pinned" : "Unpinned"} ${memory.key}.`);
    await load();
    focusAction(memory.id, pinned ? "Unpin" : "Pin");
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
    ctx.notify(`Deleted ${memory.key}.`);
    await load();
  }
}
