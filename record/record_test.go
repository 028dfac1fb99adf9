package record_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

var allCodecs = []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}

// plainRecord is a copy of a decoded record, for comparisons.
type plainRecord struct {
	Offset, Timestamp int64
	Key, Value        []byte
	Headers           []record.Header
}

func copyRecord(r *record.Record) plainRecord {
	p := plainRecord{Offset: r.Offset, Timestamp: r.Timestamp, Key: clone(r.Key), Value: clone(r.Value)}
	for _, h := range r.Headers {
		p.Headers = append(p.Headers, record.Header{Key: clone(h.Key), Value: clone(h.Value)})
	}
	return p
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func decodeBatch(t testing.TB, buf []byte) (record.Batch, []plainRecord) {
	t.Helper()
	b, rest, err := record.ReadBatch(buf)
	if err != nil {
		t.Fatalf("ReadBatch: %v", err)
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the batch", len(rest))
	}
	var it record.Iterator
	var r record.Record
	var out []plainRecord
	it.Reset(&b)
	for it.Next(&r) {
		out = append(out, copyRecord(&r))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterate: %v", err)
	}
	return b, out
}

func randomRecords(rng *rand.Rand, n int, baseTs int64) []record.Record {
	recs := make([]record.Record, n)
	for i := range recs {
		r := &recs[i]
		r.Timestamp = baseTs + int64(rng.IntN(2000)) - 1000
		if rng.IntN(4) != 0 {
			r.Key = []byte(fmt.Sprintf("key-%d", rng.IntN(1000)))
		}
		if rng.IntN(10) != 0 {
			r.Value = make([]byte, rng.IntN(300))
			for j := range r.Value {
				r.Value[j] = byte('a' + rng.IntN(6))
			}
		}
		for h := rng.IntN(3); h > 0; h-- {
			var v []byte
			if rng.IntN(3) != 0 {
				v = []byte(fmt.Sprint(rng.Int()))
			}
			r.Headers = append(r.Headers, record.Header{Key: []byte(fmt.Sprintf("h%d", h)), Value: v})
		}
	}
	return recs
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var w record.Builder
	for _, codec := range allCodecs {
		for _, n := range []int{1, 2, 17, 500} {
			for _, txn := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/n=%d/txn=%v", codec, n, txn), func(t *testing.T) {
					recs := randomRecords(rng, n, 1_700_000_000_000)
					spec := record.NewBatchSpec(1000, codec)
					spec.PartitionLeaderEpoch = 7
					if txn {
						spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = 42, 3, 100, true
					}
					buf, err := w.AppendBatch([]byte("prefix"), &spec, recs)
					if err != nil {
						t.Fatal(err)
					}
					if string(buf[:6]) != "prefix" {
						t.Fatal("dst prefix modified")
					}
					b, got := decodeBatch(t, buf[6:])
					if b.BaseOffset != 1000 || b.LastOffset() != 1000+int64(n)-1 || int(b.RecordCount) != n ||
						b.PartitionLeaderEpoch != 7 || b.Attributes.Codec() != codec || b.Attributes.IsTransactional() != txn {
						t.Fatalf("header %+v", b.BatchHeader)
					}
					var maxTs int64 = -1
					for i := range recs {
						maxTs = max(maxTs, recs[i].Timestamp)
					}
					if b.MaxTimestamp != maxTs || b.BaseTimestamp != recs[0].Timestamp {
						t.Fatalf("timestamps base %d max %d, want %d %d", b.BaseTimestamp, b.MaxTimestamp, recs[0].Timestamp, maxTs)
					}
					want := make([]plainRecord, n)
					for i := range recs {
						want[i] = copyRecord(&recs[i])
						want[i].Offset = 1000 + int64(i)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("records differ (-want +got):\n%s", diff)
					}
					// Encode, decode, encode gives the same bytes.
					again, err := w.AppendBatch(nil, &spec, recs)
					if err != nil || !bytes.Equal(again, buf[6:]) {
						t.Fatalf("re-encode differs (err %v)", err)
					}
				})
			}
		}
	}
}

