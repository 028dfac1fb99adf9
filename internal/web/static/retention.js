// The retention what-if: retention.ms, retention.bytes, segment.ms and
// "now" controls; what a retention check at now deletes, and until when
// each segment (so each record) stays readable, with the rule and why.

import { el, clear, $, fmtNum, fmtBytes, fmtTime, fmtDuration, fmtISO, isoInput, parseISO, debounce } from "./util.js";
import { lifetimeChart } from "./chart.js";

const MIN = 60_000, HOUR = 60 * MIN, DAY = 24 * HOUR;
const DURATIONS = [MIN, 5 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY, 6 * DAY, 7 * DAY, 10 * DAY, 14 * DAY, 21 * DAY, 30 * DAY, 60 * DAY, 90 * DAY, 180 * DAY, 365 * DAY];
const SIZES = (() => {
  const out = [];
  for (let e = 10; e <= 40; e += 1) out.push(2 ** e);
  return out;
})();

// A preset slider with an exact number input and, optionally, a
// "disabled" (-1) checkbox.
class Setting {
  constructor({ id, label, presets, format, unit, canDisable, onChange }) {
    this.presets = presets;
    this.format = format;
    this.onChange = onChange;
    this.range = el("input", { type: "range", id, min: "0", max: String(presets.length - 1), step: "1", "aria-describedby": `${id}-out` });
    this.number = el("input", { type: "number", id: `${id}-value`, "aria-label": `${label} in ${unit}`, step: "1" });
    this.out = el("output", { id: `${id}-out`, for: id });
    this.disabled = canDisable ? el("input", { type: "checkbox", id: `${id}-off` }) : null;
    this.root = el("div", { class: "setting" },
      el("label", { for: id, class: "setting-name" }, label),
      this.range, this.out,
      el("span", { class: "exact" }, this.number, ` ${unit}`),
      this.disabled ? el("label", { class: "off" }, this.disabled, " disabled (-1)") : null);
    this.range.addEventListener("input", () => this.set(this.presets[Number(this.range.value)], true));
    this.number.addEventListener("change", () => {
      const v = Math.round(Number(this.number.value));
      if (Number.isFinite(v)) this.set(v, true);
    });
    this.disabled?.addEventListener("change", () => this.set(this.disabled.checked ? -1 : this.lastOn || this.presets[Math.floor(this.presets.length / 2)], true));
  }
  set(v, user) {
    this.value = v;
    const off = v < 0;
    if (!off) this.lastOn = v;
    if (this.disabled) this.disabled.checked = off;
    this.range.disabled = off;
    if (!off) {
      let best = 0;
      for (let i = 0; i < this.presets.length; i++) if (Math.abs(Math.log(this.presets[i]) - Math.log(v)) < Math.abs(Math.log(this.presets[best]) - Math.log(v))) best = i;
      this.range.value = String(best);
    }
    this.number.value = String(v);
    this.out.textContent = off ? "disabled" : this.format(v);
    this.range.setAttribute("aria-valuetext", this.out.textContent);
    this.range.dataset.value = String(v);
    if (user) this.onChange();
  }
}

