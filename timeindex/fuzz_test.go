package timeindex_test

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

var generate = flag.Bool("generate", false, "rewrite the committed fuzz seed corpora (testdata/fuzz) from scenarios and ../shared/kafka-real")

const (
	opAppend     = iota
	opAppendRoll // skipFullCheck, as at roll and close
	opLookup
	opTruncate
	opTrim
	opReopen
	opReopenUntrimmed
	opReset
	opCount
)

type opReader struct {
	b []byte
	i int
}

func (r *opReader) more() bool { return r.i < len(r.b) }
func (r *opReader) byte() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

// timeModel is the time index as a plain slice, with Kafka's rules.
type timeModel struct {
	base    int64
	es      []timeindex.Entry
	length  int64
	padding int
	// unsorted is set once an append follows kept padding: the zero
	// entries then sit among real ones, as in Kafka, timestamps no longer
	// increase, and a lookup's binary search may land on any entry.
	unsorted bool
}

func (m *timeModel) entries() int { return len(m.es) + m.padding }

func (m *timeModel) last() timeindex.Entry {
	switch {
	case m.padding > 0:
		return timeindex.Entry{Timestamp: 0, Offset: m.base}
	case len(m.es) == 0:
		return timeindex.Entry{Timestamp: -1, Offset: m.base}
	}
	return m.es[len(m.es)-1]
}

func (m *timeModel) lookup(ts int64) timeindex.Entry {
	got := timeindex.Entry{Timestamp: -1, Offset: m.base}
	for _, e := range m.es {
		if e.Timestamp <= ts {
			got = e
		}
	}
	return got
}

// maybeAppend predicts MaybeAppend: its error, and whether it appends.
func (m *timeModel) maybeAppend(ts, off int64, skip bool) error {
	n, max := int64(m.entries()), m.length/12
	if !skip && n >= max-1 {
		return timeindex.ErrIndexFull
	}
	last := m.last()
	if n > 0 && off < last.Offset {
		return timeindex.ErrOffsetOrder
	}
	if n > 0 && ts < last.Timestamp {
		return timeindex.ErrTimestampOrder
	}
	if ts <= last.Timestamp {
		return nil
	}
	if !fitsRelative(off, m.base) {
		return timeindex.ErrOffsetOverflow
	}
	if n >= max {
		return timeindex.ErrIndexFull // never past the file's end
	}
	for ; m.padding > 0; m.padding-- {
		m.es = append(m.es, timeindex.Entry{Timestamp: 0, Offset: m.base})
		m.unsorted = true
	}
	m.es = append(m.es, timeindex.Entry{Timestamp: ts, Offset: off})
	return nil
}

