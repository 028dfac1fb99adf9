package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestFirstRenderBig measures the time to first render of a large
// partition: from navigation to the timeline in the DOM, served by segviz;
// then the time to count every batch (the census); and the same for the
// partition given to the page as dropped files (the WASM engine). It runs
// only with SEGVIZ_E2E_BIG set to a size in MiB (SEGVIZ_E2E_BIG=256), so
// that CI stays fast.
func TestFirstRenderBig(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv("SEGVIZ_E2E_BIG"))
	if mib <= 0 {
		t.Skip("set SEGVIZ_E2E_BIG=256 to measure the time to first render of a 256 MiB partition")
	}
	setup(t)
	dir := filepath.Join(t.TempDir(), "big-0")
	gen := time.Now()
	batches, records := generate(t, dir, int64(mib)<<20)
	t.Logf("generated %s: %d MiB, %d batches, %d records in %s", dir, mib, batches, records, time.Since(gen).Round(time.Millisecond))

	srv := startServer(t, dir)
	ctx := newBrowser(t)
	start := time.Now()
	do(t, ctx, "open the partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	wall := time.Since(start)
	first := eval[int](t, ctx, `Number(document.body.dataset.firstRender)`)
	waitFor(t, ctx, "the first batch rows", `Number(document.querySelector('#batch-grid').dataset.rows) > 0`, 60*time.Second)
	rows := time.Since(start)
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 600*time.Second)
	census := time.Since(start)
	got := eval[int64](t, ctx, `Number(document.querySelector('#census').dataset.records)`)
	if got != records {
		t.Errorf("census %d records, generated %d", got, records)
	}
	shot(t, ctx, fmt.Sprintf("11-big-%dMiB-served.png", mib))

	// The same files dropped on the page.
	ctx2 := newBrowser(t)
	do(t, ctx2, "open segviz", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	// Load the WASM engine first, so that its (cached) load is not timed.
	eval[bool](t, ctx2, `import('/static/engine.js').then(m => m.loadWasm()).then(() => true)`)
	dropStart := time.Now()
	do(t, ctx2, "drop the folder", chromedp.SetUploadFiles("#folder-input", []string{dir}, chromedp.NodeReady))
	waitFor(t, ctx2, "the dropped timeline", `document.querySelector('#source-name').textContent.startsWith('dropped') && document.querySelector('#timeline .seg-bar')`, 120*time.Second)
	dropFirst := time.Since(dropStart)
	waitFor(t, ctx2, "the dropped census", `document.querySelector('#census')?.dataset.done === 'true'`, 900*time.Second)
	dropCensus := time.Since(dropStart)
	if got := eval[int64](t, ctx2, `Number(document.querySelector('#census').dataset.records)`); got != records {
		t.Errorf("dropped census %d records, generated %d", got, records)
	}
	shot(t, ctx2, fmt.Sprintf("12-big-%dMiB-dropped.png", mib))

	// Verification: in the page by the WASM engine over the dropped files,
	// against segviz verify (native) on the same files, in the same run,
	// alternating: native, WASM, native; the ratio is WASM over the
	// faster native run.
	native := func() time.Duration {
		start := time.Now()
		run(t, []int{0, 1}, "verify", "--json", dir)
		return time.Since(start)
	}
	n1 := native()
	do(t, ctx2, "verify in the page", chromedp.Click("#tab-verify"))
	vStart := time.Now()
	waitFor(t, ctx2, "the WASM verification", `document.querySelector('#panel-verify').dataset.state === 'done'`, 1800*time.Second)
	wasmVerify := time.Since(vStart)
	n2 := native()
	if got := eval[string](t, ctx2, `document.querySelector('#verify-summary').textContent`); !strings.Contains(got, commas(records)+" records") {
		t.Errorf("the WASM verification read %q, want %d records", got, records)
	}
	ratio := float64(wasmVerify) / float64(min(n1, n2))
	if ratio > 3 {
		t.Errorf("verify in WASM took %.2f× native (target ≤ 3×)", ratio)
	}

	report := fmt.Sprintf(`%d MiB partition, %d batches, %d records (%s)
served by segviz (native engine, JSON API):
  time to first render (navigation start to the timeline in the DOM, performance.now): %d ms
  wall time from navigate to the timeline visible (chromedp):                           %s
  first rows of the batch table:                                                         %s
  every batch counted (census of all segments, headers and CRCs):                       %s
dropped on the page (WASM engine over File objects; engine already loaded):
  from choosing the folder to the timeline in the DOM:                                  %s
  every batch counted:                                                                   %s
verify (every byte, as segviz verify): native segviz verify %s and %s, WASM in the page %s: %.2f× native
`, mib, batches, records, dir, first, wall.Round(time.Millisecond), rows.Round(time.Millisecond), census.Round(time.Millisecond),
		dropFirst.Round(time.Millisecond), dropCensus.Round(time.Millisecond),
		n1.Round(time.Millisecond), n2.Round(time.Millisecond), wasmVerify.Round(time.Millisecond), ratio)
	if first > 500 {
		t.Errorf("first render of the served %d MiB partition took %d ms (target ≤ 500)", mib, first)
	}
	t.Log("\n" + report)
	p := filepath.Join(shotsDir, fmt.Sprintf("timings-%dMiB.txt", mib))
	os.WriteFile(p, []byte(report), 0o644)
	t.Logf("timings: %s", p)
}

// generate writes a partition of about size bytes with segkit's engine:
// batches of 32 records of 512 bytes, segments of 64 MiB, stamped over the
// last two days.
func generate(t *testing.T, dir string, size int64) (batches, records int64) {
	t.Helper()
	cfg, err := config.Parse(map[string]string{config.SegmentBytes: strconv.Itoa(64 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(vfs.OS(), dir, cfg, kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	val := make([]byte, 512)
	recs := make([]record.Record, 32)
	var buf []byte
	now := time.Now()
	start := now.Add(-48 * time.Hour)
	var written int64
	for written < size {
		ts := start.Add(time.Duration(float64(48*time.Hour) * float64(written) / float64(size)))
		for i := range recs {
			n := batches*32 + int64(i)
			for j := range val {
				val[j] = byte('a' + (n+int64(j))%26)
			}
			recs[i] = record.Record{Key: []byte("key-" + strconv.FormatInt(n, 10)), Value: append([]byte(nil), val...), Timestamp: ts.UnixMilli()}
		}
		spec := record.NewBatchSpec(0, compress.None)
		if buf, err = w.AppendBatch(buf[:0], &spec, recs); err != nil {
			t.Fatal(err)
		}
		res, err := l.Append(buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		written += int64(res.Bytes)
		batches++
		records += 32
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return batches, records
}
