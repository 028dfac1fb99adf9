package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestCompactionView opens a compacted partition in the served page's
// Compaction tab and checks, for the default settings and after each
// change of the what-if's inputs, that the page shows the dirty ratio,
// the cleanable range, the segments' states and the per-segment removals
// that compaction.Plan reports for the same files and settings; then it
// drops the log directory on the page and checks that the WASM engine
// shows the same.
func TestCompactionView(t *testing.T) {
	setup(t)
	logDir, dir := compactedPartition(t)
	srv := startServer(t, logDir)
	ctx := newBrowser(t)
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"), chromedp.Click("#tab-compaction"))

	set := func(what, sel, value string) {
		t.Helper()
		do(t, ctx, what, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const i = document.querySelector(%q); i.value = %q; i.dispatchEvent(new Event('change')); })()`, sel, value)))
	}
	steps := []struct {
		name   string
		change func()
		// sent: what the query must hold once the page has planned.
		sent      map[string]string
		states    []string
		policy    string // the select's
		compacted bool
		cleanable bool
	}{
		{name: "topic settings (cleanup.policy delete: as if compacted)",
			states: []string{"clean", "dirty", "dirty", "dirty", "active"}, policy: "delete", cleanable: true},
		{name: "cleanup.policy compact", change: func() { set("cleanup.policy", "#cmp-cleanup-policy", "compact") },
			sent:   map[string]string{"cleanup.policy": "compact"},
			states: []string{"clean", "dirty", "dirty", "dirty", "active"}, policy: "compact", compacted: true, cleanable: true},
		{name: "min.cleanable.dirty.ratio 0.99", change: func() { set("the ratio", "#cmp-min-ratio-value", "0.99") },
			sent:   map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.99"},
			states: []string{"clean", "dirty", "dirty", "dirty", "active"}, policy: "compact", compacted: true, cleanable: false},
		{name: "min.compaction.lag.ms 95 minutes", change: func() {
			set("the ratio", "#cmp-min-ratio-value", "0.5")
			set("min.compaction.lag.ms", "#cmp-min-lag", fmt.Sprint(95*60_000))
		},
			sent:   map[string]string{"min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": fmt.Sprint(95 * 60_000)},
			states: []string{"clean", "dirty", "dirty", "uncleanable", "active"}, policy: "compact", compacted: true, cleanable: true},
	}
	for i, st := range steps {
		if st.change != nil {
			st.change()
		}
		page := settledCompaction(t, ctx, st.sent)
		rep, agree := checkCompaction(t, st.name, page, dir)
		if !slices.Equal(page.states(), st.states) || page.Compacted != st.compacted || rep.Cleanable != st.cleanable || page.Policy != st.policy {
			t.Errorf("%s: states %v (want %v), compacted %v (want %v), cleanable %v (want %v), cleanup.policy shown %q (want %q)",
				st.name, page.states(), st.states, page.Compacted, st.compacted, rep.Cleanable, st.cleanable, page.Policy, st.policy)
		}
		if asIf := strings.Contains(page.Note, "cleanup.policy is delete — what a compaction would do"); asIf == st.compacted {
			t.Errorf("%s: the note says %q", st.name, page.Note)
		}
		if !agree {
			continue
		}
		t.Logf("%s: the page and compaction.Plan agree: range [%d, %d), dirty ratio %.4f, cleanable %v, %d records removed",
			st.name, rep.FirstDirtyOffset, rep.FirstUncleanableOffset, rep.CleanableRatio, rep.Cleanable, rep.Removed.Records)
		if i == 0 || i == len(steps)-1 {
			shot(t, ctx, fmt.Sprintf("13-compaction-%d.png", i+1))
		}
	}

	// Until when offset 0 (u0's first value) can be read, under the last
	// settings: compaction.ReadableUntil's answer.
	last := settledCompaction(t, ctx, steps[len(steps)-1].sent)
	set("offset 0", "#cmp-offset", "0")
	do(t, ctx, "ask about offset 0", chromedp.Evaluate[chromedp.Void](`document.querySelector('#cmp-offset').dispatchEvent(new Event('input'))`))
	waitFor(t, ctx, "the answer for offset 0", `!!document.querySelector('#cmp-offset-out').dataset.kind`, 60*time.Second)
	cfg, now := planConfig(t, last.Query)
	until, err := compaction.ReadableUntil(vfs.OS(), filepath.ToSlash(dir), cfg, compaction.Options{Clock: msClock{&now}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := eval[string](t, ctx, `document.querySelector('#cmp-offset-out').textContent`)
	if kind := eval[string](t, ctx, `document.querySelector('#cmp-offset-out').dataset.kind`); kind != string(until.Kind) || !strings.Contains(out, until.Explanation) {
		t.Errorf("offset 0: the page says %s: %q; compaction.ReadableUntil: %s: %q", kind, out, until.Kind, until.Explanation)
	}

	// The same log directory, dropped on the page: the WASM engine plans
	// the same clean.
	do(t, ctx, "forget the served plan", chromedp.Evaluate[chromedp.Void](`(() => { const p = document.querySelector('#panel-compaction'); delete p.dataset.query; p.dataset.state = 'stale'; })()`))
	do(t, ctx, "drop the log directory", chromedp.SetUploadFiles("#folder-input", []string{logDir}, chromedp.NodeReady))
	waitFor(t, ctx, "the dropped partition", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelector('#source-name').textContent.startsWith('dropped')`, 180*time.Second)
	page := settledCompaction(t, ctx, nil)
	rep, _ := checkCompaction(t, "dropped", page, dir)
	if !slices.Equal(page.states(), steps[0].states) || !rep.Cleanable {
		t.Errorf("dropped: states %v, cleanable %v", page.states(), rep.Cleanable)
	}
	shot(t, ctx, "14-compaction-dropped.png")
}

