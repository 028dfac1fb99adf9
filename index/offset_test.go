package index_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

func TestOpenPreallocates(t *testing.T) {
	for _, tt := range []struct {
		max      int
		wantLen  int64
		wantMax  int
		wantFull bool
	}{
		{segment.DefaultMaxIndexSize, 10 << 20, 10 << 20 / 8, false},
		{67, 64, 8, false}, // Kafka's roundDownToExactMultiple(67, 8) == 64
		{8, 8, 1, false},
		{15, 8, 1, false},
	} {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			fsys := vfs.NewMem()
			x := openOffset(t, fsys, "a.index", 0, tt.max, true)
			defer x.Close()
			st, err := fsys.Stat("a.index")
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != tt.wantLen || x.Length() != tt.wantLen || index.MaxEntries(x) != tt.wantMax || x.Entries() != 0 || x.IsFull() != tt.wantFull {
				t.Fatalf("size %d length %d maxEntries %d entries %d full %v", st.Size(), x.Length(), index.MaxEntries(x), x.Entries(), x.IsFull())
			}
			if p := x.Padding(); p.Untrimmed || p.ZeroBytes != 0 {
				t.Fatalf("a new index reports padding %+v", p)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	fsys := vfs.NewMem()
	for _, max := range []int{-1, 7} {
		if _, err := index.OpenOffsetIndex(fsys, "a.index", 0, index.OpenOptions{Writable: true, MaxIndexSize: max}); !errors.Is(err, index.ErrInvalidSize) {
			t.Errorf("max %d: err = %v, want ErrInvalidSize", max, err)
		}
	}
	if _, err := fsys.Stat("a.index"); !isNotExist(err) {
		t.Errorf("a refused open created the file: %v", err)
	}
	// The zero value of MaxIndexSize is segment.index.bytes' default.
	if x, err := index.OpenOffsetIndex(fsys, "d.index", 0, index.OpenOptions{Writable: true}); err != nil || x.Length() != segment.DefaultMaxIndexSize {
		t.Errorf("default size: %v, %v", x, err)
	} else {
		x.Close()
	}
	if _, err := index.OpenOffsetIndex(fsys, "missing.index", 0, index.OpenOptions{}); !isNotExist(err) {
		t.Errorf("read-only open of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := fsys.Stat("missing.index"); !isNotExist(err) {
		t.Errorf("a read-only open created the file")
	}
}

// TestOpenExisting checks that an existing file is trusted as Kafka trusts
// it, keeps its length (only a file the open creates is preallocated), and
// is never modified read-only.
func TestOpenExisting(t *testing.T) {
	data := encode(t, 100, index.Entry{Offset: 105, Position: 4200}, index.Entry{Offset: 110, Position: 9000})
	for _, tt := range []struct {
		name     string
		file     []byte
		max      int
		writable bool
		wantLen  int64
		entries  int
	}{
		{"read_only", data, -1, false, 16, 2},
		{"read_only_partial", append(slices.Clone(data), 1, 2, 3), -1, false, 19, 2},
		{"writable_keeps_length", data, 64, true, 16, 2},
		{"writable_longer_kept", data, 8, true, 16, 2},
		{"writable_same", data, 16, true, 16, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x.index", tt.file)
			x := openOffset(t, fsys, "x.index", 100, tt.max, tt.writable)
			defer x.Close()
			mustFlush(t, x) // entries are written behind
			got := readAll(t, fsys, "x.index")
			if int64(len(got)) != tt.wantLen || x.Length() != tt.wantLen || x.Entries() != tt.entries {
				t.Fatalf("file %d bytes, Length %d, entries %d", len(got), x.Length(), x.Entries())
			}
			if !bytes.Equal(got[:len(data)], data) {
				t.Fatalf("entries changed: %x", got)
			}
			if !tt.writable && !bytes.Equal(got, tt.file) {
				t.Fatalf("read-only open modified the file")
			}
			if e := x.Entry(1); e != (index.Entry{Offset: 110, Position: 9000}) {
				t.Fatalf("Entry(1) = %+v", e)
			}
		})
	}
}

func TestAppend(t *testing.T) {
	const base = 1000
	fsys := vfs.NewMem()
	x := openOffset(t, fsys, "x.index", base, 4*8, true)
	defer x.Close()
	if got := index.LastOffset(x); got != base {
		t.Fatalf("empty LastOffset = %d", got)
	}
	if got := x.LastEntry(); got != (index.Entry{Offset: base}) {
		t.Fatalf("empty LastEntry = %+v", got)
	}
	steps := []struct {
		name     string
		offset   int64
		position int32
		err      error
	}{
		{"below_base", base - 1, 10, index.ErrOffsetOverflow},
		{"negative_position", base + 1, -5, index.ErrOffsetOrder},
		{"first", base, 0, nil}, // Kafka accepts (base, 0) as a first entry
		{"equal_offset", base, 10, index.ErrOffsetOrder},
		{"second", base + 10, 4200, nil},
		{"lower_offset", base + 5, 9000, index.ErrOffsetOrder},
		{"lower_position", base + 20, 4100, index.ErrOffsetOrder},
		{"equal_position", base + 20, 4200, nil}, // positions need not increase strictly
		{"overflow", base + math.MaxInt32 + 1, 9000, index.ErrOffsetOverflow},
		{"max_relative", base + math.MaxInt32, 9000, nil},
		{"full", base + math.MaxInt32, 9999, index.ErrIndexFull}, // full is checked first, as in Kafka
	}
	var want []index.Entry
	for _, s := range steps {
		mustFlush(t, x) // entries are written behind
		before := readAll(t, fsys, "x.index")
		err := x.Append(s.offset, s.position)
		if !errors.Is(err, s.err) || (s.err == nil) != (err == nil) {
			t.Fatalf("%s: Append(%d, %d) = %v, want %v", s.name, s.offset, s.position, err, s.err)
		}
		mustFlush(t, x) // entries are written behind
		after := readAll(t, fsys, "x.index")
		if err != nil {
			if !bytes.Equal(before, after) {
				t.Fatalf("%s: a refused append changed the file", s.name)
			}
			continue
		}
		want = append(want, index.Entry{Offset: s.offset, Position: s.position})
		if !bytes.Equal(after[:len(want)*8], encode(t, base, want...)) {
			t.Fatalf("%s: file %x", s.name, after)
		}
	}
	if got := entries(x); !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if !x.IsFull() || index.LastOffset(x) != base+math.MaxInt32 || index.SizeInBytes(x) != 32 {
		t.Fatalf("full %v last %d size %d", x.IsFull(), index.LastOffset(x), index.SizeInBytes(x))
	}
}

func TestLookup(t *testing.T) {
	const base = 50
	es := []index.Entry{{55, 4100}, {60, 8300}, {72, 12500}, {90, 17000}}
	x := openOffset(t, vfs.NewMem(), "x.index", base, 1024, true)
	empty := x.Lookup(70)
	if empty != (index.Entry{Offset: base}) {
		t.Fatalf("empty Lookup = %+v", empty)
	}
	for _, e := range es {
		if err := x.Append(e.Offset, e.Position); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		target int64
		want   index.Entry
	}{
		{math.MinInt64, index.Entry{Offset: base}},
		{0, index.Entry{Offset: base}},
		{54, index.Entry{Offset: base}},
		{55, es[0]},
		{59, es[0]},
		{60, es[1]},
		{71, es[1]},
		{72, es[2]},
		{89, es[2]},
		{90, es[3]},
		{1 << 40, es[3]},
		{math.MaxInt64, es[3]},
	} {
		if got := x.Lookup(tt.target); got != tt.want {
			t.Errorf("Lookup(%d) = %+v, want %+v", tt.target, got, tt.want)
		}
	}
}

// TestLookupWarmSection checks lookups on both sides of the warm section
// (the last 1024 entries), where Kafka's search takes different branches.
func TestLookupWarmSection(t *testing.T) {
	const n = 3000
	x := openOffset(t, vfs.NewMem(), "x.index", 0, n*8, true)
	for i := range n {
		if err := x.Append(int64(10+3*i), int32(5000*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for target := int64(0); target < 10+3*n+5; target++ {
		want := index.Entry{}
		if target >= 10 {
			i := min((target-10)/3, n-1)
			want = index.Entry{Offset: 10 + 3*i, Position: int32(5000 * (i + 1))}
		}
		if got := x.Lookup(target); got != want {
			t.Fatalf("Lookup(%d) = %+v, want %+v", target, got, want)
		}
	}
}

func TestFetchUpperBoundOffset(t *testing.T) {
	x := openOffset(t, vfs.NewMem(), "x.index", 0, 1024, true)
	if _, ok := index.FetchUpperBoundOffset(x, 0, 10); ok {
		t.Fatal("empty index gave an upper bound")
	}
	es := []index.Entry{{5, 4100}, {9, 8300}, {20, 12500}}
	for _, e := range es {
		if err := x.Append(e.Offset, e.Position); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		pos  int32
		size int
		want index.Entry
		ok   bool
	}{
		{0, 0, es[0], true},
		// Kafka's search never compares the first slot of the range it
		// searches, so a target equal to that entry's position gives the
		// next entry: still a valid upper bound, and what a broker returns.
		{0, 4100, es[1], true},
		{0, 4101, es[1], true},
		{4100, 4200, es[1], true},
		{8300, 1, es[2], true},
		{12500, 0, es[2], true},
		{12500, 1, index.Entry{}, false},
	} {
		got, ok := index.FetchUpperBoundOffset(x, tt.pos, tt.size)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FetchUpperBoundOffset(%d, %d) = %+v, %v; want %+v, %v", tt.pos, tt.size, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTruncateTo(t *testing.T) {
	es := []index.Entry{{105, 4100}, {110, 8300}, {120, 12500}}
	for _, tt := range []struct {
		offset int64
		keep   int
	}{
		{0, 0}, {100, 0}, {105, 0}, {106, 1}, {110, 1}, {111, 2}, {120, 2}, {121, 3}, {math.MaxInt64, 3},
	} {
		t.Run(fmt.Sprint(tt.offset), func(t *testing.T) {
			fsys := vfs.NewMem()
			x := openOffset(t, fsys, "x.index", 100, 64, true)
			for _, e := range es {
				if err := x.Append(e.Offset, e.Position); err != nil {
					t.Fatal(err)
				}
			}
			if err := x.TruncateTo(tt.offset); err != nil {
				t.Fatal(err)
			}
			if got := entries(x); !slices.Equal(got, es[:tt.keep]) {
				t.Fatalf("entries %v, want %v", got, es[:tt.keep])
			}
			// The removed slots are zero on disk and the length is kept.
			mustFlush(t, x) // entries are written behind
			file := readAll(t, fsys, "x.index")
			want := append(encode(t, 100, es[:tt.keep]...), make([]byte, 64-tt.keep*8)...)
			if !bytes.Equal(file, want) {
				t.Fatalf("file %x\nwant %x", file, want)
			}
			// Appends continue after the kept entries.
			if err := x.Append(200, 20000); err != nil {
				t.Fatal(err)
			}
			if x.Entries() != tt.keep+1 || index.LastOffset(x) != 200 {
				t.Fatalf("after append: %v", entries(x))
			}
		})
	}
}

func TestResizeTrimReset(t *testing.T) {
	fsys := vfs.NewMem()
	x := openOffset(t, fsys, "x.index", 0, 80, true)
	for i := range 3 {
		if err := x.Append(int64(i+1), int32(5000*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		st, err := fsys.Stat("x.index")
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	for _, tt := range []struct {
		name    string
		size    int
		changed bool
		err     error
		wantLen int64
	}{
		{"same", 80, false, nil, 80},
		{"rounds_down_same", 87, false, nil, 80},
		{"grow", 100, true, nil, 96},
		{"shrink", 30, true, nil, 24},
		{"below_entries", 23, false, index.ErrInvalidSize, 24},
		{"negative", -8, false, index.ErrInvalidSize, 24},
	} {
		changed, err := x.Resize(tt.size)
		if changed != tt.changed || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Fatalf("%s: Resize(%d) = %v, %v", tt.name, tt.size, changed, err)
		}
		if size() != tt.wantLen || x.Length() != tt.wantLen || index.MaxEntries(x) != int(tt.wantLen/8) {
			t.Fatalf("%s: file %d, Length %d, MaxEntries %d", tt.name, size(), x.Length(), index.MaxEntries(x))
		}
	}
	if !x.IsFull() {
		t.Fatal("24-byte index with 3 entries is not full")
	}
	if _, err := x.Resize(80); err != nil {
		t.Fatal(err)
	}
	if err := x.TrimToValidSize(); err != nil || size() != 24 {
		t.Fatalf("TrimToValidSize: %v, size %d", err, size())
	}
	if err := x.Reset(); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, x) // entries are written behind
	if x.Entries() != 0 || size() != 80 || index.MaxEntries(x) != 10 || !bytes.Equal(readAll(t, fsys, "x.index"), make([]byte, 80)) {
		t.Fatalf("after Reset: %d entries, size %d", x.Entries(), size())
	}
}

func TestSanityCheck(t *testing.T) {
	for _, tt := range []struct {
		name string
		base int64
		file []byte
		off  int64 // -1: passes
	}{
		{"empty", 0, nil, -1},
		{"good", 100, encode(t, 100, index.Entry{Offset: 105, Position: 5000}), -1},
		{"last_equals_base", 100, encode(t, 100, index.Entry{Offset: 100, Position: 5000}), -1},
		// Kafka only compares the last offset with the base: a negative
		// relative offset in the last entry is corrupt.
		{"last_below_base", 100, mustHex(t, "00000005 00001388 ffffffff 00002000"), 8},
		{"not_multiple", 0, mustHex(t, "00000005 00001388 0000"), 8},
		{"two_bytes", 0, []byte{0, 1}, 0},
		// Kafka's check lets zero padding through: the last offset of a
		// zero entry is the base offset.
		{"zero_padded", 100, append(encode(t, 100, index.Entry{Offset: 105, Position: 5000}), make([]byte, 64)...), -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x.index", tt.file)
			x := openOffset(t, fsys, "x.index", tt.base, -1, false)
			err := x.SanityCheck()
			if tt.off < 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkCorrupt(t, err, "x.index", tt.off)
		})
	}
}

func TestPadding(t *testing.T) {
	valid := encode(t, 0, index.Entry{Offset: 10, Position: 4500}, index.Entry{Offset: 20, Position: 9000})
	for _, tt := range []struct {
		name string
		file []byte
		want index.Padding
	}{
		{"none", valid, index.Padding{Entries: 2, ValidEntries: 2}},
		{"empty", nil, index.Padding{}},
		{"all_zero", make([]byte, 64), index.Padding{Entries: 8, ValidEntries: 0, ZeroBytes: 64, Untrimmed: true}},
		{"padded", append(slices.Clone(valid), make([]byte, 48)...), index.Padding{Entries: 8, ValidEntries: 2, ZeroBytes: 48, Untrimmed: true}},
		{"padded_partial", append(slices.Clone(valid), make([]byte, 13)...), index.Padding{Entries: 3, ValidEntries: 2, ZeroBytes: 13, Untrimmed: true}},
		{"zero_then_data", append(make([]byte, 8), valid...), index.Padding{Entries: 3, ValidEntries: 3}},
		{"garbage_tail", append(slices.Clone(valid), 0, 0, 0, 9), index.Padding{Entries: 2, ValidEntries: 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x.index", tt.file)
			x := openOffset(t, fsys, "x.index", 0, -1, false)
			if got := x.Padding(); got != tt.want {
				t.Fatalf("Padding = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPaddedIndexBehavesLikeKafka opens an untrimmed index as a broker
// would after a crash: Kafka's view (zero entries count, the index is full,
// a lookup may land on a zero entry, still a safe place to scan from),
// then DiscardPadding restores the trimmed view.
func TestPaddedIndexBehavesLikeKafka(t *testing.T) {
	fsys := vfs.NewMem()
	es := []index.Entry{{110, 4500}, {120, 9000}, {130, 13600}}
	writeFile(t, fsys, "x.index", append(encode(t, 100, es...), make([]byte, 40)...))
	x := openOffset(t, fsys, "x.index", 100, 64, true)
	if x.Entries() != 8 || index.MaxEntries(x) != 8 || !x.IsFull() {
		t.Fatalf("entries %d max %d", x.Entries(), index.MaxEntries(x))
	}
	if index.LastOffset(x) != 100 || x.Entry(7) != (index.Entry{Offset: 100}) {
		t.Fatalf("last %d, entry 7 %+v", index.LastOffset(x), x.Entry(7))
	}
	if err := x.SanityCheck(); err != nil {
		t.Fatalf("Kafka's check passes a padded offset index: %v", err)
	}
	for target := int64(0); target < 140; target++ {
		got := x.Lookup(target)
		if got.Offset > target && got.Offset != 100 {
			t.Fatalf("Lookup(%d) = %+v: above the target", target, got)
		}
	}
	if err := x.Append(140, 20000); !errors.Is(err, index.ErrIndexFull) {
		t.Fatalf("append to a padded, full index: %v", err)
	}
	dropped, err := x.DiscardPadding()
	if err != nil || !dropped {
		t.Fatalf("DiscardPadding = %v, %v", dropped, err)
	}
	if got := entries(x); !slices.Equal(got, es) || x.IsFull() || x.Padding().Untrimmed {
		t.Fatalf("after DiscardPadding: %v", got)
	}
	if dropped, err := x.DiscardPadding(); dropped || err != nil {
		t.Fatalf("second DiscardPadding = %v, %v", dropped, err)
	}
	if err := x.Append(140, 20000); err != nil {
		t.Fatal(err)
	}
	if err := x.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, x) // entries are written behind
	if got, want := readAll(t, fsys, "x.index"), encode(t, 100, append(es, index.Entry{Offset: 140, Position: 20000})...); !bytes.Equal(got, want) {
		t.Fatalf("file %x, want %x", got, want)
	}
}

// TestAppendAfterPadding follows Kafka when padding is kept: an append goes
// after the zero entries (the index must have room).
func TestAppendAfterPadding(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.index", append(encode(t, 0, index.Entry{Offset: 10, Position: 4500}), make([]byte, 16)...))
	x := openOffset(t, fsys, "x.index", 0, 64, true)
	if x.Entries() != 3 || index.LastOffset(x) != 0 {
		t.Fatalf("entries %d last %d", x.Entries(), index.LastOffset(x))
	}
	if _, err := x.Resize(64); err != nil { // the active segment's room back
		t.Fatal(err)
	}
	if err := x.Append(15, 9000); err != nil {
		t.Fatal(err)
	}
	want := []index.Entry{{10, 4500}, {0, 0}, {0, 0}, {15, 9000}}
	if got := entries(x); !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	if p := x.Padding(); p.Untrimmed {
		t.Fatalf("zero entries followed by data are not padding: %+v", p)
	}
	// Truncation keeps exactly the prefix of entries below the offset.
	if err := x.TruncateTo(15); err != nil {
		t.Fatal(err)
	}
	if got := entries(x); !slices.Equal(got, want[:3]) {
		t.Fatalf("after TruncateTo(15): %v", got)
	}
	if err := x.TruncateTo(10); err != nil {
		t.Fatal(err)
	}
	if got := entries(x); !slices.Equal(got, want[:0]) {
		t.Fatalf("after TruncateTo(10): %v", got)
	}
}

func TestReadOnlyAndClosed(t *testing.T) {
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.index", encode(t, 0, index.Entry{Offset: 10, Position: 4500}))
	ro := openOffset(t, fsys, "x.index", 0, -1, false)
	mutations := map[string]func(x *index.OffsetIndex) error{
		"Append":          func(x *index.OffsetIndex) error { return x.Append(20, 9000) },
		"TruncateTo":      func(x *index.OffsetIndex) error { return x.TruncateTo(0) },
		"Reset":           func(x *index.OffsetIndex) error { return x.Reset() },
		"TrimToValidSize": func(x *index.OffsetIndex) error { return x.TrimToValidSize() },
		"Resize":          func(x *index.OffsetIndex) error { _, err := x.Resize(80); return err },
	}
	for name, m := range mutations {
		if err := m(ro); !errors.Is(err, index.ErrReadOnly) {
			t.Errorf("read-only %s: %v, want ErrReadOnly", name, err)
		}
	}
	if err := ro.Flush(); err != nil {
		t.Errorf("read-only Flush: %v", err)
	}
	if got := readAll(t, fsys, "x.index"); len(got) != 8 {
		t.Fatalf("read-only index changed the file: %x", got)
	}
	rw := openOffset(t, fsys, "x.index", 0, 64, true)
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, m := range mutations {
		if err := m(rw); !errors.Is(err, index.ErrClosed) {
			t.Errorf("closed %s: %v, want ErrClosed", name, err)
		}
	}
	if err := rw.Flush(); !errors.Is(err, index.ErrClosed) {
		t.Errorf("closed Flush: %v", err)
	}
	if err := rw.Close(); !errors.Is(err, index.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	// Reads still answer from memory.
	if rw.Lookup(15) != (index.Entry{Offset: 10, Position: 4500}) || rw.Entries() != 1 {
		t.Fatalf("closed index lost its entries")
	}
}

func TestRenameDeleteFlush(t *testing.T) {
	mem := vfs.NewMem()
	fsys := vfs.WithFaults(mem, nil)
	x := openOffset(t, fsys, "a.index", 0, 64, true)
	if err := x.Append(3, 5000); err != nil {
		t.Fatal(err)
	}
	syncs := fsys.Count(vfs.OpSync)
	if err := x.Flush(); err != nil || fsys.Count(vfs.OpSync) != syncs+1 {
		t.Fatalf("Flush: %v, syncs %d -> %d", err, syncs, fsys.Count(vfs.OpSync))
	}
	if err := x.Rename("a.index.deleted"); err != nil {
		t.Fatal(err)
	}
	if x.Path() != "a.index.deleted" {
		t.Fatalf("Path = %q", x.Path())
	}
	if _, err := mem.Stat("a.index"); !isNotExist(err) {
		t.Fatalf("old name still exists")
	}
	// The open file follows the rename.
	if err := x.Append(4, 9000); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, x)
	if got := readAll(t, mem, "a.index.deleted"); !bytes.Equal(got[:16], encode(t, 0, index.Entry{Offset: 3, Position: 5000}, index.Entry{Offset: 4, Position: 9000})) {
		t.Fatalf("renamed file %x", got)
	}
	if err := x.Rename("missing/dir/x"); err == nil {
		t.Fatal("rename into a missing directory succeeded")
	}
	if x.Path() != "a.index.deleted" {
		t.Fatalf("a failed rename moved Path to %q", x.Path())
	}
	if err := x.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat("a.index.deleted"); !isNotExist(err) {
		t.Fatal("Delete left the file")
	}
	if err := x.Delete(); err != nil {
		t.Fatalf("Delete of a deleted index: %v", err)
	}
}

// TestCloseReopen is the segment's life cycle: append, trim and close at
// roll; reopen read-only, and writable (which preallocates again).
func TestCloseReopen(t *testing.T) {
	fsys := vfs.NewMem()
	x := openOffset(t, fsys, "x.index", 500, segment.DefaultMaxIndexSize, true)
	want := []index.Entry{{510, 4200}, {530, 8400}, {531, 12600}}
	for _, e := range want {
		if err := x.Append(e.Offset, e.Position); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openOffset(t, fsys, "x.index", 500, -1, false)
	if got := entries(ro); !slices.Equal(got, want) || ro.Length() != 24 {
		t.Fatalf("reopened: %v, length %d", got, ro.Length())
	}
	rw := openOffset(t, fsys, "x.index", 500, segment.DefaultMaxIndexSize, true)
	defer rw.Close()
	if !rw.IsFull() || rw.Length() != 24 {
		t.Fatalf("a trimmed index reopened writable: length %d, full %v; want 24, full (as a rolled segment's)", rw.Length(), rw.IsFull())
	}
	if _, err := rw.Resize(segment.DefaultMaxIndexSize); err != nil {
		t.Fatal(err)
	}
	if got := entries(rw); !slices.Equal(got, want) || rw.Length() != 10<<20 || rw.IsFull() {
		t.Fatalf("reopened writable: %v, length %d", got, rw.Length())
	}
}
