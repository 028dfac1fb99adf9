package record_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/record"
)

// fileStats is what a complete decode of a log file finds.
type fileStats struct {
	batches, records, txn, control int
	first, last                    int64
	codecs                         map[string]bool
	positions                      map[int64]int // entry position -> index
	entries                        []entrySummary
}

type entrySummary struct {
	pos              int64
	base, lastOffset int64
	maxTimestamp     int64
}

// decodeAll decodes every entry and every record of a log file's bytes,
// failing the test on any problem.
func decodeAll(t *testing.T, path string, data []byte) fileStats {
	t.Helper()
	st := fileStats{first: -1, last: -1, codecs: map[string]bool{}, positions: map[int64]int{}}
	s := record.NewScanner(data, path, 0)
	s.Validate = true
	var it record.Iterator
	var lit record.LegacyIterator
	var r record.Record
	prevOffset := int64(-1)
	for s.Next() {
		e := s.Entry()
		st.batches++
		st.positions[e.Position] = len(st.entries)
		st.entries = append(st.entries, entrySummary{e.Position, e.BaseOffset(), e.LastOffset(), e.MaxTimestamp()})
		if st.first < 0 {
			st.first = e.BaseOffset()
		}
		st.last = e.LastOffset()
		var n int
		if e.Magic == record.MagicV2 {
			b := &e.Batch
			st.codecs[b.Attributes.Codec().String()] = true
			if b.Attributes.IsTransactional() {
				st.txn++
			}
			if b.Attributes.IsControl() {
				st.control++
			}
			it.Reset(b)
			for it.Next(&r) {
				n++
				if r.Offset <= prevOffset {
					t.Fatalf("%s: batch at %d: record offset %d after %d", path, e.Position, r.Offset, prevOffset)
				}
				if r.Offset < b.BaseOffset || r.Offset > b.LastOffset() {
					t.Fatalf("%s: batch at %d: record offset %d outside [%d,%d]", path, e.Position, r.Offset, b.BaseOffset, b.LastOffset())
				}
				prevOffset = r.Offset
				if b.Attributes.IsControl() {
					if _, err := record.ParseControlKey(r.Key); err != nil {
						t.Fatalf("%s: control record at %d: %v", path, r.Offset, err)
					}
				}
			}
			if err := it.Err(); err != nil {
				t.Fatalf("%s: batch at %d: %v", path, e.Position, format.WithPath(err, path, e.Position))
			}
			if n != int(b.RecordCount) {
				t.Fatalf("%s: batch at %d: %d records, header says %d", path, e.Position, n, b.RecordCount)
			}
		} else {
			st.codecs[e.Legacy.Codec().String()] = true
			lit.Reset(&e.Legacy)
			for lit.Next(&r) {
				n++
				if r.Offset <= prevOffset {
					t.Fatalf("%s: entry at %d: record offset %d after %d", path, e.Position, r.Offset, prevOffset)
				}
				prevOffset = r.Offset
			}
			if err := lit.Err(); err != nil {
				t.Fatalf("%s: entry at %d: %v", path, e.Position, err)
			}
		}
		st.records += n
	}
	if err := s.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if kind, at, n := s.Tail(); kind != record.TailNone {
		t.Fatalf("%s: %d bytes of %v at %d", path, n, kind, at)
	}
	return st
}

// TestRealLogs decodes every .log file and KRaft snapshot written by a
// real broker, completely, and compares what it finds with the figures an
// independent script recorded in PROVENANCE.md.
func TestRealLogs(t *testing.T) {
	root := realdata.Dir(t)
	seen := map[string]bool{}
	for _, row := range provenance {
		seen[row.path] = true
		t.Run(row.path, func(t *testing.T) {
			path := filepath.Join(root, filepath.FromSlash(row.path))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != row.bytes {
				t.Fatalf("size %d, PROVENANCE says %d", len(data), row.bytes)
			}
			st := decodeAll(t, path, data)
			if st.batches != row.batches || st.records != row.records || st.txn != row.txn || st.control != row.control {
				t.Errorf("batches/records/txn/control = %d/%d/%d/%d, want %d/%d/%d/%d",
					st.batches, st.records, st.txn, st.control, row.batches, row.records, row.txn, row.control)
			}
			if st.first != row.first || st.last != row.last {
				t.Errorf("offsets %d..%d, want %d..%d", st.first, st.last, row.first, row.last)
			}
			var codecs []string
			for c := range st.codecs {
				codecs = append(codecs, c)
			}
			sort.Strings(codecs)
			want := row.codecs
			if want == "-" {
				want = ""
			}
			if got := strings.Join(codecs, ","); got != want {
				t.Errorf("codecs %q, want %q", got, want)
			}
			checkOffsetIndex(t, path, st)
		})
	}
	// Every log file on disk must be in the table, so a new file can't be
	// silently left out.
	for _, p := range realdata.GlobUnder(t, root, "*.log") {
		if rel := realdata.Rel(t, p); !seen[rel] {
			t.Errorf("%s is not in the PROVENANCE table", rel)
		}
	}
}

