package compaction_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// FuzzClean runs random keyed workloads — plain and transactional
// batches, tombstones, unkeyed records, rolls, every codec — through the
// engine, cleans the partition (several times, at later clocks, with a
// map that may fill), and checks what compaction promises:
//
//   - what a read_committed consumer reading the whole log ends up with
//     (the latest value of every key, a tombstone deleting it) does not
//     change;
//   - the offsets of the records that stay do not change, and the log end
//     offset does not move;
//   - the cleaned log passes the engine's recovery without a byte cut;
//   - Plan announced exactly what Clean then did;
//   - no record at or past the clean's end offset (where the map filled,
//     or the first uncleanable offset) is changed, and none is removed
//     but a transaction marker or a record of an aborted transaction: the
//     cleaner rewrites whole segments, and Kafka's discards an aborted
//     batch of any segment it rewrites (Cleaner.shouldDiscardBatch), past
//     the map's end too;
//   - a clean crashed at any filesystem operation (the input picks which)
//     leaves, after a power cut and an open, the committed view unchanged
//     and, per group, either its old segments or its cleaned one;
//   - after the last pass (past every delete horizon), cleaning the whole
//     log again at the same clock removes at most transaction markers
//     (whose transaction's last batch went in the pass before), until a
//     clean removes nothing: compacting reaches a fixpoint.
func FuzzClean(f *testing.F) {
	f.Add([]byte("\x00\x10\x20abcdefghijklmnop"))
	f.Add([]byte("\x05\x02\x03\x04\x00\x01\x04\x05\x06\x00\x01\x02\x03\x05\x06\x00\x00\x00"))
	f.Add([]byte("\x13\x07\x01\x00\x00\x00\x00\x06\x04\x04\x05\x06\x07\x07\x00\x01\x02"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 || len(in) > 400 {
			return
		}
		codecs := []compress.Codec{compress.None, compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd}
		codec := codecs[int(in[0])%len(codecs)]
		retention := int64(in[1]%4) * 1000
		dedupe := int64(0)
		if in[2]%3 == 0 {
			dedupe = int64(3+in[2]%20) * compaction.BytesPerEntry
		}
		props := map[string]string{"delete.retention.ms": strconv.FormatInt(retention, 10), "index.interval.bytes": "128", "segment.index.bytes": "16384"}
		fsys := vfs.NewMem()
		dir := "/kafka/fuzz-0"
		p := newLog(t, fsys, dir, props)
		open := map[int64]bool{}
		ops := in[3:]
		for i := 0; i < len(ops); i++ {
			b := ops[i]
			arg := func() byte {
				if i+1 < len(ops) {
					i++
					return ops[i]
				}
				return 0
			}
			key := func() string { return "k" + strconv.Itoa(int(arg()%12)) }
			val := func() string {
				v := arg()
				if v%5 == 0 {
					return "-"
				}
				return fmt.Sprintf("v%d", v)
			}
			switch b % 8 {
			case 0, 1, 2:
				p.put(codec, kv{key(), val()}, kv{key(), val()})
			case 3:
				p.put(compress.None, kv{"", "unkeyed"}, kv{key(), val()})
			case 4:
				pid := int64(arg() % 3)
				p.txn(100+pid, kv{key(), val()})
				open[100+pid] = true
			case 5:
				pid := int64(arg() % 3)
				if open[100+pid] {
					typ := record.ControlCommit
					if arg()%2 == 0 {
						typ = record.ControlAbort
					}
					p.end(100+pid, typ)
					delete(open, 100+pid)
				}
			case 6:
				p.roll()
			case 7:
				p.idem(200, kv{key(), val()})
			}
		}
		for pid := range open {
			p.end(pid, record.ControlAbort)
		}
		p.put(compress.None, kv{"last", "1"})
		p.close()

		before, beforeLEO := committedView(t, fsys, dir)
		cfg := testConfig(t, props)
		now := t0
		crashAt := int(in[2]) * 3 // a filesystem operation of one clean, or none
		for pass := range 3 {
			now += []int64{10_000, retention + 1, 3 * day}[pass]
			opt := compaction.Options{Clock: clock{now}, DedupeBufferSize: dedupe}
			plan, err := compaction.Plan(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatalf("pass %d: plan: %v", pass, err)
			}
			oldBases, oldRecords := segmentBases(t, fsys, dir), allRecords(t, fsys, dir)
			_, _, oldAborted := readCommitted(t, fsys, dir)
			var crashed *vfs.Mem // the state a crash of this pass's clean left
			if pass == int(in[1]>>4)%3 {
				m := fsys.CrashClone(vfs.CrashConfig{})
				crash := vfs.CrashAfter(crashAt)
				if _, err := compaction.Clean(vfs.WithFaults(m, crash), dir, cfg, opt); crash.Crashed() {
					crashed = m.CrashClone(vfs.CrashConfig{Seed: uint64(crashAt), UnsyncedDataPercent: int(in[1]%3) * 50, TornWrites: in[1]&8 != 0})
				} else if err != nil {
					t.Fatalf("pass %d: clean without a crash: %v", pass, err)
				}
			}
			rep, err := compaction.Clean(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatalf("pass %d: clean: %v", pass, err)
			}
			if rep.Cleanable {
				newRecords := allRecords(t, fsys, dir)
				for off, r := range oldRecords {
					got, kept := newRecords[off]
					mayGo := oldAborted[off] || strings.HasPrefix(r, `"\x00\x00`)
					if off >= rep.EndOffset && (kept && got != r || !kept && !mayGo) {
						t.Fatalf("pass %d: record %d at or past the clean's end %d changed: %q, now %q", pass, off, rep.EndOffset, r, newRecords[off])
					}
				}
			}
			if crashed != nil {
				l, err := kafkalog.Open(crashed, dir, cfg, kafkalog.Options{})
				if err != nil {
					t.Fatalf("pass %d: open after a crash at operation %d: %v", pass, crashAt, err)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if view, leo := committedView(t, crashed, dir); leo != beforeLEO || !maps.Equal(view, before) {
					t.Fatalf("pass %d: a crash at operation %d changed the committed view:\nbefore %v\nafter  %v", pass, crashAt, before, view)
				}
				// Groups are swapped one by one (LocalLog.replaceSegments), so a
				// crash between two leaves the first cleaned and the second
				// not; within a group, the old segments or the cleaned one.
				got, done := segmentBases(t, crashed, dir), segmentBases(t, fsys, dir)
				for _, b := range got {
					if !slices.Contains(oldBases, b) && !slices.Contains(done, b) {
						t.Fatalf("pass %d: a crash at operation %d left segment %d (segments %v): neither old %v nor cleaned %v", pass, crashAt, b, got, oldBases, done)
					}
				}
			}
			if plan.String() != rep.String() || plan.Stats != rep.Stats || plan.Removed != rep.Removed {
				t.Fatalf("pass %d: Plan said\n%s\n%+v\nClean did\n%s\n%+v", pass, plan, plan.Stats, rep, rep.Stats)
			}
			after, afterLEO := committedView(t, fsys, dir)
			if afterLEO != beforeLEO {
				t.Fatalf("pass %d: log end offset %d, was %d", pass, afterLEO, beforeLEO)
			}
			if !maps.Equal(before, after) {
				t.Fatalf("pass %d: the committed view changed:\nbefore %v\nafter  %v\n%s", pass, before, after, rep)
			}
			// Recovery cuts nothing from a cleaned log.
			l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{ForceRecovery: true})
			if err != nil {
				t.Fatalf("pass %d: reopen: %v", pass, err)
			}
			for _, r := range l.LoadReport().Recovered {
				if r.Result.Truncated > 0 {
					t.Fatalf("pass %d: recovery cut %d bytes of segment %d", pass, r.Result.Truncated, r.BaseOffset)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// The next pass cleans the whole log again.
			fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
		}
		// Past every horizon, cleaning the whole log again at the same clock
		// can remove only transaction markers — one whose transaction's last
		// batch went in the previous clean stayed through it (Kafka's
		// CleanedTransactionMetadata saw the batch in that pass) and goes in
		// the next, as Kafka's does (TestCompactionTwoPass) — and reaches a
		// fixpoint: a clean that removes nothing. (With an offset map that
		// fills, each clean covers only a part: that is the map's rule.)
		cleanAgain := func() map[int64]string {
			fsys.Remove("/kafka/" + compaction.CleanerCheckpointFile)
			if _, err := compaction.Clean(fsys, dir, cfg, compaction.Options{Clock: clock{now}, DedupeBufferSize: dedupe}); err != nil {
				t.Fatalf("clean again: %v", err)
			}
			return allRecords(t, fsys, dir)
		}
		if dedupe != 0 {
			return // a map that fills leaves work for the next clean, by design
		}
		prev := allRecords(t, fsys, dir)
		for n := 0; ; n++ {
			next := cleanAgain()
			if maps.Equal(prev, next) {
				break // the fixpoint
			}
			for off, r := range prev {
				if got, ok := next[off]; ok && got != r || !ok && !strings.HasPrefix(r, `"\x00\x00`) {
					t.Fatalf("clean %d again at the same clock changed record %d (%s), not a marker: now %q", n+1, off, r, got)
				}
			}
			if n > len(prev) {
				t.Fatalf("no fixpoint after %d more cleans: %v", n+1, next)
			}
			prev = next
		}
	})
}

// allRecords maps every record of the partition (data and markers, kept
// or aborted) by offset to its key and value.
func allRecords(t *testing.T, fsys vfs.FS, dir string) map[int64]string {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := map[int64]string{}
	for r, err := range l.Records(l.LogStartOffset()) {
		if err != nil {
			t.Fatal(err)
		}
		out[r.Offset] = fmt.Sprintf("%q=%q", r.Key, r.Value)
	}
	return out
}

// segmentBases lists the base offsets of the partition's segments.
func segmentBases(t *testing.T, fsys vfs.FS, dir string) []int64 {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset())
	}
	return out
}

