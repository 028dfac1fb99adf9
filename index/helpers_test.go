package index_test

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

// mustHex decodes hex with spaces.
func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// readAll returns the file's bytes.
func readAll(tb testing.TB, fsys vfs.FS, path string) []byte {
	tb.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// writeFile writes a file into fsys.
func writeFile(tb testing.TB, fsys vfs.FS, path string, b []byte) {
	tb.Helper()
	if err := vfs.WriteFile(fsys, path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// openOffset opens an offset index or fails the test.
func openOffset(tb testing.TB, fsys vfs.FS, path string, base int64, max int, writable bool) *index.OffsetIndex {
	tb.Helper()
	x, err := index.OpenOffsetIndex(fsys, path, base, index.OpenOptions{MaxIndexSize: max, Writable: writable})
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// entries returns every entry of x.
func entries(x *index.OffsetIndex) []index.Entry {
	out := make([]index.Entry, x.Entries())
	for i := range out {
		out[i] = x.Entry(i)
	}
	return out
}

// encode returns the bytes of es relative to base.
func encode(tb testing.TB, base int64, es ...index.Entry) []byte {
	tb.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = index.AppendEntry(b, base, e); err != nil {
			tb.Fatal(err)
		}
	}
	return b
}

// checkCorrupt asserts that err is a sanity-check failure at byte off.
func checkCorrupt(tb testing.TB, err error, path string, off int64) {
	tb.Helper()
	var ce *format.CorruptionError
	if !errors.As(err, &ce) {
		tb.Fatalf("error %v (%T) is not a *format.CorruptionError", err, err)
	}
	if !errors.Is(err, index.ErrCorruptIndex) || !errors.Is(err, format.ErrInvalid) {
		tb.Fatalf("error %v does not match ErrCorruptIndex and format.ErrInvalid", err)
	}
	if ce.Path != path || ce.Offset != off {
		tb.Fatalf("error at %s byte %d, want %s byte %d: %v", ce.Path, ce.Offset, path, off, err)
	}
}

// fitsRelative reports whether offset can be stored relative to base: it
// is in [base, base+MaxInt32]. The unsigned difference is exact once
// offset >= base, where the signed one can overflow.
func fitsRelative(offset, base int64) bool {
	return offset >= base && uint64(offset)-uint64(base) <= math.MaxInt32
}

// isNotExist reports whether err says a file is missing.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func mkdir(dir string) error            { return os.MkdirAll(dir, 0o755) }
func writeText(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }

// mustFlush writes an index's pending entries (appends are written
// behind) so that its file can be compared.
func mustFlush(tb testing.TB, x interface{ Flush() error }) {
	tb.Helper()
	if err := x.Flush(); err != nil {
		tb.Fatal(err)
	}
}
