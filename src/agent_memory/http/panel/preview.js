// The Prompt & recall tab: the two answers an operator debugging an agent needs
// first. "Prompt preview" renders the memory part of the system prompt the agent
// would get now for a user message (RenderPrompt); "Test recall" shows what a
// search of its memory finds, best first, with scores (Recall). Neither changes
// anything, so a reader's key may use both.

import { el, fill, viewHead } from "./dom.js";

const SCOPES = { SCOPE_USER: "user", SCOPE_AGENT: "agent", SCOPE_WORKSPACE: "workspace" };

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
      maxlength: 8000,
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
        `${Array.from(prompt).length} characters, ${(answer.sections || []).length} sections`,
      ),
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
