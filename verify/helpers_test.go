package verify_test

import (
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

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

// openTxn opens a transaction index or fails the test.
func openTxn(tb testing.TB, fsys vfs.FS, path string, base int64, writable bool) *index.TransactionIndex {
	tb.Helper()
	x, err := index.OpenTransactionIndex(fsys, path, base, index.OpenOptions{Writable: writable})
	if err != nil {
		tb.Fatal(err)
	}
	return x
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

func encodeTxns(txns ...index.AbortedTxn) []byte {
	var b []byte
	for _, t := range txns {
		b = index.AppendAbortedTxn(b, t)
	}
	return b
}
