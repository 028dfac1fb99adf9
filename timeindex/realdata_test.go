package timeindex_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/realdata"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

type realSegment struct {
	rel, path string
	dir       string // partition directory relative to kafka-real
	base      int64
	time      []byte
	offsets   []byte // the sibling .index
	log       *verify.LogSummary
}

func realSegments(tb testing.TB) []realSegment {
	tb.Helper()
	var out []realSegment
	for _, p := range realdata.Glob(tb, "*.timeindex") {
		stem := strings.TrimSuffix(p, ".timeindex")
		base, err := strconv.ParseInt(filepath.Base(stem), 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		tix, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		idx, err := os.ReadFile(stem + ".index")
		if err != nil {
			tb.Fatal(err)
		}
		f, err := os.Open(stem + ".log")
		if err != nil {
			tb.Fatal(err)
		}
		st, _ := f.Stat()
		sum, err := verify.SummarizeLog(f, st.Size(), stem+".log")
		f.Close()
		if err != nil || sum.Err != nil {
			tb.Fatalf("%s: %v %v", stem, err, sum.Err)
		}
		rel := realdata.Rel(tb, p)
		out = append(out, realSegment{rel: rel, path: p, dir: filepath.ToSlash(filepath.Dir(rel)), base: base, time: tix, offsets: idx, log: sum})
	}
	return out
}

func decodeAll(b []byte, base int64) []timeindex.Entry {
	var out []timeindex.Entry
	for i := 0; i+12 <= len(b); i += 12 {
		out = append(out, timeindex.DecodeEntry(b[i:], base))
	}
	return out
}

// TestRealTimeIndexes opens every .timeindex a real broker wrote, runs
// Kafka's sanity check, and cross-checks each entry against the .log: no
// finding at all, since every entry's offset is either its batch's last
// offset or the offset of the record that carried the timestamp.
func TestRealTimeIndexes(t *testing.T) {
	total := 0
	for _, s := range realSegments(t) {
		t.Run(s.rel, func(t *testing.T) {
			x := openTime(t, vfs.OS(), s.path, s.base, -1, false)
			defer x.Close()
			if err := x.SanityCheck(); err != nil {
				t.Fatal(err)
			}
			if p := x.Padding(); p.Untrimmed {
				t.Fatalf("padding %+v", p)
			}
			if got, want := x.AppendAll(nil), decodeAll(s.time, s.base); !equal(got, want) {
				t.Fatalf("entries %v, want %v", got, want)
			}
			for _, p := range verify.TimeIndex(x, s.log.Entries) {
				t.Errorf("%v %s at %d: %s", p.Level, p.Kind, p.Position, p.Detail)
			}
			checkTimeLookups(t, x, s.log.Entries)
			total += x.Entries()
		})
	}
	t.Logf("%d entries", total)
}

func equal(a, b []timeindex.Entry) bool {
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

// checkTimeLookups asserts what a lookup by time needs: for each batch's
// max timestamp t, the entry found has a timestamp at most t, and no batch
// before the one holding its offset has a timestamp of t or more.
func checkTimeLookups(t *testing.T, x *timeindex.TimeIndex, entries []verify.LogEntrySummary) {
	t.Helper()
	loc := verify.NewLocator(entries)
	for _, b := range entries {
		e := x.Lookup(b.MaxTimestamp)
		if e.Timestamp > b.MaxTimestamp {
			t.Fatalf("Lookup(%d) = %+v: above the target", b.MaxTimestamp, e)
		}
		if e.Timestamp == format.NoTimestamp {
			continue
		}
		h, ok := loc.Holding(e.Offset)
		if !ok {
			t.Fatalf("Lookup(%d) = %+v: no batch holds the offset", b.MaxTimestamp, e)
		}
		if h > 0 && loc.MaxTimestampThrough(h-1) >= b.MaxTimestamp && loc.MaxTimestampThrough(h-1) > e.Timestamp {
			t.Fatalf("Lookup(%d) = %+v skips an earlier batch with timestamp %d", b.MaxTimestamp, e, loc.MaxTimestampThrough(h-1))
		}
	}
}

// TestRealPaddedTimeIndex zero-pads the largest real time index to
// roundDown(segment.index.bytes, 12) = 10485756 bytes, as a running broker
// leaves its active segment's, and shows both Kafka's view (a last entry of
// (0, base): KAFKA-10207; a failed sanity check) and the padding report.
func TestRealPaddedTimeIndex(t *testing.T) {
	var s realSegment
	for _, c := range realSegments(t) {
		if len(c.time) > len(s.time) {
			s = c
		}
	}
	const size = 10485756
	fsys := vfs.NewMem()
	writeFile(t, fsys, "x.timeindex", append(bytes.Clone(s.time), make([]byte, size-len(s.time))...))
	x := openTime(t, fsys, "x.timeindex", s.base, -1, false)
	n := len(s.time) / 12
	want := index.Padding{Entries: size / 12, ValidEntries: n, ZeroBytes: int64(size - len(s.time)), Untrimmed: true}
	if p := x.Padding(); p != want {
		t.Fatalf("Padding = %+v, want %+v", p, want)
	}
	if got := timeindex.HeldBytes(x); got != len(s.time) {
		t.Fatalf("%d bytes in memory", got)
	}
	if last := x.LastEntry(); last != (timeindex.Entry{Timestamp: 0, Offset: s.base}) {
		t.Fatalf("Kafka's last entry %+v", last)
	}
	err := x.SanityCheck()
	if !strings.Contains(fmt.Sprint(err), "untrimmed") || !errorsIsCorrupt(err) {
		t.Fatalf("sanity check: %v", err)
	}
	if ps := verify.TimeIndex(x, s.log.Entries); len(ps) != 0 {
		t.Fatalf("problems %v", ps)
	}
	if p := verify.Padding(x.Path(), timeindex.EntrySize, x.Padding(), true); p == nil || p.Level != finding.Warning {
		t.Fatalf("padding problem %+v", p)
	}
	w := openTime(t, fsys, "x.timeindex", s.base, segment.DefaultMaxIndexSize, true)
	if dropped, err := w.DiscardPadding(); !dropped || err != nil {
		t.Fatal(dropped, err)
	}
	if err := w.SanityCheck(); err != nil {
		t.Fatal(err)
	}
	checkTimeLookups(t, w, s.log.Entries)
	if err := w.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, fsys, "x.timeindex"), s.time) {
		t.Fatal("trimmed file differs from the broker's")
	}
}

