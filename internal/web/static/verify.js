// The verification view: segviz verify's findings (inspect.Verify), each
// a button that jumps to the bytes, index entry or segment concerned.

import { el, clear, fmtNum, fmtBytes, fmtTime, segName } from "./util.js";

const ICON = { error: "✖", warning: "⚠", info: "ℹ" };

export class VerifyView {
  constructor(app, panel) {
    this.app = app;
    this.panel = panel;
    this.runButton = el("button", { type: "button", id: "verify-run", onclick: () => this.run() }, "Verify the partition");
    this.progress = el("progress", { id: "verify-progress", max: "1", value: "0", hidden: true, "aria-label": "Verification progress" });
    this.cancelButton = el("button", { type: "button", id: "verify-cancel", hidden: true, onclick: () => this.cancel() }, "Cancel");
    this.summary = el("p", { id: "verify-summary", class: "summary", role: "status", "aria-live": "polite" });
    this.filters = el("fieldset", { class: "filters" }, el("legend", null, "Show"),
      ["error", "warning", "info"].map((l) => el("label", null, el("input", { type: "checkbox", checked: true, dataset: { level: l }, onchange: () => this.renderList() }), ` ${ICON[l]} ${l}s`)));
    this.list = el("ul", { id: "findings", class: "findings" });
    this.segs = el("div", { class: "records-wrap" });
    panel.append(
      el("h2", null, "Verification"),
      el("p", { class: "muted" }, "Reads every byte of the partition once, as segviz verify does: every entry and record of each .log (past damage, so that every damaged region is found), each index against its log, the producer snapshots, checkpoints, and the timestamps that make retention surprising. Each finding jumps to what it is about."),
      el("p", null, this.runButton, " ", this.progress, " ", this.cancelButton),
      this.summary, this.filters, this.list,
      el("details", null, el("summary", null, "Per segment"), this.segs));
  }

  reset() {
    this.result = null;
    this.running = null;
    clear(this.list);
    clear(this.segs);
    this.summary.textContent = "";
    this.panel.dataset.state = "idle";
  }

  // show starts the verification when the tab is opened, whatever the
  // partition's size: a long one shows its progress and can be cancelled.
  show() {
    if (!this.result && !this.running && this.app.part && this.panel.dataset.state !== "cancelled") this.run();
  }

  async cancel() {
    this.cancelButton.disabled = true;
    try {
      await this.app.call("cancel", { dir: this.app.dir });
    } catch (e) {
      this.app.toast(`Cannot cancel: ${e.message}`);
    }
  }

  async run() {
    const app = this.app, dir = app.dir;
    if (this.running) return this.running;
    this.panel.dataset.state = "running";
    this.runButton.disabled = true;
    this.progress.hidden = false;
    this.progress.removeAttribute("value");
    this.cancelButton.hidden = false;
    this.cancelButton.disabled = false;
    this.summary.textContent = `Verifying ${fmtBytes(app.part?.bytes || 0)}…`;
    const poll = setInterval(async () => {
      try {
        const p = await app.call("progress", { dir });
        if (p.total > 0 && this.running) {
          this.progress.max = p.total;
          this.progress.value = p.done;
          this.progress.dataset.done = String(p.done);
          this.summary.textContent = `Verifying… ${fmtBytes(p.done)} of ${fmtBytes(p.total)} read (${Math.floor((100 * p.done) / p.total)} %)`;
        }
      } catch {
        /* the verify call reports errors */
      }
    }, 400);
    this.running = (async () => {
      try {
        const r = await app.call("verify", { dir, now: app.retentionView.now, "retention.ms": app.retentionView.ms.value });
        if (dir !== app.dir) return;
        this.result = r;
        this.render();
      } catch (e) {
        if (e.kind === "cancelled") {
          this.summary.textContent = `Cancelled: ${e.message.replace(/^viz: cancelled: /, "")}. “Verify the partition” starts again.`;
          this.panel.dataset.state = "cancelled";
        } else {
          this.summary.textContent = `✖ ${e.message}`;
          this.panel.dataset.state = "failed";
        }
      } finally {
        clearInterval(poll);
        this.running = null;
        this.runButton.disabled = false;
        this.progress.hidden = true;
        this.cancelButton.hidden = true;
      }
    })();
    return this.running;
  }

  render() {
    const r = this.result;
    this.summary.textContent = `${r.ok ? "✓ No error" : `✖ ${fmtNum(r.errors)} error${r.errors === 1 ? "" : "s"}`}: ${fmtNum(r.segments)} segments, ${fmtNum(r.batches)} batches and ${fmtNum(r.records)} records read; ${fmtNum(r.warnings)} warning(s), ${fmtNum(r.infos)} note(s).${r.truncated ? " (Only the first findings are listed.)" : ""}`;
    this.panel.dataset.state = "done";
    this.panel.dataset.errors = String(r.errors);
    this.renderList();
    const t = el("table", { class: "records" }, el("thead", null, el("tr", null, ["segment", "size", "offsets", "batches", "records", "newest", "errors", "warnings"].map((h) => el("th", { scope: "col" }, h)))));
    const tb = el("tbody");
    for (const s of r.perSegment) {
      tb.append(el("tr", null, el("th", { scope: "row" }, s.file.split("/").pop()), el("td", null, fmtBytes(s.size)),
        el("td", null, s.firstOffset >= 0 ? `${fmtNum(s.firstOffset)}–${fmtNum(s.lastOffset)}` : "–"), el("td", null, fmtNum(s.batches)),
        el("td", null, fmtNum(s.records)), el("td", null, fmtTime(s.maxTimestamp)), el("td", null, fmtNum(s.errors)), el("td", null, fmtNum(s.warnings))));
    }
    t.append(tb);
    clear(this.segs).append(t);
  }

  renderList() {
    clear(this.list);
    const r = this.result;
    if (!r) return;
    const show = new Set([...this.filters.querySelectorAll("input:checked")].map((i) => i.dataset.level));
    const rank = { error: 0, warning: 1, info: 2 };
    const shown = r.findings.filter((f) => show.has(f.level)).map((f, i) => [f, i]).sort((a, b) => (rank[a[0].level] ?? 3) - (rank[b[0].level] ?? 3) || a[1] - b[1]).map(([f]) => f);
    if (!shown.length) this.list.append(el("li", { class: "muted" }, r.findings.length ? "No finding at the levels chosen." : "No findings."));
    for (const f of shown) {
      const where = `${f.file}${f.position >= 0 ? ` @ ${fmtNum(f.position)}` : ""}${f.entry >= 0 ? ` (entry ${f.entry})` : ""}`;
      const jump = f.target === "partition" ? "" : f.target === "retention" ? " → retention" : f.target === "log" ? " → bytes" : " → index plot";
      this.list.append(el("li", { class: f.level },
        el("button", { type: "button", class: "finding", dataset: { kind: f.kind, level: f.level, target: f.target }, onclick: () => this.app.jumpTo(f), title: jump ? `show it${jump}` : "" },
          el("span", { class: "lvl" }, `${ICON[f.level] || ""} ${f.level}`), " ",
          el("code", null, f.kind), " ",
          el("span", { class: "where" }, where), jump ? el("span", { class: "jump" }, jump) : ""),
        el("p", { class: "detail" }, f.detail)));
    }
  }
}

export { segName };
