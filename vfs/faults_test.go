package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/segkit/segkit/vfs"
)

// workload is a small engine-like sequence: make a partition directory,
// append to a segment, sync it, and write a checkpoint atomically. It
// returns the first error.
func workload(fsys vfs.FS) error {
	if err := fsys.MkdirAll("t-0", 0o755); err != nil {
		return err
	}
	if err := vfs.SyncDir(fsys, "."); err != nil {
		return err
	}
	f, err := fsys.OpenFile("t-0/00000000000000000000.log", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	for i := range 3 {
		if _, err := f.Write(bytes.Repeat([]byte{byte('a' + i)}, 100)); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := vfs.SyncDir(fsys, "t-0"); err != nil {
		return err
	}
	got, err := vfs.ReadFile(fsys, "t-0/00000000000000000000.log")
	if err != nil {
		return err
	}
	if len(got) != 300 {
		return errors.New("short log")
	}
	return vfs.WriteFileAtomic(fsys, "t-0/recovery-point-offset-checkpoint", []byte("0\n1\nt 0 3\n"), 0o644)
}

// TestFaultSweep injects an error at operation 0, 1, 2 ... of the workload
// until it passes, and checks that every injected error surfaced (STYLE 16).
func TestFaultSweep(t *testing.T) {
	for _, kind := range []struct {
		name string
		inj  func(p vfs.Predicate) vfs.Injector
		is   error
	}{
		{"EIO", vfs.EIO, syscall.EIO},
		{"ENOSPC", vfs.ENOSPC, syscall.ENOSPC},
	} {
		t.Run(kind.name, func(t *testing.T) {
			var k int64
			for ; ; k++ {
				fired := false
				p := vfs.OnIndex(k)
				inj := kind.inj(func(op vfs.Op) bool {
					hit := p(op)
					fired = fired || hit
					return hit
				})
				ffs := vfs.WithFaults(vfs.NewMem(), inj)
				err := workload(ffs)
				if !fired {
					if err != nil {
						t.Fatalf("no fault injected, but: %v", err)
					}
					break
				}
				if !errors.Is(err, vfs.ErrInjected) || !errors.Is(err, kind.is) {
					t.Fatalf("fault at op %d (%v) surfaced as %v", k, ffs.Log()[k], err)
				}
				var pe *fs.PathError
				var le *os.LinkError
				if !errors.As(err, &pe) && !errors.As(err, &le) {
					t.Fatalf("fault at op %d: %T, want *fs.PathError or *os.LinkError", k, err)
				}
			}
			if k < 15 {
				t.Fatalf("the workload has only %d operations", k)
			}
		})
	}
}

func TestFaultKinds(t *testing.T) {
	m := vfs.NewMem()
	ffs := vfs.WithFaults(m, vfs.EIO(vfs.And(vfs.KindIs(vfs.OpSync), vfs.OnIndex(1))))
	f, err := ffs.Create("f")
	must(t, err)
	must(t, f.Sync())
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("second Sync: %v, want EIO", err)
	}
	must(t, f.Sync())
	f.Close()
	if n := ffs.Count(vfs.OpSync); n != 3 {
		t.Fatalf("Count(OpSync) = %d", n)
	}
}

func TestFaultPathMatch(t *testing.T) {
	ffs := vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.And(vfs.PathMatch("*.index"), vfs.KindIs(vfs.OpCreate))))
	if _, err := ffs.Create("p/0.index"); err == nil || !errors.Is(err, vfs.ErrInjected) {
		// p does not exist, but the fault comes first
		t.Fatalf("Create of an index: %v", err)
	}
	must(t, ffs.MkdirAll("p", 0o755))
	if _, err := ffs.Create("p/0.log"); err != nil {
		t.Fatalf("Create of a log: %v", err)
	}
	ffs = vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.PathMatch("p/*.log")))
	ffs.Unwrap().MkdirAll("p", 0o755)
	if _, err := ffs.Create("p/0.log"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Create p/0.log: %v", err)
	}
	if _, err := ffs.Create("0.log"); err != nil {
		t.Fatalf("Create 0.log: %v", err)
	}
	// A rename matches on either name.
	if err := ffs.Rename("0.log", "p/1.log"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Rename into p: %v", err)
	}
	var le *os.LinkError
	if err := ffs.Rename("0.log", "p/1.log"); !errors.As(err, &le) {
		t.Fatalf("Rename fault is a %T, want *os.LinkError", err)
	}
}

func TestFaultShortWrite(t *testing.T) {
	m := vfs.NewMem()
	ffs := vfs.WithFaults(m, vfs.ShortWrite(vfs.OnIndex(0))) // the first write
	f, err := ffs.Create("f")
	must(t, err)
	n, err := f.Write([]byte("0123456789"))
	if n != 5 || !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("short Write = %d, %v; want 5, ENOSPC", n, err)
	}
	n, err = f.WriteAt([]byte("abcd"), 100)
	if n != 4 || err != nil {
		t.Fatalf("next WriteAt = %d, %v", n, err)
	}
	f.Close()
	got, _ := vfs.ReadFile(m, "f")
	if !bytes.HasPrefix(got, []byte("01234\x00")) || len(got) != 104 {
		t.Fatalf("file after a short write: %q", got)
	}
}