func errorsIsCorrupt(err error) bool {
	var ce *format.CorruptionError
	return err != nil && asCorruption(err, &ce) && ce.Offset >= 0
}

// offsetRules says which time-index offset rule wrote each set, from the
// broker versions PROVENANCE.md records: leaders before Kafka 3.8 stored the
// offset of the record holding the max timestamp (uncompressed batches),
// 3.8 and followers the batch's last offset.
var offsetRules = map[string]verify.OffsetRule{
	"fuzibotond__Experts-in-team-innovation":                          verify.ShallowOffsets, // Kafka 3.8
	"dipendrasaini__kafka-learnning-series":                           verify.RecordOffsets,  // >= 2.8 (< 3.8, by invoice-1's files)
	"yuanliubei__kafka-source-code":                                   verify.RecordOffsets,  // 2.1
	"macsakini__KafkaCluster":                                         verify.RecordOffsets,  // 3.4
	"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions": verify.RecordOffsets,  // 3.7
	"RaviAzzuraPutra__LATIHAN-MICROSERVICE-NEW":                       verify.RecordOffsets,  // 3.6.1
	"kafka-broker": verify.ShallowOffsets, // 4.3.1 (testdata/kafka-broker)
}

// followers are partitions whose broker was a follower (PROVENANCE.md):
// their entries use batch last offsets whatever the version.
var followers = map[string]bool{
	"dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0": true,
}

// rebuildDiffers names the partitions whose time index a rebuild cannot
// reproduce, and why. "restarts": the broker closed the segment and
// reopened it (each close writes the largest timestamp so far, and the
// offset index's byte count starts again); the test checks there is at
// least one close entry that is not the segment's last, the trace of a
// restart. "follower": multi-batch appends.
var rebuildDiffers = map[string]string{
	"dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/invoice-0":                                    "follower",
	"fuzibotond__Experts-in-team-innovation/kafka/data/__cluster_metadata-0":                              "restarts",
	"fuzibotond__Experts-in-team-innovation/kafka/data/__consumer_offsets-0":                              "restarts",
	"fuzibotond__Experts-in-team-innovation/kafka/data/__consumer_offsets-19":                             "restarts",
	"fuzibotond__Experts-in-team-innovation/kafka/data/__consumer_offsets-20":                             "restarts",
	"fuzibotond__Experts-in-team-innovation/kafka/data/__consumer_offsets-3":                              "restarts",
	"fuzibotond__Experts-in-team-innovation/kafka/data/__consumer_offsets-39":                             "restarts",
	"fuzibotond__Experts-in-team-innovation/kafka/data/sensor-data-topic-0":                               "restarts",
	"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/__consumer_offsets-29":    "restarts",
	"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/__consumer_offsets-37":    "restarts",
	"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/_schemas-0":               "restarts",
	"ItumelengMogase__Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data/docker-connect-configs-0": "restarts",
	"RaviAzzuraPutra__LATIHAN-MICROSERVICE-NEW/kafka/data/__cluster_metadata-0":                           "restarts",
}

