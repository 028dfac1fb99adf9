package timeindex_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func openTime(tb testing.TB, fsys vfs.FS, path string, base int64, max int, writable bool) *timeindex.TimeIndex {
	tb.Helper()
	x, err := timeindex.OpenTimeIndex(fsys, path, base, index.OpenOptions{MaxIndexSize: max, Writable: writable})
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

func encode(tb testing.TB, base int64, es ...timeindex.Entry) []byte {
	tb.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = timeindex.AppendEntry(b, base, e); err != nil {
			tb.Fatal(err)
		}
	}
	return b
}

func writeFile(tb testing.TB, fsys vfs.FS, path string, b []byte) {
	tb.Helper()
	if err := vfs.WriteFile(fsys, path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// fitsRelative reports whether offset can be stored relative to base: it
// is in [base, base+MaxInt32]. The unsigned difference is exact once
// offset >= base, where the signed one can overflow.
func fitsRelative(offset, base int64) bool {
	return offset >= base && uint64(offset)-uint64(base) <= math.MaxInt32
}

func readAll(tb testing.TB, fsys vfs.FS, path string) []byte {
	tb.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestEntryGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		base int64
		e    timeindex.Entry
		hex  string
	}{
		{"zero", 0, timeindex.Entry{}, "0000000000000000 00000000"},
		// The first 12 bytes of fuzibotond's __cluster_metadata-0 time index.
		{"real_first", 0, timeindex.Entry{Timestamp: 1728488924323, Offset: 56}, "0000019271f7e4a3 00000038"},
		// The whole of dipendrasaini's invoice-0/00000000000000030626.timeindex.
		{"relative", 30626, timeindex.Entry{Timestamp: 1718446827577, Offset: 60610}, "000001901b69a839 00007520"},
		{"negative_ts", 5, timeindex.Entry{Timestamp: -1, Offset: 5}, "ffffffffffffffff 00000000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := mustHex(t, tt.hex)
			got, err := timeindex.AppendEntry([]byte{0xEE}, tt.base, tt.e)
			if err != nil || !bytes.Equal(got[1:], want) || got[0] != 0xEE {
				t.Fatalf("AppendEntry = %x, %v; want ee%x", got, err, want)
			}
			if back := timeindex.DecodeEntry(want, tt.base); back != tt.e {
				t.Fatalf("DecodeEntry = %+v", back)
			}
		})
	}
	if _, err := timeindex.AppendEntry(nil, 10, timeindex.Entry{Offset: 9}); !errors.Is(err, timeindex.ErrOffsetOverflow) {
		t.Fatalf("below base: %v", err)
	}
	if _, err := timeindex.AppendEntry(nil, 0, timeindex.Entry{Offset: math.MaxInt32 + 1}); !errors.Is(err, timeindex.ErrOffsetOverflow) {
		t.Fatalf("above max: %v", err)
	}
}

func TestPreallocation(t *testing.T) {
	fsys := vfs.NewMem()
	x := openTime(t, fsys, "x.timeindex", 0, segment.DefaultMaxIndexSize, true)
	defer x.Close()
	st, err := fsys.Stat("x.timeindex")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 10485756 || x.MaxEntries() != 873813 || x.Length() != 10485756 {
		t.Fatalf("size %d max entries %d", st.Size(), x.MaxEntries())
	}
	if _, err := timeindex.OpenTimeIndex(fsys, "y.timeindex", 0, index.OpenOptions{Writable: true, MaxIndexSize: 11}); !errors.Is(err, timeindex.ErrInvalidSize) {
		t.Fatalf("max 11: %v", err)
	}
	if _, err := timeindex.OpenTimeIndex(fsys, "missing.timeindex", 0, index.OpenOptions{}); err == nil {
		t.Fatal("read-only open of a missing file")
	}
}

func TestMaybeAppend(t *testing.T) {
	const base = 100
	fsys := vfs.NewMem()
	x := openTime(t, fsys, "x.timeindex", base, 4*12, true) // room for 4; full at 3
	if got := x.LastEntry(); got != (timeindex.Entry{Timestamp: -1, Offset: base}) {
		t.Fatalf("empty LastEntry = %+v", got)
	}
	steps := []struct {
		name     string
		ts, off  int64
		skip     bool
		err      error
		appended bool
	}{
		// Empty: only a timestamp above -1 is appended; offsets are not
		// compared, but must fit relative to the base.
		{"no_timestamp", -1, 50, false, nil, false},
		{"below_base", 10, 99, false, timeindex.ErrOffsetOverflow, false},
		{"first", 1000, 105, false, nil, true},
		{"same_ts", 1000, 106, false, nil, false},
		{"lower_offset", 2000, 104, false, timeindex.ErrOffsetOrder, false},
		{"lower_ts", 999, 110, false, timeindex.ErrTimestampOrder, false},
		// Kafka checks the offset before the timestamp.
		{"both_lower", 999, 104, false, timeindex.ErrOffsetOrder, false},
		{"same_offset_higher_ts", 1500, 105, false, nil, true},
		{"second", 2000, 110, false, nil, true},
		{"full", 3000, 120, false, timeindex.ErrIndexFull, false},
		{"full_noop_still_full", 10, 120, false, timeindex.ErrIndexFull, false},
		{"roll_entry", 3000, 120, true, nil, true},
		{"beyond_file", 4000, 130, true, timeindex.ErrIndexFull, false},
		{"roll_again_noop", 4000, 130, false, timeindex.ErrIndexFull, false},
	}
	var want []timeindex.Entry
	for _, s := range steps {
		mustFlush(t, x) // entries are written behind
		before := readAll(t, fsys, "x.timeindex")
		err := x.MaybeAppend(s.ts, s.off, s.skip)
		if !errors.Is(err, s.err) || (s.err == nil) != (err == nil) {
			t.Fatalf("%s: MaybeAppend(%d, %d, %v) = %v, want %v", s.name, s.ts, s.off, s.skip, err, s.err)
		}
		if s.appended {
			want = append(want, timeindex.Entry{Timestamp: s.ts, Offset: s.off})
			mustFlush(t, x) // entries are written behind
		} else if !bytes.Equal(before, readAll(t, fsys, "x.timeindex")) {
			t.Fatalf("%s: the file changed", s.name)
		}
		if got := x.AppendAll(nil); !slices.Equal(got, want) {
			t.Fatalf("%s: entries %v, want %v", s.name, got, want)
		}
	}
	mustFlush(t, x) // entries are written behind
	if got := readAll(t, fsys, "x.timeindex"); !bytes.Equal(got, encode(t, base, want...)) {
		t.Fatalf("file %x", got)
	}
	if !x.IsFull() || x.Entries() != 4 || x.LastEntry() != want[3] || x.SizeInBytes() != 48 {
		t.Fatalf("full %v entries %d", x.IsFull(), x.Entries())
	}
}

// TestIsFullKeepsLastSlot: a 2-slot index is full after one entry.
func TestIsFullKeepsLastSlot(t *testing.T) {
	x := openTime(t, vfs.NewMem(), "x.timeindex", 0, 24, true)
	if x.IsFull() {
		t.Fatal("empty 2-slot index full")
	}
	if err := x.MaybeAppend(5, 1, false); err != nil {
		t.Fatal(err)
	}
	if !x.IsFull() {
		t.Fatal("IsFull does not keep the last slot")
	}
	one := openTime(t, vfs.NewMem(), "y.timeindex", 0, 12, true)
	if !one.IsFull() {
		t.Fatal("a 1-slot index is always full for ordinary appends")
	}
}