export class RetentionView {
  constructor(app, panel) {
    this.app = app;
    this.panel = panel;
    this.token = 0;
    const run = debounce(() => this.run(), 120);
    this.ms = new Setting({ id: "ret-retention-ms", label: "retention.ms", presets: DURATIONS, format: fmtDuration, unit: "ms", canDisable: true, onChange: run });
    this.bytes = new Setting({ id: "ret-retention-bytes", label: "retention.bytes", presets: SIZES, format: fmtBytes, unit: "bytes", canDisable: true, onChange: run });
    this.segMs = new Setting({ id: "ret-segment-ms", label: "segment.ms", presets: DURATIONS, format: fmtDuration, unit: "ms", canDisable: false, onChange: run });
    this.nowRange = el("input", { type: "range", id: "ret-now", min: String(-30 * 24), max: String(60 * 24), step: "1", value: "0", "aria-describedby": "ret-now-out" });
    this.nowOut = el("output", { id: "ret-now-out", for: "ret-now" });
    this.nowInput = isoInput({ id: "ret-now-value", "aria-label": "now, ISO 8601 UTC" }, (t) => { this.setNow(t); run(); });
    this.nowRange.addEventListener("input", () => { this.setNow(this.base + Number(this.nowRange.value) * HOUR); run(); });
    // The checks' phase: unknown unless the broker's start is given.
    this.startInput = el("input", { type: "text", id: "ret-broker-start", size: "24", spellcheck: "false", autocomplete: "off",
      placeholder: "unknown", "aria-label": "broker started at, ISO 8601 UTC", title: "when the broker started: its checks run log.initial.task.delay.ms later, then every log.retention.check.interval.ms" });
    this.startInput.addEventListener("change", () => {
      const v = this.startInput.value.trim(), t = v === "" ? null : parseISO(v);
      this.startInput.setAttribute("aria-invalid", t === null || Number.isFinite(t) ? "false" : "true");
      if (t === null || Number.isFinite(t)) { this.brokerStart = t; run(); }
    });
    panel.append(
      el("h2", null, "Retention what-if"),
      el("p", { class: "muted" }, "Kafka deletes whole segments, oldest first: a segment goes at the first retention check after its newest record is older than retention.ms (or while the log stays above retention.bytes without it), never before the segments ahead of it. Move the settings to see which segments a check at “now” deletes, and until when each segment's records can be read."),
      el("div", { class: "settings" },
        this.ms.root, this.bytes.root, this.segMs.root,
        el("div", { class: "setting" }, el("label", { for: "ret-now", class: "setting-name" }, "now"), this.nowRange, this.nowOut,
          el("span", { class: "exact" }, this.nowInput),
          el("button", { type: "button", onclick: () => { this.setNow(this.base); run(); } }, "reset"))),
      el("div", { class: "settings" }, el("div", { class: "setting" }, el("label", { for: "ret-broker-start", class: "setting-name" }, "broker started at"), this.startInput,
        el("span", { class: "muted" }, " (ISO 8601 UTC; empty: the checks' phase is unknown, and each time is the latest it can be)"))),
      el("p", null, el("button", { type: "button", onclick: () => { this.reset(); } }, "Reset to the partition's settings")),
      this.summary = el("p", { id: "ret-summary", class: "summary", role: "status", "aria-live": "polite" }),
      this.warnings = el("ul", { class: "warnings", id: "ret-warnings" }),
      this.lookup = el("div", { class: "lookup" }),
      this.chart = el("div", { class: "chart-wrap" }),
      this.simBox = el("details", { class: "simulate", id: "ret-simulate" },
        el("summary", null, "Simulate a steady traffic under these settings (retention.Simulate, as segviz retention --what-if)"),
        el("p", null,
          el("label", { for: "ret-sim-rate" }, "records a second "), this.simRate = el("input", { type: "number", id: "ret-sim-rate", min: "0", step: "any", size: "8" }),
          el("label", { for: "ret-sim-size" }, " · bytes a record "), this.simSize = el("input", { type: "number", id: "ret-sim-size", min: "1", step: "1", size: "7" }),
          " ", el("button", { type: "button", id: "ret-sim-run", onclick: () => this.simulate() }, "Simulate")),
        this.simOut = el("p", { id: "ret-sim-summary", class: "summary", role: "status", "aria-live": "polite" }),
        this.simChart = el("div", { class: "chart-wrap" })),
      this.table = el("div", { class: "records-wrap" }),
    );
    this.offsetInput = el("input", { type: "number", id: "ret-offset", min: "0", inputmode: "numeric" });
    this.offsetOut = el("output", { id: "ret-offset-out", for: "ret-offset" });
    this.offsetInput.addEventListener("input", () => this.lookupOffset());
    this.lookup.append(el("label", { for: "ret-offset" }, "Readable until, for offset "), this.offsetInput, " ", this.offsetOut);
  }

