package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

// realTestPartition is a real partition of one 231498-byte segment (109
// gzip and uncompressed batches, trimmed indexes, a clean shutdown).
const realTestPartition = "macsakini__KafkaCluster/kafka/data/test-0"

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// corruptedRealCopy copies the real test-0 partition under a temporary log
// directory and flips one byte inside its 50th batch. It returns the
// partition directory and the position of the damaged batch.
func corruptedRealCopy(t *testing.T) (string, int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "test-0")
	copyDir(t, filepath.Join(realdata.Dir(t), realTestPartition), dir)
	name := filepath.Join(dir, "00000000000000000000.log")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := record.NewScanner(b, "", 0)
	var pos []int64
	for s.Next() {
		pos = append(pos, s.Entry().Position)
	}
	at := pos[50]
	b[at+100] ^= 0x20
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, at
}

func TestVerifyCommandReal(t *testing.T) {
	src := filepath.Join(realdata.Dir(t), realTestPartition)
	before := snapshot(t, filepath.Dir(src))
	code, out, errs := runSegviz("verify", src)
	if code != exitOK || !strings.Contains(out, "OK: 0 errors") || !strings.Contains(out, "109 batches") || errs != "" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	// The whole log directory.
	code, out, _ = runSegviz("verify", "--json", filepath.Dir(src))
	var rep struct {
		OK         bool `json:"ok"`
		Segments   int  `json:"segments"`
		Partitions []struct {
			Dir string `json:"dir"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitOK || !rep.OK || len(rep.Partitions) != 5 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if after := snapshot(t, filepath.Dir(src)); after != before {
		t.Fatalf("verify wrote to the log directory")
	}
}

// TestVerifyCommandCorrupted: a corrupted copy of a real segment makes
// verify exit 1, naming the file and the byte position of the bad batch.
func TestVerifyCommandCorrupted(t *testing.T) {
	dir, at := corruptedRealCopy(t)
	before := snapshot(t, dir)
	logFile := filepath.ToSlash(filepath.Join(dir, "00000000000000000000.log"))
	code, out, _ := runSegviz("verify", dir)
	if code != exitProblem {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if want := fmt.Sprintf("error   %s:%d: log-crc: ", logFile, at); !strings.Contains(out, want) {
		t.Errorf("the report does not name the position: want %q in\n%s", want, out)
	}
	code, out, _ = runSegviz("verify", "--json", dir)
	var rep struct {
		OK       bool `json:"ok"`
		Segments int  `json:"segments"`
		Batches  int  `json:"batches"`
		Records  int  `json:"records"`
		Problems []struct {
			File     string `json:"file"`
			Position int64  `json:"position"`
			Kind     string `json:"kind"`
			Level    string `json:"level"`
			Detail   string `json:"detail"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitProblem {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if rep.OK || rep.Segments != 1 || rep.Batches != 108 || rep.Records != 108 || len(rep.Problems) == 0 {
		t.Fatalf("report %+v", rep)
	}
	p := rep.Problems[0]
	if p.File != logFile || p.Position != at || p.Kind != "log-crc" || p.Level != "error" || !strings.Contains(p.Detail, "checksum") {
		t.Errorf("first problem %+v", p)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("verify wrote to the partition")
	}
}

// TestVerifyCommandFarPast: records stamped far in the past go at the next
// retention check; verify warns (exit 0, the data is valid).
func TestVerifyCommandFarPast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events-0")
	// The file's modification time is the wall clock's: judge at it.
	at := time.Now()
	defer setNow(at)()
	old := at.Add(-40 * 24 * time.Hour).UnixMilli()
	in := fmt.Sprintf(`{"value":"b2xk","timestamp":%d}`+"\n", old)
	if code, _, errs := appendCmd(t, in, dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	code, out, _ := runSegviz("verify", dir)
	if code != exitOK || !strings.Contains(out, "far-past-timestamp") || !strings.Contains(out, "the next check deletes them") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// With a retention.ms longer than their age they are safe.
	code, out, _ = runSegviz("verify", "--retention.ms", fmt.Sprint(int64(60*24*3600*1000)), dir)
	if code != exitOK || strings.Contains(out, "far-past-timestamp") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestVerifyCommandUsage(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"verify"}, exitUsage},
		{[]string{"verify", "a", "b"}, exitUsage},
		{[]string{"verify", file}, exitUsage},
		{[]string{"verify", tmp}, exitUsage}, // neither a partition nor a log directory
		{[]string{"verify", filepath.Join(tmp, "missing")}, exitFailure},
		{[]string{"verify", "--retention.ms", "x", tmp}, exitUsage},
		{[]string{"verify", "--now", "yesterday", tmp}, exitUsage},
	} {
		if code, out, errs := runSegviz(tt.args...); code != tt.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out, errs)
		}
	}
	code, out, _ := runSegviz("verify", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "Problem kinds") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// TestVerifyFolderOfLogDirs: a folder of two log directories, one named
