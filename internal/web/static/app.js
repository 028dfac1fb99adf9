// segviz's page: the partition timeline (the segment strip and, under it,
// the indexer's data files over the segments, with --lake, and the lane of
// the timeline's instants), and the tabs (segment detail,
// index plots, retention what-if, compaction what-if, verification). Plain
// modules, no framework; the data comes from an engine (engine.js):
// segviz's JSON API for served partitions, the WASM engine for dropped
// files.

import { el, clear, $, $$, fmtNum, fmtBytes, fmtTime, fmtDuration, segName, Columns } from "./util.js";
import { HttpEngine, WasmEngine, loadWasm, collectDrop, filesFromInput } from "./engine.js";
import { SegmentView } from "./segment.js";
import { PlotsView } from "./plots.js";
import { RetentionView } from "./retention.js";
import { CompactionView } from "./compaction.js";
import { TimelineLane } from "./lane.js";
import { IndexedLane } from "./indexed.js";
import { VerifyView } from "./verify.js";

// SegmentScan pages through one segment's entries (the scan method) and
// keeps them as columns: the batch table's rows.
class SegmentScan {
  constructor(app, seg, keepRows) {
    this.app = app;
    this.dir = app.dir;
    this.base = seg.baseOffset;
    this.suffix = seg.suffix || "";
    this.size = seg.size;
    this.keepRows = keepRows;
    this.cols = new Columns();
    this.batches = 0;
    this.records = 0;
    this.next = 0;
    this.done = false;
    this.tail = null;
    this.error = null;
    this.failed = null;
    this.listeners = new Set();
  }
  get key() { return scanKey(this.base, this.suffix); }
  async step() {
    const r = await this.app.call("scan", { dir: this.dir, base: this.base, suffix: this.suffix || undefined, from: this.next });
    if (this.keepRows) this.cols.push(r.rows);
    this.batches += r.rows.position.length;
    this.records += r.records;
    this.next = r.next;
    this.done = r.done;
    this.tail = r.tail || null;
    this.error = r.error || null;
    for (const f of this.listeners) f(this);
  }
}

const scanKey = (base, suffix) => `${base}${suffix || ""}`;

class App {
  constructor() {
    this.server = new HttpEngine();
    this.engine = this.server;
    this.source = null;
    this.partitions = [];
    this.dir = null;
    this.part = null;
    this.selected = null; // {baseOffset, suffix, ...segment}
    this.plan = null; // the retention what-if result
    this.scans = new Map();
    this.counts = new Map();
    this.gen = 0; // bumps when the partition changes: stale work stops
    this.wake = null;
    this.tab = "segment";
    this.segmentView = new SegmentView(this, $("#panel-segment"));
    this.plotsView = new PlotsView(this, $("#panel-index"));
    this.retentionView = new RetentionView(this, $("#panel-retention"));
    this.compactionView = new CompactionView(this, $("#panel-compaction"));
    this.verifyView = new VerifyView(this, $("#panel-verify"));
    this.lane = new TimelineLane(this);
    this.indexed = new IndexedLane(this);
  }

  call(method, params) {
    return this.engine.call(method, params);
  }

