package index_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

var generate = flag.Bool("generate", false, "rewrite the committed fuzz seed corpora (testdata/fuzz) from scenarios and ../shared/kafka-real")

// Operations of FuzzOffsetIndexOps: an opcode byte (mod opCount), then the
// argument bytes the operation reads (missing ones read as 0).
const (
	opAppend = iota
	opAppendExact
	opLookup
	opTruncate
	opTrim
	opResize
	opReopen          // trim, flush, close, reopen writable: a roll then a restart
	opReopenUntrimmed // close without trimming, reopen writable: a crash
	opReset
	opCount
)

// opReader reads operation arguments.
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

// offsetModel is the offset index as a plain slice.
type offsetModel struct {
	base    int64
	max     int // maxIndexSize
	es      []index.Entry
	length  int64 // file length
	padding int   // trusted zero entries after es (after an untrimmed reopen)
	// unsorted is set once an append follows kept padding: the zero
	// entries then sit among real ones, as in Kafka, and offsets no longer
	// increase.
	unsorted bool
}

func (m *offsetModel) last() index.Entry {
	if m.padding > 0 {
		return index.Entry{Offset: m.base}
	}
	if len(m.es) == 0 {
		return index.Entry{Offset: m.base}
	}
	return m.es[len(m.es)-1]
}

func (m *offsetModel) entries() int { return len(m.es) + m.padding }

// lookup is the greatest entry at most target, by linear scan.
func (m *offsetModel) lookup(target int64) index.Entry {
	got := index.Entry{Offset: m.base}
	for _, e := range m.es {
		if e.Offset <= target {
			got = e
		}
	}
	return got
}

// append predicts Append's error.
func (m *offsetModel) append(offset int64, pos int32) error {
	if int64(m.entries()) >= m.length/8 {
		return index.ErrIndexFull
	}
	if m.entries() > 0 && offset <= m.last().Offset {
		return index.ErrOffsetOrder
	}
	if m.entries() > 0 && pos < m.last().Position || pos < 0 {
		return index.ErrOffsetOrder
	}
	if !fitsRelative(offset, m.base) {
		return index.ErrOffsetOverflow
	}
	for ; m.padding > 0; m.padding-- {
		m.es = append(m.es, index.Entry{Offset: m.base})
		m.unsorted = true
	}
	m.es = append(m.es, index.Entry{Offset: offset, Position: pos})
	return nil
}

