package compaction_test

import (
	"fmt"
	"maps"
	"strconv"
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
//   - Plan announced exactly what Clean then did.
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
		for pass := range 3 {
			now += []int64{10_000, retention + 1, 3 * day}[pass]
			opt := compaction.Options{Clock: clock{now}, DedupeBufferSize: dedupe}
			plan, err := compaction.Plan(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatalf("pass %d: plan: %v", pass, err)
			}
			rep, err := compaction.Clean(fsys, dir, cfg, opt)
			if err != nil {
				t.Fatalf("pass %d: clean: %v", pass, err)
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
	})
}

// committedView reads a partition as a read_committed consumer from the
// start: records of aborted transactions (per the .txnindex files) are
// skipped, a record with a value sets its key (as "offset:value": the
// offsets of surviving records must not change), a tombstone deletes it.
// It also returns the log end offset.
func committedView(t *testing.T, fsys vfs.FS, dir string) (map[string]string, int64) {
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
	view := map[string]string{}
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
	return view, l.LogEndOffset()
}
