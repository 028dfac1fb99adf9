package vfs_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/segkit/segkit/vfs"
)

// TestMemConcurrent runs one writer (appends, syncs, segment rolls,
// renames) against readers and a crash cloner; run it with -race.
func TestMemConcurrent(t *testing.T) {
	m := vfs.NewMem()
	const chunk, chunks = 1000, 400
	pat := func(off int64) byte { return byte(off%251 + 1) }
	var written atomic.Int64
	f, err := m.Create("log")
	must(t, err)
	must(t, vfs.SyncDir(m, "."))

	var wg sync.WaitGroup
	done := make(chan struct{})
	errc := make(chan error, 16)
	wg.Go(func() { // the writer
		defer close(done)
		buf := make([]byte, chunk)
		for i := range chunks {
			off := int64(i * chunk)
			for j := range buf {
				buf[j] = pat(off + int64(j))
			}
			if _, err := f.Write(buf); err != nil {
				errc <- err
				return
			}
			written.Store(off + chunk)
			if i%10 == 9 {
				f.Sync()
			}
			if i%50 == 49 {
				name := fmt.Sprintf("seg-%d", i)
				vfs.WriteFile(m, name+".tmp", buf[:10], 0o644)
				m.Rename(name+".tmp", name)
				vfs.SyncDir(m, ".")
			}
		}
		f.Close()
	})
	for r := range 4 {
		wg.Go(func() { // readers
			rf, err := m.Open("log")
			if err != nil {
				errc <- err
				return
			}
			defer rf.Close()
			rng := rand.New(rand.NewPCG(uint64(r), 0))
			buf := make([]byte, 300)
			for {
				select {
				case <-done:
					return
				default:
				}
				n := written.Load()
				if n < int64(len(buf)) {
					continue
				}
				off := rng.Int64N(n - int64(len(buf)) + 1)
				if _, err := rf.ReadAt(buf, off); err != nil && err != io.EOF {
					errc <- err
					return
				}
				for j, b := range buf {
					if b != pat(off+int64(j)) {
						errc <- fmt.Errorf("reader saw byte %d = %d", off+int64(j), b)
						return
					}
				}
				if fi, err := rf.Stat(); err != nil || fi.Size() < n {
					errc <- fmt.Errorf("Stat: %v, %v", fi, err)
					return
				}
				if _, err := vfs.ReadDir(m, "."); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Go(func() { // the crash cloner
		for seed := uint64(0); ; seed++ {
			select {
			case <-done:
				return
			default:
			}
			c := m.CrashClone(vfs.CrashConfig{Seed: seed, UnsyncedDataPercent: 50, TornWrites: true})
			data, err := vfs.ReadFile(c, "log")
			if err != nil {
				errc <- err
				return
			}
			for j, b := range data {
				if b != pat(int64(j)) && b != 0 {
					errc <- fmt.Errorf("clone byte %d = %d", j, b)
					return
				}
			}
		}
	})
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if fi, _ := m.Stat("log"); fi.Size() != chunk*chunks {
		t.Fatalf("log size %d", fi.Size())
	}
}

// TestMemAllocs checks that reads and in-place writes of a Mem file do not
// allocate.
func TestMemAllocs(t *testing.T) {
	m := vfs.NewMem()
	f, err := m.Create("f")
	must(t, err)
	defer f.Close()
	buf := make([]byte, 4096)
	f.Write(make([]byte, 1<<20))
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"ReadAt", func() { f.ReadAt(buf, 12345) }},
		{"WriteAt", func() { f.WriteAt(buf, 54321) }}, // unsynced bytes: nothing to save
		{"Sync", func() { f.Sync() }},
	} {
		if n := testing.AllocsPerRun(100, tc.fn); n != 0 {
			t.Errorf("%s: %v allocations, want 0", tc.name, n)
		}
	}
}