// FuzzOffsetIndexOps runs a random sequence of appends, lookups,
// truncations, trims, resizes, resets and reopens (clean and crashed)
// against a plain-slice model, on vfs.NewMem. After every operation:
// entries equal the model's (so offsets strictly increase), lookups equal
// the model's, the file is exactly as long as the model says (no write
// past the preallocated size), it holds the entries followed by zeros, and
// errors are the ones the model predicts.
func FuzzOffsetIndexOps(f *testing.F) {
	for _, s := range offsetScenarios() {
		f.Add(s.ops, s.size, s.base)
	}
	f.Fuzz(func(t *testing.T, ops []byte, size uint16, base int64) {
		if len(ops) > 1024 {
			return
		}
		maxSize := int(size%2048) + 8
		fsys := vfs.NewMem()
		x, err := index.OpenOffsetIndex(fsys, "f.index", base, index.OpenOptions{Writable: true, MaxIndexSize: maxSize})
		if err != nil {
			t.Fatal(err)
		}
		m := &offsetModel{base: base, max: maxSize, length: int64(maxSize / 8 * 8)}
		r := &opReader{b: ops}
		for step := 0; r.more(); step++ {
			op := r.byte() % opCount
			switch op {
			case opAppend, opAppendExact:
				a, b := r.byte(), r.byte()
				last := m.last()
				offset := last.Offset + int64(a) - 2
				if op == opAppendExact {
					offset = last.Offset + int64(a)<<24 // reaches the relative limit
				}
				pos := last.Position + int32(int8(b))*16
				if m.entries() == 0 && a == 255 {
					offset = base - 1
				}
				want := m.append(offset, pos)
				err := x.Append(offset, pos)
				if !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("step %d: Append(%d, %d) = %v, want %v", step, offset, pos, err, want)
				}
			case opLookup:
				target := m.last().Offset + int64(int8(r.byte()))
				if m.padding == 0 && !m.unsorted {
					if got, want := x.Lookup(target), m.lookup(target); got != want {
						t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, target, got, want)
					}
				}
			case opTruncate:
				target := m.last().Offset - int64(r.byte()) + 3
				if m.padding == 0 {
					if err := x.TruncateTo(target); err != nil {
						t.Fatal(err)
					}
					// The longest prefix of entries below the target stays.
					k := slices.IndexFunc(m.es, func(e index.Entry) bool { return e.Offset >= target })
					if k >= 0 {
						m.es = m.es[:k]
					}
				}
			case opTrim:
				if err := x.TrimToValidSize(); err != nil {
					t.Fatal(err)
				}
				m.length = int64(m.entries() * 8)
			case opResize:
				n := int(r.byte())*8 + int(r.byte()%9) - 4
				changed, err := x.Resize(n)
				rounded := int64(n / 8 * 8)
				switch {
				case n < 0 || rounded < int64(m.entries()*8):
					if !errors.Is(err, index.ErrInvalidSize) && !(rounded == m.length && err == nil) {
						t.Fatalf("step %d: Resize(%d) = %v", step, n, err)
					}
				case err != nil || changed != (rounded != m.length):
					t.Fatalf("step %d: Resize(%d) = %v, %v", step, n, changed, err)
				default:
					m.length = rounded
				}
			case opReopen:
				if err := x.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := x.TrimToValidSize(); err != nil {
					t.Fatal(err)
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				if x, err = index.OpenOffsetIndex(fsys, "f.index", base, index.OpenOptions{Writable: true, MaxIndexSize: maxSize}); err != nil {
					t.Fatal(err)
				}
				// An existing file keeps its length; the engine gives the
				// active segment's index its preallocated size back, never
				// less than its entries take (segment.ResizeIndexes).
				if _, err := x.Resize(max(maxSize, x.Entries()*8)); err != nil {
					t.Fatal(err)
				}
				m.length = max(int64(m.entries()*8), int64(maxSize/8*8))
			case opReopenUntrimmed:
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				if x, err = index.OpenOffsetIndex(fsys, "f.index", base, index.OpenOptions{Writable: true, MaxIndexSize: maxSize}); err != nil {
					t.Fatal(err)
				}
				// An existing file keeps its length; the engine gives the
				// active segment's index its preallocated size back, never
				// less than its entries take (segment.ResizeIndexes).
				if _, err := x.Resize(max(maxSize, x.Entries()*8)); err != nil {
					t.Fatal(err)
				}
				// Kafka trusts every slot the file had when it was opened
				// (the free ones are zero); room added by the preallocation
				// afterwards is free.
				m.padding = int(m.length/8) - len(m.es)
				m.length = max(m.length, int64(maxSize/8*8))
				p := x.Padding()
				wantValid := len(m.es)
				for wantValid > 0 && m.es[wantValid-1] == (index.Entry{Offset: base}) {
					wantValid-- // an all-zero entry at the end reads as padding
				}
				if p.Entries != m.entries() || p.ValidEntries != wantValid || p.Untrimmed != (wantValid < m.entries()) {
					t.Fatalf("step %d: Padding %+v, model %d entries + %d zero", step, p, len(m.es), m.padding)
				}
				if r.byte()%4 != 0 { // usually, drop the padding as the engine would
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
				m.length = int64(maxSize / 8 * 8)
			}
			checkOffsetModel(t, step, fsys, x, m)
		}
		x.Close()
	})
}

