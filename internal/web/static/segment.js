// The segment view: a virtualised table of a segment's batches, the
// selected batch's header and records, and a hex view of its bytes linked
// to the fields they encode.

import { el, clear, $, fmtNum, fmtBytes, fmtTime, segName, CODECS, FLAG, b64bytes, asText, hex } from "./util.js";

const ROW_H = 28;

export class SegmentView {
  constructor(app, panel) {
    this.app = app;
    this.panel = panel;
    this.seg = null;
    this.scan = null;
    this.sel = -1;
    this.mode = "text";
    this.build();
  }

  build() {
    const p = this.panel;
    this.title = el("h2", { id: "seg-title" }, "Segment");
    this.files = el("p", { class: "seg-files" });
    this.note = el("p", { class: "note" });
    this.gotoInput = el("input", { type: "number", id: "goto-offset", min: "0", inputmode: "numeric", "aria-describedby": "goto-help" });
    const go = () => this.gotoOffset(Number(this.gotoInput.value));
    const why = () => this.whyGone(this.gotoInput.value);
    this.gotoInput.addEventListener("keydown", (e) => e.key === "Enter" && go());
    // "Why is this gone": the answer of `segviz history --offset N`, from
    // the partition's timeline and the log (the whygone method).
    this.whyOut = el("div", { id: "why-out", class: "why-out", role: "status", "aria-live": "polite" });
    p.append(
      el("div", { class: "seg-head" },
        this.title,
        el("div", { class: "seg-nav" },
          el("button", { type: "button", onclick: () => this.step(-1), "aria-label": "Previous segment" }, "◀ previous"),
          el("button", { type: "button", onclick: () => this.step(1), "aria-label": "Next segment" }, "next ▶"),
          el("label", { for: "goto-offset" }, "Go to offset"), this.gotoInput,
          el("button", { type: "button", onclick: go }, "Go"),
          el("button", { type: "button", id: "why-offset", onclick: why, "aria-describedby": "why-help" }, "Why is it gone?"),
          el("span", { id: "goto-help", class: "visually-hidden" }, "finds the segment and batch holding an offset, through the offset index"),
          el("span", { id: "why-help", class: "visually-hidden" }, "says whether the offset can still be read and, if not, which instant of the timeline removed it, by which rule and config, and when")),
        this.whyOut, this.note, this.files),
    );
    this.status = el("p", { class: "status", id: "scan-status", role: "status", "aria-live": "polite" });
    p.append(this.status);

    const headers = ["#", "position", "offsets", "records", "max timestamp", "codec", "bytes", "CRC", "kind"];
    this.gridScroll = el("div", { class: "grid-scroll" });
    this.sizer = el("div", { class: "grid-sizer" });
    this.rows = el("div", { class: "grid-rows", role: "rowgroup" });
    this.gridScroll.append(this.sizer, this.rows);
    this.grid = el("div", { id: "batch-grid", class: "grid", role: "grid", tabindex: "0", "aria-label": "Batches of the segment; arrow keys move, Enter shows the records", "aria-rowcount": "1" },
      el("div", { class: "grid-row grid-header", role: "row", "aria-rowindex": "1" }, headers.map((h) => el("span", { role: "columnheader" }, h))),
      this.gridScroll);
    this.gridScroll.addEventListener("scroll", () => this.renderRows());
    this.grid.addEventListener("keydown", (e) => this.gridKey(e));
    this.rows.addEventListener("click", (e) => {
      const r = e.target.closest(".grid-row");
      if (r) this.select(Number(r.dataset.i));
    });

    this.detail = el("div", { class: "batch-detail", id: "batch-detail", "aria-live": "polite" }, el("p", { class: "muted" }, "Select a batch to see its header and records."));
    p.append(el("div", { class: "seg-body" }, el("div", { class: "grid-wrap" }, this.grid), this.detail));
    this.hexSection = el("section", { class: "hex-section", "aria-labelledby": "hex-h" });
    p.append(this.hexSection);
    this.hexView = new HexView(this.app, this.hexSection);
  }

  show() {
    this.renderRows();
  }

