// The compaction what-if: what Kafka's log cleaner would do if it picked
// the partition at "now" (compaction.Plan, a dry run that writes
// nothing): the dirty ratio against min.cleanable.dirty.ratio, the
// cleanable range on a strip of the segments, and, per segment, what a
// clean would remove and why. A topic whose cleanup.policy has no compact
// is planned as if it had.

import { el, clear, fmtNum, fmtBytes, fmtTime, fmtDuration, fmtISO, isoInput, debounce } from "./util.js";

// Long.MAX_VALUE, max.compaction.lag.ms's default: no bound. A page's
// numbers cannot hold it, so it is sent as text.
const NEVER = "9223372036854775807";
const STATE = { clean: "✓ clean", dirty: "✎ dirty", uncleanable: "⊘ uncleanable", active: "● active" };
// Whole-partition reads start by themselves below this size; above it,
// the button does.
const AUTO_BYTES = 64 << 20;

const plural = (n, one, many = one + "s") => `${fmtNum(n)} ${n === 1 ? one : many}`;

export class CompactionView {
  constructor(app, panel) {
    this.app = app;
    this.panel = panel;
    this.token = 0;
    this.inputsSet = false;
    const run = debounce(() => this.run(), 200);
    const num = (id, label, unit, fmt) => {
      const input = el("input", { type: "number", id, step: "1", "aria-describedby": `${id}-out` });
      const out = el("output", { id: `${id}-out`, for: id });
      input.addEventListener("input", () => { out.textContent = fmt(input.value); });
      input.addEventListener("change", () => { out.textContent = fmt(input.value); run(); });
      const row = el("div", { class: "setting" }, el("label", { for: id, class: "setting-name" }, label), input, out, el("span", { class: "exact" }, unit));
      return { input, out, row, fmt, set: (v) => { input.value = String(v); out.textContent = fmt(v); } };
    };
    const dur = (v) => (v === "" || !Number.isFinite(Number(v)) ? "" : fmtDuration(Number(v)));

    this.policy = el("select", { id: "cmp-cleanup-policy" }, ["delete", "compact", "compact,delete"].map((p) => el("option", { value: p }, p)));
    this.policy.addEventListener("change", run);
    this.ratio = el("input", { type: "range", id: "cmp-min-ratio", min: "0", max: "1", step: "0.01", "aria-describedby": "cmp-min-ratio-out" });
    this.ratioValue = el("input", { type: "number", id: "cmp-min-ratio-value", min: "0", max: "1", step: "0.01", "aria-label": "min.cleanable.dirty.ratio, exactly" });
    this.ratioOut = el("output", { id: "cmp-min-ratio-out", for: "cmp-min-ratio" });
    this.ratio.addEventListener("input", () => { this.setRatio(Number(this.ratio.value)); run(); });
    this.ratioValue.addEventListener("change", () => {
      const v = Number(this.ratioValue.value);
      if (Number.isFinite(v)) { this.setRatio(v); run(); }
    });
    this.minLag = num("cmp-min-lag", "min.compaction.lag.ms", "ms", dur);
    this.maxLag = num("cmp-max-lag", "max.compaction.lag.ms", "ms", dur);
    this.maxLagNever = el("input", { type: "checkbox", id: "cmp-max-lag-never" });
    this.maxLagNever.addEventListener("change", () => {
      this.maxLag.input.disabled = this.maxLagNever.checked;
      if (!this.maxLagNever.checked && this.maxLag.input.value === "") this.maxLag.set(7 * 86_400_000);
      this.maxLag.out.textContent = this.maxLagNever.checked ? "no bound" : dur(this.maxLag.input.value);
      run();
    });
    this.maxLag.row.append(el("label", { class: "off" }, this.maxLagNever, " no bound (Long.MAX_VALUE)"));
    this.deleteRetention = num("cmp-delete-retention", "delete.retention.ms", "ms", dur);
    this.segmentBytes = num("cmp-segment-bytes", "segment.bytes", "bytes", (v) => (v === "" ? "" : fmtBytes(Number(v))));
    this.nowInput = isoInput({ id: "cmp-now", "aria-label": "now, ISO 8601 UTC", "aria-describedby": "cmp-now-out" }, (t) => { this.setNow(t); run(); });
    this.nowOut = el("output", { id: "cmp-now-out", for: "cmp-now" });
    this.runButton = el("button", { type: "button", id: "cmp-run", onclick: () => this.run() }, "Plan a clean");

    this.note = el("p", { id: "cmp-policy-note", class: "note" });
    this.verdict = el("p", { id: "cmp-verdict", class: "summary", role: "status", "aria-live": "polite" });
    this.ratioBar = el("div", { id: "cmp-ratio", class: "ratio" });
    this.range = el("p", { id: "cmp-range" });
    this.strip = el("div", { id: "cmp-strip", class: "cmp-strip", role: "group", "aria-label": "Segments by their place in the cleanable range, oldest first; width by size" });
    this.kept = el("ul", { id: "cmp-kept", class: "kept" });
    this.table = el("div", { class: "records-wrap" });
    this.details = el("div");
    this.offsetInput = el("input", { type: "number", id: "cmp-offset", min: "0", inputmode: "numeric" });
    this.offsetOut = el("output", { id: "cmp-offset-out", for: "cmp-offset" });
    this.offsetInput.addEventListener("input", debounce(() => this.lookupOffset(), 300));

    panel.append(
      el("h2", null, "Compaction what-if"),
      el("p", { class: "muted" }, "Kafka's log cleaner keeps the latest record of every key: it cleans a compacted partition when the dirty part (the segments written since the last clean, up to the active segment) is more than min.cleanable.dirty.ratio of it, and rewrites every closed segment up to there without the records a later one of the same key supersedes, the records without a key, those of aborted transactions, and the tombstones whose delete horizon has passed. This is what a clean at “now” would do (compaction.Plan, the numbers of segviz compact --dry-run); nothing is written."),
      this.note,
      el("div", { class: "settings" },
        el("div", { class: "setting" }, el("label", { for: "cmp-cleanup-policy", class: "setting-name" }, "cleanup.policy"), this.policy),
        el("div", { class: "setting" }, el("label", { for: "cmp-min-ratio", class: "setting-name" }, "min.cleanable.dirty.ratio"), this.ratio, this.ratioOut, el("span", { class: "exact" }, this.ratioValue)),
        this.minLag.row, this.maxLag.row, this.deleteRetention.row, this.segmentBytes.row,
        el("div", { class: "setting" }, el("label", { for: "cmp-now", class: "setting-name" }, "now"), this.nowInput, this.nowOut,
          el("button", { type: "button", onclick: () => { this.setNow(this.app.part.now); run(); } }, "reset"))),
      el("p", null, this.runButton, " ", el("button", { type: "button", onclick: () => { this.reset(); if (!this.running) this.run(); } }, "Reset to the partition's settings")),
      this.verdict, this.ratioBar, this.range, this.strip,
      el("ul", { class: "legend", "aria-label": "Legend of the segment strip" },
        el("li", null, el("span", { class: "swatch cmp-clean" }), " ✓ clean: cleaned before (below the first dirty offset)"),
        el("li", null, el("span", { class: "swatch cmp-dirty" }), " ✎ dirty: in the cleanable range"),
        el("li", null, el("span", { class: "swatch cmp-uncleanable" }), " ⊘ uncleanable: at or past the first uncleanable offset"),
        el("li", null, el("span", { class: "swatch active" }), " ● active: never cleaned")),
      this.table, this.kept,
      el("div", { class: "lookup" }, el("label", { for: "cmp-offset" }, "Until when can offset "), this.offsetInput, " be read? ", this.offsetOut),
      this.details,
    );
    this.reset();
  }

