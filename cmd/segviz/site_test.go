package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSite: segviz site writes the five files of the static copy (their
// sizes in --json), and refuses a directory that is not empty.
func TestSite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "site")
	code, stdout, errs := runSegviz("site", "--json", out)
	if code != exitOK {
		t.Fatalf("site: exit %d: %s", code, errs)
	}
	var res struct {
		Dir   string
		Files []struct {
			Name  string
			Bytes int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Dir != out || len(res.Files) != 5 {
		t.Fatalf("site --json: %v\n%s", err, stdout)
	}
	for _, f := range res.Files {
		fi, err := os.Stat(filepath.Join(out, f.Name))
		if err != nil || fi.Size() != int64(f.Bytes) || f.Bytes == 0 {
			t.Errorf("%s: %v, %d bytes said", f.Name, err, f.Bytes)
		}
	}
	before, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if code, _, errs := runSegviz("site", out); code != exitUsage || !strings.Contains(errs, "not empty") {
		t.Errorf("site into a non-empty directory: exit %d: %s", code, errs)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "index.html")); string(after) != string(before) {
		t.Error("a refused site changed index.html")
	}
	if code, _, _ := runSegviz("site"); code != exitUsage {
		t.Errorf("site without OUT: exit %d", code)
	}
}