  setSegment(seg, scan) {
    if (this.scan) this.scan.listeners.delete(this.onScan);
    this.loadToken = null;
    clearTimeout(this.loadTimer);
    this.seg = seg;
    this.scan = scan;
    this.sel = -1;
    // The batch shown was another segment's (or another partition's): a
    // plan that arrives later must not draw it again (planChanged).
    this.batch = null;
    this.records = [];
    this.onScan = () => this.scanChanged();
    scan.listeners.add(this.onScan);
    const name = `${segName(seg.baseOffset)}.log${seg.suffix || ""}`;
    this.title.textContent = `Segment ${fmtNum(seg.baseOffset)}${seg.suffix ? " (deleted: files wait as .deleted)" : seg.active ? " (active)" : ""}`;
    this.note.textContent = seg.note || "";
    clear(this.files).append("Files: ");
    const files = seg.files || [];
    files.forEach((f, i) => {
      const url = this.app.engine.fileURL?.(this.app.dir, f.name);
      if (i) this.files.append(", ");
      this.files.append(url ? el("a", { href: url, title: `download ${f.name}` }, f.name) : f.name, ` (${fmtBytes(f.size)})`);
    });
    if (!files.length) this.files.append(name);
    clear(this.detail).append(el("p", { class: "muted" }, "Select a batch to see its header and records."));
    this.hexView.clear();
    this.gridScroll.scrollTop = 0;
    this.scanChanged();
  }

  step(d) {
    const all = this.app.allSegments();
    const i = all.findIndex((s) => s.baseOffset === this.seg?.baseOffset && (s.suffix || "") === (this.seg?.suffix || ""));
    const t = all[i + d];
    if (t) this.app.selectSegment(t.baseOffset, t.suffix || "");
  }

  async gotoOffset(off) {
    if (!Number.isFinite(off)) return;
    try {
      const r = await this.app.call("locate", { dir: this.app.dir, offset: off });
      if (!r.found) {
        // Not in the log: say why it is gone instead.
        await this.whyGone(off);
        return;
      }
      this.app.selectSegment(r.baseOffset, "");
      await this.revealPosition(r.position);
      // Below the log start offset its bytes may still be on disk, but
      // it cannot be read: say why, beside them.
      if (off < this.app.part.logStartOffset) await this.whyGone(off);
      else this.clearWhy();
    } catch (e) {
      this.app.toast(e.message);
    }
  }

  clearWhy() {
    clear(this.whyOut);
    for (const k of Object.keys(this.whyOut.dataset)) delete this.whyOut.dataset[k];
  }

  // whyGone asks whether offset v can still be read and, if not, what
  // removed it; the answer shows in the offset box, with a button that
  // shows the instant in the lane.
  async whyGone(v) {
    const out = this.whyOut;
    if (v === "" || v === null || v === undefined || !Number.isFinite(Number(v)) || Number(v) < 0) {
      clear(out).append(el("p", { class: "muted" }, "Give an offset (0 or more) to ask why it is gone."));
      delete out.dataset.readable;
      return;
    }
    const off = Number(v);
    out.dataset.state = "asking";
    let r;
    try {
      r = await this.app.call("whygone", { dir: this.app.dir, offset: off });
    } catch (e) {
      clear(out).append(el("p", { class: "error" }, `✖ ${e.message}`));
      out.dataset.state = "error";
      return;
    }
    const lines = r.text.split("\n").filter((l) => l.trim() !== "").map((l) => l.trim());
    let head;
    if (r.readable) head = `✓ Offset ${fmtNum(off)} is readable.`;
    else if (r.removedInstant) head = `✖ Offset ${fmtNum(off)} is gone: removed by the ${r.removedInstant.action} instant ${r.removedInstant.instantTime}, rule ${r.rule}, completed ${fmtTime(r.at, true)}.`;
    else head = `✖ Offset ${fmtNum(off)} is not readable, and no instant of the timeline recorded its removal.`;
    clear(out).append(el("p", { class: "why-head", id: "why-head" }, head));
    // The first line of the text restates the headline, except for a
    // readable offset, where it gives the log's offsets and the record's
    // timestamp.
    for (const l of r.readable ? lines : lines.slice(1)) out.append(el("p", { class: "why-line" }, l));
    const show = (inst, label) => inst && out.append(el("button", { type: "button", class: "why-show", dataset: { instant: inst.instantTime },
      onclick: () => this.app.lane.reveal(inst.instantTime) }, label));
    show(r.removedInstant, `Show the ${r.removedInstant?.action} instant in the lane`);
    show(r.writtenInstant, "Show the roll that closed its segment");
    if (r.pending) out.append(el("p", { class: "muted" }, `${fmtNum(r.pending)} instant(s) left pending by an interrupted run are not taken into account.`));
    Object.assign(out.dataset, {
      state: "answered", offset: String(off), readable: String(r.readable),
      removedBy: r.removedBy ?? "", writtenBy: r.writtenBy ?? "", rule: r.rule ?? "", at: r.at ?? "",
    });
  }

