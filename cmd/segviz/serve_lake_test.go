package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// lakeLines is what the fake segviz-lake prints: files of the served
// partitions orders-0 and orders-1, of another topic, and an expired one.
const lakeLines = `{"id":1,"topic":"orders","partition":0,"startOffset":0,"endOffset":9,"bucket":"2026-03-02T07:00:00Z","rows":10,"bytes":2048,"checksum":"aa","expired":true,"columns":[{"name":"offset","type":"int64","min":0,"max":9,"nulls":0,"nans":0}]}
{"id":2,"topic":"orders","partition":0,"startOffset":10,"endOffset":24,"bucket":"2026-03-02T08:00:00Z","rows":15,"bytes":3072,"checksum":"bb","expired":false,"columns":[{"name":"offset","type":"int64","min":10,"max":24,"nulls":0,"nans":0},{"name":"value.id","type":"int64","min":-9223372036854775808,"max":9223372036854775807,"nulls":1,"nans":0},{"name":"key","type":"binary","min":"k\\x00","max":"kz","nulls":0,"nans":0},{"name":"value.note","type":"string","min":null,"max":null,"nulls":15,"nans":0}]}
{"id":3,"topic":"orders","partition":1,"startOffset":0,"endOffset":4,"bucket":"2026-03-02T08:00:00Z","rows":5,"bytes":1024,"checksum":"cc","expired":false,"columns":[]}
{"id":4,"topic":"payments","partition":0,"startOffset":0,"endOffset":4,"bucket":"2026-03-02T08:00:00Z","rows":5,"bytes":1024,"checksum":"dd","expired":false,"columns":[]}
`

// fakeLake puts a segviz-lake shell script with body (none: no
// segviz-lake) first on PATH.
func fakeLake(t *testing.T, body string) string {
	t.Helper()
	bin := t.TempDir()
	if body != "" {
		if err := os.WriteFile(filepath.Join(bin, "segviz-lake"), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The script's commands (cat, sleep…) are in /usr/bin and /bin.
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"/usr/bin"+string(os.PathListSeparator)+"/bin")
	return bin
}

// lakeLogDir makes a log directory of the (empty) partitions orders-0,
// orders-1 and notes (a directory whose name is not TOPIC-N is no
// partition).
func lakeLogDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	for _, p := range []string{"orders-0", "orders-1"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type lakeAnswer struct {
	Enabled      bool       `json:"enabled"`
	Catalog      string     `json:"catalog"`
	Dir          string     `json:"dir"`
	Topic        string     `json:"topic"`
	Partition    int32      `json:"partition"`
	Files        []lakeFile `json:"files"`
	Total        int        `json:"total"`
	Truncated    bool       `json:"truncated"`
	CatalogFiles int        `json:"catalogFiles"`
	Error        string     `json:"error"`
}

func getLake(t *testing.T, url string) (int, lakeAnswer, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a lakeAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %d: not JSON: %v: %s", url, resp.StatusCode, err, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q", url, ct)
	}
	return resp.StatusCode, a, resp.Header
}

func skipNoShell(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("the test's segviz-lake is a shell script")
	}
}

