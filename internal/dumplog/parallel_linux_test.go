package dumplog

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/internal/maprange"
)

// TestParallelMappedFileShrinks dumps a file, mapped (maprange), that is
// shorter than the size the dump was given, as when a broker truncates a
// segment during a dump: the mappings past its end fault, and the dump
// must recover and print what the sequential dump prints over the same
// file, not crash with SIGBUS.
func TestParallelMappedFileShrinks(t *testing.T) {
	log := mixedLog(t, 40)
	name := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kept := int64(len(log)) * 6 / 10
	if err := os.Truncate(name, kept); err != nil {
		t.Fatal(err)
	}
	mapFile := maprange.For(f)
	var past atomic.Int64 // mappings reaching past the file's end
	dump := func(opt Options) (string, string, Result, error) {
		var out, errs bytes.Buffer
		opt.Errors = &errs
		res, err := logChunked(&out, f, int64(len(log)), name, opt, 4096)
		return out.String(), errs.String(), res, err
	}
	so, se, sr, serr := dump(Options{Deep: true, Parallelism: 1})
	po, pe, pr, perr := dump(Options{Deep: true, Parallelism: 2, Map: func(off int64, n int) ([]byte, func(), error) {
		if off+int64(n) > kept+4096 {
			past.Add(1)
		}
		return mapFile(off, n)
	}})
	if past.Load() == 0 {
		t.Fatalf("no mapping reached a page past the file's end: the test does not fault")
	}
	if d := cmp.Diff(so+se, po+pe); d != "" {
		t.Errorf("output differs (-sequential +parallel):\n%s", d)
	}
	if d := cmp.Diff(sr, pr); d != "" || serr != perr {
		t.Errorf("result differs (-sequential +parallel):\n%s\n%v, %v", d, serr, perr)
	}
	if sr.Problems == 0 {
		t.Errorf("the dump of a file shorter than its size found no problem")
	}
}