func checkOffsetModel(t *testing.T, step int, fsys vfs.FS, x *index.OffsetIndex, m *offsetModel) {
	t.Helper()
	if x.Entries() != m.entries() || x.Length() != m.length || index.MaxEntries(x) != int(m.length/8) {
		t.Fatalf("step %d: %d entries, length %d; model %d, %d", step, x.Entries(), x.Length(), m.entries(), m.length)
	}
	got := x.AppendAll(nil)
	if !slices.Equal(got[:len(m.es)], m.es) {
		t.Fatalf("step %d: entries %v, model %v", step, got, m.es)
	}
	for i := 1; i < len(m.es) && !m.unsorted; i++ {
		if got[i].Offset <= got[i-1].Offset {
			t.Fatalf("step %d: offsets do not increase: %v", step, got)
		}
	}
	// Entries are written behind (at a flush, trim, resize, truncation or
	// close): the file is compared as a flush leaves it.
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	file, err := vfs.ReadFile(fsys, "f.index")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(file)) != m.length {
		t.Fatalf("step %d: file is %d bytes, model %d", step, len(file), m.length)
	}
	var want []byte
	for _, e := range m.es {
		want, _ = index.AppendEntry(want, m.base, e)
	}
	if !bytes.Equal(file[:len(want)], want) || bytes.ContainsFunc(file[len(want):], func(r rune) bool { return r != 0 }) {
		t.Fatalf("step %d: file %x, want %x then zeros", step, file, want)
	}
	if m.padding > 0 || m.unsorted {
		// Kafka's search over zero entries: any entry at most the target.
		for _, target := range []int64{m.base, m.last().Offset, math.MaxInt64} {
			if e := x.Lookup(target); e.Offset > target {
				t.Fatalf("step %d: Lookup(%d) = %+v", step, target, e)
			}
		}
	} else {
		for _, target := range []int64{math.MinInt64, m.base - 1, m.base, m.last().Offset, m.last().Offset + 1, math.MaxInt64} {
			if got, want := x.Lookup(target), m.lookup(target); got != want {
				t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, target, got, want)
			}
		}
		for i := 0; i < len(m.es); i += 1 + len(m.es)/16 { // a sample keeps a step O(entries)
			e := m.es[i]
			for _, target := range []int64{e.Offset - 1, e.Offset, e.Offset + 1} {
				if got, want := x.Lookup(target), m.lookup(target); got != want {
					t.Fatalf("step %d: Lookup(%d) = %+v, want %+v", step, target, got, want)
				}
			}
		}
	}
	if x.IsFull() != (int64(m.entries()) >= m.length/8) {
		t.Fatalf("step %d: IsFull %v", step, x.IsFull())
	}
}

// seedOps builds an op sequence.
type seedOps []byte

func (s seedOps) add(op byte, args ...byte) seedOps { return append(append(s, op), args...) }

type opsSeed struct {
	name string
	ops  []byte
	size uint16
	base int64
}

