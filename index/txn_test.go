package index_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

func openTxn(tb testing.TB, fsys vfs.FS, path string, base int64, writable bool) *index.TransactionIndex {
	tb.Helper()
	x, err := index.OpenTransactionIndex(fsys, path, base, index.OpenOptions{Writable: writable})
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

func encodeTxns(txns ...index.AbortedTxn) []byte {
	var b []byte
	for _, t := range txns {
		b = index.AppendAbortedTxn(b, t)
	}
	return b
}

func TestTxnIndexCreatedLazily(t *testing.T) {
	fsys := vfs.NewMem()
	x := openTxn(t, fsys, "a.txnindex", 100, true)
	if index.Exists(x) || x.Entries() != 0 {
		t.Fatal("a missing index is not empty")
	}
	if _, ok := x.LastOffset(); ok {
		t.Fatal("LastOffset of an empty index")
	}
	// Reset, TruncateTo, Flush, Rename do not create the file.
	if err := x.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := x.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Rename("b.txnindex"); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("b.txnindex"); !isNotExist(err) {
		t.Fatal("the file was created before the first append")
	}
	txn := index.AbortedTxn{ProducerID: 7, FirstOffset: 100, LastOffset: 104, LastStableOffset: 100}
	if err := x.Append(txn); err != nil {
		t.Fatal(err)
	}
	if !index.Exists(x) || !bytes.Equal(readAll(t, fsys, "b.txnindex"), encodeTxns(txn)) {
		t.Fatal("first append did not write the file")
	}
	// A read-only open of a missing file is an empty index, not an error.
	ro := openTxn(t, fsys, "missing.txnindex", 0, false)
	if ro.Entries() != 0 || index.Exists(ro) || ro.SanityCheck() != nil {
		t.Fatal("missing read-only index")
	}
	if _, err := fsys.Stat("missing.txnindex"); !isNotExist(err) {
		t.Fatal("a read-only open created the file")
	}
}

func TestTxnIndexAppend(t *testing.T) {
	fsys := vfs.NewMem()
	x := openTxn(t, fsys, "x.txnindex", 100, true)
	steps := []struct {
		name string
		txn  index.AbortedTxn
		err  error
	}{
		{"below_base", index.AbortedTxn{ProducerID: 1, FirstOffset: 90, LastOffset: 99}, index.ErrOffsetOverflow},
		{"bad_version", index.AbortedTxn{Version: 1, ProducerID: 1, FirstOffset: 100, LastOffset: 105}, index.ErrUnsupportedVersion},
		{"first", index.AbortedTxn{ProducerID: 1, FirstOffset: 100, LastOffset: 105, LastStableOffset: 100}, nil},
		{"same_last", index.AbortedTxn{ProducerID: 2, FirstOffset: 101, LastOffset: 105}, index.ErrOffsetOrder},
		{"lower_last", index.AbortedTxn{ProducerID: 2, FirstOffset: 101, LastOffset: 104}, index.ErrOffsetOrder},
		// The first offset may go back: transactions interleave.
		{"second", index.AbortedTxn{ProducerID: 2, FirstOffset: 101, LastOffset: 110, LastStableOffset: 101}, nil},
	}
	var want []index.AbortedTxn
	for _, s := range steps {
		before := readAllOr(fsys, "x.txnindex")
		err := x.Append(s.txn)
		if !errors.Is(err, s.err) || (s.err == nil) != (err == nil) {
			t.Fatalf("%s: %v, want %v", s.name, err, s.err)
		}
		if err != nil {
			if !bytes.Equal(before, readAllOr(fsys, "x.txnindex")) {
				t.Fatalf("%s: a refused append wrote", s.name)
			}
			continue
		}
		want = append(want, s.txn)
	}
	if got := x.All(); !slices.Equal(got, want) {
		t.Fatalf("All = %v", got)
	}
	if !bytes.Equal(readAll(t, fsys, "x.txnindex"), encodeTxns(want...)) {
		t.Fatal("file differs")
	}
	if last, ok := x.LastOffset(); !ok || last != 110 {
		t.Fatalf("LastOffset = %d, %v", last, ok)
	}
	// Reopen.
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y := openTxn(t, fsys, "x.txnindex", 100, false)
	if got := y.All(); !slices.Equal(got, want) {
		t.Fatalf("reopened All = %v", got)
	}
	if err := y.Append(index.AbortedTxn{LastOffset: 200}); !errors.Is(err, index.ErrReadOnly) {
		t.Fatalf("read-only append: %v", err)
	}
	if err := x.Append(index.AbortedTxn{LastOffset: 200}); !errors.Is(err, index.ErrClosed) {
		t.Fatalf("closed append: %v", err)
	}
}

func readAllOr(fsys vfs.FS, path string) []byte {
	b, _ := vfs.ReadFile(fsys, path)
	return b
}

func TestTxnIndexCollect(t *testing.T) {
	fsys := vfs.NewMem()
	x := openTxn(t, fsys, "x.txnindex", 0, true)
	txns := []index.AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 10, LastStableOffset: 11},
		{ProducerID: 2, FirstOffset: 5, LastOffset: 15, LastStableOffset: 16},
		{ProducerID: 3, FirstOffset: 18, LastOffset: 30, LastStableOffset: 31},
		{ProducerID: 4, FirstOffset: 40, LastOffset: 45, LastStableOffset: 46},
	}
	for _, txn := range txns {
		if err := x.Append(txn); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name        string
		fetch, upto int64
		want        []index.AbortedTxn
		complete    bool
	}{
		{"all", 0, 100, txns, false},
		{"first_only", 0, 5, txns[:1], true},    // 11 >= 5 stops the search
		{"two", 0, 12, txns[:2], true},          // entry 2's LSO 16 >= 12 stops
		{"skip_ended", 11, 16, txns[1:2], true}, // the first ended at 10
		{"gap", 31, 40, nil, true},              // entry 4 begins at 40; its LSO 46 >= 40 stops
		{"after_all", 50, 60, nil, false},
		{"at_last_offset", 45, 46, txns[3:], true},
	} {
		got, complete := index.CollectAbortedTxns(x, nil, tt.fetch, tt.upto)
		if !slices.Equal(got, tt.want) || complete != tt.complete {
			t.Errorf("%s: CollectAbortedTxns(%d, %d) = %v, %v; want %v, %v", tt.name, tt.fetch, tt.upto, got, complete, tt.want, tt.complete)
		}
		if o := x.Overlapping(tt.fetch, tt.upto); !slices.Equal(o, tt.want) {
			t.Errorf("%s: Overlapping = %v", tt.name, o)
		}
	}
}

