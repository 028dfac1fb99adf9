package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestDemo opens the built-in demo and checks every view from the DOM:
// the timeline's segments, the batch table, the records, the hex view's
// links both ways, the index plots, the retention what-if and the
// verification findings of the damaged partition, whose first corruption
// finding jumps to the bytes.
func TestDemo(t *testing.T) {
	setup(t)
	srv := startServer(t)
	ctx := newBrowser(t)
	demo := exportDemo(t)
	part := filepath.Join(demo, "orders-0")

	do(t, ctx, "open the demo", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 60*time.Second)
	waitFor(t, ctx, "the what-if", `document.querySelector('#ret-summary')?.dataset.deletions !== undefined`, 30*time.Second)

	// The timeline: 7 segments and one deleted, with the dump's counts.
	bs := bars(t, ctx)
	logs := logFiles(t, part)
	counts := dumpCounts(t, logs...)
	var live []bar
	for _, b := range bs {
		if b.Status == "deleted" {
			if b.Base != 0 || b.Suffix != ".deleted" {
				t.Errorf("deleted bar %+v", b)
			}
			continue
		}
		live = append(live, b)
		c := counts[fmt.Sprintf("%020d.log", b.Base)]
		if b.Batches != c[0] || b.Records != c[1] {
			t.Errorf("segment %d: the page counts %d batches %d records, segviz dump %d and %d", b.Base, b.Batches, b.Records, c[0], c[1])
		}
	}
	if len(live) != len(logs) || len(bs) != len(logs)+1 {
		t.Fatalf("bars %+v for %d .log files", bs, len(logs))
	}
	if live[len(live)-1].Status != "active" {
		t.Errorf("last bar %+v is not the active segment", live[len(live)-1])
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#timeline .lso-marker').length`); n != 1 {
		t.Errorf("%d log start offset markers", n)
	}
	if got := planned(bs); !slices.Equal(got, []int64{378, 967}) {
		t.Errorf("the default what-if deletes %v, want [378 967]", got)
	}

	// The batch table of the selected segment, virtualised.
	sel := live[0]
	waitFor(t, ctx, "the batch table", `document.querySelector('#batch-grid').dataset.done === 'true'`, 30*time.Second)
	rows := eval[int](t, ctx, `Number(document.querySelector('#batch-grid').dataset.rows)`)
	rendered := eval[int](t, ctx, `document.querySelectorAll('#batch-grid .grid-rows .grid-row').length`)
	if c := counts[fmt.Sprintf("%020d.log", sel.Base)]; int64(rows) != c[0] || rendered == 0 || rendered >= rows {
		t.Errorf("batch table: %d rows (dump %d), %d rendered", rows, c[0], rendered)
	}
	// Keyboard: the arrow keys move the selection.
	do(t, ctx, "arrow down in the table", chromedp.Focus("#batch-grid"), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	waitFor(t, ctx, "row 2 selected", `document.querySelector('#batch-grid .grid-row.selected')?.dataset.i === '2'`, 10*time.Second)
	waitFor(t, ctx, "its records", `document.querySelector('#batch-h')?.textContent.includes('position ' + Number(document.querySelector('#batch-grid .grid-row.selected').dataset.position).toLocaleString('en-US'))`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#records-table tbody tr').length`); n == 0 {
		t.Error("no records listed")
	}

	// The hex view: a field highlights its bytes; a byte its field.
	waitFor(t, ctx, "the hex view", `Number(document.querySelector('.hex-section').dataset.fields) > 13 && document.querySelectorAll('#hex-view .hb.hdr').length > 0`, 10*time.Second)
	hover(t, ctx, `#hex-fields .field[data-fi="4"]`) // crc
	waitFor(t, ctx, "crc highlighted", `document.querySelector('.hex-section').dataset.highlight === 'crc'`, 5*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#hex-view .hb.hl').length`); n != 4 {
		t.Errorf("the crc field highlights %d bytes, want 4", n)
	}
	hover(t, ctx, `#hex-view .hb[data-p="`+strconv.Itoa(eval[int](t, ctx, `Number(document.querySelector('#batch-grid .grid-row.selected').dataset.position)`)+2)+`"]`)
	waitFor(t, ctx, "baseOffset highlighted from its byte", `document.querySelector('.hex-section').dataset.highlight === 'baseOffset' && document.querySelector('#hex-fields .field.hl')?.dataset.fi === '0'`, 5*time.Second)
	shot(t, ctx, "1-demo-timeline-and-segment.png")

	// The index plots.
	do(t, ctx, "open the index plots", chromedp.Click("#tab-index"))
	waitFor(t, ctx, "the checked plots", `document.querySelector('#plot-offset')?.dataset.checked === 'true' && document.querySelector('#plot-time')?.dataset.checked === 'true'`, 30*time.Second)
	for _, id := range []string{"plot-offset", "plot-time"} {
		pts := eval[int](t, ctx, `Number(document.querySelector('#`+id+` path.entries')?.dataset.points || 0)`)
		entries := eval[int](t, ctx, `Number(document.querySelector('#`+id+`').dataset.entries)`)
		if pts == 0 || entries == 0 {
			t.Errorf("%s: %d points of %d entries", id, pts, entries)
		}
	}
	shot(t, ctx, "2-demo-index-plots.png")

	// The retention what-if.
	do(t, ctx, "open the what-if", chromedp.Click("#tab-retention"))
	waitFor(t, ctx, "the what-if table", `document.querySelectorAll('#ret-table tbody tr').length === 7`, 10*time.Second)
	shot(t, ctx, "3-demo-retention.png")

	// The damaged partition: verification, and a jump to the corruption.
	do(t, ctx, "open orders-1", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('#partition-select'); s.value = 'kafka-logs/orders-1'; s.dispatchEvent(new Event('change')); })()`))
	waitFor(t, ctx, "orders-1", `document.querySelector('#part-name').textContent.startsWith('orders-1')`, 10*time.Second)
	do(t, ctx, "open the verification", chromedp.Click("#tab-verify"))
	waitFor(t, ctx, "the findings", `document.querySelector('#panel-verify').dataset.state === 'done'`, 60*time.Second)
	kinds := eval[[]string](t, ctx, `[...document.querySelectorAll('#findings .finding')].map(b => b.dataset.kind)`)
	for _, k := range []string{"log-crc", "log-torn-tail", "index-not-batch-boundary", "timeindex-out-of-order", "zero-padding"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s finding among %v", k, kinds)
		}
	}
	shot(t, ctx, "4-damaged-verification.png")
	do(t, ctx, "jump to the bad CRC", chromedp.Click(`#findings .finding[data-kind="log-crc"]`))
	waitFor(t, ctx, "the marked byte", `!document.querySelector('#panel-segment').hidden && document.querySelector('#hex-view .hb.mark') && document.querySelector('#batch-grid .grid-row.selected.bad')`, 20*time.Second)
	if crcBad := eval[bool](t, ctx, `document.querySelector('#hex-fields .field.bad')?.textContent.startsWith('crc')`); !crcBad {
		t.Error("the jump's hex view does not mark the crc field bad")
	}
	shot(t, ctx, "5-damaged-jump-to-bad-crc.png")
	do(t, ctx, "back to verification", chromedp.Click("#tab-verify"))
	do(t, ctx, "jump to the index entry", chromedp.Click(`#findings .finding[data-kind="timeindex-out-of-order"]`))
	waitFor(t, ctx, "the ringed entry", `document.querySelector('#plot-time')?.dataset.highlight === '3' && document.querySelectorAll('#plot-time .problem').length > 0`, 30*time.Second)
	shot(t, ctx, "6-damaged-index-problems.png")
}