  setRatio(v) {
    this.ratioValue.value = String(v);
    this.ratio.value = String(v);
    this.ratioOut.textContent = Number(v).toFixed(2);
  }

  setNow(t) {
    this.now = t;
    this.nowInput.value = fmtISO(t);
    this.nowInput.setAttribute("aria-invalid", "false");
    const d = t - (this.app.part?.now ?? t);
    this.nowOut.textContent = d === 0 ? fmtTime(t) : `${fmtTime(t)} (${d > 0 ? "+" : "−"}${fmtDuration(Math.abs(d))})`;
  }

  // setInputs shows the settings a plan ran with, and the policy asked
  // for (not the compact a plan of a delete topic runs as).
  setInputs(r) {
    const c = r.config;
    if (![...this.policy.options].some((o) => o.value === r.policy)) this.policy.append(el("option", { value: r.policy }, r.policy || "(none)"));
    this.policy.value = r.policy;
    this.setRatio(c["min.cleanable.dirty.ratio"]);
    this.minLag.set(c["min.compaction.lag.ms"]);
    const never = c["max.compaction.lag.ms"] === null;
    this.maxLagNever.checked = never;
    this.maxLag.input.disabled = never;
    if (never) {
      this.maxLag.input.value = "";
      this.maxLag.out.textContent = "no bound";
    } else this.maxLag.set(c["max.compaction.lag.ms"]);
    this.deleteRetention.set(c["delete.retention.ms"]);
    this.segmentBytes.set(c["segment.bytes"]);
    this.inputsSet = true;
  }

