package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/vfs"
)

// TestTieredStrip serves a tiered partition with --remote after local
// retention removed all but the last two segments from local disk: the
// strip shows the remote segments (marked remote, read from the remote
// store), then the copied segment still on local disk, then the active
// one; the overview says how many are where; and a remote segment's batch
// table is filled from the remote's .log, with segviz dump's count of it.
func TestTieredStrip(t *testing.T) {
	setup(t)
	dir, remote := tieredPartition(t)
	srv := startServer(t, "--remote", "file://"+remote, dir)
	ctx := newBrowser(t)
	do(t, ctx, "open the tiered partition", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 60*time.Second)

	type whereBar struct {
		Base   int64  `json:"base"`
		Where  string `json:"where"`
		Status string `json:"status"`
		Label  string `json:"label"`
	}
	bs := eval[[]whereBar](t, ctx, `[...document.querySelectorAll('#timeline .seg-bar')].map(b => ({base: Number(b.dataset.base), where: b.dataset.where, status: b.dataset.status, label: b.getAttribute('aria-label')}))`)
	var wheres []string
	for _, b := range bs {
		wheres = append(wheres, b.Where)
	}
	n := len(bs)
	if n < 4 || strings.Join(wheres[n-2:], " ") != "both local" || strings.Count(strings.Join(wheres, " "), "remote") != n-2 {
		t.Fatalf("the strip's segments are %v, want remote ones, then one copied still local (both), then the active one (local)", wheres)
	}
	if !strings.Contains(bs[0].Label, "remote only") || !strings.Contains(bs[n-2].Label, "copied") || bs[0].Status != "remote" {
		t.Errorf("labels: first %q (status %s), copied %q", bs[0].Label, bs[0].Status, bs[n-2].Label)
	}
	if only := eval[string](t, ctx, `document.querySelector('#fact-remote')?.dataset.only`); only != fmt.Sprint(n-2) {
		t.Errorf("the overview's remote fact says %q remote-only segments, want %d", only, n-2)
	}
	if lso := eval[string](t, ctx, `document.querySelector('#fact-lso').textContent`); lso != "0" {
		t.Errorf("log start offset shown %q, want 0 (the remote's)", lso)
	}

	// A remote segment's batches, from the remote's .log.
	do(t, ctx, "select the second remote segment", chromedp.Click(fmt.Sprintf(`#timeline .seg-bar[data-base="%d"]`, bs[1].Base)))
	waitFor(t, ctx, "its batch table", fmt.Sprintf(`document.querySelector('#batch-grid').dataset.done === 'true' && document.querySelector('#timeline .seg-bar.selected')?.dataset.base === '%d'`, bs[1].Base), 30*time.Second)
	rows := eval[int](t, ctx, `Number(document.querySelector('#batch-grid').dataset.rows)`)
	logs, _ := filepath.Glob(filepath.Join(remote, tier.RootDirName, "*", fmt.Sprintf("%020d-*.log", bs[1].Base)))
	if len(logs) != 1 {
		t.Fatalf("remote .log of segment %d: %v", bs[1].Base, logs)
	}
	if c := dumpCounts(t, logs[0])[filepath.Base(logs[0])]; int64(rows) != c[0] {
		t.Errorf("remote segment %d: the batch table has %d rows, segviz dump of %s %d batches", bs[1].Base, rows, logs[0], c[0])
	}
	if shown := eval[int](t, ctx, `[...document.querySelectorAll(".legend-remote")].filter(li => !li.hidden).length`); shown != 2 {
		t.Errorf("%d remote legend entries shown, want 2", shown)
	}
	shot(t, ctx, "15-tiered-strip.png")
}

// tieredPartition writes kafka-logs/orders-0 (segment.bytes 16 KiB, 600
// records of 200 bytes, a topic id) and tiers it to remote/ with tier:
// every closed segment copied, then local retention (local.retention.bytes
// 20 KiB) deletes the oldest ones locally.
func tieredPartition(t *testing.T) (dir, remote string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "kafka-logs", "orders-0")
	remote = filepath.Join(root, "remote")
	if err := os.MkdirAll(remote, 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := vfs.OS()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		config.SegmentBytes: "16384", "remote.storage.enable": "true", "local.retention.bytes": "20480",
	})
	if err != nil {
		t.Fatal(err)
	}
	clk := &fixedClock{}
	clk.ms.Store(time.Now().UnixMilli())
	l, err := kafkalog.Open(fsys, filepath.ToSlash(dir), cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.WritePartitionMetadata(fsys, filepath.ToSlash(dir), checkpoint.UUID{1: 9, 15: 3}); err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	for i := range 600 {
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: clk.ms.Load(), Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte(strings.Repeat("v", 200))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
		clk.ms.Add(10)
	}
	tr, _, err := tier.Open(fsys, l, tier.NewDir(fsys, filepath.ToSlash(remote)), tier.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if up, err := tr.Upload(); err != nil || len(up.Copied) < 4 {
		t.Fatalf("upload: %d segments copied, %v", len(up.Copied), err)
	}
	if n, err := tr.DeleteLocal(); err != nil || n < 2 {
		t.Fatalf("local deletion: %d segments, %v", n, err)
	}
	if _, err := l.DeletePendingSegments(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, remote
}

type fixedClock struct{ ms atomic.Int64 }

func (c *fixedClock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }
