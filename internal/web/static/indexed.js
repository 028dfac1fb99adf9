// The indexed lane, under the segment strip (segviz serve --lake CATALOG):
// the indexer's data files (segviz-lake files --json, which the server
// runs and filters to the partition shown: GET /api/lake?dir=…), each
// drawn as its offset range over the segments' bars, coloured and labelled
// by time bucket; expired files are hatched and marked ✕. A click shows the
// file's statistics. Bars are sized by bytes, not offsets, so an offset is
// placed inside the bar of the segment holding it, in proportion to the
// segment's offsets: a file's range starts where its first offset is and
// ends where the next offset starts, and the files tile the lane as they
// tile the offsets.

import { el, clear, $, $$, fmtNum, fmtBytes } from "./util.js";

// How many buckets get a colour of their own before the colours repeat
// (the label says which bucket in any case), and how many the legend names.
const BUCKET_COLOURS = 6;
const LEGEND_BUCKETS = 24;
const FOLLOW_MS = 10000;

// shortBucket is a bucket's short label: "07:00", with the date when the
// lane spans several days.
const shortBucket = (b, days) => {
  const t = b.replace(/:00Z$/, "Z");
  return days ? t.slice(5, 10) + " " + t.slice(11, 16) : t.slice(11, 16);
};

export class IndexedLane {
  constructor(app) {
    this.app = app;
    this.section = $("#indexed-section");
    this.lane = $("#indexed");
    this.legend = $("#indexed-legend");
    this.status = $("#indexed-status");
    this.detail = $("#indexed-detail");
    this.data = null;
    this.sel = null; // the selected file's id
    this.inflight = false;
    this.follow = null;
    $("#indexed-refresh").addEventListener("click", () => this.load(this.app.gen));
    $("#indexed-follow").addEventListener("change", (e) => this.setFollow(e.target.checked));
    const tl = $("#timeline");
    // The lane scrolls with the strip, whose bars it is drawn over.
    tl.addEventListener("scroll", () => { if (this.lane.scrollLeft !== tl.scrollLeft) this.lane.scrollLeft = tl.scrollLeft; });
    this.lane.addEventListener("scroll", () => { if (tl.scrollLeft !== this.lane.scrollLeft) tl.scrollLeft = this.lane.scrollLeft; });
    if (globalThis.ResizeObserver) new ResizeObserver(() => this.layout()).observe(tl);
  }

  hide() {
    this.section.hidden = true;
    this.data = null;
    this.setFollow(false);
  }

  // load asks the server for the partition's data files (segviz-lake runs
  // afresh each time); gen is the app's generation, so that a stale answer
  // is dropped. Dropped files have no catalog: the lane is hidden.
  async load(gen) {
    if (this.app.engine.kind !== "server" || !this.app.dir) {
      this.hide();
      return;
    }
    const dir = this.app.dir;
    if (this.data && this.data.dir !== dir) this.sel = null;
    this.lane.dataset.state = "loading";
    this.status.classList.remove("bad");
    this.status.textContent = "Asking segviz-lake for the indexed files…";
    let d;
    this.inflight = true;
    try {
      d = await this.app.server.call("lake", { dir });
    } catch (e) {
      this.inflight = false;
      if (gen !== this.app.gen) return;
      this.section.hidden = false;
      this.data = null;
      clear(this.lane);
      clear(this.legend);
      clear(this.detail);
      Object.assign(this.lane.dataset, { state: "error", dir, files: "0" });
      this.status.classList.add("bad");
      this.status.textContent = `✖ No indexed files: ${e.message}`;
      return;
    }
    this.inflight = false;
    if (gen !== this.app.gen) return;
    if (!d.enabled) {
      this.hide();
      this.lane.dataset.state = "disabled";
      return;
    }
    this.section.hidden = false;
    this.data = d;
    this.render();
  }

  setFollow(on) {
    clearInterval(this.follow);
    this.follow = null;
    $("#indexed-follow").checked = on;
    // A tick while the last run is still answering (a slow catalog) is
    // skipped, so that follow never queues runs.
    if (on) this.follow = setInterval(() => { if (!this.inflight && !this.section.hidden && document.visibilityState !== "hidden") this.load(this.app.gen); }, FOLLOW_MS);
  }

