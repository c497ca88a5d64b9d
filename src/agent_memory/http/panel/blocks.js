// The Blocks tab: the user's core and archival blocks, and the agent's, each
// replaced whole under compare-and-set. A write that lost the race shows the
// text now stored beside the person's own and lets them retry or discard.
//
// Each block says whose it is: the user's own (every agent sees it for them), the
// agent's, kept for one user, or a workspace's, which every user of the tenant who
// opens the workspace shares. An orchestrator's key may pick the user whose blocks
// it reads; another user's are shown read only, as writes are the key's own.

import { lineDiff } from "./diff.js";
import { el, fill, formatCount, formatDate, refreshButton, timeEl, viewHead } from "./dom.js";

const LABELS = {
  BLOCK_LABEL_CORE: { name: "Core", about: "Injected into every prompt.", limit: 4000 },
  BLOCK_LABEL_ARCHIVAL: { name: "Archival", about: "Searched on demand by recall.", limit: 8000 },
};

/** The blocks shown: `userId` names another user's (empty: the key's own). */
function slotsFor(target, userId) {
  const user = [
    { label: "BLOCK_LABEL_CORE", scope: "SCOPE_USER", agentId: "", userId },
    { label: "BLOCK_LABEL_ARCHIVAL", scope: "SCOPE_USER", agentId: "", userId },
  ];
  if (target.kind === "workspace") {
    const shared = { scope: "SCOPE_WORKSPACE", agentId: "", workspaceId: target.id };
    return [
      { label: "BLOCK_LABEL_CORE", ...shared },
      { label: "BLOCK_LABEL_ARCHIVAL", ...shared },
      ...user,
    ];
  }
  if (target.kind !== "agent") return user;
  const agent = [
    { label: "BLOCK_LABEL_CORE", scope: "SCOPE_AGENT", agentId: target.id, userId },
    { label: "BLOCK_LABEL_ARCHIVAL", scope: "SCOPE_AGENT", agentId: target.id, userId },
  ];
  return [...agent, ...user];
}

// The users an orchestrator picked, the last one first, kept in this tab.
const PICKED = "agent-memory.panel.blockUsers";
const PICKED_LIMIT = 8;

function pickedUsers() {
  try {
    const list = JSON.parse(sessionStorage.getItem(PICKED));
    return Array.isArray(list) ? list.filter((u) => typeof u === "string" && u) : [];
  } catch {
    return [];
  }
}

function pick(userId) {
  const list = [userId, ...pickedUsers().filter((u) => u !== userId)].slice(0, PICKED_LIMIT);
  sessionStorage.setItem(PICKED, JSON.stringify(list));
}

function plural(count, one, many) {
  return `${formatCount(count)} ${Number(count) === 1 ? one : many}`;
}

function slotKey(slot) {
  return `${slot.scope}/${slot.label}`;
}

/** The foot of a block's form: its submit button, then the way out of it. */
function formActions(submitLabel, otherLabel, onOther) {
  return el(
    "div",
    { class: "card-actions" },
    el("button", { type: "submit", class: "button primary" }, submitLabel),
    el("button", { type: "button", class: "button", onclick: onOther }, otherLabel),
  );
}

// While an archival block's new lines are being embedded, its count is read again.
const INDEXING_RECHECK_MS = 1500;

