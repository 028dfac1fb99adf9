package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var updateDocs = flag.Bool("update-docs", false, "TestIndexedLane: write the lane's screenshot to ../docs/img/indexed-lane.png")

var (
	lakeOnce sync.Once
	lakeDir  string
	lakeErr  error
)

// builtLake builds segviz-lake (the lake module's command) once, into a
// directory of its own, which the tests put first on PATH for segviz.
func builtLake(t *testing.T) string {
	t.Helper()
	lakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "segviz-e2e-lake-")
		if err != nil {
			lakeErr = err
			return
		}
		cleanup = append(cleanup, dir)
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "segviz-lake"), "./cmd/segviz-lake")
		cmd.Dir = filepath.Join(repoRoot, "lake")
		if out, err := cmd.CombinedOutput(); err != nil {
			lakeErr = fmt.Errorf("(cd lake && go build ./cmd/segviz-lake): %v\n%s", err, out)
		}
		lakeDir = dir
	})
	if lakeErr != nil {
		t.Fatal(lakeErr)
	}
	return lakeDir
}

// lakeFile is a line of `segviz-lake files --json`.
type lakeFile struct {
	ID          int64  `json:"id"`
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	StartOffset int64  `json:"startOffset"`
	EndOffset   int64  `json:"endOffset"`
	Bucket      string `json:"bucket"`
	Rows        int64  `json:"rows"`
	Bytes       int64  `json:"bytes"`
	Checksum    string `json:"checksum"`
	Expired     bool   `json:"expired"`
	Columns     []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Min   any    `json:"min"`
		Max   any    `json:"max"`
		Nulls int64  `json:"nulls"`
		NaNs  int64  `json:"nans"`
	} `json:"columns"`
}

// lakeRun runs segviz-lake with args in the directory work and returns
// its stdout.
func lakeRun(t *testing.T, bin, work string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "segviz-lake"), args...)
	cmd.Dir = work
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("segviz-lake %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func lakeFiles(t *testing.T, bin, work, catalog string) []lakeFile {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(lakeRun(t, bin, work, "files", "--catalog", catalog, "--expired", "--json")))
	dec.UseNumber()
	var out []lakeFile
	for {
		var f lakeFile
		if err := dec.Decode(&f); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
}

// appendBursts appends bursts of JSON records with segviz append: burst k
// of sizes[k] records, 2 s apart, at start + 5 min + k × 40 min, so that
// the bursts fall in several hours (time buckets) and each is one data
// file (the indexer's 60 s window), whose offsets do not line up with the
// small segments'. It returns the next record number.
func appendBursts(t *testing.T, dir string, start time.Time, first int, sizes []int) int {
	t.Helper()
	var times []time.Time
	for k, size := range sizes {
		t0 := start.Add(5*time.Minute + time.Duration(k)*40*time.Minute)
		for i := range size {
			times = append(times, t0.Add(time.Duration(i)*2*time.Second))
		}
	}
	return appendAt(t, dir, first, times)
}

// appendAt appends one JSON record per time, numbered from first, in
// batches of 4 and segments of 1500 bytes.
func appendAt(t *testing.T, dir string, first int, times []time.Time) int {
	t.Helper()
	var in bytes.Buffer
	n := first
	for _, ts := range times {
		v, _ := json.Marshal(map[string]any{"id": n, "amount": (n*37)%101 - 20, "name": fmt.Sprintf("c%02d", n%13), "ok": n%3 == 0})
		line, _ := json.Marshal(map[string]any{
			"key":       base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "k%d", n%5)),
			"value":     base64.StdEncoding.EncodeToString(v),
			"timestamp": ts.UnixMilli(),
		})
		in.Write(append(line, '\n'))
		n++
	}
	cmd := exec.Command(segviz, "append", "--batch-records", "4", "--segment.bytes", "1500", dir)
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("segviz append: %v\n%s", err, out)
	}
	return n
}