  // segments are the strip's bars with the offsets each holds, in strip
  // order: [lo, hi) and the bar's element.
  segments() {
    const p = this.app.part;
    if (!p) return [];
    const segs = this.app.allSegments();
    const out = [];
    segs.forEach((s, i) => {
      const bar = $(`#timeline .seg-bar[data-base="${s.baseOffset}"][data-suffix="${s.suffix || ""}"]`);
      let hi = s.nextOffset;
      if (hi === null || hi === undefined) {
        const next = segs.slice(i + 1).find((n) => n.baseOffset > s.baseOffset);
        hi = next ? next.baseOffset : s.baseOffset;
      }
      if (bar) out.push({ lo: s.baseOffset, hi, bar, deleted: !!s.deletedFiles });
    });
    return out;
  }

  render() {
    const d = this.data;
    const files = d.files;
    const buckets = [...new Set(files.map((f) => f.bucket))].sort();
    const days = new Set(buckets.map((b) => b.slice(0, 10))).size > 1;
    this.bucketIndex = new Map(buckets.map((b, i) => [b, i]));
    this.days = days;
    clear(this.legend);
    buckets.slice(0, LEGEND_BUCKETS).forEach((b, i) => this.legend.append(
      el("li", { dataset: { bucket: b } }, el("span", { class: `swatch bucket b${i % BUCKET_COLOURS}`, "aria-hidden": "true" }), ` bucket ${b}`)));
    if (buckets.length > LEGEND_BUCKETS) this.legend.append(el("li", null, `… and ${fmtNum(buckets.length - LEGEND_BUCKETS)} more buckets (the colours repeat; each file is labelled with its bucket)`));
    this.legend.append(el("li", null, el("span", { class: "swatch bucket expired", "aria-hidden": "true" }), " ✕ expired: below the partition's earliest offset"));
    this.layout();
    const expired = files.filter((f) => f.expired).length;
    let msg = files.length
      ? `${fmtNum(files.length)} data file${files.length > 1 ? "s" : ""} of ${d.topic} partition ${d.partition}${expired ? ` (${fmtNum(expired)} expired)` : ""} in ${fmtNum(buckets.length)} time bucket${buckets.length > 1 ? "s" : ""}, from ${d.catalog}. Click a file for its statistics.`
      : `No data file of ${d.topic} partition ${d.partition} in ${d.catalog} (${fmtNum(d.catalogFiles)} files of other tables or partitions): index it with segviz-lake index --catalog ${d.catalog} DIR.`;
    if (d.note) msg = d.note;
    if (d.truncated) msg += ` Only the last ${fmtNum(files.length)} of ${fmtNum(d.total)} files are drawn.`;
    if (d.ranAt) msg += ` segviz-lake ran at ${new Date(d.ranAt).toISOString().slice(11, 19)}Z (${fmtNum(d.took)} ms).`;
    this.status.textContent = msg;
    const sel = files.find((f) => f.id === this.sel);
    if (sel) this.select(sel.id);
    else clear(this.detail);
  }