  // reset forgets the plan: the next one takes the partition's settings
  // and now. A view on screen plans again at once (as show does).
  reset() {
    this.token++;
    this.result = null;
    this.inputsSet = false;
    this.running = false;
    this.runButton.disabled = false;
    if (this.app.part) this.setNow(this.app.part.now);
    for (const e of [this.strip, this.kept, this.table, this.details, this.ratioBar]) clear(e);
    this.note.textContent = "";
    this.range.textContent = "";
    this.offsetOut.textContent = "";
    this.verdict.textContent = this.app.part && this.app.part.bytes >= AUTO_BYTES
      ? `Planning a clean reads the whole partition (${fmtBytes(this.app.part.bytes)}): press “Plan a clean”.` : "";
    this.panel.dataset.state = "idle";
    this.panel.dataset.busy = "false";
    delete this.panel.dataset.query;
    if (!this.panel.hidden) this.show();
  }

  show() {
    if (!this.result && !this.running && this.app.part && this.app.part.bytes < AUTO_BYTES) this.run();
  }

  params() {
    const q = { now: this.now };
    if (this.inputsSet) {
      q["cleanup.policy"] = this.policy.value;
      q["min.cleanable.dirty.ratio"] = this.ratioValue.value;
      q["min.compaction.lag.ms"] = this.minLag.input.value;
      q["max.compaction.lag.ms"] = this.maxLagNever.checked ? NEVER : this.maxLag.input.value;
      q["delete.retention.ms"] = this.deleteRetention.input.value;
      q["segment.bytes"] = this.segmentBytes.input.value;
    }
    const out = {};
    for (const [k, v] of Object.entries(q)) if (v !== "" && v !== undefined && v !== null) out[k] = String(v);
    return out;
  }

  async run() {
    const app = this.app;
    if (!app.part) return;
    const token = ++this.token, dir = app.dir;
    const q = this.params();
    this.running = true;
    this.panel.dataset.busy = "true";
    this.panel.dataset.state = "running";
    this.runButton.disabled = true;
    if (!this.result) this.verdict.textContent = "Planning a clean…";
    let r;
    try {
      r = await app.call("compaction", { dir, ...q });
    } catch (e) {
      if (token === this.token) {
        this.verdict.textContent = `✖ ${e.message}`;
        this.verdict.dataset.cleanable = "";
        this.panel.dataset.state = "failed";
        this.done();
      }
      return;
    }
    if (token !== this.token || dir !== app.dir) return;
    if (!this.inputsSet) this.setInputs(r);
    this.result = r;
    this.render(r);
    this.panel.dataset.query = JSON.stringify(q);
    this.panel.dataset.state = "done";
    this.done();
    if (this.offsetInput.value !== "") this.lookupOffset();
  }

  done() {
    this.running = false;
    this.runButton.disabled = false;
    this.panel.dataset.busy = "false";
  }

