package inspect_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

const seg0 = "00000000000000000000"

// threeSegments builds a closed partition of three segments (segment.bytes
// 4000, batches of 10 records), leader epoch 3.
func threeSegments(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, map[string]string{"segment.bytes": "4000"})
	f.add(t, 7, 10, compress.None, 3)
	f.close(t)
	return f
}

func TestVerifyCleanPartition(t *testing.T) {
	f := threeSegments(t)
	rep := f.verify(t)
	if !rep.OK || len(rep.Problems) != 0 {
		t.Fatalf("problems in a clean partition:\n%s", dump(rep))
	}
	if rep.Segments < 3 || rep.Batches != 7 || rep.Records != 70 {
		t.Errorf("segments %d batches %d records %d, want >= 3, 7, 70", rep.Segments, rep.Batches, rep.Records)
	}
	p := rep.Partitions[0]
	if p.LogStartOffset != 0 || p.LogEndOffset != 70 || !p.CleanShutdown || p.Topic != "t" || p.Partition != 0 {
		t.Errorf("partition %+v", p)
	}
	// The JSON object has the documented fields.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ok", "segments", "batches", "records", "problems", "partitions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON has no %q: %s", k, b)
		}
	}
}

// TestVerifyOpenPartition verifies a partition whose log is still open:
// the active segment's indexes are preallocated (warnings, not errors).
func TestVerifyOpenPartition(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 3, 5, compress.Zstd, 0)
	rep := f.verify(t)
	if !rep.OK {
		t.Fatalf("errors:\n%s", dump(rep))
	}
	got := kinds(rep)
	if !slices.Contains(got, "warning zero-padding") {
		t.Errorf("no zero-padding warning for the preallocated indexes: %v", got)
	}
	f.close(t)
}

func TestVerifyLogDamage(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(b []byte, pos, size []int) []byte
		kind  string
		level finding.Level
		// at returns the expected position from the batch positions.
		at func(pos, size []int, n int) int64
	}{
		{"crc_mid_file", func(b []byte, pos, size []int) []byte {
			b[pos[1]+record.RecordsOffset+5] ^= 0x40
			return b
		}, finding.KindLogCRC, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[1]) }},
		{"zero_block_mid_file", func(b []byte, pos, size []int) []byte {
			clear(b[pos[1] : pos[1]+200])
			return b
		}, finding.KindLogCorrupt, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[1]) }},
		{"garbage_length_mid_file", func(b []byte, pos, size []int) []byte {
			format.PutInt32(b[pos[1]+record.LengthOffset:], 1<<30)
			return b
		}, finding.KindLogCorrupt, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[1]) }},
		{"bad_magic", func(b []byte, pos, size []int) []byte {
			b[pos[1]+record.MagicOffset] = 7
			return b
		}, finding.KindLogCorrupt, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[1]) }},
		{"crc_last_batch", func(b []byte, pos, size []int) []byte {
			b[len(b)-3] ^= 1
			return b
		}, finding.KindLogCRC, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[len(pos)-1]) }},
		{"torn_tail", func(b []byte, pos, size []int) []byte {
			return b[:len(b)-10]
		}, finding.KindLogTornTail, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[len(pos)-1]) }},
		{"zero_tail", func(b []byte, pos, size []int) []byte {
			return append(b, make([]byte, 4096)...)
		}, finding.KindLogZeroTail, finding.Error, func(pos, size []int, n int) int64 { return int64(n) }},
		{"invalid_records_valid_crc", func(b []byte, pos, size []int) []byte {
			// Declare one record more than the batch holds, and fix the CRC.
			raw := b[pos[1] : pos[1]+size[1]]
			format.PutInt32(raw[record.RecordsCountOffset:], format.Int32(raw[record.RecordsCountOffset:])+1)
			format.PutInt32(raw[record.LastOffsetDeltaOffset:], format.Int32(raw[record.LastOffsetDeltaOffset:])+1)
			format.PutUint32(raw[record.CRCOffset:], format.CRC32C(raw[record.AttributesOffset:]))
			return b
		}, finding.KindLogInvalidRecords, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[1]) }},
		{"offsets_backwards", func(b []byte, pos, size []int) []byte {
			raw := b[pos[2] : pos[2]+size[2]]
			format.PutInt64(raw, 1) // batch 2 claims offset 1, inside batch 0
			return b
		}, finding.KindLogOffsetOrder, finding.Error, func(pos, size []int, n int) int64 { return int64(pos[2]) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One segment of 4 batches; the log directory has a
			// clean-shutdown marker (Close wrote it), so tails are errors.
			f := newFixture(t, nil)
			f.add(t, 4, 10, compress.None, 0)
			f.close(t)
			b := f.read(t, seg0+".log")
			pos, size := batches(t, b)
			n := len(b)
			f.edit(t, seg0+".log", func(b []byte) []byte { return tt.edit(b, pos, size) })
			rep := f.verify(t)
			p := find(t, rep, tt.kind)
			if p.Level != tt.level || p.File != f.path(seg0+".log") || p.Position != tt.at(pos, size, n) {
				t.Errorf("got %s, want %s %s at %s:%d", p, tt.level, tt.kind, f.path(seg0+".log"), tt.at(pos, size, n))
			}
			if rep.OK {
				t.Errorf("OK with an error")
			}
		})
	}
}