func TestLookup(t *testing.T) {
	const base = 10
	x := openTime(t, vfs.NewMem(), "x.timeindex", base, 1<<16, true)
	if got := x.Lookup(5); got != (timeindex.Entry{Timestamp: -1, Offset: base}) {
		t.Fatalf("empty Lookup = %+v", got)
	}
	es := []timeindex.Entry{{100, 12}, {200, 20}, {350, 20}, {400, 41}}
	for _, e := range es {
		if err := x.MaybeAppend(e.Timestamp, e.Offset, false); err != nil {
			t.Fatal(err)
		}
	}
	none := timeindex.Entry{Timestamp: -1, Offset: base}
	for _, tt := range []struct {
		ts   int64
		want timeindex.Entry
	}{
		{math.MinInt64, none}, {-1, none}, {99, none}, {100, es[0]}, {199, es[0]}, {200, es[1]},
		{349, es[1]}, {350, es[2]}, {399, es[2]}, {400, es[3]}, {math.MaxInt64, es[3]},
	} {
		if got := x.Lookup(tt.ts); got != tt.want {
			t.Errorf("Lookup(%d) = %+v, want %+v", tt.ts, got, tt.want)
		}
	}
	// Across the warm section (682 entries).
	y := openTime(t, vfs.NewMem(), "y.timeindex", 0, 3000*12, true)
	for i := range 2000 {
		if err := y.MaybeAppend(int64(1000+10*i), int64(i), false); err != nil {
			t.Fatal(err)
		}
	}
	for ts := int64(990); ts < 1000+10*2000+20; ts += 3 {
		want := timeindex.Entry{Timestamp: -1}
		if ts >= 1000 {
			i := min((ts-1000)/10, 1999)
			want = timeindex.Entry{Timestamp: 1000 + 10*i, Offset: i}
		}
		if got := y.Lookup(ts); got != want {
			t.Fatalf("Lookup(%d) = %+v, want %+v", ts, got, want)
		}
	}
}

