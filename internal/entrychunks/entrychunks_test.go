package entrychunks_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/entrychunks"
	"github.com/segkit/segkit/record"
)

// entries returns n entries as Run sees them (an 8-byte offset, a 4-byte
// length, that many bytes), of 14 to 14+maxBody bytes after the length,
// and the position of each.
func entries(rng *rand.Rand, n, maxBody int) ([]byte, []int64) {
	var b []byte
	var pos []int64
	for i := range n {
		pos = append(pos, int64(len(b)))
		body := record.MinLegacyEntrySize + rng.IntN(maxBody+1)
		b = binary.BigEndian.AppendUint64(b, uint64(i))
		b = binary.BigEndian.AppendUint32(b, uint32(body))
		for range body {
			b = append(b, byte(rng.Uint32()|1)) // never an entry of zeros
		}
	}
	return b, pos
}

// fakeMap serves ranges of data as Options.Map does, counting the ranges
// not yet released.
type fakeMap struct {
	data []byte
	live atomic.Int64
	maps atomic.Int64
}

func (m *fakeMap) Map(off int64, n int) ([]byte, func(), error) {
	if off < 0 || n <= 0 || off+int64(n) > int64(len(m.data)) {
		return nil, nil, fmt.Errorf("fakeMap: %d+%d out of %d", off, n, len(m.data))
	}
	m.live.Add(1)
	m.maps.Add(1)
	var once atomic.Bool
	return m.data[off : off+int64(n) : off+int64(n)], func() {
		if !once.CompareAndSwap(false, true) {
			panic("released twice")
		}
		m.live.Add(-1)
	}, nil
}

// result is a chunk's result in the tests: the positions of its entries.
type result struct{ pos []int64 }

// run runs Run over data from from and checks what every run must hold:
// the chunks applied are whole entries, contiguous from from to the end
// returned, in order; process saw each chunk applied; no mapping is left.
// bad reports the chunks (by start) that process calls not clean.
func run(t *testing.T, data []byte, from int64, opt entrychunks.Options, bad func(c entrychunks.Chunk) bool) (int64, []int64) {
	t.Helper()
	var fm *fakeMap
	if opt.Map != nil {
		fm = &fakeMap{data: data}
		opt.Map = fm.Map
	}
	process := func(worker int, c entrychunks.Chunk, res *result) bool {
		if worker < 0 || worker >= max(1, opt.Workers) {
			t.Errorf("worker %d of %d", worker, opt.Workers)
		}
		res.pos = res.pos[:0]
		for i := 0; i < len(c.Buf); {
			res.pos = append(res.pos, c.Start+int64(i))
			i += record.LogOverhead + int(binary.BigEndian.Uint32(c.Buf[i+record.LengthOffset:]))
		}
		return !bad(c)
	}
	var got []int64
	at := from
	apply := func(c entrychunks.Chunk, res *result) error {
		if c.Start != at {
			t.Errorf("chunk at %d, want %d", c.Start, at)
		}
		if !bytes.Equal(c.Buf, data[c.Start:c.Start+int64(len(c.Buf))]) {
			t.Errorf("chunk at %d: its bytes are not the file's", c.Start)
		}
		got = append(got, res.pos...)
		at = c.Start + int64(len(c.Buf))
		return nil
	}
	end, err := entrychunks.Run(bytes.NewReader(data), from, int64(len(data)), opt, process, apply)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if end != at {
		t.Errorf("Run returned %d, the chunks applied end at %d", end, at)
	}
	if fm != nil && fm.live.Load() != 0 {
		t.Errorf("%d mappings left of %d", fm.live.Load(), fm.maps.Load())
	}
	return end, got
}

func TestRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data, pos := entries(rng, 3000, 900)
	never := func(entrychunks.Chunk) bool { return false }
	for _, mapped := range []bool{false, true} {
		for _, workers := range []int{1, 2, 3} {
			for _, chunk := range []int{1, 100, 4096, 1 << 20} {
				opt := entrychunks.Options{Workers: workers, ChunkSize: chunk, MapWindow: 64 << 10}
				if mapped {
					opt.Map = func(int64, int) ([]byte, func(), error) { return nil, nil, nil } // replaced by run
				}
				t.Run(fmt.Sprintf("mapped=%v/workers=%d/chunk=%d", mapped, workers, chunk), func(t *testing.T) {
					// Clean: every entry, to the end.
					end, got := run(t, data, 0, opt, never)
					if end != int64(len(data)) || !slices.Equal(got, pos) {
						t.Fatalf("clean: end %d of %d, %d entries of %d", end, len(data), len(got), len(pos))
					}
					// From an entry in the middle.
					end, got = run(t, data, pos[1234], opt, never)
					if end != int64(len(data)) || !slices.Equal(got, pos[1234:]) {
						t.Fatalf("from entry 1234: end %d, %d entries", end, len(got))
					}
					// A chunk that is not clean stops the run at its start.
					badAt := pos[2000]
					end, got = run(t, data, 0, opt, func(c entrychunks.Chunk) bool {
						return c.Start <= badAt && badAt < c.Start+int64(len(c.Buf))
					})
					if end > badAt || end < badAt-int64(max(chunk, 1000)) || !slices.Equal(got, pos[:len(got)]) {
						t.Fatalf("bad chunk at %d: end %d, %d entries", badAt, end, len(got))
					}
				})
			}
		}
	}
}

