package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/internal/viz"
)

// startServe runs serve until the test ends and returns its URL.
func startServe(t *testing.T, o serveOptions) (string, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	o.ready = ready
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- serve(ctx, o, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("serve exited %d: %s", code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case url := <-ready:
		return url, &stdout, &stderr
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	return "", nil, nil
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v: %s", url, err, b)
		}
	}
	return resp.StatusCode
}

func TestServeDemo(t *testing.T) {
	url, stdout, _ := startServe(t, serveOptions{addr: "127.0.0.1:0"})
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(stdout.String(), "serving the demo") || !strings.Contains(stdout.String(), url) {
		t.Errorf("url %q, stdout %q", url, stdout)
	}
	var ps viz.PartitionsJSON
	if code := getJSON(t, url+"api/partitions", &ps); code != 200 || !ps.Demo || len(ps.Partitions) != 2 {
		t.Fatalf("%d %+v", code, ps)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("page: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// --wasm off: the page is told why dropped files cannot be opened.
	var st struct{ State, Reason string }
	getJSON(t, url+"wasm/status", &st)
	if st.State != "unavailable" || !strings.Contains(st.Reason, "--wasm=off") {
		t.Errorf("wasm status %+v", st)
	}
}

func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	if code := run([]string{"serve", "--export-demo", dir}, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("export: %d", code)
	}
	url, stdout, _ := startServe(t, serveOptions{addr: "localhost:0", dir: filepath.Join(dir, demo.LogDir)})
	if !strings.HasPrefix(url, "http://localhost:") || !strings.Contains(stdout.String(), "(read-only)") {
		t.Errorf("url %q, stdout %q", url, stdout)
	}
	var ps viz.PartitionsJSON
	getJSON(t, url+"api/partitions", &ps)
	if ps.Demo || ps.Name != demo.LogDir || len(ps.Partitions) != 2 {
		t.Fatalf("%+v", ps)
	}
	var r viz.RetentionJSON
	getJSON(t, url+"api/retention?dir=orders-0&now="+nowMs(), &r)
	var got []int64
	for _, d := range r.Deletions {
		got = append(got, d.BaseOffset)
	}
	if !slices.Equal(got, []int64{378, 967}) {
		t.Errorf("served export deletes %v at the demo's now", got)
	}
	if code := getJSON(t, url+"files/../../etc/passwd", nil); code == 200 {
		t.Error("a path outside DIR was served")
	}
}

func nowMs() string { return strings.TrimSpace(string(must(json.Marshal(demo.Now.UnixMilli())))) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestExportDemoRetention checks that segviz retention agrees with the
// page's default what-if on the exported demo.
func TestExportDemoRetention(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if code := run([]string{"serve", "--export-demo", dir}, &out, io.Discard); code != exitOK || !strings.Contains(out.String(), demo.Now.Format(time.RFC3339)) {
		t.Fatalf("export: %d %q", code, out.String())
	}
	if code := run([]string{"serve", "--export-demo", dir}, io.Discard, io.Discard); code != exitFailure {
		t.Errorf("a second export into the same directory: %d", code)
	}
	out.Reset()
	code := run([]string{"retention", "--json", "--now", nowMs(), filepath.Join(dir, demo.LogDir, "orders-0")}, &out, io.Discard)
	if code != exitOK { // the backlog's far-past timestamps are warnings, which do not fail
		t.Errorf("retention: exit %d", code)
	}
	var r struct {
		Deletions []struct {
			BaseOffset int64 `json:"baseOffset"`
		} `json:"deletions"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Deletions) != 2 || r.Deletions[0].BaseOffset != 378 || r.Deletions[1].BaseOffset != 967 {
		t.Errorf("deletions %+v", r.Deletions)
	}
	// The export keeps the files' times.
	st, err := os.Stat(filepath.Join(dir, demo.LogDir, "orders-0", "00000000000000002361.log"))
	if err != nil || st.ModTime().After(demo.Now) || st.ModTime().Before(demo.Now.Add(-5*24*time.Hour)) {
		t.Errorf("mtime %v", st.ModTime())
	}
}

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, exitOK},
		{[]string{"--wasm", "maybe"}, exitUsage},
		{[]string{"a", "b"}, exitUsage},
		{[]string{"--nope"}, exitUsage},
		{[]string{"--export-demo", dir, "x"}, exitUsage},
		{[]string{"--addr", "nohostport", dir}, exitUsage},
		{[]string{filepath.Join(dir, "missing")}, exitFailure},
		{[]string{file}, exitUsage}, // as verify: not a partition or log directory
	} {
		var stdout, stderr bytes.Buffer
		if code := runServe(tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("serve %v: exit %d, want %d: %s", tc.args, code, tc.code, stderr.String())
		}
	}
	var help bytes.Buffer
	runServe([]string{"--help"}, &help, io.Discard)
	for _, s := range []string{"--addr", "loopback", "read-only", "--export-demo", "WASM"} {
		if !strings.Contains(help.String(), s) {
			t.Errorf("help does not mention %s", s)
		}
	}
	var usage bytes.Buffer
	run([]string{"help"}, &usage, io.Discard)
	if !strings.Contains(usage.String(), "serve") {
		t.Error("usage does not list serve")
	}
}

func TestServeNotLoopback(t *testing.T) {
	url, _, stderr := startServe(t, serveOptions{addr: "0.0.0.0:0"})
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(stderr.String(), "not on loopback") {
		t.Errorf("url %q stderr %q", url, stderr)
	}
}

// TestLeadingFlagServes: "segviz --addr H:P" is "segviz serve --addr H:P".
func TestLeadingFlagServes(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"--addr", "nohostport"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "addr") {
		t.Fatalf("segviz --addr nohostport: exit %d, stderr %q", code, stderr.String())
	}
}

// TestServeStopsWithStuckRequest: a request still running when serve is
// told to stop (here, the download of a large file by a client that stopped
// reading) gets shutdownGrace, then its connection is closed, and serve
// returns: it used to wait 5 s and leave the connection open.
func TestServeStopsWithStuckRequest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0") // a partition: serve refuses other folders
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk space
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, serveOptions{addr: "127.0.0.1:0", dir: dir, ready: ready}, &stdout, &stderr)
	}()
	var url string
	select {
	case url = <-ready:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /files/big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") // and never read the answer
	time.Sleep(300 * time.Millisecond)                                      // the handler fills the socket's buffers and blocks
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		// shutdownGrace (2 s) and the closing; it was 5 s.
		if took := time.Since(start); code != exitOK || took > 4*time.Second {
			t.Errorf("serve returned %d after %v, want 0 within 4 s: %s", code, took, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(stderr.String(), "requests still running after") {
		t.Errorf("stderr does not say requests were cut off: %s", stderr.String())
	}
}