// offsetScenarios are the committed seeds of FuzzOffsetIndexOps, each a
// situation worth keeping in the corpus.
func offsetScenarios() []opsSeed {
	var out []opsSeed
	add := func(name string, size uint16, base int64, s seedOps) {
		out = append(out, opsSeed{name, s, size, base})
	}
	appends := func(s seedOps, n int) seedOps {
		for range n {
			s = s.add(opAppend, 12, 20)
		}
		return s
	}
	add("empty", 80, 0, nil)
	add("one_append", 80, 0, seedOps{}.add(opAppend, 12, 20))
	add("fill_to_full", 32, 0, appends(nil, 6))
	add("fill_then_lookup", 64, 100, appends(nil, 8).add(opLookup, 0).add(opLookup, 0xfe).add(opLookup, 5))
	add("order_violations", 80, 0, seedOps{}.add(opAppend, 12, 20).add(opAppend, 2, 20).add(opAppend, 0, 20).add(opAppend, 12, 0xf0))
	add("equal_position", 80, 0, seedOps{}.add(opAppend, 12, 20).add(opAppend, 12, 0))
	add("below_base", 80, 50, seedOps{}.add(opAppend, 255, 1))
	add("relative_limit", 80, 0, seedOps{}.add(opAppendExact, 127, 1).add(opAppendExact, 1, 1).add(opAppendExact, 0x80, 1))
	add("negative_base", 80, -5, appends(nil, 3))
	add("huge_base", 80, math.MaxInt64-1000, appends(nil, 3).add(opAppendExact, 1, 1))
	add("truncate_middle", 96, 0, appends(nil, 6).add(opTruncate, 30).add(opAppend, 12, 20))
	add("truncate_all", 96, 0, appends(nil, 6).add(opTruncate, 200))
	add("truncate_exact", 96, 0, appends(nil, 4).add(opTruncate, 3))
	add("truncate_above", 96, 0, appends(nil, 4).add(opTruncate, 0))
	add("trim_then_full", 96, 0, appends(nil, 3).add(opTrim).add(opAppend, 12, 20))
	add("resize_grow", 32, 0, appends(nil, 4).add(opResize, 20, 3).add(opAppend, 12, 20))
	add("resize_shrink_refused", 96, 0, appends(nil, 5).add(opResize, 2, 0))
	add("resize_negative", 96, 0, seedOps{}.add(opResize, 0, 0))
	add("resize_same", 96, 0, seedOps{}.add(opResize, 12, 4))
	add("reopen_clean", 96, 7, appends(nil, 4).add(opReopen).add(opAppend, 12, 20))
	add("reopen_empty", 96, 7, seedOps{}.add(opReopen).add(opAppend, 12, 20))
	add("reopen_untrimmed_keep", 96, 7, appends(nil, 4).add(opReopenUntrimmed, 0).add(opAppend, 12, 20))
	add("reopen_untrimmed_discard", 96, 7, appends(nil, 4).add(opReopenUntrimmed, 1).add(opAppend, 12, 20).add(opLookup, 3))
	add("reopen_untrimmed_full", 40, 0, appends(nil, 5).add(opReopenUntrimmed, 1))
	add("crash_after_truncate", 96, 0, appends(nil, 6).add(opTruncate, 20).add(opReopenUntrimmed, 2))
	add("zero_first_entry", 96, 0, seedOps{}.add(opAppend, 2, 0).add(opReopenUntrimmed, 0).add(opReopenUntrimmed, 1))
	add("reset", 96, 0, appends(nil, 5).add(opReset).add(opAppend, 12, 20))
	add("reset_after_trim", 96, 0, appends(nil, 5).add(opTrim).add(opReset))
	add("min_size", 0, 0, appends(nil, 3))
	add("odd_size", 13, 0, appends(nil, 3))
	add("mixed", 200, 1000, appends(nil, 10).add(opTruncate, 20).add(opTrim).add(opReopen).add(opAppend, 5, 3).add(opReopenUntrimmed, 3).add(opResize, 40, 1).add(opLookup, 0x80))
	add("warm_section", 2047, 0, appends(nil, 200).add(opLookup, 0x81).add(opTruncate, 100))
	return out
}

// FuzzDecodeOffsetIndex opens arbitrary bytes as an .index, read-only and
// writable: no panic, typed errors, Kafka's entry count, lookups never
// above their target, a padding report that matches the bytes, and a
// verification against an empty log that reports but does not fail.
func FuzzDecodeOffsetIndex(f *testing.F) {
	for _, s := range decodeSeeds(f) {
		f.Add(s.data, s.base)
	}
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		fsys := vfs.NewMem()
		writeFile(t, fsys, "d.index", data)
		x, err := index.OpenOffsetIndex(fsys, "d.index", base, index.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if x.Entries() != len(data)/8 {
			t.Fatalf("%d entries for %d bytes", x.Entries(), len(data))
		}
		if err := x.SanityCheck(); err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, index.ErrCorruptIndex) || ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("sanity error %v", err)
			}
		}
		// The padding report, recomputed from the bytes.
		n := len(data) / 8
		lastNonZero := -1
		for i, c := range data[:n*8] {
			if c != 0 {
				lastNonZero = i
			}
		}
		valid := (lastNonZero + 8) / 8
		zero := int64(n-valid) * 8
		if tail := data[n*8:]; len(tail) > 0 && !slices.ContainsFunc(tail, func(c byte) bool { return c != 0 }) {
			zero += int64(len(tail))
		}
		want := index.Padding{Entries: n, ValidEntries: valid, ZeroBytes: zero, Untrimmed: valid < n}
		if p := x.Padding(); p != want {
			t.Fatalf("padding %+v, want %+v", p, want)
		}
		for i := 0; i < x.Entries(); i++ {
			if got, want := x.Entry(i), index.DecodeEntry(data[i*8:], base); got != want {
				t.Fatalf("Entry(%d) = %+v, want %+v", i, got, want)
			}
		}
		for _, target := range []int64{math.MinInt64, base, base + 1, base + 1<<20, math.MaxInt64} {
			e := x.Lookup(target)
			if e.Offset > target && e != (index.Entry{Offset: base}) {
				t.Fatalf("Lookup(%d) = %+v", target, e)
			}
		}
		_ = verify.OffsetIndex(x, nil)
		_, _ = index.FetchUpperBoundOffset(x, 0, 100)
		// Writable: the engine's moves on a damaged file must not panic.
		w, err := index.OpenOffsetIndex(fsys, "d.index", base, index.OpenOptions{Writable: true, MaxIndexSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.DiscardPadding()
		_ = w.Append(index.LastOffset(w)+1, w.LastEntry().Position)
		_ = w.TruncateTo(base + 5)
		_ = w.TrimToValidSize()
		_ = w.Close()
	})
}

