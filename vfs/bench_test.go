package vfs_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/segkit/segkit/vfs"
)

var sink []byte

// appendSize is the size BenchmarkAppend writes per iteration: 64 MiB, or
// 1 GiB with SEGKIT_BENCH_BIG=1.
func appendSize() int {
	if os.Getenv("SEGKIT_BENCH_BIG") != "" {
		return 1 << 30
	}
	return 64 << 20
}

// BenchmarkAppend appends appendSize bytes in 16 KiB writes: to Mem against
// a plain growing []byte, and to OS (a temporary directory) against raw
// *os.File writes. Mem should stay within 1.5x of its baseline, OS within
// 1.5x of raw os.File.Write.
func BenchmarkAppend(b *testing.B) {
	size := appendSize()
	const chunk = 16 << 10
	buf := make([]byte, chunk)
	for i := range buf {
		buf[i] = byte(i)
	}
	b.Run(fmt.Sprintf("size=%d/bytes", size), func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			var s []byte
			for n := 0; n < size; n += chunk {
				s = append(s, buf...)
			}
			sink = s[:1]
		}
	})
	b.Run(fmt.Sprintf("size=%d/mem", size), func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			m := vfs.NewMem()
			f, _ := m.Create("log")
			for n := 0; n < size; n += chunk {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
		}
	})
	b.Run(fmt.Sprintf("size=%d/mem+sync", size), func(b *testing.B) {
		// A Sync after every write: Sync must not copy the file.
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			m := vfs.NewMem()
			f, _ := m.Create("log")
			for n := 0; n < size; n += chunk {
				f.Write(buf)
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
		}
	})
	dir := b.TempDir()
	b.Run(fmt.Sprintf("size=%d/os-raw", size), func(b *testing.B) {
		p := filepath.Join(dir, "raw.log")
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < size; n += chunk {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
			os.Remove(p)
		}
	})
	b.Run(fmt.Sprintf("size=%d/os", size), func(b *testing.B) {
		fsys := vfs.Sub(vfs.OS(), dir)
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			f, err := fsys.Create("vfs.log")
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < size; n += chunk {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
			fsys.Remove("vfs.log")
		}
	})
}

// BenchmarkCrashClone clones a Mem holding a 64 MiB log with 1 MiB unsynced.
func BenchmarkCrashClone(b *testing.B) {
	m := vfs.NewMem()
	f, _ := m.Create("log")
	buf := make([]byte, 1<<20)
	for range 64 {
		f.Write(buf)
	}
	f.Sync()
	f.Write(buf)
	f.Close()
	b.SetBytes(65 << 20)
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		seed++
		m.CrashClone(vfs.CrashConfig{Seed: seed, UnsyncedDataPercent: 50, TornWrites: true})
	}
}

// indexFile writes a 10 MiB offset index: 8-byte entries of relative offset
// (uint32, every third) and position, as Kafka's .index holds.
func indexFile(b *testing.B) (dir, name string) {
	const size = 10 << 20
	buf := make([]byte, size)
	for i := 0; i < size/8; i++ {
		binary.BigEndian.PutUint32(buf[i*8:], uint32(i*3))
		binary.BigEndian.PutUint32(buf[i*8+4:], uint32(i*100))
	}
	dir = b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0.index"), buf, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir, "0.index"
}

// lookup binary-searches the index for the last entry whose key is <=
// target, reading each probed key with key(i).
func lookup(entries int, key func(i int) uint32, target uint32) int {
	lo, hi := 0, entries-1
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if key(mid) <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func targets() []uint32 {
	r := rand.New(rand.NewPCG(1, 2))
	t := make([]uint32, 4096)
	for i := range t {
		t[i] = uint32(r.IntN(3 * (10 << 20) / 8))
	}
	return t
}

var lookupSink int

// BenchmarkIndexLookup compares three ways to binary-search a 10 MiB index:
// a vfs.Map (an mmap on native platforms), the file read into a buffer
// once, and a ReadAt per probe. "warm" is one lookup on an open index;
// "cold" opens the index, looks up once and closes it.
func BenchmarkIndexLookup(b *testing.B) {
	dir, name := indexFile(b)
	fsys := vfs.Sub(vfs.OS(), dir)
	ts := targets()
	const entries = (10 << 20) / 8
	mapKey := func(m *vfs.ReadOnlyMap) func(int) uint32 {
		return func(i int) uint32 {
			o := i * 8
			return uint32(m.At(o))<<24 | uint32(m.At(o+1))<<16 | uint32(m.At(o+2))<<8 | uint32(m.At(o+3))
		}
	}
	readAtKey := func(f io.ReaderAt) func(int) uint32 {
		var e [4]byte
		return func(i int) uint32 {
			f.ReadAt(e[:], int64(i*8))
			return binary.BigEndian.Uint32(e[:])
		}
	}
	readAll := func() []byte {
		f, err := fsys.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 10<<20)
		if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
			b.Fatal(err)
		}
		f.Close()
		return buf
	}
	bufKey := func(buf []byte) func(int) uint32 {
		return func(i int) uint32 { return binary.BigEndian.Uint32(buf[i*8:]) }
	}

	b.Run("warm/map", func(b *testing.B) {
		m, err := vfs.Map(fsys, name)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		key, i := mapKey(m), 0
		b.ReportAllocs()
		for b.Loop() {
			lookupSink += lookup(entries, key, ts[i&4095])
			i++
		}
	})
	b.Run("warm/buffer", func(b *testing.B) {
		key, i := bufKey(readAll()), 0
		b.ReportAllocs()
		for b.Loop() {
			lookupSink += lookup(entries, key, ts[i&4095])
			i++
		}
	})
	b.Run("warm/readat", func(b *testing.B) {
		f, _ := fsys.Open(name)
		defer f.Close()
		key, i := readAtKey(f), 0
		b.ReportAllocs()
		for b.Loop() {
			lookupSink += lookup(entries, key, ts[i&4095])
			i++
		}
	})
	b.Run("cold/map", func(b *testing.B) {
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			m, err := vfs.Map(fsys, name)
			if err != nil {
				b.Fatal(err)
			}
			lookupSink += lookup(entries, mapKey(m), ts[i&4095])
			m.Close()
			i++
		}
	})
	b.Run("cold/buffer", func(b *testing.B) {
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			lookupSink += lookup(entries, bufKey(readAll()), ts[i&4095])
			i++
		}
	})
	b.Run("cold/readat", func(b *testing.B) {
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			f, _ := fsys.Open(name)
			lookupSink += lookup(entries, readAtKey(f), ts[i&4095])
			f.Close()
			i++
		}
	})
}
