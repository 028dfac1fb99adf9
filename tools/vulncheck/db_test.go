package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBuild checks the index against what golang.org/x/vulndb's indexdb
// writes for the same two entries: modules by path, vulns by id, "fixed" the
// latest fix unless a later version reintroduces the bug, and db.json the
// stamp when no entry has a modification time (as in vulndb's data/osv).
func TestBuild(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"GO-2026-0002.json": `{"schema_version":"1.3.1","id":"GO-2026-0002","modified":"0001-01-01T00:00:00Z",
			"aliases":["CVE-2026-2"],
			"affected":[
				{"package":{"name":"stdlib","ecosystem":"Go"},
				 "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.25.9"},{"introduced":"1.26.0-0"},{"fixed":"1.26.9"}]}]},
				{"package":{"name":"example.com/m","ecosystem":"Go"},
				 "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.0"},{"introduced":"2.0.0"}]}]}]}`,
		"GO-2026-0001.json": `{"schema_version":"1.3.1","id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z",
			"affected":[{"package":{"name":"stdlib","ecosystem":"Go"},
				 "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.26.10"}]}]}]}`,
		"README.md": "not an entry",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	stamp := time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)
	n, err := build(src, out, stamp)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("build: %d entries, want 2", n)
	}
	want := map[string]string{
		"index/db.json": `{"modified":"2026-11-05T23:49:57Z"}`,
		"index/modules.json": `[{"path":"example.com/m","vulns":[{"id":"GO-2026-0002","modified":"0001-01-01T00:00:00Z"}]},` +
			`{"path":"stdlib","vulns":[{"id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z","fixed":"1.26.10"},` +
			`{"id":"GO-2026-0002","modified":"0001-01-01T00:00:00Z","fixed":"1.26.9"}]}]`,
		"index/vulns.json": `[{"id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z"},` +
			`{"id":"GO-2026-0002","modified":"0001-01-01T00:00:00Z","aliases":["CVE-2026-2"]}]`,
	}
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s:\ngot  %s\nwant %s", name, got, w)
		}
	}
	for _, id := range []string{"GO-2026-0001", "GO-2026-0002"} {
		if _, err := os.Stat(filepath.Join(out, "ID", id+".json")); err != nil {
			t.Error(err)
		}
	}
}
