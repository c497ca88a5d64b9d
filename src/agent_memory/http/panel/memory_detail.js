// A memory's detail: everything the service keeps of it (tags, confidence,
// groundings with the words of the conversation they quote, expiry) and its
// history, in a dialog over the list. A writer may set or clear the expiry here,
// on any memory (a read-only one too), with the etag it was shown.

import { dayEl, el, fill, timeEl } from "./dom.js";

// What a person should know of a memory held for review: why it is held (the contract's
// HoldReason), and so what to check before approving it.
const HOLD_REASONS = {
  HOLD_REASON_INSTRUCTION:
    "reads as an instruction to the assistant, not a fact. Approve it only if it is a fact or a preference.",
  HOLD_REASON_CREDENTIAL:
    "reads as a password, code or key. Delete it unless it is not one: a memory is no place for a credential.",
  HOLD_REASON_REQUESTED: "held on request; kept out of prompts and recall until approved.",
};
const HELD_UNEXPLAINED = "kept out of prompts and recall until approved.";
export const HELD_WHY =
  "Agents don't see a memory held for review until a person approves it. The service holds a " +
  "memory a person did not write when its text reads as an instruction to the assistant or " +
  "as a credential; a person may also hold one.";

/** The label of a memory held for review: that it is held, and why. */
export function heldLabel(memory) {
  return `Held for review: ${HOLD_REASONS[memory.holdReason] || HELD_UNEXPLAINED}`;
}

const EVENT_NAMES = {
  MEMORY_EVENT_TYPE_CREATED: "Created",
  MEMORY_EVENT_TYPE_UPDATED: "Updated",
  MEMORY_EVENT_TYPE_PINNED: "Pinned",
  MEMORY_EVENT_TYPE_UNPINNED: "Unpinned",
  MEMORY_EVENT_TYPE_DELETED: "Deleted",
  MEMORY_EVENT_TYPE_SUPERSEDED: "Superseded",
};
const HISTORY_PAGES = 5; // at most this many pages of events (100 each) are fetched

let dialog = null;

function ensureDialog() {
  if (dialog) return dialog;
  dialog = el("dialog", {
    id: "memory-detail",
    class: "dialog detail-dialog",
    "aria-labelledby": "memory-detail-title",
  });
  document.body.append(dialog);
  return dialog;
}