func TestTxnIndexTruncate(t *testing.T) {
	txns := []index.AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 10},
		{ProducerID: 2, FirstOffset: 5, LastOffset: 15},
		{ProducerID: 3, FirstOffset: 18, LastOffset: 30},
	}
	for _, tt := range []struct {
		offset int64
		keep   int
	}{{0, 0}, {10, 0}, {11, 1}, {15, 1}, {16, 2}, {30, 2}, {31, 3}} {
		fsys := vfs.NewMem()
		writeFile(t, fsys, "x.txnindex", encodeTxns(txns...))
		x := openTxn(t, fsys, "x.txnindex", 0, true)
		if err := x.TruncateTo(tt.offset); err != nil {
			t.Fatal(err)
		}
		if got := x.All(); !slices.Equal(got, txns[:tt.keep]) {
			t.Fatalf("TruncateTo(%d): %v", tt.offset, got)
		}
		if got := readAll(t, fsys, "x.txnindex"); !bytes.Equal(got, encodeTxns(txns[:tt.keep]...)) {
			t.Fatalf("TruncateTo(%d): file %x", tt.offset, got)
		}
		// Appends continue after the kept ones.
		next := index.AbortedTxn{ProducerID: 9, FirstOffset: 40, LastOffset: 50}
		if err := x.Append(next); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, fsys, "x.txnindex"); !bytes.Equal(got, encodeTxns(append(slices.Clone(txns[:tt.keep]), next)...)) {
			t.Fatalf("append after truncate: %x", got)
		}
		if err := x.Reset(); err != nil {
			t.Fatal(err)
		}
		if x.Entries() != 0 || len(readAll(t, fsys, "x.txnindex")) != 0 || !index.Exists(x) {
			t.Fatal("Reset did not empty the file (and keep it)")
		}
	}
}

func TestTxnIndexSanity(t *testing.T) {
	good := encodeTxns(index.AbortedTxn{ProducerID: 1, FirstOffset: 100, LastOffset: 105})
	for _, tt := range []struct {
		name string
		file []byte
		off  int64 // -1: passes
	}{
		{"empty", nil, -1},
		{"good", good, -1},
		{"before_base", encodeTxns(index.AbortedTxn{ProducerID: 1, FirstOffset: 90, LastOffset: 105}, index.AbortedTxn{ProducerID: 1, FirstOffset: 90, LastOffset: 99}), 34},
		{"partial_entry", append(slices.Clone(good), 1, 2, 3), 34},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x.txnindex", tt.file)
			x := openTxn(t, fsys, "x.txnindex", 100, false)
			err := x.SanityCheck()
			if tt.off < 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkCorrupt(t, err, "x.txnindex", tt.off)
		})
	}
}

func TestTxnIndexPartialEntryOverwritten(t *testing.T) {
	fsys := vfs.NewMem()
	first := index.AbortedTxn{ProducerID: 1, LastOffset: 5}
	writeFile(t, fsys, "x.txnindex", append(encodeTxns(first), 9, 9, 9, 9, 9))
	x := openTxn(t, fsys, "x.txnindex", 0, true)
	if x.TrailingBytes() != 5 || x.Entries() != 1 {
		t.Fatalf("trailing %d entries %d", x.TrailingBytes(), x.Entries())
	}
	second := index.AbortedTxn{ProducerID: 2, LastOffset: 9}
	if err := x.Append(second); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fsys, "x.txnindex"); !bytes.Equal(got, encodeTxns(first, second)) {
		t.Fatalf("file %x", got)
	}
	if x.TrailingBytes() != 0 || x.SanityCheck() != nil {
		t.Fatal("the partial entry is still reported")
	}
}

func TestTxnIndexOpenBadVersion(t *testing.T) {
	fsys := vfs.NewMem()
	b := encodeTxns(index.AbortedTxn{LastOffset: 1}, index.AbortedTxn{LastOffset: 2})
	b[34+1] = 1 // second entry: version 1
	writeFile(t, fsys, "x.txnindex", b)
	_, err := index.OpenTransactionIndex(fsys, "x.txnindex", 0, index.OpenOptions{})
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, index.ErrUnsupportedVersion) || ce.Offset != 34 || ce.Path != "x.txnindex" {
		t.Fatalf("err = %v", err)
	}
}

func TestTxnIndexDelete(t *testing.T) {
	fsys := vfs.NewMem()
	x := openTxn(t, fsys, "x.txnindex", 0, true)
	if err := x.Delete(); err != nil {
		t.Fatalf("Delete of a never-created index: %v", err)
	}
	y := openTxn(t, fsys, "y.txnindex", 0, true)
	if err := y.Append(index.AbortedTxn{LastOffset: 3}); err != nil {
		t.Fatal(err)
	}
	if err := y.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("y.txnindex"); !isNotExist(err) || index.Exists(y) {
		t.Fatal("Delete left the file")
	}
}