func TestLogAppendTimeAndEmptyBatch(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(3, 4)), 5, 1000)
	spec := record.NewBatchSpec(0, compress.None)
	spec.TimestampType = record.LogAppendTime
	spec.LogAppendTime = 99999
	buf, err := record.AppendBatch(nil, &spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	b, got := decodeBatch(t, buf)
	if b.Attributes.TimestampType() != record.LogAppendTime || b.MaxTimestamp != 99999 {
		t.Fatalf("header %+v", b.BatchHeader)
	}
	for _, r := range got {
		if r.Timestamp != 99999 {
			t.Fatalf("record timestamp %d under LogAppendTime", r.Timestamp)
		}
	}

	// An empty batch left by compaction: count 0, the range kept.
	empty := record.NewBatchSpec(50, compress.None)
	empty.LastOffsetDelta = 9
	empty.MaxTimestamp = 12345
	buf, err = record.AppendBatch(nil, &empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, got = decodeBatch(t, buf)
	if len(got) != 0 || b.RecordCount != 0 || b.NextOffset() != 60 || b.BaseTimestamp != -1 || b.MaxTimestamp != 12345 {
		t.Fatalf("empty batch %+v, %d records", b.BatchHeader, len(got))
	}

	// A compacted batch with gaps between offsets.
	gaps := record.NewBatchSpec(100, compress.None)
	gaps.UseRecordOffsets = true
	gaps.LastOffsetDelta = 20
	recs = []record.Record{{Offset: 101, Value: []byte("a")}, {Offset: 105, Value: []byte("b")}}
	buf, err = record.AppendBatch(nil, &gaps, recs)
	if err != nil {
		t.Fatal(err)
	}
	b, got = decodeBatch(t, buf)
	if b.LastOffset() != 120 || len(got) != 2 || got[0].Offset != 101 || got[1].Offset != 105 {
		t.Fatalf("compacted batch %+v %v", b.BatchHeader, got)
	}
}

func TestControlBatch(t *testing.T) {
	var w record.Builder
	spec := record.NewBatchSpec(10, compress.None)
	spec.ProducerID, spec.ProducerEpoch = 7, 1
	for _, typ := range []record.ControlType{record.ControlAbort, record.ControlCommit} {
		buf, err := w.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ, CoordinatorEpoch: 5}, 1234)
		if err != nil {
			t.Fatal(err)
		}
		b, got := decodeBatch(t, buf)
		if !b.Attributes.IsControl() || !b.Attributes.IsTransactional() || len(got) != 1 {
			t.Fatalf("marker batch %+v", b.BatchHeader)
		}
		m, err := record.ParseEndTxnMarker(got[0].Key, got[0].Value)
		if err != nil || m.Type != typ || m.CoordinatorEpoch != 5 {
			t.Fatalf("marker %+v, %v", m, err)
		}
	}
	if _, err := record.ParseControlKey([]byte{0, 0, 0}); !errors.Is(err, format.ErrInvalid) {
		t.Fatalf("short control key: %v", err)
	}
}

func TestLegacyRoundTrip(t *testing.T) {
	var w record.Builder
	recs := []record.Record{
		{Timestamp: 100, Key: []byte("k1"), Value: []byte("v1")},
		{Timestamp: 300, Key: nil, Value: []byte("v2")},
		{Timestamp: 200, Key: []byte("k3"), Value: nil},
	}
	for _, magic := range []int8{record.MagicV0, record.MagicV1} {
		for _, codec := range allCodecs {
			t.Run(fmt.Sprintf("v%d/%v", magic, codec), func(t *testing.T) {
				var buf []byte
				var err error
				s := record.LegacySpec{Offset: 500, Magic: magic, Codec: codec}
				if codec == compress.None {
					for i := range recs {
						s.Offset, s.Timestamp = 500+int64(i), recs[i].Timestamp
						if buf, err = record.AppendLegacyMessage(buf, &s, recs[i].Key, recs[i].Value); err != nil {
							t.Fatal(err)
						}
					}
				} else if buf, err = w.AppendLegacyWrapper(nil, &s, recs); err != nil {
					t.Fatal(err)
				}
				var got []plainRecord
				var lit record.LegacyIterator
				var r record.Record
				sc := record.NewScanner(buf, "", 0)
				sc.Validate = true
				for sc.Next() {
					e := sc.Entry()
					if e.Magic != magic {
						t.Fatalf("magic %d", e.Magic)
					}
					lit.Reset(&e.Legacy)
					for lit.Next(&r) {
						got = append(got, copyRecord(&r))
					}
					if err := lit.Err(); err != nil {
						t.Fatal(err)
					}
				}
				if err := sc.Err(); err != nil {
					t.Fatal(err)
				}
				if len(got) != 3 {
					t.Fatalf("%d records", len(got))
				}
				for i := range got {
					wantTs := recs[i].Timestamp
					if magic == record.MagicV0 {
						wantTs = record.NoTimestamp
					}
					if got[i].Offset != 500+int64(i) || got[i].Timestamp != wantTs ||
						!bytes.Equal(got[i].Key, recs[i].Key) || (got[i].Key == nil) != (recs[i].Key == nil) ||
						!bytes.Equal(got[i].Value, recs[i].Value) || (got[i].Value == nil) != (recs[i].Value == nil) {
						t.Fatalf("record %d = %+v, want %+v", i, got[i], recs[i])
					}
				}
			})
		}
	}
}