  scanChanged() {
    const s = this.scan;
    if (!s) return;
    const n = s.cols.n;
    this.sizer.style.height = `${n * ROW_H}px`;
    this.grid.setAttribute("aria-rowcount", String(n + 1));
    this.grid.dataset.rows = String(n);
    this.grid.dataset.done = String(s.done);
    let text;
    if (s.failed) text = `✖ Reading the segment failed: ${s.failed}`;
    else if (!s.done) text = `Reading headers… ${fmtBytes(s.next)} of ${fmtBytes(s.size)}: ${fmtNum(n)} batches, ${fmtNum(s.records)} records so far`;
    else {
      text = `${fmtNum(n)} batches, ${fmtNum(s.records)} records, ${fmtBytes(s.size)}.`;
      if (s.tail && s.tail.kind === "partial") text += ` ⚠ The last ${fmtNum(s.tail.bytes)} bytes (from ${fmtNum(s.tail.position)}) are a partial entry: a torn write.`;
      if (s.tail && s.tail.kind === "zeros") text += ` ⚠ ${fmtNum(s.tail.bytes)} zero bytes at the end (from ${fmtNum(s.tail.position)}).`;
      if (s.error) text += ` ✖ Corruption at ${fmtNum(s.error.position)} stops the walk: ${s.error.detail}`;
    }
    this.status.textContent = text;
    this.status.dataset.batches = String(n);
    this.status.dataset.records = String(s.records);
    this.renderRows();
    if (this.sel < 0 && n > 0 && !this.pendingReveal) this.select(0, { focus: false });
    if (this.pendingReveal) this.pendingReveal();
  }

  renderRows() {
    const s = this.scan;
    if (!s || this.panel.hidden) return;
    const c = s.cols;
    const top = this.gridScroll.scrollTop;
    const h = this.gridScroll.clientHeight || 360;
    const first = Math.max(0, Math.floor(top / ROW_H) - 5);
    const last = Math.min(c.n, Math.ceil((top + h) / ROW_H) + 5);
    if (this.rendered && this.rendered.first === first && this.rendered.last === last && this.rendered.n === c.n && this.rendered.sel === this.sel) return;
    this.rendered = { first, last, n: c.n, sel: this.sel };
    clear(this.rows);
    this.rows.style.top = `${first * ROW_H}px`;
    const cols = c.cols;
    for (let i = first; i < last; i++) {
      const flags = cols.flags[i], count = cols.count[i], magic = cols.magic[i];
      const kind = [];
      if (magic < 2) kind.push(`v${magic}${flags & FLAG.wrapper ? " wrapper" : ""}`);
      if (flags & FLAG.control) kind.push(flags & FLAG.commit ? "◆ COMMIT" : flags & FLAG.abort ? "◆ ABORT" : "◆ control");
      else if (flags & FLAG.txn) kind.push("txn");
      if (count === 0 && magic === 2) kind.push("∅ empty");
      if (flags & FLAG.logAppendTime) kind.push("LogAppendTime");
      const bad = flags & FLAG.crcInvalid;
      const row = el("div", {
        class: `grid-row${i === this.sel ? " selected" : ""}${bad ? " bad" : ""}`, role: "row", id: `batch-row-${i}`,
        "aria-rowindex": String(i + 2), "aria-selected": i === this.sel ? "true" : "false", dataset: { i, position: cols.position[i] },
        style: { height: `${ROW_H}px` },
      },
      el("span", { role: "gridcell" }, fmtNum(i)),
      el("span", { role: "gridcell" }, fmtNum(cols.position[i])),
      el("span", { role: "gridcell" }, cols.baseOffset[i] === cols.lastOffset[i] ? fmtNum(cols.baseOffset[i]) : `${fmtNum(cols.baseOffset[i])}–${fmtNum(cols.lastOffset[i])}`),
      el("span", { role: "gridcell" }, fmtNum(count)),
      el("span", { role: "gridcell" }, fmtTime(cols.maxTimestamp[i])),
      el("span", { role: "gridcell" }, CODECS[cols.codec[i]] ?? `codec ${cols.codec[i]}`),
      el("span", { role: "gridcell" }, fmtNum(cols.size[i])),
      el("span", { role: "gridcell", class: bad ? "crc-bad" : "crc-ok" }, bad ? "✖ mismatch" : "✓ valid"),
      el("span", { role: "gridcell" }, kind.join(", ")));
      this.rows.append(row);
    }
    if (this.sel >= 0) this.grid.setAttribute("aria-activedescendant", `batch-row-${this.sel}`);
  }