// FuzzTimeIndexOps runs random maybe-appends (ordinary and at roll),
// lookups, truncations, trims, resets and reopens against a slice model on
// vfs.NewMem. After every operation: entries equal the model's, so
// timestamps strictly increase and offsets never decrease; lookups equal
// the model's; the file is exactly as long as the model says and holds the
// entries then zeros (nothing is written past the preallocated size, even
// at roll); errors are those the model predicts.
func FuzzTimeIndexOps(f *testing.F) {
	for _, s := range timeScenarios() {
		f.Add(s.ops, s.size, s.base)
	}
	f.Fuzz(func(t *testing.T, ops []byte, size uint16, base int64) {
		if len(ops) > 1024 {
			return
		}
		maxSize := int(size%3000) + 12
		fsys := vfs.NewMem()
		x, err := timeindex.OpenTimeIndex(fsys, "f.timeindex", base, index.OpenOptions{Writable: true, MaxIndexSize: maxSize})
		if err != nil {
			t.Fatal(err)
		}
		m := &timeModel{base: base, length: int64(maxSize / 12 * 12)}
		r := &opReader{b: ops}
		for step := 0; r.more(); step++ {
			switch op := r.byte() % opCount; op {
			case opAppend, opAppendRoll:
				a, b := r.byte(), r.byte()
				last := m.last()
				ts := last.Timestamp + int64(a) - 3
				off := last.Offset + int64(b) - 2
				if b == 255 {
					off = base + math.MaxInt32 + 1
				}
				want := m.maybeAppend(ts, off, op == opAppendRoll)
				err := x.MaybeAppend(ts, off, op == opAppendRoll)
				if !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("step %d: MaybeAppend(%d, %d, %v) = %v, want %v", step, ts, off, op == opAppendRoll, err, want)
				}
			case opLookup:
				ts := m.last().Timestamp + int64(int8(r.byte()))
				if m.padding == 0 && !m.unsorted {
					if got, want := x.Lookup(ts), m.lookup(ts); got != want {
						t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, ts, got, want)
					}
				}
			case opTruncate:
				target := m.last().Offset - int64(r.byte()) + 3
				if m.padding == 0 {
					if err := x.TruncateTo(target); err != nil {
						t.Fatal(err)
					}
					if k := slices.IndexFunc(m.es, func(e timeindex.Entry) bool { return e.Offset >= target }); k >= 0 {
						m.es = m.es[:k]
					}
				}
			case opTrim:
				if err := x.TrimToValidSize(); err != nil {
					t.Fatal(err)
				}
				m.length = int64(m.entries() * 12)
			case opReopen:
				if err := x.TrimToValidSize(); err != nil {
					t.Fatal(err)
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				if x, err = timeindex.OpenTimeIndex(fsys, "f.timeindex", base, index.OpenOptions{Writable: true, MaxIndexSize: maxSize}); err != nil {
					t.Fatal(err)
				}
				// An existing file keeps its length; the engine gives the
				// active segment's index its preallocated size back, never
				// less than its entries take (segment.ResizeIndexes).
				if _, err := x.Resize(max(maxSize, x.Entries()*12)); err != nil {
					t.Fatal(err)
				}
				m.length = max(int64(m.entries()*12), int64(maxSize/12*12))
			case opReopenUntrimmed:
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				if x, err = timeindex.OpenTimeIndex(fsys, "f.timeindex", base, index.OpenOptions{Writable: true, MaxIndexSize: maxSize}); err != nil {
					t.Fatal(err)
				}
				// An existing file keeps its length; the engine gives the
				// active segment's index its preallocated size back, never
				// less than its entries take (segment.ResizeIndexes).
				if _, err := x.Resize(max(maxSize, x.Entries()*12)); err != nil {
					t.Fatal(err)
				}
				m.padding = int(m.length/12) - len(m.es)
				m.length = max(m.length, int64(maxSize/12*12))
				wantValid := len(m.es)
				for wantValid > 0 && m.es[wantValid-1] == (timeindex.Entry{Offset: base}) {
					wantValid--
				}
				if p := x.Padding(); p.Entries != m.entries() || p.ValidEntries != wantValid {
					t.Fatalf("step %d: Padding %+v, model %d + %d", step, p, len(m.es), m.padding)
				}
				if r.byte()%4 != 0 {
					if _, err := x.DiscardPadding(); err != nil {
						t.Fatal(err)
					}
					m.es, m.padding = m.es[:wantValid], 0
				}
			case opReset:
				if err := x.Reset(); err != nil {
					t.Fatal(err)
				}
				m.es, m.padding, m.unsorted = m.es[:0], 0, false
				m.length = int64(maxSize / 12 * 12)
			}
			checkTimeModel(t, step, fsys, x, m)
		}
		x.Close()
	})
}

