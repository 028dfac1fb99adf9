package kafkalog_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// clock is a settable test clock.
type clock struct{ ms int64 }

func (c *clock) Now() time.Time { return time.UnixMilli(c.ms) }

// smallConfig is a config with tiny segments, so tests roll often.
func smallConfig(t testing.TB, segmentBytes int) kafkalog.Config {
	t.Helper()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		"segment.bytes":        fmt.Sprint(segmentBytes),
		"index.interval.bytes": "256",
		"segment.index.bytes":  "4096",
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testRecord is what a test appended, to compare reads with.
type testRecord struct {
	offset, ts int64
	key, value string
}

// mustOpen opens the log at dir on fsys with clock c.
func mustOpen(t testing.TB, fsys vfs.FS, dir string, cfg kafkalog.Config, c *clock) *kafkalog.Log {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// buildBatch builds a batch of n records starting at record number seq.
func buildBatch(t testing.TB, w *record.Builder, codec compress.Codec, seq, n int, ts int64) ([]byte, []testRecord) {
	t.Helper()
	recs := make([]record.Record, n)
	want := make([]testRecord, n)
	for i := range recs {
		k, v := fmt.Sprintf("k%d", seq+i), fmt.Sprintf("value-%d-%s", seq+i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
		recs[i] = record.Record{Timestamp: ts + int64(i), Key: []byte(k), Value: []byte(v)}
		want[i] = testRecord{ts: ts + int64(i), key: k, value: v}
	}
	spec := record.NewBatchSpec(0, codec)
	b, err := w.AppendBatch(nil, &spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b, want
}

// readAll reads every record from the log start offset to the end.
func readAll(t testing.TB, l *kafkalog.Log) []testRecord {
	t.Helper()
	var out []testRecord
	off := l.LogStartOffset()
	var it record.EntryIterator
	var r record.Record
	for off < l.LogEndOffset() {
		res, err := l.Read(off, 64<<10, nil, kafkalog.ReadOptions{})
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if len(res.Records) == 0 {
			t.Fatalf("Read(%d) returned nothing below the log end %d", off, l.LogEndOffset())
		}
		s := record.NewScanner(res.Records, "", 0)
		s.Validate = true
		for s.Next() {
			e := s.Entry()
			it.Reset(e)
			for it.Next(&r) {
				if r.Offset >= off {
					out = append(out, testRecord{r.Offset, r.Timestamp, string(r.Key), string(r.Value)})
				}
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
			off = e.LastOffset() + 1
		}
		if s.Err() != nil {
			t.Fatalf("Read(%d) returned corrupt data: %v", off, s.Err())
		}
	}
	return out
}

func equalRecords(t testing.TB, got, want []testRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestAppendReadRollReopen(t *testing.T) {
	fsys := vfs.NewMem()
	c := &clock{ms: 1_700_000_000_000}
	cfg := smallConfig(t, 2000)
	l := mustOpen(t, fsys, "data/orders-0", cfg, c)
	var w record.Builder
	var want []testRecord
	seq := 0
	for i := 0; i < 40; i++ {
		codec := []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}[i%5]
		b, recs := buildBatch(t, &w, codec, seq, 1+i%4, c.ms)
		res, err := l.Append(b, 3)
		if err != nil {
			t.Fatal(err)
		}
		if res.FirstOffset != int64(seq) || res.LastOffset != int64(seq+len(recs)-1) {
			t.Fatalf("append %d got offsets %d..%d, want %d..", i, res.FirstOffset, res.LastOffset, seq)
		}
		for j := range recs {
			recs[j].offset = int64(seq + j)
		}
		want = append(want, recs...)
		seq += len(recs)
		c.ms += 10
	}
	if n := len(l.Segments()); n < 3 {
		t.Fatalf("%d segments: the log did not roll", n)
	}
	equalRecords(t, readAll(t, l), want)
	// Reading from every offset starts at the batch holding it.
	for off := int64(0); off < int64(seq); off++ {
		res, err := l.Read(off, 1, nil, kafkalog.ReadOptions{})
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("Read(%d, 1) = %d bytes, %v", off, len(res.Records), err)
		}
		e, _, err := record.ReadBatch(res.Records)
		if err != nil || e.BaseOffset > off || e.LastOffset() < off {
			t.Fatalf("Read(%d) starts with batch %d..%d (%v)", off, e.BaseOffset, e.LastOffset(), err)
		}
	}
	var oor *kafkalog.OffsetOutOfRangeError
	if _, err := l.Read(int64(seq)+1, 100, nil, kafkalog.ReadOptions{}); !errors.As(err, &oor) || !errors.Is(err, kafkalog.ErrOffsetOutOfRange) {
		t.Fatalf("read past the end: %v", err)
	}
	if res, err := l.Read(int64(seq), 100, nil, kafkalog.ReadOptions{}); err != nil || len(res.Records) != 0 {
		t.Fatalf("read at the end: %d bytes, %v", len(res.Records), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Clean reopen: no recovery, same records, and appends go on.
	l = mustOpen(t, fsys, "data/orders-0", cfg, c)
	if rep := l.LoadReport(); !rep.CleanShutdown || len(rep.Recovered) != 0 {
		t.Fatalf("clean reopen: %+v", rep)
	}
	equalRecords(t, readAll(t, l), want)
	b, recs := buildBatch(t, &w, compress.None, seq, 2, c.ms)
	if _, err := l.Append(b, 3); err != nil {
		t.Fatal(err)
	}
	recs[0].offset, recs[1].offset = int64(seq), int64(seq+1)
	want = append(want, recs...)
	equalRecords(t, readAll(t, l), want)
	// No Close: an unclean shutdown. Reopening recovers from the recovery
	// point and loses nothing that was written (Mem keeps unsynced data
	// unless crash-cloned).
	kafkalog.Abandon(l)
	l2 := mustOpen(t, fsys, "data/orders-0", cfg, c)
	if rep := l2.LoadReport(); rep.CleanShutdown || len(rep.Recovered) == 0 {
		t.Fatalf("unclean reopen did not recover: %+v", rep)
	}
	equalRecords(t, readAll(t, l2), want)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	fsys := vfs.NewMem()
	c := &clock{ms: 1_000_000}
	l := mustOpen(t, fsys, "d/t-0", smallConfig(t, 1500), c)
	defer l.Close()
	var w record.Builder
	// Timestamps go up by 100 per batch but the 5th batch is stamped in
	// the past (out of order), as KIP-33 allows.
	ts := int64(1_000_000)
	var all []testRecord
	for i := 0; i < 30; i++ {
		bts := ts + int64(i*100)
		if i == 5 {
			bts = ts - 50_000
		}
		b, recs := buildBatch(t, &w, compress.None, i*3, 3, bts)
		res, err := l.Append(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range recs {
			recs[j].offset = res.FirstOffset + int64(j)
		}
		all = append(all, recs...)
	}
	// For every timestamp present (and each one in between), the answer is
	// the first record (in offset order) whose timestamp is ≥ it.
	for _, r := range all {
		for _, target := range []int64{r.ts, r.ts - 1} {
			var want int64 = -1
			for _, x := range all {
				if x.ts >= target {
					want = x.offset
					break
				}
			}
			got, found, err := l.OffsetForTimestamp(target)
			if err != nil || !found || got.Offset != want {
				t.Fatalf("OffsetForTimestamp(%d) = %+v, %v, %v; want %d", target, got, found, err, want)
			}
		}
	}
	if _, found, _ := l.OffsetForTimestamp(ts + 1_000_000); found {
		t.Fatal("found a record after every timestamp")
	}
	if got, _, _ := l.OffsetForTimestamp(kafkalog.LatestTimestamp); got.Offset != 90 {
		t.Fatalf("latest = %+v", got)
	}
	if got, _, _ := l.OffsetForTimestamp(kafkalog.EarliestTimestamp); got.Offset != 0 {
		t.Fatalf("earliest = %+v", got)
	}
	if got, found, _ := l.OffsetForTimestamp(kafkalog.MaxTimestamp); !found || got.Offset != 89 || got.Timestamp != ts+2902 {
		t.Fatalf("max timestamp = %+v, %v", got, found)
	}
}

func TestTruncateAndFollower(t *testing.T) {
	fsys := vfs.NewMem()
	c := &clock{ms: 5000}
	l := mustOpen(t, fsys, "d/t-0", smallConfig(t, 1000), c)
	var w record.Builder
	var want []testRecord
	for i := 0; i < 20; i++ {
		b, recs := buildBatch(t, &w, compress.None, i*2, 2, c.ms+int64(i))
		res, err := l.Append(b, 1)
		if err != nil {
			t.Fatal(err)
		}
		recs[0].offset, recs[1].offset = res.FirstOffset, res.FirstOffset+1
		want = append(want, recs...)
	}
	nseg := len(l.Segments())
	if err := l.TruncateTo(13); err != nil {
		t.Fatal(err)
	}
	// Offset 13 is in the batch 12..13, which goes whole.
	if l.LogEndOffset() != 12 || len(l.Segments()) >= nseg {
		t.Fatalf("after truncation: end %d, %d segments (was %d)", l.LogEndOffset(), len(l.Segments()), nseg)
	}
	equalRecords(t, readAll(t, l), want[:12])
	// A follower append must continue at the end.
	b, _ := buildBatch(t, &w, compress.None, 100, 2, c.ms)
	format := func(base int64) []byte {
		x := append([]byte(nil), b...)
		x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7] = 0, 0, 0, 0, 0, 0, 0, byte(base)
		return x
	}
	if _, err := l.AppendAsFollower(format(5)); !errors.Is(err, kafkalog.ErrInvalidRecords) {
		t.Fatalf("follower append below the end: %v", err)
	}
	if _, err := l.AppendAsFollower(format(12)); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 14 {
		t.Fatalf("end %d after follower append", l.LogEndOffset())
	}
	if err := l.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 0 || len(readAll(t, l)) != 0 {
		t.Fatal("truncate to 0 left records")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLoweredSegmentIndexBytes reopens a log whose active segment has more
// index entries than a lowered segment.index.bytes allows: the log opens
// with its index full (Kafka fails to load it), serves every record, and
// the next append rolls a new segment.
func TestLoweredSegmentIndexBytes(t *testing.T) {
	fsys := vfs.NewMem()
	c := &clock{ms: 1_700_000_000_000}
	cfg := smallConfig(t, 1<<20)
	l := mustOpen(t, fsys, "data/orders-0", cfg, c)
	var w record.Builder
	var want []testRecord
	seq := 0
	appendOne := func(l *kafkalog.Log) {
		t.Helper()
		b, recs := buildBatch(t, &w, compress.None, seq, 4, c.ms)
		if _, err := l.Append(b, 1); err != nil {
			t.Fatal(err)
		}
		for j := range recs {
			recs[j].offset = int64(seq + j)
		}
		want = append(want, recs...)
		seq += len(recs)
	}
	for range 40 {
		appendOne(l)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if len(segs) != 1 {
		t.Fatalf("%d segments before the reopen, want 1", len(segs))
	}
	lowered := cfg
	lowered.SegmentIndexBytes = 64 // 8 offset-index entries, 5 time-index entries
	for _, crashed := range []bool{false, true} {
		var err error
		l, err = kafkalog.Open(fsys, "data/orders-0", lowered, kafkalog.Options{Clock: c})
		if err != nil {
			t.Fatalf("crashed=%v: reopen with segment.index.bytes=64: %v", crashed, err)
		}
		equalRecords(t, readAll(t, l), want)
		if !crashed {
			// Leave it without a Close: the second round recovers the
			// active segment, rebuilding its indexes under the new limit.
			kafkalog.Abandon(l)
			continue
		}
		before := len(l.Segments())
		appendOne(l)
		if n := len(l.Segments()); n != before+1 {
			t.Fatalf("append to a full index: %d segments, want %d", n, before+1)
		}
		equalRecords(t, readAll(t, l), want)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadCommittedAfterCommit: a transaction committed on a live log stops
// holding back read_committed reads once the high watermark passes its
// marker, with or without a manually set high watermark.
func TestReadCommittedAfterCommit(t *testing.T) {
	for _, manualHW := range []bool{false, true} {
		t.Run(fmt.Sprintf("manualHW=%v", manualHW), func(t *testing.T) {
			fsys := vfs.NewMem()
			c := &clock{ms: 1_700_000_000_000}
			l := mustOpen(t, fsys, "data/orders-0", smallConfig(t, 1<<20), c)
			defer l.Close()
			if manualHW {
				l.SetHighWatermark(0) // from now on, the test moves it
			}
			var w record.Builder
			appendSpec := func(spec record.BatchSpec, n int) {
				t.Helper()
				recs := make([]record.Record, n)
				for i := range recs {
					recs[i] = record.Record{Timestamp: c.ms, Value: []byte("v")}
				}
				b, err := w.AppendBatch(nil, &spec, recs)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := l.Append(b, 1); err != nil {
					t.Fatal(err)
				}
			}
			txn := record.NewBatchSpec(0, compress.None)
			txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 2, 0, 0, true
			appendSpec(txn, 7)                                   // offsets 0..6, the transaction
			appendSpec(record.NewBatchSpec(0, compress.None), 7) // 7..13, plain records
			marker := txn
			marker.Control, marker.BaseSequence = true, record.NoSequence
			b, err := w.AppendEndTxnMarker(nil, &marker, record.EndTxnMarker{Type: record.ControlCommit}, c.ms)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(b, 1); err != nil { // 14, the COMMIT
				t.Fatal(err)
			}
			if manualHW {
				l.SetHighWatermark(14) // the marker is not replicated yet
				if res, err := l.Read(0, 1<<20, nil, kafkalog.ReadOptions{Isolation: kafkalog.IsolationCommitted}); err != nil || len(res.Records) != 0 {
					t.Fatalf("read_committed below an unreplicated marker: %d bytes, %v", len(res.Records), err)
				}
				l.SetHighWatermark(15)
			}
			res, err := l.Read(0, 1<<20, nil, kafkalog.ReadOptions{Isolation: kafkalog.IsolationCommitted})
			if err != nil {
				t.Fatal(err)
			}
			var last int64 = -1
			for rest := res.Records; len(rest) > 0; {
				e, tail, err := record.ReadBatch(rest)
				if err != nil {
					t.Fatal(err)
				}
				last, rest = e.LastOffset(), tail
			}
			if last != 14 || len(res.AbortedTxns) != 0 {
				t.Fatalf("read_committed after the commit ends at offset %d with %d aborted; want 14 and none", last, len(res.AbortedTxns))
			}
		})
	}
}

// TestMissingTimeIndexIsRebuilt: a segment that lost only its .timeindex
// (a crash in the middle of deleting it can keep that one rename) gets it
// rebuilt on Open, so retention and lookups by timestamp still see its
// timestamps.
func TestMissingTimeIndexIsRebuilt(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			fsys := vfs.NewMem()
			c := &clock{ms: 1_000_000}
			cfg := smallConfig(t, 1500)
			l := mustOpen(t, fsys, "d/t-0", cfg, c)
			var w record.Builder
			for i := range 24 {
				b, _ := buildBatch(t, &w, compress.None, i*3, 3, 1_000_000+int64(i*100))
				if _, err := l.Append(b, 0); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(l.Segments()); n < 3 {
				t.Fatalf("%d segments, want at least 3", n)
			}
			first := l.Segments()[0]
			wantTs, wantOff, err := first.MaxTimestampSoFar()
			if err != nil {
				t.Fatal(err)
			}
			if clean {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			} else if err := l.Flush(); err != nil {
				t.Fatal(err)
			} else {
				kafkalog.Abandon(l)
			}
			if err := fsys.Remove("d/t-0/00000000000000000000.timeindex"); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, fsys, "d/t-0", cfg, c)
			defer l.Close()
			rep := l.LoadReport()
			if len(rep.Recovered) == 0 || rep.Recovered[0].BaseOffset != 0 || rep.Recovered[0].Why != "missing time index" {
				t.Fatalf("load report: %+v", rep.Recovered)
			}
			ts, off, err := l.Segments()[0].MaxTimestampSoFar()
			if err != nil || ts != wantTs || off != wantOff {
				t.Fatalf("first segment's max timestamp %d at %d (%v); want %d at %d", ts, off, err, wantTs, wantOff)
			}
			if got, found, err := l.OffsetForTimestamp(1_000_100); err != nil || !found || got.Offset != 3 {
				t.Fatalf("OffsetForTimestamp(1_000_100) = %+v, %v, %v; want offset 3", got, found, err)
			}
		})
	}
}
