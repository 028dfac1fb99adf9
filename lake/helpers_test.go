package lake

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// t0 is an hour boundary (2025-11-14T22:00:00Z): the first bucket of the
// test partitions.
const t0 = int64(1_763_157_600_000)

// fakeClock is a settable clock.
type fakeClock struct{ ms int64 }

func (c *fakeClock) Now() time.Time      { return time.UnixMilli(c.ms) }
func (c *fakeClock) add(d time.Duration) { c.ms += d.Milliseconds() }
func newClock() *fakeClock               { return &fakeClock{ms: t0} }

// gen writes a test partition through the engine, as a follower appends
// (offsets given, so that gaps can be made), and remembers which offsets
// hold committed records.
type gen struct {
	t    testing.TB
	fsys vfs.FS
	dir  string
	l    *kafkalog.Log
	b    record.Builder
	next int64
	seq  map[int64]int32
	// committed records by offset; pending transactional records by
	// producer; none lists the offsets with no committed record.
	committed map[int64]Record
	pending   map[int64][]Record
	none      []int64
}

func newGen(t testing.TB, fsys vfs.FS, dir string) *gen {
	t.Helper()
	l, err := kafkalog.Open(fsys, dir, kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &gen{t: t, fsys: fsys, dir: dir, l: l, seq: map[int64]int32{}, committed: map[int64]Record{}, pending: map[int64][]Record{}}
}

// recs makes n records at ts, ts+1ms … with JSON or raw values.
func (g *gen) recs(ts int64, vals []string) ([]record.Record, []Record) {
	var rs []record.Record
	var want []Record
	for i, v := range vals {
		off := g.next + int64(i)
		r := record.Record{Timestamp: ts + int64(i), Key: []byte(fmt.Sprintf("k%d", off))}
		if v != "<null>" {
			r.Value = []byte(v)
		}
		if off%3 == 0 {
			r.Headers = []record.Header{{Key: []byte("h"), Value: []byte(fmt.Sprint(off))}, {Key: []byte("n")}}
		}
		rs = append(rs, r)
		want = append(want, Record{Offset: off, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers})
	}
	return rs, want
}

func (g *gen) append(spec *record.BatchSpec, rs []record.Record) {
	g.t.Helper()
	spec.BaseOffset = g.next
	b, err := g.b.AppendBatch(nil, spec, rs)
	if err != nil {
		g.t.Fatal(err)
	}
	res, err := g.l.AppendAsFollower(b)
	if err != nil {
		g.t.Fatal(err)
	}
	g.next = res.LastOffset + 1
}

// put appends a plain batch of vals at ts.
func (g *gen) put(ts int64, vals ...string) {
	g.t.Helper()
	rs, want := g.recs(ts, vals)
	spec := record.NewBatchSpec(0, compress.None)
	g.append(&spec, rs)
	for _, r := range want {
		g.committed[r.Offset] = r
	}
}

// txn appends a transactional batch of producer pid.
func (g *gen) txn(pid, ts int64, vals ...string) {
	g.t.Helper()
	rs, want := g.recs(ts, vals)
	spec := record.NewBatchSpec(0, compress.None)
	spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence, spec.Transactional = pid, 0, g.seq[pid], true
	g.seq[pid] += int32(len(rs))
	g.append(&spec, rs)
	g.pending[pid] = append(g.pending[pid], want...)
}

// end writes pid's COMMIT or ABORT marker.
func (g *gen) end(pid, ts int64, commit bool) {
	g.t.Helper()
	spec := record.NewBatchSpec(g.next, compress.None)
	spec.ProducerID, spec.ProducerEpoch = pid, 0
	typ := record.ControlAbort
	if commit {
		typ = record.ControlCommit
	}
	b, err := g.b.AppendEndTxnMarker(nil, &spec, record.EndTxnMarker{Type: typ}, ts)
	if err != nil {
		g.t.Fatal(err)
	}
	if _, err := g.l.AppendAsFollower(b); err != nil {
		g.t.Fatal(err)
	}
	g.none = append(g.none, g.next)
	g.next++
	for _, r := range g.pending[pid] {
		if commit {
			g.committed[r.Offset] = r
		} else {
			g.none = append(g.none, r.Offset)
		}
	}
	delete(g.pending, pid)
}

// gap skips n offsets, as the log cleaner leaves them.
func (g *gen) gap(n int64) {
	for i := range n {
		g.none = append(g.none, g.next+i)
	}
	g.next += n
}

func (g *gen) roll() {
	g.t.Helper()
	if err := g.l.Roll(); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gen) close() {
	g.t.Helper()
	if err := g.l.Close(); err != nil {
		g.t.Fatal(err)
	}
}

// reopen opens the partition again for appends.
func (g *gen) reopen() {
	g.t.Helper()
	l, err := kafkalog.Open(g.fsys, g.dir, kafkalog.DefaultConfig(), kafkalog.Options{})
	if err != nil {
		g.t.Fatal(err)
	}
	g.l = l
}

// wantRows is the committed records with offsets in [from, to).
func (g *gen) wantRows(from, to int64) []string {
	var out []string
	for off, r := range g.committed {
		if off >= from && off < to {
			out = append(out, rowString(off, r.Key, r.Value))
		}
	}
	sort.Strings(out)
	return out
}

func rowString(off int64, key, value []byte) string {
	return fmt.Sprintf("%08d %s %q", off, key, value)
}

func openSource(t testing.TB, fsys vfs.FS, dir string) *DirSource {
	t.Helper()
	s, err := OpenDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openCatalog(t testing.TB, c Clock) *SQLStore {
	t.Helper()
	cat, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), StoreOptions{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// fileRow is the columns tests read back from a rebuilt file.
type fileRow struct {
	Offset   int64  `parquet:"offset"`
	Key      []byte `parquet:"key,optional"`
	ValueRaw []byte `parquet:"value_raw,optional"`
}

// readOffsets reads the offset column of a Parquet file.
func readOffsets(t testing.TB, b []byte) []int64 {
	t.Helper()
	f, err := parquet.OpenFile(bytesReaderAt(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	col, ok := f.Schema().Lookup(ColOffset)
	if !ok {
		t.Fatal("no offset column")
	}
	var out []int64
	for _, rg := range f.RowGroups() {
		pages := rg.ColumnChunks()[col.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]parquet.Value, p.NumValues())
			n, _ := p.Values().ReadValues(vals)
			for _, v := range vals[:n] {
				out = append(out, v.Int64())
			}
		}
		pages.Close()
	}
	return out
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// indexed is what a test reads back from the catalog: the files, each
// rebuilt, and the rows they hold.
type indexed struct {
	files []DataFile
	rows  []string          // every row of every file, sorted
	recs  map[int64][]int64 // file id → record offsets in it
}

// readBack lists the partition's files, rebuilds each (checking its
// checksum) and collects its rows.
func readBack(t testing.TB, cat *SQLStore, src Source, table string, o Options) indexed {
	t.Helper()
	ctx := context.Background()
	id, err := cat.Table(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	files, err := cat.Files(ctx, id, o.Partition, false)
	if err != nil {
		t.Fatal(err)
	}
	out := indexed{files: files, recs: map[int64][]int64{}}
	for _, f := range files {
		b, err := Rebuild(ctx, cat, src, id, f, o)
		if err != nil {
			t.Fatalf("rebuild file %d [%d, %d]: %v", f.ID, f.StartOffset, f.EndOffset, err)
		}
		if int64(len(b)) != f.Bytes {
			t.Fatalf("file %d: rebuilt %d bytes, catalog says %d", f.ID, len(b), f.Bytes)
		}
		if !slices.Equal(b[len(b)-len(f.Footer):], f.Footer) {
			t.Fatalf("file %d: the stored footer is not the file's", f.ID)
		}
		rows, err := parquet.Read[fileRow](bytesReaderAt(b), int64(len(b)))
		if err != nil {
			t.Fatalf("file %d: read: %v", f.ID, err)
		}
		if int64(len(rows)) != f.Rows {
			t.Fatalf("file %d: %d rows, catalog says %d", f.ID, len(rows), f.Rows)
		}
		for _, r := range rows {
			out.rows = append(out.rows, rowString(r.Offset, r.Key, valueOf(t, r, src)))
			out.recs[f.ID] = append(out.recs[f.ID], r.Offset)
		}
	}
	sort.Strings(out.rows)
	return out
}

// valueOf is the record's original value: value_raw, or (for a typed
// JSON object) the source's value at the offset, which the typed columns
// were checked to hold by TestStats.
func valueOf(t testing.TB, r fileRow, src Source) []byte {
	if r.ValueRaw != nil {
		return r.ValueRaw
	}
	recs, err := ReadRange(src, r.Offset, r.Offset+1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("offset %d: %v (%d records)", r.Offset, err, len(recs))
	}
	return recs[0].Value
}

// checkTiling asserts that the files' ranges tile [from, to) exactly,
// that every range starts at its first record (so the offsets with no
// committed record before a record sit in the file before them), and
// that each committed record is in exactly one file.
func checkTiling(t testing.TB, g *gen, ix indexed, from, to int64) {
	t.Helper()
	type rng struct{ s, e int64 }
	var ranges []rng
	first := map[rng]int64{}
	for _, f := range ix.files {
		r := rng{f.StartOffset, f.EndOffset}
		if len(ranges) == 0 || ranges[len(ranges)-1] != r {
			ranges = append(ranges, r)
			first[r] = -1
		}
		for _, off := range ix.recs[f.ID] {
			if off < r.s || off > r.e {
				t.Fatalf("file %d [%d, %d] holds offset %d", f.ID, r.s, r.e, off)
			}
			if first[r] < 0 || off < first[r] {
				first[r] = off
			}
		}
	}
	if len(ranges) == 0 {
		if from != to {
			t.Fatalf("no files for [%d, %d)", from, to)
		}
		return
	}
	if ranges[0].s != from || ranges[len(ranges)-1].e != to-1 {
		t.Fatalf("files cover [%d, %d], want [%d, %d)", ranges[0].s, ranges[len(ranges)-1].e, from, to)
	}
	for i := 1; i < len(ranges); i++ {
		if ranges[i].s != ranges[i-1].e+1 {
			t.Fatalf("range %d [%d, %d] does not follow [%d, %d]: gap or overlap", i, ranges[i].s, ranges[i].e, ranges[i-1].s, ranges[i-1].e)
		}
	}
	for _, r := range ranges[1:] {
		if first[r] != r.s {
			t.Fatalf("range [%d, %d] starts before its first record %d: offsets with no committed record are not in the file before them", r.s, r.e, first[r])
		}
	}
	// Every aborted record, marker and gap in [from, to) is in a range
	// whose first record is below it.
	for _, off := range g.none {
		if off < from || off >= to {
			continue
		}
		for _, r := range ranges {
			if off >= r.s && off <= r.e && r != ranges[0] && first[r] > off {
				t.Fatalf("offset %d (no committed record) is in range [%d, %d] after it", off, r.s, r.e)
			}
		}
	}
	want := g.wantRows(from, to)
	if !slices.Equal(ix.rows, want) {
		t.Fatalf("rows differ:\n got %d rows %q\nwant %d rows %q", len(ix.rows), head(ix.rows), len(want), head(want))
	}
}

func head(s []string) []string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// triggers lists the triggers of the files.
func triggers(files []DataFile) map[Trigger]int {
	m := map[Trigger]int{}
	for _, f := range files {
		m[f.Trigger]++
	}
	return m
}