// laneFile is a range of the indexed lane, as the DOM shows it.
type laneFile struct {
	ID      int64   `json:"id"`
	Start   int64   `json:"start"`
	End     int64   `json:"end"`
	Bucket  string  `json:"bucket"`
	Expired bool    `json:"expired"`
	Placed  string  `json:"placed"`
	Row     int     `json:"row"`
	Left    float64 `json:"left"`
	Right   float64 `json:"right"`
	Label   string  `json:"label"`
	Text    string  `json:"text"`
	Hatched bool    `json:"hatched"`
}

const laneFilesJS = `[...document.querySelectorAll('#indexed .ifile')].map(b => { const r = b.getBoundingClientRect(); return {
	id: Number(b.dataset.id), start: Number(b.dataset.start), end: Number(b.dataset.end), bucket: b.dataset.bucket,
	expired: b.dataset.expired === 'true', placed: b.dataset.placed, row: Number(b.dataset.row || -1),
	left: r.left, right: r.right, label: b.getAttribute('aria-label'), text: b.textContent, hatched: b.classList.contains('expired')}; })`

// waitLane waits for the lane to show n files of dir.
func waitLane(t *testing.T, ctx context.Context, what string, n int) []laneFile {
	t.Helper()
	waitFor(t, ctx, what, fmt.Sprintf(`(() => { const l = document.querySelector('#indexed').dataset; return l.state === 'ready' && l.files === %q; })()`, fmt.Sprint(n)), 60*time.Second)
	return eval[[]laneFile](t, ctx, laneFilesJS)
}

// checkLaneFiles compares the lane with segviz-lake files --json: one
// range per file, with its offsets, bucket and state, labelled in words,
// and the ranges drawn over the segments (placed "over") tiling the lane
// as the files tile the offsets: each starts where the one before ends.
// Files sharing offsets (one range, several buckets) are in rows of their
// own, at the same place.
func checkLaneFiles(t *testing.T, what string, got []laneFile, want []lakeFile) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: the lane shows %d ranges, segviz-lake files --json lists %d", what, len(got), len(want))
	}
	byID := map[int64]laneFile{}
	for _, g := range got {
		byID[g.ID] = g
	}
	var over [][]laneFile // by range, in offset order
	for _, w := range want {
		g, ok := byID[w.ID]
		if !ok {
			t.Errorf("%s: file %d is not in the lane", what, w.ID)
			continue
		}
		if g.Start != w.StartOffset || g.End != w.EndOffset || g.Bucket != w.Bucket || g.Expired != w.Expired || g.Hatched != w.Expired {
			t.Errorf("%s: file %d: the lane shows %+v; segviz-lake: offsets %d–%d, bucket %s, expired %v", what, w.ID, g, w.StartOffset, w.EndOffset, w.Bucket, w.Expired)
		}
		if !strings.Contains(g.Label, fmt.Sprintf("offsets %d–%d, bucket %s", w.StartOffset, w.EndOffset, w.Bucket)) || w.Expired != strings.Contains(g.Label, "expired") {
			t.Errorf("%s: file %d: label %q does not say its offsets, bucket and state", what, w.ID, g.Label)
		}
		if g.Placed != "over" {
			continue
		}
		if n := len(over); n > 0 && over[n-1][0].Start == g.Start && over[n-1][0].End == g.End {
			over[n-1] = append(over[n-1], g)
		} else {
			over = append(over, []laneFile{g})
		}
	}
	for i, r := range over {
		for _, g := range r[1:] {
			if g.Row == r[0].Row || math.Abs(g.Left-r[0].Left) > 1 || math.Abs(g.Right-r[0].Right) > 1 {
				t.Errorf("%s: files %d and %d share offsets %d–%d: drawn at x=%.1f–%.1f row %d and x=%.1f–%.1f row %d", what, r[0].ID, g.ID, g.Start, g.End, r[0].Left, r[0].Right, r[0].Row, g.Left, g.Right, g.Row)
			}
		}
		if i == 0 {
			continue
		}
		a, b := over[i-1][0], r[0]
		if b.Start != a.End+1 {
			t.Errorf("%s: files %d (%d–%d) and %d (%d–%d) leave a gap or overlap", what, a.ID, a.Start, a.End, b.ID, b.Start, b.End)
		}
		if math.Abs(a.Right-b.Left) > 1 {
			t.Errorf("%s: file %d ends at x=%.1f, file %d starts at x=%.1f: not tiled", what, a.ID, a.Right, b.ID, b.Left)
		}
	}
}