// TestVerifyTornTailActive: a partial last batch of the active segment,
// without a clean-shutdown marker, is what a crash leaves: a warning.
func TestVerifyTornTailActive(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 4, 10, compress.None, 0)
	f.close(t)
	if err := f.fs.Remove("/logs/" + checkpoint.CleanShutdownFile); err != nil {
		t.Fatal(err)
	}
	f.edit(t, seg0+".log", func(b []byte) []byte { return b[:len(b)-10] })
	rep := f.verify(t)
	if p := find(t, rep, finding.KindLogTornTail); p.Level != finding.Warning {
		t.Errorf("got %s, want a warning", p)
	}
	// The index and time index still point at the cut batch: errors, as a
	// lookup through them would fail until recovery rebuilds them.
	t.Log(dump(rep))
}

// TestVerifyAllDamageReported: Verify reads past each damaged region and
// reports every one, where Kafka's recovery stops at the first.
func TestVerifyAllDamageReported(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 10, 10, compress.Gzip, 0)
	f.close(t)
	b := f.read(t, seg0+".log")
	pos, _ := batches(t, b)
	f.edit(t, seg0+".log", func(b []byte) []byte {
		b[pos[2]+70] ^= 1
		b[pos[5]+70] ^= 1
		b[pos[8]+70] ^= 1
		return b
	})
	rep := f.verify(t)
	var at []int64
	for _, p := range rep.Problems {
		if p.Kind == finding.KindLogCRC {
			at = append(at, p.Position)
		}
	}
	if want := []int64{int64(pos[2]), int64(pos[5]), int64(pos[8])}; !slices.Equal(at, want) {
		t.Errorf("log-crc at %v, want %v\n%s", at, want, dump(rep))
	}
	if rep.Batches != 7 || rep.Records != 70 {
		t.Errorf("batches %d records %d, want 7 and 70", rep.Batches, rep.Records)
	}
	if p := find(t, rep, finding.KindLogCRC); !strings.Contains(p.Detail, "offsets 20..29") {
		t.Errorf("the detail does not name the lost offsets: %s", p)
	}
}