// mustBatch builds an uncompressed batch of n small records.
func mustBatch(t testing.TB, n int) []byte {
	t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Timestamp: 1000 + int64(i), Key: []byte("k"), Value: []byte("value")}
	}
	b, err := record.AppendBatch(nil, &spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rewrite patches buf with f and fixes up the CRC, so that the structural
// checks behind the CRC are exercised.
func rewrite(buf []byte, f func(b []byte)) []byte {
	b := append([]byte{}, buf...)
	f(b)
	format.PutUint32(b[record.CRCOffset:], format.CRC32C(b[record.AttributesOffset:]))
	return b
}

func TestBatchErrors(t *testing.T) {
	good := mustBatch(t, 3)
	tests := []struct {
		name string
		in   []byte
		want error
		at   int64 // expected error offset, -1 to skip
	}{
		{"short_header", good[:10], format.ErrTruncated, 0},
		{"truncated", good[:len(good)-1], format.ErrTruncated, record.LengthOffset},
		{"bad_magic", rewrite(good, func(b []byte) { b[record.MagicOffset] = 3 }), format.ErrMagic, record.MagicOffset},
		{"length_below_min", rewrite(good, func(b []byte) { format.PutInt32(b[record.LengthOffset:], 10) }), format.ErrInvalid, record.LengthOffset},
		{"negative_length", rewrite(good, func(b []byte) { format.PutInt32(b[record.LengthOffset:], -5) }), format.ErrInvalid, record.LengthOffset},
		{"crc", func() []byte { b := append([]byte{}, good...); b[len(b)-1] ^= 1; return b }(), format.ErrCRC, record.CRCOffset},
		{"codec_7", rewrite(good, func(b []byte) { b[record.AttributesOffset+1] |= 7 }), format.ErrCodec, record.AttributesOffset},
		{"negative_count", rewrite(good, func(b []byte) { format.PutInt32(b[record.RecordsCountOffset:], -1) }), format.ErrInvalid, record.RecordsCountOffset},
		{"count_too_large_for_bytes", rewrite(good, func(b []byte) {
			format.PutInt32(b[record.RecordsCountOffset:], 1_000_000)
			format.PutInt32(b[record.LastOffsetDeltaOffset:], 1_000_000)
		}), format.ErrInvalid, record.RecordsCountOffset},
		{"last_offset_delta_below_count", rewrite(good, func(b []byte) { format.PutInt32(b[record.LastOffsetDeltaOffset:], 0) }), format.ErrInvalid, record.LastOffsetDeltaOffset},
		{"offset_overflow", rewrite(good, func(b []byte) { format.PutInt64(b[record.BaseOffsetOffset:], 1<<63-2) }), format.ErrInvalid, 0},
		{"txn_without_producer", rewrite(good, func(b []byte) { b[record.AttributesOffset+1] |= 0x10 }), format.ErrInvalid, record.ProducerIDOffset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := record.ReadBatch(tt.in)
			var ce *format.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want a CorruptionError wrapping %v", err, tt.want)
			}
			if tt.at >= 0 && ce.Offset != tt.at {
				t.Fatalf("error at byte %d, want %d (%v)", ce.Offset, tt.at, err)
			}
		})
	}
}