type decodeSeed struct {
	name string
	data []byte
	base int64
}

// decodeSeeds are edge cases plus the small real .index files.
func decodeSeeds(tb testing.TB) []decodeSeed {
	e := func(off int64, pos int32) []byte {
		b, _ := index.AppendEntry(nil, 0, index.Entry{Offset: off, Position: pos})
		return b
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	out := []decodeSeed{
		{"empty", nil, 0},
		{"two_bytes", []byte{0, 1}, 0},
		{"seven_bytes", []byte{1, 2, 3, 4, 5, 6, 7}, 0},
		{"one_entry", e(56, 4177), 0},
		{"zero_entry", make([]byte, 8), 0},
		{"partial_tail", cat(e(5, 5000), []byte{0, 0, 1}), 0},
		{"padded", cat(e(5, 5000), e(9, 9000), make([]byte, 64)), 0},
		{"all_zero_large", make([]byte, 8*300), 7},
		{"negative_relative", cat(e(5, 5000), []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0x30, 0}), 100},
		{"decreasing", cat(e(9, 9000), e(5, 5000)), 0},
		{"equal_offsets", cat(e(5, 5000), e(5, 6000)), 0},
		{"positions_decrease", cat(e(5, 9000), e(9, 5000)), 0},
		{"negative_position", e(5, -1), 0},
		{"max_relative", e(math.MaxInt32, math.MaxInt32), 1 << 40},
		{"hole", cat(e(5, 5000), make([]byte, 16), e(20, 20000)), 0},
		{"big_base", e(3, 4100), math.MaxInt64 - 1},
		{"negative_base", e(3, 4100), -1000},
	}
	var warm []byte
	for i := range 1100 {
		warm = append(warm, e(int64(3*i+1), int32(4100*i))...)
	}
	out = append(out, decodeSeed{"warm_section", warm, 0})
	if _, err := realdata.Find(); err == nil {
		// Each real index as the broker wrote it, and as a crash or a bad
		// disk would leave it: zero-padded, torn, with a last entry below
		// the base offset.
		for _, s := range realSegments(tb) {
			if len(s.index) == 0 {
				continue
			}
			owner, _, _ := strings.Cut(s.rel, "__") // the set: some partitions share names
			name := "real-" + owner + "-" + filepath.Base(filepath.Dir(s.rel)) + "-" + filepath.Base(s.rel)
			bad := bytes.Clone(s.index)
			format.PutInt32(bad[len(bad)-8:], -1)
			out = append(out,
				decodeSeed{name, s.index, s.base},
				decodeSeed{name + "-padded", cat(s.index, make([]byte, 80)), s.base},
				decodeSeed{name + "-torn", s.index[:len(s.index)-3], s.base},
				decodeSeed{name + "-below-base", bad, s.base})
		}
	}
	return out
}