func TestVerifyOffsetGap(t *testing.T) {
	// A gap between two intact batches: a warning, or info when the
	// partition is compacted.
	build := func(t *testing.T) *fixture {
		f := newFixture(t, nil)
		f.add(t, 3, 10, compress.None, 0)
		f.close(t)
		b := f.read(t, seg0+".log")
		pos, size := batches(t, b)
		f.edit(t, seg0+".log", func(b []byte) []byte {
			raw := b[pos[2] : pos[2]+size[2]]
			format.PutInt64(raw, 25) // offsets 20..24 are missing
			return b
		})
		for _, ext := range []string{".index", ".timeindex"} {
			f.edit(t, seg0+ext, func([]byte) []byte { return nil })
		}
		return f
	}
	f := build(t)
	rep := f.verify(t)
	if p := find(t, rep, finding.KindLogOffsetGap); p.Level != finding.Warning || !strings.Contains(p.Detail, "offsets 20..24") {
		t.Errorf("got %s", p)
	}
	rep, err := inspect.Verify(f.fs, f.dir, inspect.Options{Now: f.clock.t.UnixMilli(), Compacted: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := find(t, rep, finding.KindLogOffsetGap); p.Level != finding.Info {
		t.Errorf("compacted: got %s", p)
	}
	if !rep.OK {
		t.Errorf("errors:\n%s", dump(rep))
	}
}

func TestVerifyIndexes(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		f := threeSegments(t)
		if err := f.fs.Remove(f.path(seg0 + ".index")); err != nil {
			t.Fatal(err)
		}
		rep := f.verify(t)
		if p := find(t, rep, finding.KindIndexMissing); p.Level != finding.Warning || p.File != f.path(seg0+".index") || p.Position != -1 {
			t.Errorf("got %s", p)
		}
		if !rep.OK {
			t.Errorf("a missing index is not an error:\n%s", dump(rep))
		}
	})
	t.Run("wrong_entry", func(t *testing.T) {
		f := newFixture(t, map[string]string{"index.interval.bytes": "100"})
		f.add(t, 5, 10, compress.None, 0)
		f.close(t)
		f.edit(t, seg0+".index", func(b []byte) []byte {
			format.PutInt32(b[4:], format.Int32(b[4:])+1) // position off by one
			return b
		})
		rep := f.verify(t)
		if p := find(t, rep, finding.KindIndexNotBatchBoundary); p.Level != finding.Error || p.File != f.path(seg0+".index") || p.Position != 0 {
			t.Errorf("got %s", p)
		}
	})
	t.Run("untrimmed_inactive", func(t *testing.T) {
		f := threeSegments(t)
		f.edit(t, seg0+".timeindex", func(b []byte) []byte { return append(b, make([]byte, 120)...) })
		rep := f.verify(t)
		if p := find(t, rep, finding.KindZeroPadding); p.Level != finding.Warning || !strings.Contains(p.Detail, "not the last") {
			t.Errorf("got %s", p)
		}
	})
	t.Run("no_final_timeindex_entry", func(t *testing.T) {
		f := threeSegments(t)
		f.edit(t, seg0+".timeindex", func(b []byte) []byte { return b[:len(b)-12] })
		rep := f.verify(t)
		if p := find(t, rep, finding.KindTimeIndexNoFinal); p.Level != finding.Warning {
			t.Errorf("got %s", p)
		}
	})
	t.Run("sanity", func(t *testing.T) {
		f := threeSegments(t)
		f.edit(t, seg0+".index", func(b []byte) []byte { return append(b, 1, 2, 3) })
		rep := f.verify(t)
		if p := find(t, rep, finding.KindSanity); p.Level != finding.Error {
			t.Errorf("got %s", p)
		}
	})
}

// txnFixture builds a partition holding a transaction of producer 7 that
// is aborted, between plain batches, and returns it open.
func txnFixture(t *testing.T) *fixture {
	f := newFixture(t, nil)
	f.add(t, 2, 3, compress.None, 0)
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = 7, 0, 0, true
	ts := f.clock.t.UnixMilli()
	b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ts, Value: []byte("in txn")}, {Timestamp: ts, Value: []byte("in txn 2")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	f.add(t, 1, 2, compress.None, 0)
	spec = record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch = 7, 0
	m, err := w.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 4}, ts+1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Append(m, 0); err != nil {
		t.Fatal(err)
	}
	f.add(t, 1, 2, compress.None, 0)
	return f
}