// TestBrokerLogs decodes every .log of testdata/kafka-broker (written by a
// Kafka 4.3.1 broker through the oracle) completely, cross-checks its .index,
// and checks the set holds what it was made for: every codec including zstd,
// ABORT and COMMIT markers, LogAppendTime, and a cleaned compacted partition.
func TestBrokerLogs(t *testing.T) {
	root, err := realdata.BrokerDir()
	if err != nil {
		t.Fatal(err)
	}
	codecs := map[string]bool{}
	markers := map[record.ControlType]int{}
	logAppend := 0
	for _, p := range realdata.GlobUnder(t, root, "*.log") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st := decodeAll(t, p, data)
		for c := range st.codecs {
			codecs[c] = true
		}
		checkOffsetIndex(t, p, st)
		var it record.Iterator
		var r record.Record
		for s := record.NewScanner(data, p, 0); s.Next(); {
			b := s.Entry().Batch
			if b.Attributes.TimestampType() == record.LogAppendTime {
				logAppend++
			}
			if !b.Attributes.IsControl() {
				continue
			}
			it.Reset(&b)
			for it.Next(&r) {
				if ct, err := record.ParseControlKey(r.Key); err == nil {
					markers[ct]++
				}
			}
		}
	}
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		if !codecs[c] {
			t.Errorf("no %s batch in %s", c, root)
		}
	}
	if markers[record.ControlAbort] == 0 || markers[record.ControlCommit] == 0 {
		t.Errorf("markers %v: want ABORT and COMMIT", markers)
	}
	if logAppend == 0 {
		t.Errorf("no LogAppendTime batch")
	}
	t.Logf("codecs %v, markers %v, %d LogAppendTime batches", codecs, markers, logAppend)
}

// checkOffsetIndex cross-checks the .index beside a log, if there is one:
// every entry (offset o, position p) must point at an entry boundary, with
// every entry before p ending below o and the one at p starting at or
// below o. A lookup through such an index is exact.
func checkOffsetIndex(t *testing.T, logPath string, st fileStats) {
	idxPath := strings.TrimSuffix(logPath, ".log") + ".index"
	idx, err := os.ReadFile(idxPath)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(idx)%8 != 0 {
		t.Fatalf("%s: length %d is not a multiple of 8", idxPath, len(idx))
	}
	base, err := baseOffsetOf(logPath)
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(-1)
	for i := 0; i+8 <= len(idx); i += 8 {
		off := base + int64(format.Int32(idx[i:]))
		pos := int64(format.Int32(idx[i+4:]))
		if off <= prev {
			t.Errorf("%s: entry %d: offset %d after %d", idxPath, i/8, off, prev)
		}
		prev = off
		k, ok := st.positions[pos]
		if !ok {
			t.Errorf("%s: entry %d (%d,%d): position is not an entry boundary", idxPath, i/8, off, pos)
			continue
		}
		if st.entries[k].base > off {
			t.Errorf("%s: entry %d (%d,%d): batch there starts at %d", idxPath, i/8, off, pos, st.entries[k].base)
		}
		if k > 0 && st.entries[k-1].lastOffset >= off {
			t.Errorf("%s: entry %d (%d,%d): the batch before ends at %d", idxPath, i/8, off, pos, st.entries[k-1].lastOffset)
		}
	}
}

func baseOffsetOf(path string) (int64, error) {
	name := filepath.Base(path)
	var base int64
	for _, c := range name[:20] {
		if c < '0' || c > '9' {
			return 0, os.ErrInvalid
		}
		base = base*10 + int64(c-'0')
	}
	return base, nil
}

// TestRealFixtures decodes the record sets that segmentio/kafka-go captured
// from a real broker: magic 1 and magic 2 mixed in one partition, gzip in
// both, with v1 wrappers whose inner offsets are relative.
func TestRealFixtures(t *testing.T) {
	// The record offsets each fixture holds. The counts match kafka-go's own
	// test of these fixtures (message_test.go: "v1c-v1c" holds a, b, c, d);
	// PROVENANCE lists the wrapper offsets, which are the last inner ones.
	want := map[string][]int64{
		"v1-v1.hex":       {0, 1, 2, 3},
		"v1c-v1c.hex":     {0, 1, 2, 3},
		"v1c-v1-v1c.hex":  {0, 1, 2, 3, 4, 5},
		"v2-v2.hex":       {0, 1, 2, 3},
		"v2c-v2c.hex":     {0, 1, 2, 3},
		"v2c-v2-v2c.hex":  {0, 1, 2, 3, 4, 5},
		"v2b-v1.hex":      {0, 1, 2, 3},
		"v2bc-v1.hex":     {0, 1, 2, 3},
		"v2bc-v1c.hex":    {0, 1, 2, 3},
		"v2bc-v1-v1c.hex": {0, 1, 2, 3, 4, 5},
		"v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.hex": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
	}
	files := realdata.Glob(t, "*.hex")
	if len(files) != len(want) {
		t.Fatalf("%d fixtures, want %d", len(files), len(want))
	}
	for _, p := range files {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			set := realdata.FixtureRecordSet(t, p)
			var got []int64
			var it record.EntryIterator
			var r record.Record
			s := record.NewScanner(set, name, 0)
			s.Validate = true
			for s.Next() {
				it.Reset(s.Entry())
				for it.Next(&r) {
					got = append(got, r.Offset)
					checkFixtureRecord(t, &r)
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if kind, at, n := s.Tail(); kind != record.TailNone {
				t.Fatalf("%d bytes of %v at %d", n, kind, at)
			}
			if !equalInt64s(got, want[name]) {
				t.Fatalf("offsets %v, want %v", got, want[name])
			}
		})
	}
}

func checkFixtureRecord(t *testing.T, r *record.Record) {
	t.Helper()
	keys := "alpha beta gamma delta epsilon zeta eta theta"
	if r.Key != nil && !strings.Contains(keys, string(r.Key)) {
		t.Errorf("offset %d: unexpected key %q", r.Offset, r.Key)
	}
	if !strings.HasPrefix(string(r.Value), `{"count":`) {
		t.Errorf("offset %d: unexpected value %q", r.Offset, r.Value)
	}
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
