//go:build !windows && !js && !wasip1

package main

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// toFIFO replaces the file name with a FIFO, or skips the test.
func toFIFO(t *testing.T, name string) {
	t.Helper()
	if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// runWithin runs segviz with args and fails the test if it has not
// finished after d: a command blocked opening a FIFO never finishes.
func runWithin(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runSegviz(args...)
		done <- result{code, out, errs}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errOut
	case <-time.After(d):
		t.Fatalf("segviz %s: still running after %v (blocked on a FIFO, or reading a sparse file?)", strings.Join(args, " "), d)
	}
	return 0, "", ""
}

// TestFIFOSegmentFileRefused: a FIFO named as a segment's .log or as an
// index makes every command that would read it exit 3 at once, with a
// message naming it, instead of waiting forever for a writer; nothing is
// written (no output directory, the partition unchanged).
func TestFIFOSegmentFileRefused(t *testing.T) {
	for _, ext := range []string{".log", ".timeindex", ".index"} {
		t.Run(ext, func(t *testing.T) {
			dir, logs := segmented(t)
			fifo := strings.TrimSuffix(logs[1], ".log") + ext
			toFIFO(t, fifo)
			before := snapshot(t, filepath.Dir(dir))
			outs := t.TempDir()
			for _, args := range [][]string{
				{"dump", fifo},
				{"dump", "--json", fifo},
				{"verify", dir},
				{"verify", "--json", dir},
				{"salvage", "--out", filepath.Join(outs, "s", "orders-0"), dir},
				{"recover", "--out", filepath.Join(outs, "r", "orders-0"), dir},
				{"recover", "--in-place", dir},
			} {
				code, _, errs := runWithin(t, 10*time.Second, args...)
				want := filepath.ToSlash(fifo) + ": not a regular file (a FIFO)"
				if code != exitFailure || !strings.Contains(errs, want) {
					t.Errorf("segviz %s: exit %d, want 3 with %q:\n%s", strings.Join(args, " "), code, want, errs)
				}
			}
			if after := snapshot(t, filepath.Dir(dir)); after != before {
				t.Errorf("the log directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if ents, _ := os.ReadDir(outs); len(ents) != 0 {
				t.Errorf("output directories were made: %v", ents)
			}
		})
	}
}

// TestSparseIndexTooLarge: a sparse 1 TiB .timeindex (no disk space, a
// Truncate) is neither copied by recover --out, which copied it densely
// until the disk filled, nor read by recover --in-place, salvage or dump,
// which read it whole: each says so, the recovery rebuilds it, and the
// commands finish at once.
func TestSparseIndexTooLarge(t *testing.T) {
	dir, logs := segmented(t)
	big := strings.TrimSuffix(logs[1], ".log") + ".timeindex"
	f, err := os.OpenFile(big, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse 1 TiB file on this filesystem: %v", err)
	}
	f.Close()
	outs := t.TempDir()
	wantDetail := "1099511627776 bytes, over the 10485760 bytes Kafka could have written"
	type finding struct{ File, Kind, Level, Detail string }
	for _, tc := range []struct {
		args []string
		done string // how the detail ends
		out  string // the output directory, "" for none
	}{
		{[]string{"recover", "--json", "--out", filepath.Join(outs, "r", "orders-0"), dir}, "not copied: recovering the copy rebuilds it", filepath.Join(outs, "r", "orders-0")},
		{[]string{"salvage", "--json", "--out", filepath.Join(outs, "s", "orders-0"), dir}, "not read: salvage reads no index, and builds the output's from the batches it keeps", filepath.Join(outs, "s", "orders-0")},
	} {
		start := time.Now()
		code, out, errs := runWithin(t, 30*time.Second, tc.args...)
		took := time.Since(start)
		if code != exitOK {
			t.Fatalf("segviz %s: exit %d\n%s\n%s", strings.Join(tc.args, " "), code, out, errs)
		}
		var rep struct{ Findings []finding }
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(rep.Findings) != 1 || rep.Findings[0].Kind != "index-too-large" || rep.Findings[0].Level != "error" || rep.Findings[0].File != filepath.ToSlash(big) ||
			!strings.Contains(rep.Findings[0].Detail, wantDetail) || !strings.HasSuffix(rep.Findings[0].Detail, tc.done) {
			t.Errorf("segviz %s: findings %+v", tc.args[0], rep.Findings)
		}
		var allocated int64
		filepath.WalkDir(outs, func(p string, d fs.DirEntry, err error) error {
			if fi, err := os.Lstat(p); err == nil {
				allocated += fi.Sys().(*syscall.Stat_t).Blocks * 512
			}
			return nil
		})
		if allocated > 64<<20 {
			t.Errorf("segviz %s: %d bytes allocated under the output, want a few KiB", tc.args[0], allocated)
		}
		fi, err := os.Stat(filepath.Join(tc.out, filepath.Base(big)))
		if err != nil || fi.Size() > 10<<20 {
			t.Errorf("segviz %s: the output's %s: %v %v, want a rebuilt index", tc.args[0], filepath.Base(big), fi, err)
		}
		t.Logf("segviz %s: %v, %d bytes allocated under %s", strings.Join(tc.args, " "), took, allocated, outs)
	}
	for _, args := range [][]string{{"dump", big}, {"dump", "--json", big}} {
		code, _, errs := runWithin(t, 30*time.Second, args...)
		if code != exitProblem || !strings.Contains(errs, big+": 1099511627776 bytes, over the 2147483647 bytes Kafka could have written") {
			t.Errorf("segviz %s: exit %d, want 1 and a message\n%s", strings.Join(args, " "), code, errs)
		}
	}
	// The text report says it too.
	code, out, _ := runWithin(t, 30*time.Second, "recover", "--out", filepath.Join(outs, "r2", "orders-0"), dir)
	if code != exitOK || !strings.Contains(out, "error   "+filepath.ToSlash(big)+": index-too-large: "+wantDetail) {
		t.Errorf("recover --out: exit %d\n%s", code, out)
	}
	// In place: removed unread, rebuilt.
	code, out, errs := runWithin(t, 30*time.Second, "recover", "--in-place", dir)
	if code != exitOK || !strings.Contains(out, "not read: removed, and rebuilt by the recovery") {
		t.Errorf("recover --in-place: exit %d\n%s\n%s", code, out, errs)
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() > 10<<20 {
		t.Errorf("after recover --in-place: %v %v, want a rebuilt index", fi, err)
	}
	if code, out, _ := runSegviz("verify", dir); code != exitOK {
		t.Errorf("verify after recover --in-place: exit %d\n%s", code, out)
	}
}

// TestServeFIFO: a request that opens a FIFO named like a segment gets an
// error status at once, naming it; the rest is served.
func TestServeFIFO(t *testing.T) {
	dir, logs := segmented(t)
	toFIFO(t, logs[1])
	url, _, _ := startServe(t, serveOptions{addr: "127.0.0.1:0", dir: filepath.Dir(dir)})
	client := &http.Client{Timeout: 5 * time.Second}
	for _, tc := range []struct {
		path string
		code int
	}{
		{"api/partitions", http.StatusOK},
		{"api/partition?dir=orders-0", http.StatusForbidden},
		{"files/orders-0/" + filepath.Base(logs[1]), http.StatusForbidden},
		{"files/orders-0/" + filepath.Base(logs[0]), http.StatusOK},
	} {
		resp, err := client.Get(url + tc.path)
		if err != nil {
			t.Fatalf("%s: %v (blocked on the FIFO?)", tc.path, err)
		}
		var body strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d: %s", tc.path, resp.StatusCode, tc.code, body.String())
		}
		if tc.code != http.StatusOK && !strings.Contains(body.String(), filepath.Base(logs[1])+": not a regular file (a FIFO)") {
			t.Errorf("%s: %s: the error does not name the FIFO", tc.path, body.String())
		}
	}
}

// serveHelperEnv makes the test binary run "segviz serve" on the
// directory it names (TestHelperServe).
const serveHelperEnv = "SEGVIZ_TEST_SERVE_DIR"

// TestHelperServe is not a test: it is the child process of
// TestServeSIGTERM.
func TestHelperServe(t *testing.T) {
	dir := os.Getenv(serveHelperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	os.Exit(run([]string{"serve", "--wasm", "off", "--addr", "127.0.0.1:0", dir}, os.Stdout, os.Stderr))
}

// TestServeSIGTERM: a segviz serve process whose partition has a FIFO
// named as a segment answers the request touching it, and exits promptly on
// SIGTERM. It used to block in the open for good, holding the session,
// and then ignore SIGTERM.
func TestServeSIGTERM(t *testing.T) {
	dir, logs := segmented(t)
	toFIFO(t, logs[1])
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServe$")
	cmd.Env = append(os.Environ(), serveHelperEnv+"="+filepath.Dir(dir))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill() // if the test fails before it exits
	i := strings.Index(line, "http://")
	if err != nil || i < 0 {
		t.Fatalf("serve: %q %v\n%s", line, err, stderr.String())
	}
	url := strings.TrimSpace(line[i:])
	client := &http.Client{Timeout: 3 * time.Second}
	if resp, err := client.Get(url + "api/partition?dir=orders-0"); err != nil {
		t.Errorf("the request touching the FIFO: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("the request touching the FIFO: 200")
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM, want 0\n%s", err, stderr.String())
		}
		t.Logf("exited %v after SIGTERM", time.Since(start))
	case <-time.After(8 * time.Second):
		t.Fatalf("serve still running 8 s after SIGTERM\n%s", stderr.String())
	}
}