func TestVerifyTxnIndex(t *testing.T) {
	f := txnFixture(t)
	f.close(t)
	rep := f.verify(t)
	if !rep.OK || len(rep.Problems) != 0 {
		t.Fatalf("problems in a partition with an aborted transaction:\n%s", dump(rep))
	}
	txn := seg0 + ".txnindex"
	orig := f.read(t, txn)
	if len(orig) != index.AbortedTxnSize {
		t.Fatalf(".txnindex is %d bytes, want one entry", len(orig))
	}

	t.Run("missing", func(t *testing.T) {
		if err := f.fs.Remove(f.path(txn)); err != nil {
			t.Fatal(err)
		}
		defer f.write(t, f.path(txn), orig)
		rep := f.verify(t)
		if p := find(t, rep, finding.KindTxnMissingAbort); p.Level != finding.Error || !strings.Contains(p.Detail, "producer 7") {
			t.Errorf("got %s", p)
		}
	})
	t.Run("wrong_first_offset", func(t *testing.T) {
		f.edit(t, txn, func(b []byte) []byte {
			format.PutInt64(b[10:], format.Int64(b[10:])+1)
			return b
		})
		defer f.write(t, f.path(txn), orig)
		rep := f.verify(t)
		if p := find(t, rep, finding.KindTxnMismatch); p.Level != finding.Error || p.Position != 0 {
			t.Errorf("got %s", p)
		}
	})
	t.Run("entry_without_marker", func(t *testing.T) {
		f.edit(t, txn, func(b []byte) []byte {
			format.PutInt64(b[18:], format.Int64(b[18:])+1) // last offset past the marker
			return b
		})
		defer f.write(t, f.path(txn), orig)
		rep := f.verify(t)
		find(t, rep, finding.KindTxnNoAbort)
		find(t, rep, finding.KindTxnMissingAbort)
	})
}

func TestVerifySnapshots(t *testing.T) {
	// A producer with sequence numbers, so that the snapshot has an entry.
	f := newFixture(t, nil)
	var w record.Builder
	for i := 0; i < 3; i++ {
		spec := record.NewBatchSpec(0, compress.None)
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = 42, 1, int32(i*2)
		ts := f.clock.t.UnixMilli()
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: ts, Value: []byte("a")}, {Timestamp: ts, Value: []byte("b")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	f.close(t)
	snap := producer.SnapshotFileName(6)
	orig := f.read(t, snap)
	if rep := f.verify(t); !rep.OK || len(rep.Problems) != 0 {
		t.Fatalf("problems:\n%s", dump(rep))
	}
	entries, err := producer.DecodeSnapshot(orig)
	if err != nil || len(entries) != 1 {
		t.Fatalf("snapshot %v, %v", entries, err)
	}
	tests := []struct {
		name string
		b    func() []byte
		kind string
		pos  int64
	}{
		{"crc", func() []byte { b := slicesClone(orig); b[len(b)-1] ^= 1; return b }, finding.KindSnapshotCRC, 2},
		{"short", func() []byte { return orig[:20] }, finding.KindSnapshotCorrupt, -2},
		{"mismatch", func() []byte {
			e := slicesClone(entries)
			e[0].LastSequence = 99
			return producer.AppendSnapshot(nil, e)
		}, finding.KindSnapshotMismatch, producer.SnapshotHeaderSize},
		{"unknown_producer", func() []byte {
			e := append(slicesClone(entries), producer.Entry{ProducerID: 43, Epoch: 0, LastSequence: 0, LastOffset: 1, Timestamp: 5, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1})
			return producer.AppendSnapshot(nil, e)
		}, finding.KindSnapshotMismatch, producer.SnapshotHeaderSize + producer.EntrySize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.write(t, f.path(snap), tt.b())
			defer f.write(t, f.path(snap), orig)
			rep := f.verify(t)
			p := find(t, rep, tt.kind)
			if p.Level != finding.Error || p.File != f.path(snap) || tt.pos != -2 && p.Position != tt.pos {
				t.Errorf("got %s", p)
			}
		})
	}
	t.Run("absent_producer", func(t *testing.T) {
		f.write(t, f.path(snap), producer.AppendSnapshot(nil, nil))
		defer f.write(t, f.path(snap), orig)
		rep := f.verify(t)
		if p := find(t, rep, finding.KindSnapshotProducerAbsent); p.Level != finding.Info {
			t.Errorf("got %s", p)
		}
	})
	t.Run("past_log_end", func(t *testing.T) {
		name := producer.SnapshotFileName(100)
		f.write(t, f.path(name), orig)
		defer f.fs.Remove(f.path(name))
		rep := f.verify(t)
		if p := find(t, rep, finding.KindSnapshotPastEnd); p.Level != finding.Warning {
			t.Errorf("got %s", p)
		}
	})
}

