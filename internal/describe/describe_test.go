package describe_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/vfs"
)

// entry scans the single entry of b.
func entry(t *testing.T, b []byte) *record.Entry {
	t.Helper()
	s := record.NewScanner(b, "", 100)
	if !s.Next() {
		t.Fatalf("no entry: %v", s.Err())
	}
	e := *s.Entry()
	return &e
}

func v2Batch(t *testing.T, base int64, codec compress.Codec, f func(*record.BatchSpec), recs ...record.Record) []byte {
	t.Helper()
	var w record.Builder
	spec := record.NewBatchSpec(base, codec)
	if f != nil {
		f(&spec)
	}
	b, err := w.AppendBatch(nil, &spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func legacy(t *testing.T, spec record.LegacySpec, recs ...record.Record) []byte {
	t.Helper()
	var (
		b   []byte
		err error
	)
	if spec.Codec == compress.None {
		b, err = record.AppendLegacyMessage(nil, &spec, recs[0].Key, recs[0].Value)
	} else {
		var w record.Builder
		b, err = w.AppendLegacyWrapper(nil, &spec, recs)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewBatch(t *testing.T) {
	recs := []record.Record{{Timestamp: 10, Value: []byte("a")}, {Timestamp: 12, Key: []byte("k")}, {Timestamp: 11}}
	txn := func(s *record.BatchSpec) {
		s.ProducerID, s.ProducerEpoch, s.BaseSequence, s.PartitionLeaderEpoch = 7, 2, 40, 3
		s.Transactional = true
	}
	for _, tt := range []struct {
		name string
		raw  []byte
		want describe.Batch
	}{
		{"v2_transactional_zstd", v2Batch(t, 5, compress.Zstd, txn, recs...), describe.Batch{
			BaseOffset: 5, LastOffset: 7, Count: 3, Magic: 2, Codec: compress.Zstd, TimestampType: record.CreateTime,
			BaseTimestamp: 10, MaxTimestamp: 12, ProducerID: 7, ProducerEpoch: 2, BaseSequence: 40, LastSequence: 42,
			PartitionLeaderEpoch: 3, IsTransactional: true, DeleteHorizonMs: record.NoTimestamp}},
		{"v0_message", legacy(t, record.LegacySpec{Offset: 9, Magic: record.MagicV0}, record.Record{Value: []byte("value")}), describe.Batch{
			BaseOffset: 9, LastOffset: 9, Count: 1, Magic: 0, Codec: compress.None, TimestampType: record.NoTimestampType,
			BaseTimestamp: record.NoTimestamp, MaxTimestamp: record.NoTimestamp, ProducerID: record.NoProducerID,
			ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence, LastSequence: record.NoSequence,
			PartitionLeaderEpoch: record.NoPartitionLeaderEpoch, DeleteHorizonMs: record.NoTimestamp, PayloadSize: 5}},
		{"v1_log_append_time", legacy(t, record.LegacySpec{Offset: 9, Magic: record.MagicV1, Timestamp: 77, TimestampType: record.LogAppendTime}, record.Record{}), describe.Batch{
			BaseOffset: 9, LastOffset: 9, Count: 1, Magic: 1, Attributes: 0x08, Codec: compress.None, TimestampType: record.LogAppendTime,
			BaseTimestamp: 77, MaxTimestamp: 77, ProducerID: record.NoProducerID,
			ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence, LastSequence: record.NoSequence,
			PartitionLeaderEpoch: record.NoPartitionLeaderEpoch, DeleteHorizonMs: record.NoTimestamp}}, // a null value: no payload
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := entry(t, tt.raw)
			got := describe.NewBatch(e)
			tt.want.Position, tt.want.Size, tt.want.CRC = 100, len(tt.raw), got.CRC
			if tt.want.Magic == record.MagicV2 {
				tt.want.Attributes, tt.want.PayloadSize = int16(e.Batch.Attributes), len(tt.raw)-record.RecordsOffset
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if crc := format.Uint32(tt.raw[record.CRCOffset:]); tt.want.Magic == record.MagicV2 && got.CRC != crc {
				t.Errorf("crc %d, stored %d", got.CRC, crc)
			}
			if crc := format.Uint32(tt.raw[record.LegacyCRCOffset:]); tt.want.Magic != record.MagicV2 && got.CRC != crc {
				t.Errorf("crc %d, stored %d", got.CRC, crc)
			}
		})
	}
}

// TestWalkerWrapper counts a legacy wrapper's inner messages and finds
// its first offset; other entries are left as their header says.
func TestWalkerWrapper(t *testing.T) {
	recs := []record.Record{{Timestamp: 1, Value: []byte("a")}, {Timestamp: 2, Value: []byte("b")}, {Timestamp: 3}}
	for _, magic := range []int8{record.MagicV0, record.MagicV1} {
		t.Run(fmt.Sprintf("v%d", magic), func(t *testing.T) {
			var w describe.Walker
			e := entry(t, legacy(t, record.LegacySpec{Offset: 20, Magic: magic, Codec: compress.Gzip}, recs...))
			b := describe.NewBatch(e)
			if !b.IsWrapper() || b.Count != 1 || b.BaseOffset != 22 {
				t.Fatalf("before: %+v", b)
			}
			if err := w.Wrapper(&b, e); err != nil || b.Count != 3 || b.BaseOffset != 20 || b.LastOffset != 22 {
				t.Errorf("after: count %d, offsets %d-%d, %v", b.Count, b.BaseOffset, b.LastOffset, err)
			}
			msgs := w.Messages(&e.Legacy)
			if len(msgs) != 3 {
				t.Fatalf("%d inner messages", len(msgs))
			}
			for i, m := range msgs {
				want := int64(i) // v1 inner offsets are relative
				if magic == record.MagicV0 {
					want += 20
				}
				if m.Offset != want || !m.CRCValid || m.Magic != magic || m.Size < record.LogOverhead+record.RecordOverheadV0 {
					t.Errorf("inner %d: %+v", i, m)
				}
			}
		})
	}
	t.Run("undecompressable", func(t *testing.T) {
		raw, err := record.AppendLegacyMessage(nil, &record.LegacySpec{Offset: 4, Magic: record.MagicV1, Codec: compress.Snappy}, nil, []byte("not snappy"))
		if err != nil {
			t.Fatal(err)
		}
		var w describe.Walker
		e := entry(t, raw)
		b := describe.NewBatch(e)
		if err := w.Wrapper(&b, e); err == nil || b.Count != 0 || b.BaseOffset != 4 {
			t.Errorf("count %d, base %d, err %v", b.Count, b.BaseOffset, err)
		}
		if msgs := w.Messages(&e.Legacy); len(msgs) != 0 {
			t.Errorf("messages %+v", msgs)
		}
	})
	t.Run("v2_untouched", func(t *testing.T) {
		var w describe.Walker
		e := entry(t, v2Batch(t, 0, compress.Gzip, nil, recs...))
		b := describe.NewBatch(e)
		want := b
		if err := w.Wrapper(&b, e); err != nil || b != want {
			t.Errorf("%+v, %v", b, err)
		}
	})
}

// TestWalkerRecords checks the record views: sizes, headers, sequences
// (wrapping as Kafka's do) and control records.
func TestWalkerRecords(t *testing.T) {
	hdrs := []record.Header{{Key: []byte("h"), Value: nil}, {Key: []byte("e"), Value: []byte{}}}
	recs := []record.Record{{Timestamp: 1, Key: []byte("k"), Headers: hdrs}, {Timestamp: 2, Value: []byte("vv")}, {Timestamp: 3}}
	type view struct {
		offset            int64
		keySize, valSize  int
		headers, sequence int32
	}
	for _, tt := range []struct {
		name string
		seq  int32
		want []view
	}{
		{"no_sequence", record.NoSequence, []view{{0, 1, -1, 2, -1}, {1, -1, 2, 0, -1}, {2, -1, -1, 0, -1}}},
		{"sequence", 5, []view{{0, 1, -1, 2, 5}, {1, -1, 2, 0, 6}, {2, -1, -1, 0, 7}}},
		{"sequence_wraps", math.MaxInt32 - 1, []view{{0, 1, -1, 2, math.MaxInt32 - 1}, {1, -1, 2, 0, math.MaxInt32}, {2, -1, -1, 0, 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := entry(t, v2Batch(t, 0, compress.LZ4, func(s *record.BatchSpec) { s.ProducerID, s.BaseSequence = 1, tt.seq }, recs...))
			var w describe.Walker
			var got []view
			for w.Reset(e); w.Next(); {
				r := w.Record()
				if r.Control || r.HasControlType || r.IsMarker {
					t.Errorf("offset %d: a control view in a data batch", r.Offset)
				}
				got = append(got, view{r.Offset, r.KeySize, r.ValueSize, int32(len(r.Headers)), r.Sequence})
			}
			if err := w.Err(); err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v, %v\nwant %v", got, err, tt.want)
			}
		})
	}
	t.Run("markers", func(t *testing.T) {
		var w record.Builder
		spec := record.NewBatchSpec(3, compress.None)
		spec.ProducerID = 1
		raw, err := w.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 9}, 5)
		if err != nil {
			t.Fatal(err)
		}
		e := entry(t, raw)
		var dw describe.Walker
		if commit, abort := dw.TxnMarkers(e); commit || !abort {
			t.Errorf("markers: commit %t, abort %t", commit, abort)
		}
		dw.Reset(e)
		if !dw.Next() {
			t.Fatal(dw.Err())
		}
		r := dw.Record()
		if !r.Control || !r.HasControlType || r.ControlType != record.ControlAbort || !r.IsMarker || r.Marker.CoordinatorEpoch != 9 || r.Sequence != record.NoSequence {
			t.Errorf("%+v", r)
		}
	})
	t.Run("legacy", func(t *testing.T) {
		e := entry(t, legacy(t, record.LegacySpec{Offset: 10, Magic: record.MagicV1, Codec: compress.Snappy}, recs...))
		var w describe.Walker
		var offsets []int64
		for w.Reset(e); w.Next(); {
			r := w.Record()
			if r.Sequence != record.NoSequence || r.Control || len(r.Headers) != 0 {
				t.Errorf("%+v", r)
			}
			offsets = append(offsets, r.Offset)
		}
		if !slices.Equal(offsets, []int64{10, 11, 12}) || w.Err() != nil {
			t.Errorf("offsets %v, %v", offsets, w.Err())
		}
	})
}

// TestPeekEntry describes entries whose checksum fails, and refuses what
// cannot be one.
func TestPeekEntry(t *testing.T) {
	v2 := v2Batch(t, 3, compress.None, nil, record.Record{Value: []byte("x")})
	v2[len(v2)-1] ^= 1
	v1 := legacy(t, record.LegacySpec{Offset: 8, Magic: record.MagicV1, Timestamp: 99}, record.Record{Key: []byte("k")})
	v1[len(v1)-1] ^= 1
	for _, tt := range []struct {
		name string
		raw  []byte
		ok   bool
		last int64
		ts   int64
	}{
		{"v2_bad_crc", v2, true, 3, 0},
		{"v1_bad_crc", v1, true, 8, 99},
		{"v1_without_timestamp", v1[:record.LegacyTimestampOffset], true, 8, record.NoTimestamp},
		{"legacy_without_attributes", v1[:record.LegacyAttributesOffset], false, 0, 0},
		{"short", v2[:record.HeaderSizeUpToMagic-1], false, 0, 0},
		{"v2_short_header", v2[:record.RecordBatchOverhead-1], false, 0, 0},
		{"unknown_magic", append(slices.Clone(v2[:record.MagicOffset]), 7, 0, 0, 0, 0), false, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := describe.PeekEntry(tt.raw, 50)
			if ok != tt.ok {
				t.Fatalf("ok %t, want %t", ok, tt.ok)
			}
			if !ok {
				return
			}
			if e.Position != 50 || e.LastOffset() != tt.last || e.MaxTimestamp() != tt.ts || e.Size() != len(tt.raw) {
				t.Errorf("position %d, last offset %d, timestamp %d, size %d", e.Position, e.LastOffset(), e.MaxTimestamp(), e.Size())
			}
			if e.Magic != record.MagicV2 && (e.Legacy.Key != nil || e.Legacy.Value != nil) {
				t.Errorf("a peeked legacy message has a key or value: %+v", e.Legacy)
			}
		})
	}
}

