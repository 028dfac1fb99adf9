package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
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
