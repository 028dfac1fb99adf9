// The index plots: offset → position (.index) and timestamp → offset
// (.timeindex) of the selected segment, with the log's own batches behind
// them, order breaks and mismatches against the log marked; and the
// .txnindex as a table.

import { el, clear, fmtNum, fmtTime, fmtBytes } from "./util.js";

const W = 560, H = 300, PAD = { l: 92, r: 16, t: 14, b: 40 };

// extent is the x and y range of points.
function extent(pts) {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const [x, y] of pts) {
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return { x: [x0, x1], y: [y0, y1] };
}

// robustRange is the range of vs without its outliers: from the 1st to
// the 99th percentile, widened to every value within half that span of
// it, so that only values far outside (a timestamp days off among
// seconds) are left out.
function robustRange(vs) {
  const s = Float64Array.from(vs).sort();
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
  const lo = at(0.01), hi = at(0.99), k = Math.max((hi - lo) / 2, 1);
  let a = lo, b = hi;
  for (const v of s) {
    if (v >= lo - k && v < a) a = v;
    if (v <= hi + k && v > b) b = v;
  }
  return [a, b];
}

// timeTicks formats the time axis's ticks for a range of span ms: the
// date and minute for days, the seconds within a day, the milliseconds
// within a minute, so that ticks a few seconds apart read differently.
function timeTicks(span) {
  return (v) => {
    const s = new Date(v).toISOString();
    if (span >= 86_400_000) return s.slice(0, 10) + " " + s.slice(11, 16);
    if (span >= 120_000) return s.slice(11, 19);
    return s.slice(11, 23);
  };
}

export class PlotsView {
  constructor(app, panel) {
    this.app = app;
    this.panel = panel;
    this.seg = null;
    this.loaded = null;
    this.highlighted = null;
    this.panel.append(
      this.title = el("h2", null, "Index plots"),
      el("p", { class: "muted" }, "Each index maps keys to where to start reading. Points are the index entries; the grey line is what the .log holds (each batch's last offset and position, and the largest timestamp so far). ✖ marks an entry that breaks the order or disagrees with the log."),
      this.status = el("p", { class: "status", role: "status", "aria-live": "polite" }),
      this.plots = el("div", { class: "plots" }),
      this.txn = el("div", { class: "txn" }),
    );
  }

  reset() {
    this.loaded = null;
    clear(this.plots);
    clear(this.txn);
  }

  setSegment(seg, scan) {
    this.seg = seg;
    this.scan = scan;
    this.loaded = null;
    if (!this.panel.hidden) this.load();
  }

  show() {
    if (this.seg && this.loaded !== this.key()) this.load();
  }

  key() {
    return `${this.app.dir}|${this.seg.baseOffset}|${this.seg.suffix || ""}`;
  }

  async load() {
    const seg = this.seg, app = this.app;
    const key = this.key();
    this.loaded = key;
    this.title.textContent = `Index plots: segment ${fmtNum(seg.baseOffset)}`;
    clear(this.plots);
    clear(this.txn);
    if (seg.suffix) {
      this.status.textContent = "This segment was deleted: its index files wait as .deleted and are not read.";
      return;
    }
    this.status.textContent = "Reading the indexes…";
    const get = async (kind, check) => {
      const entries = [], problems = [];
      let from = 0, r;
      for (;;) {
        r = await app.call("index", { dir: app.dir, base: seg.baseOffset, kind, from, check: check ? 1 : undefined });
        entries.push(...r.entries);
        problems.push(...r.problems);
        if (r.done || r.next <= from) break;
        from = r.next;
      }
      return { ...r, entries, problems };
    };
    try {
      let [off, time, txn] = await Promise.all([get("offset", false), get("time", false), get("txn", false)]);
      if (this.loaded !== key) return;
      this.draw(off, time, txn, false);
      this.status.textContent = "Checking every entry against the .log…";
      [off, time, txn] = await Promise.all([get("offset", true), get("time", true), get("txn", true)]);
      if (this.loaded !== key) return;
      this.draw(off, time, txn, true);
      const n = off.problems.length + time.problems.length + txn.problems.length;
      const errs = [...off.problems, ...time.problems, ...txn.problems].filter((p) => p.level === "error").length;
      this.status.textContent = `Checked against the .log${off.logError ? " (which stops at corruption: " + off.logError + ")" : ""}: ${errs ? `✖ ${errs} error(s)` : "✓ no error"}${n - errs ? `, ${n - errs} warning(s) or note(s)` : ""}.`;
      this.panel.dataset.checked = "true";
    } catch (e) {
      if (this.loaded === key) this.status.textContent = `✖ ${e.message}`;
    }
  }

