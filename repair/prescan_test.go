package repair

import (
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// prescanPartition writes a partition of several segments: plain,
// compressed and transactional batches (some aborted), for
// FuzzRecoverReadsOnlyWhatItDrops to damage.
func prescanPartition(t testing.TB) (*vfs.Mem, string, kafkalog.Config) {
	const dir = "data/p-0"
	fsys := vfs.NewMem()
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		"segment.bytes": "3000", "index.interval.bytes": "200", "segment.index.bytes": "4096",
	})
	if err != nil {
		t.Fatal(err)
	}
	clk := fixedClock{time.UnixMilli(1_700_000_000_000)}
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	add := func(spec record.BatchSpec, n int) {
		recs := make([]record.Record, n)
		for i := range recs {
			recs[i] = record.Record{Timestamp: clk.t.UnixMilli(), Key: []byte(fmt.Sprint("k", i)), Value: []byte("some value bytes, a few of them")}
		}
		b, err := w.AppendBatch(nil, &spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 1); err != nil {
			t.Fatal(err)
		}
	}
	seq := int32(0)
	for i := range 30 {
		add(record.NewBatchSpec(0, []compress.Codec{compress.None, compress.Zstd, compress.LZ4}[i%3]), 1+i%5)
		txn := record.NewBatchSpec(0, compress.None)
		txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 5, 0, seq, true
		seq += 3
		add(txn, 3)
		if i%4 == 3 {
			m := txn
			m.Control, m.BaseSequence = true, record.NoSequence
			typ := record.ControlCommit
			if i%8 == 7 {
				typ = record.ControlAbort
			}
			b, err := w.AppendEndTxnMarker(nil, &m, record.EndTxnMarker{Type: typ}, clk.t.UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(b, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fsys, dir, cfg
}

// damage applies the edits ops describes to the partition dir of fsys:
// each 5 bytes pick a kind of damage, a .log, a position in it (2
// bytes) and a parameter:  (a flipped byte, a cut, a
// zeroed run, a changed baseOffset, an index deleted, a log start offset
// checkpoint beyond the log, the clean-shutdown marker removed).
func damage(t testing.TB, fsys *vfs.Mem, dir string, ops []byte) {
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs, indexes []string
	for _, fi := range infos {
		switch _, ext, _ := segment.ParseFileName(fi.Name()); ext {
		case segment.LogSuffix:
			logs = append(logs, fi.Name())
		case segment.IndexSuffix, segment.TimeIndexSuffix, segment.SnapshotSuffix:
			indexes = append(indexes, fi.Name())
		}
	}
	sort.Strings(logs)
	sort.Strings(indexes)
	for ; len(ops) >= 5; ops = ops[5:] {
		param := int(ops[4])
		name := path.Join(dir, logs[int(ops[1])%len(logs)])
		b, err := vfs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		at := 0
		if len(b) > 0 {
			at = int(binary.BigEndian.Uint16(ops[2:])) % len(b)
		}
		switch ops[0] % 8 {
		case 0:
			if len(b) > 0 {
				b[at] ^= 0x40
			}
		case 1:
			b = b[:at]
		case 2:
			clear(b[at:min(len(b), at+param*4)])
		case 3:
			if at+8 <= len(b) {
				binary.BigEndian.PutUint64(b[at:], uint64(param)) // a baseOffset, if at is an entry's start
			}
		case 4:
			if len(indexes) > 0 {
				fsys.Remove(path.Join(dir, indexes[param%len(indexes)]))
			}
			continue
		case 5:
			m := map[checkpoint.TopicPartition]int64{{Topic: "p", Partition: 0}: int64(param) * 8}
			if err := checkpoint.WriteOffsets(fsys, path.Join(path.Dir(dir), checkpoint.LogStartOffsetFile), m); err != nil {
				t.Fatal(err)
			}
			continue
		case 6:
			fsys.Remove(path.Join(path.Dir(dir), checkpoint.CleanShutdownFile))
			continue
		case 7:
			b = append(b, make([]byte, param)...) // a torn or zero-filled tail
		}
		f, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzRecoverReadsOnlyWhatItDrops: Recover reads a .log past the damage
// only where the recovery cuts it and in the segments the cut deletes, not
// every .log before it starts; its report must be the one of reading every
// .log first (what it dropped, the log end before), and so must what it
// leaves. Each input damages a partition of several segments.
func FuzzRecoverReadsOnlyWhatItDrops(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		{0, 1, 0, 200, 0},              // a flipped byte in the second segment
		{1, 0, 1, 0, 0},                // the first segment cut short: later ones deleted
		{2, 2, 0, 90, 8},               // a zeroed run in the third
		{3, 1, 0, 0, 3},                // a baseOffset lowered
		{4, 0, 0, 0, 1, 0, 3, 0, 9, 0}, // an index deleted, then a byte flipped
		{5, 0, 0, 0, 255},              // the log start offset beyond the log end
		{7, 255, 0, 0, 40},             // zeros after the last segment
		{6, 0, 0, 0, 0, 1, 3, 0, 50, 0, 2, 1, 0, 20, 40},
	} {
		f.Add(seed)
	}
	ref, dir, cfg := prescanPartition(f)
	clk := fixedClock{time.UnixMilli(1_800_000_000_000)}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			return
		}
		lazy := ref.CrashClone(vfs.CrashConfig{UnsyncedDataPercent: 100})
		damage(t, lazy, dir, ops)
		full := lazy.CrashClone(vfs.CrashConfig{UnsyncedDataPercent: 100})
		opt := RecoverOptions{Config: &cfg, Clock: clk}
		got, gotErr := recoverDir(lazy, dir, opt, false)
		want, wantErr := recoverDir(full, dir, opt, true)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("Recover: %v; reading every .log first: %v", gotErr, wantErr)
		}
		t.Logf("changed %v, %d segments, %d deleted, log end %d -> %d", got.Changed, len(got.Segments), len(got.Deleted), got.LogEndBefore, got.LogEndAfter)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the report differs from the one of reading every .log first (-first +lazily):\n%s", diff)
		}
		if a, b := lazy.String(), full.String(); a != b {
			t.Errorf("the partitions left differ:\n%s\nreading every .log first:\n%s", a, b)
		}
	})
}

