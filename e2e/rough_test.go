package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestDropAfterDemo: with a batch of the demo selected (and the URL hash
// on it), a partition dropped on the page replaces everything: the batch
// pane no longer shows the demo's batch, and the hash no longer names the
// demo's partition (issue 18's first rough edge).
func TestDropAfterDemo(t *testing.T) {
	setup(t)
	srv := startServer(t)
	ctx := newBrowser(t)
	do(t, ctx, "open the demo", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	waitFor(t, ctx, "the batch table", `document.querySelector('#batch-grid').dataset.done === 'true'`, 30*time.Second)
	do(t, ctx, "select a batch", chromedp.Focus("#batch-grid"), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	waitFor(t, ctx, "its detail", `!!document.querySelector('#batch-h')`, 10*time.Second)
	demoBatch := eval[string](t, ctx, `document.querySelector('#batch-h').textContent`)
	if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, "dir=") {
		t.Fatalf("the demo's hash %q names no partition", h)
	}
	dir := tieredOrPlain(t)
	do(t, ctx, "drop another partition", chromedp.SetUploadFiles("#folder-input", []string{dir}, chromedp.NodeReady))
	waitFor(t, ctx, "the dropped partition", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelector('#source-name').textContent.startsWith('dropped')`, 120*time.Second)
	logs := len(logFiles(t, dir))
	waitFor(t, ctx, "its segments and batch table", fmt.Sprintf(`document.querySelector('#fact-segments')?.dataset.count === '%d' && document.querySelector('#batch-grid').dataset.done === 'true'`, logs), 30*time.Second)
	time.Sleep(500 * time.Millisecond) // the what-if's plan arrives after the table: it redrew the stale batch

	// The pane shows nothing, or a batch of the dropped partition's
	// selected segment: not the demo's.
	shown := eval[string](t, ctx, `document.querySelector('#batch-h')?.textContent || ''`)
	sel := eval[string](t, ctx, `document.querySelector('#batch-grid .grid-row.selected')?.dataset.position || ''`)
	if shown == demoBatch || shown != "" && !strings.Contains(shown, "position "+sel+":") {
		t.Errorf("after the drop the batch pane shows %q (the demo's was %q; the selected row is at position %q)", shown, demoBatch, sel)
	}
	if h := eval[string](t, ctx, `location.hash`); strings.Contains(h, "dir=") {
		t.Errorf("the URL hash %q still names the demo's partition after the drop", h)
	}
}

// tieredOrPlain is a small partition of its own (not the demo's).
func tieredOrPlain(t *testing.T) string {
	t.Helper()
	dir, _ := tieredPartition(t)
	return filepath.Clean(dir)
}

// TestDemoWords: the demo says what it holds in one voice (eight segments
// written, seven left, the eighth's files waiting as .deleted), calls the
// .deleted files what they are, and prints times as ISO 8601 UTC and
// durations in words: in the "now" input (which takes ISO, not the
// browser's locale), in the what-if and in the findings.
func TestDemoWords(t *testing.T) {
	setup(t)
	srv := startServer(t)
	ctx := newBrowser(t)
	do(t, ctx, "open the demo", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	note := eval[string](t, ctx, `document.querySelector('#part-note').textContent`)
	segs := eval[string](t, ctx, `document.querySelector('#fact-segments').textContent`)
	if !strings.Contains(note, "eight segments written") || !strings.Contains(note, "seven remain") || segs != "7 (+1 deleted)" {
		t.Errorf("the demo says %q and counts %q segments", note, segs)
	}
	do(t, ctx, "verification", chromedp.Click("#tab-verify"))
	waitFor(t, ctx, "the findings", `document.querySelector('#panel-verify').dataset.state === 'done'`, 60*time.Second)
	type fj struct{ Kind, Text string }
	fs := eval[[]fj](t, ctx, `[...document.querySelectorAll('#findings .finding')].map(b => ({kind: b.dataset.kind, text: b.textContent}))`)
	deleted := 0
	rawMs, goDur := regexp.MustCompile(`\b1\d{12}\b`), regexp.MustCompile(`\d+h\d+m[\d.]+s`)
	for _, f := range fs {
		if f.Kind == "deleted-file" {
			deleted++
		}
		if f.Kind == "leftover-file" || strings.Contains(f.Text, "interrupted deletion") {
			t.Errorf("a .deleted file waiting out file.delete.delay.ms is called %s: %q", f.Kind, f.Text)
		}
		if rawMs.MatchString(f.Text) || goDur.MatchString(f.Text) {
			t.Errorf("a finding prints a raw epoch or a Go duration: %q", f.Text)
		}
	}
	if deleted == 0 {
		t.Errorf("no deleted-file finding among %v", fs)
	}
	do(t, ctx, "the what-if", chromedp.Click("#tab-retention"))
	waitFor(t, ctx, "the what-if", `document.querySelector('#panel-retention').dataset.busy === 'false' && !!document.querySelector('#panel-retention').dataset.query`, 30*time.Second)
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$`)
	if v := eval[string](t, ctx, `document.querySelector('#ret-now-value').value`); !iso.MatchString(v) {
		t.Errorf("the now input shows %q, not ISO 8601 UTC", v)
	}
	do(t, ctx, "type a time without a zone", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('#ret-now-value'); i.value = '2026-03-01 12:00'; i.dispatchEvent(new Event('change')); })()`))
	waitFor(t, ctx, "the what-if at that time", `JSON.parse(document.querySelector('#panel-retention').dataset.query || '{}').now === 1772366400000 && document.querySelector('#panel-retention').dataset.busy === 'false'`, 30*time.Second)
	if v := eval[string](t, ctx, `document.querySelector('#ret-now-value').value`); v != "2026-03-01T12:00:00Z" {
		t.Errorf("after typing 2026-03-01 12:00 the input shows %q, want 2026-03-01T12:00:00Z (UTC, not local time)", v)
	}
	do(t, ctx, "type junk", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('#ret-now-value'); i.value = '03/01/2026'; i.dispatchEvent(new Event('change')); })()`))
	if inv := eval[string](t, ctx, `document.querySelector('#ret-now-value').getAttribute('aria-invalid')`); inv != "true" {
		t.Errorf("a US-format date is not marked invalid (aria-invalid %q)", inv)
	}
	text := eval[string](t, ctx, `document.querySelector('#panel-retention').textContent`)
	if goDur.MatchString(text) {
		t.Errorf("the what-if prints a Go duration: %q", goDur.FindString(text))
	}
}