func checkTimeModel(t *testing.T, step int, fsys vfs.FS, x *timeindex.TimeIndex, m *timeModel) {
	t.Helper()
	if x.Entries() != m.entries() || x.Length() != m.length {
		t.Fatalf("step %d: %d entries, length %d; model %d, %d", step, x.Entries(), x.Length(), m.entries(), m.length)
	}
	got := x.AppendAll(nil)
	if !slices.Equal(got[:len(m.es)], m.es) {
		t.Fatalf("step %d: entries %v, model %v", step, got, m.es)
	}
	// Entries are written behind (at a flush, trim, resize, truncation or
	// close): the file is compared as a flush leaves it.
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	file, err := vfs.ReadFile(fsys, "f.timeindex")
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, e := range m.es {
		want, _ = timeindex.AppendEntry(want, m.base, e)
	}
	if int64(len(file)) != m.length || !bytes.Equal(file[:len(want)], want) || bytes.ContainsFunc(file[len(want):], func(r rune) bool { return r != 0 }) {
		t.Fatalf("step %d: file %x (%d bytes), want %x then zeros to %d", step, file, len(file), want, m.length)
	}
	if x.LastEntry() != m.last() {
		t.Fatalf("step %d: LastEntry %+v, model %+v", step, x.LastEntry(), m.last())
	}
	if x.IsFull() != (int64(m.entries()) >= m.length/12-1) {
		t.Fatalf("step %d: IsFull %v", step, x.IsFull())
	}
	sorted := true
	for i := 1; i < len(m.es); i++ {
		if m.es[i].Timestamp <= m.es[i-1].Timestamp || m.es[i].Offset < m.es[i-1].Offset {
			sorted = false
		}
	}
	if m.padding == 0 && sorted {
		for i := 0; i < len(m.es); i += 1 + len(m.es)/16 { // a sample keeps a step O(entries)
			e := m.es[i]
			for _, ts := range []int64{e.Timestamp - 1, e.Timestamp, e.Timestamp + 1} {
				if got, want := x.Lookup(ts), m.lookup(ts); got != want {
					t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, ts, got, want)
				}
			}
		}
		if err := x.SanityCheck(); err != nil && len(m.es) > 0 && m.es[len(m.es)-1].Offset >= m.base {
			t.Fatalf("step %d: %v", step, err)
		}
	} else if !m.sortedAllowedUnsorted() {
		t.Fatalf("step %d: entries out of order without padding: %v", step, m.es)
	}
}

// sortedAllowedUnsorted: entries may be out of order only after padding
// was kept (zero entries among real ones, as in Kafka).
func (m *timeModel) sortedAllowedUnsorted() bool {
	for _, e := range m.es {
		if e == (timeindex.Entry{Offset: m.base}) {
			return true
		}
	}
	return m.padding > 0
}

type seedOps []byte

func (s seedOps) add(op byte, args ...byte) seedOps { return append(append(s, op), args...) }

type opsSeed struct {
	name string
	ops  []byte
	size uint16
	base int64
}

