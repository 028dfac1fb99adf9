// Small helpers shared by the views: DOM building and formatting.

// el builds an element: el("div", {class: "x", onclick: f}, child, "text").
// Attributes starting with "on" become listeners; "dataset" and "style"
// objects are assigned (CSSOM, which the page's CSP allows).
export function el(tag, attrs, ...children) {
  const svg = SVG_TAGS.has(tag);
  const e = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(e.dataset, v);
      else if (k === "style") Object.assign(e.style, v);
      else if (k === "class") e.setAttribute("class", v);
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else e.append(c instanceof Node ? c : String(c));
  }
}

const SVG_TAGS = new Set(["svg", "g", "path", "line", "rect", "circle", "text", "title", "polyline", "defs", "pattern", "clipPath", "use"]);

export function clear(e) {
  while (e.firstChild) e.firstChild.remove();
  return e;
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

export function fmtNum(n) {
  if (n === undefined || n === null) return "–";
  return Number(n).toLocaleString("en-US");
}

export function fmtBytes(n) {
  if (n === undefined || n === null || n < 0) return "–";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ${units[i]}`;
}

// fmtTime prints epoch ms as "2026-03-02 09:00:00Z" (UTC), "–" for none.
export function fmtTime(ms, withMs = false) {
  if (ms === undefined || ms === null || ms < 0) return "–";
  const s = new Date(ms).toISOString();
  return s.slice(0, 10) + " " + (withMs ? s.slice(11, 23) : s.slice(11, 19)) + "Z";
}

// fmtISO prints ms as ISO 8601 UTC, "2026-03-02T09:00:00Z" (with .mmm
// when it has milliseconds): what the "now" inputs show and take.
export function fmtISO(ms) {
  const s = new Date(ms).toISOString();
  return s.endsWith(".000Z") ? s.slice(0, 19) + "Z" : s;
}

// parseISO reads an ISO 8601 time; one without a zone is UTC (never the
// browser's local time). NaN when it is not one.
export function parseISO(text) {
  const s = String(text).trim();
  if (!/^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d{1,3})?)?)?(Z|[+-]\d\d:?\d\d)?$/i.test(s)) return NaN;
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(s) || !/[T ]/.test(s) ? s : s + "Z";
  return Date.parse(zoned.replace(" ", "T"));
}

// isoInput is a text input for a time in ISO 8601 UTC that calls
// onTime(ms) when a valid one is entered, and marks an invalid one.
export function isoInput(attrs, onTime) {
  const i = el("input", { type: "text", inputmode: "text", spellcheck: "false", autocomplete: "off", size: "24",
    placeholder: "2026-03-02T09:00:00Z", pattern: "\\d{4}-\\d\\d-\\d\\d.*", title: "ISO 8601, UTC: 2026-03-02T09:00:00Z", ...attrs });
  i.addEventListener("change", () => {
    const t = parseISO(i.value);
    i.setAttribute("aria-invalid", Number.isFinite(t) ? "false" : "true");
    if (Number.isFinite(t)) onTime(t);
  });
  return i;
}

// fmtDuration prints ms as "7 d", "3 h 20 m", "45 s".
export function fmtDuration(ms) {
  if (ms === undefined || ms === null) return "–";
  if (ms < 0) return "disabled";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60), h = Math.floor(m / 60), d = Math.floor(h / 24);
  if (d >= 1) return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
  if (h >= 1) return m % 60 ? `${h} h ${m % 60} m` : `${h} h`;
  return s % 60 ? `${m} m ${s % 60} s` : `${m} m`;
}

export function fmtOffset(n) {
  return fmtNum(n);
}

export const CODECS = ["none", "gzip", "snappy", "lz4", "zstd"];

export function b64bytes(s) {
  if (s === null || s === undefined) return null;
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

// asText returns b as text when it is printable UTF-8, else null.
export function asText(b) {
  if (!b) return null;
  let s;
  try { s = utf8.decode(b); } catch { return null; }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13) || c === 0x7f) return null;
  }
  return s;
}

export function hex(b, max = b.length) {
  let s = "";
  for (let i = 0; i < Math.min(b.length, max); i++) s += (i ? " " : "") + b[i].toString(16).padStart(2, "0");
  if (b.length > max) s += " …";
  return s;
}

export function debounce(f, ms) {
  let t;
  return (...a) => { clearTimeout(t); t = setTimeout(() => f(...a), ms); };
}

// Flags of scanned entries (viz.Flag*).
export const FLAG = { txn: 1, control: 2, logAppendTime: 4, crcInvalid: 8, deleteHorizon: 16, commit: 32, abort: 64, wrapper: 128 };

export function segName(base) {
  return String(base).padStart(20, "0");
}

// Growable typed columns for scan rows.
export class Columns {
  constructor() {
    this.n = 0;
    this.cap = 0;
    this.cols = {};
  }
  static spec = { position: Float64Array, baseOffset: Float64Array, lastOffset: Float64Array, count: Int32Array, maxTimestamp: Float64Array, size: Int32Array, magic: Int8Array, codec: Int8Array, flags: Int32Array };
  push(rows) {
    const m = rows.position.length;
    if (this.n + m > this.cap) {
      const cap = Math.max(1024, this.cap * 2, this.n + m);
      for (const [k, T] of Object.entries(Columns.spec)) {
        const a = new T(cap);
        if (this.cols[k]) a.set(this.cols[k].subarray(0, this.n));
        this.cols[k] = a;
      }
      this.cap = cap;
    }
    for (const k of Object.keys(Columns.spec)) this.cols[k].set(rows[k], this.n);
    this.n += m;
  }
  // rowAt returns the index of the row whose bytes hold position p, or -1.
  rowAt(p) {
    const pos = this.cols.position, size = this.cols.size;
    let lo = 0, hi = this.n - 1, ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (pos[mid] <= p) { ans = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (ans >= 0 && p < pos[ans] + size[ans]) return ans;
    return -1;
  }
  get(i) {
    const c = this.cols;
    return { position: c.position[i], baseOffset: c.baseOffset[i], lastOffset: c.lastOffset[i], count: c.count[i], maxTimestamp: c.maxTimestamp[i], size: c.size[i], magic: c.magic[i], codec: c.codec[i], flags: c.flags[i] };
  }
}