  gridKey(e) {
    const n = this.scan?.cols.n || 0;
    if (!n) return;
    const page = Math.max(1, Math.floor((this.gridScroll.clientHeight || 360) / ROW_H) - 1);
    let i = this.sel;
    switch (e.key) {
      case "ArrowDown": i++; break;
      case "ArrowUp": i--; break;
      case "PageDown": i += page; break;
      case "PageUp": i -= page; break;
      case "Home": i = 0; break;
      case "End": i = n - 1; break;
      case "Enter": case " ": this.detail.querySelector("button, [tabindex]")?.focus(); e.preventDefault(); return;
      default: return;
    }
    e.preventDefault();
    this.select(Math.max(0, Math.min(n - 1, i)));
  }

  // select shows batch i: its header, records and bytes.
  select(i, opt = {}) {
    const c = this.scan.cols;
    if (i < 0 || i >= c.n) return;
    this.sel = i;
    const top = i * ROW_H, sc = this.gridScroll;
    if (top < sc.scrollTop || top + ROW_H > sc.scrollTop + sc.clientHeight) sc.scrollTop = Math.max(0, top - sc.clientHeight / 2);
    this.rendered = null;
    this.renderRows();
    clearTimeout(this.loadTimer);
    const row = c.get(i);
    this.loadTimer = setTimeout(() => this.loadBatch(row, opt.mark), opt.immediate ? 0 : 120);
  }

  async loadBatch(row, mark) {
    const token = (this.loadToken = {});
    const seg = this.seg, app = this.app, dir = app.dir;
    const base = { dir, base: seg.baseOffset, suffix: seg.suffix || undefined, position: row.position };
    let recs, layout;
    try {
      [recs, layout] = await Promise.all([app.call("records", { ...base, limit: 100 }), app.call("layout", base)]);
    } catch (e) {
      if (token !== this.loadToken || seg !== this.seg) return;
      clear(this.detail).append(el("p", { class: "error" }, `✖ ${e.message}`));
      this.hexView.show({ dir, file: `${segName(seg.baseOffset)}.log${seg.suffix || ""}`, start: row.position, end: Math.min(row.position + row.size, seg.size), fields: [], mark });
      return;
    }
    if (token !== this.loadToken || seg !== this.seg || dir !== app.dir) return;
    this.batch = recs.batch;
    this.records = recs.records;
    this.recDone = recs.done;
    this.recNext = recs.next;
    this.recError = recs.error;
    this.renderDetail();
    this.hexView.show({ dir, file: layout.file, start: layout.position, end: layout.position + layout.size, fields: layout.fields, mark, truncated: layout.truncated, error: layout.error, title: `Bytes of the batch at position ${fmtNum(layout.position)}` });
  }

  async moreRecords() {
    const seg = this.seg, b = this.batch;
    let r;
    try {
      r = await this.app.call("records", { dir: this.app.dir, base: seg.baseOffset, suffix: seg.suffix || undefined, position: b.position, from: this.recNext, limit: 200 });
    } catch (e) {
      this.app.toast(e.message);
      return;
    }
    if (seg !== this.seg || b !== this.batch) return;
    this.records.push(...r.records);
    this.recDone = r.done;
    this.recNext = r.next;
    this.recError = r.error;
    this.renderDetail();
  }