// TestVerifyBigStartsAndCancels: on a partition past the old 64 MiB
// threshold, opening the verification tab starts the verification at once
// (it used to idle with no hint), with a progress bar and a Cancel button;
// Cancel stops it and says so; "Verify the partition" runs it again to
// the end.
func TestVerifyBigStartsAndCancels(t *testing.T) {
	setup(t)
	dir := filepath.Join(t.TempDir(), "big-0")
	_, records := generate(t, dir, 96<<20)
	srv := startServer(t, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	do(t, ctx, "open the verification", chromedp.Click("#tab-verify"))
	waitFor(t, ctx, "the verification started", `document.querySelector('#panel-verify').dataset.state !== 'idle'`, 10*time.Second)
	state := eval[string](t, ctx, `document.querySelector('#panel-verify').dataset.state`)
	if state == "running" {
		if shown := eval[bool](t, ctx, `!document.querySelector('#verify-progress').hidden && !document.querySelector('#verify-cancel').hidden`); !shown {
			t.Error("a running verification shows no progress bar or no Cancel button")
		}
		// A click through the page: the verification may end (and hide the
		// button) between the check above and the click.
		do(t, ctx, "cancel", chromedp.Evaluate[chromedp.Void](`document.querySelector('#verify-cancel').click()`))
		waitFor(t, ctx, "cancelled or done", `['cancelled', 'done'].includes(document.querySelector('#panel-verify').dataset.state)`, 60*time.Second)
		state = eval[string](t, ctx, `document.querySelector('#panel-verify').dataset.state`)
		if s := eval[string](t, ctx, `document.querySelector('#verify-summary').textContent`); state == "cancelled" && !strings.HasPrefix(s, "Cancelled") {
			t.Errorf("cancelled, but the summary says %q", s)
		}
		t.Logf("after Cancel: %s", state)
		shot(t, ctx, "19-verify-cancelled.png")
		do(t, ctx, "verify again", chromedp.Click("#verify-run"))
	}
	waitFor(t, ctx, "the verification done", `document.querySelector('#panel-verify').dataset.state === 'done'`, 120*time.Second)
	if s := eval[string](t, ctx, `document.querySelector('#verify-summary').textContent`); !strings.Contains(s, fmt.Sprintf("%s records", commas(records))) {
		t.Errorf("summary %q, want %d records", s, records)
	}
}

// commas prints n as the page does (en-US grouping).
func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestIndexPlotsShortSpanOutlier: a segment whose records span 2 s, and
// whose last batch is stamped ten days later: the time plot's ticks read
// differently (milliseconds, not the same minute), both axes are named,
// the outlier does not squash the plot (the middle 98 % is shown, the
// outlier at the edge), and "every entry" and a log scale can be chosen.
func TestIndexPlotsShortSpanOutlier(t *testing.T) {
	setup(t)
	dir := filepath.Join(t.TempDir(), "span-0")
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{"index.interval.bytes": "1024", "segment.ms": "2592000000"}) // 30 days: the outlier does not roll
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), cfg, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()
	var w record.Builder
	for i := range 2001 {
		ts := t0 + int64(i)
		if i == 2000 {
			ts = t0 + 10*86_400_000 // the outlier
		}
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ts, Key: []byte(fmt.Sprint(i)), Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 60*time.Second)
	do(t, ctx, "the index plots", chromedp.Click("#tab-index"))
	waitFor(t, ctx, "the checked plots", `document.querySelector('#plot-time')?.dataset.checked === 'true'`, 30*time.Second)
	ticks := eval[[]string](t, ctx, `[...document.querySelectorAll('#plot-time .tick-x')].map(e => e.textContent)`)
	if len(ticks) != 4 || len(map[string]bool{ticks[0]: true, ticks[1]: true, ticks[2]: true, ticks[3]: true}) != 4 {
		t.Errorf("the time plot's ticks %v do not read differently", ticks)
	}
	for _, id := range []string{"plot-offset", "plot-time"} {
		if n := eval[int](t, ctx, `document.querySelectorAll('#`+id+` .axis-name').length`); n != 2 {
			t.Errorf("%s: %d named axes, want 2", id, n)
		}
	}
	if r, o := eval[string](t, ctx, `document.querySelector('#plot-time').dataset.range`), eval[string](t, ctx, `document.querySelector('#plot-time').dataset.outliers`); r != "robust" || o != "1" {
		t.Errorf("the time plot shows range %q with %q outliers; want the middle 98 %% and the one outlier at the edge (ticks %v, entries %s)", r, o, ticks, eval[string](t, ctx, `[...document.querySelectorAll("#plot-time tbody tr")].slice(-3).map(r => r.textContent).join(" / ")`))
	}
	shot(t, ctx, "20-index-plot-short-span-outlier.png")
	do(t, ctx, "every entry", chromedp.SetValue("#plot-time .plot-range", "all"), chromedp.Evaluate[chromedp.Void](`document.querySelector('#plot-time .plot-range').dispatchEvent(new Event('change'))`))
	waitFor(t, ctx, "the full range", `document.querySelector('#plot-time').dataset.range === 'all' && document.querySelector('#plot-time').dataset.outliers === '0'`, 10*time.Second)
	do(t, ctx, "log scale", chromedp.Click("#plot-offset .plot-log"))
	waitFor(t, ctx, "the log scale", `document.querySelector('#plot-offset').dataset.log === 'true' && document.querySelector('#plot-offset .axis-y').textContent.includes('log scale')`, 10*time.Second)
}