// TestIndex reads an offset and a time index through one type.
func TestIndex(t *testing.T) {
	const base = 100
	fsys := vfs.NewMem()
	var oi, ti []byte
	for _, e := range []index.Entry{{Offset: 101, Position: 0}, {Offset: 105, Position: 4096}, {Offset: 104, Position: 8192}} {
		oi, _ = index.AppendEntry(oi, base, e)
	}
	for _, e := range []timeindex.Entry{{Timestamp: 10, Offset: 101}, {Timestamp: 9, Offset: 105}} {
		ti, _ = timeindex.AppendEntry(ti, base, e)
	}
	oi = append(oi, make([]byte, index.EntrySize)...) // one zero entry
	vfs.WriteFile(fsys, "00000000000000000100.index", oi, 0o644)
	vfs.WriteFile(fsys, "00000000000000000100.timeindex", ti, 0o644)
	for _, tt := range []struct {
		kind    describe.IndexKind
		name    string
		entries int
		valid   int
		pairs   [][2]int64
		order   []int // the slots out of order
		orderAs string
	}{
		{describe.OffsetIndex, "00000000000000000100.index", 4, 3, [][2]int64{{101, 0}, {105, 4096}, {104, 8192}, {100, 0}}, []int{2}, finding.KindIndexOffsetOrder},
		{describe.TimeIndex, "00000000000000000100.timeindex", 2, 2, [][2]int64{{10, 101}, {9, 105}}, []int{1}, finding.KindTimeOutOfOrder},
	} {
		t.Run(tt.kind.String(), func(t *testing.T) {
			x, err := describe.OpenIndex(fsys, tt.name, base, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if x.Kind() != tt.kind || x.Entries() != tt.entries || x.Padding().ValidEntries != tt.valid || x.Length() != int64(tt.entries*tt.kind.EntrySize()) {
				t.Errorf("kind %v, %d entries (%d valid), %d bytes", x.Kind(), x.Entries(), x.Padding().ValidEntries, x.Length())
			}
			if (x.Offset() != nil) != (tt.kind == describe.OffsetIndex) || (x.Time() != nil) != (tt.kind == describe.TimeIndex) {
				t.Error("the index beneath is not of the kind")
			}
			all := x.AppendAll(nil)
			var pairs [][2]int64
			var order []int
			var details []string
			for i, e := range all {
				a, b := e.Pair()
				pairs = append(pairs, [2]int64{a, b})
				if e != x.Entry(i) || e.Slot != i || e.Position != int64(i*tt.kind.EntrySize()) || e.Kind != tt.kind {
					t.Errorf("entry %d: %+v, Entry(%d) %+v", i, e, i, x.Entry(i))
				}
				if i > 0 && i < tt.valid {
					if p, bad := e.OutOfOrder(tt.name, &all[i-1]); bad {
						order = append(order, i)
						details = append(details, p.Detail)
						if p.Kind != tt.orderAs || p.Position != e.Position || p.Level != finding.Error || p.File != tt.name {
							t.Errorf("problem %+v", p)
						}
					}
				}
			}
			if !slices.Equal(pairs, tt.pairs) || !slices.Equal(order, tt.order) {
				t.Errorf("pairs %v, out of order %v; want %v, %v", pairs, order, tt.pairs, tt.order)
			}
			// The cross-check against an empty log finds the same order
			// break as the one OutOfOrder reports, in the same words.
			found := false
			for _, p := range x.Verify(nil) {
				found = found || p.Kind == tt.orderAs && p.Position == int64(tt.order[0]*tt.kind.EntrySize()) && p.Detail == details[0]
			}
			if !found {
				t.Errorf("Verify did not report the order break: %+v", x.Verify(nil))
			}
		})
	}
	if _, err := describe.OpenIndex(fsys, "00000000000000000000.index", 0, describe.OffsetIndex); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing index: %v", err)
	}
}