  draw(off, time, txn, checked) {
    this.last = [off, time, txn, checked];
    clear(this.plots);
    const cols = this.scan?.cols;
    // The log's series, from the scan (as far as it got).
    const logOff = [], logTime = [];
    if (cols && cols.n) {
      const c = cols.cols;
      const step = Math.max(1, Math.floor(cols.n / 4000));
      let maxTs = -1;
      for (let i = 0; i < cols.n; i++) {
        if (c.maxTimestamp[i] > maxTs) maxTs = c.maxTimestamp[i];
        if (i % step === 0 || i === cols.n - 1) {
          logOff.push([c.lastOffset[i], c.position[i]]);
          if (maxTs >= 0) logTime.push([maxTs, c.lastOffset[i]]);
        }
      }
    }
    this.plots.append(this.plot("offset", off, "offset", "position in .log (bytes)", logOff, () => (v) => fmtNum(v), (v) => fmtBytes(v), checked, (v) => fmtNum(v)));
    this.plots.append(this.plot("time", time, "timestamp (UTC)", "offset", logTime, timeTicks, (v) => fmtNum(v), checked, (v) => fmtTime(v, true)));
    clear(this.txn);
    this.txn.append(el("h3", null, `Aborted transactions (${txn.file})`));
    if (!txn.exists) this.txn.append(el("p", { class: "muted" }, "No .txnindex: no transaction was aborted in this segment."));
    else {
      const t = el("table", { class: "records", id: "txn-table" }, el("thead", null, el("tr", null, ["producer id", "first offset", "last offset (ABORT marker)", "last stable offset"].map((h) => el("th", { scope: "col" }, h)))));
      const tb = el("tbody");
      txn.entries.forEach((e, i) => tb.append(el("tr", { dataset: { entry: i } }, e.map((v) => el("td", null, fmtNum(v))))));
      t.append(tb);
      this.txn.append(t);
      for (const p of txn.problems) this.txn.append(el("p", { class: p.level === "error" ? "error" : "warn" }, `${p.level === "error" ? "✖" : "⚠"} ${p.kind}: ${p.detail}`));
    }
    if (this.highlighted) this.highlight(...this.highlighted);
  }