// FuzzDecodeTxnIndex opens arbitrary bytes as a .txnindex: no panic; a
// refusal only for an unsupported version; otherwise Kafka's sanity check
// typed, All consistent with the bytes, and Collect bounded.
func FuzzDecodeTxnIndex(f *testing.F) {
	for _, s := range txnDecodeSeeds() {
		f.Add(s.data, s.base)
	}
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		fsys := vfs.NewMem()
		writeFile(t, fsys, "d.txnindex", data)
		x, err := index.OpenTransactionIndex(fsys, "d.txnindex", base, index.OpenOptions{})
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, index.ErrUnsupportedVersion) || ce.Offset%index.AbortedTxnSize != 0 {
				t.Fatalf("open: %v", err)
			}
			return
		}
		all := x.All()
		if len(all) != len(data)/index.AbortedTxnSize || x.TrailingBytes() != len(data)%index.AbortedTxnSize {
			t.Fatalf("%d entries, %d trailing for %d bytes", len(all), x.TrailingBytes(), len(data))
		}
		for i, txn := range all {
			if !bytes.Equal(index.AppendAbortedTxn(nil, txn), data[i*34:i*34+34]) {
				t.Fatalf("entry %d does not re-encode", i)
			}
		}
		if err := x.SanityCheck(); err != nil && !errors.Is(err, index.ErrCorruptIndex) {
			t.Fatalf("sanity: %v", err)
		}
		got := x.Overlapping(base, base+100)
		if len(got) > len(all) {
			t.Fatal("Overlapping returned more than All")
		}
		_ = verify.TxnIndex(x, nil)
	})
}