  setNow(t) {
    this.now = t;
    const rel = Math.round((t - this.base) / HOUR);
    this.nowRange.value = String(rel);
    this.nowInput.value = fmtISO(t);
    this.nowInput.setAttribute("aria-invalid", "false");
    this.nowOut.textContent = rel === 0 ? fmtTime(t) : `${fmtTime(t)} (${rel > 0 ? "+" : "−"}${fmtDuration(Math.abs(t - this.base))})`;
    this.nowRange.setAttribute("aria-valuetext", this.nowOut.textContent);
    this.nowRange.dataset.value = String(t);
  }

  // reset takes the partition's settings and now, and plans.
  reset() {
    const p = this.app.part;
    if (!p) return;
    this.base = p.now;
    this.ms.set(p.config["retention.ms"]);
    this.bytes.set(p.config["retention.bytes"]);
    this.segMs.set(p.config["segment.ms"]);
    this.setNow(p.now);
    this.run();
  }

  show() {}

  params() {
    return { dir: this.app.dir, "retention.ms": this.ms.value, "retention.bytes": this.bytes.value, "segment.ms": this.segMs.value, now: this.now,
      brokerStart: this.brokerStart ?? undefined };
  }

  async run() {
    const token = ++this.token;
    const q = this.params();
    this.panel.dataset.busy = "true";
    let r;
    try {
      r = await this.app.call("retention", q);
    } catch (e) {
      if (token === this.token) {
        this.summary.textContent = `✖ ${e.message}`;
        this.panel.dataset.busy = "false";
      }
      return;
    }
    if (token !== this.token) return;
    this.result = r;
    this.render(r);
    this.app.setPlan(r);
    this.panel.dataset.busy = "false";
    this.panel.dataset.query = JSON.stringify({ "retention.ms": q["retention.ms"], "retention.bytes": q["retention.bytes"], "segment.ms": q["segment.ms"], now: q.now });
  }

  render(r) {
    const n = r.deletions.length;
    this.summary.textContent = n
      ? `A retention check at ${fmtTime(r.now)} deletes ${n} segment${n > 1 ? "s" : ""} (${fmtBytes(r.bytesFreed)} of ${fmtBytes(r.bytes)})${r.rollFirst ? ", rolling a new active segment first" : ""}: the log start offset goes from ${fmtNum(r.logStartOffset)} to ${fmtNum(r.newLogStartOffset)}.`
      : `A retention check at ${fmtTime(r.now)} deletes nothing: the log start offset stays ${fmtNum(r.logStartOffset)}.`;
    this.summary.dataset.deletions = r.deletions.map((d) => d.baseOffset).join(",");
    clear(this.warnings);
    for (const w of r.warnings) this.warnings.append(el("li", { class: "warn", dataset: { base: w.baseOffset } }, `⚠ segment ${fmtNum(w.baseOffset)}: ${w.kind}: ${w.detail}`));
    const t = el("table", { class: "records", id: "ret-table" },
      el("caption", null, `The retention check runs ${r.schedule.replace(/^checks /, "")}; deleted files stay on disk for file.delete.delay.ms (${fmtDuration(r.policy["file.delete.delay.ms"])}).`),
      el("thead", null, el("tr", null, ["segment", "offsets", "size", "newest record", "at now", "readable until", "on disk until", "rule", "why"].map((h) => el("th", { scope: "col" }, h)))));
    const tb = el("tbody");
    for (const s of r.segments) {
      tb.append(el("tr", { dataset: { base: s.baseOffset, plan: s.deletedNow ? "delete" : "keep" }, class: s.deletedNow ? "deleting" : "" },
        el("th", { scope: "row" }, fmtNum(s.baseOffset), s.active ? " ● active" : ""),
        el("td", null, s.nextOffset > s.baseOffset ? `${fmtNum(s.baseOffset)}–${fmtNum(s.nextOffset - 1)}` : "empty"),
        el("td", null, fmtBytes(s.size)),
        el("td", null, s.size ? fmtTime(s.largestTimestamp) : "–"),
        el("td", null, s.deletedNow ? el("strong", { class: "del" }, `✂ deleted (${s.reason})`) : "kept"),
        el("td", null, s.readableUntil === null ? "never" : fmtTime(s.readableUntil)),
        el("td", null, s.onDiskUntil === null ? "–" : fmtTime(s.onDiskUntil)),
        el("td", null, s.reason || "none"),
        el("td", null, el("details", null, el("summary", null, "why"), el("p", null, s.explanation)))));
    }
    t.append(tb);
    clear(this.table).append(t);
    this.lookupOffset();
  }

