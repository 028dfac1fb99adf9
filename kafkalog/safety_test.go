package kafkalog_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestOpenLocksLogDir: a writable Open holds its log directory's .lock
// until Close; a second writer of the partition fails at once with a
// *LockError, before writing; read-only opens and other partitions of the
// same log directory in this process are not kept out. The same runs on
// Mem (and so under GOOS=js) and on the OS where it has file locks.
func TestOpenLocksLogDir(t *testing.T) {
	for _, fsys := range []vfs.FS{vfs.NewMem(), vfs.Sub(vfs.OS(), t.TempDir())} {
		t.Run(fsys.Name(), func(t *testing.T) {
			c := &clock{ms: 1}
			cfg := smallConfig(t, 1<<20)
			l, err := kafkalog.Open(fsys, "logs/t-0", cfg, kafkalog.Options{Clock: c})
			if errors.Is(err, errors.ErrUnsupported) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			var w record.Builder
			b, _ := buildBatch(t, &w, compress.None, 0, 3, 1)
			if _, err := l.Append(b, 0); err != nil {
				t.Fatal(err)
			}
			before := dirState(t, fsys, "logs")
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					_, err := kafkalog.Open(fsys, "logs/t-0", cfg, kafkalog.Options{Clock: c})
					var le *kafkalog.LockError
					if !errors.As(err, &le) || !errors.Is(err, vfs.ErrLocked) || le.Path != "logs/.lock" {
						t.Errorf("second writer: %v", err)
					}
				})
			}
			wg.Wait()
			if after := dirState(t, fsys, "logs"); after != before {
				t.Fatalf("a refused writer changed the log directory:\n%s\n%s", before, after)
			}
			ro, err := kafkalog.Open(fsys, "logs/t-0", cfg, kafkalog.Options{Clock: c, ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only open beside a writer: %v", err)
			}
			ro.Close()
			other, err := kafkalog.Open(fsys, "logs/t-1", cfg, kafkalog.Options{Clock: c})
			if err != nil {
				t.Fatalf("another partition of the log directory: %v", err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := kafkalog.Open(fsys, "logs/t-1", cfg, kafkalog.Options{Clock: c}); !errors.Is(err, vfs.ErrLocked) {
				t.Fatalf("t-1 opened twice: %v", err)
			}
			other.Close()
			l2, err := kafkalog.Open(fsys, "logs/t-0", cfg, kafkalog.Options{Clock: c})
			if err != nil {
				t.Fatalf("reopen after Close: %v", err)
			}
			if l2.LogEndOffset() != 3 {
				t.Fatalf("log end offset %d", l2.LogEndOffset())
			}
			l2.Close()
		})
	}
}

// dirState lists every file under dir with its content.
func dirState(t *testing.T, fsys vfs.FS, dir string) string {
	t.Helper()
	var b bytes.Buffer
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range infos {
		p := dir + "/" + fi.Name()
		if fi.IsDir() {
			b.WriteString(dirState(t, fsys, p))
			continue
		}
		data, err := vfs.ReadFile(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %x\n", p, data)
	}
	return b.String()
}

// TestOpenRefusesCorruption: a writable Open cuts a torn tail, but
// corruption followed by valid batches — or a cut that would delete later
// segments — fails it with a *CorruptLogError naming the file and the
// position, without cutting anything; TruncateCorrupt recovers as Kafka
// does.
func TestOpenRefusesCorruption(t *testing.T) {
	build := func(t *testing.T) (*vfs.Mem, []int64) {
		mem := vfs.NewMem()
		c := &clock{ms: 1}
		l := mustOpen(t, mem, "logs/t-0", smallConfig(t, 600), c)
		var w record.Builder
		for i := range 12 {
			b, _ := buildBatch(t, &w, compress.None, i*2, 2, 1)
			if _, err := l.Append(b, 0); err != nil {
				t.Fatal(err)
			}
		}
		if len(l.Segments()) < 3 {
			t.Fatalf("%d segments", len(l.Segments()))
		}
		kafkalog.Abandon(l) // unclean: the next Open recovers from 0
		mem.Remove("logs/recovery-point-offset-checkpoint")
		data, _ := vfs.ReadFile(mem, "logs/t-0/00000000000000000000.log")
		var pos []int64
		for s := record.NewScanner(data, "", 0); s.Next(); {
			pos = append(pos, s.Entry().Position)
		}
		return mem, pos
	}
	const first = "logs/t-0/00000000000000000000.log"
	flip := func(t *testing.T, mem *vfs.Mem, at int64) {
		data, _ := vfs.ReadFile(mem, first)
		data[at] ^= 1
		vfs.WriteFile(mem, first, data, 0o644)
	}
	t.Run("mid-log", func(t *testing.T) {
		mem, pos := build(t)
		flip(t, mem, pos[1]+40)
		before, _ := vfs.ReadFile(mem, first)
		_, err := kafkalog.Open(mem, "logs/t-0", smallConfig(t, 600), kafkalog.Options{Clock: &clock{ms: 1}})
		var ce *kafkalog.CorruptLogError
		var fe *format.CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, kafkalog.ErrCorruptLog) || !errors.As(err, &fe) || ce.Path != first || ce.Position != pos[1] || ce.NextValid != pos[2] || ce.LaterSegments < 2 {
			t.Fatalf("Open: %v (%+v)", err, ce)
		}
		if after, _ := vfs.ReadFile(mem, first); !bytes.Equal(after, before) {
			t.Fatal("the refused Open changed the segment")
		}
		l, err := kafkalog.Open(mem, "logs/t-0", smallConfig(t, 600), kafkalog.Options{Clock: &clock{ms: 1}, TruncateCorrupt: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if l.LogEndOffset() != 2 || len(l.Segments()) != 1 {
			t.Fatalf("recovery mode: log end %d, %d segments", l.LogEndOffset(), len(l.Segments()))
		}
	})
	t.Run("last-batch-of-earlier-segment", func(t *testing.T) {
		mem, pos := build(t)
		flip(t, mem, pos[len(pos)-1]+40) // nothing valid after it in the file, but later segments
		_, err := kafkalog.Open(mem, "logs/t-0", smallConfig(t, 600), kafkalog.Options{Clock: &clock{ms: 1}})
		var ce *kafkalog.CorruptLogError
		if !errors.As(err, &ce) || ce.NextValid != -1 || ce.LaterSegments < 2 {
			t.Fatalf("Open: %v (%+v)", err, ce)
		}
	})
	t.Run("torn-tail", func(t *testing.T) {
		mem, _ := build(t)
		segs, _ := vfs.ReadDir(mem, "logs/t-0")
		last := ""
		for _, fi := range segs {
			if len(fi.Name()) == 24 && fi.Name()[20:] == ".log" {
				last = "logs/t-0/" + fi.Name()
			}
		}
		data, _ := vfs.ReadFile(mem, last)
		vfs.WriteFile(mem, last, append(data, data[:25]...), 0o644)
		l, err := kafkalog.Open(mem, "logs/t-0", smallConfig(t, 600), kafkalog.Options{Clock: &clock{ms: 1}})
		if err != nil {
			t.Fatalf("a torn tail: %v", err)
		}
		defer l.Close()
		if l.LogEndOffset() != 24 {
			t.Fatalf("log end %d", l.LogEndOffset())
		}
		cut := int64(0)
		for _, r := range l.LoadReport().Recovered {
			cut += r.Result.Truncated
		}
		if cut != 25 {
			t.Fatalf("cut %d bytes, want 25", cut)
		}
	})
}