  // layout places the files over the bars as they are laid out now (after
  // a render of the strip, a resize).
  layout() {
    const d = this.data;
    if (!d || this.section.hidden || d.dir !== this.app.dir) return;
    const tl = $("#timeline");
    const segs = this.segments();
    const tlRect = tl.getBoundingClientRect();
    for (const s of segs) {
      const r = s.bar.getBoundingClientRect();
      s.x0 = r.left - tlRect.left + tl.scrollLeft;
      s.x1 = r.right - tlRect.left + tl.scrollLeft;
    }
    const live = segs.filter((s) => s.hi > s.lo);
    // x is where offset o starts: inside the bar of the segment holding
    // it; an offset between segments starts the next bar, so that the file
    // before it reaches that bar and the files meet; the log end ends the
    // last bar. Only for o from the first segment's base on.
    const x = (o) => {
      // The first segment whose offsets end after o (binary search: a
      // partition can have thousands of segments and files).
      let lo = 0, hi = live.length;
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (live[m].hi <= o) lo = m + 1;
        else hi = m;
      }
      const s = live[lo];
      if (!s) return live[live.length - 1].x1;
      if (o < s.lo) return s.x0;
      return s.x0 + ((o - s.lo) / (s.hi - s.lo)) * (s.x1 - s.x0);
    };
    const lane = clear(this.lane);
    const track = el("div", { class: "indexed-track", style: { width: `${tl.scrollWidth}px` } });
    const outside = el("div", { class: "indexed-outside" }), after = el("div", { class: "indexed-outside" });
    const end = live.length ? live[live.length - 1].hi : 0;
    // Files sharing offsets (one range written as a file per time bucket)
    // are stacked: each row holds files whose offsets do not overlap.
    const rowEnds = [];
    const idxRect = lane.getBoundingClientRect();
    const shift = tlRect.left - idxRect.left;
    let placed = 0;
    const sorted = d.files.map((f, i) => ({ f, i })).sort((a, b) => a.f.startOffset - b.f.startOffset || a.f.endOffset - b.f.endOffset || a.i - b.i);
    const first = live.length ? live[0].lo : Infinity;
    for (const { f } of sorted) {
      const bi = this.bucketIndex.get(f.bucket);
      const label = shortBucket(f.bucket, this.days);
      const attrs = {
        type: "button",
        class: `ifile bucket b${bi % BUCKET_COLOURS}${f.expired ? " expired" : ""}`,
        dataset: { testid: "indexed-file", id: f.id, start: f.startOffset, end: f.endOffset, bucket: f.bucket, expired: String(f.expired), rows: f.rows },
        "aria-pressed": "false",
        "aria-label": `Data file ${f.id}: offsets ${f.startOffset}–${f.endOffset}, bucket ${f.bucket}, ${fmtNum(f.rows)} rows, ${fmtBytes(f.bytes)}${f.expired ? ", expired" : ""}`,
        title: `#${f.id} offsets ${fmtNum(f.startOffset)}–${fmtNum(f.endOffset)} · bucket ${f.bucket} · ${fmtNum(f.rows)} rows · ${fmtBytes(f.bytes)}${f.expired ? " · ✕ expired" : ""}`,
        onclick: () => this.select(f.id),
        onkeydown: (e) => this.key(e),
      };
      if (f.endOffset < first || f.startOffset >= end) {
        // Below the first segment (its segments are gone), or past the
        // log end the strip shows (a Reload reads the partition again).
        const below = f.endOffset < first;
        attrs.dataset.placed = below ? "below" : "after";
        (below ? outside : after).append(el("button", attrs, `${f.expired ? "✕ " : ""}#${f.id} ${fmtNum(f.startOffset)}–${fmtNum(f.endOffset)} · ${label}`));
        continue;
      }
      let row = rowEnds.findIndex((last) => last < f.startOffset);
      if (row < 0) row = rowEnds.length;
      rowEnds[row] = f.endOffset;
      // A file partly below the first segment starts with its bar.
      const left = x(Math.max(f.startOffset, first)) + shift, width = Math.max(x(f.endOffset + 1) + shift - left, 0);
      Object.assign(attrs.dataset, { placed: f.startOffset < first ? "partial" : "over", row, left: left.toFixed(2), width: width.toFixed(2) });
      attrs.style = { left: `${left.toFixed(2)}px`, width: `${width.toFixed(2)}px`, top: `${row * 2.1 + 0.25}em` };
      track.append(el("button", attrs, el("span", { class: "ifile-label" }, `${f.expired ? "✕ " : ""}${label} #${f.id}`)));
      placed++;
    }
    track.style.height = `${Math.max(rowEnds.length, 1) * 2.1 + 0.5}em`;
    // A redraw (the strip resized) while a new answer is on its way draws
    // the last one: the lane is still loading until that answer comes.
    Object.assign(lane.dataset, { state: this.inflight ? "loading" : "ready", dir: d.dir, files: String(d.files.length), placed: String(placed), rows: String(rowEnds.length) });
    if (!d.files.length) {
      lane.append(el("p", { class: "empty", id: "indexed-empty" }, "No data file to draw."));
      return;
    }
    lane.append(track);
    if (outside.childElementCount) {
      lane.prepend(el("p", { class: "indexed-outside-h muted" }, "Below the first segment (their segments are deleted):"), outside);
    }
    if (after.childElementCount) {
      lane.append(el("p", { class: "indexed-outside-h muted" }, "Past the log end shown above (Reload reads the partition again):"), after);
    }
    lane.scrollLeft = tl.scrollLeft;
    if (this.sel !== null) this.mark(this.sel);
  }

  key(e) {
    const all = $$("#indexed .ifile");
    const i = all.indexOf(e.currentTarget);
    if (e.key === "ArrowRight" && all[i + 1]) { e.preventDefault(); all[i + 1].focus(); }
    if (e.key === "ArrowLeft" && all[i - 1]) { e.preventDefault(); all[i - 1].focus(); }
    if (e.key === "Home" && all[0]) { e.preventDefault(); all[0].focus(); }
    if (e.key === "End" && all.length) { e.preventDefault(); all[all.length - 1].focus(); }
  }

  mark(id) {
    for (const b of $$("#indexed .ifile")) {
      const on = Number(b.dataset.id) === id;
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  // segmentsOf names the segments holding a file's offsets.
  segmentsOf(f) {
    const segs = this.segments().filter((s) => s.hi > s.lo && s.lo <= f.endOffset && f.startOffset < s.hi);
    if (!segs.length) return "none on disk (deleted)";
    return segs.map((s) => `${fmtNum(s.lo)}${s.deleted ? " (deleted)" : ""}`).join(", ");
  }

  // select shows file id's statistics.
  select(id) {
    const f = this.data?.files.find((x) => x.id === id);
    if (!f) return;
    this.sel = id;
    this.mark(id);
    const text = (v) => (v === null || v === undefined ? el("span", { class: "null" }, "null") : v);
    const n = f.endOffset - f.startOffset + 1;
    clear(this.detail).append(
      el("h3", { id: "indexed-detail-h" }, `Data file #${f.id} `, el("span", { class: "muted" }, `${f.topic}-${f.partition}`), f.expired ? el("span", { class: "warn" }, " ✕ expired") : null),
      el("dl", { class: "facts" },
        el("div", null, el("dt", null, "offsets"), el("dd", { id: "indexed-offsets" }, `${fmtNum(f.startOffset)}–${fmtNum(f.endOffset)} (${fmtNum(n)} offset${n > 1 ? "s" : ""}, inclusive)`)),
        el("div", null, el("dt", null, "bucket"), el("dd", { id: "indexed-bucket" }, f.bucket)),
        el("div", null, el("dt", null, "rows"), el("dd", { id: "indexed-rows" }, fmtNum(f.rows))),
        el("div", null, el("dt", null, "bytes"), el("dd", { id: "indexed-bytes", title: `${f.bytes} bytes` }, `${fmtBytes(f.bytes)} (${fmtNum(f.bytes)} B)`)),
        el("div", null, el("dt", null, "state"), el("dd", { id: "indexed-state" }, f.expired ? "expired: below the partition's earliest offset" : "live")),
        el("div", null, el("dt", null, "segments"), el("dd", { id: "indexed-segments" }, this.segmentsOf(f))),
        el("div", null, el("dt", null, "checksum (SHA-256)"), el("dd", { id: "indexed-checksum", class: "mono checksum" }, f.checksum))),
      el("table", { class: "records indexed-columns", id: "indexed-columns" },
        el("caption", null, `${fmtNum(f.columns.length)} leaf column${f.columns.length === 1 ? "" : "s"}: exact statistics (segviz-lake files --json)`),
        el("thead", null, el("tr", null, ...["column", "type", "min", "max", "nulls", "NaNs"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", null, ...f.columns.map((c) => el("tr", { dataset: { column: c.name } },
          el("th", { scope: "row", class: "mono" }, c.name),
          el("td", null, c.type),
          el("td", { class: "min text" }, text(c.minText)),
          el("td", { class: "max text" }, text(c.maxText)),
          el("td", { class: "nulls" }, fmtNum(c.nulls)),
          el("td", { class: "nans" }, fmtNum(c.nans)))))));
    this.detail.dataset.id = String(f.id);
  }
}