  planChanged() {
    if (this.batch) this.renderDetail();
  }

  readableUntil() {
    const plan = this.app.plan, seg = this.seg;
    if (seg?.suffix) return { text: "no longer readable: the segment was deleted", short: "deleted", reason: "" };
    const b = plan?.segments.find((s) => s.baseOffset === seg?.baseOffset);
    if (!b) return { text: "–", short: "–", reason: "" };
    if (b.deletedNow) return { text: `deleted by the check at now (${fmtTime(plan.now)})`, short: "now", reason: b.reason, explanation: b.explanation };
    const t = b.readableUntil === null ? "never" : fmtTime(b.readableUntil);
    return { text: b.readableUntil === null ? "never (no rule deletes it)" : t, short: t, reason: b.reason || "none", explanation: b.explanation };
  }

  renderDetail() {
    const b = this.batch;
    const d = clear(this.detail);
    const kind = [];
    if (b.isTransactional) kind.push("transactional");
    if (b.isControl) kind.push(`control${b.controlType ? " (" + b.controlType + ")" : ""}`);
    if (b.count === 0) kind.push("empty: its records were compacted away");
    d.append(el("h3", { id: "batch-h" }, `Batch at position ${fmtNum(b.position)}: offsets ${fmtNum(b.baseOffset)}–${fmtNum(b.lastOffset)}`));
    if (b.error) d.append(el("p", { class: "error" }, `✖ ${b.error}`));
    const fields = [
      ["records", fmtNum(b.count)], ["size", `${fmtNum(b.size)} bytes`], ["magic", b.magic], ["compression", b.compression],
      ["timestamp type", b.timestampType], ["base timestamp", fmtTime(b.baseTimestamp, true)], ["max timestamp", fmtTime(b.maxTimestamp, true)],
      ["producer id", b.producerId], ["producer epoch", b.producerEpoch], ["base sequence", b.baseSequence],
      ["leader epoch", b.partitionLeaderEpoch], ["CRC", `${b.crc} ${b.crcValid ? "✓ valid" : "✖ mismatch"}`], ["kind", kind.join(", ") || "data"],
    ];
    d.append(el("dl", { class: "kv" }, fields.map(([k, v]) => el("div", null, el("dt", null, k), el("dd", null, String(v))))));
    const ru = this.readableUntil();
    d.append(el("p", { class: "readable" }, "Readable until: ", el("strong", null, ru.text), ru.reason ? ` (rule: ${ru.reason})` : "",
      ru.explanation ? el("details", null, el("summary", null, "why"), el("p", null, ru.explanation)) : null));
    const modeName = `mode-${Math.random().toString(36).slice(2)}`;
    const modes = el("fieldset", { class: "modes" }, el("legend", null, "Keys and values as"),
      ["text", "hex"].map((m) => el("label", null, el("input", { type: "radio", name: modeName, value: m, checked: this.mode === m, onchange: () => { this.mode = m; this.renderDetail(); } }), ` ${m}`)));
    d.append(modes);
    const table = el("table", { class: "records", id: "records-table" },
      el("caption", { class: "visually-hidden" }, "Records of the batch"),
      el("thead", null, el("tr", null, ["offset", "timestamp", "key", "value", "headers", "readable until"].map((h) => el("th", { scope: "col" }, h)))));
    const tb = el("tbody");
    for (const r of this.records) {
      const ctl = r.controlType ? `◆ ${r.controlType}${r.coordinatorEpoch !== undefined ? ` (coordinator epoch ${r.coordinatorEpoch})` : ""}` : null;
      tb.append(el("tr", null,
        el("td", null, fmtNum(r.offset)),
        el("td", null, fmtTime(r.timestamp, true)),
        el("td", null, ctl ? el("span", { class: "control" }, ctl) : this.value(r.key, r.keySize, r.keyTruncated)),
        el("td", null, ctl ? this.value(r.value, r.valueSize, r.valueTruncated, true) : this.value(r.value, r.valueSize, r.valueTruncated)),
        el("td", null, r.headers.length ? el("ul", { class: "headers" }, r.headers.map((h) => el("li", null, el("code", null, h.key), ": ", this.value(h.value, h.valueSize, h.truncated)))) : "–"),
        el("td", { title: ru.explanation || "" }, ru.short, ru.reason ? el("span", { class: "muted" }, ` (${ru.reason})`) : "")));
    }
    table.append(tb);
    d.append(el("div", { class: "records-wrap" }, table));
    if (this.recError) d.append(el("p", { class: "error" }, `✖ ${this.recError}`));
    if (!this.recDone) d.append(el("button", { type: "button", onclick: () => this.moreRecords() }, `Load more records (${fmtNum(this.records.length)} of ${fmtNum(b.count)} shown)`));
    else if (!this.records.length && b.count === 0) d.append(el("p", { class: "muted" }, "No records: compaction removed them all, and the batch keeps its offset range and producer state."));
  }