func txnDecodeSeeds() []decodeSeed {
	tx := func(v int16, pid, first, last, lso int64) []byte {
		return index.AppendAbortedTxn(nil, index.AbortedTxn{Version: v, ProducerID: pid, FirstOffset: first, LastOffset: last, LastStableOffset: lso})
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	var many []byte
	for i := range 40 {
		many = append(many, tx(0, int64(i), int64(10*i), int64(10*i+5), int64(10*i))...)
	}
	return []decodeSeed{
		{"empty", nil, 0},
		{"one", tx(0, 1000, 5, 9, 5), 0},
		{"two", cat(tx(0, 1, 0, 10, 11), tx(0, 2, 5, 15, 16)), 0},
		{"partial", cat(tx(0, 1, 0, 10, 11), []byte{0, 0, 1}), 0},
		{"short", []byte{0, 0, 0, 0, 0, 0, 0, 1}, 0},
		{"version_1", tx(1, 1, 0, 10, 11), 0},
		{"version_second_byte", cat(tx(0, 1, 0, 10, 11), []byte{0, 1}, tx(0, 2, 5, 15, 16)[2:]), 0},
		{"negative_version", tx(-1, 1, 0, 10, 11), 0},
		{"before_base", tx(0, 1, 0, 10, 11), 50},
		{"unordered", cat(tx(0, 2, 5, 15, 16), tx(0, 1, 0, 10, 11)), 0},
		{"first_after_last", tx(0, 1, 20, 10, 11), 0},
		{"many", many, 0},
		{"extremes", tx(0, math.MaxInt64, math.MinInt64, math.MaxInt64, math.MinInt64), math.MinInt64},
		{"zero_entry", make([]byte, 34), 0},
		{"zero_entries", make([]byte, 68), 1},
		{"torn_1", cat(tx(0, 1, 0, 10, 11), []byte{0}), 0},
		{"torn_17", cat(tx(0, 1, 0, 10, 11), tx(0, 2, 5, 15, 16)[:17]), 0},
		{"torn_33", cat(tx(0, 1, 0, 10, 11), tx(0, 2, 5, 15, 16)[:33]), 0},
		{"version_in_tail", cat(tx(0, 1, 0, 10, 11), []byte{0, 5}), 0},
		{"bad_version_later", cat(many[:34*5], tx(2, 9, 0, 1000, 1000)), 0},
		{"lso_stops_early", cat(tx(0, 1, 0, 10, 200), tx(0, 2, 5, 15, 16)), 0},
		{"interleaved", cat(tx(0, 1, 0, 20, 0), tx(0, 2, 5, 21, 0), tx(0, 3, 1, 22, 0)), 0},
		{"high_base", tx(0, 1, 1<<40, 1<<40+5, 1<<40), 1 << 40},
		{"negative_offsets", tx(0, -1, -10, -5, -10), -20},
		{"same_last_offsets", cat(tx(0, 1, 0, 10, 11), tx(0, 2, 0, 10, 11)), 0},
		{"control_marker_txn", tx(0, 1000, 3, 7, 3), 3},
		{"max_producer", tx(0, math.MaxInt64, 0, 1, 1), 0},
		{"min_values", tx(math.MinInt16, math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64), 0},
		{"ones", bytes.Repeat([]byte{0xff}, 34*2), 0},
		{"ascii", []byte("this is not a transaction index file at all, honestly"), 0},
	}
}

// FuzzTxnIndexOps runs appends, truncations, resets, reopens and searches
// of a transaction index against a slice model.
func FuzzTxnIndexOps(f *testing.F) {
	for _, s := range txnScenarios() {
		f.Add(s.ops, s.base)
	}
	f.Fuzz(func(t *testing.T, ops []byte, base int64) {
		if len(ops) > 1024 {
			return
		}
		fsys := vfs.NewMem()
		x, err := index.OpenTransactionIndex(fsys, "t.txnindex", base, index.OpenOptions{Writable: true})
		if err != nil {
			t.Fatal(err)
		}
		var model []index.AbortedTxn
		last := func() int64 {
			if len(model) == 0 {
				return base
			}
			return model[len(model)-1].LastOffset
		}
		r := &opReader{b: ops}
		for step := 0; r.more(); step++ {
			switch r.byte() % 5 {
			case 0: // append
				a, b, c := r.byte(), r.byte(), r.byte()
				txn := index.AbortedTxn{ProducerID: int64(c), LastOffset: last() + int64(a) - 3}
				txn.FirstOffset = txn.LastOffset - int64(b)
				txn.LastStableOffset = txn.FirstOffset + int64(c%8)
				var want error
				switch {
				case len(model) > 0 && txn.LastOffset <= last():
					want = index.ErrOffsetOrder
				case txn.LastOffset < base:
					want = index.ErrOffsetOverflow
				}
				err := x.Append(txn)
				if !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("step %d: Append(%v) = %v, want %v", step, txn, err, want)
				}
				if err == nil {
					model = append(model, txn)
				}
			case 1: // truncate
				target := last() - int64(r.byte()) + 2
				if err := x.TruncateTo(target); err != nil {
					t.Fatal(err)
				}
				k := sort.Search(len(model), func(i int) bool { return model[i].LastOffset >= target })
				model = model[:k]
			case 2: // reset
				if err := x.Reset(); err != nil {
					t.Fatal(err)
				}
				model = model[:0]
			case 3: // reopen
				if err := x.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
				if x, err = index.OpenTransactionIndex(fsys, "t.txnindex", base, index.OpenOptions{Writable: true}); err != nil {
					t.Fatal(err)
				}
			case 4: // search
				from := base + int64(r.byte())
				upto := from + int64(r.byte())
				got, complete := index.CollectAbortedTxns(x, nil, from, upto)
				var want []index.AbortedTxn
				wantComplete := false
				for _, txn := range model {
					if txn.LastOffset >= from && txn.FirstOffset < upto {
						want = append(want, txn)
					}
					if txn.LastStableOffset >= upto {
						wantComplete = true
						break
					}
				}
				if !slices.Equal(got, want) || complete != wantComplete {
					t.Fatalf("step %d: Collect(%d, %d) = %v %v, want %v %v", step, from, upto, got, complete, want, wantComplete)
				}
			}
			if got := x.All(); !slices.Equal(got, model) {
				t.Fatalf("step %d: All = %v, model %v", step, got, model)
			}
			if index.Exists(x) {
				var want []byte
				for _, txn := range model {
					want = index.AppendAbortedTxn(want, txn)
				}
				if file, _ := vfs.ReadFile(fsys, "t.txnindex"); !bytes.Equal(file, want) {
					t.Fatalf("step %d: file %x, want %x", step, file, want)
				}
			}
			if err := x.SanityCheck(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
	})
}

func txnScenarios() []struct {
	ops  []byte
	base int64
} {
	type s = struct {
		ops  []byte
		base int64
	}
	app := func(ops seedOps, n int) seedOps {
		for i := range n {
			ops = ops.add(0, 10, byte(3+i), byte(i))
		}
		return ops
	}
	return []s{
		{nil, 0},
		{app(nil, 1), 0},
		{app(nil, 5), 100},
		{seedOps{}.add(0, 0, 1, 1), 100},                             // below the base
		{app(nil, 2).add(0, 2, 1, 1), 0},                             // same last offset
		{app(nil, 2).add(0, 0, 1, 1), 0},                             // lower last offset
		{app(nil, 6).add(1, 20).add(0, 10, 1, 1), 0},                 // truncate, append
		{app(nil, 6).add(1, 255), 0},                                 // truncate everything
		{app(nil, 6).add(1, 0), 0},                                   // truncate nothing
		{app(nil, 4).add(2).add(0, 10, 1, 1), 0},                     // reset
		{app(nil, 4).add(3).add(0, 10, 1, 1), 0},                     // reopen
		{seedOps{}.add(3).add(0, 10, 1, 1), 0},                       // reopen before the file exists
		{app(nil, 8).add(4, 0, 255).add(4, 20, 5).add(4, 200, 1), 0}, // searches
		{app(nil, 3).add(4, 7, 0), 50},
		{app(nil, 30).add(1, 40).add(3).add(4, 10, 100), -20},
		{app(nil, 3), math.MaxInt64 - 1000},
		{app(nil, 3), math.MinInt64},
		{app(nil, 10).add(2).add(2).add(3).add(1, 0), 0},
		{app(nil, 2).add(4, 0, 0), 0},
		{app(nil, 5).add(1, 3).add(1, 3).add(1, 3), 0},
		{app(nil, 5).add(4, 0, 1).add(4, 0, 2).add(4, 0, 3), 0},
		{seedOps{}.add(2).add(1, 0).add(4, 0, 0), 0},
		{app(nil, 12).add(3).add(3).add(0, 4, 2, 9), 7},
		{app(nil, 1).add(0, 3, 0, 0), 0},   // equal last offset (a = 3)
		{app(nil, 1).add(0, 4, 255, 0), 0}, // first offset far below
		{app(nil, 1).add(0, 255, 0, 7), 0},
		{app(nil, 20), 1 << 40},
		{app(nil, 4).add(1, 12).add(4, 0, 30), 0},
		{app(nil, 4).add(2).add(4, 0, 30), 0},
		{app(nil, 4).add(3).add(4, 0, 30), 0},
	}
}

// TestGenerateSeeds writes the committed corpora from the scenarios above
// and the real files; run with -generate.
func TestGenerateSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz")
	}
	write := func(target, name string, values ...any) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := writeSeed(dir, name, values...); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range offsetScenarios() {
		write("FuzzOffsetIndexOps", s.name, s.ops, s.size, s.base)
	}
	for _, s := range decodeSeeds(t) {
		write("FuzzDecodeOffsetIndex", s.name, s.data, s.base)
	}
	for _, s := range txnDecodeSeeds() {
		write("FuzzDecodeTxnIndex", s.name, s.data, s.base)
	}
	for i, s := range txnScenarios() {
		write("FuzzTxnIndexOps", fmt.Sprintf("scenario-%02d", i), s.ops, s.base)
	}
}