// TestIndexedLane: segviz serve --lake draws the indexer's data files
// (segviz-lake, built from the lake module and found on PATH) over the
// segments: one range per file that segviz-lake files --json lists, tiling
// the offsets, each bucket labelled, and a click shows the file's
// statistics. Retention then deletes a segment and the indexer marks the
// files below it expired: a Reload shows them apart, hatched. New records
// indexed while the page is open appear at the lane's Refresh.
func TestIndexedLane(t *testing.T) {
	setup(t)
	bin := builtLake(t)
	// The catalog's path is relative to work, where segviz-lake and segviz
	// serve run.
	work := t.TempDir()
	dir := filepath.Join(work, "kafka-logs", "payments-0")
	catalog := "sqlite:catalog.db"
	start := time.Now().Add(-5 * time.Hour).Truncate(time.Hour)
	records := appendBursts(t, dir, start, 0, []int{5, 9, 7, 11, 6, 8, 10})
	lakeRun(t, bin, work, "index", "--catalog", catalog, "--once", dir)
	want := lakeFiles(t, bin, work, catalog)
	buckets := map[string]bool{}
	for _, f := range want {
		buckets[f.Bucket] = true
	}
	if len(want) < 5 || len(buckets) < 4 || want[0].StartOffset != 0 || want[len(want)-1].EndOffset != int64(records-1) {
		t.Fatalf("the indexer made %d files in %d buckets (want several): %+v", len(want), len(buckets), want)
	}

	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv := startServerWith(t, segviz, env, work, "--wasm", "off", "--lake", catalog, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open the page", chromedp.Navigate(srv.url))
	got := waitLane(t, ctx, "the indexed lane", len(want))
	checkLaneFiles(t, "served", got, want)
	for _, g := range got {
		if g.Placed != "over" || g.Row != 0 {
			t.Errorf("file %d placed %q in row %d: want over the segments, in one row (no file shares offsets)", g.ID, g.Placed, g.Row)
		}
	}
	// The lane shares the strip's axis: the first file starts with the
	// first segment's bar, the last ends with the last bar (the log end).
	type barBox struct {
		Base  int64   `json:"base"`
		Left  float64 `json:"left"`
		Right float64 `json:"right"`
	}
	bb := eval[[]barBox](t, ctx, `[...document.querySelectorAll('#timeline .seg-bar')].map(b => { const r = b.getBoundingClientRect(); return {base: Number(b.dataset.base), left: r.left, right: r.right}; })`)
	if len(bb) < 3 {
		t.Fatalf("the strip shows %d segments: want several", len(bb))
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Start < got[j].Start })
	if math.Abs(got[0].Left-bb[0].Left) > 1 || math.Abs(got[len(got)-1].Right-bb[len(bb)-1].Right) > 1 {
		t.Errorf("the ranges span x=%.1f–%.1f, the segments %.1f–%.1f", got[0].Left, got[len(got)-1].Right, bb[0].Left, bb[len(bb)-1].Right)
	}
	for _, g := range got {
		if !strings.Contains(g.Text, g.Bucket[11:16]) {
			t.Errorf("file %d's range says %q, not its bucket's hour %s", g.ID, g.Text, g.Bucket[11:16])
		}
	}

	// A click shows a file's statistics, as segviz-lake prints them: a
	// file that spans two segments.
	pick := want[len(want)/2]
	for _, f := range want {
		for _, b := range bb[1:] {
			if f.StartOffset < b.Base && b.Base <= f.EndOffset {
				pick = f
			}
		}
	}
	do(t, ctx, "click a file", chromedp.Click(fmt.Sprintf(`#indexed .ifile[data-id="%d"]`, pick.ID)))
	waitFor(t, ctx, "its statistics", fmt.Sprintf(`document.querySelector('#indexed-detail').dataset.id === %q`, fmt.Sprint(pick.ID)), 10*time.Second)
	type detail struct {
		Offsets, Rows, Bytes, Checksum, Bucket, Segments string
		Columns                                          map[string][5]string
	}
	d := eval[detail](t, ctx, `(() => { const t = (s) => document.querySelector(s).textContent; const cols = {};
		for (const tr of document.querySelectorAll('#indexed-columns tbody tr')) { const c = [...tr.children].map(x => x.textContent); cols[tr.dataset.column] = c.slice(1); }
		return {Offsets: t('#indexed-offsets'), Rows: t('#indexed-rows'), Bytes: t('#indexed-bytes'), Checksum: t('#indexed-checksum'), Bucket: t('#indexed-bucket'), Segments: t('#indexed-segments'), Columns: cols}; })()`)
	if !strings.HasPrefix(d.Offsets, fmt.Sprintf("%d–%d", pick.StartOffset, pick.EndOffset)) || d.Rows != commas(pick.Rows) ||
		!strings.Contains(d.Bytes, fmt.Sprintf("(%s B)", commas(pick.Bytes))) || d.Checksum != pick.Checksum || d.Bucket != pick.Bucket || !strings.Contains(d.Segments, ",") {
		t.Errorf("file %d: the detail shows %+v; segviz-lake: %+v", pick.ID, d, pick)
	}
	if len(d.Columns) != len(pick.Columns) {
		t.Errorf("file %d: %d columns shown, segviz-lake lists %d", pick.ID, len(d.Columns), len(pick.Columns))
	}
	str := func(v any) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprint(v)
	}
	for _, c := range pick.Columns {
		g := d.Columns[c.Name]
		if w := [5]string{c.Type, str(c.Min), str(c.Max), commas(c.Nulls), commas(c.NaNs)}; g != w {
			t.Errorf("file %d, column %s: the table shows %q, segviz-lake %q", pick.ID, c.Name, g, w)
		}
	}
	if g := d.Columns["value.amount"]; g[1] == "" || g[1] == "null" {
		t.Errorf("value.amount shows no min: %q", g)
	}
	png := shot(t, ctx, "23-indexed-lane.png")
	if *updateDocs {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		b, err := chromedp.Run(c, chromedp.Screenshot("#overview"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		doc := filepath.Join(repoRoot, "docs", "img", "indexed-lane.png")
		if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(doc, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (the full page: %s)", doc, png)
	}

	// Retention deletes the first segment; the indexer, run again, marks
	// the files below the new log start offset expired (exit 1: segments
	// were deleted). A Reload reads
	// the partition and runs segviz-lake again: those files are listed
	// below the strip's first segment, hatched and marked ✕.
	run(t, []int{1}, "retention", "--apply", "--config", "retention.bytes=2000", dir)
	lakeRun(t, bin, work, "index", "--catalog", catalog, "--once", dir)
	want = lakeFiles(t, bin, work, catalog)
	expired := 0
	for _, f := range want {
		if f.Expired {
			expired++
		}
	}
	if expired == 0 {
		t.Fatalf("no file expired after the retention check: %+v", want)
	}
	do(t, ctx, "reload", chromedp.Evaluate[chromedp.Void](`document.querySelector('#indexed').dataset.state = 'stale'`), chromedp.Click("#reload"))
	got = waitLane(t, ctx, "the lane after retention", len(want))
	checkLaneFiles(t, "after retention", got, want)
	for _, g := range got {
		if g.Expired && g.Placed != "below" {
			t.Errorf("expired file %d is placed %q: want below the first segment (its segment is deleted)", g.ID, g.Placed)
		}
	}
	shot(t, ctx, "24-indexed-lane-expired.png")

	// New records, indexed while the page is open: the lane's Refresh
	// runs segviz-lake again, and the new files show (past the log end
	// the strip shows until a Reload).
	appendBursts(t, dir, time.Now().Add(-30*time.Minute), records, []int{6})
	lakeRun(t, bin, work, "index", "--catalog", catalog, "--once", dir)
	want = lakeFiles(t, bin, work, catalog)
	do(t, ctx, "refresh the lane", chromedp.Click("#indexed-refresh"))
	got = waitLane(t, ctx, "the lane after a refresh", len(want))
	checkLaneFiles(t, "after a refresh", got, want)
	if last := got[len(got)-1]; last.Placed != "after" {
		t.Errorf("a file past the strip's log end is placed %q", last.Placed)
	}

	// A record late into the hour before, within the indexer's 60 s
	// window: its range is written as two files, one per bucket, sharing
	// the range's offsets; after a Reload they are stacked, at one place.
	h := time.Now().Add(-15 * time.Second).Truncate(time.Hour)
	appendAt(t, dir, records+6, []time.Time{h.Add(-10 * time.Second), h.Add(5 * time.Second), h.Add(-2 * time.Second), h.Add(7 * time.Second)})
	lakeRun(t, bin, work, "index", "--catalog", catalog, "--once", dir)
	want = lakeFiles(t, bin, work, catalog)
	shared := 0
	for i := 1; i < len(want); i++ {
		if want[i].StartOffset == want[i-1].StartOffset {
			shared++
		}
	}
	if shared == 0 {
		t.Fatalf("no two files share a range: %+v", want)
	}
	do(t, ctx, "reload", chromedp.Evaluate[chromedp.Void](`document.querySelector('#indexed').dataset.state = 'stale'`), chromedp.Click("#reload"))
	got = waitLane(t, ctx, "the lane with a late record", len(want))
	checkLaneFiles(t, "with a late record", got, want)
	if rows := eval[string](t, ctx, `document.querySelector('#indexed').dataset.rows`); rows != "2" {
		t.Errorf("the lane has %s rows, want 2", rows)
	}
	shot(t, ctx, "25-indexed-lane-shared-range.png")
}

// TestIndexedLaneErrors: without segviz-lake on PATH, segviz serve --lake
// starts, says so, and the lane says it too; without --lake the lane is
// hidden.
func TestIndexedLaneErrors(t *testing.T) {
	setup(t)
	dir := filepath.Join(t.TempDir(), "kafka-logs", "payments-0")
	appendBursts(t, dir, time.Now().Add(-2*time.Hour), 0, []int{3})
	empty := t.TempDir()
	env := append(os.Environ(), "PATH="+empty)
	srv := startServerWith(t, segviz, env, repoRoot, "--wasm", "off", "--lake", "sqlite:"+filepath.Join(empty, "c.db"), dir)
	waitStderr := time.Now().Add(10 * time.Second)
	for !strings.Contains(srv.stderr.String(), "segviz-lake is not installed") && time.Now().Before(waitStderr) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(srv.stderr.String(), "segviz-lake is not installed") {
		t.Errorf("start-up said %q", srv.stderr.String())
	}
	ctx := newBrowser(t)
	do(t, ctx, "open the page", chromedp.Navigate(srv.url))
	waitFor(t, ctx, "the lane's error", `document.querySelector('#indexed').dataset.state === 'error'`, 30*time.Second)
	if msg := eval[string](t, ctx, `document.querySelector('#indexed-status').textContent`); !strings.Contains(msg, "segviz-lake is not installed") {
		t.Errorf("the lane says %q", msg)
	}
	if eval[bool](t, ctx, `document.querySelector('#indexed-section').hidden`) {
		t.Error("the lane is hidden: its error is not shown")
	}

	srv2 := startServer(t, "--wasm", "off", dir)
	do(t, ctx, "open the page without --lake", chromedp.Navigate(srv2.url))
	waitFor(t, ctx, "the timeline", `document.querySelector('#timeline').dataset.segments === '1'`, 30*time.Second)
	waitFor(t, ctx, "the lane hidden", `document.querySelector('#indexed').dataset.state === 'disabled' && document.querySelector('#indexed-section').hidden`, 30*time.Second)
}