func timeScenarios() []opsSeed {
	var out []opsSeed
	add := func(name string, size uint16, base int64, s seedOps) { out = append(out, opsSeed{name, s, size, base}) }
	grow := func(s seedOps, n int) seedOps {
		for range n {
			s = s.add(opAppend, 13, 12)
		}
		return s
	}
	add("empty", 120, 0, nil)
	add("one", 120, 0, grow(nil, 1))
	add("no_timestamp", 120, 0, seedOps{}.add(opAppend, 2, 2)) // ts -1 +2-3 = -2: nothing
	add("fill_then_full", 60, 0, grow(nil, 6))
	add("roll_uses_last_slot", 60, 0, grow(nil, 4).add(opAppendRoll, 13, 12))
	add("roll_beyond_file", 60, 0, grow(nil, 4).add(opAppendRoll, 13, 12).add(opAppendRoll, 13, 12))
	add("same_timestamp", 120, 0, grow(nil, 1).add(opAppend, 3, 12))
	add("same_offset", 120, 0, grow(nil, 1).add(opAppend, 13, 2))
	add("lower_timestamp", 120, 0, grow(nil, 2).add(opAppend, 0, 12))
	add("lower_offset", 120, 0, grow(nil, 2).add(opAppend, 13, 0))
	add("both_lower", 120, 0, grow(nil, 2).add(opAppend, 0, 0))
	add("overflow", 120, 0, grow(nil, 1).add(opAppend, 13, 255))
	add("below_base_first", 120, 100, seedOps{}.add(opAppend, 13, 0))
	add("lookups", 600, 7, grow(nil, 20).add(opLookup, 0).add(opLookup, 0x80).add(opLookup, 0x7f))
	add("truncate_middle", 240, 0, grow(nil, 10).add(opTruncate, 40).add(opAppend, 13, 12))
	add("truncate_all", 240, 0, grow(nil, 10).add(opTruncate, 250))
	add("truncate_none", 240, 0, grow(nil, 10).add(opTruncate, 0))
	add("truncate_repeated_offset", 240, 0, grow(nil, 3).add(opAppend, 13, 2).add(opTruncate, 3))
	add("trim", 240, 0, grow(nil, 3).add(opTrim).add(opAppend, 13, 12).add(opAppendRoll, 13, 12))
	add("reopen", 240, 0, grow(nil, 3).add(opReopen).add(opAppend, 13, 12))
	add("reopen_untrimmed_keep", 240, 0, grow(nil, 3).add(opReopenUntrimmed, 0).add(opAppendRoll, 13, 12))
	add("reopen_untrimmed_discard", 240, 0, grow(nil, 3).add(opReopenUntrimmed, 1).add(opAppend, 13, 12))
	add("kafka_10207", 240, 50, grow(nil, 3).add(opReopenUntrimmed, 0).add(opLookup, 0))
	add("zero_timestamp_first", 240, 0, seedOps{}.add(opAppend, 4, 2).add(opReopenUntrimmed, 1))
	add("reset", 240, 0, grow(nil, 5).add(opReset).add(opAppend, 13, 12))
	add("min_size", 0, 0, grow(nil, 2).add(opAppendRoll, 13, 12))
	add("two_slots", 24, 0, grow(nil, 2).add(opAppendRoll, 13, 12))
	add("odd_size", 25, 0, grow(nil, 3))
	add("negative_base", 240, -40, grow(nil, 4))
	add("huge_base", 240, math.MaxInt64-10000, grow(nil, 4))
	add("warm_section", 2999, 0, grow(nil, 240).add(opLookup, 0x90).add(opTruncate, 200))
	add("mixed", 400, 1000, grow(nil, 12).add(opTruncate, 30).add(opTrim).add(opReopen).add(opAppend, 40, 3).add(opReopenUntrimmed, 3).add(opAppendRoll, 5, 5).add(opLookup, 0x81))
	return out
}

// FuzzDecodeTimeIndex opens arbitrary bytes as a .timeindex, read-only and
// writable: no panic, typed errors, Kafka's entry count, lookups never
// above their target, a padding report that matches the bytes.
func FuzzDecodeTimeIndex(f *testing.F) {
	for _, s := range timeDecodeSeeds(f) {
		f.Add(s.data, s.base)
	}
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		fsys := vfs.NewMem()
		writeFile(t, fsys, "d.timeindex", data)
		x, err := timeindex.OpenTimeIndex(fsys, "d.timeindex", base, index.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := len(data) / 12
		if x.Entries() != n {
			t.Fatalf("%d entries for %d bytes", x.Entries(), len(data))
		}
		if err := x.SanityCheck(); err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, timeindex.ErrCorruptIndex) || ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("sanity error %v", err)
			}
		}
		lastNonZero := -1
		for i, c := range data[:n*12] {
			if c != 0 {
				lastNonZero = i
			}
		}
		valid := (lastNonZero + 12) / 12
		if p := x.Padding(); p.Entries != n || p.ValidEntries != valid || p.Untrimmed != (valid < n) {
			t.Fatalf("padding %+v, want %d valid of %d", p, valid, n)
		}
		for i := range n {
			if got, want := x.Entry(i), timeindex.DecodeEntry(data[i*12:], base); got != want {
				t.Fatalf("Entry(%d) = %+v, want %+v", i, got, want)
			}
		}
		for _, ts := range []int64{math.MinInt64, -1, 0, 1 << 40, math.MaxInt64} {
			if e := x.Lookup(ts); e.Timestamp > ts && e != (timeindex.Entry{Timestamp: format.NoTimestamp, Offset: base}) {
				t.Fatalf("Lookup(%d) = %+v", ts, e)
			}
		}
		_ = verify.TimeIndex(x, nil)
		w, err := timeindex.OpenTimeIndex(fsys, "d.timeindex", base, index.OpenOptions{Writable: true, MaxIndexSize: 120})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.DiscardPadding()
		l := w.LastEntry()
		_ = w.MaybeAppend(l.Timestamp+1, l.Offset, true)
		_ = w.TruncateTo(base + 3)
		_ = w.TrimToValidSize()
		_ = w.Close()
	})
}