/** "2026-11-27T10:00" in local time, for a datetime-local input. */
function localInput(timestamp) {
  const date = new Date(timestamp);
  const pad = (n) => String(n).padStart(2, "0");
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

function field(label, ...value) {
  return [el("dt", {}, label), el("dd", {}, ...value)];
}

/** The instant a snapshot expires at, in milliseconds; null when it never does. */
function expiresAt(memory) {
  return memory && memory.expireTime ? Date.parse(memory.expireTime) : null;
}

/** When a snapshot expires, as the history says it: a time, or "never". */
function expiryWord(memory) {
  return expiresAt(memory) === null ? "never" : timeEl(memory.expireTime);
}

/**
 * An event's name. An update that changed nothing but the expiry says which way:
 * set, changed or cleared.
 */
function eventName(event) {
  const before = event.oldMemory;
  const after = event.newMemory;
  const name = EVENT_NAMES[event.type] || event.type;
  if (event.type !== "MEMORY_EVENT_TYPE_UPDATED" || !before || !after) return name;
  if (Boolean(before.heldForReview) !== Boolean(after.heldForReview)) {
    return after.heldForReview ? "Held for review" : "Approved";
  }
  const [was, now] = [expiresAt(before), expiresAt(after)];
  if (was === now) return name;
  const same = (field, empty) => (before[field] ?? empty) === (after[field] ?? empty);
  const rest =
    same("value", "") && same("key", "") && same("importance", 0) && same("pinned", false) &&
    (before.tags || []).join("\n") === (after.tags || []).join("\n");
  if (!rest) return name;
  return was === null ? "Expiry set" : now === null ? "Expiry cleared" : "Expiry changed";
}

/** What changed between two snapshots of a memory, in a few words. */
function changeOf(event) {
  const before = event.oldMemory || {};
  const after = event.newMemory || {};
  const said = [];
  if (after.value !== undefined && before.value !== undefined && after.value !== before.value) {
    said.push(el("del", {}, before.value), " → ", el("ins", {}, after.value));
  } else if (!event.oldMemory && after.value) {
    said.push(el("span", { class: "event-value" }, after.value));
  }
  if ((before.importance || 0) !== (after.importance || 0) && event.oldMemory && event.newMemory) {
    said.push(el("div", { class: "muted" }, `importance ${before.importance || 0} → ${after.importance || 0}`));
  }
  if (before.key && after.key && before.key !== after.key) {
    said.push(el("div", { class: "muted" }, `key ${before.key} → ${after.key}`));
  }
  if (event.oldMemory && event.newMemory && expiresAt(before) !== expiresAt(after)) {
    said.push(
      el(
        "div",
        { class: "expiry-change" },
        "expires ",
        el("del", {}, expiryWord(before)),
        " → ",
        el("ins", {}, expiryWord(after)),
      ),
    );
  }
  return said;
}

/** The message a grounding points into, its quoted span marked. */
function quotedMessage(conversation, grounding) {
  const messages = (conversation && conversation.messages) || [];
  const message = messages[grounding.messagePosition || 0];
  if (!message) return el("p", { class: "muted" }, "The message is no longer kept.");
  const text = message.content || "";
  const start = grounding.startCharacter || 0;
  const end = grounding.endCharacter || 0;
  const chars = Array.from(text); // positions count code points
  const inside = end > start && end <= chars.length;
  return el(
    "blockquote",
    { class: "grounding-message" },
    el("span", { class: "role" }, `${message.role || "message"} #${grounding.messagePosition || 0}: `),
    inside ? chars.slice(0, start).join("") : text,
    inside ? el("mark", {}, chars.slice(start, end).join("")) : null,
    inside ? chars.slice(end).join("") : null,
  );
}

/**
 * Open the detail of `memory`. `onChanged(memory)` is called with the memory as
 * stored after the user changed it here.
 */
export async function openMemoryDetail(memory, ctx, { onChanged, sourceName }) {
  const box = ensureDialog();
  const body = el("div", { class: "detail-body" }, el("p", { class: "muted" }, "Loading…"));
  const close = el(
    "button",
    { type: "button", class: "button subtle", onclick: () => box.close() },
    "Close",
  );
  box.replaceChildren(
    el(
      "div",
      { class: "detail-head" },
      el("h2", { id: "memory-detail-title" }, el("code", { class: "key" }, memory.key)),
      close,
    ),
    el("div", { class: "dialog-status" }),
    body,
  );
  if (!box.open) box.showModal();
  close.focus();

  let conversation = null;
  let events = [];
  let more = false;
  const provider = memory.conversationProvider;
  const conversationId = memory.conversationId;
  /** The memory's history, its first pages, read again. */
  async function readHistory() {
    let read = [];
    let token = "";
    for (let page = 0; page < HISTORY_PAGES; page += 1) {
      const answer = await ctx.api.memoryEvents(memory.id, token);
      read = read.concat(answer.events || []);
      token = answer.nextPageToken || "";
      if (!token) break;
    }
    events = read;
    more = Boolean(token);
  }
  const reads = [readHistory()];
  if (provider && conversationId && (memory.groundings || []).length) {
    reads.push(
      ctx.api
        .getConversation(provider, conversationId)
        .then((answer) => {
          conversation = answer.conversation || null;
        })
        .catch(() => {
          conversation = null; // the quotes below still say what was grounded
        }),
    );
  }
  try {
    await Promise.all(reads);
  } catch (error) {
    body.replaceChildren(
      el("div", { class: "form-error" }, ...ctx.describeError(error, "Loading the history failed:")),
    );
    return;
  }
  if (!box.open) return;
  fill(body, detailOf(memory));

  function detailOf(shown) {
    const tags = shown.tags || [];
    const groundings = shown.groundings || [];
    const confidence = shown.confidence === undefined ? "—" : shown.confidence.toFixed(2);
    return [
      el("p", { class: "detail-value" }, shown.value),
      el(
        "dl",
        { class: "detail-fields" },
        field("Source", el("span", { class: `badge source-${sourceName(shown)}` }, sourceName(shown)),
          shown.readOnly ? el("span", { class: "muted" }, " read-only") : null),
        field("Importance", String(shown.importance || 0)),
        field("Pinned", shown.pinned ? "Yes" : "No"),
        field(
          "Review",
          shown.heldForReview
            ? el("span", { class: "held-label", title: HELD_WHY }, heldLabel(shown))
            : "Not held",
        ),
        field("Confidence", confidence),
        field(
          "Tags",
          tags.length
            ? el("span", { class: "tags" }, ...tags.map((t) => el("span", { class: "tag" }, t)))
            : el("span", { class: "muted" }, "none"),
        ),
        field("Created", timeEl(shown.createdAt)),
        field("Updated", timeEl(shown.updatedAt)),
        field("Last used", shown.lastUsedTime ? timeEl(shown.lastUsedTime) : el("span", { class: "muted" }, "never")),
        field("Expires", expiryControl(shown)),
        shown.supersededBy ? field("Superseded by", el("code", {}, shown.supersededBy)) : [],
        provider ? field("Conversation", el("code", {}, `${provider} / ${conversationId}`)) : [],
        field("Id", el("code", { class: "small" }, shown.id)),
      ),
      el("h3", {}, `Groundings (${groundings.length})`),
      groundings.length
        ? el(
            "ol",
            { class: "groundings" },
            ...groundings.map((g) =>
              el(
                "li",
                {},
                el("q", {}, g.quote || ""),
                conversation ? quotedMessage(conversation, g) : null,
              ),
            ),
          )
        : el("p", { class: "muted" }, "None: this memory points at no message."),
      el("h3", {}, "History"),
      events.length
        ? el(
            "ol",
            { class: "history" },
            ...events.map((event) =>
              el(
                "li",
                {},
                el("strong", {}, eventName(event)),
                " ",
                dayEl(event.occurredAt),
                event.actorUserId ? el("span", { class: "muted" }, ` by ${event.actorUserId}`) : null,
                el("div", { class: "event-change" }, ...changeOf(event)),
              ),
            ),
          )
        : el("p", { class: "muted" }, "No events."),
      more ? el("p", { class: "muted small" }, "Older events are left out.") : null,
    ];
  }

  function expiryControl(shown) {
    const said = shown.expireTime ? timeEl(shown.expireTime) : el("span", { class: "muted" }, "never");
    if (!ctx.canWrite) return said;
    const input = el("input", {
      type: "datetime-local",
      name: "expire",
      "aria-label": `Expiry of ${shown.key}`,
      value: shown.expireTime ? localInput(shown.expireTime) : "",
    });
    const error = el("p", { class: "form-error", role: "alert" });
    async function save(clear) {
      const instant = clear ? "" : input.value ? new Date(input.value).toISOString() : "";
      if (!clear && !instant) {
        error.textContent = "Choose a date and time, or clear the expiry.";
        input.focus();
        return;
      }
      let stored;
      try {
        stored = (await ctx.api.setMemoryExpiry(shown, instant)).memory;
      } catch (failure) {
        error.replaceChildren(...ctx.describeError(failure));
        return;
      }
      ctx.notify(clear ? `${shown.key} no longer expires.` : `${shown.key} now expires then.`);
      onChanged(stored);
      try {
        await readHistory(); // the change just made is the history's newest event
      } catch {
        // the history shown stays as it was; the change itself is saved
      }
      if (!box.open) return;
      fill(body, detailOf(stored));
    }
    return el(
      "form",
      {
        class: "expiry-form",
        onsubmit: (event) => {
          event.preventDefault();
          save(false);
        },
      },
      said,
      el(
        "div",
        { class: "input-row" },
        input,
        el("button", { type: "submit", class: "button small" }, "Set"),
        shown.expireTime
          ? el("button", { type: "button", class: "button small", onclick: () => save(true) }, "Clear")
          : null,
      ),
      error,
    );
  }
}
