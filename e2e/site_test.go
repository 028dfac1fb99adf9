package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStaticSite: `segviz site OUT` served by a plain static file server
// (net/http's FileServer: no segviz), and opened from file://, reads a
// real broker's partition dropped on the page with the engine it carries:
// every view
// shows it (segments with segviz dump's counts, batches, index plots,
// the retention what-if, compaction, verification).
func TestStaticSite(t *testing.T) {
	setup(t)
	out := filepath.Join(t.TempDir(), "site")
	run(t, []int{0}, "site", out)
	if code := runCode(t, "site", out); code != 2 {
		t.Errorf("segviz site into a non-empty directory: exit %d, want 2", code)
	}
	part := realPartition(t) // a real broker's partition (../shared/kafka-real)

	srv := httptest.NewServer(http.FileServer(http.Dir(out)))
	t.Cleanup(srv.Close)
	ctx := newBrowser(t)
	do(t, ctx, "open the static site", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible("#dropzone"))
	if src := eval[string](t, ctx, `document.querySelector('#source-name').textContent`); !strings.Contains(src, "static site") {
		t.Errorf("source %q", src)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#timeline .seg-bar').length`); n != 0 {
		t.Errorf("%d segment bars before anything is dropped", n)
	}
	// No partition yet: a message, and no empty tables or panes.
	shown := `[...document.querySelectorAll('.tabs, .panel, #lane-section, .legend, #part-facts')].filter(e => getComputedStyle(e).display !== 'none').length`
	if n := eval[int](t, ctx, shown); n != 0 || !eval[bool](t, ctx, `!!document.querySelector('#empty-msg')`) {
		t.Errorf("with no partition, %d panes are drawn (want none, and the message)", n)
	}
	shot(t, ctx, "16-site-empty.png")
	dropAndCheckViews(t, ctx, part, "16-site")
	if n := eval[int](t, ctx, `[...document.querySelectorAll('.tabs, #panel-verify')].filter(e => getComputedStyle(e).display !== 'none').length`); n != 2 {
		t.Errorf("after the drop, %d of the tabs and the verification pane are shown", n)
	}

	// From disk: file://OUT/index.html.
	ctx2 := newBrowser(t)
	do(t, ctx2, "open the site from file://", chromedp.Navigate("file://"+filepath.Join(out, "index.html")), chromedp.WaitVisible("#dropzone"))
	do(t, ctx2, "choose the folder", chromedp.SetUploadFiles("#folder-input", []string{part}, chromedp.NodeReady))
	waitFor(t, ctx2, "the dropped partition from file://", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelectorAll('#timeline .seg-bar').length > 0`, 120*time.Second)
	shot(t, ctx2, "17-site-file-url.png")
}

// TestInstalledBinary: segviz installed with `go install -trimpath` into a
// temporary GOPATH and run from outside the source tree, with no go
// command on PATH, serves the engine it embeds, and a dropped partition
// opens in the page.
func TestInstalledBinary(t *testing.T) {
	setup(t)
	tmp := t.TempDir()
	gobin := filepath.Join(tmp, "bin")
	install := exec.Command("go", "install", "-trimpath", "./cmd/segviz")
	install.Dir = repoRoot
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	install.Env = append(os.Environ(), "GOBIN="+gobin, "GOPATH="+filepath.Join(tmp, "gopath"), "GOMODCACHE="+strings.TrimSpace(string(modcache)))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "segviz")
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o755)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	if _, err := exec.LookPath("/usr/bin/go"); err == nil {
		t.Fatal("/usr/bin/go exists: the test cannot hide the go command")
	}
	part := filepath.Join(exportDemo(t), "orders-0")
	srv := startServerWith(t, bin, env, tmp, part)
	resp, err := http.Get(srv.url + "wasm/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ State, Origin, Reason string }
	decodeJSON(t, resp, &st)
	for st.State == "building" {
		time.Sleep(200 * time.Millisecond)
		resp, err := http.Get(srv.url + "wasm/status")
		if err != nil {
			t.Fatal(err)
		}
		decodeJSON(t, resp, &st)
	}
	if st.State != "ready" || st.Origin != "embedded" {
		t.Fatalf("the installed segviz's WASM engine: %+v, want ready and embedded", st)
	}
	// Served gzipped.
	req, _ := http.NewRequest("GET", srv.url+"wasm/segkit.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" || len(gz) > 3<<20 || !bytes.HasPrefix(gz, []byte{0x1f, 0x8b}) {
		t.Errorf("segkit.wasm: Content-Encoding %q, %d bytes; want gzip, at most 3 MiB", resp.Header.Get("Content-Encoding"), len(gz))
	}
	t.Logf("the installed segviz serves its embedded engine: %d bytes gzipped", len(gz))
	ctx := newBrowser(t)
	do(t, ctx, "open the installed segviz", chromedp.Navigate(srv.url), chromedp.WaitVisible("#timeline .seg-bar"))
	do(t, ctx, "choose the folder", chromedp.SetUploadFiles("#folder-input", []string{part}, chromedp.NodeReady))
	waitFor(t, ctx, "the dropped partition", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelector('#source-name').textContent.startsWith('dropped')`, 120*time.Second)
	shot(t, ctx, "18-installed-binary-drop.png")
}

