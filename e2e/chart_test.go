package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// The payments scenario (retention/payments_test.go): retention.ms=60000,
// segment.ms=180000, a record every 5 s (5003 ms), offset 37 at 0:00 =
// 09:00, a broker started at -4:29, so checks at 1:01, 6:01, ...
var (
	payT0    = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()
	payStart = payT0 - (4*60+29)*1000
	payGone  = payT0 + (6*60+1)*1000
)

func payTime(k int) int64 {
	if k == 0 {
		return payTime(1) - 4000
	}
	return payT0 + int64(k-37)*5003
}

type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() time.Time { return time.UnixMilli(c.ms) }

// TestRetentionChartPayments: the what-if of the payments partition as
// it was at 3:00.108 (segments 0, 37 and 73) draws bytes on disk and the
// age of the oldest readable record along time, with the rolls, the
// checks (the broker's start given) and the deletions; asked about offset
// 37, it draws "offset 37 gone by 09:06:01" at 6:01, the check that
// deletes its segment; and it draws the bound segment.ms + retention.ms +
// the check interval beside the age.
func TestRetentionChartPayments(t *testing.T) {
	setup(t)
	dir := filepath.Join(t.TempDir(), "payments-0")
	cfg, err := config.Parse(map[string]string{config.RetentionMs: "60000", config.SegmentMs: "180000"})
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{ms: payTime(0)}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	for k := 0; k <= 73; k++ {
		clk.ms = payTime(k)
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms, Key: []byte("k"), Value: []byte(fmt.Sprintf("payment-%d", k))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if bases := l.Segments(); len(bases) != 3 || bases[1].BaseOffset() != 37 || bases[2].BaseOffset() != 73 {
		t.Fatalf("segments %v, want 0, 37, 73", bases)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	srv := startServer(t, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"), chromedp.Click("#tab-retention"))
	set := func(sel, v, ev string) { t.Helper(); setInput(t, ctx, sel, v, ev) }
	set("#ret-retention-ms-value", "60000", "change")
	set("#ret-segment-ms-value", "180000", "change")
	set("#ret-now-value", time.UnixMilli(payTime(73)).UTC().Format("2006-01-02T15:04:05.000Z"), "change")
	set("#ret-broker-start", time.UnixMilli(payStart).UTC().Format(time.RFC3339), "change")
	set("#ret-offset", "37", "input")
	waitFor(t, ctx, "the chart with offset 37", fmt.Sprintf(`document.querySelector('#ret-chart .offset-line')?.dataset.at === '%d' && JSON.parse(document.querySelector('#panel-retention').dataset.query || '{}').now === %d`, payGone, payTime(73)), 30*time.Second)
	var dels [][2]int64
	if err := json.Unmarshal([]byte(eval[string](t, ctx, `document.querySelector('#ret-chart').dataset.deletions`)), &dels); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range dels {
		found = found || d == [2]int64{37, payGone}
	}
	bound := eval[string](t, ctx, `document.querySelector('#ret-chart').dataset.bound`)
	var maxAge int64
	fmt.Sscan(eval[string](t, ctx, `document.querySelector('#ret-chart').dataset.maxAge`), &maxAge)
	checks := eval[string](t, ctx, `document.querySelector('#ret-chart').dataset.checks`)
	label := eval[string](t, ctx, `document.querySelector('#ret-chart .offset-line text').textContent`)
	// (Segment 0 outlives the bound here: no broker ran the check at 1:01
	// that would have deleted it, so the next one, at 6:01, does.)
	if !found || bound != "540000" || maxAge <= 0 || checks == "0" || label != "offset 37 gone by 2026-03-02 09:06:01Z" || !eval[bool](t, ctx, `!!document.querySelector('#ret-chart .bound')`) {
		t.Errorf("chart: deletions %v (want segment 37 at 6:01), bound %s (want 540000: 3 m + 1 m + 5 m), max age %d, %s checks, label %q",
			dels, bound, maxAge, checks, label)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#ret-chart .roll').length`); n != 2 {
		t.Errorf("%d rolls marked, want 2 (at 37 and 73)", n)
	}
	if n := eval[int](t, ctx, `Number(document.querySelector('#ret-chart').dataset.charts)`); n != 2 {
		t.Errorf("%d charts, want the what-if's and the current settings'", n)
	}
	shot(t, ctx, "21-retention-chart-payments.png")
}

// TestRetentionChartSimulated: the what-if's simulation of a record every
// 5 s under retention.ms=60000 and segment.ms=180000 draws the sawtooth
// of the oldest readable record's age: it rises past retention.ms and
// never passes segment.ms + retention.ms + the check interval (9 m).
func TestRetentionChartSimulated(t *testing.T) {
	setup(t)
	part := filepath.Join(exportDemo(t), "orders-0")
	srv := startServer(t, part)
	ctx := newBrowser(t)
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"), chromedp.Click("#tab-retention"))
	set := func(sel, v, ev string) { t.Helper(); setInput(t, ctx, sel, v, ev) }
	set("#ret-retention-ms-value", "60000", "change")
	set("#ret-segment-ms-value", "180000", "change")
	waitFor(t, ctx, "the what-if", `JSON.parse(document.querySelector('#panel-retention').dataset.query || '{}')['segment.ms'] === 180000`, 30*time.Second)
	do(t, ctx, "open the simulation", chromedp.Click("#ret-simulate summary"))
	set("#ret-sim-rate", "0.2", "change")
	set("#ret-sim-size", "100", "change")
	do(t, ctx, "simulate", chromedp.Click("#ret-sim-run"))
	waitFor(t, ctx, "the simulated chart", `document.querySelector('#ret-simulate').dataset.state === 'done' && !!document.querySelector('#ret-sim-chart')`, 30*time.Second)
	var maxAge, bound int64
	fmt.Sscan(eval[string](t, ctx, `document.querySelector('#ret-sim-chart').dataset.maxAge`), &maxAge)
	fmt.Sscan(eval[string](t, ctx, `document.querySelector('#ret-sim-chart').dataset.bound`), &bound)
	dels := eval[string](t, ctx, `document.querySelector('#ret-sim-chart').dataset.deletions`)
	if bound != 540_000 || maxAge <= 60_000 || maxAge > bound || dels == "[]" {
		t.Errorf("simulation: oldest readable age up to %d ms, bound %d, deletions %s; want past retention.ms, within 9 m", maxAge, bound, dels)
	}
	t.Logf("simulated: %s", eval[string](t, ctx, `document.querySelector('#ret-sim-summary').textContent`))
	shot(t, ctx, "22-retention-chart-simulated.png")
}

// setInput sets the value of the input sel and dispatches the event ev
// ("change", "input") as typing would.
func setInput(t *testing.T, ctx context.Context, sel, v, ev string) {
	t.Helper()
	do(t, ctx, "set "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const i = document.querySelector(%q); i.value = %q; i.dispatchEvent(new Event(%q)); })()`, sel, v, ev)))
}