// TestNoTextCut: on the demo, no segment bar's line and no max-timestamp
// cell of the batch table (the selected row's bold one included) is cut
// short: every text fits its box.
func TestNoTextCut(t *testing.T) {
	setup(t)
	srv := startServer(t)
	ctx := newBrowser(t)
	do(t, ctx, "open the demo", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 60*time.Second)
	waitFor(t, ctx, "the batch table", `document.querySelector('#batch-grid').dataset.done === 'true'`, 30*time.Second)
	do(t, ctx, "select a row", chromedp.Focus("#batch-grid"), chromedp.KeyEvent(kb.ArrowDown))
	cut := eval[[]string](t, ctx, `[...document.querySelectorAll('#timeline .seg-bar .bar-line, #timeline .seg-bar .bar-head, #batch-grid .grid-row > span:nth-child(5)')]
		.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)`)
	if len(cut) > 0 {
		t.Errorf("%d texts are cut: %q", len(cut), cut)
	}
}

// TestBatchTableVirtualised: a segment of 30,000 batches fills a table
// of 30,000 rows of which only those in view are in the DOM, and
// scrolling to the end shows the last batch.
func TestBatchTableVirtualised(t *testing.T) {
	setup(t)
	dir := filepath.Join(t.TempDir(), "many-0")
	l, err := kafkalog.Open(vfs.OS(), filepath.ToSlash(dir), kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	var b []byte
	for i := range 30_000 {
		spec := record.NewBatchSpec(0, compress.None)
		if b, err = w.AppendBatch(b[:0], &spec, []record.Record{{Timestamp: int64(1_772_442_000_000 + i), Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	waitFor(t, ctx, "the whole batch table", `document.querySelector('#batch-grid').dataset.done === 'true'`, 120*time.Second)
	rows := eval[int](t, ctx, `Number(document.querySelector('#batch-grid').dataset.rows)`)
	inDOM := eval[int](t, ctx, `document.querySelectorAll('#batch-grid .grid-rows .grid-row').length`)
	if rows != 30_000 || inDOM == 0 || inDOM > 300 {
		t.Fatalf("batch table: %d rows, %d in the DOM; want 30,000 rows and only those in view", rows, inDOM)
	}
	do(t, ctx, "scroll to the end", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('#batch-grid .grid-scroll'); s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); })()`))
	waitFor(t, ctx, "the last batch in view", `!!document.querySelector('#batch-grid .grid-row[data-i="29999"]')`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#batch-grid .grid-rows .grid-row').length`); n > 300 {
		t.Errorf("%d rows in the DOM after scrolling", n)
	}
}