  // simulate runs a steady traffic (the partition's own rate unless
  // given) under the what-if's settings and draws it.
  async simulate() {
    const q = { ...this.params(), rate: this.simRate.value || undefined, recordBytes: this.simSize.value || undefined };
    this.simBox.dataset.state = "running";
    this.simOut.textContent = "Simulating…";
    let r;
    try {
      r = await this.app.call("simulate", q);
    } catch (e) {
      this.simOut.textContent = `✖ ${e.message}`;
      this.simBox.dataset.state = "failed";
      return;
    }
    this.simRate.value = String(Math.round(r.recordsPerSecond * 1000) / 1000);
    this.simSize.value = String(r.recordBytes);
    this.simOut.textContent = `${r.recordsPerSecond.toPrecision(3)} records a second of ${fmtBytes(r.recordBytes)} for ${fmtDuration(r.duration)}: a record stayed readable at most ${fmtDuration(r.maxReadableMs)}; the formula's worst case is ${r.worstReadableMs < 0 ? "unbounded" : fmtDuration(r.worstReadableMs)}.`;
    const fig = lifetimeChart([r.chart], null);
    fig.id = "ret-sim-chart";
    clear(this.simChart).append(fig);
    this.simBox.dataset.state = "done";
  }

  // drawChart draws the picture of time, with the line of the offset
  // asked about (when it has a readable-until time).
  drawChart(mark) {
    if (this.result) clear(this.chart).append(lifetimeChart(this.result.charts, mark));
  }

  lookupOffset() {
    const r = this.result;
    const v = this.offsetInput.value;
    if (!r || v === "") {
      this.offsetOut.textContent = "";
      this.drawChart(null);
      return;
    }
    const off = Number(v);
    if (off < r.logStartOffset || off >= r.logEndOffset) {
      this.offsetOut.textContent = `offset ${fmtNum(off)} is not readable now (readable offsets: ${fmtNum(r.logStartOffset)}–${fmtNum(r.logEndOffset - 1)}).`;
      this.drawChart(null);
      return;
    }
    const s = r.segments.find((s) => s.baseOffset <= off && off < s.nextOffset);
    if (!s) return;
    this.drawChart(s.deletedNow ? { offset: off, at: r.now } : s.readableUntil === null ? null : { offset: off, at: s.readableUntil });
    this.offsetOut.textContent = s.deletedNow
      ? `deleted by the check at now (${s.reason}), with segment ${fmtNum(s.baseOffset)}.`
      : `readable until ${s.readableUntil === null ? "forever (no rule deletes it)" : fmtTime(s.readableUntil)}, rule ${s.reason || "none"}, with segment ${fmtNum(s.baseOffset)}: ${s.explanation}`;
  }

  highlight(base) {
    for (const tr of this.panel.querySelectorAll("#ret-table tr.target")) tr.classList.remove("target");
    const row = this.panel.querySelector(`#ret-table tr[data-base="${base}"]`);
    row?.classList.add("target");
    row?.scrollIntoView({ block: "center" });
    for (const li of this.warnings.querySelectorAll(`[data-base="${base}"]`)) li.classList.add("target");
  }
}