type decodeSeed struct {
	name string
	data []byte
	base int64
}

func timeDecodeSeeds(tb testing.TB) []decodeSeed {
	e := func(ts, off int64) []byte {
		b, _ := timeindex.AppendEntry(nil, 0, timeindex.Entry{Timestamp: ts, Offset: off})
		return b
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	var warm []byte
	for i := range 800 {
		warm = append(warm, e(int64(1000+7*i), int64(i))...)
	}
	out := []decodeSeed{
		{"empty", nil, 0},
		{"two_bytes", []byte{0, 1}, 0},
		{"eleven_bytes", bytes.Repeat([]byte{1}, 11), 0},
		{"one", e(1728488924323, 56), 0},
		{"zero_entry", make([]byte, 12), 0},
		{"zero_first_then_data", cat(make([]byte, 12), e(10, 3)), 0},
		{"padded", cat(e(100, 1), e(200, 2), make([]byte, 60)), 0},
		{"all_zero_large", make([]byte, 12*300), 5},
		{"decreasing", cat(e(200, 1), e(100, 2)), 0},
		{"dip", cat(e(100, 1), e(50, 2), e(100, 3)), 0},
		{"offsets_decrease", cat(e(100, 5), e(200, 2)), 0},
		{"negative_relative", cat(e(100, 5), e(200, 0)[:8], []byte{0xff, 0xff, 0xff, 0xff}), 10},
		{"partial_tail", cat(e(100, 1), []byte{0, 0, 0, 9}), 0},
		{"negative_timestamps", cat(e(-5, 1), e(-1, 2)), 0},
		{"extreme_timestamps", cat(e(math.MinInt64, 0), e(math.MaxInt64, math.MaxInt32)), 0},
		{"equal_timestamps", cat(e(100, 1), e(100, 2)), 0},
		{"warm_section", warm, 0},
		{"big_base", e(5, 1), math.MaxInt64 - 1},
	}
	if _, err := realdata.Find(); err == nil {
		for _, s := range realSegments(tb) {
			if len(s.time) == 0 {
				continue
			}
			owner, _, _ := strings.Cut(s.rel, "__") // the set: some partitions share names
			name := "real-" + owner + "-" + filepath.Base(filepath.Dir(s.rel)) + "-" + filepath.Base(s.rel)
			out = append(out,
				decodeSeed{name, s.time, s.base},
				decodeSeed{name + "-padded", cat(s.time, make([]byte, 120)), s.base},
				decodeSeed{name + "-torn", s.time[:len(s.time)-5], s.base})
		}
	}
	return out
}

func TestGenerateSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	write := func(target, name string, values ...any) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fuzzseed.Encode(values...)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range timeScenarios() {
		write("FuzzTimeIndexOps", s.name, s.ops, s.size, s.base)
	}
	for _, s := range timeDecodeSeeds(t) {
		write("FuzzDecodeTimeIndex", s.name, s.data, s.base)
	}
}