// writeSeed writes one corpus file, replacing the directory's file of the
// same name.
func writeSeed(dir, name string, values ...any) error {
	if err := mkdir(dir); err != nil {
		return err
	}
	return writeText(filepath.Join(dir, name), fuzzseed.Encode(values...))
}

// FuzzDecodeTransactionIndex: a remote segment's .txnindex bytes either
// decode to entries that encode back to the same bytes, or fail with a
// CorruptionError naming the file; never a panic.
func FuzzDecodeTransactionIndex(f *testing.F) {
	one := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 7, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5})
	f.Add([]byte{})
	f.Add(one)
	f.Add(append(one, one[:10]...))
	bad := slices.Clone(one)
	bad[1] = 1 // version 1
	f.Add(bad)
	f.Fuzz(func(t *testing.T, b []byte) {
		txns, err := index.DecodeTransactionIndex(b, "x.txnindex")
		if err != nil {
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || ce.Path != "x.txnindex" || ce.Offset < 0 || ce.Offset > int64(len(b)) {
				t.Fatalf("error %v is not a CorruptionError in the file", err)
			}
			return
		}
		var again []byte
		for _, x := range txns {
			again = index.AppendAbortedTxn(again, x)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("%d entries re-encode to %x, not %x", len(txns), again, b)
		}
	})
}