// TestRunIrregular: Run stops before anything that is not a whole entry
// by its length fields, and at an entry larger than MaxEntry (which does
// not fit in a chunk).
func TestRunIrregular(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data, pos := entries(rng, 200, 300)
	never := func(entrychunks.Chunk) bool { return false }
	cases := []struct {
		name string
		edit func(b []byte) []byte
		opt  entrychunks.Options
		stop int64 // the largest end Run may return
	}{
		{"zeros", func(b []byte) []byte { clear(b[pos[150]:]); return b }, entrychunks.Options{}, pos[150]},
		{"size too small", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[100]+8:], 3); return b }, entrychunks.Options{}, pos[100]},
		{"negative size", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[100]+8:], 0x80000000); return b }, entrychunks.Options{}, pos[100]},
		{"torn tail", func(b []byte) []byte { return b[:pos[199]+20] }, entrychunks.Options{}, pos[199]},
		{"entry past the end", func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos[199]+8:], 1<<20); return b }, entrychunks.Options{}, pos[199]},
		{"entry over MaxEntry", func(b []byte) []byte { return b }, entrychunks.Options{ChunkSize: 100, MaxEntry: 200}, int64(len(data))},
	}
	for _, c := range cases {
		for _, mapped := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/mapped=%v", c.name, mapped), func(t *testing.T) {
				b := c.edit(bytes.Clone(data))
				opt := c.opt
				opt.Workers = 2
				if opt.ChunkSize == 0 {
					opt.ChunkSize = 512
				}
				if mapped {
					opt.Map = func(int64, int) ([]byte, func(), error) { return nil, nil, nil }
				}
				end, got := run(t, b, 0, opt, never)
				if end > c.stop {
					t.Errorf("end %d, past %d", end, c.stop)
				}
				if c.opt.MaxEntry > 0 {
					// The first entry over MaxEntry stops it.
					for i, p := range pos {
						if next := int64(len(data)); i+1 < len(pos) {
							next = pos[i+1]
							if next-p > int64(c.opt.MaxEntry) {
								if end > p {
									t.Errorf("end %d, past entry %d at %d of %d bytes", end, i, p, next-p)
								}
								break
							}
						}
					}
				}
				if !slices.Equal(got, pos[:len(got)]) {
					t.Errorf("entries applied are not the file's first %d", len(got))
				}
			})
		}
	}
}

// TestRunApplyError: apply's error stops Run, which returns it, with no
// mapping left.
func TestRunApplyError(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data, _ := entries(rng, 2000, 300)
	stop := errors.New("stop")
	fm := &fakeMap{data: data}
	n := 0
	_, err := entrychunks.Run(bytes.NewReader(data), 0, int64(len(data)), entrychunks.Options{Workers: 2, ChunkSize: 1000, Map: fm.Map, MapWindow: 8 << 10},
		func(int, entrychunks.Chunk, *result) bool { return true },
		func(entrychunks.Chunk, *result) error {
			if n++; n == 50 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) {
		t.Errorf("Run: %v, want %v", err, stop)
	}
	if fm.live.Load() != 0 {
		t.Errorf("%d mappings left", fm.live.Load())
	}
}

// FuzzRun: whatever the bytes, the chunks applied are whole entries by
// their length fields, contiguous from the start, and no mapping is left.
func FuzzRun(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	d, _ := entries(rng, 20, 40)
	f.Add(d, uint16(64), uint8(2), false)
	f.Add(d, uint16(1), uint8(3), true)
	f.Add(d[:len(d)-5], uint16(100), uint8(1), true)
	f.Add([]byte{}, uint16(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, workers uint8, mapped bool) {
		opt := entrychunks.Options{Workers: int(workers % 4), ChunkSize: int(chunk), MapWindow: 256, MaxEntry: 1 << 16}
		if mapped {
			opt.Map = func(int64, int) ([]byte, func(), error) { return nil, nil, nil }
		}
		end, got := run(t, data, 0, opt, func(c entrychunks.Chunk) bool { return c.Start%7 == 3 })
		// Every entry applied is whole by its length field, and they
		// tile [0, end).
		at := int64(0)
		for _, p := range got {
			if p != at {
				t.Fatalf("entry at %d, want %d", p, at)
			}
			size := int32(binary.BigEndian.Uint32(data[p+record.LengthOffset:]))
			if size < record.MinLegacyEntrySize {
				t.Fatalf("entry at %d of size %d", p, size)
			}
			at = p + record.LogOverhead + int64(size)
		}
		if at != end {
			t.Fatalf("entries end at %d, Run at %d", at, end)
		}
	})
}

// BenchmarkRun cuts 64 MiB of 1 KiB entries into chunks (copied, from
// memory) and checksums each chunk on the workers (CRC-32C, the work of
// the lightest caller): the cost of reading, cutting and handing the
// chunks back in order. Run it with -cpu 1,2.
func BenchmarkRun(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	data, _ := entries(rng, 64<<10, 1000)
	r := bytes.NewReader(data)
	process := func(_ int, c entrychunks.Chunk, sum *uint32) bool {
		*sum = format.UpdateCRC32C(0, c.Buf)
		return true
	}
	var total uint32
	apply := func(_ entrychunks.Chunk, sum *uint32) error { total += *sum; return nil }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		end, err := entrychunks.Run(r, 0, int64(len(data)), entrychunks.Options{Workers: runtime.GOMAXPROCS(0)}, process, apply)
		if err != nil || end != int64(len(data)) {
			b.Fatal(end, err)
		}
	}
}