// committedView reads a partition as a read_committed consumer from the
// start: records of aborted transactions (per the .txnindex files) are
// skipped, a record with a value sets its key (as "offset:value": the
// offsets of surviving records must not change), a tombstone deletes it.
// It also returns the log end offset.
func committedView(t *testing.T, fsys vfs.FS, dir string) (map[string]string, int64) {
	t.Helper()
	view, leo, _ := readCommitted(t, fsys, dir)
	return view, leo
}

// readCommitted is committedView that also returns the offsets of the
// records it skipped as aborted.
func readCommitted(t *testing.T, fsys vfs.FS, dir string) (view map[string]string, leo int64, abortedOffsets map[int64]bool) {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type span struct{ first, last int64 }
	aborted := map[int64][]span{}
	segs := l.Segments()
	for _, s := range segs {
		x, err := index.OpenTransactionIndex(fsys, s.TxnIndexPath(), s.BaseOffset(), index.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range x.All() {
			aborted[a.ProducerID] = append(aborted[a.ProducerID], span{a.FirstOffset, a.LastOffset})
		}
		x.Close()
	}
	view, abortedOffsets = map[string]string{}, map[int64]bool{}
	var it record.Iterator
	var r record.Record
	for _, s := range segs {
		if s.Size() == 0 {
			continue
		}
		buf := make([]byte, s.Size())
		if _, err := s.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		sc := record.NewScanner(buf, s.LogPath(), 0)
		for sc.Next() {
			b := &sc.Entry().Batch
			if b.Attributes.IsControl() {
				continue
			}
			skip := false
			if b.Attributes.IsTransactional() {
				for _, a := range aborted[b.ProducerID] {
					if b.BaseOffset >= a.first && b.BaseOffset <= a.last {
						skip = true
					}
				}
			}
			it.Reset(b)
			for it.Next(&r) {
				if skip {
					abortedOffsets[r.Offset] = true
				}
				if skip || r.Key == nil {
					continue
				}
				if r.Value == nil {
					delete(view, string(r.Key))
				} else {
					view[string(r.Key)] = fmt.Sprintf("%d:%s", r.Offset, r.Value)
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return view, l.LogEndOffset(), abortedOffsets
}
