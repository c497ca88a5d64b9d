// The Prompt & recall tab: the two answers an operator debugging an agent needs
// first. "Prompt preview" renders the memory part of the system prompt the agent
// would get now for a user message (RenderPrompt); "Test recall" shows what a
// search of its memory finds, best first, with scores (Recall). Neither changes
// anything, so a reader's key may use both.
//
// Under the rendered prompt, its context window: how many tokens each of the
// sections the renderer made takes, and the whole prompt, as the service counted
// them with its local embedding model's tokenizer (a proxy for the reading model's).

import { el, fill, formatCount, viewHead } from "./dom.js";

const SCOPES = { SCOPE_USER: "user", SCOPE_AGENT: "agent", SCOPE_WORKSPACE: "workspace" };

// The renderer's section names (render/prompt.py), as a person reads them.
const SECTION_NAMES = {
  persona: "Persona",
  user_core: "Core block (user)",
  agent_core: "Core block (agent)",
  agent_memory: "Agent memory",
  workspace_memory: "Workspace memory",
  recent_decisions: "Recent decisions",
  archival_hint: "Archival hint",
};

function plural(count, one, many) {
  return `${formatCount(count)} ${Number(count) === 1 ? one : many}`;
}

/** A share of the whole, as a whole percent ("<1%" for a sliver). */
function percent(part, whole) {
  if (!whole) return "—";
  const share = (100 * part) / whole;
  return share > 0 && share < 1 ? "<1%" : `${Math.round(share)}%`;
}

/**
 * The prompt's context window: a row per section, in prompt order, with its
 * tokens and its share of the whole; then what the fence and the framing around
 * the memory sections add; then the total. Null when the service did not count.
 */
function contextWindow(answer) {
  const sections = answer.sections || [];
  if (answer.tokenCount === undefined || sections.some((s) => s.tokenCount === undefined)) {
    return el("p", { class: "muted small" }, "The service did not count this prompt's tokens.");
  }
  const total = answer.tokenCount;
  const counted = sections.reduce((sum, s) => sum + s.tokenCount, 0);
  // The page's policy refuses style attributes: the bar's width is set as a property.
  const bar = (tokens) => {
    const filled = el("span");
    filled.style.width = `${total ? Math.min(100, (100 * tokens) / total) : 0}%`;
    return el("span", { class: "share-bar", "aria-hidden": "true" }, filled);
  };
  const row = (name, tokens, attrs = {}) =>
    el(
      "tr",
      attrs,
      el("th", { scope: "row" }, name),
      el("td", { class: "col-num" }, formatCount(tokens)),
      el(
        "td",
        { class: "col-share" },
        bar(tokens),
        el("span", { class: "share-text" }, percent(tokens, total)),
      ),
    );
  const framing = total - counted;
  return el(
    "div",
    { class: "table-wrap token-wrap" },
    el(
      "table",
      { class: "table token-table" },
      el(
        "caption",
        {},
        "Context window ",
        el("span", { class: "muted small" }, "· tokens of the local embedding model, an estimate"),
      ),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, "Section"),
          el("th", { scope: "col", class: "col-num" }, "Tokens"),
          el("th", { scope: "col", class: "col-share" }, "Share"),
        ),
      ),
      el(
        "tbody",
        {},
        ...sections.map((s) =>
          row(SECTION_NAMES[s.name] || s.name, s.tokenCount, { dataset: { section: s.name } }),
        ),
        framing > 0 ? row("Fence and framing", framing, { dataset: { section: "framing" } }) : null,
      ),
      el(
        "tfoot",
        {},
        el(
          "tr",
          { dataset: { section: "total" } },
          el("th", { scope: "row" }, "Total"),
          el("td", { class: "col-num" }, formatCount(total)),
          el("td", { class: "col-share muted small" }, plural(sections.length, "section", "sections")),
        ),
      ),
    ),
  );
}

