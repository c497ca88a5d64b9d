// The Extraction cost tab: what automatic extraction cost over a chosen period,
// per synthetic session id, as a table and a chart of every pass over time.
//
// GetUsage answers at most USAGE_RECORD_LIMIT records, oldest first, with totals
// over every record of the period, returned or not. It has no agent filter, so
// "Only <agent>" filters the returned records here and counts the totals from
// them; the view says which passes its totals cover, and when the period held
// more passes than were returned.

import { USAGE_RECORD_LIMIT } from "./api.js";
import {
  el,
  formatCount,
  formatDate,
  formatUsd,
  icon,
  refreshButton,
  svg,
  tableHead,
  timeEl,
  viewHead,
} from "./dom.js";

const HOUR = 3600 * 1000;
const PERIODS = [
  { id: "24h", label: "Last 24 hours", phrase: "the last 24 hours", span: 24 * HOUR },
  { id: "7d", label: "Last 7 days", phrase: "the last 7 days", span: 7 * 24 * HOUR },
  { id: "30d", label: "Last 30 days", phrase: "the last 30 days", span: 30 * 24 * HOUR },
];
const DEFAULT_PERIOD = "7d";
const PALETTE = ["#3b5bdb", "#0c8599", "#e8590c", "#9c36b5", "#2b8a3e", "#c2255c"];
const OTHER_COLOR = "#adb5bd";
const CHART_PASSES = 60;

const OUTCOMES = {
  EXTRACTION_OUTCOME_COMPLETED: "completed",
  EXTRACTION_OUTCOME_NO_FACTS: "no facts",
  EXTRACTION_OUTCOME_MODEL_ERROR: "model error",
  EXTRACTION_OUTCOME_TIMEOUT: "timeout",
  EXTRACTION_OUTCOME_REFUSED: "refused",
  EXTRACTION_OUTCOME_MALFORMED_REPLY: "malformed reply",
};

/** Records grouped by synthetic session id, most expensive first. */
function bySession(records) {
  const groups = new Map();
  for (const record of records) {
    const id = record.syntheticSessionId || "";
    let group = groups.get(id);
    if (!group) {
      group = {
        id,
        agents: new Set(),
        passes: 0,
        input: 0,
        output: 0,
        cost: 0,
        first: "",
        last: "",
      };
      groups.set(id, group);
    }
    group.passes += 1;
    group.input += Number(record.inputTokens || 0);
    group.output += Number(record.outputTokens || 0);
    group.cost += record.costUsd || 0;
    if (record.agentId) group.agents.add(record.agentId);
    if (!group.first || record.recordedAt < group.first) group.first = record.recordedAt;
    if (!group.last || record.recordedAt > group.last) group.last = record.recordedAt;
  }
  return [...groups.values()].sort((a, b) => b.cost - a.cost || (a.id < b.id ? -1 : 1));
}

/** A colour key; an SVG fill, since the page's policy allows no inline styles. */
function swatch(color) {
  return svg(
    "svg",
    { class: "swatch", viewBox: "0 0 10 10", width: 10, height: 10, "aria-hidden": "true" },
    svg("rect", { width: 10, height: 10, rx: 2, fill: color }),
  );
}

/** A round step for about `count` gridlines up to `max`. */
function niceStep(max, count = 4) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  return step || raw;
}