// TestRecoverReportsLogBelowItsStart: a log that ends below its
// checkpointed log start offset (retention moved the start, and the
// deletion was lost) loses every segment to Kafka's load
// (deleteSegmentsIfLogStartGreaterThanLogEnd); Recover says so, with what
// each segment held.
func TestRecoverReportsLogBelowItsStart(t *testing.T) {
	fsys, dir, cfg := prescanPartition(t)
	infos, err := vfs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	for _, fi := range infos {
		if _, ext, _ := segment.ParseFileName(fi.Name()); ext == segment.LogSuffix {
			logs = append(logs, path.Join(dir, fi.Name()))
		}
	}
	damage(t, fsys, dir, []byte{5, 0, 0, 0, 255}) // log start offset 2040
	rep, err := Recover(fsys, dir, RecoverOptions{Config: &cfg, Clock: fixedClock{time.UnixMilli(1_800_000_000_000)}})
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	records := int64(0)
	for _, d := range rep.Deleted {
		if !d.WholeSegment || d.Entries == 0 {
			t.Errorf("deleted %+v: want a whole segment with its entries", d)
		}
		deleted = append(deleted, d.File)
		records += d.Records
	}
	sort.Strings(deleted)
	if diff := cmp.Diff(logs, deleted); diff != "" || !rep.Changed || rep.LogEndAfter != 2040 {
		t.Errorf("changed %v, log end after %d, deleted (-segments +reported):\n%s", rep.Changed, rep.LogEndAfter, diff)
	}
	if records < 100 {
		t.Errorf("the deleted segments held %d records", records)
	}
}