// TestRealReconstruction rebuilds every real .timeindex from its .log with
// Kafka's recovery rules and the offset rule of the broker that wrote it,
// and compares it with the broker's file byte for byte. Where they differ
// it checks that the partition's history explains it (rebuildDiffers),
// that every entry on both sides verifies with no finding, and that the
// exact differences are those in testdata/reconstruction.golden (-update
// rewrites it), each broker entry classified: "interval" (written with an
// offset-index entry of the broker's file) or "close" (written when the
// segment was closed or rolled).
func TestRealReconstruction(t *testing.T) {
	var out strings.Builder
	out.WriteString("# Real .timeindex files rebuilt from their .log with Kafka's recovery rules\n")
	out.WriteString("# (index.interval.bytes 4096) and the broker's offset rule. '=' identical;\n")
	out.WriteString("# '~' differs: '-' entries only in the broker's file, '+' only in the rebuild.\n")
	identical, differ := 0, 0
	for _, s := range realSegments(t) {
		set := strings.SplitN(s.rel, "/", 2)[0]
		rule, ok := offsetRules[set]
		if !ok {
			t.Fatalf("%s: no offset rule for set %s", s.rel, set)
		}
		if followers[s.dir] {
			rule = verify.ShallowOffsets
		}
		rebuilt, err := verify.RebuildTimeIndex(nil, s.base, s.log.Entries, segment.DefaultIndexIntervalBytes, rule)
		if err != nil {
			t.Fatalf("%s: %v", s.rel, err)
		}
		fsys := vfs.NewMem()
		writeFile(t, fsys, "rebuilt.timeindex", rebuilt)
		for _, p := range verify.TimeIndex(openTime(t, fsys, "rebuilt.timeindex", s.base, -1, false), s.log.Entries) {
			t.Errorf("%s: rebuilt entry: %v %s: %s", s.rel, p.Level, p.Kind, p.Detail)
		}
		real := decodeAll(s.time, s.base)
		ruleName := map[verify.OffsetRule]string{verify.ShallowOffsets: "batch last offsets", verify.RecordOffsets: "record offsets"}[rule]
		if bytes.Equal(rebuilt, s.time) {
			identical++
			fmt.Fprintf(&out, "= %s (%d entries; %s)\n", s.rel, len(real), ruleName)
			continue
		}
		differ++
		reason, ok := rebuildDiffers[s.dir]
		if !ok {
			t.Errorf("%s: the rebuild differs, and nothing explains it", s.rel)
		}
		classes := classify(real, s.offsets, s.base, verify.NewLocator(s.log.Entries))
		restartTrace := false
		for i, c := range classes {
			if c == "close" && i < len(real)-1 {
				restartTrace = true
			}
		}
		if reason == "restarts" && !restartTrace {
			t.Errorf("%s: explained by restarts, but no close entry before the last", s.rel)
		}
		fmt.Fprintf(&out, "~ %s (broker %d entries, rebuild %d; %s): %s\n", s.rel, len(real), len(rebuilt)/12, ruleName, reason)
		built := decodeAll(rebuilt, s.base)
		inBuilt, inReal := map[timeindex.Entry]bool{}, map[timeindex.Entry]bool{}
		for _, e := range built {
			inBuilt[e] = true
		}
		for i, e := range real {
			inReal[e] = true
			if !inBuilt[e] {
				fmt.Fprintf(&out, "  - timestamp %d offset %d: %s\n", e.Timestamp, e.Offset, classes[i])
			}
		}
		for _, e := range built {
			if !inReal[e] {
				fmt.Fprintf(&out, "  + timestamp %d offset %d\n", e.Timestamp, e.Offset)
			}
		}
	}
	fmt.Fprintf(&out, "# %d identical, %d differ\n", identical, differ)
	golden(t, "testdata/reconstruction.golden", out.String())
	t.Logf("%d identical, %d differ", identical, differ)
}

// classify labels each of a broker's time-index entries: "interval" if it
// can have been written by the append that wrote one of the broker's
// offset-index entries (its timestamp is the largest up to the end of that
// append, and its offset is not after it), else "close" (written by
// LogSegment.close or onBecomeInactiveSegment).
func classify(real []timeindex.Entry, offsets []byte, base int64, loc *verify.Locator) []string {
	out := make([]string, len(real))
	for i, e := range real {
		out[i] = "close"
		h, _ := loc.Holding(e.Offset)
		for j := 0; j+8 <= len(offsets); j += 8 {
			oe := index.DecodeEntry(offsets[j:], base)
			end, ok := loc.Holding(oe.Offset)
			if ok && loc.MaxTimestampThrough(end) == e.Timestamp && h <= end {
				out[i] = "interval"
				break
			}
		}
	}
	return out
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs (run with -update after checking):\n--- got\n%s", path, got)
	}
}

func asCorruption(err error, target **format.CorruptionError) bool { return errors.As(err, target) }