func TestRecordErrors(t *testing.T) {
	good := mustBatch(t, 2) // records: [len][attr][tsDelta][offDelta][1]k[5]value[0]
	rec0 := record.RecordsOffset
	tests := []struct {
		name  string
		patch func(b []byte)
	}{
		{"count_more_than_records", func(b []byte) {
			format.PutInt32(b[record.RecordsCountOffset:], 3)
			format.PutInt32(b[record.LastOffsetDeltaOffset:], 2)
		}},
		{"count_fewer_than_records", func(b []byte) { format.PutInt32(b[record.RecordsCountOffset:], 1) }},
		{"record_length_negative", func(b []byte) { b[rec0] = 0x01 }},
		{"record_length_longer", func(b []byte) { b[rec0] += 2 }},
		{"record_length_shorter", func(b []byte) { b[rec0] -= 2 }},
		{"key_length_below_minus_one", func(b []byte) { b[rec0+4] = 0x03 }},
		{"key_length_past_end", func(b []byte) { b[rec0+4] = 0x7e }},
		{"offset_delta_past_last", func(b []byte) { b[rec0+3] = 0x08 }},
		{"offset_delta_negative", func(b []byte) { b[rec0+3] = 0x01 }},
		{"header_count_negative", func(b []byte) { b[rec0+13] = 0x01 }},
		{"header_count_past_end", func(b []byte) { b[rec0+13] = 0x10 }},
		{"varint_too_long", func(b []byte) {
			copy(b[rec0+2:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := rewrite(good, tt.patch)
			b, _, err := record.ReadBatch(buf)
			if err == nil {
				var it record.Iterator
				err = it.Validate(&b)
			}
			var ce *format.CorruptionError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a CorruptionError", err)
			}
			if ce.Offset < 0 || ce.Offset > int64(len(buf)) {
				t.Fatalf("error offset %d outside the batch", ce.Offset)
			}
		})
	}
}

func TestScannerTails(t *testing.T) {
	one := mustBatch(t, 2)
	two := append(append([]byte{}, one...), one...)
	// A partial entry at a non-zero offset, so that its bytes are not all
	// zero (a batch at offset 0 starts with ten zero bytes).
	at5 := rewrite(one, func(b []byte) { format.PutInt64(b, 5) })
	tests := []struct {
		name    string
		in      []byte
		entries int
		kind    record.TailKind
		tail    int
		corrupt bool
	}{
		{"clean", two, 2, record.TailNone, 0, false},
		{"partial_header", append(append([]byte{}, one...), at5[:10]...), 1, record.TailPartial, 10, false},
		{"zeros_short", append(append([]byte{}, one...), one[:10]...), 1, record.TailZeros, 10, false},
		{"partial_batch", append(append([]byte{}, one...), at5[:40]...), 1, record.TailPartial, 40, false},
		{"zero_padding", append(append([]byte{}, one...), make([]byte, 4096)...), 1, record.TailZeros, 4096, false},
		{"size_below_14", append(append([]byte{}, one...), rewrite(one, func(b []byte) { format.PutInt32(b[8:], 5) })...), 1, record.TailNone, 0, true},
		{"bad_crc_then_more", func() []byte {
			b := append([]byte{}, two...)
			b[len(one)+record.RecordsOffset] ^= 0xff
			return b
		}(), 1, record.TailNone, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := record.NewScanner(tt.in, "x.log", 1000)
			n := 0
			for s.Next() {
				if want := 1000 + int64(n*len(one)); s.Entry().Position != want {
					t.Fatalf("entry %d at %d, want %d", n, s.Entry().Position, want)
				}
				n++
			}
			if n != tt.entries {
				t.Fatalf("%d entries, want %d", n, tt.entries)
			}
			if (s.Err() != nil) != tt.corrupt {
				t.Fatalf("Err() = %v, corrupt=%v", s.Err(), tt.corrupt)
			}
			if tt.corrupt {
				var ce *format.CorruptionError
				if !errors.As(s.Err(), &ce) || ce.Path != "x.log" || ce.Offset < 1000+int64(len(one)) {
					t.Fatalf("error %v does not name the file and position", s.Err())
				}
				return
			}
			kind, at, rest := s.Tail()
			if kind != tt.kind || rest != tt.tail || (rest > 0 && at != 1000+int64(s.ValidBytes())) {
				t.Fatalf("Tail() = %v,%d,%d; want %v, %d bytes", kind, at, rest, tt.kind, tt.tail)
			}
		})
	}
}

