package segment_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

func TestFileNameRoundTrip(t *testing.T) {
	tests := []struct {
		base int64
		ext  string
		name string
	}{
		{0, segment.LogSuffix, "00000000000000000000.log"},
		{2722402, segment.IndexSuffix, "00000000000002722402.index"},
		{math.MaxInt64, segment.TimeIndexSuffix, "09223372036854775807.timeindex"},
		{58, segment.SnapshotSuffix, "00000000000000000058.snapshot"},
		{7, segment.LogSuffix + segment.DeletedSuffix, "00000000000000000007.log.deleted"},
		{7, segment.IndexSuffix + segment.SwapSuffix, "00000000000000000007.index.swap"},
		{7, segment.TxnIndexSuffix + segment.CleanedSuffix, "00000000000000000007.txnindex.cleaned"},
	}
	for _, tt := range tests {
		if got := segment.FileName(tt.base, tt.ext); got != tt.name {
			t.Errorf("FileName(%d, %q) = %q, want %q", tt.base, tt.ext, got, tt.name)
		}
		base, ext, err := segment.ParseFileName(tt.name)
		if err != nil || base != tt.base || ext != tt.ext {
			t.Errorf("ParseFileName(%q) = %d, %q, %v", tt.name, base, ext, err)
		}
	}
	for _, bad := range []string{"leader-epoch-checkpoint", "00000000000000007364-0000000001.checkpoint",
		"0000000000000000000.log", "0000000000000000000a.log", "00000000000000000000.json", "00000000000000000000.log.tmp",
		"99999999999999999999.log", "00000000000000000000"} {
		if _, _, err := segment.ParseFileName(bad); err == nil {
			t.Errorf("ParseFileName(%q) succeeded", bad)
		}
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() time.Time { return time.UnixMilli(c.ms) }

// batch builds one uncompressed batch at base with n records of size
// bytes, timestamps ts, ts+1, ...
func batch(t testing.TB, base int64, n, size int, ts int64) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Timestamp: ts + int64(i), Value: make([]byte, size)}
		for j := range recs[i].Value {
			recs[i].Value[j] = byte(base + int64(i) + int64(j))
		}
	}
	spec := record.NewBatchSpec(base, compress.None)
	b, err := record.AppendBatch(nil, &spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustDescribe(t testing.TB, b []byte) segment.AppendInfo {
	t.Helper()
	info, err := segment.Describe(b)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// appendBatches appends n batches of 10 records (100-byte values) one at a
// time and returns the batches' start positions.
func appendBatches(t testing.TB, s *segment.Segment, base int64, n int, ts int64) []int64 {
	t.Helper()
	var pos []int64
	for i := 0; i < n; i++ {
		b := batch(t, base+int64(i*10), 10, 100, ts+int64(i*10))
		pos = append(pos, s.Size())
		if err := s.Append(b, mustDescribe(t, b)); err != nil {
			t.Fatal(err)
		}
	}
	return pos
}

func TestAppendIndexesByKafkasRule(t *testing.T) {
	fsys := newMem()
	cfg := segment.Config{IndexIntervalBytes: 4096, MaxIndexSize: 1 << 20}
	s, err := segment.Create(fsys, "p-0", 100, cfg, &fakeClock{})
	if err != nil {
		t.Fatal(err)
	}
	pos := appendBatches(t, s, 100, 20, 1000)
	batchSize := pos[1] - pos[0]
	oi, _ := s.OffsetIndex()
	ti, _ := s.TimeIndex()
	// An entry is added at the first append after more than 4096 bytes
	// accumulated: with batches of batchSize bytes, every k-th batch.
	k := int(4096/batchSize) + 2
	var wantOff []int64
	var wantPos []int32
	since := int64(0)
	for i := range pos {
		if since > 4096 {
			wantOff = append(wantOff, 100+int64(i*10)+9)
			wantPos = append(wantPos, int32(pos[i]))
			since = 0
		}
		since += batchSize
	}
	if oi.Entries() != len(wantOff) || len(wantOff) == 0 {
		t.Fatalf("%d index entries, want %d (every %d batches of %d bytes)", oi.Entries(), len(wantOff), k, batchSize)
	}
	for i := range wantOff {
		if e := oi.Entry(i); e.Offset != wantOff[i] || e.Position != wantPos[i] {
			t.Errorf("entry %d = %+v, want {%d %d}", i, e, wantOff[i], wantPos[i])
		}
		// The time index entry written with it holds the max timestamp so
		// far: the last record's, since timestamps increase.
		if e := ti.Entry(i); e.Offset != wantOff[i] || e.Timestamp != 1000+wantOff[i]-100 {
			t.Errorf("time entry %d = %+v, want {%d %d}", i, e, 1000+wantOff[i]-100, wantOff[i])
		}
	}
	next, err := s.ReadNextOffset()
	if err != nil || next != 300 {
		t.Fatalf("ReadNextOffset = %d, %v; want 300", next, err)
	}
	// Every offset translates to the batch that holds it.
	for off := int64(100); off < 300; off++ {
		op, ok, err := s.TranslateOffset(off)
		if err != nil || !ok || op.Position != pos[(off-100)/10] {
			t.Fatalf("TranslateOffset(%d) = %+v, %v, %v; want position %d", off, op, ok, err, pos[(off-100)/10])
		}
	}
	if _, ok, _ := s.TranslateOffset(300); ok {
		t.Fatal("TranslateOffset past the end found an entry")
	}
	// Lookup by timestamp: record i has timestamp 1000+i.
	for _, ts := range []int64{0, 1000, 1001, 1057, 1199} {
		to, ok, err := s.FindOffsetByTimestamp(ts, 100)
		want := max(ts-1000, 0) + 100
		if err != nil || !ok || to.Offset != want || to.Timestamp != max(ts, 1000) {
			t.Errorf("FindOffsetByTimestamp(%d) = %+v, %v, %v; want offset %d", ts, to, ok, err, want)
		}
	}
	if _, ok, _ := s.FindOffsetByTimestamp(1200, 100); ok {
		t.Error("FindOffsetByTimestamp past the last timestamp found a record")
	}
	if ts, off, _ := s.MaxTimestampSoFar(); ts != 1199 || off != 299 {
		t.Errorf("MaxTimestampSoFar = %d,%d, want 1199,299", ts, off)
	}
}

func TestRecoverRebuildsIndexesAndCutsTail(t *testing.T) {
	fsys := newMem()
	cfg := segment.Config{IndexIntervalBytes: 1024, MaxIndexSize: 1 << 20}
	s, err := segment.Create(fsys, "p-0", 0, cfg, &fakeClock{})
	if err != nil {
		t.Fatal(err)
	}
	pos := appendBatches(t, s, 0, 30, 5000)
	oi, _ := s.OffsetIndex()
	ti, _ := s.TimeIndex()
	var before, tBefore []string
	for i := 0; i < oi.Entries(); i++ {
		before = append(before, fmt.Sprint(oi.Entry(i)))
	}
	for i := 0; i < ti.Entries(); i++ {
		tBefore = append(tBefore, fmt.Sprint(ti.Entry(i)))
	}
	size := s.Size()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		damage    func(f vfs.File)
		keepBytes int64
		corrupt   bool
		tail      record.TailKind
	}{
		{"clean", func(vfs.File) {}, size, false, record.TailNone},
		{"torn_last_batch", func(f vfs.File) { f.Truncate(size - 7) }, pos[29], false, record.TailPartial},
		{"zero_tail", func(f vfs.File) { f.Truncate(size + 8192) }, size, false, record.TailZeros},
		// Bytes whose size field runs past the end read as a partial entry,
		// as Kafka's FileLogInputStream reads them; a size below 14 is
		// corruption.
		{"garbage_tail", func(f vfs.File) { f.WriteAt([]byte("garbage that is not a batch header at all"), size) }, size, false, record.TailPartial},
		{"size_below_minimum", func(f vfs.File) {
			f.WriteAt(append(format.AppendInt32(format.AppendInt64(nil, 300), 5), "junk junk junk"...), size)
		}, size, true, record.TailNone},
		{"bitflip_in_batch_20", func(f vfs.File) {
			b := make([]byte, 1)
			f.ReadAt(b, pos[20]+100)
			b[0] ^= 0x10
			f.WriteAt(b, pos[20]+100)
		}, pos[20], true, record.TailNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs2 := vfs.NewMem()
			data, _ := vfs.ReadFile(fsys, "p-0/00000000000000000000.log")
			fs2.MkdirAll("p-0", 0o755)
			vfs.WriteFile(fs2, "p-0/00000000000000000000.log", data, 0o644)
			f, _ := fs2.OpenFile("p-0/00000000000000000000.log", 2, 0)
			tt.damage(f)
			f.Close()
			s, err := segment.Open(fs2, "p-0", 0, cfg, segment.OpenOptions{Clock: &fakeClock{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Recover(segment.RecoverHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ValidBytes != tt.keepBytes || s.Size() != tt.keepBytes {
				t.Fatalf("kept %d bytes (size %d), want %d", res.ValidBytes, s.Size(), tt.keepBytes)
			}
			if (res.Reason != nil) != tt.corrupt || res.Tail != tt.tail {
				t.Fatalf("reason %v tail %v; want corrupt=%v tail %v", res.Reason, res.Tail, tt.corrupt, tt.tail)
			}
			if tt.corrupt {
				var ce *format.CorruptionError
				if !errors.As(res.Reason, &ce) || ce.Offset < tt.keepBytes || ce.Path == "" {
					t.Fatalf("reason %v does not name the file and a position at or after %d", res.Reason, tt.keepBytes)
				}
			}
			if tt.keepBytes == size {
				// The rebuilt indexes equal the ones the appends wrote.
				oi, _ := s.OffsetIndex()
				ti, _ := s.TimeIndex()
				var after, tAfter []string
				for i := 0; i < oi.Entries(); i++ {
					after = append(after, fmt.Sprint(oi.Entry(i)))
				}
				for i := 0; i < ti.Entries(); i++ {
					tAfter = append(tAfter, fmt.Sprint(ti.Entry(i)))
				}
				if fmt.Sprint(after) != fmt.Sprint(before) || fmt.Sprint(tAfter) != fmt.Sprint(tBefore) {
					t.Fatalf("rebuilt indexes differ:\n%v\n%v\ntime:\n%v\n%v", after, before, tAfter, tBefore)
				}
			}
			// Recovering again changes nothing (I4).
			again, err := s.Recover(segment.RecoverHooks{})
			if err != nil || again.Truncated != 0 || again.ValidBytes != res.ValidBytes {
				t.Fatalf("second recovery: %+v, %v", again, err)
			}
		})
	}
}

func TestShouldRoll(t *testing.T) {
	clock := &fakeClock{ms: 1_000_000}
	fsys := newMem()
	cfg := segment.Config{IndexIntervalBytes: 4096, MaxIndexSize: 64}
	s, err := segment.Create(fsys, "p-0", 0, cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	p := segment.RollParams{MaxSegmentBytes: 10000, MaxSegmentMs: 60000, MaxTimestampInMessages: 5000, MaxOffsetInMessages: 10, MessagesSize: 100, Now: clock.ms}
	roll := func(p segment.RollParams) bool {
		r, err := s.ShouldRoll(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if roll(p) {
		t.Fatal("an empty segment should not roll")
	}
	b := batch(t, 0, 10, 100, 5000)
	if err := s.Append(b, mustDescribe(t, b)); err != nil {
		t.Fatal(err)
	}
	if roll(p) {
		t.Fatal("should not roll yet")
	}
	q := p
	q.MessagesSize = 10000 - s.Size() + 1
	if !roll(q) {
		t.Error("should roll on segment.bytes")
	}
	q = p
	q.MaxTimestampInMessages = 5009 + 60000 + 1 // first batch's max ts is 5009
	if !roll(q) {
		t.Error("should roll on segment.ms")
	}
	q.MaxTimestampInMessages = 5009 + 60000
	if roll(q) {
		t.Error("should not roll exactly at segment.ms")
	}
	q = p
	q.MaxOffsetInMessages = math.MaxInt32 + 1
	if !roll(q) {
		t.Error("should roll on relative offset overflow")
	}
	// Index full: MaxIndexSize 64 holds 8 offset entries / 5 time entries.
	s2, _ := segment.Create(fsys, "p-1", 0, segment.Config{IndexIntervalBytes: 1, MaxIndexSize: 64}, clock)
	appends := 0
	for ; appends < 10; appends++ {
		if r, _ := s2.ShouldRoll(p); r {
			break
		}
		b := batch(t, int64(appends*10), 10, 100, 5000+int64(appends*10))
		if err := s2.Append(b, mustDescribe(t, b)); err != nil {
			t.Fatal(err)
		}
	}
	oi, _ := s2.OffsetIndex()
	ti, _ := s2.TimeIndex()
	// The time index holds 64/12 = 5 entries, the last kept for the roll:
	// full after 4 entries, the first of which comes with the second append.
	if !ti.IsFull() || oi.IsFull() || appends != 5 {
		t.Errorf("rolled after %d appends: time index full %v, offset index full %v; want 5, true, false", appends, ti.IsFull(), oi.IsFull())
	}
}

func TestTruncateTo(t *testing.T) {
	fsys := newMem()
	cfg := segment.Config{IndexIntervalBytes: 512, MaxIndexSize: 1 << 20}
	s, err := segment.Create(fsys, "p-0", 0, cfg, &fakeClock{})
	if err != nil {
		t.Fatal(err)
	}
	pos := appendBatches(t, s, 0, 10, 1000)
	n, err := s.TruncateTo(45) // inside batch 4 (40..49): it goes whole
	if err != nil {
		t.Fatal(err)
	}
	if s.Size() != pos[4] || n != pos[9]+(pos[1]-pos[0])-pos[4] {
		t.Fatalf("size %d truncated %d; want size %d", s.Size(), n, pos[4])
	}
	if next, _ := s.ReadNextOffset(); next != 40 {
		t.Fatalf("next offset %d, want 40", next)
	}
	oi, _ := s.OffsetIndex()
	if oi.Entries() > 0 && oi.LastEntry().Offset >= 45 {
		t.Fatalf("index keeps offset %d", oi.LastEntry().Offset)
	}
	if ts, off, _ := s.MaxTimestampSoFar(); ts != 1039 || off != 39 {
		t.Fatalf("max timestamp after truncation %d@%d, want 1039@39", ts, off)
	}
	// Appending again continues.
	b := batch(t, 40, 10, 100, 2000)
	if err := s.Append(b, mustDescribe(t, b)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TruncateTo(0); err != nil || s.Size() != 0 {
		t.Fatalf("truncate to 0: size %d, %v", s.Size(), err)
	}
}

func TestAppendErrors(t *testing.T) {
	fsys := newMem()
	cfg := segment.DefaultConfig()
	s, _ := segment.Create(fsys, "p-0", 100, cfg, &fakeClock{})
	b := batch(t, 50, 1, 10, 0)
	if err := s.Append(b, mustDescribe(t, b)); !errors.Is(err, segment.ErrOffsetOverflow) {
		t.Fatalf("offset below base: %v", err)
	}
	b = batch(t, 100+math.MaxInt32+1, 1, 10, 0)
	if err := s.Append(b, mustDescribe(t, b)); !errors.Is(err, segment.ErrOffsetOverflow) {
		t.Fatalf("offset overflow: %v", err)
	}
	// A failed write leaves size and indexes, and marks the segment failed.
	ffs := vfs.WithFaults(fsys, vfs.EIO(vfs.And(vfs.KindIs(vfs.OpWriteAt), vfs.PathMatch("*.log"))))
	s2, _ := segment.Create(ffs, "p-1", 0, cfg, &fakeClock{})
	b = batch(t, 0, 1, 10, 0)
	if err := s2.Append(b, mustDescribe(t, b)); err == nil {
		t.Fatal("append through EIO succeeded")
	}
	if s2.Size() != 0 {
		t.Fatalf("size %d after a failed append", s2.Size())
	}
	if err := s2.Append(b, mustDescribe(t, b)); !errors.Is(err, segment.ErrFailed) {
		t.Fatalf("append after failure: %v, want ErrFailed", err)
	}
}

// newMem returns a Mem with the partition directories the tests use.
func newMem() *vfs.Mem {
	m := vfs.NewMem()
	for _, d := range []string{"p-0", "p-1"} {
		if err := m.MkdirAll(d, 0o755); err != nil {
			panic(err)
		}
	}
	return m
}

// TestRecoverDamagedBaseOffset: the baseOffset field is outside the
// checksum, so recovery finds a damaged one by the entries around it.
func TestRecoverDamagedBaseOffset(t *testing.T) {
	cfg := segment.Config{IndexIntervalBytes: 1024, MaxIndexSize: 1 << 20}
	build := func() (*vfs.Mem, []int64) {
		fsys := newMem()
		s, err := segment.Create(fsys, "p-0", 0, cfg, &fakeClock{})
		if err != nil {
			t.Fatal(err)
		}
		pos := appendBatches(t, s, 0, 10, 1000)
		s.Close()
		return fsys, pos
	}
	tests := []struct {
		name     string
		batch    int
		newBase  int64
		keepUpTo int // batches kept
	}{
		{"raised_in_the_middle", 5, 50 + 1<<20, 5},
		{"lowered_in_the_middle", 5, 45, 5},
		{"lowered_to_zero", 3, 0, 3},
		{"raised_second", 1, 10 + 1<<33, 1},
		{"raised_first", 0, 1 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, pos := build()
			f, _ := fsys.OpenFile("p-0/00000000000000000000.log", 2, 0)
			f.WriteAt(format.AppendInt64(nil, tt.newBase), pos[tt.batch])
			f.Close()
			s, err := segment.Open(fsys, "p-0", 0, cfg, segment.OpenOptions{Clock: &fakeClock{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Recover(segment.RecoverHooks{})
			if err != nil {
				t.Fatal(err)
			}
			want := pos[tt.keepUpTo]
			if res.ValidBytes != want || res.NextOffset != int64(tt.keepUpTo*10) {
				t.Fatalf("kept %d bytes up to offset %d, want %d bytes, %d (%v)", res.ValidBytes, res.NextOffset, want, tt.keepUpTo*10, res.Reason)
			}
			var ce *format.CorruptionError
			if !errors.As(res.Reason, &ce) || ce.Offset != want {
				t.Fatalf("reason %v, want a corruption at %d", res.Reason, want)
			}
		})
	}
}

// TestPaddedIndexesAreNotTrusted: a running broker's active segment,
// copied, has indexes zero-padded to segment.index.bytes. Kafka would read
// the padding as entries (a max timestamp of 0, KAFKA-10207); the segment
// drops it, read-only or not, and answers from the real entries.
func TestPaddedIndexesAreNotTrusted(t *testing.T) {
	fsys := newMem()
	cfg := segment.Config{IndexIntervalBytes: 256, MaxIndexSize: 1 << 20}
	s, err := segment.Create(fsys, "p-0", 0, cfg, &fakeClock{})
	if err != nil {
		t.Fatal(err)
	}
	appendBatches(t, s, 0, 10, 5000)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p-0/00000000000000000000.index", "p-0/00000000000000000000.timeindex"} {
		f, _ := fsys.OpenFile(name, 2, 0)
		f.Truncate(10 << 20)
		f.Close()
	}
	for _, ro := range []bool{true, false} {
		s, err := segment.Open(fsys, "p-0", 0, cfg, segment.OpenOptions{Clock: &fakeClock{}, ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		ts, off, err := s.MaxTimestampSoFar()
		if err != nil || ts != 5099 || off != 99 {
			t.Fatalf("read-only %v: max timestamp %d@%d (%v), want 5099@99", ro, ts, off, err)
		}
		if to, ok, err := s.FindOffsetByTimestamp(5042, 0); err != nil || !ok || to.Offset != 42 {
			t.Fatalf("read-only %v: FindOffsetByTimestamp = %+v %v %v", ro, to, ok, err)
		}
		s.CloseHandlers()
	}
}

// TestDamagedIndexPositions opens a segment whose trusted .index holds
// positions past the end of the .log and below zero (RELIABILITY F4): every
// lookup falls back to a scan and still finds the right batch.
func TestDamagedIndexPositions(t *testing.T) {
	for _, bad := range []uint32{0x7fffffff, 0xffffffff, 0x80000000, 0xfffff000} {
		t.Run(fmt.Sprintf("%#x", bad), func(t *testing.T) {
			fsys := newMem()
			cfg := segment.Config{IndexIntervalBytes: 1024, MaxIndexSize: 1 << 20}
			s, err := segment.Create(fsys, "p-0", 100, cfg, &fakeClock{})
			if err != nil {
				t.Fatal(err)
			}
			pos := appendBatches(t, s, 100, 20, 1000)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := vfs.ReadFile(fsys, "p-0/00000000000000000100.index")
			if err != nil || len(raw) < 16 {
				t.Fatalf("index: %d bytes, %v", len(raw), err)
			}
			for i := 4; i < len(raw); i += 8 { // every entry's position
				raw[i], raw[i+1], raw[i+2], raw[i+3] = byte(bad>>24), byte(bad>>16), byte(bad>>8), byte(bad)
			}
			if err := vfs.WriteFile(fsys, "p-0/00000000000000000100.index", raw, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err = segment.Open(fsys, "p-0", 100, cfg, segment.OpenOptions{Clock: &fakeClock{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for off := int64(100); off < 300; off += 7 {
				op, ok, err := s.TranslateOffset(off)
				if err != nil || !ok || op.Position != pos[(off-100)/10] {
					t.Fatalf("TranslateOffset(%d) = %+v, %v, %v; want position %d", off, op, ok, err, pos[(off-100)/10])
				}
			}
			if next, err := s.ReadNextOffset(); err != nil || next != 300 {
				t.Fatalf("ReadNextOffset = %d, %v; want 300", next, err)
			}
			to, ok, err := s.FindOffsetByTimestamp(1057, 100)
			if err != nil || !ok || to.Offset != 157 {
				t.Fatalf("FindOffsetByTimestamp(1057) = %+v, %v, %v; want offset 157", to, ok, err)
			}
		})
	}
}