  value(v, size, truncated, binaryHint) {
    if (v === null || v === undefined) return el("span", { class: "null" }, "null");
    const bytes = b64bytes(v);
    const text = this.mode === "text" && !binaryHint ? asText(bytes) : null;
    const note = truncated ? ` … (${fmtNum(size)} bytes)` : "";
    if (text !== null) return el("span", { class: "text", title: text.length > 160 ? `${fmtNum(size)} bytes; the hex view below shows them all` : null }, text.length > 160 ? text.slice(0, 160) + "…" : text, note);
    return el("code", { class: "hexval", title: `${fmtNum(size)} bytes` }, hex(bytes, 64), note);
  }

  // revealPosition selects the batch holding a .log position, waiting for
  // the scan to reach it, and marks the byte in the hex view.
  revealPosition(pos) {
    return new Promise((resolve) => {
      const attempt = () => {
        const s = this.scan;
        const i = s.cols.rowAt(pos);
        if (i >= 0) {
          this.pendingReveal = null;
          this.select(i, { mark: pos, immediate: true });
          resolve(true);
          return true;
        }
        if (s.done || s.failed || (s.next > pos && s.cols.n && s.cols.get(s.cols.n - 1).position > pos)) {
          this.pendingReveal = null;
          this.sel = -1;
          this.rendered = null;
          this.renderRows();
          clear(this.detail).append(el("p", { class: "error" }, `No valid batch holds position ${fmtNum(pos)}: these are the raw bytes there.`));
          const seg = this.seg;
          this.hexView.show({ dir: this.app.dir, file: `${segName(seg.baseOffset)}.log${seg.suffix || ""}`, start: Math.max(0, pos - 64), end: Math.min(seg.size, pos + 2048), fields: [], mark: pos, title: `Bytes around position ${fmtNum(pos)}` });
          resolve(false);
          return true;
        }
        return false;
      };
      if (!attempt()) {
        this.pendingReveal = () => attempt();
        this.app.poke();
      }
    });
  }
}

const PAGE = 16384;
const LINE = 16;
const LINE_H = 22;

// HexView shows a range of a file's bytes, 16 a line, virtualised, with
// the fields of a layout beside them: hovering (or focusing) a field
// highlights its bytes, and hovering a byte highlights its field.
export class HexView {
  constructor(app, root) {
    this.app = app;
    this.root = root;
    this.fields = [];
    this.pages = new Map();
    this.hl = -1;
    this.pinned = -1;
    this.cursor = -1;
    this.build();
  }