func TestFaultFlipBit(t *testing.T) {
	data := []byte("the quick brown fox")
	m := vfs.NewMem()
	vfs.WriteFile(m, "f", data, 0o644)
	// Every byte, in turn, comes back flipped once (RELIABILITY E5).
	for off := range int64(len(data)) {
		ffs := vfs.WithFaults(m, vfs.FlipBit(off, vfs.Always()))
		f, err := ffs.Open("f")
		must(t, err)
		got := make([]byte, 8)
		var all []byte
		for {
			n, err := f.Read(got)
			all = append(all, got[:n]...)
			if err == io.EOF {
				break
			}
			must(t, err)
		}
		f.Close()
		for i := range all {
			if (all[i] != data[i]) != (int64(i) == off) {
				t.Fatalf("flip at %d: byte %d is %q, want %q flipped only at %d", off, i, all[i], data[i], off)
			}
		}
		g, _ := ffs.Open("f")
		b := make([]byte, 4)
		g.ReadAt(b, off)
		if b[0] != data[off]^1 {
			t.Fatalf("ReadAt(%d) not flipped", off)
		}
		g.Close()
	}
}

func TestFaultRandomly(t *testing.T) {
	run := func(seed uint64, extra bool) []bool {
		p := vfs.Randomly(0.3, seed)
		var out []bool
		for range 200 {
			if extra {
				p(vfs.Op{Path: "other"}) // other paths do not shift the choices
			}
			out = append(out, p(vfs.Op{Path: "f"}))
		}
		return out
	}
	a, b, c := run(1, false), run(1, true), run(2, false)
	hits := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("choice %d moved when another path interleaved", i)
		}
		if a[i] {
			hits++
		}
	}
	if hits < 30 || hits > 90 {
		t.Fatalf("%d of 200 chosen at p=0.3", hits)
	}
	if slicesEqual(a, c) {
		t.Fatalf("seeds 1 and 2 choose alike")
	}
}

func slicesEqual(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFaultCombinators(t *testing.T) {
	op := func(k vfs.OpKind, p string) vfs.Op { return vfs.Op{Kind: k, Path: p} }
	p := vfs.Or(vfs.KindIs(vfs.OpRename), vfs.And(vfs.Mutating(), vfs.Not(vfs.PathMatch("*.tmp"))))
	for _, tc := range []struct {
		op   vfs.Op
		want bool
	}{
		{op(vfs.OpRename, "a.tmp"), true},
		{op(vfs.OpWrite, "a.tmp"), false},
		{op(vfs.OpWrite, "a.log"), true},
		{op(vfs.OpRead, "a.log"), false},
	} {
		if got := p(tc.op); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.op, got, tc.want)
		}
	}
	inj := vfs.Injectors(vfs.ENOSPC(vfs.OnIndex(2)), vfs.EIO(vfs.OnIndex(1)))
	var errs []error
	for range 4 {
		errs = append(errs, inj.MaybeError(vfs.Op{}))
	}
	if errs[0] != nil || !errors.Is(errs[1], syscall.EIO) || !errors.Is(errs[2], syscall.ENOSPC) || errs[3] != nil {
		t.Fatalf("Injectors: %v", errs)
	}
}

func TestFaultLog(t *testing.T) {
	ffs := vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.KindIs(vfs.OpRemove)))
	ffs.SetLogLimit(4)
	vfs.WriteFile(ffs, "a", []byte("x"), 0o644) // create, write, close
	ffs.Rename("a", "b")
	err := ffs.Remove("b")
	log := ffs.Log()
	if len(log) != 4 {
		t.Fatalf("log has %d entries, want the last 4", len(log))
	}
	want := []vfs.OpKind{vfs.OpWrite, vfs.OpClose, vfs.OpRename, vfs.OpRemove}
	for i, op := range log {
		if op.Kind != want[i] || op.Index != int64(i+1) {
			t.Fatalf("log[%d] = %v, want kind %v index %d", i, op, want[i], i+1)
		}
	}
	if log[3].Err == nil || !errors.Is(log[3].Err, syscall.EIO) || log[3].Err.Error() != err.Error() {
		t.Fatalf("logged error %v, returned %v", log[3].Err, err)
	}
	if log[2].NewPath != "b" || !strings.Contains(log[2].String(), "a -> b") {
		t.Fatalf("rename logged as %v", log[2])
	}
	if log[0].Len != 1 || log[0].Offset != 0 {
		t.Fatalf("write logged as %v", log[0])
	}
	if ffs.Ops() != 5 || ffs.Count(vfs.OpCreate) != 1 {
		t.Fatalf("Ops %d, creates %d", ffs.Ops(), ffs.Count(vfs.OpCreate))
	}
	ffs.SetLogLimit(0)
	ffs.Stat("b")
	if log := ffs.Log(); len(log) != 0 || ffs.Count(vfs.OpStat) != 1 {
		t.Fatalf("with no log: %v, %d stats counted", log, ffs.Count(vfs.OpStat))
	}
}

func TestFaultCrashAfter(t *testing.T) {
	m := vfs.NewMem()
	crash := vfs.CrashAfter(3)
	ffs := vfs.WithFaults(m, crash)
	f, err := ffs.Create("f") // 1
	must(t, err)
	f.Write([]byte("ab")) // 2
	f.Sync()              // 3
	if crash.Crashed() {
		t.Fatalf("crashed early")
	}
	if _, err := f.Write([]byte("cd")); !errors.Is(err, vfs.ErrCrashed) || !crash.Crashed() {
		t.Fatalf("4th mutation: %v", err)
	}
	if err := ffs.MkdirAll("d", 0o755); !errors.Is(err, vfs.ErrCrashed) {
		t.Fatalf("after the crash: %v", err)
	}
	// Reads still work.
	if got, err := vfs.ReadFile(ffs, "f"); err != nil || string(got) != "ab" {
		t.Fatalf("read after the crash: %q, %v", got, err)
	}
	f.Close()
	c := m.CrashClone(vfs.CrashConfig{})
	if _, err := c.Stat("f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("f was never made durable in its directory, yet: %v", err)
	}
}