// TestScannerNoCRC: with NoCRC a batch whose CRC is wrong passes, and
// every other header check still stops the scan, in Scanner and
// ReaderScanner alike.
func TestScannerNoCRC(t *testing.T) {
	one := mustBatch(t, 2)
	badCRC := append([]byte{}, one...)
	badCRC[record.CRCOffset] ^= 0xff
	badCodec := rewrite(one, func(b []byte) { b[record.AttributesOffset+1] |= 7 })
	badMagic := rewrite(one, func(b []byte) { b[record.MagicOffset] = 9 })
	for _, tt := range []struct {
		name        string
		in          []byte
		noCRC, with bool // scans cleanly with NoCRC, and without it
	}{
		{"clean", one, true, true},
		{"bad_crc", badCRC, true, false},
		{"bad_codec", badCodec, false, false},
		{"bad_magic", badMagic, false, false},
	} {
		in := append(append([]byte{}, one...), tt.in...)
		for _, noCRC := range []bool{true, false} {
			want := tt.with
			if noCRC {
				want = tt.noCRC
			}
			s := record.NewScanner(in, "x.log", 0)
			s.NoCRC = noCRC
			n := 0
			for s.Next() {
				n++
			}
			if got := s.Err() == nil && n == 2; got != want {
				t.Errorf("%s, NoCRC %v: Scanner read %d entries, err %v; want clean %v", tt.name, noCRC, n, s.Err(), want)
			}
			rs := record.ReaderScanner{NoCRC: noCRC, ChunkSize: len(one) + 7}
			rs.Reset(bytes.NewReader(in), int64(len(in)), "x.log", 0)
			n = 0
			for rs.Next() {
				n++
			}
			if got := rs.Err() == nil && n == 2; got != want {
				t.Errorf("%s, NoCRC %v: ReaderScanner read %d entries, err %v; want clean %v", tt.name, noCRC, n, rs.Err(), want)
			}
		}
	}
}

func TestIteratorAllocs(t *testing.T) {
	buf := mustBatch(t, 100)
	var it record.Iterator
	var r record.Record
	r.Headers = make([]record.Header, 0, 4)
	n := testing.AllocsPerRun(100, func() {
		b, _, err := record.ReadBatch(buf)
		if err != nil {
			t.Fatal(err)
		}
		it.Reset(&b)
		for it.Next(&r) {
		}
	})
	if n != 0 {
		t.Fatalf("uncompressed decode allocates %v times per batch, want 0", n)
	}
	var w record.Builder
	recs := randomRecords(rand.New(rand.NewPCG(5, 6)), 100, 0)
	spec := record.NewBatchSpec(0, compress.None)
	dst := make([]byte, 0, 1<<20)
	n = testing.AllocsPerRun(100, func() {
		var err error
		if dst, err = w.AppendBatch(dst[:0], &spec, recs); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("encode into a warm buffer allocates %v times, want 0", n)
	}
}

func TestCompressedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	recs := randomRecords(rand.New(rand.NewPCG(7, 8)), 100, 0)
	for _, codec := range allCodecs[1:] {
		t.Run(codec.String(), func(t *testing.T) {
			var w record.Builder
			spec := record.NewBatchSpec(0, codec)
			dst := make([]byte, 0, 1<<20)
			enc := func() {
				var err error
				if dst, err = w.AppendBatch(dst[:0], &spec, recs); err != nil {
					t.Fatal(err)
				}
			}
			enc() // warm
			if n := testing.AllocsPerRun(50, enc); n > 0 {
				t.Errorf("compressed encode allocates %v times per batch once warm", n)
			}
			var it record.Iterator
			var r record.Record
			dec := func() {
				b, _, err := record.ReadBatch(dst)
				if err != nil {
					t.Fatal(err)
				}
				it.Reset(&b)
				for it.Next(&r) {
				}
				if it.Err() != nil {
					t.Fatal(it.Err())
				}
			}
			dec()
			if n := testing.AllocsPerRun(50, dec); n > 0 {
				t.Errorf("compressed decode allocates %v times per batch once warm", n)
			}
		})
	}
}

// TestEntryIterator reads a v2 batch and a v1 compressed wrapper through
// one EntryIterator.
func TestEntryIterator(t *testing.T) {
	recs := []record.Record{{Timestamp: 10, Key: []byte("a"), Value: []byte("1")}, {Timestamp: 11, Value: []byte("2")}}
	spec := record.NewBatchSpec(5, compress.None)
	buf, err := record.AppendBatch(nil, &spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	// A v1 gzip wrapper at offsets 7..8 follows.
	var w record.Builder
	buf, err = w.AppendLegacyWrapper(buf, &record.LegacySpec{Magic: record.MagicV1, Codec: compress.Gzip, Offset: 7}, recs)
	if err != nil {
		t.Fatal(err)
	}
	var it record.EntryIterator
	var r record.Record
	var got []int64
	s := record.NewScanner(buf, "", 0)
	for s.Next() {
		it.Reset(s.Entry())
		for it.Next(&r) {
			got = append(got, r.Offset)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []int64{5, 6, 7, 8}; !cmp.Equal(got, want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
}