export function mount(container, ctx) {
  const { api, target } = ctx;
  let period = PERIODS.find((p) => p.id === DEFAULT_PERIOD);
  // The last answer, and the period it is for (the choice may have moved on since).
  let report = null;
  let onlyAgent = target.kind === "agent";
  let asked = 0; // bumped by every request, so an overtaken answer is dropped

  const summary = el("dl", { class: "summary" });
  const chartBox = el("figure", { class: "card chart-card" });
  const tableBox = el("div", { class: "table-wrap" });
  const filter =
    target.kind === "agent"
      ? el(
          "label",
          { class: "check" },
          el("input", {
            type: "checkbox",
            checked: true,
            onchange: (event) => {
              onlyAgent = event.target.checked;
              render();
            },
          }),
          el("span", {}, "Only ", el("code", {}, target.id)),
        )
      : null;
  const periodSelect = el(
    "select",
    {
      "aria-label": "Period",
      onchange: (event) => {
        period = PERIODS.find((p) => p.id === event.target.value) || period;
        load();
      },
    },
    PERIODS.map((p) => el("option", { value: p.id, selected: p === period }, p.label)),
  );
  const scope = el("p", { class: "muted small summary-scope", "data-testid": "cost-scope" });
  const limitNote = el("div", {
    class: "notice warning inline limit-note",
    role: "note",
    hidden: true,
  });

  container.replaceChildren(
    viewHead(
      "Extraction cost",
      "What automatic extraction spent on the model, by synthetic session id.",
      el("div", { class: "head-actions" }, filter, periodSelect, refreshButton(load)),
    ),
    summary,
    scope,
    limitNote,
    chartBox,
    el("h3", { class: "section-title" }, "By synthetic session id"),
    tableBox,
  );

  load();

  async function load() {
    const mine = ++asked;
    const asking = period;
    try {
      const answer = await api.extractionUsage(new Date(Date.now() - asking.span));
      if (!ctx.current() || mine !== asked) return;
      const records = answer.records || [];
      report = {
        period: asking,
        records,
        // The service stops at its limit: a full answer may leave later passes out.
        full: records.length >= USAGE_RECORD_LIMIT,
        input: Number(answer.totalInputTokens || 0),
        output: Number(answer.totalOutputTokens || 0),
        cost: answer.totalCostUsd || 0,
      };
      render();
    } catch (error) {
      if (ctx.current() && mine === asked) ctx.fail("Loading extraction cost", error);
    }
  }

  function render() {
    if (!report) return;
    const { records } = report;
    const shown = onlyAgent ? records.filter((r) => r.agentId === target.id) : records;
    const groups = bySession(shown);
    const colors = new Map(groups.map((g, i) => [g.id, PALETTE[i] || OTHER_COLOR]));
    renderSummary(shown);
    renderLimitNote();
    renderChart(shown, groups, colors);
    renderTable(groups, colors);
  }

  /** The passes the view covers, in words: "coder's passes in the last 7 days". */
  function passesPhrase() {
    const whose = onlyAgent ? `${target.id}'s passes` : "the passes of every agent";
    return `${whose} in ${report.period.phrase}`;
  }

  function renderSummary(shown) {
    const { full, records } = report;
    const item = (label, value) =>
      el("div", { class: "summary-item" }, el("dt", {}, label), el("dd", {}, value));
    let totals;
    if (onlyAgent) {
      // No agent filter on the server: count the passes shown, and say so.
      const total = (pick) => shown.reduce((sum, r) => sum + pick(r), 0);
      totals = {
        cost: total((r) => r.costUsd || 0),
        passes: formatCount(shown.length),
        input: total((r) => Number(r.inputTokens || 0)),
        output: total((r) => Number(r.outputTokens || 0)),
      };
      scope.textContent = full
        ? `Totals over the passes shown: ${target.id}'s among the oldest ` +
          `${formatCount(records.length)} of ${report.period.phrase}. ` +
          `Later passes of ${target.id} are not counted.`
        : `Totals over the passes shown: ${passesPhrase()}.`;
    } else {
      // The server's totals: every pass of the period, listed or not.
      totals = {
        cost: report.cost,
        passes: full ? `\u2265 ${formatCount(records.length)}` : formatCount(records.length),
        input: report.input,
        output: report.output,
      };
      scope.textContent = full
        ? `Totals over every pass of ${report.period.phrase}, of every agent, ` +
          `listed below or not.`
        : `Totals over ${passesPhrase()}.`;
    }
    summary.replaceChildren(
      item("Total cost", formatUsd(totals.cost)),
      item("Passes", totals.passes),
      item("Input tokens", formatCount(totals.input)),
      item("Output tokens", formatCount(totals.output)),
    );
  }

  /** When the answer holds as many records as the service returns, say what is left out. */
  function renderLimitNote() {
    const { full, records } = report;
    limitNote.hidden = !full;
    if (!full) {
      limitNote.replaceChildren();
      return;
    }
    const count = formatCount(records.length);
    const last = records[records.length - 1].recordedAt;
    const shorter = PERIODS.filter((p) => p.span < report.period.span).pop();
    limitNote.replaceChildren(
      icon("warning"),
      el(
        "div",
        { class: "notice-body" },
        el("strong", {}, `Only the oldest ${count} passes of ${report.period.phrase} are shown.`),
        ` The service returns at most ${count}, oldest first, so passes after `,
        timeEl(last),
        " are left out of the chart and the table. ",
        shorter
          ? `Choose a shorter period, such as ${shorter.label.toLowerCase()}, to see the latest.`
          : "This is the shortest period offered; the latest passes are not shown.",
      ),
    );
  }

  function renderChart(shown, groups, colors) {
    if (shown.length === 0) {
      const among = report.full ? ` among the oldest ${formatCount(report.records.length)}` : "";
      const whose = onlyAgent ? ` of ${target.id}` : "";
      chartBox.replaceChildren(
        el(
          "p",
          { class: "muted empty-line" },
          `No extraction pass${whose}${among} in ${report.period.phrase}.`,
        ),
      );
      return;
    }
    const passes = shown.slice(-CHART_PASSES);
    const width = 960;
    const height = 190;
    const pad = { top: 12, right: 12, bottom: 28, left: 56 };
    const plotW = width - pad.left - pad.right;
    const plotH = height - pad.top - pad.bottom;
    const maxCost = Math.max(...passes.map((r) => r.costUsd || 0)) || 0.01;
    const step = niceStep(maxCost);
    const top = Math.ceil(maxCost / step) * step;
    const y = (value) => pad.top + plotH - (value / top) * plotH;
    const slot = plotW / passes.length;
    const barW = Math.max(2, Math.min(28, slot * 0.7));

    const grid = [];
    for (let value = 0; value <= top + step / 2; value += step) {
      grid.push(
        svg("line", {
          x1: pad.left,
          x2: width - pad.right,
          y1: y(value),
          y2: y(value),
          class: "grid",
        }),
        svg(
          "text",
          { x: pad.left - 8, y: y(value) + 4, "text-anchor": "end", class: "axis" },
          formatUsd(value),
        ),
      );
    }
    const bars = passes.map((record, i) => {
      const x = pad.left + slot * i + (slot - barW) / 2;
      const value = record.costUsd || 0;
      const outcome = OUTCOMES[record.outcome] ? ` · ${OUTCOMES[record.outcome]}` : "";
      const title =
        `${record.syntheticSessionId} · ${formatDate(record.recordedAt)} · ${formatUsd(value)}` +
        ` · ${formatCount(record.inputTokens)} in / ${formatCount(record.outputTokens)} out${outcome}`;
      return svg(
        "rect",
        {
          x,
          y: y(value),
          width: barW,
          height: Math.max(1, y(0) - y(value)),
          rx: 2,
          fill: colors.get(record.syntheticSessionId) || OTHER_COLOR,
        },
        svg("title", {}, title),
      );
    });
    // Dates under the first, middle and last pass.
    const ticks = [...new Set([0, Math.floor((passes.length - 1) / 2), passes.length - 1])].map(
      (i) => {
        const anchor =
          passes.length === 1
            ? "middle"
            : i === 0
              ? "start"
              : i === passes.length - 1
                ? "end"
                : "middle";
        const x =
          anchor === "start"
            ? pad.left
            : anchor === "end"
              ? width - pad.right
              : pad.left + slot * (i + 0.5);
        return svg(
          "text",
          { x, y: height - 8, "text-anchor": anchor, class: "axis" },
          formatDate(passes[i].recordedAt),
        );
      },
    );
    const total = passes.reduce((sum, r) => sum + (r.costUsd || 0), 0);
    const chart = svg(
      "svg",
      {
        viewBox: `0 0 ${width} ${height}`,
        class: "chart",
        role: "img",
        "aria-label": `Cost of the last ${passes.length} extraction passes over time, ${formatUsd(total)} in all`,
      },
      grid,
      svg("line", { x1: pad.left, x2: width - pad.right, y1: y(0), y2: y(0), class: "baseline" }),
      bars,
      ticks,
    );
    const legend = el(
      "ul",
      { class: "legend" },
      groups
        .slice(0, PALETTE.length)
        .map((g) => el("li", {}, swatch(colors.get(g.id)), el("code", {}, g.id))),
      groups.length > PALETTE.length ? el("li", {}, swatch(OTHER_COLOR), "other sessions") : null,
    );
    chartBox.replaceChildren(
      el(
        "figcaption",
        {},
        el("strong", {}, "Cost per pass"),
        el(
          "span",
          { class: "muted small" },
          shown.length > CHART_PASSES
            ? ` · the last ${CHART_PASSES} passes ${report.full ? "listed" : "of the period"}`
            : " · each bar is one pass, oldest on the left",
        ),
      ),
      chart,
      legend,
    );
  }

  /** A figure's cell; its column's name goes with it where the table is a card list. */
  function figure(label, value) {
    return el("td", { class: "col-num", "data-label": label }, value);
  }

  function renderTable(groups, colors) {
    if (groups.length === 0) {
      tableBox.replaceChildren();
      return;
    }
    const total = (pick) => groups.reduce((sum, g) => sum + pick(g), 0);
    tableBox.replaceChildren(
      el(
        "table",
        { class: "table cost-table" },
        tableHead(
          "Synthetic session id",
          "Agent",
          ["Passes", "col-num"],
          ["Input tokens", "col-num"],
          ["Output tokens", "col-num"],
          ["Cost", "col-num"],
          ["Last pass", "col-date"],
        ),
        el(
          "tbody",
          {},
          groups.map((g) =>
            el(
              "tr",
              {},
              el("td", {}, swatch(colors.get(g.id)), el("code", {}, g.id)),
              el(
                "td",
                {},
                [...g.agents].map((a) => el("code", { class: "agent" }, a)),
              ),
              figure("Passes", formatCount(g.passes)),
              figure("Input tokens", formatCount(g.input)),
              figure("Output tokens", formatCount(g.output)),
              figure("Cost", formatUsd(g.cost)),
              el("td", { class: "col-date", "data-label": "Last pass" }, timeEl(g.last)),
            ),
          ),
        ),
        el(
          "tfoot",
          {},
          el(
            "tr",
            {},
            el(
              "th",
              { scope: "row", colspan: 2 },
              report.full ? "Total of the passes listed" : "Total",
            ),
            figure("Passes", formatCount(total((g) => g.passes))),
            figure("Input tokens", formatCount(total((g) => g.input))),
            figure("Output tokens", formatCount(total((g) => g.output))),
            figure("Cost", formatUsd(total((g) => g.cost))),
            el("td", {}),
          ),
        ),
      ),
    );
  }
}
