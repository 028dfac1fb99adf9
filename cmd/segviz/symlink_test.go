package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// linkSegment moves the .log seg of a partition outside it and leaves a
// symbolic link to it in its place, or skips the test; it returns the
// file's bytes.
func linkSegment(t *testing.T, seg string) []byte {
	t.Helper()
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), filepath.Base(seg))
	if err := os.Rename(seg, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, seg); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	return b
}

// segmented appends 30 records in 5-record batches with segment.bytes 300
// to a new partition directory and returns it and its .log files, in
// order (three segments or more).
func segmented(t *testing.T) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs", "orders-0")
	if code, _, errs := appendCmd(t, records(30), "--batch-records", "5", "--segment.bytes", "300", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) < 3 {
		t.Fatalf("%d segments, want 3 or more", len(logs))
	}
	return dir, logs
}

type findingJSON struct{ File, Kind, Level, Detail string }

// TestSymlinkedSegment: a segment that is a symbolic link is read, and
// copied, as the file it points to by salvage, recover --out and recover
// --in-place, and each says so, in text and in --json. salvage and recover
// --out skipped it (salvage read the link's own few bytes as a torn
// entry), losing its records while recover reported nothing lost.
func TestSymlinkedSegment(t *testing.T) {
	dir, logs := segmented(t)
	data := linkSegment(t, logs[1])
	link := filepath.ToSlash(logs[1])
	wantLine := "info    " + link + ": symlink: a symbolic link; read and copied as the " + strconv.Itoa(len(data)) + "-byte file it points to, as Kafka would"
	wantFinding := []findingJSON{{File: link, Kind: "symlink", Level: "info", Detail: "a symbolic link; read and copied as the " + strconv.Itoa(len(data)) + "-byte file it points to, as Kafka would"}}
	outs := t.TempDir()

	t.Run("salvage", func(t *testing.T) {
		out := filepath.Join(outs, "s", "orders-0")
		code, stdout, errs := runSegviz("salvage", "--json", "--out", out, dir)
		if code != exitOK {
			t.Fatalf("exit %d, want 0 (nothing lost)\n%s\n%s", code, stdout, errs)
		}
		var rep struct {
			Records int64
			Files   []struct {
				File          string
				Size, Records int64
			}
			Findings []findingJSON
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Records != 30 || len(rep.Files) != len(logs) || rep.Files[1].Size != int64(len(data)) || rep.Files[1].Records == 0 {
			t.Errorf("report %+v: want 30 records, the linked file's %d bytes read", rep, len(data))
		}
		if diff := cmp.Diff(wantFinding, rep.Findings); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		code, stdout, _ = runSegviz("salvage", "--out", filepath.Join(outs, "s2", "orders-0"), dir)
		if code != exitOK || !strings.Contains(stdout, wantLine) {
			t.Errorf("text: exit %d, want a line %q:\n%s", code, wantLine, stdout)
		}
	})

	t.Run("recover-out", func(t *testing.T) {
		out := filepath.Join(outs, "r", "orders-0")
		code, stdout, errs := runSegviz("recover", "--json", "--out", out, dir)
		if code != exitOK {
			t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, errs)
		}
		var rep struct {
			Segments []struct{ File string }
			Deleted  []struct{ File string }
			Findings []findingJSON
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Segments) != len(logs) || len(rep.Deleted) != 0 {
			t.Errorf("recovered %d segments, deleted %v; want %d, none", len(rep.Segments), rep.Deleted, len(logs))
		}
		if diff := cmp.Diff(wantFinding, rep.Findings); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		copied := filepath.Join(out, filepath.Base(logs[1]))
		fi, err := os.Lstat(copied)
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("the copy of the linked segment: %v %v, want a regular file", fi, err)
		}
		if b, _ := os.ReadFile(copied); !bytes.Equal(b, data) {
			t.Errorf("the copy holds %d bytes, want the linked file's %d", len(b), len(data))
		}
		code, stdout, _ = runSegviz("recover", "--out", filepath.Join(outs, "r2", "orders-0"), dir)
		if code != exitOK || !strings.Contains(stdout, wantLine) {
			t.Errorf("text: exit %d, want a line %q:\n%s", code, wantLine, stdout)
		}
	})

	t.Run("dump", func(t *testing.T) {
		for _, json := range []bool{false, true} {
			args := []string{"dump", logs[1]}
			if json {
				args = []string{"dump", "--json", logs[1]}
			}
			code, stdout, errs := runSegviz(args...)
			if code != exitOK || !strings.Contains(errs, logs[1]+" is a symbolic link to ") || !strings.Contains(stdout, "baseOffset") {
				t.Errorf("%v: exit %d\n%s\n%s", args, code, stdout, errs)
			}
		}
	})

	t.Run("recover-in-place", func(t *testing.T) {
		code, stdout, errs := runSegviz("recover", "--in-place", "--json", dir)
		if code != exitOK {
			t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, errs)
		}
		var rep struct{ Findings []findingJSON }
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantFinding, rep.Findings); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
	})
}

// TestDanglingSymlinkRefused: a link to nothing named as a segment is a
// file that is not a regular file: every command refuses it, exit 3,
// naming it, and writes nothing.
func TestDanglingSymlinkRefused(t *testing.T) {
	dir, logs := segmented(t)
	name := filepath.Join(dir, "00000000000000000999.log")
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone.log"), name); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	outs := t.TempDir()
	for _, args := range [][]string{
		{"dump", name},
		{"dump", "--json", name},
		{"salvage", "--out", filepath.Join(outs, "s", "orders-0"), dir},
		{"recover", "--out", filepath.Join(outs, "r", "orders-0"), dir},
		{"recover", "--in-place", dir},
	} {
		code, _, errs := runSegviz(args...)
		want := filepath.ToSlash(name) + ": not a regular file (a symbolic link to nothing)"
		if code != exitFailure || !strings.Contains(errs, want) {
			t.Errorf("segviz %s: exit %d, want 3 with %q:\n%s", strings.Join(args, " "), code, want, errs)
		}
	}
	if ents, _ := os.ReadDir(outs); len(ents) != 0 {
		t.Errorf("output directories were made: %v", ents)
	}
	if _, err := os.Stat(logs[0]); err != nil {
		t.Error(err)
	}
}