  render(r) {
    this.note.textContent = r.compacted
      ? `cleanup.policy is ${r.policy}: the log cleaner picks this partition once it is cleanable.`
      : `cleanup.policy is ${r.policy || "empty"} — what a compaction would do: Kafka's cleaner never cleans this topic; the plan below is as if cleanup.policy were ${r.asIf}.`;
    this.note.dataset.compacted = String(r.compacted);
    const rewritten = r.segments.filter((s) => s.rewritten).length;
    this.verdict.textContent = r.cleanable
      ? `✔ Cleanable: a clean at ${fmtTime(r.now)} would remove ${plural(r.removed.records, "record")} (${fmtBytes(r.removed.bytes)}) from the ${plural(rewritten, "segment")} it rewrites in ${plural(r.groups.length, "group")}${r.mapFull ? `; its offset map fills at offset ${fmtNum(r.endOffset)}` : ""}; the next clean would start at offset ${fmtNum(r.endOffset)}.`
      : `✖ Not cleanable at ${fmtTime(r.now)}: ${r.why}.`;
    this.verdict.dataset.cleanable = String(r.cleanable);
    this.renderRatio(r);
    this.renderRange(r);
    this.renderStrip(r);
    this.renderTable(r);
    this.renderKept(r);
    const st = r.stats;
    clear(this.details).append(el("details", null, el("summary", null, "The cleaner's numbers"),
      el("p", null, r.cleanable
        ? `Offset map: ${plural(r.mapEntries, "key")} of a capacity of ${fmtNum(r.mapCapacity)}${r.mapFull ? " (full)" : ""}; it read ${fmtBytes(st.mapBytesRead)} (${plural(st.mapMessagesRead, "record")}). The clean would read ${fmtBytes(st.bytesRead)} (${plural(st.messagesRead, "record")}, ${fmtNum(st.invalidMessagesRead)} without a key) and write ${fmtBytes(st.bytesWritten)} (${plural(st.messagesWritten, "record")}); batches: ${fmtNum(r.removed.batches)} dropped, ${fmtNum(r.removed.batchesEmptied)} emptied (kept as 61-byte batches: a producer's last, or the round's last), ${fmtNum(r.removed.batchesRewritten)} rewritten, ${fmtNum(r.removed.batchesCopied)} copied as they were.`
        : "No clean runs: nothing is read beyond the segments' sizes and timestamps."),
      el("p", null, `Log start offset ${fmtNum(r.logStartOffset)}, log end offset ${fmtNum(r.logEndOffset)}, high watermark ${fmtNum(r.highWatermark)}, last stable offset ${fmtNum(r.lastStableOffset)}.`)));
  }

  renderRatio(r) {
    const ratio = r.dirtyRatio;
    const min = r.minCleanableDirtyRatio;
    const text = ratio === null
      ? `Dirty ratio: none — no bytes below the first uncleanable offset (min.cleanable.dirty.ratio ${min}).`
      : `Dirty ratio ${ratio.toFixed(4)}: ${fmtBytes(r.cleanableBytes)} dirty of ${fmtBytes(r.totalBytes)}, ${ratio > min ? "above" : "not above"} min.cleanable.dirty.ratio ${min}${r.needCompactionNow ? `; a dirty segment is ${fmtDuration(r.maxCompactionDelayMs)} past max.compaction.lag.ms, which forces a clean` : ""}.`;
    const pct = (v) => `${(Math.min(Math.max(v, 0), 1) * 100).toFixed(1)}%`;
    clear(this.ratioBar).append(
      el("p", { class: "ratio-text" }, text),
      el("div", { class: `ratio-track${ratio !== null && ratio > min ? " over" : ""}`, role: "img", "aria-label": text },
        el("div", { class: "ratio-fill", style: { width: pct(ratio ?? 0) } }),
        el("div", { class: "ratio-min", style: { left: pct(min) }, title: `min.cleanable.dirty.ratio ${min}` }, el("span", null, `▼ min ${min}`))));
    Object.assign(this.ratioBar.dataset, { ratio: ratio === null ? "" : String(ratio), min: String(min), cleanableBytes: String(r.cleanableBytes), totalBytes: String(r.totalBytes) });
  }

