// The Session & decisions tab: the agent's active session (with a reset behind
// a confirmation), its recent runs, and its recent decisions with their
// re-examinations. A run whose orchestrator said when its prompt was rendered
// opens on that prompt as it was (RenderPrompt as of the run's render time) and
// on what has changed in it since: a line diff against the prompt rendered now.

import { lineDiff } from "./diff.js";
import {
  el,
  fill,
  formatDuration,
  icon,
  refreshButton,
  tableHead,
  timeEl,
  viewHead,
} from "./dom.js";

const STATUS = {
  ACTIVE_SESSION_STATUS_FRESH: { text: "Fresh", tone: "neutral" },
  ACTIVE_SESSION_STATUS_CARRYING_CONTEXT: { text: "Carrying context", tone: "info" },
};
const RUN_KINDS = { RUN_KIND_CHAT: "chat", RUN_KIND_SCHEDULED: "scheduled" };
const RUNS_SHOWN = 10;

const RESOLUTION = {
  RESOLUTION_STATUS_OPEN: "Open",
  RESOLUTION_STATUS_RESOLVED: "Resolved",
  RESOLUTION_STATUS_EXPIRED: "Expired",
};

export function mount(container, ctx) {
  const { api, target, canWrite } = ctx;
  if (target.kind !== "agent") {
    container.replaceChildren(
      el(
        "div",
        { class: "empty-state small" },
        el("h2", {}, "Sessions and decisions belong to an agent"),
        el(
          "p",
          { class: "muted" },
          "Open an agent on the left to see its active session and recent decisions.",
        ),
      ),
    );
    return;
  }

  const sessionCard = el("section", {
    class: "card session-card",
    "aria-labelledby": "session-heading",
  });
  const decisionList = el("div", { class: "decision-list" });
  const runList = el("div", { class: "table-wrap" });
  const runPrompt = el("section", {
    class: "card run-prompt",
    id: "run-prompt",
    "aria-labelledby": "run-prompt-heading",
    hidden: true,
  });
  // The run whose prompt is open, if any.
  let opened = null;
  container.replaceChildren(
    viewHead(
      "Session & decisions",
      "The model session this agent's runs share, and what its runs decided.",
      refreshButton(load),
    ),
    sessionCard,
    el(
      "section",
      { class: "runs", "aria-labelledby": "runs-heading" },
      el("h3", { id: "runs-heading", class: "section-title" }, "Recent runs"),
      runList,
      runPrompt,
    ),
    el(
      "section",
      { class: "decisions", "aria-labelledby": "decisions-heading" },
      el("h3", { id: "decisions-heading", class: "section-title" }, "Recent decisions"),
      decisionList,
    ),
  );

  load();

  function load() {
    loadSession();
    loadRuns();
    loadDecisions();
  }

  // -- runs -------------------------------------------------------------------------------

  async function loadRuns() {
    let answer;
    try {
      answer = await api.agentRuns(target.id, RUNS_SHOWN);
    } catch (error) {
      if (ctx.current()) ctx.fail("Loading the runs", error);
      return;
    }
    if (!ctx.current()) return;
    const runs = answer.runs || [];
    const still = opened && runs.find((run) => run.runId === opened.runId);
    if (still) openRun(still);
    else closeRun();
    const session = (id) => (id ? el("code", {}, id) : el("span", { class: "muted" }, "none"));
    fill(
      runList,
      el(
        "table",
        { class: "table runs-table" },
        el("caption", { class: "sr-only" }, `Recent runs of ${target.id}`),
        tableHead("Run", "Kind", "Session before", "Session after", ["Recorded", "col-date"]),
        el(
          "tbody",
          {},
          runs.length
            ? runs.map((run) =>
                el(
                  "tr",
                  { dataset: { runId: run.runId } },
                  el(
                    "td",
                    {},
                    el("code", {}, run.runId),
                    run.renderTime
                      ? el(
                          "div",
                          {},
                          el(
                            "button",
                            {
                              type: "button",
                              class: "button small run-open",
                              "aria-label": `Prompt of run ${run.runId}`,
                              "aria-controls": "run-prompt",
                              "aria-expanded": String(opened?.runId === run.runId),
                              onclick: () => openRun(run),
                            },
                            "Prompt",
                          ),
                        )
                      : null,
                  ),
                  el("td", {}, RUN_KINDS[run.kind] || "scheduled"),
                  el("td", {}, session(run.sessionIdBefore)),
                  el(
                    "td",
                    {},
                    session(run.sessionIdAfter),
                    run.sessionIdAfter && !run.carried
                      ? el("div", { class: "muted small" }, "not carried: active memory was off")
                      : null,
                  ),
                  el("td", { class: "col-date" }, timeEl(run.recordedAt)),
                ),
              )
            : el(
                "tr",
                { class: "empty-row" },
                el("td", { colspan: 5 }, "No run recorded yet."),
              ),
        ),
      ),
    );
  }

  // -- a run's prompt, then and now ------------------------------------------------------------

  function runHead(run) {
    return el(
      "div",
      { class: "run-prompt-head" },
      el(
        "div",
        {},
        el("h4", { id: "run-prompt-heading", tabindex: -1 }, "Run ", el("code", {}, run.runId)),
        el(
          "p",
          { class: "muted small" },
          "Its prompt as rendered ",
          timeEl(run.renderTime),
          ", and what has changed in it since. Both are rendered without a user message.",
        ),
      ),
      el("button", { type: "button", class: "button subtle", onclick: closeRun }, "Close"),
    );
  }

  function setExpanded() {
    for (const button of runList.querySelectorAll(".run-open")) {
      const row = button.closest("tr");
      button.setAttribute("aria-expanded", String(opened?.runId === row.dataset.runId));
    }
  }

  function closeRun() {
    const was = opened;
    opened = null;
    runPrompt.hidden = true;
    runPrompt.replaceChildren();
    setExpanded();
    if (was) {
      const row = [...runList.querySelectorAll("tr")].find((r) => r.dataset.runId === was.runId);
      row?.querySelector(".run-open")?.focus();
    }
  }

  /** The run's prompt as rendered then, and a line diff of it against the prompt now. */
  async function openRun(run) {
    const moving = opened?.runId !== run.runId;
    opened = run;
    setExpanded();
    runPrompt.hidden = false;
    // The head stays while the body fills in, so the focus on it does too.
    const body = el("div", { "aria-live": "polite" }, el("p", { class: "muted" }, "Rendering…"));
    fill(runPrompt, runHead(run), body);
    if (moving) runPrompt.querySelector("#run-prompt-heading").focus();
    let then;
    let now;
    try {
      [then, now] = await Promise.all([
        api.renderPrompt(target.id, "", { asOfTime: run.renderTime, countTokens: false }),
        api.renderPrompt(target.id, "", { countTokens: false }),
      ]);
    } catch (error) {
      if (ctx.current() && opened === run) {
        fill(body, el("div", { class: "form-error" }, ...ctx.describeError(error)));
      }
      return;
    }
    if (!ctx.current() || opened !== run) return;
    const past = then.systemPrompt || "";
    const changes = lineDiff(past, now.systemPrompt || "").filter(([kind]) => kind !== "same");
    const count = (kind) => changes.filter(([k]) => k === kind).length;
    const lines = (n) => `${n} ${n === 1 ? "line" : "lines"}`;
    fill(
      body,
      el("h5", {}, "The prompt then"),
      past
        ? el("pre", { class: "prompt-text", tabindex: 0, "data-testid": "prompt-then" }, past)
        : el("p", { class: "muted" }, "It was empty: memory was off for this agent, or held nothing."),
      el("h5", {}, "What changed since"),
      changes.length
        ? [
            el(
              "p",
              { class: "muted small" },
              `${lines(count("removed"))} gone (-), ${lines(count("added"))} new (+) in the prompt now.`,
            ),
            el(
              "pre",
              { class: "block-content diff", tabindex: 0, "data-testid": "prompt-changes" },
              // The mark stands apart from the line, which may start with a "- " of its own.
              ...changes.map(([kind, line]) =>
                el(
                  "span",
                  { class: `diff-${kind}` },
                  el("span", { class: "diff-mark" }, kind === "added" ? "+" : "-"),
                  ` ${line}\n`,
                ),
              ),
            ),
          ]
        : el("p", { class: "muted", "data-testid": "prompt-changes" }, "Nothing: the prompt now is the same."),
    );
  }

  // -- active session ---------------------------------------------------------------------

  async function loadSession() {
    try {
      const answer = await api.activeSession(target.id);
      if (ctx.current()) renderSession(answer.session || {});
    } catch (error) {
      if (ctx.current()) ctx.fail("Loading the active session", error);
    }
  }

  function fact(label, value, attributes = {}) {
    return el("div", { class: "fact", ...attributes }, el("dt", {}, label), el("dd", {}, value));
  }

  function renderSession(session) {
    const status = STATUS[session.status] || STATUS.ACTIVE_SESSION_STATUS_FRESH;
    const runs = session.runsSinceReset || 0;
    const threshold = session.warningThreshold || 0;
    const warning = session.warning
      ? el(
          "div",
          { class: "notice warning inline", role: "note" },
          icon("warning"),
          el(
            "span",
            {},
            el("strong", {}, `${runs} runs since the last reset`),
            ` — past the limit of ${threshold}. The session keeps growing and runs slow down; a reset starts the next run clean.`,
          ),
        )
      : null;
    fill(
      sessionCard,
      el(
        "div",
        { class: "session-head" },
        el(
          "h3",
          { id: "session-heading" },
          "Active session ",
          el(
            "span",
            { class: `status-pill ${status.tone}`, "data-testid": "session-status" },
            status.text,
          ),
        ),
        canWrite
          ? el(
              "button",
              { type: "button", class: "button danger", onclick: onReset },
              icon("reset"),
              "Reset session",
            )
          : null,
      ),
      warning,
      el(
        "dl",
        { class: "facts" },
        fact(
          "Runs since reset",
          el("span", { class: "big-number", "data-testid": "runs-since-reset" }, String(runs)),
          {},
        ),
        fact("Warning after", threshold ? `${threshold} runs` : "—"),
        fact("Active memory", session.enabled ? "On" : "Off"),
        fact("Session age", formatDuration(session.sessionAge)),
        fact("Last reset", timeEl(session.lastResetAt)),
        fact(
          "Session id",
          session.sessionId
            ? el("code", {}, session.sessionId)
            : el("span", { class: "muted" }, "none"),
        ),
      ),
      session.enabled
        ? null
        : el(
            "p",
            { class: "muted small" },
            "Active memory is off for this agent: each run starts clean and nothing is carried over.",
          ),
    );
  }

  async function onReset() {
    const confirmed = await ctx.confirm({
      title: "Reset the active session?",
      body: [
        "The next run of ",
        el("code", {}, target.id),
        " starts a new model session without the context carried so far. Past runs stay recorded.",
      ],
      confirmLabel: "Reset session",
    });
    if (!confirmed) return;
    try {
      const answer = await api.resetActiveSession(target.id);
      ctx.changed();
      renderSession(answer.session || {});
      ctx.notify("Session reset: the next run starts clean.");
    } catch (error) {
      ctx.fail("Resetting the session", error);
    }
  }

  // -- decisions ----------------------------------------------------------------------------

  async function loadDecisions() {
    let decisions;
    try {
      decisions = (await api.recentDecisions(target.id)).decisions || [];
    } catch (error) {
      if (ctx.current()) ctx.fail("Loading decisions", error);
      return;
    }
    if (!ctx.current()) return;
    if (decisions.length === 0) {
      decisionList.replaceChildren(
        el("p", { class: "muted empty-line" }, "No decisions recorded for this agent yet."),
      );
      return;
    }
    const cards = decisions.map((d) => decisionCard(d));
    decisionList.replaceChildren(...cards.map((c) => c.node));
    await Promise.all(cards.map((c) => c.loadReexaminations()));
  }

  function decisionCard(decision) {
    const reexaminationsBox = el("div", { class: "reexaminations" });
    const count = decision.reexaminationCount || 0;
    const node = el(
      "article",
      { class: "card decision-card", dataset: { decisionId: decision.id } },
      el(
        "header",
        { class: "decision-head" },
        el("span", { class: "action-tag" }, decision.action || "—"),
        el(
          "div",
          { class: "decision-title" },
          el("h4", {}, decision.summary || ""),
          el(
            "p",
            { class: "muted small" },
            el("code", {}, decision.cardType || ""),
            " · run ",
            el("code", {}, decision.runId || ""),
          ),
        ),
        el(
          "span",
          {
            class: `status-pill ${decision.resolutionStatus === "RESOLUTION_STATUS_OPEN" ? "info" : "neutral"}`,
          },
          RESOLUTION[decision.resolutionStatus] || "Open",
        ),
      ),
      el(
        "dl",
        { class: "facts compact" },
        fact("Recorded", timeEl(decision.createdAt)),
        fact("Resolved", timeEl(decision.resolvedAt)),
        fact("Re-examinations", String(count)),
        fact(
          "Latest conviction",
          decision.latestConvictionScore === undefined
            ? "—"
            : conviction(decision.latestConvictionScore),
        ),
      ),
      decision.result ? resultDetails(decision.result) : null,
      count ? reexaminationsBox : null,
    );

    async function loadReexaminations() {
      if (!count) return;
      try {
        const answer = await api.reexaminations(decision.id);
        if (!ctx.current()) return;
        const list = answer.reexaminations || [];
        reexaminationsBox.replaceChildren(
          el("h5", {}, `Re-examinations (${list.length})`),
          el(
            "ol",
            { class: "reexamination-list" },
            list.map((r) =>
              el(
                "li",
                {},
                conviction(r.convictionScore || 0),
                el("span", { class: "action-tag small" }, r.suggestedAction || "—"),
                el("p", { class: "notes" }, r.notes || ""),
                el(
                  "span",
                  { class: "muted small" },
                  timeEl(r.createdAt),
                  " · run ",
                  el("code", {}, r.runId || ""),
                ),
              ),
            ),
          ),
        );
      } catch (error) {
        if (ctx.current()) ctx.fail("Loading re-examinations", error);
      }
    }

    return { node, loadReexaminations };
  }

  /** A conviction score, 0 to 100, as a number with a small meter. */
  function conviction(score) {
    const tone = score >= 67 ? "high" : score >= 34 ? "mid" : "low";
    return el(
      "span",
      { class: `conviction ${tone}`, title: `Conviction ${score} of 100` },
      el("meter", {
        min: 0,
        max: 100,
        low: 34,
        high: 67,
        optimum: 100,
        value: score,
        "aria-label": "Conviction",
      }),
      el("span", { class: "conviction-score" }, `${score}`),
    );
  }

  function resultDetails(result) {
    const rows = Object.entries(result).map(([name, value]) =>
      el(
        "div",
        { class: "fact" },
        el("dt", {}, name),
        el("dd", {}, typeof value === "object" ? JSON.stringify(value) : String(value)),
      ),
    );
    return el(
      "details",
      { class: "result" },
      el("summary", {}, "Result"),
      el("dl", { class: "facts compact" }, rows),
    );
  }
}