// TestDropRealPartition gives the page a real broker's partition folder
// (as a drop would, through the folder input) and checks that the WASM
// engine, in the page, counts what segviz dump counts.
func TestDropRealPartition(t *testing.T) {
	setup(t)
	dir := realPartition(t)
	srv := startServer(t)
	ctx := newBrowser(t)
	do(t, ctx, "open segviz", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	do(t, ctx, "choose the folder", chromedp.SetUploadFiles("#folder-input", []string{dir}, chromedp.NodeReady))
	waitFor(t, ctx, "the dropped partition", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelector('#part-name').textContent.startsWith('`+filepath.Base(dir)+`')`, 180*time.Second)
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 120*time.Second)

	logs := logFiles(t, dir)
	counts := dumpCounts(t, logs...)
	var batches, records int64
	for _, c := range counts {
		batches += c[0]
		records += c[1]
	}
	segs := eval[int](t, ctx, `Number(document.querySelector('#fact-segments').dataset.count)`)
	if segs != len(logs) {
		t.Errorf("the page shows %d segments, the folder has %d .log files", segs, len(logs))
	}
	gotRecords := eval[int64](t, ctx, `Number(document.querySelector('#census').dataset.records)`)
	gotBatches := eval[int64](t, ctx, `Number(document.querySelector('#census').dataset.batches)`)
	if gotRecords != records || gotBatches != batches {
		t.Errorf("the page counts %d records in %d batches; segviz dump --json %d in %d", gotRecords, gotBatches, records, batches)
	}
	for _, b := range bars(t, ctx) {
		c := counts[fmt.Sprintf("%020d.log", b.Base)]
		if b.Batches != c[0] || b.Records != c[1] {
			t.Errorf("segment %d: page %d batches %d records, dump %d and %d", b.Base, b.Batches, b.Records, c[0], c[1])
		}
	}
	if src := eval[string](t, ctx, `document.querySelector('#source-name').textContent`); src != "dropped files, parsed in this page" {
		t.Errorf("source %q", src)
	}
	t.Logf("dropped %s: %d segments, %d batches, %d records, as segviz dump counts them", dir, segs, batches, records)
	shot(t, ctx, "7-dropped-real-partition.png")
	// Verification runs in the page too.
	do(t, ctx, "verify in the page", chromedp.Click("#tab-verify"))
	waitFor(t, ctx, "the findings", `document.querySelector('#panel-verify').dataset.state === 'done'`, 120*time.Second)
	shot(t, ctx, "8-dropped-verification.png")
}

func realPartition(t *testing.T) string {
	t.Helper()
	base := os.Getenv("SEGKIT_KAFKA_REAL")
	if base == "" {
		base = filepath.Join(repoRoot, "..", "shared", "kafka-real")
	}
	dir := filepath.Join(base, "dipendrasaini__kafka-learnning-series", "tmp", "kafka-logs-1", "invoice-0")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the real partition is missing (required under CI=true): %v", err)
		}
		t.Skipf("the real partition is missing: %v", err)
	}
	return dir
}

// TestRetentionSlider moves the what-if's sliders with the keyboard and
// checks, each time, that the segments the page marks as deleted by the
// next check are those `segviz retention --json` names for the same
// settings on the exported demo.
func TestRetentionSlider(t *testing.T) {
	setup(t)
	demo := exportDemo(t)
	part := filepath.Join(demo, "orders-0")
	srv := startServer(t)
	ctx := newBrowser(t)
	do(t, ctx, "open the demo", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"), chromedp.Click("#tab-retention"))

	type query struct {
		RetentionMs    int64 `json:"retention.ms"`
		RetentionBytes int64 `json:"retention.bytes"`
		SegmentMs      int64 `json:"segment.ms"`
		Now            int64 `json:"now"`
	}
	settled := func() query {
		waitFor(t, ctx, "the what-if", `(() => { const p = document.querySelector('#panel-retention'); if (p.dataset.busy !== 'false' || !p.dataset.query) return false;
			const q = JSON.parse(p.dataset.query); return q['retention.ms'] === Number(document.querySelector('#ret-retention-ms').dataset.value) && q.now === Number(document.querySelector('#ret-now').dataset.value); })()`, 20*time.Second)
		var q query
		if err := json.Unmarshal([]byte(eval[string](t, ctx, `document.querySelector('#panel-retention').dataset.query`)), &q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	cli := func(q query) []int64 {
		out := run(t, []int{0, 1}, "retention", "--json", "--now", strconv.FormatInt(q.Now, 10),
			"--retention.ms", strconv.FormatInt(q.RetentionMs, 10), "--retention.bytes", strconv.FormatInt(q.RetentionBytes, 10),
			"--segment.ms", strconv.FormatInt(q.SegmentMs, 10), part)
		var r struct {
			Deletions []struct {
				BaseOffset int64 `json:"baseOffset"`
			} `json:"deletions"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("segviz retention --json: %v\n%s", err, out)
		}
		var d []int64
		for _, x := range r.Deletions {
			d = append(d, x.BaseOffset)
		}
		return d
	}
	check := func(step string) []int64 {
		q := settled()
		page := planned(bars(t, ctx))
		var table []int64
		for _, s := range eval[[]string](t, ctx, `[...document.querySelectorAll('#ret-table tr[data-plan="delete"]')].map(r => r.dataset.base)`) {
			n, _ := strconv.ParseInt(s, 10, 64)
			table = append(table, n)
		}
		want := cli(q)
		if !slices.Equal(page, want) || !slices.Equal(table, want) {
			t.Errorf("%s (%+v): the timeline marks %v and the table %v as deleted; segviz retention deletes %v", step, q, page, table, want)
		} else {
			t.Logf("%s: retention.ms=%d now=%d: the page and segviz retention agree: %v", step, q.RetentionMs, q.Now, want)
		}
		return page
	}

	first := check("default settings")
	// Move retention.ms from 7 days down four notches, to 3 days.
	do(t, ctx, "move retention.ms", chromedp.Focus("#ret-retention-ms"),
		chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowLeft))
	waitFor(t, ctx, "retention.ms at 3 days", `document.querySelector('#ret-retention-ms').dataset.value === String(3*86400000)`, 10*time.Second)
	second := check("retention.ms 3 days")
	if slices.Equal(first, second) {
		t.Errorf("moving retention.ms from 7 to 3 days changed nothing: %v", second)
	}
	shot(t, ctx, "9-retention-slider-3-days.png")
	// Move now back 12 hours: fewer segments are old enough.
	keys := []chromedp.Action[chromedp.Void]{chromedp.Focus("#ret-now")}
	for range 12 {
		keys = append(keys, chromedp.KeyEvent(kb.ArrowLeft))
	}
	do(t, ctx, "move now", keys...)
	third := check("now 12 hours earlier")
	if slices.Equal(second, third) {
		t.Logf("moving now back 12 hours kept %v", third)
	}
	// retention.bytes: on, at 64 KiB.
	do(t, ctx, "set retention.bytes", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector('#ret-retention-bytes-value'); i.value = '65536'; i.dispatchEvent(new Event('change')); })()`))
	waitFor(t, ctx, "retention.bytes", `JSON.parse(document.querySelector('#panel-retention').dataset.query || '{}')['retention.bytes'] === 65536 && document.querySelector('#panel-retention').dataset.busy === 'false'`, 10*time.Second)
	check("retention.bytes 64 KiB")
	shot(t, ctx, "10-retention-bytes.png")
}

// TestRealDrop drops a real partition's folder on the drop zone (a drag
// from outside the page, through the DevTools protocol), which exercises
// the page's drop handler rather than the folder input.
func TestRealDrop(t *testing.T) {
	setup(t)
	dir := realPartition(t)
	srv := startServer(t)
	ctx := newBrowser(t)
	do(t, ctx, "open segviz", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	box, err := chromedp.Run(c, chromedp.Dimensions("#dropzone"))
	if err != nil {
		t.Fatal(err)
	}
	q := box.Content
	x, y := (q[0]+q[4])/2, (q[1]+q[5])/2
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: []string{dir}, DragOperationsMask: 1}
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		err := chromedp.Do(c, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: data})
			return err
		}))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	waitFor(t, ctx, "the dropped partition", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelector('#source-name').textContent.startsWith('dropped') && !document.querySelector('#part-name').textContent.startsWith('orders')`, 180*time.Second)
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 120*time.Second)
	logs := logFiles(t, dir)
	var records int64
	for _, c := range dumpCounts(t, logs...) {
		records += c[1]
	}
	name := eval[string](t, ctx, `document.querySelector('#part-name').textContent`)
	segs := eval[int](t, ctx, `Number(document.querySelector('#fact-segments').dataset.count)`)
	got := eval[int64](t, ctx, `Number(document.querySelector('#census').dataset.records)`)
	if segs != len(logs) || got != records || !strings.HasPrefix(name, filepath.Base(dir)) {
		t.Errorf("dropped %s: the page shows %q, %d segments and %d records; the folder has %d .log files and segviz dump counts %d records", dir, name, segs, got, len(logs), records)
	}
}