  renderRange(r) {
    const rounded = r.firstUncleanableDirtyOffset !== r.firstUncleanableOffset ? ` at ${fmtNum(r.firstUncleanableDirtyOffset)}, rounded down to its segment's base` : "";
    const empty = r.firstUncleanableOffset <= r.firstDirtyOffset;
    this.range.textContent = `Cleanable range [${fmtNum(r.firstDirtyOffset)}, ${fmtNum(r.firstUncleanableOffset)})${empty ? ", empty" : `: offsets ${fmtNum(r.firstDirtyOffset)}–${fmtNum(r.firstUncleanableOffset - 1)}`}. The first dirty offset is ${fmtNum(r.firstDirtyOffset)}, from ${r.firstDirtyFrom}; the first uncleanable offset is ${fmtNum(r.firstUncleanableOffset)}: ${r.uncleanableBy}${rounded}.`;
    Object.assign(this.range.dataset, { firstDirty: String(r.firstDirtyOffset), firstUncleanable: String(r.firstUncleanableOffset) });
  }

  renderStrip(r) {
    const strip = clear(this.strip);
    const maxSize = Math.max(1, ...r.segments.map((s) => s.size));
    const marker = (cls, s, off, label) => {
      const frac = s.nextOffset > s.baseOffset ? (off - s.baseOffset) / (s.nextOffset - s.baseOffset) : 0;
      return el("span", { class: `cmp-marker ${cls}`, style: { left: `${(Math.min(Math.max(frac, 0), 1) * 100).toFixed(1)}%` } }, label);
    };
    for (const s of r.segments) {
      const removed = !s.rewritten ? "not rewritten" : s.removed.records ? `−${plural(s.removed.records, "record")}, −${fmtBytes(s.removed.bytes)}` : "rewritten, nothing removed";
      const b = el("div", {
        class: `cmp-seg cmp-${s.state}`, role: "img",
        dataset: { base: s.baseOffset, state: s.state, records: s.removed.records, bytes: s.removed.bytes },
        "aria-label": `Segment ${s.baseOffset}, ${fmtBytes(s.size)}, ${STATE[s.state]}, ${removed}`,
        style: { flexGrow: String(Math.max(s.size / maxSize, 0.02)), flexBasis: "0" },
      },
      el("span", { class: "bar-head" }, el("strong", null, fmtNum(s.baseOffset)), el("span", { class: "bar-status" }, STATE[s.state])),
      el("span", { class: "bar-line" }, fmtBytes(s.size), s.rewritten ? ` → ${fmtBytes(s.sizeAfter)}` : ""),
      el("span", { class: "bar-line" }, removed));
      if (s.baseOffset <= r.firstDirtyOffset && r.firstDirtyOffset < s.nextOffset && r.firstDirtyOffset < r.firstUncleanableOffset) b.append(marker("dirty-start", s, r.firstDirtyOffset, `▼ first dirty ${fmtNum(r.firstDirtyOffset)}`));
      if (s.baseOffset === r.firstUncleanableOffset) b.append(marker("uncleanable-start", s, s.baseOffset, `▼ uncleanable ${fmtNum(r.firstUncleanableOffset)}`));
      strip.append(b);
    }
  }

