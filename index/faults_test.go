package index_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/vfs"
)

// offsetWorkload runs a segment's life for an offset index on fsys,
// checking after each failed step that the index did not change. It
// returns the first error.
func offsetWorkload(t *testing.T, fsys vfs.FS) error {
	x, err := index.OpenOffsetIndex(fsys, "w.index", 0, index.OpenOptions{Writable: true, MaxIndexSize: 10 * 8})
	if err != nil {
		return err
	}
	defer x.Close()
	step := func(f func() error) error {
		before := x.AppendAll(nil)
		err := f()
		if err != nil && !slices.Equal(before, x.AppendAll(nil)) && !errors.Is(err, index.ErrIndexFull) {
			// A failed append, truncate or resize must not change what
			// the index says; only TruncateTo publishes before it
			// finishes zeroing the freed slots.
			return fmt.Errorf("%w (and the entries changed)", err)
		}
		return err
	}
	for i := range 6 {
		if err := step(func() error { return x.Append(int64(10*(i+1)), int32(5000*(i+1))) }); err != nil {
			return err
		}
	}
	if err := x.Flush(); err != nil {
		return err
	}
	if err := x.TruncateTo(40); err != nil {
		return err
	}
	if err := step(func() error { return x.Append(45, 40000) }); err != nil {
		return err
	}
	if err := step(x.TrimToValidSize); err != nil {
		return err
	}
	if err := step(x.Reset); err != nil {
		return err
	}
	if err := x.Rename("w.index.deleted"); err != nil {
		return err
	}
	if err := x.Delete(); err != nil {
		return err
	}
	return nil
}

// TestOffsetIndexFaults injects an I/O error at every operation of the
// workload in turn, and checks that each one surfaces and that a failed
// step leaves the entries as they were (RELIABILITY E1, E4).
func TestOffsetIndexFaults(t *testing.T) {
	for k := int64(0); ; k++ {
		fsys := vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.OnIndex(k)))
		err := offsetWorkload(t, fsys)
		if fsys.Ops() <= k {
			if err != nil {
				t.Fatalf("no fault injected, but: %v", err)
			}
			if k < 10 {
				t.Fatalf("only %d operations", k)
			}
			t.Logf("%d operations, each failed once", k)
			return
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("fault at op %d (%v) did not surface: %v", k, fsys.Log()[k], err)
		}
	}
}

// TestShortWrite makes the write of pending entries half-succeed: the
// entries stay published and pending, and the next flush writes them.
func TestShortWrite(t *testing.T) {
	mem := vfs.NewMem()
	var fail bool
	fsys := vfs.WithFaults(mem, vfs.ShortWrite(func(op vfs.Op) bool { return fail && op.Kind == vfs.OpWriteAt }))
	x := openOffset(t, fsys, "x.index", 0, 64, true)
	if err := x.Append(10, 5000); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, x)
	if err := x.Append(20, 9000); err != nil {
		t.Fatal(err)
	}
	fail = true
	if err := x.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("short write: %v", err)
	}
	if x.Entries() != 2 || index.LastOffset(x) != 20 {
		t.Fatalf("entries after a failed write: %v", entries(x))
	}
	fail = false
	mustFlush(t, x)
	if got, want := readAll(t, mem, "x.index")[:16], encode(t, 0, index.Entry{Offset: 10, Position: 5000}, index.Entry{Offset: 20, Position: 9000}); string(got) != string(want) {
		t.Fatalf("file %x, want %x", got, want)
	}
}

func TestTxnIndexFaults(t *testing.T) {
	work := func(fsys vfs.FS) error {
		x, err := index.OpenTransactionIndex(fsys, "w.txnindex", 0, index.OpenOptions{Writable: true})
		if err != nil {
			return err
		}
		defer x.Close()
		for i := range 4 {
			before := x.Entries()
			if err := x.Append(index.AbortedTxn{ProducerID: int64(i), FirstOffset: int64(10 * i), LastOffset: int64(10*i + 5)}); err != nil {
				if x.Entries() != before {
					return fmt.Errorf("%w (and the entry was published)", err)
				}
				return err
			}
		}
		if err := x.Flush(); err != nil {
			return err
		}
		if err := x.TruncateTo(12); err != nil {
			return err
		}
		if err := x.Rename("w.txnindex.deleted"); err != nil {
			return err
		}
		return x.Delete()
	}
	for k := int64(0); ; k++ {
		fsys := vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.OnIndex(k)))
		err := work(fsys)
		if fsys.Ops() <= k {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("fault at op %d (%v) did not surface: %v", k, fsys.Log()[k], err)
		}
	}
}
