package verify_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// batch describes a batch of a synthetic log.
type batch struct {
	records   int
	valueSize int
	ts        []int64 // per record; default base+i
	codec     compress.Codec
	abort     int64 // producer id of an ABORT marker batch (records ignored)
}

// buildLog returns the bytes of a log of batches from offset base, and its
// summary.
func buildLog(tb testing.TB, base int64, batches []batch) ([]byte, *verify.LogSummary) {
	tb.Helper()
	var b []byte
	var w record.Builder
	off := base
	for _, bt := range batches {
		var err error
		if bt.abort != 0 {
			spec := record.NewBatchSpec(off, compress.None)
			spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = bt.abort, 0, -1
			spec.Transactional = true
			b, err = w.AppendEndTxnMarker(b, &spec, record.EndTxnMarker{Type: record.ControlAbort}, 1_700_000_000_000)
			off++
		} else {
			recs := make([]record.Record, bt.records)
			for i := range recs {
				recs[i].Value = bytes.Repeat([]byte{'v'}, bt.valueSize)
				recs[i].Timestamp = 1_700_000_000_000 + off + int64(i)
				if bt.ts != nil {
					recs[i].Timestamp = bt.ts[i]
				}
			}
			spec := record.NewBatchSpec(off, bt.codec)
			b, err = w.AppendBatch(b, &spec, recs)
			off += int64(bt.records)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	s, err := verify.SummarizeLog(bytes.NewReader(b), int64(len(b)), "x.log")
	if err != nil || s.Err != nil {
		tb.Fatal(err, s.Err)
	}
	return b, s
}

func TestSummarizeLog(t *testing.T) {
	_, s := buildLog(t, 100, []batch{
		{records: 3, valueSize: 10, ts: []int64{5, 9, 9}},
		{records: 2, valueSize: 10, ts: []int64{20, 7}, codec: compress.Gzip},
		{abort: 42},
	})
	if len(s.Entries) != 3 || s.ValidEnd != s.Size {
		t.Fatalf("%d entries, valid end %d of %d", len(s.Entries), s.ValidEnd, s.Size)
	}
	e0, e1, e2 := s.Entries[0], s.Entries[1], s.Entries[2]
	if e0.BaseOffset != 100 || e0.LastOffset != 102 || e0.MaxTimestamp != 9 || e0.OffsetOfMaxTimestamp != 101 || e0.Compressed {
		t.Errorf("batch 0: %+v", e0)
	}
	if e1.BaseOffset != 103 || e1.LastOffset != 104 || e1.MaxTimestamp != 20 || e1.OffsetOfMaxTimestamp != 103 || !e1.Compressed || e1.Position != e0.End() {
		t.Errorf("batch 1: %+v", e1)
	}
	if !e2.Control || !e2.Abort || e2.ProducerID != 42 || e2.BaseOffset != 105 {
		t.Errorf("marker: %+v", e2)
	}
	// A torn tail is not an error; corruption stops the walk.
	b, _ := buildLog(t, 0, []batch{{records: 1, valueSize: 5}, {records: 1, valueSize: 5}})
	torn, err := verify.SummarizeLog(bytes.NewReader(b[:len(b)-3]), int64(len(b)-3), "x.log")
	if err != nil || torn.Err != nil || len(torn.Entries) != 1 || torn.ValidEnd != torn.Entries[0].End() {
		t.Fatalf("torn: %+v %v", torn, err)
	}
	bad := slices.Clone(b)
	bad[30] ^= 1 // first batch's CRC-covered bytes
	c, err := verify.SummarizeLog(bytes.NewReader(bad), int64(len(bad)), "x.log")
	if err != nil || c.Err == nil || len(c.Entries) != 0 {
		t.Fatalf("corrupt: %+v %v", c, err)
	}
}

// kinds returns "level:kind" of each problem.
func kinds(ps []finding.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%v:%s@%d", p.Level, p.Kind, p.Position))
	}
	return out
}

func TestVerifyOffsetIndex(t *testing.T) {
	// Five 1-record batches of ~2 KiB, then three more.
	bs := make([]batch, 8)
	for i := range bs {
		bs[i] = batch{records: 1 + i%2, valueSize: 2000}
	}
	_, s := buildLog(t, 0, bs)
	E := s.Entries
	pos := func(i int) int32 { return int32(E[i].Position) }
	for _, tt := range []struct {
		name  string
		index []index.Entry
		want  []string
	}{
		{"exact", []index.Entry{{Offset: E[2].LastOffset, Position: pos(2)}, {Offset: E[5].LastOffset, Position: pos(5)}}, nil},
		{"multi_batch_append", []index.Entry{{Offset: E[4].LastOffset, Position: pos(2)}}, []string{"info:index-multi-batch-append@0"}},
		{"inside_batch", []index.Entry{{Offset: E[3].BaseOffset, Position: pos(3)}}, []string{"info:index-offset-inside-batch@0"}},
		{"not_boundary", []index.Entry{{Offset: E[2].LastOffset, Position: pos(2) + 1}}, []string{"error:index-not-batch-boundary@0"}},
		{"past_end", []index.Entry{{Offset: E[7].LastOffset, Position: int32(s.ValidEnd)}}, []string{"error:index-position-past-end@0"}},
		{"negative_position", []index.Entry{{Offset: E[1].LastOffset, Position: -8}}, []string{"error:index-position-past-end@0"}},
		// Offset of batch 1 indexed at batch 3's position: a lookup of
		// it would start after the batch holding it.
		{"before_batch", []index.Entry{{Offset: E[1].LastOffset, Position: pos(3)}}, []string{"error:index-offset-before-batch@0"}},
		{"past_log_end", []index.Entry{{Offset: E[7].LastOffset + 5, Position: pos(7)}}, []string{"error:index-offset-past-log-end@0"}},
		{"order", []index.Entry{{Offset: E[5].LastOffset, Position: pos(5)}, {Offset: E[3].LastOffset, Position: pos(3)}}, []string{"error:index-offset-order@8"}},
		{"position_order", []index.Entry{{Offset: E[3].LastOffset, Position: pos(5)}, {Offset: E[6].LastOffset, Position: pos(4)}}, []string{"error:index-offset-before-batch@0", "error:index-offset-order@8", "info:index-multi-batch-append@8"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			var raw []byte
			for _, e := range tt.index {
				raw = append(raw, encode(t, 0, e)...)
			}
			writeFile(t, fsys, "x.index", raw)
			x := openOffset(t, fsys, "x.index", 0, -1, false)
			got := kinds(verify.OffsetIndex(x, s.Entries))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("problems %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVerifyIgnoresPadding(t *testing.T) {
	bs := make([]batch, 6)
	for i := range bs {
		bs[i] = batch{records: 1, valueSize: 2000}
	}
	_, s := buildLog(t, 0, bs)
	built, err := verify.RebuildOffsetIndex(nil, 0, s.Entries, segment.DefaultIndexIntervalBytes)
	if err != nil || len(built) == 0 {
		t.Fatal(err, len(built))
	}
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.index", append(slices.Clone(built), make([]byte, 800)...))
	x := openOffset(t, fsys, "x.index", 0, -1, false)
	if ps := verify.OffsetIndex(x, s.Entries); len(ps) != 0 {
		t.Fatalf("problems %v", kinds(ps))
	}
	p := verify.Padding(x.Path(), index.EntrySize, x.Padding(), true)
	if p == nil || p.Kind != finding.KindZeroPadding || p.Level != finding.Warning || p.Position != int64(len(built)) {
		t.Fatalf("padding problem %+v", p)
	}
	if verify.Padding(x.Path(), index.EntrySize, index.Padding{Entries: 3, ValidEntries: 3}, true) != nil {
		t.Fatal("padding problem without padding")
	}
}

// TestRebuildOffsetIndex checks the interval rule on a log whose batch
// sizes are known: an entry for a batch whose start is more than 4096
// bytes after the last indexed batch's start.
func TestRebuildOffsetIndex(t *testing.T) {
	bs := make([]batch, 10)
	for i := range bs {
		bs[i] = batch{records: 2, valueSize: 1500} // ~3 KiB a batch
	}
	_, s := buildLog(t, 300, bs)
	got, err := verify.RebuildOffsetIndex(nil, 300, s.Entries, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	last := int64(0)
	for _, e := range s.Entries {
		if e.Position-last > 4096 {
			want = append(want, encode(t, 300, index.Entry{Offset: e.LastOffset, Position: int32(e.Position)})...)
			last = e.Position
		}
	}
	if !bytes.Equal(got, want) || len(want) == 0 {
		t.Fatalf("rebuilt %x, want %x", got, want)
	}
	// Every rebuilt entry verifies exactly.
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.index", got)
	if ps := verify.OffsetIndex(openOffset(t, fsys, "x.index", 300, -1, false), s.Entries); len(ps) != 0 {
		t.Fatalf("problems %v", kinds(ps))
	}
	// Interval 0 indexes every batch but the first.
	all, err := verify.RebuildOffsetIndex(nil, 300, s.Entries, 0)
	if err != nil || len(all) != 8*(len(s.Entries)-1) {
		t.Fatalf("interval 0: %d bytes, %v", len(all), err)
	}
	if _, err := verify.RebuildOffsetIndex(nil, 304, s.Entries, 0); !errors.Is(err, index.ErrOffsetOverflow) {
		t.Fatal("base offset above the first batch's offsets did not fail")
	}
}

func TestVerifyTxnIndex(t *testing.T) {
	_, s := buildLog(t, 0, []batch{
		{records: 3, valueSize: 10}, // 0..2
		{abort: 7},                  // 3
		{records: 2, valueSize: 10}, // 4..5
		{abort: 8},                  // 6
	})
	for _, tt := range []struct {
		name string
		txns []index.AbortedTxn
		tail []byte
		want []string
	}{
		{"good", []index.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 3}, {ProducerID: 8, FirstOffset: 4, LastOffset: 6}}, nil, nil},
		{"wrong_producer", []index.AbortedTxn{{ProducerID: 8, FirstOffset: 0, LastOffset: 3}}, nil, []string{"error:txnindex-no-abort-marker@0"}},
		{"not_a_marker", []index.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2}}, nil, []string{"error:txnindex-no-abort-marker@0"}},
		{"first_above_last", []index.AbortedTxn{{ProducerID: 7, FirstOffset: 5, LastOffset: 3}}, nil, []string{"error:txnindex-out-of-order@0"}},
		{"order", []index.AbortedTxn{{ProducerID: 8, FirstOffset: 4, LastOffset: 6}, {ProducerID: 7, FirstOffset: 0, LastOffset: 3}}, nil, []string{"error:txnindex-out-of-order@34"}},
		{"partial", []index.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 3}}, []byte{1, 2}, []string{"error:txnindex-partial-entry@34"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMem()
			writeFile(t, fsys, "x.txnindex", append(encodeTxns(tt.txns...), tt.tail...))
			x := openTxn(t, fsys, "x.txnindex", 0, false)
			if got := kinds(verify.TxnIndex(x, s.Entries)); !slices.Equal(got, tt.want) {
				t.Fatalf("problems %v, want %v", got, tt.want)
			}
		})
	}
	// Below the base offset.
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.txnindex", encodeTxns(index.AbortedTxn{ProducerID: 7, LastOffset: 3}))
	x := openTxn(t, fsys, "x.txnindex", 10, false)
	if got := kinds(verify.TxnIndex(x, nil)); !slices.Equal(got, []string{"error:txnindex-offset-before-base@0"}) {
		t.Fatalf("problems %v", got)
	}
}
