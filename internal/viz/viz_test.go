package viz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/vfs"
)

func demoSession(t *testing.T) *Session {
	t.Helper()
	d, err := demo.Get()
	if err != nil {
		t.Fatal(err)
	}
	return NewSession(d.FS, Options{Name: "demo", Demo: true, Now: func() time.Time { return d.Now },
		Notes: d.Notes, Config: func(dir string) config.Config { return d.Config }})
}

// call runs a method through Dispatch and round-trips its result through
// JSON, as both of the page's paths do.
func call[T any](t *testing.T, s *Session, method string, p Params) T {
	t.Helper()
	v, err := s.Dispatch(method, p)
	if err != nil {
		t.Fatalf("%s %v: %v", method, p, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPartitionsDemo(t *testing.T) {
	s := demoSession(t)
	ps := call[PartitionsJSON](t, s, "partitions", nil)
	var dirs []string
	for _, p := range ps.Partitions {
		dirs = append(dirs, p.Dir)
	}
	if want := []string{demo.Partition, demo.Damaged}; !slices.Equal(dirs, want) {
		t.Fatalf("partitions %v, want %v", dirs, want)
	}
	if ps.Partitions[0].Topic != "orders" || ps.Partitions[0].Partition != 0 || ps.Partitions[0].Segments != 7 {
		t.Errorf("orders-0: %+v", ps.Partitions[0])
	}
	if !ps.Demo || ps.Now != demo.Now.UnixMilli() {
		t.Errorf("demo %v now %d", ps.Demo, ps.Now)
	}
}

func TestPartitionOverview(t *testing.T) {
	s := demoSession(t)
	p := call[PartitionJSON](t, s, "partition", Params{"dir": demo.Partition})
	if len(p.Segments) != 7 || len(p.Deleted) != 1 || p.Deleted[0].BaseOffset != 0 || p.Deleted[0].Suffix != ".deleted" {
		t.Fatalf("segments %d deleted %+v", len(p.Segments), p.Deleted)
	}
	if p.LogStartOffset <= p.Segments[0].BaseOffset || p.LogStartOffset >= p.Segments[1].BaseOffset {
		t.Errorf("log start offset %d should be inside the first segment (%d..%d)", p.LogStartOffset, p.Segments[0].BaseOffset, p.Segments[1].BaseOffset)
	}
	for i, sg := range p.Segments {
		if sg.Active != (i == len(p.Segments)-1) {
			t.Errorf("segment %d active %v", sg.BaseOffset, sg.Active)
		}
		if sg.LargestTimestamp < sg.FirstTimestamp && sg.BaseOffset != 2361 || sg.Size <= 0 || sg.Note == "" || len(sg.Files) < 3 {
			t.Errorf("segment %+v", sg)
		}
		if i > 0 && p.Segments[i-1].NextOffset != sg.BaseOffset {
			t.Errorf("segment %d: previous next offset %d", sg.BaseOffset, p.Segments[i-1].NextOffset)
		}
	}
	if last := p.Segments[len(p.Segments)-1]; last.NextOffset != p.LogEndOffset {
		t.Errorf("active next offset %d, log end %d", last.NextOffset, p.LogEndOffset)
	}
	if p.Config[config.RetentionMs] != 7*24*3600*1000 || p.Config[config.SegmentBytes] != demo.SegmentBytes {
		t.Errorf("config %v", p.Config)
	}
}

// dumpCounts runs the dump engine on a .log of fsys.
func dumpCounts(t *testing.T, fsys vfs.FS, name string) dumplog.Result {
	t.Helper()
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	res, err := dumplog.Log(&bytes.Buffer{}, f, st.Size(), name, dumplog.Options{JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// scanAll pages through a segment with small pages.
func scanAll(t *testing.T, s *Session, dir string, base int64, maxBytes string) (rows int, records int64, last ScanJSON) {
	t.Helper()
	from := int64(0)
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatal("scan does not end")
		}
		sc := call[ScanJSON](t, s, "scan", Params{"dir": dir, "base": fmt.Sprint(base), "from": fmt.Sprint(from), "maxBytes": maxBytes})
		n := len(sc.Rows.Position)
		for _, col := range [][]int64{sc.Rows.BaseOffset, sc.Rows.LastOffset, sc.Rows.MaxTimestamp} {
			if len(col) != n {
				t.Fatalf("ragged columns: %d rows", n)
			}
		}
		if n > 0 && sc.Rows.Position[0] != from {
			t.Fatalf("page from %d starts at %d", from, sc.Rows.Position[0])
		}
		rows += n
		records += sc.Records
		if sc.Done {
			return rows, records, sc
		}
		if sc.Next <= from {
			t.Fatalf("scan from %d does not advance (next %d)", from, sc.Next)
		}
		from = sc.Next
	}
}

func TestScanMatchesDump(t *testing.T) {
	s := demoSession(t)
	d, _ := demo.Get()
	p := call[PartitionJSON](t, s, "partition", Params{"dir": demo.Partition})
	codecs := map[int8]bool{}
	var flags int32
	for _, sg := range p.Segments {
		rows, records, last := scanAll(t, s, demo.Partition, sg.BaseOffset, "3000")
		want := dumpCounts(t, d.FS, path.Join(demo.Partition, logFile(sg)))
		if rows != want.Batches || records != int64(want.Records) {
			t.Errorf("segment %d: scan %d batches %d records, dump %d and %d", sg.BaseOffset, rows, records, want.Batches, want.Records)
		}
		if last.Tail == nil || last.Tail.Kind != "none" || last.Error != nil {
			t.Errorf("segment %d: tail %+v error %+v", sg.BaseOffset, last.Tail, last.Error)
		}
		full := call[ScanJSON](t, s, "scan", Params{"dir": demo.Partition, "base": fmt.Sprint(sg.BaseOffset)})
		for i := range full.Rows.Codec {
			codecs[full.Rows.Codec[i]] = true
			flags |= full.Rows.Flags[i]
		}
	}
	if len(codecs) != 5 {
		t.Errorf("codecs %v, want all five", codecs)
	}
	for _, f := range []int32{FlagTransactional, FlagControl, FlagCommit, FlagAbort} {
		if flags&f == 0 {
			t.Errorf("no batch has flag %d", f)
		}
	}
	// The deleted segment can be scanned too.
	del := call[ScanJSON](t, s, "scan", Params{"dir": demo.Partition, "base": "0", "suffix": ".deleted"})
	if len(del.Rows.Position) != 60 || !del.Done {
		t.Errorf("the segment waiting as .deleted: %d rows", len(del.Rows.Position))
	}
}

func logFile(sg SegmentJSON) string {
	for _, f := range sg.Files {
		if f.Kind == "log" {
			return f.Name
		}
	}
	return ""
}

func TestDamagedScanAndVerify(t *testing.T) {
	s := demoSession(t)
	p := call[PartitionJSON](t, s, "partition", Params{"dir": demo.Damaged})
	if len(p.Segments) != 3 {
		t.Fatalf("%d segments", len(p.Segments))
	}
	_, _, last := scanAll(t, s, demo.Damaged, p.Segments[2].BaseOffset, "2000")
	if last.Tail == nil || last.Tail.Kind != "partial" {
		t.Errorf("active segment tail %+v", last.Tail)
	}
	v := call[VerifyJSON](t, s, "verify", Params{"dir": demo.Damaged})
	kinds := map[string]FindingJSON{}
	for _, f := range v.Findings {
		kinds[f.Kind] = f
		if f.File == "" || f.Target == "" {
			t.Errorf("finding %+v", f)
		}
	}
	for k, target := range map[string]string{
		finding.KindLogCRC: "log", finding.KindLogTornTail: "log", finding.KindIndexNotBatchBoundary: "index",
		finding.KindTimeOutOfOrder: "timeindex", finding.KindZeroPadding: "index",
	} {
		f, ok := kinds[k]
		if !ok {
			t.Errorf("no %s finding; got %v", k, v.Findings)
			continue
		}
		if f.Target != target && !(k == finding.KindZeroPadding && f.Target == "timeindex") {
			t.Errorf("%s: target %s, want %s", k, f.Target, target)
		}
	}
	if f := kinds[finding.KindLogCRC]; f.Segment != p.Segments[1].BaseOffset || f.Position <= 0 {
		t.Errorf("crc finding %+v", f)
	}
	if f := kinds[finding.KindTimeOutOfOrder]; f.Entry != 3 || f.Segment != 0 {
		t.Errorf("time index finding %+v", f)
	}
	if v.OK || v.Errors == 0 || len(v.PerSegment) != 3 {
		t.Errorf("report ok %v errors %d segments %d", v.OK, v.Errors, len(v.PerSegment))
	}
	if pr := call[ProgressJSON](t, s, "progress", Params{"dir": demo.Damaged}); pr.Running || pr.Total == 0 || pr.Done != pr.Total {
		t.Errorf("progress %+v", pr)
	}
	// The scan lists the bad-CRC batch and goes on after it.
	rows, _, _ := scanAll(t, s, demo.Damaged, p.Segments[1].BaseOffset, "100000")
	if rows != 30 {
		t.Errorf("segment 2: %d rows, want all 30 batches", rows)
	}
	sc := call[ScanJSON](t, s, "scan", Params{"dir": demo.Damaged, "base": fmt.Sprint(p.Segments[1].BaseOffset)})
	bad := slices.IndexFunc(sc.Rows.Flags, func(f int32) bool { return f&FlagCRCInvalid != 0 })
	if bad != 10 || sc.Rows.Position[bad] != kinds[finding.KindLogCRC].Position {
		t.Errorf("bad CRC at row %d, want 10 at the finding's position", bad)
	}
	// Its records still decode, with the error said.
	rec := call[RecordsJSON](t, s, "records", Params{"dir": demo.Damaged, "base": fmt.Sprint(p.Segments[1].BaseOffset), "position": fmt.Sprint(sc.Rows.Position[10])})
	if rec.Batch.CRCValid || !strings.Contains(rec.Batch.Error, "checksum") {
		t.Errorf("batch %+v", rec.Batch)
	}
	lay := call[LayoutJSON](t, s, "layout", Params{"dir": demo.Damaged, "base": fmt.Sprint(p.Segments[1].BaseOffset), "position": fmt.Sprint(sc.Rows.Position[10])})
	if i := slices.IndexFunc(lay.Fields, func(f FieldJSON) bool { return f.Name == "crc" }); i < 0 || !lay.Fields[i].Bad {
		t.Errorf("crc field not marked bad: %+v", lay.Fields)
	}
}

func TestVerifyDemo(t *testing.T) {
	s := demoSession(t)
	v := call[VerifyJSON](t, s, "verify", Params{"dir": demo.Partition})
	kinds := map[string]bool{}
	for _, f := range v.Findings {
		kinds[f.Kind] = true
		if f.Level == finding.Error {
			t.Errorf("error in the demo: %+v", f)
		}
	}
	if !kinds[finding.KindDeletedFile] || kinds[finding.KindLeftoverFile] || !kinds[finding.KindFarPastTimestamp] {
		t.Errorf("demo findings %v: want the .deleted files (deleted-file, not leftover-file) and the far-past backlog", kinds)
	}
	p := call[PartitionJSON](t, s, "partition", Params{"dir": demo.Partition})
	var records int64
	for _, sg := range p.Segments {
		_, r, _ := scanAll(t, s, demo.Partition, sg.BaseOffset, "100000")
		records += r
	}
	if v.Records != records || !v.OK {
		t.Errorf("verify counts %d records (ok %v), the scan %d", v.Records, v.OK, records)
	}
}

func TestRecordsAndLayout(t *testing.T) {
	s := demoSession(t)
	p := call[PartitionJSON](t, s, "partition", Params{"dir": demo.Partition})
	seen := map[string]bool{}
	for _, sg := range p.Segments {
		base := fmt.Sprint(sg.BaseOffset)
		sc := call[ScanJSON](t, s, "scan", Params{"dir": demo.Partition, "base": base})
		bs := call[BatchesJSON](t, s, "batches", Params{"dir": demo.Partition, "base": base, "limit": "500"})
		if len(bs.Batches) != len(sc.Rows.Position) || !bs.Done {
			t.Fatalf("segment %s: %d batches, scan %d", base, len(bs.Batches), len(sc.Rows.Position))
		}
		for i, b := range bs.Batches {
			if b.Position != sc.Rows.Position[i] || b.BaseOffset != sc.Rows.BaseOffset[i] || int32(b.Count) != sc.Rows.Count[i] || !b.CRCValid {
				t.Fatalf("batch %d: %+v vs scan row", i, b)
			}
			pos := fmt.Sprint(b.Position)
			recs := call[RecordsJSON](t, s, "records", Params{"dir": demo.Partition, "base": base, "position": pos, "limit": "2"})
			if recs.Error != "" || (b.Count > 0 && len(recs.Records) == 0) || len(recs.Records) > 2 {
				t.Fatalf("records of %d: %+v", b.Position, recs)
			}
			if b.Count > 2 {
				more := call[RecordsJSON](t, s, "records", Params{"dir": demo.Partition, "base": base, "position": pos, "from": fmt.Sprint(recs.Next), "limit": "500"})
				if got := len(recs.Records) + len(more.Records); got != b.Count || !more.Done {
					t.Fatalf("batch %d: %d records in pages, want %d", b.Position, got, b.Count)
				}
			}
			for _, r := range recs.Records {
				if r.ControlType != "" {
					seen[r.ControlType] = true
				}
				if r.Value == nil && r.ControlType == "" {
					seen["tombstone"] = true
				}
			}
			if b.Count == 0 {
				seen["empty"] = true
			}
			lay := call[LayoutJSON](t, s, "layout", Params{"dir": demo.Partition, "base": base, "position": pos})
			if lay.Error != "" || lay.Truncated || len(lay.Fields) < 13 {
				t.Fatalf("layout of %d: %+v", b.Position, lay)
			}
			// Fields tile the batch: no overlaps, in order, the header
			// from the first byte and, uncompressed, to the last.
			at := b.Position
			for _, f := range lay.Fields {
				if f.Start < at || f.End <= f.Start {
					t.Fatalf("layout of %d: field %+v after %d", b.Position, f, at)
				}
				at = f.End
			}
			if lay.Fields[0].Start != b.Position || at != b.Position+int64(b.Size) {
				t.Fatalf("layout of %d: fields end at %d, batch at %d", b.Position, at, b.Position+int64(b.Size))
			}
		}
	}
	for _, k := range []string{"COMMIT", "ABORT", "tombstone", "empty"} {
		if !seen[k] {
			t.Errorf("no %s in the demo", k)
		}
	}
}

func TestIndexEntries(t *testing.T) {
	s := demoSession(t)
	p := call[PartitionJSON](t, s, "partition", Params{"dir": demo.Partition})
	sg := p.Segments[2]
	for _, kind := range []string{"offset", "time"} {
		x := call[IndexJSON](t, s, "index", Params{"dir": demo.Partition, "base": fmt.Sprint(sg.BaseOffset), "kind": kind, "check": "1"})
		if !x.Exists || x.Total == 0 || len(x.Entries) != x.Total || !x.Done || !x.Checked {
			t.Errorf("%s: %+v", kind, x)
		}
		for _, pr := range x.Problems {
			if pr.Level == finding.Error {
				t.Errorf("%s: %+v", kind, pr)
			}
		}
		// Paging.
		a := call[IndexJSON](t, s, "index", Params{"dir": demo.Partition, "base": fmt.Sprint(sg.BaseOffset), "kind": kind, "limit": "3"})
		b := call[IndexJSON](t, s, "index", Params{"dir": demo.Partition, "base": fmt.Sprint(sg.BaseOffset), "kind": kind, "from": fmt.Sprint(a.Next)})
		if len(a.Entries) != 3 || len(a.Entries)+len(b.Entries) != x.Total || a.Done || !b.Done {
			t.Errorf("%s paging: %d + %d of %d", kind, len(a.Entries), len(b.Entries), x.Total)
		}
	}
	txn := call[IndexJSON](t, s, "index", Params{"dir": demo.Partition, "base": "2559", "kind": "txn", "check": "1"})
	if !txn.Exists || len(txn.Entries) != 1 || txn.Entries[0][0] != 2000 || len(txn.Problems) != 0 {
		t.Errorf("txnindex %+v", txn)
	}
	bad := call[IndexJSON](t, s, "index", Params{"dir": demo.Damaged, "base": "0", "kind": "time"})
	if len(bad.Problems) == 0 || bad.Problems[0].Kind != finding.KindTimeOutOfOrder || bad.Problems[0].Entry != 3 {
		t.Errorf("damaged time index without the log: %+v", bad.Problems)
	}
}

func TestRetentionWhatIf(t *testing.T) {
	s := demoSession(t)
	deletions := func(p Params) []int64 {
		p["dir"] = demo.Partition
		r := call[RetentionJSON](t, s, "retention", p)
		var out []int64
		for _, d := range r.Deletions {
			out = append(out, d.BaseOffset)
		}
		for _, b := range r.Segments {
			if b.DeletedNow != slices.Contains(out, b.BaseOffset) {
				t.Errorf("segment %d deletedNow %v", b.BaseOffset, b.DeletedNow)
			}
			// The bounds agree with the plan: a segment the check at now
			// deletes is readable until the next check at the latest.
			iv := r.Policy[config.LogRetentionCheckIntervalMs]
			if b.DeletedNow && (b.ReadableUntil == nil || *b.ReadableUntil <= r.Now || *b.ReadableUntil > r.Now+iv) {
				t.Errorf("segment %d is deleted now but readable until %v: %s", b.BaseOffset, b.ReadableUntil, b.Explanation)
			}
			if (b.ReadableUntil == nil) != (b.IfAppendsContinue == nil) || (b.ReadableUntil != nil && *b.IfAppendsContinue < *b.ReadableUntil) {
				t.Errorf("segment %d: readable until %v, if appends continue %v", b.BaseOffset, b.ReadableUntil, b.IfAppendsContinue)
			}
		}
		return out
	}
	if got := deletions(Params{}); !slices.Equal(got, []int64{378, 967}) {
		t.Errorf("default: deletes %v", got)
	}
	day := int64(24 * 3600 * 1000)
	if got := deletions(Params{"retention.ms": fmt.Sprint(3 * day)}); !slices.Equal(got, []int64{378, 967, 1554, 2361}) {
		t.Errorf("3 days: deletes %v", got)
	}
	// Every segment, the active one included, is older than a minute: a
	// check now deletes them all, rolling first.
	if got := deletions(Params{"retention.ms": "60000"}); len(got) < 5 {
		t.Errorf("1 minute: deletes %v", got)
	}
	if got := deletions(Params{"retention.ms": "-1", "retention.bytes": "150000"}); len(got) == 0 {
		t.Errorf("retention.bytes: deletes nothing")
	}
	if got := deletions(Params{"now": fmt.Sprint(demo.Now.Add(-3 * time.Hour).UnixMilli())}); !slices.Equal(got, []int64{378}) {
		t.Errorf("3 hours before now: deletes %v", got)
	}
	if _, err := s.Dispatch("retention", Params{"dir": demo.Partition, "retention.ms": "-7"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("retention.ms=-7: %v", err)
	}
}

func TestBadRequests(t *testing.T) {
	s := demoSession(t)
	for _, tc := range []struct {
		method string
		p      Params
		want   error
	}{
		{"nope", nil, ErrBadRequest},
		{"partition", Params{}, ErrBadRequest},
		{"partition", Params{"dir": "../etc"}, ErrBadRequest},
		{"partition", Params{"dir": "kafka-logs/../../x"}, ErrBadRequest},
		{"partition", Params{"dir": "kafka-logs/nope-0"}, ErrNotFound},
		{"scan", Params{"dir": demo.Partition, "base": "12"}, ErrNotFound},
		{"scan", Params{"dir": demo.Partition, "base": "x"}, ErrBadRequest},
		{"scan", Params{"dir": demo.Partition, "base": "378", "from": "-1"}, ErrBadRequest},
		{"scan", Params{"dir": demo.Partition, "base": "378", "suffix": "/../x"}, ErrBadRequest},
		{"bytes", Params{"dir": demo.Partition, "file": "../log-start-offset-checkpoint"}, ErrBadRequest},
		{"bytes", Params{"dir": demo.Partition, "file": "nope"}, ErrNotFound},
		{"index", Params{"dir": demo.Partition, "base": "378", "kind": "x"}, ErrBadRequest},
	} {
		_, err := s.Dispatch(tc.method, tc.p)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s %v: no error", tc.method, tc.p)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s %v: %v, want %v", tc.method, tc.p, err, tc.want)
		}
	}
	// A position that is not where a batch starts gives a batch that says so.
	if r := call[RecordsJSON](t, s, "records", Params{"dir": demo.Partition, "base": "378", "position": "5"}); r.Batch.Error == "" {
		t.Errorf("records at position 5: %+v", r.Batch)
	}
	b := call[BytesJSON](t, s, "bytes", Params{"dir": demo.LogDir, "file": "log-start-offset-checkpoint", "length": "1000"})
	if b.Length != int(b.FileSize) || b.Length == 0 {
		t.Errorf("bytes %+v", b)
	}
	loc := call[LocateJSON](t, s, "locate", Params{"dir": demo.Partition, "offset": "2600"})
	if !loc.Found || loc.BaseOffset != 2559 {
		t.Errorf("locate %+v", loc)
	}
}

// TestRealData checks every real partition: the scan's counts are the dump
// engine's, and verification finds no error in what a broker wrote.
func TestRealData(t *testing.T) {
	root := realdata.Dir(t)
	for _, dir := range realdata.PartitionDirs(t) {
		t.Run(realdata.Rel(t, dir), func(t *testing.T) {
			s := NewSession(vfs.FromIOFS(os.DirFS(dir)), Options{Name: filepath.Base(dir)})
			defer s.Close()
			ps := call[PartitionsJSON](t, s, "partitions", nil)
			if len(ps.Partitions) != 1 || ps.Partitions[0].Dir != "." {
				t.Fatalf("partitions %+v", ps.Partitions)
			}
			v, err := s.Dispatch("partition", Params{"dir": "."})
			if err != nil {
				t.Skipf("the engine does not open it read-only: %v", err)
			}
			p := v.(*PartitionJSON)
			for _, sg := range p.Segments {
				rows, records, _ := scanAll(t, s, ".", sg.BaseOffset, fmt.Sprint(1<<20))
				want := dumpCounts(t, vfs.OS(), filepath.Join(dir, logFile(sg)))
				if rows != want.Batches || records != int64(want.Records) {
					t.Errorf("segment %d: scan %d batches %d records, dump %d and %d", sg.BaseOffset, rows, records, want.Batches, want.Records)
				}
			}
		})
	}
	_ = root
}

func TestReadAhead(t *testing.T) {
	d, _ := demo.Get()
	ra := ReadAhead(d.FS, 4096, 4).(*readAheadFS)
	s := NewSession(ra, Options{})
	sc := call[ScanJSON](t, s, "scan", Params{"dir": demo.Partition, "base": "967"})
	want := call[ScanJSON](t, demoSession(t), "scan", Params{"dir": demo.Partition, "base": "967"})
	if !slices.Equal(sc.Rows.Position, want.Rows.Position) || sc.Records != want.Records {
		t.Fatal("scan through ReadAhead differs")
	}
	if _, err := ra.Create("x"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("create: %v", err)
	}
	if ra.reads == 0 || len(ra.cache) > 4 {
		t.Errorf("reads %d, cached blocks %d", ra.reads, len(ra.cache))
	}
}

// TestConcurrentCalls runs the page's calls in parallel, as the HTTP
// server does (go test -race checks the session's locking).
func TestConcurrentCalls(t *testing.T) {
	s := demoSession(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := demo.Partition
			if i%2 == 1 {
				dir = demo.Damaged
			}
			for _, c := range []struct {
				m string
				p Params
			}{
				{"partition", Params{"dir": dir}},
				{"scan", Params{"dir": dir, "base": "0", "suffix": map[bool]string{true: ".deleted"}[dir == demo.Partition]}},
				{"index", Params{"dir": demo.Partition, "base": "967", "kind": "offset", "check": "1"}},
				{"retention", Params{"dir": dir, "retention.ms": fmt.Sprint(86400000 * (i + 1))}},
				{"verify", Params{"dir": dir}},
				{"progress", Params{"dir": dir}},
			} {
				if _, err := s.Dispatch(c.m, c.p); err != nil {
					errs <- fmt.Errorf("%s %v: %w", c.m, c.p, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// blockFS blocks every Open of a .log until release is closed, and says
// when one is waiting.
type blockFS struct {
	vfs.FS
	waiting chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockFS) Open(name string) (vfs.File, error) {
	if strings.HasSuffix(name, ".log") {
		b.once.Do(func() { close(b.waiting) })
		<-b.release
	}
	return b.FS.Open(name)
}

// TestCancelVerify: Cancel stops the running verification of a partition,
// whose Verify then fails with ErrCancelled; with none running it says so.
func TestCancelVerify(t *testing.T) {
	d, err := demo.Get()
	if err != nil {
		t.Fatal(err)
	}
	b := &blockFS{FS: d.FS, waiting: make(chan struct{}), release: make(chan struct{})}
	s := NewSession(b, Options{Now: func() time.Time { return d.Now }})
	if c := call[CancelJSON](t, s, "cancel", Params{"dir": demo.Partition}); c.Cancelled {
		t.Error("Cancel with nothing running says it cancelled")
	}
	// Open the partition first: the log's own open reads the .log files.
	close(b.release)
	call[PartitionJSON](t, s, "partition", Params{"dir": demo.Partition})
	b.release, b.waiting, b.once = make(chan struct{}), make(chan struct{}), sync.Once{}
	done := make(chan error, 1)
	go func() {
		_, err := s.Dispatch("verify", Params{"dir": demo.Partition})
		done <- err
	}()
	<-b.waiting // Verify is reading
	if c := call[CancelJSON](t, s, "cancel", Params{"dir": demo.Partition}); !c.Cancelled {
		t.Error("Cancel of a running verification says nothing ran")
	}
	close(b.release)
	if err := <-done; !errors.Is(err, ErrCancelled) || !strings.Contains(err.Error(), "cancelled after") {
		t.Errorf("the cancelled Verify: %v", err)
	}
	// A new one runs to the end.
	if v := call[VerifyJSON](t, s, "verify", Params{"dir": demo.Partition}); v.Records == 0 {
		t.Error("verify after a cancel read nothing")
	}
}