// like partition 2 of topic "disk". Before, verify took disk-2 for a
// partition, checked nothing in it and said OK; now it finds the
// partitions in both and reports the damage in one of them.
func TestVerifyFolderOfLogDirs(t *testing.T) {
	dir, _ := corruptedRealCopy(t) // .../kafka-logs/test-0, damaged
	host := filepath.Join(t.TempDir(), "host")
	if err := os.MkdirAll(host, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Dir(dir), filepath.Join(host, "disk-2")); err != nil {
		t.Fatal(err)
	}
	copyDir(t, filepath.Join(realdata.Dir(t), realTestPartition), filepath.Join(host, "disk-1", "test-0"))
	code, out, errs := runSegviz("verify", "--json", host)
	if code != exitProblem {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitProblem, out, errs)
	}
	var rep struct {
		Partitions []struct{ Dir string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Partitions) != 2 || !strings.HasSuffix(rep.Partitions[1].Dir, "disk-2/test-0") {
		t.Errorf("partitions %+v, want disk-1/test-0 and disk-2/test-0", rep.Partitions)
	}
	// A folder with nothing of Kafka's is refused, as serve refuses it.
	if code, _, errs := runSegviz("verify", t.TempDir()); code != exitUsage {
		t.Errorf("verify of an empty folder: exit %d, want %d: %s", code, exitUsage, errs)
	}
}

// TestVerifyLinks: a segment that is a symbolic link is read as the file it
// points to (before, verify took the link's own size and reported a bogus
// torn tail) and named in a finding.
func TestVerifyLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs", "test-0")
	copyDir(t, filepath.Join(realdata.Dir(t), realTestPartition), dir)
	seg := filepath.Join(dir, "00000000000000000000.log")
	elsewhere := filepath.Join(t.TempDir(), "moved.log")
	if err := os.Rename(seg, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, seg); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runSegviz("verify", "--json", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var rep struct {
		Records  int
		Problems []struct{ Kind, Level, File string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	linked := false
	for _, p := range rep.Problems {
		linked = linked || (p.Kind == "symlink" && p.Level == "info" && p.File == filepath.ToSlash(seg))
	}
	if !linked || rep.Records == 0 {
		t.Errorf("records %d, problems %+v: want the link read and named", rep.Records, rep.Problems)
	}

}

// TestServeRefusesWhatVerifyRefuses: serve and verify accept the same
// folders (inspect.FindPartitions). Before, serve showed an empty page for
// a folder that verify refused with exit 2.
func TestServeRefusesWhatVerifyRefuses(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{empty, file} {
		vcode, _, _ := runSegviz("verify", dir)
		var errs strings.Builder
		scode := serve(t.Context(), serveOptions{addr: "127.0.0.1:0", dir: dir}, io.Discard, &errs)
		if vcode != exitUsage || scode != exitUsage {
			t.Errorf("%s: verify exit %d, serve exit %d (%s); want %d for both", dir, vcode, scode, errs.String(), exitUsage)
		}
	}
}