// compactedPartition writes kafka-logs/users-0, five segments, with a
// cleaner-offset-checkpoint entry at 10 (so the first segment is clean),
// its records two hours to an hour and twenty minutes old:
//
//	 0 (-120 min): u0..u9 = v1
//	10 (-110 min): u0..u4 = v2, one record without a key
//	16 (-100 min): tombstones u5, u6; k1, k2 in a transaction that aborts
//	21 (-90 min):  u0 = v3, u7 = v2
//	23 (active, -80 min): u1 = v3
func compactedPartition(t *testing.T) (logDir, dir string) {
	t.Helper()
	logDir = filepath.Join(t.TempDir(), "kafka-logs")
	dir = filepath.Join(logDir, "users-0")
	base := time.Now().Add(-2 * time.Hour).UnixMilli()
	ms := base
	clk := msClock{&ms}
	cfg, err := config.Parse(map[string]string{config.CleanupPolicy: config.CleanupPolicyCompact})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var b record.Builder
	add := func(batch []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch, 0); err != nil {
			t.Fatal(err)
		}
		ms += 1000
	}
	put := func(spec record.BatchSpec, kvs ...string) {
		t.Helper()
		var recs []record.Record
		for i := 0; i < len(kvs); i += 2 {
			r := record.Record{Timestamp: ms}
			if kvs[i] != "" {
				r.Key = []byte(kvs[i])
			}
			if kvs[i+1] != "-" {
				r.Value = []byte(kvs[i+1])
			}
			recs = append(recs, r)
		}
		add(b.AppendBatch(nil, &spec, recs))
	}
	segment := func(minutes int64) {
		t.Helper()
		if ms != base {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		ms = base + minutes*60_000
	}
	plain := record.NewBatchSpec(0, compress.None)
	segment(0)
	put(plain, "u0", "v1", "u1", "v1", "u2", "v1", "u3", "v1", "u4", "v1")
	put(plain, "u5", "v1", "u6", "v1", "u7", "v1", "u8", "v1", "u9", "v1")
	segment(10)
	put(plain, "u0", "v2", "u1", "v2")
	put(plain, "u2", "v2", "u3", "v2", "u4", "v2")
	put(plain, "", "no key")
	segment(20)
	put(plain, "u5", "-", "u6", "-")
	txn := record.NewBatchSpec(0, compress.None)
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 7, 0, 0, true
	put(txn, "k1", "x", "k2", "y")
	marker := record.NewBatchSpec(0, compress.None)
	marker.ProducerID, marker.ProducerEpoch = 7, 0
	add(b.AppendEndTxnMarker(nil, &marker, record.EndTxnMarker{Type: record.ControlAbort}, ms))
	segment(30)
	put(plain, "u0", "v3", "u7", "v2")
	segment(40)
	put(plain, "u1", "v3")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	tp := checkpoint.TopicPartition{Topic: "users", Partition: 0}
	if err := checkpoint.WriteOffsets(vfs.OS(), filepath.ToSlash(filepath.Join(logDir, compaction.CleanerCheckpointFile)), map[checkpoint.TopicPartition]int64{tp: 10}); err != nil {
		t.Fatal(err)
	}
	return logDir, dir
}

type msClock struct{ ms *int64 }

func (c msClock) Now() time.Time { return time.UnixMilli(*c.ms) }