func TestTruncateTo(t *testing.T) {
	// Offsets may repeat (an entry for a larger timestamp at the same
	// offset); truncation removes every entry at or above the offset.
	es := []timeindex.Entry{{100, 12}, {200, 20}, {350, 20}, {400, 41}}
	for _, tt := range []struct {
		offset int64
		keep   int
	}{{0, 0}, {12, 0}, {13, 1}, {20, 1}, {21, 3}, {41, 3}, {42, 4}} {
		t.Run(fmt.Sprint(tt.offset), func(t *testing.T) {
			fsys := vfs.NewMem()
			x := openTime(t, fsys, "x.timeindex", 10, 120, true)
			for _, e := range es {
				if err := x.MaybeAppend(e.Timestamp, e.Offset, false); err != nil {
					t.Fatal(err)
				}
			}
			if err := x.TruncateTo(tt.offset); err != nil {
				t.Fatal(err)
			}
			if got := x.AppendAll(nil); !slices.Equal(got, es[:tt.keep]) {
				t.Fatalf("entries %v", got)
			}
			want := append(encode(t, 10, es[:tt.keep]...), make([]byte, 120-12*tt.keep)...)
			mustFlush(t, x) // entries are written behind
			if got := readAll(t, fsys, "x.timeindex"); !bytes.Equal(got, want) {
				t.Fatalf("file %x", got)
			}
			last := x.LastEntry()
			if err := x.MaybeAppend(last.Timestamp+1, max(last.Offset, 50), false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestResizeTrimReset(t *testing.T) {
	fsys := vfs.NewMem()
	x := openTime(t, fsys, "x.timeindex", 0, 120, true)
	for i := range 3 {
		if err := x.MaybeAppend(int64(100*(i+1)), int64(i), false); err != nil {
			t.Fatal(err)
		}
	}
	if changed, err := x.Resize(50); !changed || err != nil || x.Length() != 48 {
		t.Fatalf("Resize(50) = %v, %v, length %d", changed, err, x.Length())
	}
	if _, err := x.Resize(35); !errors.Is(err, timeindex.ErrInvalidSize) {
		t.Fatalf("Resize below entries: %v", err)
	}
	mustFlush(t, x) // entries are written behind
	if err := x.TrimToValidSize(); err != nil || len(readAll(t, fsys, "x.timeindex")) != 36 {
		t.Fatalf("TrimToValidSize: %v", err)
	}
	if err := x.Reset(); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, x) // entries are written behind
	if x.Entries() != 0 || x.Length() != 120 || !bytes.Equal(readAll(t, fsys, "x.timeindex"), make([]byte, 120)) {
		t.Fatalf("after Reset: %d entries, length %d", x.Entries(), x.Length())
	}
}

func TestSanityCheck(t *testing.T) {
	good := encode(t, 100, timeindex.Entry{Timestamp: 5000, Offset: 105}, timeindex.Entry{Timestamp: 6000, Offset: 110})
	for _, tt := range []struct {
		name string
		file []byte
		off  int64
		msg  string
	}{
		{"empty", nil, -1, ""},
		{"good", good, -1, ""},
		{"decreasing", encode(t, 100, timeindex.Entry{Timestamp: 5000, Offset: 105}, timeindex.Entry{Timestamp: 4000, Offset: 110}), 12, "below the first timestamp"},
		// Kafka compares only the first and last timestamps.
		{"dip_in_middle", encode(t, 100, timeindex.Entry{Timestamp: 5000, Offset: 105}, timeindex.Entry{Timestamp: 4000, Offset: 106}, timeindex.Entry{Timestamp: 5000, Offset: 110}), -1, ""},
		{"last_offset_below_base", mustHex(t, "0000000000001388 00000005 0000000000001770 ffffffff"), 12, "below the base offset"},
		{"not_multiple", append(slices.Clone(good), 0, 0, 0), 24, "not a multiple of 12"},
		{"zero_padded", append(slices.Clone(good), make([]byte, 120)...), 12 * 11, "untrimmed: its last 10 entries are zero padding"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x.timeindex", tt.file)
			x := openTime(t, fsys, "x.timeindex", 100, -1, false)
			err := x.SanityCheck()
			if tt.off < 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, timeindex.ErrCorruptIndex) || !errors.Is(err, format.ErrInvalid) || ce.Offset != tt.off || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want corruption at %d mentioning %q", err, tt.off, tt.msg)
			}
		})
	}
}

func TestPaddingAndDiscard(t *testing.T) {
	fsys := vfs.NewMem()
	es := []timeindex.Entry{{5000, 105}, {6000, 110}}
	writeFile(t, fsys, "x.timeindex", append(encode(t, 100, es...), make([]byte, 36)...))
	x := openTime(t, fsys, "x.timeindex", 100, 60, true)
	want := index.Padding{Entries: 5, ValidEntries: 2, ZeroBytes: 36, Untrimmed: true}
	if p := x.Padding(); p != want {
		t.Fatalf("Padding = %+v", p)
	}
	// Kafka's view: the last entry is (0, base), so the segment's largest
	// timestamp reads as 0 (KAFKA-10207), and the index is full.
	if x.LastEntry() != (timeindex.Entry{Timestamp: 0, Offset: 100}) || !x.IsFull() {
		t.Fatalf("last %+v full %v", x.LastEntry(), x.IsFull())
	}
	if err := x.MaybeAppend(7000, 120, false); !errors.Is(err, timeindex.ErrIndexFull) {
		t.Fatalf("append to a padded index: %v", err)
	}
	if dropped, err := x.DiscardPadding(); !dropped || err != nil {
		t.Fatal(dropped, err)
	}
	if x.LastEntry() != es[1] || x.IsFull() || x.SanityCheck() != nil {
		t.Fatalf("after DiscardPadding: %+v", x.AppendAll(nil))
	}
	if err := x.MaybeAppend(7000, 120, false); err != nil {
		t.Fatal(err)
	}
	// A first entry of timestamp 0 at the base offset is all zero bytes:
	// valid when entries follow it, reported as padding when alone.
	y := vfs.NewMem()
	writeFile(t, y, "y.timeindex", encode(t, 0, timeindex.Entry{Timestamp: 0, Offset: 0}, timeindex.Entry{Timestamp: 10, Offset: 3}))
	if p := openTime(t, y, "y.timeindex", 0, -1, false).Padding(); p.Untrimmed {
		t.Fatalf("a leading zero entry followed by data is not padding: %+v", p)
	}
}

func TestReadOnlyAndClosed(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.timeindex", encode(t, 0, timeindex.Entry{Timestamp: 10, Offset: 1}))
	ro := openTime(t, fsys, "x.timeindex", 0, -1, false)
	for name, m := range map[string]func() error{
		"MaybeAppend":     func() error { return ro.MaybeAppend(20, 2, false) },
		"TruncateTo":      func() error { return ro.TruncateTo(0) },
		"Reset":           ro.Reset,
		"TrimToValidSize": ro.TrimToValidSize,
		"Resize":          func() error { _, err := ro.Resize(48); return err },
	} {
		if err := m(); !errors.Is(err, timeindex.ErrReadOnly) {
			t.Errorf("%s: %v", name, err)
		}
	}
	rw := openTime(t, fsys, "x.timeindex", 0, 48, true)
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rw.MaybeAppend(20, 2, false); !errors.Is(err, timeindex.ErrClosed) {
		t.Errorf("closed MaybeAppend: %v", err)
	}
	if rw.Lookup(15) != (timeindex.Entry{Timestamp: 10, Offset: 1}) {
		t.Error("closed index lost its entries")
	}
	if err := rw.Rename("z"); !errors.Is(err, timeindex.ErrClosed) {
		t.Errorf("closed Rename: %v", err)
	}
	w2 := openTime(t, fsys, "x.timeindex", 0, 48, true)
	if err := w2.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w2.Rename("x.timeindex.swap"); err != nil || w2.Path() != "x.timeindex.swap" {
		t.Fatal(err)
	}
	if err := w2.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("x.timeindex.swap"); err == nil {
		t.Fatal("Delete left the file")
	}
}

var sink timeindex.Entry

func TestAllocs(t *testing.T) {
	x := openTime(t, vfs.NewMem(), "x.timeindex", 0, 1<<16, true)
	for i := range 3000 {
		if err := x.MaybeAppend(int64(1000+i*7), int64(i), false); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 0, 64)
	var err error
	for name, f := range map[string]func(){
		"Lookup":      func() { sink = x.Lookup(12345) },
		"LastEntry":   func() { sink = x.LastEntry() },
		"Entry":       func() { sink = x.Entry(17) },
		"IsFull":      func() { _ = x.IsFull() },
		"AppendEntry": func() { buf, err = timeindex.AppendEntry(buf[:0], 0, timeindex.Entry{Timestamp: 3, Offset: 4}) },
	} {
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocs", name, n)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestLookupMatchesKafkaSearch checks the inlined search against
// indexfile.LargestLowerBound on sorted and unsorted bytes.
func TestLookupMatchesKafkaSearch(t *testing.T) {
	for round := range 100 {
		n := (round * 37) % 1500
		b := make([]byte, n*12)
		for i := range n {
			ts := int64(10 * i)
			if round%2 == 1 {
				ts = int64((i*7919 + round) % 997)
			}
			format.PutInt64(b[i*12:], ts)
			format.PutInt32(b[i*12+8:], int32(i))
		}
		if round%3 == 0 {
			b = append(b, make([]byte, 12*(round%40))...)
		}
		fsys := vfs.NewMem()
		writeFile(t, fsys, "x.timeindex", b)
		x := openTime(t, fsys, "x.timeindex", 0, -1, false)
		m := len(b) / 12
		key := func(i int) int64 { return format.Int64(b[i*12:]) }
		for ts := int64(-5); ts < int64(10*n+20); ts += 7 {
			slot := indexfile.LargestLowerBound(m, timeindex.EntrySize, ts, key)
			want := timeindex.Entry{Timestamp: format.NoTimestamp}
			if slot >= 0 {
				want = timeindex.DecodeEntry(b[slot*12:], 0)
			}
			if got := x.Lookup(ts); got != want {
				t.Fatalf("round %d: Lookup(%d) = %+v, want %+v", round, ts, got, want)
			}
		}
	}
}

// mustFlush writes an index's pending entries (appends are written
// behind) so that its file can be compared.
func mustFlush(tb testing.TB, x interface{ Flush() error }) {
	tb.Helper()
	if err := x.Flush(); err != nil {
		tb.Fatal(err)
	}
}