  build() {
    this.heading = el("h3", { id: "hex-h" }, "Bytes");
    this.info = el("p", { class: "status", id: "hex-info", "aria-live": "polite" });
    this.fieldList = el("ol", { class: "fields", id: "hex-fields", "aria-label": "Fields of the entry" });
    this.scroll = el("div", { class: "hex-scroll", id: "hex-view", tabindex: "0", role: "application", "aria-label": "Hex view: arrow keys move the cursor; the field under it is highlighted", "aria-describedby": "hex-info" });
    this.sizer = el("div", { class: "grid-sizer" });
    this.lines = el("div", { class: "hex-lines" });
    this.scroll.append(this.sizer, this.lines);
    this.root.append(this.heading, this.info, el("div", { class: "hex-wrap" }, el("div", { class: "fields-wrap" }, this.fieldList), this.scroll));
    this.scroll.addEventListener("scroll", () => this.render());
    this.lines.addEventListener("mouseover", (e) => {
      const b = e.target.closest(".hb");
      if (b) this.hover(this.fieldAt(Number(b.dataset.p)), Number(b.dataset.p));
    });
    this.lines.addEventListener("mouseleave", () => this.hover(this.pinned, -1));
    this.lines.addEventListener("click", (e) => {
      const b = e.target.closest(".hb");
      if (!b) return;
      this.cursor = Number(b.dataset.p);
      this.pinned = this.fieldAt(this.cursor);
      this.hover(this.pinned, this.cursor);
    });
    this.scroll.addEventListener("keydown", (e) => this.key(e));
    this.fieldList.addEventListener("mouseover", (e) => {
      const f = e.target.closest(".field");
      if (f) this.hover(Number(f.dataset.fi), -1, true);
    });
    this.fieldList.addEventListener("focusin", (e) => {
      const f = e.target.closest(".field");
      if (f) this.hover(Number(f.dataset.fi), -1, true);
    });
    this.fieldList.addEventListener("click", (e) => {
      const f = e.target.closest(".field");
      if (f) { this.pinned = Number(f.dataset.fi); this.hover(this.pinned, -1, true); }
    });
    this.fieldList.addEventListener("mouseleave", () => this.hover(this.pinned, -1));
  }

  clear() {
    this.range = null;
    clear(this.fieldList);
    clear(this.lines);
    this.info.textContent = "";
    this.heading.textContent = "Bytes";
  }

  show(o) {
    if (this.file !== o.file || this.dir !== o.dir) this.pages = new Map();
    this.dir = o.dir;
    this.file = o.file;
    this.start = o.start - (o.start % LINE);
    this.end = Math.max(o.end, o.start + 1);
    this.range = o;
    this.fields = o.fields || [];
    this.hl = -1;
    this.pinned = -1;
    this.cursor = o.mark ?? -1;
    this.heading.textContent = o.title || "Bytes";
    this.root.dataset.fields = String(this.fields.length);
    clear(this.fieldList);
    this.fields.forEach((f, i) => {
      this.fieldList.append(el("li", null, el("button", {
        type: "button", class: `field ${f.record < 0 ? "hdr" : f.record % 2 ? "r1" : "r0"}${f.bad ? " bad" : ""}`, dataset: { fi: i },
        title: `bytes ${f.start}–${f.end - 1}`,
      }, el("span", { class: "fname" }, f.name), " ", el("span", { class: "fval" }, f.value), f.bad ? " ✖" : "")));
    });
    if (!this.fields.length) this.fieldList.append(el("li", { class: "muted" }, o.error || "No fields: the bytes here are not a valid entry."));
    if (o.truncated) this.fieldList.append(el("li", { class: "muted" }, "… more fields than shown (a compressed payload is one field; its records are listed above)."));
    const lines = Math.ceil((this.end - this.start) / LINE);
    this.sizer.style.height = `${lines * LINE_H}px`;
    const target = o.mark >= 0 && o.mark !== undefined ? o.mark : o.start;
    this.scroll.scrollTop = Math.max(0, Math.floor((target - this.start) / LINE) * LINE_H - 2 * LINE_H);
    this.info.textContent = `${o.file}: bytes ${fmtNum(o.start)}–${fmtNum(this.end - 1)} (${fmtNum(this.end - o.start)} bytes). Hover or focus a field to highlight its bytes, or a byte to find its field.`;
    if (o.mark >= 0 && o.mark !== undefined) this.hover(this.fieldAt(o.mark), o.mark);
    this.render();
  }