// TestServeLake: /api/lake runs segviz-lake files --catalog CATALOG
// --expired --json and keeps the files of the partition asked for, with
// their statistics as segviz-lake printed them (and the bounds as text).
func TestServeLake(t *testing.T) {
	skipNoShell(t)
	bin := fakeLake(t, `echo "$@" >> "$(dirname "$0")/args"
cat <<'EOF'
`+lakeLines+`EOF
`)
	url, _, stderr := startServe(t, serveOptions{addr: "127.0.0.1:0", dir: lakeLogDir(t), lake: "sqlite:cat.db"})
	if stderr.Len() != 0 {
		t.Errorf("start-up said %q", stderr)
	}
	code, a, _ := getLake(t, url+"api/lake?dir=orders-0")
	if code != 200 || !a.Enabled || a.Topic != "orders" || a.Partition != 0 || a.Catalog != "sqlite:cat.db" || a.CatalogFiles != 4 || a.Total != 2 || a.Truncated {
		t.Fatalf("orders-0: %d %+v", code, a)
	}
	if len(a.Files) != 2 || a.Files[0].ID != 1 || a.Files[1].ID != 2 || !a.Files[0].Expired || a.Files[1].Expired {
		t.Fatalf("orders-0 files: %+v", a.Files)
	}
	f := a.Files[1]
	if f.StartOffset != 10 || f.EndOffset != 24 || f.Rows != 15 || f.Bytes != 3072 || f.Checksum != "bb" || f.Bucket != "2026-03-02T08:00:00Z" || len(f.Columns) != 4 {
		t.Errorf("file 2: %+v", f)
	}
	text := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for i, want := range [][2]string{{"10", "24"}, {"-9223372036854775808", "9223372036854775807"}, {`k\x00`, "kz"}, {"<nil>", "<nil>"}} {
		c := f.Columns[i]
		if got := [2]string{text(c.MinText), text(c.MaxText)}; got != want {
			t.Errorf("column %s: min/max text %q, want %q", c.Name, got, want)
		}
	}
	if c := f.Columns[1]; string(c.Max) != "9223372036854775807" || c.Nulls != 1 {
		t.Errorf("column value.id: max %s nulls %d: not as segviz-lake printed it", c.Max, c.Nulls)
	}
	if code, a, _ := getLake(t, url+"api/lake?dir=orders-1"); code != 200 || len(a.Files) != 1 || a.Files[0].ID != 3 {
		t.Errorf("orders-1: %d %+v", code, a)
	}
	// Each request runs it again (a running indexer's new files appear).
	args, err := os.ReadFile(filepath.Join(bin, "args"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	if len(lines) != 3 || lines[2] != "files --catalog sqlite:cat.db --expired --json" {
		t.Errorf("segviz-lake ran with %q (start-up, then one run per request)", lines)
	}
	for _, tc := range []struct {
		query string
		code  int
	}{{"", 400}, {"?dir=payments-0", 404}, {"?dir=orders-2", 404}} {
		if code, a, _ := getLake(t, url+"api/lake"+tc.query); code != tc.code || a.Error == "" {
			t.Errorf("api/lake%s: %d %+v, want %d with an error", tc.query, code, a, tc.code)
		}
	}
	// The API's rules: read-only, and the Host allow-list.
	resp, err := http.Post(url+"api/lake?dir=orders-0", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", url+"api/lake?dir=orders-0", nil)
	req.Host = "attacker.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	// The rest of the API is web's, as without --lake.
	if code := getJSON(t, url+"api/partitions", nil); code != 200 {
		t.Errorf("api/partitions: %d", code)
	}
}

// TestServeLakeErrors: segviz-lake missing, failing, printing what is not
// its JSON, or too much: segviz serve starts anyway and says why, on
// stderr and in the endpoint's error, with no crash.
func TestServeLakeErrors(t *testing.T) {
	skipNoShell(t)
	saved := lakeMaxOutput
	t.Cleanup(func() { lakeMaxOutput = saved })
	lakeMaxOutput = 4 << 10
	for _, tc := range []struct {
		name, script string
		status       int
		want         string
	}{
		{"not installed", "", 503, "segviz-lake is not installed"},
		{"fails", "echo 'segviz-lake files: sqlite: unable to open database file' >&2\nexit 3\n", 502, "exit status 3: segviz-lake files: sqlite: unable to open database file"},
		{"not JSON", "echo 'ID TOPIC PART'\n", 502, "not its JSON"},
		{"too much", "yes '{\"id\":1}' | head -c 100000\n", 502, "printed more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeLake(t, tc.script)
			url, _, stderr := startServe(t, serveOptions{addr: "127.0.0.1:0", dir: lakeLogDir(t), lake: "postgres://lake:secret@127.0.0.1:1/db"})
			if !strings.Contains(stderr.String(), "--lake postgres://lake:xxxxx@127.0.0.1:1/db") || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "secret") {
				t.Errorf("start-up said %q, want the redacted catalog and %q", stderr, tc.want)
			}
			code, a, _ := getLake(t, url+"api/lake?dir=orders-0")
			if code != tc.status || !strings.Contains(a.Error, tc.want) || strings.Contains(a.Error, "secret") {
				t.Errorf("%d %q, want %d %q", code, a.Error, tc.status, tc.want)
			}
			if code := getJSON(t, url+"api/partitions", nil); code != 200 {
				t.Errorf("api/partitions: %d", code)
			}
		})
	}
}

// TestServeLakeBusyAndSlow: one run at a time, others wait lakeQueueWait
// then get 503 with Retry-After; a run past lakeTimeout is stopped.
func TestServeLakeBusyAndSlow(t *testing.T) {
	skipNoShell(t)
	st, qw, to := lakeStartTimeout, lakeQueueWait, lakeTimeout
	t.Cleanup(func() { lakeStartTimeout, lakeQueueWait, lakeTimeout = st, qw, to })
	lakeStartTimeout, lakeQueueWait, lakeTimeout = 100*time.Millisecond, 100*time.Millisecond, 1500*time.Millisecond
	fakeLake(t, "exec sleep 5\n")
	url, _, stderr := startServe(t, serveOptions{addr: "127.0.0.1:0", dir: lakeLogDir(t), lake: "sqlite:x.db"})
	if !strings.Contains(stderr.String(), "no answer within") {
		t.Errorf("start-up said %q", stderr)
	}
	slow := make(chan lakeAnswer, 1)
	go func() {
		resp, err := http.Get(url + "api/lake?dir=orders-0")
		var a lakeAnswer
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			json.Unmarshal(b, &a)
		}
		slow <- a
	}()
	time.Sleep(300 * time.Millisecond)
	code, a, h := getLake(t, url+"api/lake?dir=orders-0")
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(a.Error, "busy") {
		t.Errorf("while another runs: %d %+v %v", code, a, h)
	}
	if a := <-slow; !strings.Contains(a.Error, "no answer within 1.5s") {
		t.Errorf("slow run: %+v", a)
	}
}

// TestServeWithoutLake: without --lake the endpoint says so (the page
// hides the lane) and runs nothing.
func TestServeWithoutLake(t *testing.T) {
	skipNoShell(t)
	bin := fakeLake(t, "touch \"$(dirname \"$0\")/ran\"\n")
	url, _, _ := startServe(t, serveOptions{addr: "127.0.0.1:0", dir: lakeLogDir(t)})
	if code, a, _ := getLake(t, url+"api/lake?dir=orders-0"); code != 200 || a.Enabled || a.Files == nil {
		t.Errorf("%d %+v", code, a)
	}
	if _, err := os.Stat(filepath.Join(bin, "ran")); err == nil {
		t.Error("segviz-lake ran without --lake")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--lake", "mysql://x", "."}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "want sqlite:PATH or postgres://") {
		t.Errorf("--lake mysql://x: exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"serve", "--help"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "--lake CATALOG") || !strings.Contains(out.String(), "segviz-lake files --catalog CATALOG --expired --json") {
		t.Errorf("serve --help: exit %d, no --lake in it", code)
	}
}
