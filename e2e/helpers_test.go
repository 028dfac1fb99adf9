package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestMain removes what the tests built (the segviz binary, the exported
// demo); the screenshots stay, for looking at.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range cleanup {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

var cleanup []string

var (
	repoRoot  string
	segviz    string // the segviz binary built for the tests
	chromium  string
	shotsDir  string
	skipWhy   string
	setupErr  error
	setupOnce sync.Once
)

// setup finds Chromium, builds segviz and makes the screenshot directory,
// once. Without Chromium the tests skip, unless CI=true.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		var err error
		if repoRoot, err = filepath.Abs(".."); err != nil {
			setupErr = err
			return
		}
		chromium = findChromium()
		if chromium == "" {
			skipWhy = "no Chromium: install it (Debian: apt-get install -y chromium) or set SEGVIZ_CHROMIUM"
			return
		}
		if segviz, setupErr = builtSegviz(); setupErr != nil {
			return
		}
		shotsDir = os.Getenv("SEGVIZ_SCREENSHOTS")
		if shotsDir == "" {
			shotsDir, err = os.MkdirTemp("", "segviz-e2e-screenshots-")
		} else {
			err = os.MkdirAll(shotsDir, 0o755)
		}
		setupErr = err
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	if skipWhy != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("e2e: %s (required under CI=true)", skipWhy)
		}
		t.Skipf("e2e: skipping: %s", skipWhy)
	}
}

func findChromium() string {
	if p := os.Getenv("SEGVIZ_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return ""
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// server is a running `segviz serve`.
type server struct {
	url    string
	cmd    *exec.Cmd
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var urlLine = regexp.MustCompile(`at (http://\S+)`)

// startServer runs segviz serve on a free loopback port and stops it when
// the test ends.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerWith(t, segviz, nil, repoRoot, args...)
}

// startServerWith is startServer with another segviz binary, environment
// (nil: this process's) and working directory.
func startServerWith(t *testing.T, bin string, env []string, dir string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("segviz serve stderr:\n%s", s.stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("segviz serve exited without printing its URL; stderr:\n%s", s.stderr.String())
		}
		s.url = u
	case <-time.After(60 * time.Second):
		t.Fatalf("segviz serve printed no URL in 60 s; stderr:\n%s", s.stderr.String())
	}
	return s
}

// newBrowser starts a headless Chromium with a fresh profile for the test.
// Uncaught exceptions of the page fail the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", chromium, err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() {
				t.Errorf("page exception: %s (%s:%d)", m.Text, m.URL, m.Line)
			} else if m.Type == chromedp.ConsoleError {
				t.Logf("page console error: %s", m.Text)
			}
		}
	}()
	return ctx
}

// do runs actions with a time limit.
func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into T.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it is truthy.
func waitFor(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[any](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// shot saves a full-page screenshot and names it in the log.
func shot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(shotsDir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	return p
}

// hover moves the mouse to the centre of the first node matching sel.
func hover(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	do(t, ctx, "scroll to "+sel, chromedp.ScrollIntoView(sel))
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	box, err := chromedp.Run(c, chromedp.Dimensions(sel))
	if err != nil {
		t.Fatalf("box of %s: %v", sel, err)
	}
	q := box.Content
	x, y := (q[0]+q[2]+q[4]+q[6])/4, (q[1]+q[3]+q[5]+q[7])/4
	if err := chromedp.Do(c, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
		t.Fatalf("hover %s: %v", sel, err)
	}
}

// run runs segviz with args and returns its stdout; exit codes in ok are
// accepted.
func run(t *testing.T, ok []int, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(segviz, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, isExit := err.(*exec.ExitError); isExit {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("segviz %s: %v", strings.Join(args, " "), err)
	}
	for _, c := range ok {
		if c == code {
			return out
		}
	}
	t.Fatalf("segviz %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	return nil
}

// dumpCounts counts the batches and records of .log files with
// `segviz dump --json`, by file.
func dumpCounts(t *testing.T, logs ...string) map[string][2]int64 {
	t.Helper()
	out := run(t, []int{0, 1}, append([]string{"dump", "--json"}, logs...)...)
	counts := map[string][2]int64{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var line struct {
			Type  string `json:"type"`
			File  string `json:"file"`
			Count int64  `json:"count"`
		}
		if err := dec.Decode(&line); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if line.Type == "batch" {
			c := counts[filepath.Base(line.File)]
			c[0]++
			c[1] += line.Count
			counts[filepath.Base(line.File)] = c
		}
	}
	return counts
}

// logFiles lists the .log files of a partition directory.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

// exportDemo writes the demo's log directory once (segviz serve
// --export-demo) and returns its path.
func exportDemo(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "segviz-e2e-demo-")
		if err != nil {
			demoErr = err
			return
		}
		cleanup = append(cleanup, dir)
		out, err := exec.Command(segviz, "serve", "--export-demo", dir).CombinedOutput()
		if err != nil {
			demoErr = fmt.Errorf("segviz serve --export-demo: %v\n%s", err, out)
			return
		}
		demoDir = filepath.Join(dir, "kafka-logs")
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoDir
}

// bar is a segment bar of the timeline, as the DOM shows it.
type bar struct {
	Base    int64  `json:"base"`
	Suffix  string `json:"suffix"`
	Status  string `json:"status"`
	Plan    string `json:"plan"`
	Batches int64  `json:"batches"`
	Records int64  `json:"records"`
	Label   string `json:"label"`
}

const barsJS = `[...document.querySelectorAll('#timeline .seg-bar')].map(b => ({
	base: Number(b.dataset.base), suffix: b.dataset.suffix, status: b.dataset.status, plan: b.dataset.plan,
	batches: Number(b.dataset.batches || -1), records: Number(b.dataset.records || -1), label: b.getAttribute('aria-label')}))`

func bars(t *testing.T, ctx context.Context) []bar {
	t.Helper()
	return eval[[]bar](t, ctx, barsJS)
}

// planned returns the base offsets of the bars a check at now deletes.
func planned(bs []bar) []int64 {
	var out []int64
	for _, b := range bs {
		if b.Plan == "delete" {
			out = append(out, b.Base)
		}
	}
	return out
}
