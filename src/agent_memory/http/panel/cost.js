// The Extraction cost tab: what automatic extraction cost, per synthetic
// session id, as a table and a chart of every pass over time.

import { el, formatCount, formatDate, formatUsd, svg, timeEl } from "./dom.js";

const PREFIX = "memory-extract:";
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
  let records = [];
  let onlyAgent = target.kind === "agent";

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

  container.replaceChildren(
    el(
      "div",
      { class: "view-head" },
      el(
        "div",
        {},
        el("h2", {}, "Extraction cost"),
        el(
          "p",
          { class: "muted" },
          "What automatic extraction spent on the model, by synthetic session id.",
        ),
      ),
      el(
        "div",
        { class: "head-actions" },
        filter,
        el("button", { type: "button", class: "button subtle", onclick: load }, "Refresh"),
      ),
    ),
    summary,
    chartBox,
    el("h3", { class: "section-title" }, "By synthetic session id"),
    tableBox,
  );

  load();

  async function load() {
    try {
      const answer = await api.extractionUsage();
      if (!ctx.current()) return;
      records = answer.records || [];
      render();
    } catch (error) {
      if (ctx.current()) ctx.fail("Loading extraction cost", error);
    }
  }

  function render() {
    const shown = onlyAgent ? records.filter((r) => r.agentId === target.id) : records;
    const groups = bySession(shown);
    const colors = new Map(groups.map((g, i) => [g.id, PALETTE[i] || OTHER_COLOR]));
    renderSummary(shown);
    renderChart(shown, groups, colors);
    renderTable(groups, colors);
  }

  function renderSummary(shown) {
    const total = (pick) => shown.reduce((sum, r) => sum + pick(r), 0);
    const item = (label, value) =>
      el("div", { class: "summary-item" }, el("dt", {}, label), el("dd", {}, value));
    summary.replaceChildren(
      item("Total cost", formatUsd(total((r) => r.costUsd || 0))),
      item("Passes", formatCount(shown.length)),
      item("Input tokens", formatCount(total((r) => Number(r.inputTokens || 0)))),
      item("Output tokens", formatCount(total((r) => Number(r.outputTokens || 0)))),
    );
  }

  function renderChart(shown, groups, colors) {
    if (shown.length === 0) {
      chartBox.replaceChildren(
        el("p", { class: "muted empty-line" }, "No extraction has been recorded yet."),
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
            ? ` · the last ${CHART_PASSES} passes`
            : " · each bar is one pass, oldest on the left",
        ),
      ),
      chart,
      legend,
    );
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
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            el("th", { scope: "col" }, "Synthetic session id"),
            el("th", { scope: "col" }, "Agent"),
            el("th", { scope: "col", class: "col-num" }, "Passes"),
            el("th", { scope: "col", class: "col-num" }, "Input tokens"),
            el("th", { scope: "col", class: "col-num" }, "Output tokens"),
            el("th", { scope: "col", class: "col-num" }, "Cost"),
            el("th", { scope: "col", class: "col-date" }, "Last pass"),
          ),
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
              el("td", { class: "col-num" }, formatCount(g.passes)),
              el("td", { class: "col-num" }, formatCount(g.input)),
              el("td", { class: "col-num" }, formatCount(g.output)),
              el("td", { class: "col-num" }, formatUsd(g.cost)),
              el("td", { class: "col-date" }, timeEl(g.last)),
            ),
          ),
        ),
        el(
          "tfoot",
          {},
          el(
            "tr",
            {},
            el("th", { scope: "row", colspan: 2 }, "Total"),
            el("td", { class: "col-num" }, formatCount(total((g) => g.passes))),
            el("td", { class: "col-num" }, formatCount(total((g) => g.input))),
            el("td", { class: "col-num" }, formatCount(total((g) => g.output))),
            el("td", { class: "col-num" }, formatUsd(total((g) => g.cost))),
            el("td", {}),
          ),
        ),
      ),
    );
  }
}