  fieldAt(p) {
    const f = this.fields;
    let lo = 0, hi = f.length - 1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (f[m].end <= p) lo = m + 1;
      else if (f[m].start > p) hi = m - 1;
      else return m;
    }
    return -1;
  }

  page(n) {
    let p = this.pages.get(n);
    if (!p) {
      const file = this.file, dir = this.dir;
      p = this.app.call("bytes", { dir, file, position: n * PAGE, length: PAGE }).then((r) => b64bytes(r.data));
      this.pages.set(n, p);
      p.then((b) => {
        this.pages.set(n, b);
        if (this.file === file) this.render();
      }, () => this.pages.delete(n));
    }
    return p;
  }

  render() {
    if (!this.range) return;
    const top = this.scroll.scrollTop, h = this.scroll.clientHeight || 320;
    const total = Math.ceil((this.end - this.start) / LINE);
    const first = Math.max(0, Math.floor(top / LINE_H) - 3);
    const last = Math.min(total, Math.ceil((top + h) / LINE_H) + 3);
    clear(this.lines);
    this.lines.style.top = `${first * LINE_H}px`;
    for (let l = first; l < last; l++) {
      const lineStart = this.start + l * LINE;
      const line = el("div", { class: "hex-line", style: { height: `${LINE_H}px` } }, el("span", { class: "hoff" }, lineStart.toString().padStart(10, " ")));
      const hexPart = el("span", { class: "hbytes" });
      let ascii = "";
      for (let i = 0; i < LINE; i++) {
        const p = lineStart + i;
        if (p < this.range.start || p >= this.end) {
          hexPart.append(el("span", { class: "hb none" }, "  "));
          ascii += " ";
          continue;
        }
        const pg = this.pages.get(Math.floor(p / PAGE));
        let b = null;
        if (pg instanceof Uint8Array) b = pg[p % PAGE];
        else this.page(Math.floor(p / PAGE));
        const fi = this.fieldAt(p);
        const f = this.fields[fi];
        let cls = "hb " + (fi < 0 ? "nof" : f.record < 0 ? "hdr" : f.record % 2 ? "r1" : "r0");
        if (f?.bad) cls += " bad";
        if (fi >= 0 && fi === this.hl) cls += " hl";
        if (p === this.cursor) cls += " cur";
        if (p === this.range.mark) cls += " mark";
        hexPart.append(el("span", { class: cls, dataset: { p } }, b === null || b === undefined ? "··" : b.toString(16).padStart(2, "0")));
        ascii += b === null || b === undefined ? "·" : b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".";
      }
      line.append(hexPart, el("span", { class: "hascii" }, ascii));
      this.lines.append(line);
    }
  }

  hover(fi, pos, fromList) {
    this.hl = fi;
    for (const b of this.fieldList.querySelectorAll(".field.hl")) b.classList.remove("hl");
    const f = this.fields[fi];
    if (fi >= 0) {
      const item = this.fieldList.querySelector(`[data-fi="${fi}"]`);
      item?.classList.add("hl");
      if (!fromList) item?.scrollIntoView({ block: "nearest" });
      if (fromList) {
        const line = Math.floor((f.start - this.start) / LINE);
        const top = line * LINE_H;
        if (top < this.scroll.scrollTop || top > this.scroll.scrollTop + this.scroll.clientHeight - LINE_H) this.scroll.scrollTop = Math.max(0, top - LINE_H);
      }
      this.info.textContent = `${f.name} = ${f.value}  (bytes ${fmtNum(f.start)}–${fmtNum(f.end - 1)}, ${f.end - f.start} bytes)${pos >= 0 ? `; cursor at ${fmtNum(pos)}` : ""}`;
    } else if (pos >= 0) {
      this.info.textContent = `position ${fmtNum(pos)}: no field (not part of a valid entry)`;
    }
    this.root.dataset.highlight = fi >= 0 ? f.name : "";
    this.render();
  }

  key(e) {
    if (!this.range) return;
    let c = this.cursor < 0 ? this.range.start : this.cursor;
    switch (e.key) {
      case "ArrowRight": c++; break;
      case "ArrowLeft": c--; break;
      case "ArrowDown": c += LINE; break;
      case "ArrowUp": c -= LINE; break;
      case "PageDown": c += LINE * 12; break;
      case "PageUp": c -= LINE * 12; break;
      case "Home": c = this.range.start; break;
      case "End": c = this.end - 1; break;
      default: return;
    }
    e.preventDefault();
    c = Math.max(this.range.start, Math.min(this.end - 1, c));
    this.cursor = c;
    const top = Math.floor((c - this.start) / LINE) * LINE_H;
    if (top < this.scroll.scrollTop) this.scroll.scrollTop = top;
    if (top + LINE_H > this.scroll.scrollTop + this.scroll.clientHeight) this.scroll.scrollTop = top + LINE_H - this.scroll.clientHeight;
    this.hover(this.fieldAt(c), c);
  }
}

export { ROW_H };