func slicesClone[S ~[]E, E any](s S) S { return append(S(nil), s...) }

func TestVerifyLeaderEpochs(t *testing.T) {
	f := newFixture(t, nil)
	f.add(t, 2, 5, compress.None, 1)
	f.add(t, 2, 5, compress.None, 4)
	f.close(t)
	file := checkpoint.LeaderEpochFile
	orig := f.read(t, file)
	if string(orig) != "0\n2\n1 0\n4 10\n" {
		t.Fatalf("leader-epoch-checkpoint %q", orig)
	}
	tests := []struct {
		name    string
		content string
		kind    string
		level   finding.Level
		pos     int64
	}{
		{"wrong_start", "0\n2\n1 0\n4 12\n", finding.KindEpochMismatch, finding.Error, 8},
		{"missing_epoch", "0\n1\n1 0\n", finding.KindEpochMismatch, finding.Error, 4},
		{"order", "0\n3\n1 0\n4 10\n2 15\n", finding.KindEpochOrder, finding.Error, 13},
		{"past_end", "0\n3\n1 0\n4 10\n5 30\n", finding.KindEpochMismatch, finding.Error, 13},
		{"corrupt", "0\n2\n1 0\n", finding.KindEpochCorrupt, finding.Error, -2},
		{"empty", "0\n0\n", finding.KindEpochMissing, finding.Warning, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.write(t, f.path(file), []byte(tt.content))
			defer f.write(t, f.path(file), orig)
			rep := f.verify(t)
			p := find(t, rep, tt.kind)
			if p.Level != tt.level || tt.pos != -2 && p.Position != tt.pos {
				t.Errorf("got %s, want %s at %d", p, tt.level, tt.pos)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if err := f.fs.Remove(f.path(file)); err != nil {
			t.Fatal(err)
		}
		defer f.write(t, f.path(file), orig)
		rep := f.verify(t)
		if p := find(t, rep, finding.KindEpochMissing); p.Level != finding.Warning {
			t.Errorf("got %s", p)
		}
	})
}

func TestVerifyCheckpoints(t *testing.T) {
	f := threeSegments(t)
	write := func(name, content string) func() {
		p := path.Join("/logs", name)
		old, _ := vfs.ReadFile(f.fs, p)
		f.write(t, p, []byte(content))
		return func() { f.write(t, p, old) }
	}
	tests := []struct {
		name, file, content string
		kind                string
		level               finding.Level
	}{
		{"recovery_point_past_end", checkpoint.RecoveryPointFile, "0\n1\nt 0 71\n", finding.KindRecoveryPointPastEnd, finding.Error},
		{"log_start_past_end", checkpoint.LogStartOffsetFile, "0\n1\nt 0 80\n", finding.KindLogStartPastEnd, finding.Error},
		{"high_watermark_past_end", checkpoint.ReplicationOffsetFile, "0\n2\nu 0 1000\nt 0 75\n", finding.KindHighWatermarkPastEnd, finding.Warning},
		{"corrupt", checkpoint.RecoveryPointFile, "0\n2\nt 0 5\n", finding.KindCheckpointCorrupt, finding.Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer write(tt.file, tt.content)()
			rep := f.verify(t)
			p := find(t, rep, tt.kind)
			if p.Level != tt.level || p.File != path.Join("/logs", tt.file) {
				t.Errorf("got %s", p)
			}
			if tt.name == "high_watermark_past_end" && p.Position != 13 {
				t.Errorf("position %d, want 13 (the line of t 0)", p.Position)
			}
		})
	}
	t.Run("log_start_below_first_segment", func(t *testing.T) {
		// Retention deleted the first segment but the checkpoint lags.
		infos, _ := vfs.ReadDir(f.fs, f.dir)
		var second int64 = -1
		for _, fi := range infos {
			if base, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == ".log" && base > 0 && (second < 0 || base < second) {
				second = base
			}
		}
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			if err := f.fs.Rename(f.path(seg0+ext), f.path(seg0+ext+".deleted")); err != nil {
				t.Fatal(err)
			}
		}
		rep := f.verify(t)
		if p := find(t, rep, finding.KindLogStartBelowSegments); p.Level != finding.Warning {
			t.Errorf("got %s", p)
		}
		if p := find(t, rep, finding.KindDeletedFile); p.Level != finding.Info || !strings.Contains(p.Detail, "file.delete.delay.ms") {
			t.Errorf("got %s", p)
		}
		if got := rep.Partitions[0].LogStartOffset; got != second {
			t.Errorf("log start offset %d, want %d", got, second)
		}
	})
}