// TestLayoutLegacy lays out legacy messages: the fields tile the entry at
// the offsets of package record, and a bad CRC is marked.
func TestLayoutLegacy(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spec  record.LegacySpec
		rec   record.Record
		names []string
	}{
		{"v0", record.LegacySpec{Offset: 1, Magic: record.MagicV0}, record.Record{Key: []byte("k"), Value: []byte("value")},
			[]string{"offset", "size", "crc", "magic", "attributes", "keyLength", "key", "valueLength", "value"}},
		{"v1_null_key", record.LegacySpec{Offset: 1, Magic: record.MagicV1, Timestamp: 5}, record.Record{Value: []byte("value")},
			[]string{"offset", "size", "crc", "magic", "attributes", "timestamp", "keyLength", "valueLength", "value"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := legacy(t, tt.spec, tt.rec)
			l := describe.LayoutEntry(raw, 1000, 100)
			var names []string
			at := int64(1000)
			for _, f := range l.Fields {
				names = append(names, f.Name)
				if f.Start != at || f.Record != -1 || f.Bad {
					t.Errorf("field %+v, want it at %d", f, at)
				}
				at = f.End
			}
			if !slices.Equal(names, tt.names) || at != 1000+int64(len(raw)) || l.Truncated || l.Error != "" || l.Magic != tt.spec.Magic {
				t.Errorf("fields %v to %d of %d bytes, truncated %t, error %q", names, at, len(raw), l.Truncated, l.Error)
			}
			if f := l.Fields[3]; f.Start != 1000+record.LegacyMagicOffset || f.End-f.Start != record.LegacyMagicSize {
				t.Errorf("magic field %+v", f)
			}
			raw[len(raw)-1] ^= 1
			if l := describe.LayoutEntry(raw, 0, 100); !l.Fields[2].Bad {
				t.Errorf("a bad crc is not marked: %+v", l.Fields[2])
			}
			if l := describe.LayoutEntry(raw, 0, 3); len(l.Fields) != 3 || !l.Truncated {
				t.Errorf("3 fields at most: %d, truncated %t", len(l.Fields), l.Truncated)
			}
		})
	}
}

// TestWalkerAllocs checks that walking an uncompressed batch's records
// allocates nothing once the Walker is warm.
func TestWalkerAllocs(t *testing.T) {
	recs := make([]record.Record, 50)
	for i := range recs {
		recs[i] = record.Record{Timestamp: int64(i), Value: []byte("value"), Headers: []record.Header{{Key: []byte("h")}}}
	}
	e := entry(t, v2Batch(t, 0, compress.None, nil, recs...))
	var w describe.Walker
	n := 0
	walk := func() {
		b := describe.NewBatch(e)
		for w.Reset(e); w.Next(); {
			n += w.Record().KeySize
		}
		n += b.Count
	}
	walk()
	if a := testing.AllocsPerRun(100, walk); a != 0 {
		t.Errorf("%v allocations per walk", a)
	}
}