  renderTable(r) {
    const cols = ["segment", "offsets", "size", "state", "rewritten into", "records removed", "bytes removed", "superseded", "tombstones", "unkeyed", "aborted", "markers", "size after"];
    const t = el("table", { class: "records", id: "cmp-table" },
      el("caption", null, "What a clean would remove from each segment, by reason: superseded (a later record of its key is in the cleaned range), tombstones past their delete horizon, records without a key, records of aborted transactions, transaction markers no longer needed."),
      el("thead", null, el("tr", null, cols.map((h) => el("th", { scope: "col" }, h)))));
    const tb = el("tbody");
    const n = (v, rewritten) => (rewritten ? fmtNum(v) : "–");
    for (const s of r.segments) {
      const x = s.removed, w = s.rewritten;
      tb.append(el("tr", { class: `cmp-row-${s.state}`, dataset: { base: s.baseOffset, state: s.state, rewritten: String(w), records: x.records, bytes: x.bytes, superseded: x.superseded, tombstones: x.tombstones, unkeyed: x.unkeyed, aborted: x.aborted, markers: x.markers } },
        el("th", { scope: "row" }, fmtNum(s.baseOffset)),
        el("td", null, s.nextOffset > s.baseOffset ? `${fmtNum(s.baseOffset)}–${fmtNum(s.nextOffset - 1)}` : "empty"),
        el("td", null, fmtBytes(s.size)),
        el("td", null, STATE[s.state]),
        el("td", null, w ? fmtNum(s.into) : "not rewritten"),
        el("td", null, n(x.records, w)), el("td", null, w ? fmtBytes(x.bytes) : "–"),
        el("td", null, n(x.superseded, w)), el("td", null, n(x.tombstones, w)), el("td", null, n(x.unkeyed, w)),
        el("td", null, n(x.aborted, w)), el("td", null, n(x.markers, w)),
        el("td", null, fmtBytes(s.sizeAfter))));
    }
    const x = r.removed;
    t.append(tb, el("tfoot", null, el("tr", { id: "cmp-total", dataset: { records: x.records, bytes: x.bytes } },
      el("th", { scope: "row" }, "total"), el("td"), el("td", null, fmtBytes(r.segments.reduce((a, s) => a + s.size, 0))), el("td"), el("td", null, plural(r.groups.length, "group")),
      el("td", null, fmtNum(x.records)), el("td", null, fmtBytes(x.bytes)),
      el("td", null, fmtNum(x.superseded)), el("td", null, fmtNum(x.tombstones)), el("td", null, fmtNum(x.unkeyed)),
      el("td", null, fmtNum(x.aborted)), el("td", null, fmtNum(x.markers)),
      el("td", null, fmtBytes(r.segments.reduce((a, s) => a + s.sizeAfter, 0))))));
    clear(this.table).append(t);
  }

  renderKept(r) {
    clear(this.kept);
    for (const h of r.kept) {
      const what = [h.tombstones ? plural(h.tombstones, "tombstone") : "", h.markers ? plural(h.markers, "transaction marker") : ""].filter(Boolean).join(" and ");
      const how = h.new ? "the delete horizon this clean stamps (now + delete.retention.ms)" : "their batches' delete horizon";
      this.kept.append(el("li", { dataset: { horizon: h.deleteHorizonMs, new: String(h.new) } },
        `Kept: ${what} in ${plural(h.batches, "batch", "batches")} until ${fmtTime(h.deleteHorizonMs)}, ${how}; the first clean after it removes them.`));
    }
  }

  async lookupOffset() {
    const v = this.offsetInput.value;
    if (v === "" || !this.app.part) {
      this.offsetOut.textContent = "";
      return;
    }
    const dir = this.app.dir, q = { dir, ...this.params(), offset: v };
    this.offsetOut.textContent = "…";
    let r;
    try {
      r = await this.app.call("compaction", q);
    } catch (e) {
      this.offsetOut.textContent = `✖ ${e.message}`;
      return;
    }
    if (dir !== this.app.dir || this.offsetInput.value !== v) return;
    const u = r.until;
    const t = (ms) => (ms === null ? "never" : fmtTime(ms));
    this.offsetOut.dataset.kind = u.kind;
    if (u.kind === "absent") {
      this.offsetOut.textContent = u.explanation;
      return;
    }
    this.offsetOut.textContent = `${u.kind}${u.successor !== null ? `, superseded by offset ${fmtNum(u.successor)}` : ""}: ${u.removedByCleanNow ? "a clean at now removes it; " : ""}readable until ${t(u.readableUntil)} at the latest (${u.ifAppendsContinue !== u.readableUntil ? `${t(u.ifAppendsContinue)} if appends continue; ` : ""}no clean removes it before ${t(u.notBefore)}). ${u.explanation}`;
  }
}