  plot(kind, idx, xName, yName, log, fxFor, fy, checked, fxRow) {
    const view = (this.views ||= {})[kind] ||= { range: "auto", log: false };
    const box = el("figure", { class: "plot", id: `plot-${kind}`, dataset: { entries: idx.entries.length, problems: idx.problems.length, checked: String(checked) } });
    box.append(el("figcaption", null, `${kind === "offset" ? "Offset index" : "Time index"} ${idx.file}: ${fmtNum(idx.valid)} entries${idx.total > idx.valid ? ` + ${fmtNum(idx.total - idx.valid)} zero-padding entries Kafka would trust` : ""}${idx.exists ? "" : " (no file: built in memory from the log)"}`));
    if (idx.sanity) box.append(el("p", { class: "error" }, `✖ Kafka's sanity check fails: ${idx.sanity}`));
    const pts = idx.entries;
    const all = pts.concat(log);
    if (!all.length) {
      box.append(el("p", { class: "muted" }, "No entries."));
      return box;
    }
    // The range: every point, or (when a few outliers would squash the
    // rest, or when asked) the middle 98 % of them, the others drawn
    // at the edge.
    const full = extent(all), robust = { x: robustRange(all.map((p) => p[0])), y: robustRange(all.map((p) => p[1])) };
    const squashed = (a, b) => a[1] - a[0] > 20 * Math.max(b[1] - b[0], 1);
    const useRobust = view.range === "robust" || (view.range === "auto" && (squashed(full.x, robust.x) || squashed(full.y, robust.y)));
    let [x0, x1] = useRobust ? robust.x : full.x, [y0, y1] = useRobust ? robust.y : full.y;
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) y1 = y0 + 1;
    const logY = view.log && y0 >= 0;
    const ly = (y) => (logY ? Math.log10(1 + Math.max(0, y)) : y);
    const ly0 = ly(y0), ly1 = ly(y1) === ly0 ? ly0 + 1 : ly(y1);
    const clampX = (x) => Math.min(Math.max(x, x0), x1), clampY = (y) => Math.min(Math.max(y, y0), y1);
    const sx = (x) => PAD.l + ((clampX(x) - x0) / (x1 - x0)) * (W - PAD.l - PAD.r);
    const sy = (y) => H - PAD.b - ((ly(clampY(y)) - ly0) / (ly1 - ly0)) * (H - PAD.t - PAD.b);
    const fx = fxFor(x1 - x0);
    // Ticks within a day show no date: the axis says which day.
    if (kind === "time" && x1 - x0 < 86_400_000) xName += `, ${new Date(x0).toISOString().slice(0, 10)}`;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot-svg", role: "img", "aria-label": `${idx.file}: ${pts.length} entries plotted, ${xName} against ${yName}; ${idx.problems.length} problems` });
    const axes = el("g", { class: "axes" });
    axes.append(el("line", { x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b }), el("line", { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b }));
    for (let i = 0; i <= 3; i++) {
      const xv = x0 + ((x1 - x0) * i) / 3;
      const yv = logY ? Math.pow(10, ly0 + ((ly1 - ly0) * i) / 3) - 1 : y0 + ((y1 - y0) * i) / 3;
      axes.append(el("text", { x: sx(xv), y: H - PAD.b + 16, "text-anchor": i === 0 ? "start" : i === 3 ? "end" : "middle", class: "tick-x" }, fx(Math.round(xv))));
      axes.append(el("text", { x: PAD.l - 6, y: sy(yv) + 4, "text-anchor": "end", class: "tick-y" }, fy(Math.round(yv))));
    }
    axes.append(el("text", { x: (PAD.l + W - PAD.r) / 2, y: H - 6, "text-anchor": "middle", class: "axis-name axis-x" }, xName));
    axes.append(el("text", { x: 12, y: (PAD.t + H - PAD.b) / 2, "text-anchor": "middle", class: "axis-name axis-y", transform: `rotate(-90 12 ${(PAD.t + H - PAD.b) / 2})` }, yName + (logY ? " (log scale)" : "")));
    svg.append(axes);
    if (log.length) {
      svg.append(el("path", { class: "log-series", d: log.map(([x, y], i) => `${i ? "L" : "M"}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`).join("") }, el("title", null, "the .log's batches")));
    }
    // Entries: one square per distinct pixel; those outside the range
    // shown as triangles at its edge.
    const seen = new Set();
    let d = "", out = "", outliers = 0;
    for (const [x, y] of pts) {
      const px = Math.round(sx(x)), py = Math.round(sy(y));
      if (x < x0 || x > x1 || y < y0 || y > y1) {
        outliers++;
        out += `M${px} ${py - 4}l4 7h-8z`;
        continue;
      }
      const k = px * 4096 + py;
      if (seen.has(k)) continue;
      seen.add(k);
      d += `M${px - 2} ${py - 2}h4v4h-4z`;
    }
    svg.append(el("path", { class: "entries", d, dataset: { points: seen.size } }, el("title", null, `${pts.length} index entries`)));
    if (outliers) svg.append(el("path", { class: "outliers", d: out }, el("title", null, `${outliers} entries outside the range shown, drawn at its edge`)));
    box.dataset.range = useRobust ? "robust" : "all";
    box.dataset.log = String(logY);
    box.dataset.outliers = String(outliers);
    const redraw = () => this.last && this.draw(...this.last);
    const rangeSel = el("select", { class: "plot-range", "aria-label": "range shown", onchange: (e) => { view.range = e.target.value; redraw(); } },
      [["auto", "range: automatic"], ["all", "range: every entry"], ["robust", "range: the middle 98 % (outliers at the edge)"]].map(([v, t]) => el("option", { value: v, selected: view.range === v }, t)));
    const logBox = el("label", null, el("input", { type: "checkbox", class: "plot-log", checked: view.log, onchange: (e) => { view.log = e.target.checked; redraw(); } }), ` log scale (${yName})`);
    box.append(el("div", { class: "plot-controls" }, rangeSel, " ", logBox,
      useRobust && outliers ? el("span", { class: "muted" }, ` ${fmtNum(outliers)} entr${outliers === 1 ? "y" : "ies"} outside, at the edge (▲)`) : null));
    const marks = el("g", { class: "problems" });
    for (const p of idx.problems) {
      const e = pts[p.entry];
      if (!e) continue;
      const x = sx(e[0]), y = sy(e[1]);
      marks.append(el("g", { class: `problem ${p.level}`, dataset: { entry: p.entry } },
        el("circle", { cx: x, cy: y, r: 7 }),
        el("path", { d: `M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x + 4} ${y - 4}L${x - 4} ${y + 4}` }),
        el("title", null, `entry ${p.entry}: ${p.kind}: ${p.detail}`)));
    }
    svg.append(marks, el("g", { class: "highlight" }));
    box.append(svg);
    box.plotState = { sx, sy, pts, svg };
    if (idx.problems.length) {
      const list = el("ul", { class: "problem-list" });
      for (const p of idx.problems.slice(0, 200)) {
        list.append(el("li", null, el("button", { type: "button", class: p.level, onclick: () => this.highlight(kind === "offset" ? "index" : "timeindex", p.entry) },
          `${p.level === "error" ? "✖" : p.level === "warning" ? "⚠" : "ℹ"} entry ${p.entry} (byte ${p.position}): ${p.kind}`), " ", el("span", { class: "muted" }, p.detail)));
      }
      box.append(list);
    } else if (checked) {
      box.append(el("p", { class: "ok" }, "✓ Every entry is in order and agrees with the log."));
    }
    const det = el("details", null, el("summary", null, `Entries (${fmtNum(pts.length)})`));
    const t = el("table", { class: "records" }, el("thead", null, el("tr", null, ["#", xName, yName].map((h) => el("th", { scope: "col" }, h)))));
    const tb = el("tbody");
    pts.slice(0, 2000).forEach(([x, y], i) => tb.append(el("tr", { dataset: { entry: i } }, el("td", null, i), el("td", null, fxRow(x)), el("td", null, fy(y)))));
    t.append(tb);
    det.append(t);
    if (pts.length > 2000) det.append(el("p", { class: "muted" }, `… the first 2,000 of ${fmtNum(pts.length)}.`));
    box.append(det);
    return box;
  }

  // highlight rings an index entry (a finding's).
  highlight(target, entry) {
    this.highlighted = [target, entry];
    const id = target === "index" ? "plot-offset" : target === "timeindex" ? "plot-time" : null;
    for (const g of this.panel.querySelectorAll(".highlight")) clear(g);
    if (!id) {
      const row = this.panel.querySelector(`#txn-table [data-entry="${entry}"]`);
      row?.classList.add("target");
      row?.scrollIntoView({ block: "center" });
      return;
    }
    const fig = this.panel.querySelector(`#${id}`);
    const st = fig?.plotState;
    if (!st || !st.pts[entry]) return;
    const [x, y] = st.pts[entry];
    fig.querySelector(".highlight").append(el("circle", { cx: st.sx(x), cy: st.sy(y), r: 11, class: "target-ring" }, el("title", null, `entry ${entry}`)));
    fig.dataset.highlight = String(entry);
    fig.scrollIntoView({ block: "center" });
  }
}