// compactionPage is what the Compaction tab shows, read from the DOM.
type compactionPage struct {
	Query            map[string]string `json:"query"`
	Policy           string            `json:"policy"`
	Ratio            string            `json:"ratio"`
	RatioText        string            `json:"ratioText"`
	Min              float64           `json:"min"`
	FirstDirty       int64             `json:"firstDirty"`
	FirstUncleanable int64             `json:"firstUncleanable"`
	RangeText        string            `json:"rangeText"`
	Cleanable        string            `json:"cleanable"`
	Verdict          string            `json:"verdict"`
	Note             string            `json:"note"`
	Compacted        bool              `json:"compacted"`
	Total            [2]int64          `json:"total"`
	Kept             []int64           `json:"kept"`
	Strip            []struct {
		Base  int64  `json:"base"`
		State string `json:"state"`
	} `json:"strip"`
	Rows []struct {
		Base       int64    `json:"base"`
		State      string   `json:"state"`
		Rewritten  bool     `json:"rewritten"`
		Records    int64    `json:"records"`
		Bytes      int64    `json:"bytes"`
		Superseded int64    `json:"superseded"`
		Tombstones int64    `json:"tombstones"`
		Unkeyed    int64    `json:"unkeyed"`
		Aborted    int64    `json:"aborted"`
		Markers    int64    `json:"markers"`
		Cells      []string `json:"cells"`
	} `json:"rows"`
}

func (p *compactionPage) states() []string {
	var out []string
	for _, s := range p.Strip {
		out = append(out, s.State)
	}
	return out
}

const compactionPageJS = `(() => {
	const p = document.querySelector('#panel-compaction'), $ = (s) => p.querySelector(s), n = (v) => Number(v);
	const row = (r) => ({ base: n(r.dataset.base), state: r.dataset.state, rewritten: r.dataset.rewritten === 'true', records: n(r.dataset.records), bytes: n(r.dataset.bytes),
		superseded: n(r.dataset.superseded), tombstones: n(r.dataset.tombstones), unkeyed: n(r.dataset.unkeyed), aborted: n(r.dataset.aborted), markers: n(r.dataset.markers),
		cells: [...r.cells].map((c) => c.textContent) });
	return { query: JSON.parse(p.dataset.query), policy: $('#cmp-cleanup-policy').value, ratio: $('#cmp-ratio').dataset.ratio, ratioText: $('#cmp-ratio .ratio-text').textContent, min: n($('#cmp-ratio').dataset.min),
		firstDirty: n($('#cmp-range').dataset.firstDirty), firstUncleanable: n($('#cmp-range').dataset.firstUncleanable), rangeText: $('#cmp-range').textContent,
		cleanable: $('#cmp-verdict').dataset.cleanable, verdict: $('#cmp-verdict').textContent, note: $('#cmp-policy-note').textContent, compacted: $('#cmp-policy-note').dataset.compacted === 'true',
		total: [n($('#cmp-total').dataset.records), n($('#cmp-total').dataset.bytes)], kept: [...p.querySelectorAll('#cmp-kept li')].map((l) => n(l.dataset.horizon)),
		strip: [...p.querySelectorAll('#cmp-strip .cmp-seg')].map((s) => ({ base: n(s.dataset.base), state: s.dataset.state })),
		rows: [...p.querySelectorAll('#cmp-table tbody tr')].map(row) };
})()`

// settledCompaction waits until the Compaction tab has planned with the
// settings sent (each in its query) and reads what it shows.
func settledCompaction(t *testing.T, ctx context.Context, sent map[string]string) compactionPage {
	t.Helper()
	want, _ := json.Marshal(sent)
	waitFor(t, ctx, "the compaction plan", fmt.Sprintf(`(() => { const p = document.querySelector('#panel-compaction');
		if (p.hidden || p.dataset.busy !== 'false' || p.dataset.state !== 'done' || !p.dataset.query) return false;
		const q = JSON.parse(p.dataset.query), want = %s || {};
		return Object.entries(want).every(([k, v]) => q[k] === v); })()`, want), 60*time.Second)
	return eval[compactionPage](t, ctx, compactionPageJS)
}

// planConfig is the topic config and the now of the page's query: its
// settings over Kafka's defaults, a policy without compact as compact (as
// the page plans it).
func planConfig(t *testing.T, query map[string]string) (config.Config, int64) {
	t.Helper()
	props := map[string]string{}
	for k, v := range query {
		props[k] = v
	}
	now, err := strconv.ParseInt(props["now"], 10, 64)
	if err != nil {
		t.Fatalf("the page's now %q: %v", props["now"], err)
	}
	delete(props, "now")
	if !strings.Contains(props[config.CleanupPolicy], config.CleanupPolicyCompact) {
		props[config.CleanupPolicy] = config.CleanupPolicyCompact
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		t.Fatalf("the page's settings %v: %v", query, err)
	}
	return cfg, now
}

