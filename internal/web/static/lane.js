// The timeline lane, under the segment strip: the instants of the
// partition's timeline (.segkit/timeline: rolls, retention deletions,
// compactions, truncations, recoveries, savepoints, restores, rollbacks),
// placed along time and coloured by action, each with a symbol too; a click
// shows the instant's payload. The data is the timeline method's
// (viz.Session.Timeline): the instants as `segviz history --json` prints
// them, with a summary and the offsets each touched.

import { el, clear, $, $$, fmtNum, fmtTime } from "./util.js";

// What each action is called in the legend, and its symbol (the colour is
// the class act-<action>): state is never told by colour alone.
export const ACTIONS = {
  roll: { sym: "↻", name: "roll" },
  clean: { sym: "✂", name: "clean (retention deleted segments)" },
  compaction: { sym: "⇲", name: "compaction" },
  truncate: { sym: "⌫", name: "truncate" },
  recovery: { sym: "✚", name: "recovery" },
  tier: { sym: "☁", name: "tier" },
  savepoint: { sym: "⚑", name: "savepoint (legal hold)" },
  restore: { sym: "⟲", name: "restore" },
  rollback: { sym: "↶", name: "rollback" },
};

const actionOf = (a) => ACTIONS[a] || { sym: "•", name: a };

export class TimelineLane {
  constructor(app) {
    this.app = app;
    this.lane = $("#lane");
    this.legend = $("#lane-legend");
    this.detail = $("#lane-detail");
    this.status = $("#lane-status");
    this.data = null;
    this.sel = -1;
  }

  reset() {
    this.data = null;
    this.sel = -1;
    clear(this.lane);
    clear(this.detail);
    this.lane.dataset.state = "loading";
    this.status.textContent = "Reading the timeline…";
  }

  // load reads the lane of the open partition; gen is the app's
  // generation, so that a stale answer is dropped.
  async load(gen) {
    this.reset();
    let d;
    try {
      d = await this.app.call("timeline", { dir: this.app.dir });
    } catch (e) {
      if (gen !== this.app.gen) return;
      this.lane.dataset.state = "error";
      this.status.textContent = `✖ Cannot read the timeline: ${e.message}`;
      return;
    }
    if (gen !== this.app.gen) return;
    this.data = d;
    this.render();
  }