func TestVerifyPartitionMetadataAndOrphans(t *testing.T) {
	f := threeSegments(t)
	f.write(t, f.path(checkpoint.PartitionMetadataFile), []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n"))
	f.write(t, f.path("00000000000000000999.index"), make([]byte, 8))
	rep := f.verify(t)
	if p := find(t, rep, finding.KindPartitionMetadata); p.Level != finding.Error {
		t.Errorf("got %s", p)
	}
	if p := find(t, rep, finding.KindOrphanFile); p.Level != finding.Warning || !strings.HasSuffix(p.File, "999.index") {
		t.Errorf("got %s", p)
	}
}

func TestVerifyTimestamps(t *testing.T) {
	// Records stamped 30 days before they are written: the next retention
	// check deletes them (timestamp-based data loss).
	f := newFixture(t, nil)
	var w record.Builder
	spec := record.NewBatchSpec(0, compress.None)
	old := t0.Add(-30 * 24 * time.Hour).UnixMilli()
	b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: old, Value: []byte("replayed backlog")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Append(b, 0); err != nil {
		t.Fatal(err)
	}
	f.close(t)
	rep := f.verify(t)
	if p := find(t, rep, finding.KindFarPastTimestamp); p.Level != finding.Warning || !rep.OK {
		t.Errorf("got %s (OK %v)", p, rep.OK)
	}
	// With retention.ms of 60 days they are not at risk.
	pol := retention.DefaultPolicy()
	pol.RetentionMs = 60 * 24 * 3600 * 1000
	rep, err = inspect.Verify(f.fs, f.dir, inspect.Options{Now: t0.UnixMilli(), Policy: &pol})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 {
		t.Errorf("problems with retention.ms of 60 days:\n%s", dump(rep))
	}

	// A record stamped in the future blocks the time rule.
	g := newFixture(t, nil)
	g.clock.t = t0.Add(30 * time.Minute) // within message.timestamp.after.max.ms of the broker's clock
	g.add(t, 1, 1, compress.None, 0)
	g.clock.t = t0
	g.close(t)
	rep = g.verify(t)
	if p := find(t, rep, finding.KindFutureTimestamp); p.Level != finding.Warning {
		t.Errorf("got %s", p)
	}
}

func TestVerifyLogDirectory(t *testing.T) {
	f := threeSegments(t)
	g := &fixture{fs: f.fs, dir: "/logs/u-3", clock: f.clock, cfg: f.cfg}
	g.open(t)
	g.add(t, 2, 2, compress.LZ4, 0)
	g.close(t)
	rep, err := inspect.Verify(f.fs, "/logs", inspect.Options{Now: f.clock.t.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Partitions) != 2 || rep.Partitions[0].Dir != "/logs/t-0" || rep.Partitions[1].Dir != "/logs/u-3" || rep.Batches != 9 {
		t.Errorf("partitions %+v, batches %d", rep.Partitions, rep.Batches)
	}
	if !rep.OK {
		t.Errorf("errors:\n%s", dump(rep))
	}
	// A folder of log directories is a tree of them.
	if rep, err := inspect.Verify(f.fs, "/", inspect.Options{Now: f.clock.t.UnixMilli()}); err != nil || len(rep.Partitions) != 2 {
		t.Errorf("Verify(/) = %d partitions, %v; want the 2 of /logs", len(rep.Partitions), err)
	}
	if err := f.fs.MkdirAll("/empty/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := inspect.Verify(f.fs, "/empty", inspect.Options{}); !errors.Is(err, inspect.ErrNoPartition) {
		t.Errorf("Verify(/empty) = %v, want ErrNoPartition", err)
	}
	if _, err := inspect.Verify(f.fs, "/nope", inspect.Options{}); err == nil {
		t.Errorf("Verify of a missing directory: no error")
	}
}

// TestVerifyReadOnlyFS runs Verify over a read-only FS: it never needs to
// write, and reports the same as over the Mem.
func TestVerifyReadOnlyFS(t *testing.T) {
	f := threeSegments(t)
	f.edit(t, seg0+".log", func(b []byte) []byte { b[100] ^= 1; return b })
	want := f.verify(t)
	ro := vfs.WithFaults(f.fs, vfs.Inject(errors.New("write refused"), vfs.Mutating()))
	got, err := inspect.Verify(ro, f.dir, inspect.Options{Now: f.clock.t.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(kinds(got)) != fmt.Sprint(kinds(want)) {
		t.Errorf("got %v, want %v", kinds(got), kinds(want))
	}
	for _, k := range []vfs.OpKind{vfs.OpCreate, vfs.OpWrite, vfs.OpWriteAt, vfs.OpSync, vfs.OpTruncate, vfs.OpRename, vfs.OpRemove, vfs.OpMkdir, vfs.OpChtimes} {
		if n := ro.Count(k); n != 0 {
			t.Errorf("%d %v operations", n, k)
		}
	}
}

func TestVerifyProgress(t *testing.T) {
	f := threeSegments(t)
	checkProgress(t, f.fs, f.dir, inspect.Options{Now: f.clock.t.UnixMilli()})
}

// checkProgress verifies dir of fsys with opt and a Progress that checks
// it is called, never goes back, and ends at the total.
func checkProgress(t *testing.T, fsys vfs.FS, dir string, opt inspect.Options) {
	t.Helper()
	var last, total int64
	calls := 0
	opt.Progress = func(done, tot int64) {
		calls++
		if done < last {
			t.Errorf("progress went back: %d after %d", done, last)
		}
		last, total = done, tot
	}
	if _, err := inspect.Verify(fsys, dir, opt); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != total || total == 0 {
		t.Errorf("%d calls, last %d of %d", calls, last, total)
	}
}

// TestVerifyInterrupt: a closed Options.Interrupt stops Verify with
// ErrInterrupted, before the first segment and in the middle of one (the
// Progress callback closes it); an open one changes nothing.
func TestVerifyInterrupt(t *testing.T) {
	f := newFixture(t, map[string]string{"segment.bytes": "65536"})
	f.add(t, 400, 8, compress.None, 0)
	f.close(t)
	stop := make(chan struct{})
	rep, err := inspect.Verify(f.fs, f.dir, inspect.Options{Now: f.clock.t.UnixMilli(), Interrupt: stop})
	if err != nil || !rep.OK || rep.Records != 3200 {
		t.Fatalf("with an open Interrupt: %v, %d records", err, rep.Records)
	}
	close(stop)
	if _, err := inspect.Verify(f.fs, f.dir, inspect.Options{Interrupt: stop}); !errors.Is(err, inspect.ErrInterrupted) {
		t.Errorf("with a closed Interrupt: %v", err)
	}
	mid := make(chan struct{})
	calls := 0
	_, err = inspect.Verify(f.fs, f.dir, inspect.Options{Interrupt: mid, Progress: func(done, total int64) {
		if calls++; calls == 1 {
			close(mid) // after the first MiB
		}
	}})
	if !errors.Is(err, inspect.ErrInterrupted) || calls > 2 {
		t.Errorf("interrupted from Progress: %v after %d progress calls", err, calls)
	}
}
