//go:build !js && !wasip1

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestRealRun runs the two targets of a tiny module for a moment each: the
// one that passes reports executions, the one that fails leaves a crasher
// in its testdata, which go test replays.
func TestRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test -fuzz")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "tiny_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "tinymod", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	all, err := discover(ctx, dir, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("targets %+v", all)
	}
	cfg := runConfig{Dir: dir, Time: 2 * time.Second, Parallel: 1, Minimize: 2 * time.Second}
	var out bytes.Buffer
	for _, tg := range all {
		r := runTarget(ctx, cfg, tg, &out)
		switch tg.Name {
		case "FuzzTinyPass":
			if r.Err != nil || r.Stats.Last.Execs == 0 || r.Stats.ExecsPerSec() <= 0 {
				t.Fatalf("%s: %v, stats %+v\n%s", tg.Name, r.Err, r.Stats, out.String())
			}
		case "FuzzTinyFail":
			if r.Err == nil || r.Stats.Crasher == "" {
				t.Fatalf("%s: no failure or crasher: %v %+v\n%s", tg.Name, r.Err, r.Stats, out.String())
			}
			if _, err := os.Stat(filepath.Join(tg.Dir, r.Stats.Crasher)); err != nil {
				t.Fatalf("crasher not left in testdata: %v", err)
			}
			// A plain go test replays it, and fails.
			cmd := exec.Command("go", "test", "-run=^FuzzTinyFail$", ".")
			cmd.Dir = dir
			if b, err := cmd.CombinedOutput(); err == nil || !bytes.Contains(b, []byte("found it")) {
				t.Fatalf("replay did not fail: %v\n%s", err, b)
			}
		}
		printResult(&out, r)
	}
	t.Logf("%s", out.String())
}