  render() {
    const d = this.data;
    clear(this.legend);
    for (const a of d.actions) {
      const x = actionOf(a);
      this.legend.append(el("li", null, el("span", { class: `swatch act act-${a}`, "aria-hidden": "true" }, x.sym), ` ${x.name}`));
    }
    clear(this.lane);
    // Which partition and engine answered: a test (or a reader of the
    // DOM) can tell this lane from the previous partition's.
    Object.assign(this.lane.dataset, { state: "ready", instants: String(d.instants.length), dir: d.dir, engine: this.app.engine.kind });
    let msg = "";
    if (!d.instants.length) {
      this.lane.append(el("p", { class: "empty", id: "lane-empty" },
        "The timeline is empty: segkit has recorded no change to this partition. ",
        el("code", null, "segviz retention --apply"), " and the engine record instants (rolls, retention deletions, savepoints…) in ",
        el("code", null, ".segkit/timeline"), " inside the partition directory; a broker's own actions are not recorded there."));
    } else {
      const t0 = d.instants[0].instant, t1 = d.instants[d.instants.length - 1].completed;
      const span = Math.max(t1 - t0, 1);
      // Instants close in time go to the next row, so that every one can
      // be seen and clicked (three rows; past that they overlap).
      const rows = [-Infinity, -Infinity, -Infinity];
      const track = el("div", { class: "lane-track" });
      d.instants.forEach((inst, i) => {
        const left = ((inst.instant - t0) / span) * 96 + 2;
        let row = rows.findIndex((r) => left - r >= 3.2);
        if (row < 0) row = 0;
        rows[row] = left;
        const x = actionOf(inst.action);
        track.append(el("button", {
          type: "button", class: `instant act-${inst.action}${inst.imported ? " imported" : ""}`,
          style: { left: `${left.toFixed(2)}%`, top: `${row * 1.9 + 0.3}em` },
          dataset: { testid: "instant", i, instant: inst.instant, completed: inst.completed, action: inst.action, time: inst.instantTime },
          "aria-pressed": "false",
          "aria-label": `${inst.action} at ${fmtTime(inst.instant, true)}${inst.imported ? " (imported)" : ""}: ${inst.summary}`,
          title: `${inst.action} ${inst.instantTime} — ${inst.summary}`,
          onclick: () => this.select(i),
          onkeydown: (e) => {
            const all = $$("#lane .instant");
            if (e.key === "ArrowRight" && all[i + 1]) { e.preventDefault(); all[i + 1].focus(); }
            if (e.key === "ArrowLeft" && all[i - 1]) { e.preventDefault(); all[i - 1].focus(); }
          },
        }, x.sym));
      });
      this.lane.append(track, el("div", { class: "lane-axis" },
        el("span", null, fmtTime(t0)), el("span", null, `${fmtNum(d.instants.length)} instant${d.instants.length > 1 ? "s" : ""}`), el("span", null, fmtTime(t1))));
      msg = "Click an instant for its payload.";
    }
    if (d.truncated) msg += ` Only the latest ${fmtNum(d.instants.length)} of ${fmtNum(d.total)} instants are shown.`;
    if (d.pending) msg += ` ${fmtNum(d.pending)} instant${d.pending > 1 ? "s" : ""} left requested or inflight by an interrupted run, not shown: the next segviz retention --apply resolves them.`;
    this.status.textContent = msg.trim();
    if (this.sel >= 0 && this.sel < d.instants.length) this.select(this.sel);
  }

  // select shows instant i's payload.
  select(i) {
    const inst = this.data?.instants[i];
    if (!inst) return;
    this.sel = i;
    for (const b of $$("#lane .instant")) {
      const on = Number(b.dataset.i) === i;
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
    const x = actionOf(inst.action);
    const offsets = inst.offsets.length
      ? inst.offsets.map((r) => `${r.what} ${r.to - r.from === 1 ? `offset ${fmtNum(r.from)}` : `offsets ${fmtNum(r.from)}–${fmtNum(r.to - 1)}`}`).join("; ")
      : "no offsets";
    clear(this.detail).append(
      el("h3", { id: "lane-detail-h" }, `${x.sym} ${inst.action} `, el("span", { class: "mono" }, inst.instantTime)),
      el("p", { id: "lane-summary" }, inst.summary),
      el("dl", { class: "facts" },
        el("div", null, el("dt", null, "requested"), el("dd", null, fmtTime(inst.instant, true))),
        el("div", null, el("dt", null, "completed"), el("dd", null, `${fmtTime(inst.completed, true)} (${inst.completedTime})`)),
        el("div", null, el("dt", null, "state"), el("dd", null, inst.state + (inst.imported ? ", imported from another record (a broker's log)" : ""))),
        el("div", null, el("dt", null, "offsets"), el("dd", { id: "lane-offsets" }, offsets))),
      el("pre", { id: "lane-payload", class: "payload", tabindex: "0", "aria-label": "The instant's payload (JSON)" }, JSON.stringify(inst.detail, null, 2)));
    this.detail.dataset.instant = String(inst.instant);
    this.detail.dataset.action = inst.action;
  }

  // reveal selects the instant of instant time t (17 digits: the offset
  // box's "show in the lane") and scrolls it into view.
  reveal(t) {
    const i = this.data?.instants.findIndex((x) => x.instantTime === t) ?? -1;
    if (i < 0) return false;
    this.select(i);
    $(`#lane .instant[data-i="${i}"]`)?.focus();
    this.detail.scrollIntoView({ block: "nearest" });
    return true;
  }
}
