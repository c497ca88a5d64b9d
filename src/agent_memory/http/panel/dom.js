// Small DOM and formatting helpers shared by the panel's views.
//
// Text always goes in through text nodes, never through innerHTML, so a
// memory's value can hold any characters.

/**
 * Make an element: el("button", { class: "x", onclick: fn }, "Label").
 * Attributes whose value is false, null or undefined are left out; `true`
 * sets a boolean attribute; names starting with "on" add event listeners.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else if (name === "value") {
      // The default value, so that resetting a form brings it back.
      if ("defaultValue" in node) node.defaultValue = value;
      else node.setAttribute("value", String(value));
    } else if (name === "checked") {
      node.defaultChecked = value;
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** Replace a node's children, leaving out null, undefined and false ones. */
export function fill(node, ...children) {
  node.replaceChildren(
    ...children.flat().filter((c) => c !== null && c !== undefined && c !== false),
  );
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element, attributes set verbatim. */
export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  node.append(...children.flat().filter(Boolean));
  return node;
}

/** Inline icons (24×24 strokes), so the page needs no font or image requests. */
const ICON_PATHS = {
  pin: "M9 4h6l-1 6 3 3v2H7v-2l3-3-1-6Zm3 11v5",
  edit: "M4 20h4L19 9l-4-4L4 16v4Zm9-13 4 4",
  trash: "M4 7h16M9 7V4h6v3m-8 0 1 13h8l1-13",
  warning: "M12 3 2 20h20L12 3Zm0 6v5m0 3v.5",
  reset: "M4 12a8 8 0 1 0 2.3-5.7M4 4v4h4",
  key: "M14 10a4 4 0 1 0-3.5 4L9 16H7v2H5v2H3v-3l6.5-6.5A4 4 0 0 0 14 10Zm1-1h.01",
  logout: "M15 4h4v16h-4M10 8l-4 4 4 4M6 12h10",
  agent:
    "M12 3v3M7 9h10a2 2 0 0 1 2 2v6a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2v-6a2 2 0 0 1 2-2Zm2 5h.01M15 14h.01",
  workspace: "M3 7h18v12H3V7Zm5 0V4h8v3",
};

export function icon(name, label = "") {
  const attributes = {
    viewBox: "0 0 24 24",
    width: 16,
    height: 16,
    fill: "none",
    stroke: "currentColor",
    "stroke-width": 2,
    "stroke-linecap": "round",
    "stroke-linejoin": "round",
    class: "icon",
  };
  if (label) {
    attributes.role = "img";
    attributes["aria-label"] = label;
  } else {
    attributes["aria-hidden"] = "true";
  }
  return svg("svg", attributes, svg("path", { d: ICON_PATHS[name] }));
}

const sameYear = new Intl.DateTimeFormat(undefined, {
  month: "short",
  day: "numeric",
  hour: "numeric",
  minute: "2-digit",
});
const otherYear = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
});

/** "Nov 26, 10:20 AM" this year; "Mar 3, 2024" for another year. */
export function formatDate(timestamp) {
  if (!timestamp) return "—";
  const date = new Date(timestamp);
  const format = date.getFullYear() === new Date().getFullYear() ? sameYear : otherYear;
  return format.format(date);
}

const dayOnly = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });

/** A <time> element showing only the day ("Nov 26"; the year when not this one). */
export function dayEl(timestamp) {
  if (!timestamp) return el("span", { class: "muted" }, "—");
  const date = new Date(timestamp);
  const format = date.getFullYear() === new Date().getFullYear() ? dayOnly : otherYear;
  return el("time", { datetime: timestamp, title: date.toString() }, format.format(date));
}

/** A <time> element for an RFC 3339 timestamp; "—" when there is none. */
export function timeEl(timestamp) {
  if (!timestamp) return el("span", { class: "muted" }, "—");
  const date = new Date(timestamp);
  return el("time", { datetime: timestamp, title: date.toString() }, formatDate(timestamp));
}

/** "3d 4h", "12m", from a proto Duration string such as "273.5s". */
export function formatDuration(duration) {
  if (!duration) return "—";
  let seconds = Math.floor(parseFloat(duration));
  const units = [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
  ];
  const parts = [];
  for (const [unit, size] of units) {
    if (seconds >= size) {
      parts.push(`${Math.floor(seconds / size)}${unit}`);
      seconds %= size;
    }
    if (parts.length === 2) break;
  }
  if (parts.length === 0) parts.push(`${seconds}s`);
  return parts.join(" ");
}

const usd = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const integer = new Intl.NumberFormat("en-US");

export function formatUsd(amount) {
  return usd.format(amount || 0);
}

/** int64 fields arrive as strings; absent means 0. */
export function formatCount(value) {
  return integer.format(Number(value || 0));
}

/**
 * The head of a view: its title and a line on what it shows, then its controls
 * (usually a "Refresh" button) on the right.
 */
export function viewHead(title, description, ...controls) {
  return el(
    "div",
    { class: "view-head" },
    el("div", {}, el("h2", {}, title), el("p", { class: "muted" }, description)),
    ...controls,
  );
}

/** The button that loads a view again. */
export function refreshButton(onclick) {
  return el("button", { type: "button", class: "button subtle", onclick }, "Refresh");
}

/**
 * A table's <thead>: one row of column headers, each a label (text or a node)
 * or a [label, class] pair.
 */
export function tableHead(...columns) {
  return el(
    "thead",
    {},
    el(
      "tr",
      {},
      columns.map((column) => {
        const [label, className] = Array.isArray(column) ? column : [column, null];
        return el("th", { scope: "col", class: className }, label);
      }),
    ),
  );
}
