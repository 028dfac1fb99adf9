// The retention what-if's picture of time (viz.ChartJSON): bytes on disk
// and readable, and the age of the oldest readable record, along time,
// with rolls, retention checks, deletions and removals marked; the
// what-if's settings solid, the partition's current ones dashed.

import { el, fmtBytes, fmtDuration, fmtNum, fmtTime } from "./util.js";

const W = 900, TOP = 150, AGE = 150, GAP = 34, PAD = { l: 92, r: 24, t: 22, b: 40 };
const H = PAD.t + TOP + GAP + AGE + PAD.b;

// timeTick formats a time for an axis spanning span ms.
function timeTick(span) {
  return (v) => {
    const s = new Date(v).toISOString();
    if (span >= 3 * 86_400_000) return s.slice(5, 10) + " " + s.slice(11, 16);
    if (span >= 120_000) return s.slice(11, 16);
    return s.slice(11, 19);
  };
}

// lifetimeChart returns a figure of charts (the what-if's first); marks
// is {offset, at} to draw "offset N gone by T", or null.
export function lifetimeChart(charts, marks) {
  const fig = el("figure", { class: "lifetime", id: "ret-chart" });
  if (!charts?.length) return fig;
  // The axes are the what-if's: the current settings' curves are drawn
  // over the same span, clipped (they may run far longer).
  const c0 = charts[0];
  const from = c0.from, to = c0.to;
  const span = Math.max(to - from, 1);
  const sx = (t) => PAD.l + ((t - from) / span) * (W - PAD.l - PAD.r);
  const maxBytes = Math.max(1, ...charts.flatMap((c) => c.bytes.filter((p) => p[0] <= to).map((p) => p[1])));
  const maxAge = Math.max(1, c0.maxAge, c0.bound > 0 ? c0.bound : 0) * 1.05;
  const yb = (b) => PAD.t + TOP - (b / maxBytes) * TOP;
  const ageTop = PAD.t + TOP + GAP;
  const ya = (a) => ageTop + AGE - (a / maxAge) * AGE;
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "lifetime-svg", role: "img",
    "aria-label": `Bytes on disk and the age of the oldest readable record from ${fmtTime(from)} to ${fmtTime(to)}; records stay readable up to ${fmtDuration(c0.maxAge)}` });
  const g = (cls) => el("g", { class: cls });
  const axes = g("axes");
  const tick = timeTick(span);
  for (const [y0, y1] of [[PAD.t, PAD.t + TOP], [ageTop, ageTop + AGE]]) {
    axes.append(el("line", { x1: PAD.l, y1, x2: W - PAD.r, y2: y1 }), el("line", { x1: PAD.l, y1: y0, x2: PAD.l, y2: y1 }));
  }
  for (let i = 0; i <= 4; i++) {
    const t = from + (span * i) / 4;
    axes.append(el("text", { x: sx(t), y: ageTop + AGE + 16, "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle", class: "tick-x" }, tick(t)));
  }
  for (let i = 0; i <= 2; i++) {
    axes.append(el("text", { x: PAD.l - 6, y: yb((maxBytes * i) / 2) + 4, "text-anchor": "end" }, fmtBytes(Math.round((maxBytes * i) / 2))));
    axes.append(el("text", { x: PAD.l - 6, y: ya((maxAge * i) / 2) + 4, "text-anchor": "end" }, fmtDuration(Math.round((maxAge * i) / 2))));
  }
  const rot = (y, text, cls) => el("text", { x: 12, y, "text-anchor": "middle", class: `axis-name ${cls}`, transform: `rotate(-90 12 ${y})` }, text);
  axes.append(rot(PAD.t + TOP / 2, "bytes", "axis-bytes"), rot(ageTop + AGE / 2, "oldest readable", "axis-age"));
  axes.append(el("text", { x: (PAD.l + W - PAD.r) / 2, y: H - 4, "text-anchor": "middle", class: "axis-name axis-x" },
    `time (UTC${span < 3 * 86_400_000 ? ", " + new Date(from).toISOString().slice(0, 10) : ""})`));
  svg.append(axes);

  // Checks: ticks along the bottom of each panel; rolls: ▲ on the top one.
  const ev = g("events");
  for (const t of c0.checks) {
    ev.append(el("line", { class: "check", x1: sx(t), y1: PAD.t + TOP, x2: sx(t), y2: PAD.t + TOP - 6 }),
      el("line", { class: "check", x1: sx(t), y1: ageTop + AGE, x2: sx(t), y2: ageTop + AGE - 6 }));
  }
  for (const r of c0.rolls) ev.append(el("text", { class: "roll", x: sx(r.at), y: PAD.t - 6, "text-anchor": "middle" }, "▲", el("title", null, `${fmtTime(r.at, true)}: segment ${fmtNum(r.baseOffset)} begins (the one before rolled)`)));
  svg.append(ev);

  // The bound: segment.ms + retention.ms + check interval.
  if (c0.bound > 0) {
    svg.append(el("line", { class: "bound", x1: PAD.l, y1: ya(c0.bound), x2: W - PAD.r, y2: ya(c0.bound) }),
      el("text", { class: "bound-label", x: W - PAD.r - 4, y: ya(c0.bound) - 5, "text-anchor": "end" },
        `segment.ms + retention.ms + check interval = ${fmtDuration(c0.bound)}`));
  }
  // Each panel clips its own series: a curve running past one panel must
  // not show in the other.
  const clipId = `lt-clip-${Math.random().toString(36).slice(2)}`;
  svg.append(el("defs", null,
    el("clipPath", { id: clipId + "-b" }, el("rect", { x: PAD.l, y: PAD.t - 2, width: W - PAD.l - PAD.r, height: TOP + 2 })),
    el("clipPath", { id: clipId + "-a" }, el("rect", { x: PAD.l, y: ageTop - 2, width: W - PAD.l - PAD.r, height: AGE + 2 }))));
  const series = el("g", { "clip-path": `url(#${clipId}-b)` }), ageSeries = el("g", { "clip-path": `url(#${clipId}-a)` });
  svg.append(series, ageSeries);
  const path = (pts, y) => pts.map(([t, v], i) => `${i ? "L" : "M"}${sx(t).toFixed(1)} ${y(v).toFixed(1)}`).join("");
  charts.forEach((c, i) => {
    const cls = i === 0 ? "whatif" : "current";
    series.append(el("path", { class: `series bytes ${cls}`, d: path(c.bytes, yb) }, el("title", null, `${c.label}: bytes on disk`)));
    series.append(el("path", { class: `series readable ${cls}`, d: path(c.readable, yb) }, el("title", null, `${c.label}: bytes readable`)));
    // The age: one run per stretch while something is readable.
    let d = "", pen = false;
    for (const [t, a] of c.oldestAge) {
      if (a < 0) { pen = false; continue; }
      d += `${pen ? "L" : "M"}${sx(t).toFixed(1)} ${ya(a).toFixed(1)}`;
      pen = true;
    }
    ageSeries.append(el("path", { class: `series age ${cls}`, d }, el("title", null, `${c.label}: age of the oldest readable record`)));
  });
  const dels = g("deletions");
  for (const m of c0.deletions) {
    dels.append(el("text", { class: "deletion", x: sx(m.at), y: PAD.t + TOP + 14, "text-anchor": "middle", dataset: { base: m.baseOffset, at: m.at } }, "✂",
      el("title", null, `${fmtTime(m.at, true)}: segment ${fmtNum(m.baseOffset)} deleted (${m.reason || "no rule"})`)));
  }
  svg.append(dels);
  // Now.
  svg.append(el("line", { class: "now", x1: sx(c0.now), y1: PAD.t - 2, x2: sx(c0.now), y2: ageTop + AGE }),
    el("text", { class: "now-label", x: sx(c0.now) + 4, y: PAD.t + 10 }, "now"));
  if (marks && marks.at !== null && marks.at !== undefined) {
    const x = sx(Math.min(Math.max(marks.at, from), to));
    svg.append(el("g", { class: "offset-line", dataset: { offset: marks.offset, at: marks.at } },
      el("line", { x1: x, y1: PAD.t - 2, x2: x, y2: ageTop + AGE }),
      el("text", { x: x + 4, y: ageTop - 8 }, `offset ${fmtNum(marks.offset)} gone by ${fmtTime(marks.at)}`)));
  }
  fig.append(svg);
  fig.dataset.charts = String(charts.length);
  fig.dataset.maxAge = String(c0.maxAge);
  fig.dataset.bound = String(c0.bound);
  fig.dataset.deletions = JSON.stringify(c0.deletions.map((d) => [d.baseOffset, d.at]));
  fig.dataset.checks = String(c0.checks.length);
  const legend = el("ul", { class: "legend lifetime-legend" },
    el("li", null, el("span", { class: "sw sw-bytes" }), " bytes on disk (.deleted files too)"),
    el("li", null, el("span", { class: "sw sw-readable" }), " bytes readable"),
    el("li", null, el("span", { class: "sw sw-age" }), " age of the oldest readable record"),
    charts.length > 1 ? el("li", null, el("span", { class: "sw sw-current" }),
      ` dashed: the partition's current settings (readable up to ${fmtDuration(charts[1].maxAge)}${charts[1].to > to ? `, to ${fmtTime(charts[1].to)}, past this chart` : ""})`) : null,
    el("li", null, "▲ roll · ✂ deletion", c0.checks.length ? " · | retention check" : " · checks: phase unknown (give the broker's start)"));
  fig.append(el("figcaption", null,
    `Records here stay readable up to ${fmtDuration(c0.maxAge)}`,
    c0.bound > 0 ? ` — Kafka's bound is segment.ms + retention.ms + check interval = ${fmtDuration(c0.bound)}` : "",
    c0.label === "simulated traffic"
      ? ". A steady traffic from now, through retention's model of the broker (rolls, checks every log.retention.check.interval.ms from log.initial.task.delay.ms, deletions, removals)."
      : ". The past is rebuilt from the segments' timestamps; after now, no more records are assumed."), legend);
  return fig;
}