// dropAndCheckViews drops the partition directory dir on the page and
// checks every view shows it; screenshots are named prefix-*.png.
func dropAndCheckViews(t *testing.T, ctx context.Context, dir, prefix string) {
	t.Helper()
	do(t, ctx, "choose the folder", chromedp.SetUploadFiles("#folder-input", []string{dir}, chromedp.NodeReady))
	waitFor(t, ctx, "the dropped partition", `document.querySelector('#dropzone').dataset.loaded === 'true' && document.querySelectorAll('#timeline .seg-bar').length > 0`, 120*time.Second)
	waitFor(t, ctx, "the census", `document.querySelector('#census')?.dataset.done === 'true'`, 120*time.Second)
	counts := dumpCounts(t, logFiles(t, dir)...)
	for _, b := range bars(t, ctx) {
		if b.Status == "deleted" {
			continue
		}
		c := counts[fmt.Sprintf("%020d.log", b.Base)]
		if b.Batches != c[0] || b.Records != c[1] {
			t.Errorf("segment %d: the page counts %d batches %d records, segviz dump %d and %d", b.Base, b.Batches, b.Records, c[0], c[1])
		}
	}
	waitFor(t, ctx, "the batch table", `document.querySelector('#batch-grid').dataset.done === 'true' && Number(document.querySelector('#batch-grid').dataset.rows) > 0`, 60*time.Second)
	shot(t, ctx, prefix+"-segment.png")
	do(t, ctx, "the index plots", chromedp.Click("#tab-index"))
	waitFor(t, ctx, "an index plot", `document.querySelectorAll('#panel-index svg').length > 0`, 60*time.Second)
	shot(t, ctx, prefix+"-index.png")
	do(t, ctx, "the retention what-if", chromedp.Click("#tab-retention"))
	waitFor(t, ctx, "the what-if", `document.querySelector('#panel-retention').dataset.busy === 'false' && !!document.querySelector('#panel-retention').dataset.query`, 60*time.Second)
	shot(t, ctx, prefix+"-retention.png")
	do(t, ctx, "compaction", chromedp.Click("#tab-compaction"))
	waitFor(t, ctx, "the compaction plan", `document.querySelector('#panel-compaction').dataset.state === 'done'`, 60*time.Second)
	shot(t, ctx, prefix+"-compaction.png")
	do(t, ctx, "verification", chromedp.Click("#tab-verify"))
	waitFor(t, ctx, "the findings", `document.querySelector('#panel-verify').dataset.state === 'done'`, 120*time.Second)
	shot(t, ctx, prefix+"-verify.png")
}

// runCode runs segviz and returns its exit code.
func runCode(t *testing.T, args ...string) int {
	t.Helper()
	err := exec.Command(segviz, args...).Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
