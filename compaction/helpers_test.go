package compaction_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// t0 is the first record timestamp of the test partitions.
const t0 = int64(1_763_158_400_000)

type clock struct{ ms int64 }

func (c clock) Now() time.Time { return time.UnixMilli(c.ms) }

// testConfig is a compacted topic's config with props over it.
func testConfig(t testing.TB, props map[string]string) kafkalog.Config {
	t.Helper()
	p := map[string]string{config.CleanupPolicy: config.CleanupPolicyCompact, config.MinCleanableDirtyRatio: "0.01"}
	for k, v := range props {
		p[k] = v
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// plog writes a test partition through the engine, as a leader appends.
type plog struct {
	t    testing.TB
	l    *kafkalog.Log
	b    record.Builder
	ts   int64
	seq  map[int64]int32
	fsys vfs.FS
	dir  string
}

func newLog(t testing.TB, fsys vfs.FS, dir string, props map[string]string) *plog {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, testConfig(t, props), kafkalog.Options{Clock: clock{t0 + 3600_000}})
	if err != nil {
		t.Fatal(err)
	}
	return &plog{t: t, l: l, ts: t0, seq: map[int64]int32{}, fsys: fsys, dir: dir}
}

// kv is a record: a nil value is a tombstone, an empty key no key.
type kv struct{ k, v string }

func (p *plog) recs(kvs []kv) []record.Record {
	out := make([]record.Record, len(kvs))
	for i, x := range kvs {
		r := record.Record{Timestamp: p.ts + int64(i)}
		if x.k != "" {
			r.Key = []byte(x.k)
		}
		if x.v != "-" {
			r.Value = []byte(x.v)
		}
		out[i] = r
	}
	p.ts += 1000
	return out
}

// put appends a plain batch; a value "-" is a tombstone.
func (p *plog) put(codec compress.Codec, kvs ...kv) {
	p.t.Helper()
	spec := record.NewBatchSpec(0, codec)
	p.append(&spec, p.recs(kvs))
}

// txn appends a transactional batch of producer pid.
func (p *plog) txn(pid int64, kvs ...kv) {
	p.t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = pid, 0, p.seq[pid], true
	p.seq[pid] += int32(len(kvs))
	p.append(&spec, p.recs(kvs))
}

// idem appends an idempotent producer's batch.
func (p *plog) idem(pid int64, kvs ...kv) {
	p.t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = pid, 0, p.seq[pid]
	p.seq[pid] += int32(len(kvs))
	p.append(&spec, p.recs(kvs))
}

func (p *plog) end(pid int64, typ record.ControlType) {
	p.t.Helper()
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, 0
	b, err := p.b.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ}, p.ts)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.l.Append(b, 0); err != nil {
		p.t.Fatal(err)
	}
	p.ts += 1000
}

func (p *plog) append(spec *record.BatchSpec, recs []record.Record) {
	p.t.Helper()
	b, err := p.b.AppendBatch(nil, spec, recs)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.l.Append(b, 0); err != nil {
		p.t.Fatal(err)
	}
}

func (p *plog) roll() {
	p.t.Helper()
	if err := p.l.Roll(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *plog) close() {
	p.t.Helper()
	if err := p.l.Close(); err != nil {
		p.t.Fatal(err)
	}
}

// contents reads a partition: every record as "offset:key=value" (value
// "-" for a tombstone, "<marker>" for a control record, "<empty>" for an
// empty batch).
func contents(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []string
	var it record.Iterator
	var r record.Record
	for _, s := range l.Segments() {
		if s.Size() == 0 {
			continue
		}
		buf := make([]byte, s.Size())
		if _, err := s.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		sc := record.NewScanner(buf, "", 0)
		for sc.Next() {
			b := &sc.Entry().Batch
			if b.RecordCount == 0 {
				out = append(out, fmt.Sprintf("%d:<empty>", b.BaseOffset))
			}
			it.Reset(b)
			for it.Next(&r) {
				switch {
				case b.Attributes.IsControl():
					out = append(out, fmt.Sprintf("%d:<marker>", r.Offset))
				case r.Value == nil:
					out = append(out, fmt.Sprintf("%d:%s=-", r.Offset, r.Key))
				default:
					out = append(out, fmt.Sprintf("%d:%s=%s", r.Offset, r.Key, r.Value))
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
	return out
}