// checkCompaction runs compaction.Plan on dir with the settings the page
// sent (a policy without compact planned as compact, as the page says)
// and compares what the page shows with it; agree says they agreed.
func checkCompaction(t *testing.T, step string, page compactionPage, dir string) (rep *compaction.Report, agree bool) {
	t.Helper()
	cfg, now := planConfig(t, page.Query)
	rep, err := compaction.Plan(vfs.OS(), filepath.ToSlash(dir), cfg, compaction.Options{Clock: msClock{&now}})
	if err != nil {
		t.Fatal(err)
	}
	agree = true
	fail := func(format string, a ...any) {
		t.Helper()
		agree = false
		t.Errorf("%s (%v): "+format, append([]any{step, page.Query}, a...)...)
	}
	// The dirty ratio, in the data and in words.
	ratio, err := strconv.ParseFloat(page.Ratio, 64)
	if err != nil || ratio != rep.CleanableRatio || math.IsNaN(ratio) {
		fail("the page's dirty ratio %q, Plan's %v", page.Ratio, rep.CleanableRatio)
	}
	if !strings.Contains(page.RatioText, fmt.Sprintf("Dirty ratio %.4f", rep.CleanableRatio)) || page.Min != rep.MinCleanableRatio {
		fail("the ratio says %q (min %v); Plan: %.4f, min %v", page.RatioText, page.Min, rep.CleanableRatio, rep.MinCleanableRatio)
	}
	// The cleanable range.
	if page.FirstDirty != rep.FirstDirtyOffset || page.FirstUncleanable != rep.FirstUncleanableOffset ||
		!strings.Contains(page.RangeText, fmt.Sprintf("[%d, %d)", rep.FirstDirtyOffset, rep.FirstUncleanableOffset)) || !strings.Contains(page.RangeText, rep.UncleanableBy) {
		fail("the range %q [%d, %d); Plan [%d, %d) by %s", page.RangeText, page.FirstDirty, page.FirstUncleanable, rep.FirstDirtyOffset, rep.FirstUncleanableOffset, rep.UncleanableBy)
	}
	// Whether it is cleanable, and why not.
	if page.Cleanable != strconv.FormatBool(rep.Cleanable) || !rep.Cleanable && !strings.Contains(page.Verdict, rep.Why) {
		fail("the verdict %q (cleanable %s); Plan: %v, %q", page.Verdict, page.Cleanable, rep.Cleanable, rep.Why)
	}
	// What goes from each segment.
	type removal struct{ Records, Bytes, Superseded, Tombstones, Unkeyed, Aborted, Markers int64 }
	want := map[int64]removal{}
	for _, g := range rep.Groups {
		if len(g.Removed) != len(g.Sources) {
			t.Fatalf("%s: group %d: %d removals for %d sources", step, g.BaseOffset, len(g.Removed), len(g.Sources))
		}
		for i, base := range g.Sources {
			x := g.Removed[i]
			want[base] = removal{x.Records, x.Bytes, x.Superseded, x.Tombstones, x.Unkeyed, x.Aborted, x.Markers}
		}
	}
	if len(page.Rows) != len(page.Strip) {
		fail("%d table rows, %d segments on the strip", len(page.Rows), len(page.Strip))
	}
	for i, r := range page.Rows {
		got := removal{r.Records, r.Bytes, r.Superseded, r.Tombstones, r.Unkeyed, r.Aborted, r.Markers}
		w, rewritten := want[r.Base]
		if got != w || r.Rewritten != rewritten {
			fail("segment %d: the page removes %+v (rewritten %v); Plan %+v (rewritten %v)", r.Base, got, r.Rewritten, w, rewritten)
		}
		if rewritten && (len(r.Cells) < 6 || r.Cells[5] != strconv.FormatInt(w.Records, 10)) {
			fail("segment %d: the row reads %q, Plan removes %d records", r.Base, r.Cells, w.Records)
		}
		if i < len(page.Strip) && (page.Strip[i].Base != r.Base || page.Strip[i].State != r.State) {
			fail("the strip's segment %d is %+v, the table's %d %s", i, page.Strip[i], r.Base, r.State)
		}
	}
	if page.Total != [2]int64{rep.Removed.Records, rep.Removed.Bytes} {
		fail("the total removes %v records and bytes; Plan %d, %d", page.Total, rep.Removed.Records, rep.Removed.Bytes)
	}
	var horizons []int64
	for _, h := range rep.Horizons {
		horizons = append(horizons, h.DeleteHorizonMs)
	}
	if !slices.Equal(page.Kept, horizons) {
		fail("kept until %v; Plan %v", page.Kept, horizons)
	}
	return rep, agree
}