export function mount(container, ctx) {
  const { api, target } = ctx;
  if (target.kind !== "agent") {
    container.replaceChildren(
      el(
        "div",
        { class: "empty-state small" },
        el("h2", {}, "Prompts and recall belong to an agent"),
        el("p", { class: "muted" }, "Open an agent on the left to preview its prompt."),
      ),
    );
    return;
  }

  const promptOut = el("div", { class: "preview-out", "aria-live": "polite" });
  const recallOut = el("div", { class: "preview-out", "aria-live": "polite" });
  const promptForm = el(
    "form",
    { class: "card preview-form", onsubmit: onRender },
    el("h3", { class: "section-title" }, "Prompt preview"),
    el("label", { for: "preview-message" }, "User message (optional)"),
    el("textarea", {
      id: "preview-message",
      name: "message",
      rows: 2,
      placeholder: "What the user says in the run, for the memories it calls up",
    }),
    el("button", { type: "submit", class: "button primary" }, "Render prompt"),
    promptOut,
  );
  const recallForm = el(
    "form",
    { class: "card preview-form", onsubmit: onRecall },
    el("h3", { class: "section-title" }, "Test recall"),
    el("label", { for: "recall-query" }, "Query"),
    el(
      "div",
      { class: "input-row" },
      el("input", { id: "recall-query", name: "query", required: true, autocomplete: "off" }),
      el("button", { type: "submit", class: "button primary" }, "Recall"),
    ),
    el(
      "label",
      { class: "check" },
      el("input", { type: "checkbox", name: "memories", checked: true }),
      el("span", {}, "Search memories too, not only archival lines"),
    ),
    recallOut,
  );
  container.replaceChildren(
    viewHead(
      "Prompt & recall",
      "What this agent's model would read now, and what a search of its memory finds.",
    ),
    el("div", { class: "preview-grid" }, promptForm, recallForm),
  );

  async function onRender(event) {
    event.preventDefault();
    const message = String(new FormData(promptForm).get("message") || "");
    fill(promptOut, el("p", { class: "muted" }, "Rendering…"));
    let answer;
    try {
      answer = await api.renderPrompt(target.id, message);
    } catch (error) {
      if (ctx.current()) fill(promptOut, el("div", { class: "form-error" }, ...ctx.describeError(error)));
      return;
    }
    if (!ctx.current()) return;
    const warnings = answer.warnings || [];
    const reminders = answer.systemReminders || [];
    const prompt = answer.systemPrompt || "";
    fill(
      promptOut,
      warnings.length
        ? el("ul", { class: "notice warning" }, ...warnings.map((w) => el("li", {}, w)))
        : null,
      el(
        "p",
        { class: "muted small" },
        `${formatCount(Array.from(prompt).length)} characters, ` +
          plural((answer.sections || []).length, "section", "sections") +
          (answer.tokenCount !== undefined ? `, about ${plural(answer.tokenCount, "token", "tokens")}` : ""),
      ),
      prompt ? contextWindow(answer) : null,
      prompt
        ? el("pre", { class: "prompt-text", tabindex: 0 }, prompt)
        : el("p", { class: "muted" }, "The prompt is empty: memory is off for this agent, or it holds nothing yet."),
      reminders.length ? el("h4", {}, "System reminders") : null,
      ...reminders.map((r) => el("pre", { class: "prompt-text" }, r)),
    );
  }

  async function onRecall(event) {
    event.preventDefault();
    const data = new FormData(recallForm);
    const queryText = String(data.get("query") || "").trim();
    if (!queryText) return;
    fill(recallOut, el("p", { class: "muted" }, "Searching…"));
    let found;
    try {
      found = await api.recall(target.id, queryText, { includeMemories: data.get("memories") === "on" });
    } catch (error) {
      if (ctx.current()) fill(recallOut, el("div", { class: "form-error" }, ...ctx.describeError(error)));
      return;
    }
    if (!ctx.current()) return;
    if (!found.length) {
      fill(recallOut, el("p", { class: "muted" }, "Nothing matches."));
      return;
    }
    fill(
      recallOut,
      el(
        "ol",
        { class: "recall-results" },
        ...found.map((hit) =>
          el(
            "li",
            {},
            el("span", { class: "score", title: "Score" }, (hit.score || 0).toFixed(3)),
            el(
              "span",
              { class: "muted small" },
              hit.memoryId
                ? ` memory · ${SCOPES[hit.scope] || "agent"}`
                : ` archival line ${hit.lineNumber || 0} · ${SCOPES[hit.scope] || "agent"}`,
            ),
            el("div", { class: "recall-content" }, hit.content || ""),
          ),
        ),
      ),
    );
  }
}