  toast(msg) {
    const t = $("#toast");
    t.textContent = msg;
    t.hidden = false;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { t.hidden = true; }, 8000);
  }

  async start() {
    this.bindChrome();
    if (globalThis.SEGVIZ_SITE) {
      // A static copy (segviz site): no server, the engine is in the page.
      $("#dropzone").dataset.wasm = "ready";
      $("#source-name").textContent = "static site: files are read in this page";
      $("#reload").hidden = true;
      this.showEmpty("Drop a partition folder (or a log directory) above, or choose one: this page reads it with the WASM engine it carries. Nothing leaves your browser.");
      this.wasmStatus("The WASM engine is part of this page: drop a partition to open it.");
      return;
    }
    try {
      const ps = await this.server.call("partitions");
      this.source = { kind: "server", name: ps.name, demo: ps.demo, now: ps.now };
      this.serverPartitions = ps.partitions;
      this.setPartitions(ps.partitions, this.server);
      const h = new URLSearchParams(location.hash.slice(1));
      const want = ps.partitions.find((p) => p.dir === h.get("dir")) || ps.partitions[0];
      if (want) {
        await this.openPartition(want.dir);
        if (h.get("seg") !== null && this.findSegment(Number(h.get("seg")), h.get("suffix") || "")) this.selectSegment(Number(h.get("seg")), h.get("suffix") || "");
        if (h.get("tab")) this.showTab(h.get("tab"));
      } else this.showEmpty(`No partition directory under ${ps.name}. Drop a partition's files above.`);
    } catch (e) {
      this.showEmpty(`Cannot read the served partitions: ${e.message}`);
    }
    this.checkWasm();
  }

  // showEmpty says there is no partition to show, and hides the views
  // that would be empty (body[data-empty]).
  showEmpty(msg) {
    document.body.dataset.empty = "true";
    this.part = null;
    clear($("#timeline")).append(el("p", { class: "empty", id: "empty-msg" }, msg));
  }

  bindChrome() {
    $("#partition-select").addEventListener("change", async (e) => {
      const v = e.target.value;
      if (v === "__server__") {
        this.engine = this.server;
        this.setPartitions(this.serverPartitions, this.server);
        if (this.serverPartitions.length) await this.openPartition(this.serverPartitions[0].dir);
        return;
      }
      await this.openPartition(v);
    });
    $("#reload").addEventListener("click", () => this.dir && this.openPartition(this.dir, true));
    const dz = $("#dropzone");
    dz.addEventListener("dragover", (e) => { e.preventDefault(); dz.classList.add("over"); });
    dz.addEventListener("dragleave", () => dz.classList.remove("over"));
    dz.addEventListener("drop", async (e) => {
      e.preventDefault();
      dz.classList.remove("over");
      try {
        await this.openDropped(await collectDrop(e.dataTransfer));
      } catch (err) {
        this.wasmStatus(`Cannot read what was dropped: ${err.message}`, true);
      }
    });
    // A drop anywhere on the page counts; outside the zone the browser
    // would otherwise open the file.
    document.addEventListener("dragover", (e) => e.preventDefault());
    document.addEventListener("drop", async (e) => {
      if (dz.contains(e.target)) return;
      e.preventDefault();
      try { await this.openDropped(await collectDrop(e.dataTransfer)); } catch (err) { this.wasmStatus(err.message, true); }
    });
    for (const id of ["#folder-input", "#files-input"]) {
      $(id).addEventListener("change", async (e) => {
        const files = filesFromInput(e.target);
        e.target.value = "";
        if (files.length) await this.openDropped(files);
      });
    }
    dz.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && e.target === dz) $("#folder-input").click();
    });
    $("#choose-folder").addEventListener("click", () => $("#folder-input").click());
    $("#choose-files").addEventListener("click", () => $("#files-input").click());
    const tabs = $$("[role=tab]");
    for (const t of tabs) {
      t.addEventListener("click", () => this.showTab(t.id.slice(4)));
      t.addEventListener("keydown", (e) => {
        const i = tabs.indexOf(t);
        let j = -1;
        if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
        if (e.key === "ArrowLeft") j = (i + tabs.length - 1) % tabs.length;
        if (e.key === "Home") j = 0;
        if (e.key === "End") j = tabs.length - 1;
        if (j >= 0) {
          e.preventDefault();
          tabs[j].focus();
          this.showTab(tabs[j].id.slice(4));
        }
      });
    }
  }

  // checkWasm says whether dropped files can be opened, following a first
  // build until it ends.
  async checkWasm() {
    for (let building = false; ; ) {
      let st;
      try {
        st = await (await fetch("/wasm/status", { cache: "no-store" })).json();
      } catch {
        return; // the server went away: the next call says so
      }
      const dz = $("#dropzone");
      dz.dataset.wasm = st.state;
      if (dz.dataset.loaded) return;
      if (st.state === "unavailable") {
        this.wasmStatus(`Opening files from your disk needs the WASM engine, which is unavailable: ${st.reason}. The served partitions work without it.`, true);
        return;
      }
      if (st.state === "ready") {
        if (building) this.wasmStatus("The WASM engine is ready: drop a partition to open it in this page.");
        return;
      }
      building = true;
      this.wasmStatus("The WASM engine for dropped files is being built with the go command (first run of this version only)…");
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  wasmStatus(msg, bad) {
    const s = $("#wasm-status");
    s.textContent = msg;
    s.classList.toggle("bad", !!bad);
  }

  async openDropped(files) {
    if (!files.length) return;
    const total = files.reduce((n, f) => n + (f.file.size || 0), 0);
    try {
      await loadWasm((m) => this.wasmStatus(m));
    } catch (e) {
      this.wasmStatus(e.message, true);
      return;
    }
    this.wasmStatus(`Reading ${fmtNum(files.length)} files (${fmtBytes(total)}) in this page…`);
    let res;
    try {
      res = await globalThis.segkit.addFiles(files);
    } catch (e) {
      this.wasmStatus(`Cannot open the files: ${e.message}`, true);
      return;
    }
    if (!res.partitions.length) {
      this.wasmStatus(`No segment (.log) file among the ${res.files} files dropped.`, true);
      return;
    }
    this.engine = new WasmEngine(res.name);
    this.source = { kind: "dropped", name: res.name, demo: false, now: Date.now() };
    this.wasmStatus(`Opened ${fmtNum(res.files)} files (${fmtBytes(total)}) from your disk, parsed in this page: ${res.partitions.length} partition(s). Nothing was uploaded.`);
    $("#dropzone").dataset.loaded = "true";
    this.setPartitions(res.partitions, this.engine);
    await this.openPartition(res.partitions[0].dir);
  }

  setPartitions(list, engine) {
    this.partitions = list;
    const sel = clear($("#partition-select"));
    const dropped = engine.kind === "wasm";
    const group = el("optgroup", { label: dropped ? `Dropped: ${engine.name} (in this page)` : `Served: ${this.source?.name || ""}` });
    for (const p of list) group.append(el("option", { value: p.dir }, `${p.name} — ${p.segments} segments, ${fmtBytes(p.bytes)}`));
    sel.append(group);
    if (dropped && this.serverPartitions?.length) sel.append(el("option", { value: "__server__" }, "← back to the served partitions"));
    $("#source-name").textContent = dropped ? "dropped files, parsed in this page" : this.source?.demo ? "built-in demo" : "served read-only";
  }

  async openPartition(dir, reload = false) {
    const gen = ++this.gen;
    this.dir = dir;
    $("#partition-select").value = dir;
    this.scans.clear();
    this.counts.clear();
    this.plan = null;
    let part;
    try {
      part = await this.call("partition", { dir, reload: reload ? 1 : undefined });
    } catch (e) {
      this.showEmpty(`Cannot open ${dir}: ${e.message}`);
      return;
    }
    if (gen !== this.gen) return;
    delete document.body.dataset.empty;
    this.part = part;
    this.now = part.now;
    this.renderOverview();
    this.renderTimeline();
    this.lane.load(gen);
    this.indexed.load(gen);
    this.segmentView.clearWhy();
    if (!document.body.dataset.firstRender) document.body.dataset.firstRender = String(Math.round(performance.now()));
    const first = part.segments.find((s) => s.baseOffset <= part.logStartOffset && part.logStartOffset < s.nextOffset) || part.segments[0];
    this.retentionView.reset();
    this.compactionView.reset();
    this.verifyView.reset();
    this.plotsView.reset();
    if (first) this.selectSegment(first.baseOffset, "");
    this.runScans(gen);
  }

  // segments returns the live segments and the deleted ones, in offset
  // order, each with its suffix.
  allSegments() {
    const p = this.part;
    const out = p.segments.map((s) => ({ ...s, suffix: "" }));
    for (const d of p.deleted) out.push({ ...d, suffix: d.suffix, nextOffset: null, deletedFiles: true });
    out.sort((a, b) => a.baseOffset - b.baseOffset || (a.suffix ? -1 : 1));
    return out;
  }

  findSegment(base, suffix) {
    return this.allSegments().find((s) => s.baseOffset === base && (s.suffix || "") === (suffix || ""));
  }

  scanFor(seg, keepRows = true) {
    const k = scanKey(seg.baseOffset, seg.suffix);
    let s = this.scans.get(k);
    if (!s || (keepRows && !s.keepRows)) {
      s = new SegmentScan(this, seg, keepRows);
      this.scans.set(k, s);
      this.poke();
    }
    return s;
  }

  poke() {
    if (this.wake) {
      const w = this.wake;
      this.wake = null;
      w();
    }
  }

  // runScans pages through the segments one call at a time: the selected
  // segment first (its batch table), then every segment for the census
  // (batch and record counts on the timeline).
  async runScans(gen) {
    while (gen === this.gen) {
      let scan = null;
      const sel = this.selected && this.scans.get(scanKey(this.selected.baseOffset, this.selected.suffix));
      if (sel && !sel.done && !sel.failed) scan = sel;
      if (!scan) {
        for (const seg of this.part.segments) {
          const k = scanKey(seg.baseOffset, "");
          const c = this.counts.get(k);
          if (c && c.done) continue;
          scan = this.scans.get(k) || this.scanFor({ ...seg, suffix: "" }, false);
          if (scan.failed || scan.done) { scan = null; continue; }
          break;
        }
      }
      if (!scan) {
        await new Promise((r) => { this.wake = r; });
        continue;
      }
      try {
        await scan.step();
      } catch (e) {
        scan.failed = e.message;
        for (const f of scan.listeners) f(scan);
      }
      if (gen !== this.gen) return;
      if (!scan.suffix) this.counts.set(scan.key, { batches: scan.batches, records: scan.records, done: scan.done || !!scan.failed });
      this.updateCensus();
      await new Promise((r) => setTimeout(r, 0));
    }
  }

  updateCensus() {
    const p = this.part;
    let batches = 0, records = 0, done = 0;
    for (const s of p.segments) {
      const c = this.counts.get(scanKey(s.baseOffset, ""));
      if (!c) continue;
      batches += c.batches;
      records += c.records;
      if (c.done) done++;
      const bar = $(`#timeline [data-base="${s.baseOffset}"][data-suffix=""]`);
      if (bar) {
        bar.querySelector(".bar-count").textContent = `${fmtNum(c.batches)} batches · ${fmtNum(c.records)} records${c.done ? "" : "…"}`;
        Object.assign(bar.dataset, { batches: c.batches, records: c.records, counted: String(c.done) });
      }
    }
    const dd = $("#census");
    if (!dd) return;
    const all = done === p.segments.length;
    dd.dataset.done = String(all);
    dd.dataset.records = String(records);
    dd.dataset.batches = String(batches);
    dd.textContent = all ? `${fmtNum(records)} records in ${fmtNum(batches)} batches` : `counting… ${fmtNum(records)} records in ${fmtNum(batches)} batches so far (${done} of ${p.segments.length} segments)`;
  }

  renderOverview() {
    const p = this.part;
    $("#part-name").textContent = p.name + (p.dir !== "." ? ` (${p.dir})` : "");
    $("#part-note").textContent = p.note || "";
    const facts = clear($("#part-facts"));
    const fact = (dt, dd, attrs) => facts.append(el("div", null, el("dt", null, dt), el("dd", attrs, dd)));
    fact("log start offset", fmtNum(p.logStartOffset), { id: "fact-lso" });
    fact("log end offset", fmtNum(p.logEndOffset), { id: "fact-leo" });
    fact("high watermark", fmtNum(p.highWatermark), { title: `from ${p.highWatermarkFrom}` });
    fact("segments", `${p.segments.length}${p.deleted.length ? ` (+${p.deleted.length} deleted)` : ""}`, { id: "fact-segments", dataset: { count: p.segments.length } });
    for (const li of $$(".legend-remote")) li.hidden = !p.remote;
    if (p.remote) {
      const only = p.segments.filter((s) => s.where === "remote").length, both = p.segments.filter((s) => s.where === "both").length;
      fact("remote", `${p.remote.segments.length} segments (${only} remote only, ${both} copied and on local disk), from ${p.remote.metadata === "files" ? "the files alone" : "segkit's remote log metadata"}`,
        { id: "fact-remote", title: p.remote.dir, dataset: { segments: p.remote.segments.length, only, both } });
    }
    fact("size", fmtBytes(p.bytes));
    fact("records", "counting…", { id: "census", dataset: { done: "false" } });
    fact("now", fmtTime(this.now), { title: this.source?.demo ? "the demo's fixed present" : "this machine's clock" });
    fact("shutdown", p.cleanShutdown ? "clean" : "not clean (or unknown)");
    if (p.loadProblems.length) fact("problems opening", p.loadProblems.map((f) => `${f.file}: ${f.kind}: ${f.detail}`).join("; "));
  }

  // renderTimeline draws the segments as bars sized by bytes.
  renderTimeline() {
    const p = this.part;
    const tl = clear($("#timeline"));
    const segs = this.allSegments();
    const planned = new Map((this.plan?.deletions || []).map((d) => [d.baseOffset, d]));
    const maxSize = Math.max(1, ...segs.map((s) => s.size));
    segs.forEach((s, i) => {
      let status = "live", label = "";
      if (s.deletedFiles) {
        status = "deleted";
        label = "✕ deleted";
      } else if (planned.has(s.baseOffset)) {
        status = "expire";
        label = `${s.active ? "● active · " : ""}✂ next check deletes (${planned.get(s.baseOffset).reason})`;
      } else if (s.active) {
        status = "active";
        label = "● active";
      } else if (s.where === "remote") {
        status = "remote";
        label = "☁ remote only";
      }
      if (s.where === "both") label = label ? `${label} · ☁ copied` : "☁ copied";
      const isSel = this.selected && this.selected.baseOffset === s.baseOffset && (this.selected.suffix || "") === (s.suffix || "");
      const next = s.nextOffset ?? (segs[i + 1]?.baseOffset ?? null);
      const range = s.deletedFiles ? "unreadable" : next > s.baseOffset ? `offsets ${fmtNum(s.baseOffset)}–${fmtNum(next - 1)}` : "empty";
      const ts = s.deletedFiles ? fmtTime(s.lastModified) : `${fmtTime(s.firstTimestamp)} → ${fmtTime(s.largestTimestamp)}`;
      const bar = el("button", {
        type: "button", class: `seg-bar ${status}${s.active ? " is-active" : ""}${s.where === "both" ? " copied" : ""}${isSel ? " selected" : ""}`,
        dataset: { testid: "segment-bar", base: s.baseOffset, suffix: s.suffix || "", status, where: s.where || "local", plan: planned.has(s.baseOffset) ? "delete" : "keep" },
        "aria-pressed": isSel ? "true" : "false",
        "aria-label": `Segment ${s.baseOffset}${s.suffix ? " (deleted)" : ""}, ${range}, ${fmtBytes(s.size)}${label ? ", " + label : ""}`,
        title: s.note || (s.where === "remote" ? `${segName(s.baseOffset)}.log, read from the remote store ${p.remote?.dir || ""}` : `${segName(s.baseOffset)}.log${s.suffix || ""}`),
        style: { flexGrow: String(Math.max(s.size / maxSize, 0.02)), flexBasis: "0" },
        onclick: () => this.selectSegment(s.baseOffset, s.suffix || ""),
        onkeydown: (e) => {
          const bars = $$("#timeline .seg-bar");
          const j = bars.indexOf(e.currentTarget);
          if (e.key === "ArrowRight" && bars[j + 1]) { e.preventDefault(); bars[j + 1].focus(); }
          if (e.key === "ArrowLeft" && bars[j - 1]) { e.preventDefault(); bars[j - 1].focus(); }
        },
      },
      el("span", { class: "bar-head" }, el("strong", null, fmtNum(s.baseOffset)), label ? el("span", { class: "bar-status" }, label) : null),
      el("span", { class: "bar-line" }, fmtBytes(s.size), " · ", range),
      el("span", { class: "bar-line bar-count" }, s.deletedFiles ? "" : "…"),
      el("span", { class: "bar-line bar-time" }, ts));
      if (!s.deletedFiles && p.logStartOffset > s.baseOffset && next && p.logStartOffset < next) {
        const frac = (p.logStartOffset - s.baseOffset) / (next - s.baseOffset);
        bar.append(el("span", { class: "lso-marker", style: { left: `${(frac * 100).toFixed(1)}%` }, title: `log start offset ${p.logStartOffset}` }, `▼ log start ${fmtNum(p.logStartOffset)}`));
      } else if (!s.deletedFiles && p.logStartOffset === s.baseOffset) {
        bar.append(el("span", { class: "lso-marker", style: { left: "0%" }, title: `log start offset ${p.logStartOffset}` }, `▼ log start ${fmtNum(p.logStartOffset)}`));
      }
      tl.append(bar);
    });
    tl.dataset.segments = String(p.segments.length);
    this.updateCensus();
    this.indexed.layout();
  }

  setPlan(plan) {
    this.plan = plan;
    if (this.part) this.renderTimeline();
    this.segmentView.planChanged();
  }

  selectSegment(base, suffix) {
    const seg = this.findSegment(base, suffix);
    if (!seg) return null;
    this.selected = seg;
    for (const b of $$("#timeline .seg-bar")) {
      const on = Number(b.dataset.base) === base && b.dataset.suffix === (suffix || "");
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
    const scan = this.scanFor(seg, true);
    this.saveHash();
    this.segmentView.setSegment(seg, scan);
    this.plotsView.setSegment(seg, scan);
    this.poke();
    return scan;
  }

  // saveHash keeps the view in the URL (served partitions only; dropped
  // files cannot be named by a URL, so the hash is cleared for them).
  saveHash() {
    if (this.engine.kind !== "server") {
      if (location.hash) history.replaceState(null, "", location.pathname + location.search);
      return;
    }
    if (!this.dir) return;
    const h = new URLSearchParams({ dir: this.dir, tab: this.tab });
    if (this.selected) {
      h.set("seg", this.selected.baseOffset);
      if (this.selected.suffix) h.set("suffix", this.selected.suffix);
    }
    history.replaceState(null, "", "#" + h);
  }

  showTab(name) {
    if (!$(`#tab-${name}`)) return;
    this.tab = name;
    this.saveHash();
    for (const t of $$("[role=tab]")) {
      const on = t.id === `tab-${name}`;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
      $(`#${t.getAttribute("aria-controls")}`).hidden = !on;
    }
    if (name === "index") this.plotsView.show();
    if (name === "retention") this.retentionView.show();
    if (name === "compaction") this.compactionView.show();
    if (name === "verify") this.verifyView.show();
    if (name === "segment") this.segmentView.show();
  }

  // jumpTo shows what a verification finding is about.
  async jumpTo(f) {
    if (f.target === "retention") {
      this.showTab("retention");
      this.retentionView.highlight(f.segment);
      return;
    }
    if (f.segment < 0) {
      this.toast(`${f.file}: ${f.detail}`);
      return;
    }
    const seg = this.findSegment(f.segment, f.suffix || "");
    if (!seg) {
      this.toast(`Segment ${f.segment} is not in the partition any more.`);
      return;
    }
    this.selectSegment(seg.baseOffset, seg.suffix || "");
    if (f.target === "log") {
      this.showTab("segment");
      await this.segmentView.revealPosition(Math.max(0, f.position));
    } else if (f.target === "index" || f.target === "timeindex" || f.target === "txnindex") {
      this.showTab("index");
      this.plotsView.highlight(f.target, f.entry);
    } else {
      this.showTab("segment");
    }
  }
}

const app = new App();
globalThis.segviz = app; // for the console and the e2e tests
app.start();