export function mount(container, ctx) {
  const { api, target } = ctx;
  const self = ctx.caller ? ctx.caller.userId : "";
  // An orchestrator reads any user's blocks; the last user it picked stays picked.
  const picker = Boolean(ctx.caller && ctx.caller.role === "orchestrator");
  const whose = (picker && pickedUsers()[0]) || self;
  const another = Boolean(whose && whose !== self);
  // A workspace's blocks are the tenant's: whoever's blocks are shown, the key writes them.
  const canWrite = (slot) => ctx.canWrite && (!another || slot.scope === "SCOPE_WORKSPACE");
  const cards = new Map(); // slotKey -> card state
  let recall = null; // the server's recall status, once known

  const grid = el("div", { class: "block-grid" });
  const about = another
    ? `The blocks of the user ${whose}${target.kind === "agent" ? " with this agent" : ""}, read only: what you write is your own.${target.kind === "workspace" ? " The workspace's blocks are everyone's in it." : ""}`
    : target.kind === "agent"
      ? "This agent's blocks, and your own blocks that every agent sees for you. Saving replaces the whole text, only if nobody changed it since you opened it."
      : target.kind === "workspace"
        ? "This workspace's blocks, shared by everyone who opens it, and your own blocks. Saving replaces the whole text, only if nobody changed it since you opened it."
        : "Your own blocks. Agent blocks appear when you open an agent.";
  fill(container, viewHead("Blocks", about, refreshButton(load)), picker ? userPicker() : null, grid);

  /** The orchestrator's choice of whose blocks to read: any user of the tenant. */
  function userPicker() {
    const known = [...new Set([self, ...pickedUsers()].filter(Boolean))];
    const input = el("input", {
      id: "blocks-user",
      name: "user",
      list: "blocks-users",
      value: whose,
      required: true,
      autocomplete: "off",
      spellcheck: "false",
      class: "mono",
    });
    return el(
      "form",
      {
        class: "whose-picker",
        onsubmit: (event) => {
          event.preventDefault();
          const chosen = input.value.trim();
          if (!chosen) {
            input.focus();
            return;
          }
          pick(chosen);
          mount(container, ctx);
          container.querySelector("#blocks-user").focus();
        },
      },
      el("label", { for: "blocks-user" }, "Whose blocks (user id)"),
      el(
        "div",
        { class: "input-row" },
        input,
        el("button", { type: "submit", class: "button" }, "Show"),
      ),
      el("datalist", { id: "blocks-users" }, ...known.map((u) => el("option", { value: u }))),
    );
  }

  for (const slot of slotsFor(target, another ? whose : "")) {
    const card = { slot, block: null, mode: "view", draft: "", base: "", newer: null, error: null };
    card.node = el("article", { class: "card block-card" });
    cards.set(slotKey(slot), card);
    grid.append(card.node);
  }

  load();

  async function load() {
    let answer;
    try {
      [answer, recall] = await Promise.all([
        api.listBlocks(
          target.kind === "agent" ? target.id : "",
          another ? whose : "",
          target.kind === "workspace" ? target.id : "",
        ),
        recall || api.recallStatus().then((r) => r.status || {}, () => ({})),
      ]);
    } catch (error) {
      if (ctx.current()) ctx.fail("Loading blocks", error);
      return;
    }
    if (!ctx.current()) return;
    const found = new Map((answer.blocks || []).map((b) => [slotKey(b), b]));
    for (const [key, card] of cards) {
      card.block = found.get(key) || null;
      card.mode = "view";
      card.error = null;
      card.history = null;
      render(card);
      followIndexing(card);
    }
  }

  /** Read an archival block again until every line is searchable by meaning. */
  function followIndexing(card) {
    const block = card.block;
    if (!block || !byMeaning() || card.slot.label !== "BLOCK_LABEL_ARCHIVAL") return;
    if ((block.indexedLineCount || 0) >= (block.entryCount || 0) || card.following) return;
    card.following = setTimeout(async () => {
      card.following = null;
      if (!ctx.current() || card.mode !== "view" || card.block !== block) return;
      try {
        card.block = (await api.getBlock(card.slot)).block;
      } catch {
        return; // the next load or save shows what went wrong
      }
      if (!ctx.current() || card.mode !== "view") return;
      render(card);
      followIndexing(card);
    }, INDEXING_RECHECK_MS);
  }

  function byMeaning() {
    return Boolean(recall && recall.mode === "RECALL_MODE_HYBRID");
  }

  // -- rendering --------------------------------------------------------------------------

  /**
   * Whose a block is: the user's own, which every agent sees for them, the agent's,
   * kept for that one user, or the workspace's, shared by the tenant's users.
   */
  function owner(slot) {
    if (slot.scope === "SCOPE_WORKSPACE") {
      return el(
        "span",
        {
          class: "whose",
          dataset: { whose: "workspace" },
          title: "Shared by everyone who opens this workspace",
        },
        "Workspace ",
        el("span", { class: "mono" }, slot.workspaceId),
      );
    }
    const user = whose || "you";
    const you = !another && whose ? " (you)" : "";
    if (slot.scope === "SCOPE_USER") {
      return el(
        "span",
        { class: "whose", dataset: { whose: "user" }, title: "Every agent sees it for this user" },
        "User ",
        el("span", { class: "mono" }, user),
        you,
      );
    }
    return el(
      "span",
      { class: "whose", dataset: { whose: "agent" }, title: "This agent's, for this user only" },
      "Agent ",
      el("span", { class: "mono" }, slot.agentId),
      " with ",
      el("span", { class: "mono" }, user),
      you,
    );
  }

  function heading(card) {
    const label = LABELS[card.slot.label];
    const title = `${label.name} block`;
    const headingId = `block-${card.slot.scope}-${card.slot.label}`;
    card.node.setAttribute("aria-labelledby", headingId);
    card.node.dataset.label = card.slot.label;
    card.node.dataset.scope = card.slot.scope;
    return el(
      "header",
      { class: "block-head" },
      el(
        "div",
        {},
        el("h3", { id: headingId }, title),
        el("p", { class: "block-whose" }, owner(card.slot)),
        el("p", { class: "muted small" }, label.about),
      ),
    );
  }

  function meta(block, limit, archival) {
    if (!block) return el("p", { class: "block-meta muted" }, "Not written yet.");
    return el(
      "p",
      { class: "block-meta muted" },
      `Version ${formatCount(block.version)} · updated `,
      timeEl(block.updatedAt),
      ` · ${formatCount(block.charCount)} / ${formatCount(limit)} characters · ${plural(block.entryCount || 0, "entry", "entries")}`,
      archival ? searchable(block) : "",
    );
  }

  /** How recall finds the block's lines: by meaning once each is embedded. */
  function searchable(block) {
    if (!recall) return "";
    if (!byMeaning()) {
      return el("span", { title: recall.detail || "" }, " · found by their words");
    }
    const entries = block.entryCount || 0;
    const indexed = block.indexedLineCount || 0;
    // No index worker heard from lately: say so rather than let the count seem stuck.
    const idle = recall.indexing && !recall.indexing.workerCount;
    const text =
      indexed >= entries
        ? " · found by words and meaning"
        : ` · ${formatCount(indexed)} of ${formatCount(entries)} found by meaning so far` +
          (idle ? " (no index worker is running)" : "");
    return el("span", { class: "indexing", title: recall.detail || "" }, text);
  }

  function render(card) {
    const limit = LABELS[card.slot.label].limit;
    const archival = card.slot.label === "BLOCK_LABEL_ARCHIVAL";
    const parts = [heading(card), meta(card.block, limit, archival)];
    if (card.mode === "view") parts.push(...viewBody(card));
    else if (card.mode === "edit") parts.push(...editBody(card, limit));
    else parts.push(...conflictBody(card));
    fill(card.node, ...parts);
  }

  function viewBody(card) {
    const content = card.block && card.block.content;
    const history =
      card.block && Number(card.block.version) > 1
        ? el(
            "button",
            {
              type: "button",
              class: "button subtle",
              "aria-expanded": String(Boolean(card.history)),
              onclick: () => toggleHistory(card),
            },
            card.history ? "Hide history" : "History",
          )
        : null;
    return [
      content
        ? el("pre", { class: "block-content" }, content)
        : el("p", { class: "block-empty" }, card.block ? "Empty." : "Nothing here yet."),
      canWrite(card.slot) || history
        ? el(
            "div",
            { class: "card-actions" },
            canWrite(card.slot)
              ? el(
                  "button",
                  {
                    type: "button",
                    class: "button",
                    onclick: () => startEdit(card),
                    "data-action": "edit",
                  },
                  card.block ? "Edit" : "Write",
                )
              : null,
            history,
          )
        : null,
      card.history || null,
    ];
  }

  /** The block's kept versions, newest first, each with what it changed. */
  async function toggleHistory(card) {
    if (card.history) {
      card.history = null;
      render(card);
      return;
    }
    card.history = el("div", { class: "block-history" }, el("p", { class: "muted" }, "Loading…"));
    render(card);
    let answer;
    try {
      answer = await api.blockVersions(card.slot);
    } catch (error) {
      if (ctx.current() && card.history) {
        fill(card.history, el("div", { class: "form-error" }, ...ctx.describeError(error)));
      }
      return;
    }
    if (!ctx.current() || !card.history) return;
    const versions = answer.versions || [];
    fill(
      card.history,
      el("h4", {}, "History"),
      el(
        "ol",
        { class: "versions" },
        ...versions.map((version, i) => {
          const previous = versions[i + 1];
          return el(
            "li",
            { dataset: { version: String(version.version) } },
            el(
              "p",
              { class: "muted small" },
              el("strong", {}, `Version ${formatCount(version.version)}`),
              " · ",
              timeEl(version.writtenAt),
              version.writerUserId ? ` · by ${version.writerUserId}` : "",
            ),
            previous || !answer.nextPageToken
              ? diffEl(previous ? previous.content || "" : null, version.content || "")
              : null,
          );
        }),
      ),
      answer.nextPageToken
        ? el("p", { class: "muted small" }, "Older versions are left out.")
        : null,
    );
  }

  /** What a version changed from the one before it (the first: its whole text). */
  function diffEl(before, after) {
    if (before === null) {
      return el("pre", { class: "block-content diff" }, el("span", { class: "diff-added" }, after));
    }
    const lines = lineDiff(before, after).filter(([kind]) => kind !== "same");
    if (!lines.length) return el("p", { class: "muted small" }, "No change to the text.");
    return el(
      "pre",
      { class: "block-content diff" },
      ...lines.map(([kind, line]) =>
        el("span", { class: `diff-${kind}` }, `${kind === "added" ? "+ " : "- "}${line}\n`),
      ),
    );
  }

  function errorNote(card) {
    if (!card.error) return null;
    return el(
      "div",
      { class: "notice error inline", role: "alert" },
      el("div", { class: "notice-body" }, ...ctx.describeError(card.error, "Not saved:")),
    );
  }

  function draftArea(card, limit, label) {
    const counter = el("span", { class: "counter muted small" });
    const area = el("textarea", {
      class: "block-editor mono",
      rows: 10,
      "aria-label": label,
      value: card.draft,
      oninput: () => {
        card.draft = area.value;
        updateCounter();
      },
      onkeydown: (event) => onEditorKey(event, card),
    });
    function updateCounter() {
      counter.textContent = `${formatCount(card.draft.length)} / ${formatCount(limit)} characters`;
      counter.classList.toggle("over", card.draft.length > limit);
    }
    updateCounter();
    return { area, counter };
  }

  function editBody(card, limit) {
    const { area, counter } = draftArea(card, limit, `${LABELS[card.slot.label].name} block text`);
    const form = el(
      "form",
      { class: "block-form", onsubmit: (event) => onSave(event, card) },
      area,
      el(
        "div",
        { class: "editor-foot" },
        counter,
        el("span", { class: "hint" }, "Ctrl+Enter saves · Esc cancels"),
      ),
      errorNote(card),
      formActions("Save", "Cancel", () => cancelEdit(card)),
    );
    queueMicrotask(() => area.focus());
    return [form];
  }

  function conflictBody(card) {
    const newer = card.newer;
    const limit = LABELS[card.slot.label].limit;
    const { area, counter } = draftArea(card, limit, "Your text");
    const title = el(
      "h4",
      { tabindex: -1 },
      "Someone else changed this block while you were editing",
    );
    const explanation = newer
      ? el(
          "p",
          {},
          `Your text was not saved. Version ${formatCount(newer.version)} was saved on ${formatDate(newer.updatedAt)}. `,
          "Compare the two, then keep your text or take the newer one.",
        )
      : el(
          "p",
          {},
          "Your text was not saved: the block was deleted meanwhile. Retrying writes it anew.",
        );
    const node = el(
      "form",
      { class: "conflict", onsubmit: (event) => onRetry(event, card) },
      el("div", { class: "conflict-message", role: "alert" }, title, explanation),
      el(
        "div",
        { class: "compare" },
        el(
          "section",
          { class: "compare-side theirs" },
          el("h5", {}, newer ? `Now stored · version ${formatCount(newer.version)}` : "Now stored"),
          newer && newer.content
            ? el("pre", { class: "block-content newer-text" }, newer.content)
            : el("p", { class: "block-empty newer-text" }, newer ? "Empty." : "Deleted."),
        ),
        el(
          "section",
          { class: "compare-side mine" },
          el("h5", {}, "Your text · not saved"),
          area,
          el("div", { class: "editor-foot" }, counter),
        ),
      ),
      errorNote(card),
      formActions("Retry with my text", "Discard mine", () => discard(card)),
    );
    queueMicrotask(() => title.focus());
    return [node];
  }

  // -- actions ----------------------------------------------------------------------------

  function focusEdit(card) {
    const button = card.node.querySelector('[data-action="edit"]');
    if (button) button.focus();
  }

  function startEdit(card) {
    card.history = null; // a save makes it stale
    card.mode = "edit";
    card.draft = card.block ? card.block.content || "" : "";
    card.base = card.block ? card.block.updatedAt : "";
    card.error = null;
    render(card);
  }

  function cancelEdit(card) {
    card.mode = "view";
    card.error = null;
    render(card);
    focusEdit(card);
  }

  function onEditorKey(event, card) {
    if (event.key === "Escape") {
      event.preventDefault();
      if (card.mode === "conflict") discard(card);
      else cancelEdit(card);
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      event.target.form.requestSubmit();
    }
  }

  async function write(card) {
    const { label, scope, agentId, workspaceId } = card.slot;
    try {
      const answer = await api.writeBlock({
        label,
        scope,
        agentId,
        workspaceId,
        content: card.draft,
        expectedUpdatedAt: card.base,
      });
      card.block = answer.block;
      card.mode = "view";
      card.error = null;
      card.newer = null;
      ctx.changed();
      render(card);
      followIndexing(card);
      focusEdit(card);
      ctx.notify(`Saved the ${LABELS[label].name.toLowerCase()} block.`);
    } catch (error) {
      if (error.reason === "BLOCK_CONFLICT") {
        await showConflict(card);
      } else if (error.unauthenticated) {
        ctx.fail("Saving the block", error);
      } else {
        card.error = error;
        // The refusal stands in the card: an earlier "Saved" below would contradict it.
        ctx.clearStatus();
        render(card);
      }
    }
  }

  /** Fetch the block as it is now, and show it beside the person's text. */
  async function showConflict(card) {
    let newer = null;
    try {
      newer = (await api.getBlock(card.slot)).block;
    } catch (error) {
      if (error.httpStatus !== 404) {
        ctx.fail("Reading the newer block", error);
        return;
      }
    }
    card.newer = newer;
    card.block = newer;
    card.base = newer ? newer.updatedAt : "";
    card.mode = "conflict";
    card.error = null;
    render(card);
  }

  function onSave(event, card) {
    event.preventDefault();
    write(card);
  }

  function onRetry(event, card) {
    event.preventDefault();
    // base now holds the newer block's updated_at: this write replaces it.
    write(card);
  }

  function discard(card) {
    card.mode = "view";
    card.newer = null;
    card.error = null;
    render(card);
    focusEdit(card);
    ctx.notify("Kept the newer text; yours was discarded.");
  }
}
