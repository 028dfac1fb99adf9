package serverlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The run testdata/ comes from (see its README.md).
const (
	tdLogDir  = "/tmp/TestHistoryImportMatchesSegkit768952151/001/kafka"
	tdZone    = "Asia/Kolkata"
	tdPayment = "hi-payments-0"
	tdCompact = "hi-compacted-0"
)

func kolkata(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(tdZone)
	if err != nil {
		// The zone has had one offset since 1945: the fixed zone is the same.
		loc = time.FixedZone(tdZone, 5*3600+30*60)
	}
	return loc
}

func parseTestdata(t *testing.T, opt Options) *Parser {
	t.Helper()
	p := NewParser(opt)
	for _, f := range []string{"testdata/server.log", "testdata/log-cleaner.log"} {
		if err := p.ParseFile(f); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func ofKind(evs []Event, k Kind) []Event {
	var out []Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// TestBrokerLogPayments reads the real broker's lines about the
// partition its retention deleted from: nine rolls, the unclean load,
// one size and one time deletion, with the segments, sizes, timestamps
// and log start offsets the lines give.
func TestBrokerLogPayments(t *testing.T) {
	loc := kolkata(t)
	p := parseTestdata(t, Options{Partition: tdPayment, Location: loc})
	evs := p.Events()
	if !slices.IsSortedFunc(evs, func(a, b Event) int { return a.Time.Compare(b.Time) }) {
		t.Error("events are not in time order")
	}
	if n := len(evs); n != 12 {
		t.Errorf("%d events, want 12 (9 rolls, 1 recovery, 2 deletions)", n)
	}

	rolls := ofKind(evs, KindRoll)
	var got []Roll
	for _, e := range rolls {
		got = append(got, *e.Roll)
	}
	var want []Roll
	for b := int64(12); b <= 108; b += 12 {
		want = append(want, Roll{NewBaseOffset: b, PreviousBaseOffset: b - 12})
	}
	ignoreElapsed := cmp.Transformer("noElapsed", func(r Roll) Roll { r.ElapsedMs = 0; return r })
	if d := cmp.Diff(want, got, ignoreElapsed); d != "" {
		t.Errorf("rolls (-want +got):\n%s", d)
	}
	if len(rolls) > 0 {
		// [2026-12-02 11:04:37,934] in IST is 05:34:37.934 UTC.
		first := rolls[0]
		if w := time.Date(2026, 12, 2, 5, 34, 37, 934e6, time.UTC); !first.Time.Equal(w) || first.Where() != "testdata/server.log:25" || first.Roll.ElapsedMs != 13 {
			t.Errorf("first roll at %v (%s), %d ms; want %v, testdata/server.log:25, 13 ms", first.Time.UTC(), first.Where(), first.Roll.ElapsedMs, w)
		}
	}

	recs := ofKind(evs, KindRecovery)
	wantRec := Recovery{CleanShutdown: false, Recovered: []int64{0, 12, 24, 36, 48, 60, 72, 84, 96, 108}, LogStartOffset: 0, LogEndOffset: 120, Segments: 10}
	if len(recs) != 1 {
		t.Fatalf("%d recoveries, want 1", len(recs))
	}
	if d := cmp.Diff(wantRec, *recs[0].Recovery); d != "" {
		t.Errorf("recovery (-want +got):\n%s", d)
	}

	dels := ofKind(evs, KindDeletion)
	wantDel := []Deletion{{
		Rule: RuleSize, RetentionBytes: 15770, Breach: -1, OldLogStartOffset: 0, NewLogStartOffset: 24,
		Segments: []Segment{
			{BaseOffset: 0, NextOffset: 12, Size: 1960, LastModified: 1796189677908, LargestRecordTimestamp: 1796182480603},
			{BaseOffset: 12, NextOffset: 24, Size: 1960, LastModified: 1796189678001, LargestRecordTimestamp: 1796182484603},
		},
	}, {
		Rule: RuleTime, RetentionMs: 3600000, Breach: -1, OldLogStartOffset: 24, NewLogStartOffset: 60,
		Segments: []Segment{
			{BaseOffset: 24, NextOffset: 36, Size: 1966, LastModified: 1796189678127, LargestRecordTimestamp: 1796182488603},
			{BaseOffset: 36, NextOffset: 48, Size: 1972, LastModified: 1796189678212, LargestRecordTimestamp: 1796182492603},
			{BaseOffset: 48, NextOffset: 60, Size: 1972, LastModified: 1796189678304, LargestRecordTimestamp: 1796182496603},
		},
	}}
	var gotDel []Deletion
	for _, e := range dels {
		gotDel = append(gotDel, *e.Deletion)
	}
	if d := cmp.Diff(wantDel, gotDel); d != "" {
		t.Errorf("deletions (-want +got):\n%s", d)
	}
	// A deletion begins at its "Incremented log start offset" line and
	// ends at its last "Deleting segment" line.
	if len(dels) == 2 {
		if dels[0].Line != 122 || dels[0].Lines != 3 || dels[1].Line != 125 || dels[1].Lines != 4 {
			t.Errorf("deletions at lines %d (%d lines) and %d (%d lines), want 122 (3) and 125 (4)", dels[0].Line, dels[0].Lines, dels[1].Line, dels[1].Lines)
		}
		if w := time.Date(2026, 12, 2, 5, 34, 46, 89e6, time.UTC); !dels[0].Time.Equal(w) {
			t.Errorf("size deletion at %v, want %v", dels[0].Time.UTC(), w)
		}
	}

	st := p.Stats()
	if st.Unparsed != 0 || st.TooLong != 0 || st.Lines != 215 || st.Used != 27 {
		t.Errorf("stats %+v, want 215 lines, 27 used, none unparsed or too long", st)
	}
	if want := []string{tdLogDir, tdLogDir + "/" + tdPayment}; !slices.Equal(st.Dirs, want) {
		t.Errorf("dirs %v, want %v", st.Dirs, want)
	}
}

// TestBrokerLogCleaner reads the cleaner's passes over the compacted
// partition from log-cleaner.log: each pass's range, the segments it
// replaced and the ones it swapped in.
func TestBrokerLogCleaner(t *testing.T) {
	p := parseTestdata(t, Options{Partition: tdCompact, Location: kolkata(t)})
	evs := p.Events()
	cs := ofKind(evs, KindCompaction)
	type pass struct {
		from, to        int64
		sources, swaps  int
		firstSourceNext int64
	}
	var got []pass
	for _, e := range cs {
		x := e.Compaction
		got = append(got, pass{x.FirstDirtyOffset, x.EndOffset, len(x.Sources), len(x.Cleaned), x.Sources[0].NextOffset})
		if x.Cleaner != 0 || e.File != "testdata/log-cleaner.log" {
			t.Errorf("pass %+v: cleaner %d, in %s", x, x.Cleaner, e.File)
		}
		for i, s := range x.Sources {
			if i+1 < len(x.Sources) && s.NextOffset != x.Sources[i+1].BaseOffset || i+1 == len(x.Sources) && s.NextOffset != x.EndOffset {
				t.Errorf("pass [%d, %d): source %d ends at %d", x.FirstDirtyOffset, x.EndOffset, s.BaseOffset, s.NextOffset)
			}
		}
	}
	// Pass 1 swaps each of 0, 6, 12 in alone; pass 2 groups the cleaned
	// (now small) 0, 6, 12 into one, then 18, 24, 30; pass 3 likewise.
	want := []pass{{0, 18, 3, 3, 6}, {18, 36, 6, 4, 6}, {36, 60, 8, 5, 18}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(pass{})); d != "" {
		t.Errorf("passes (-want +got):\n%s", d)
	}
	if len(cs) > 0 {
		first := cs[0].Compaction
		wantCleaned0 := Segment{BaseOffset: 0, NextOffset: 6, Size: 0, LastModified: 1796189677872, LargestRecordTimestamp: -1}
		if first.Cleaned[0] != wantCleaned0 {
			t.Errorf("first cleaned segment %+v, want %+v", first.Cleaned[0], wantCleaned0)
		}
		if cs[0].End.Before(cs[0].Time) || cs[0].Lines < 5 {
			t.Errorf("pass 1 from %v to %v, %d lines", cs[0].Time, cs[0].End, cs[0].Lines)
		}
	}
	// Its rolls are its own: every 6 offsets, none of the other topic's.
	for _, e := range ofKind(evs, KindRoll) {
		if e.Roll.NewBaseOffset%6 != 0 {
			t.Errorf("roll at %d: not the compacted topic's", e.Roll.NewBaseOffset)
		}
	}
	if n := len(ofKind(evs, KindDeletion)); n != 0 {
		t.Errorf("%d deletions of the compacted partition", n)
	}
}

// TestZone: the lines' times are read in Options.Location; read as UTC,
// they are 5:30 later.
func TestZone(t *testing.T) {
	ist := parseTestdata(t, Options{Partition: tdPayment, Location: kolkata(t)}).Events()
	utc := parseTestdata(t, Options{Partition: tdPayment}).Events()
	if len(ist) != len(utc) || len(ist) == 0 {
		t.Fatalf("%d and %d events", len(ist), len(utc))
	}
	for i := range ist {
		if d := utc[i].Time.Sub(ist[i].Time); d != 5*time.Hour+30*time.Minute {
			t.Errorf("event %d: UTC reading %v after the IST one, want 5h30m", i, d)
		}
	}
}

// TestDirFilter: with Options.Dir, the lines naming another log
// directory are not the partition's.
func TestDirFilter(t *testing.T) {
	if n := len(parseTestdata(t, Options{Partition: tdPayment, Dir: tdLogDir}).Events()); n != 12 {
		t.Errorf("Dir the broker's: %d events, want 12", n)
	}
	if n := len(parseTestdata(t, Options{Partition: tdPayment, Dir: "/var/kafka-logs"}).Events()); n != 0 {
		t.Errorf("another Dir: %d events, want 0", n)
	}
}

// line formats a log line as the broker's layout does.
func line(ts, level, msg, logger string) string {
	return fmt.Sprintf("[%s] %s %s (%s)\n", ts, level, msg, logger)
}

const (
	ul = "org.apache.kafka.storage.internals.log.UnifiedLog"
	ll = "org.apache.kafka.storage.internals.log.LocalLog"
	lo = "org.apache.kafka.storage.internals.log.LogLoader"
	lm = "kafka.log.LogManager"
)

func uIdent(p string) string { return "[UnifiedLog partition=" + p + ", dir=/data/kafka] " }
func lIdent(p string) string { return "[LocalLog partition=" + p + ", dir=/data/kafka/" + p + "] " }
func seg(base, size, mtime, ts int64) string {
	return fmt.Sprintf("LogSegment(baseOffset=%d, size=%d, lastModifiedTime=%d, largestRecordTimestamp=%d)", base, size, mtime, ts)
}

// TestMessages covers the messages the oracle's run did not log, in the
// words of Kafka 4.3.1's classes (see the package doc).
func TestMessages(t *testing.T) {
	const p = "orders-3"
	tests := []struct {
		name  string
		lines string
		want  []Event // compared by kind and payload
	}{{
		name: "time_by_mtime_and_record_ts_one_rule",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Incremented log start offset to 20 due to segment deletion", ul) +
			line("2026-03-02 09:00:00,001", "INFO", uIdent(p)+"Deleting segment "+seg(0, 100, 5000, -1)+" due to log retention time 60000ms breach based on the last modified time of the segment", ul) +
			line("2026-03-02 09:00:00,001", "INFO", uIdent(p)+"Deleting segment "+seg(10, 100, 6000, 5500)+" due to log retention time 60000ms breach based on the largest record timestamp in the segment", ul),
		want: []Event{{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleTime, RetentionMs: 60000, Breach: -1, ByLastModified: true, OldLogStartOffset: 0, NewLogStartOffset: 20,
			Segments: []Segment{{0, 10, 100, 5000, -1}, {10, 20, 100, 6000, 5500}}}}},
	}, {
		name: "delete_records_then_log_start_offset_rule",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Incremented log start offset to 15 due to client delete records request", ul) +
			line("2026-03-02 09:05:00,000", "INFO", uIdent(p)+"Deleting segments due to log start offset 15 breach: "+seg(0, 100, 1, 2)+", "+seg(10, 90, 3, 4), ul),
		want: []Event{
			{Kind: KindLogStartOffset, LogStartOffset: &LogStartOffset{Offset: 15, Old: -1, Reason: "client delete records request"}},
			{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleLogStartOffset, Breach: 15, OldLogStartOffset: 15, NewLogStartOffset: 15,
				Segments: []Segment{{0, 10, 100, 1, 2}, {10, 15, 90, 3, 4}}}},
		},
	}, {
		name: "two_checks_of_one_rule_are_two_deletions",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Incremented log start offset to 10 due to segment deletion", ul) +
			line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(0, 100, 1, 2)+" due to log retention size 500 breach. Log size after deletion will be 600.", ul) +
			line("2026-03-02 09:05:00,000", "INFO", uIdent(p)+"Incremented log start offset to 20 due to segment deletion", ul) +
			line("2026-03-02 09:05:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(10, 100, 3, 4)+" due to log retention size 500 breach. Log size after deletion will be 550.", ul),
		want: []Event{
			{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleSize, RetentionBytes: 500, Breach: -1, OldLogStartOffset: 0, NewLogStartOffset: 10, Segments: []Segment{{0, 10, 100, 1, 2}}}},
			{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleSize, RetentionBytes: 500, Breach: -1, OldLogStartOffset: 10, NewLogStartOffset: 20, Segments: []Segment{{10, 20, 100, 3, 4}}}},
		},
	}, {
		name: "no_increment_line",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(30, 100, 1, 2)+" due to log retention size 500 breach. Log size after deletion will be 600.", ul) +
			line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(40, 100, 1, 2)+" due to log retention size 500 breach. Log size after deletion will be 500.", ul),
		want: []Event{{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleSize, RetentionBytes: 500, Breach: -1, OldLogStartOffset: 30, NewLogStartOffset: -1,
			Segments: []Segment{{30, 40, 100, 1, 2}, {40, -1, 100, 1, 2}}}}},
	}, {
		name: "checks_apart_without_increments",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(30, 100, 1, 2)+" due to log retention size 500 breach. Log size after deletion will be 600.", ul) +
			line("2026-03-02 09:05:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(40, 100, 1, 2)+" due to log retention size 500 breach. Log size after deletion will be 600.", ul),
		want: []Event{
			{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleSize, RetentionBytes: 500, Breach: -1, OldLogStartOffset: 30, NewLogStartOffset: -1, Segments: []Segment{{30, -1, 100, 1, 2}}}},
			{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleSize, RetentionBytes: 500, Breach: -1, OldLogStartOffset: 40, NewLogStartOffset: -1, Segments: []Segment{{40, -1, 100, 1, 2}}}},
		},
	}, {
		name: "local_retention_tiered",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Incremented local log start offset to 10 due to reason segment deletion", ul) +
			line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Deleting segment "+seg(0, 100, 1, 2)+" due to local log retention size 50 breach. Local log size after deletion will be 60.", ul),
		want: []Event{{Kind: KindDeletion, Deletion: &Deletion{Rule: RuleSize, Local: true, RetentionBytes: 50, Breach: -1, OldLogStartOffset: 0, NewLogStartOffset: 10, Segments: []Segment{{0, 10, 100, 1, 2}}}}},
	}, {
		name: "requested_roll_before_deleting_everything",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Rolling the active segment to make it eligible for deletion", ul) +
			line("2026-03-02 09:00:00,001", "INFO", lIdent(p)+"Rolled new log segment at offset 74 in 1 ms.", ll) +
			line("2026-03-02 09:00:00,002", "INFO", lIdent(p)+"Rolled new log segment at offset 80 in 2 ms.", ll),
		want: []Event{
			{Kind: KindRoll, Roll: &Roll{NewBaseOffset: 74, PreviousBaseOffset: -1, Requested: true, ElapsedMs: 1}},
			{Kind: KindRoll, Roll: &Roll{NewBaseOffset: 80, PreviousBaseOffset: 74, ElapsedMs: 2}},
		},
	}, {
		name: "truncations",
		lines: line("2026-03-02 09:00:00,000", "INFO", uIdent(p)+"Truncating to offset 50", ul) +
			line("2026-03-02 09:00:01,000", "INFO", uIdent(p)+"Truncating to 60 has no effect as the largest offset in the log is 49", ul) +
			line("2026-03-02 09:00:02,000", "INFO", lIdent(p)+"Truncate and start at offset 90", ll) +
			line("2026-03-02 09:00:02,000", "INFO", uIdent(p)+"Truncate and start at offset 90, logStartOffset: 90", ul),
		want: []Event{
			{Kind: KindTruncation, Truncation: &Truncation{How: TruncateTo, Offset: 50, LogStartOffset: -1, OldLogStartOffset: -1, LargestOffset: -1}},
			{Kind: KindTruncation, Truncation: &Truncation{How: TruncateNoEffect, Offset: 60, LogStartOffset: -1, OldLogStartOffset: -1, LargestOffset: 49}},
			{Kind: KindTruncation, Truncation: &Truncation{How: TruncateFull, Offset: 90, LogStartOffset: 90, OldLogStartOffset: -1, LargestOffset: -1}},
		},
	}, {
		name: "recovery_with_leftovers_and_deletions",
		lines: line("2026-03-02 09:00:00,000", "INFO", "Loading logs from log dirs ArrayBuffer(/data/kafka)", lm) +
			line("2026-03-02 09:00:00,001", "INFO", "Recovering 1 logs from /data/kafka since no clean shutdown file was found", lm) +
			line("2026-03-02 09:00:00,002", "INFO", "[LogLoader partition="+p+", dir=/data/kafka] Deleting stray temporary file /data/kafka/"+p+"/00000000000000000000.index.deleted", lo) +
			line("2026-03-02 09:00:00,003", "INFO", "[LogLoader partition="+p+", dir=/data/kafka] Found log file /data/kafka/"+p+"/00000000000000000040.log.swap from interrupted swap operation, which is recoverable from .swap files by renaming.", lo) +
			line("2026-03-02 09:00:00,004", "INFO", "[LogLoader partition="+p+", dir=/data/kafka] Recovering unflushed segment 40. 0/2 recovered for "+p+".", lo) +
			line("2026-03-02 09:00:00,005", "WARN", "[LogLoader partition="+p+", dir=/data/kafka] Corruption found in segment 40, truncating to offset 55", lo) +
			line("2026-03-02 09:00:00,006", "INFO", "[LogLoader partition="+p+", dir=/data/kafka] Deleting segments as part of log recovery: "+seg(60, 10, 1, -1), lo) +
			line("2026-03-02 09:00:00,007", "INFO", "Completed load of Log(dir=/data/kafka/"+p+", topicId=x, topic=orders, partition=3, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=55) with 2 segments, local-log-start-offset 0 and log-end-offset 55 in 5ms (1/1 completed in /data/kafka)", lm),
		want: []Event{{Kind: KindRecovery, Recovery: &Recovery{CleanShutdown: false, Recovered: []int64{40}, Deleted: []Segment{{60, -1, 10, 1, -1}},
			Leftovers: []string{"00000000000000000000.index.deleted", "00000000000000000040.log.swap"}, LogStartOffset: 0, LogEndOffset: 55, Segments: 2}}},
	}, {
		name: "clean_load_and_new_log",
		lines: line("2026-03-02 09:00:00,000", "INFO", "Loading logs from log dirs ArrayBuffer(/data/kafka)", lm) +
			line("2026-03-02 09:00:00,001", "INFO", "[LogLoader partition="+p+", dir=/data/kafka] Loading producer state till offset 55", ul) +
			line("2026-03-02 09:00:00,002", "INFO", "Completed load of Log(dir=/data/kafka/"+p+", topicId=x, topic=orders, partition=3, highWatermark=0, lastStableOffset=0, logStartOffset=5, logEndOffset=55) with 2 segments, local-log-start-offset 5 and log-end-offset 55 in 5ms (1/1 completed in /data/kafka)", lm) +
			line("2026-03-02 09:00:00,003", "INFO", "[LogLoader partition=orders-4, dir=/data/kafka] Loading producer state till offset 0", ul) +
			line("2026-03-02 09:00:00,004", "INFO", "Created log for partition orders-4 in /data/kafka/orders-4 with properties {}", lm),
		want: []Event{{Kind: KindRecovery, Recovery: &Recovery{CleanShutdown: true, LogStartOffset: 5, LogEndOffset: 55, Segments: 2}}},
	}, {
		name: "other_partitions_are_not_ours",
		lines: line("2026-03-02 09:00:00,000", "INFO", lIdent("orders-30")+"Rolled new log segment at offset 74 in 1 ms.", ll) +
			line("2026-03-02 09:00:00,000", "INFO", lIdent("xorders-3")+"Rolled new log segment at offset 74 in 1 ms.", ll) +
			line("2026-03-02 09:00:00,000", "INFO", "[Partition orders-3 broker=1] Log loaded for partition orders-3 with initial high watermark 0", "kafka.cluster.Partition") +
			line("2026-03-02 09:00:00,000", "INFO", lIdent("big.orders-3")+"Rolled new log segment at offset 74 in 1 ms.", ll),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := NewParser(Options{Partition: p})
			if err := ps.Parse(strings.NewReader(tt.lines), "server.log"); err != nil {
				t.Fatal(err)
			}
			got := ps.Events()
			strip := cmp.Transformer("payload", func(e Event) Event {
				return Event{Kind: e.Kind, Roll: e.Roll, Deletion: e.Deletion, LogStartOffset: e.LogStartOffset, Truncation: e.Truncation, Recovery: e.Recovery, Compaction: e.Compaction}
			})
			if d := cmp.Diff(tt.want, got, strip); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if st := ps.Stats(); st.Unparsed != 0 {
				t.Errorf("%d lines unparsed", st.Unparsed)
			}
		})
	}
}

// TestBadInput: lines that are not a broker's are skipped and counted,
// never a panic; a line over MaxLineBytes is skipped, and the records
// around it survive.
func TestBadInput(t *testing.T) {
	const p = "orders-3"
	roll := func(off int) string {
		return line("2026-03-02 09:00:00,000", "INFO", lIdent(p)+fmt.Sprintf("Rolled new log segment at offset %d in 1 ms.", off), ll)
	}
	in := "garbage before any log line\n" +
		"[2026-13-45 99:00:00,000] INFO not a time\n" +
		roll(10) +
		"\tcontinues the roll's message, which then matches nothing\n" +
		roll(20) +
		"[2026-03-02 09:00:00,000] INFO " + strings.Repeat("x", 300) + "\n" + // too long: skipped
		roll(30) +
		"\x00\xff\xfe binary continuation\n" +
		roll(40) +
		strings.Repeat("y", 500) + "\n" + // a too-long continuation: drops roll 40
		roll(50) +
		"[2026-03-02 09:00:00,000] BOGUS level\n" +
		"[2026-03-02 09:00:00,000] INFO " + lIdent(p) + "Rolled new log segment at offset 99999999999999999999999 in 1 ms.\n" +
		roll(60) // no final newline below
	in = strings.TrimSuffix(in, "\n")
	ps := NewParser(Options{Partition: p, MaxLineBytes: 256})
	if err := ps.Parse(strings.NewReader(in), "x.log"); err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, e := range ps.Events() {
		offs = append(offs, e.Roll.NewBaseOffset)
	}
	// Rolls 10 and 30 have a continuation line (the message no longer
	// ends with its logger, and matches nothing); 40's is too long, which
	// drops it; the overflowing roll reads as -1. The too-long log line
	// and the bogus level end the record before them (20, 50).
	if want := []int64{20, 50, -1, 60}; !slices.Equal(offs, want) {
		t.Errorf("rolls %v, want %v", offs, want)
	}
	st := ps.Stats()
	if st.Lines != 14 || st.TooLong != 2 || st.Unparsed != 3 || st.Records != 8 {
		t.Errorf("stats %+v, want 14 lines, 8 records, 2 too long, 3 unparsed (before any log line, a bad time, a bad level)", st)
	}
}

// errReader fails after its data.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(b []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(b, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestFileErrors: an unreadable file is a *FileError naming the file and
// the line it stopped at; the lines before it are kept.
func TestFileErrors(t *testing.T) {
	ps := NewParser(Options{Partition: "orders-3"})
	err := ps.ParseFile("testdata/no-such.log")
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != "testdata/no-such.log" || fe.Line != 0 || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	boom := errors.New("disk on fire")
	in := line("2026-03-02 09:00:00,000", "INFO", lIdent("orders-3")+"Rolled new log segment at offset 10 in 1 ms.", ll) + "[2026-03-02 09:00:00,000] INFO half a li"
	err = ps.Parse(&errReader{data: in, err: boom}, "server.log")
	if !errors.As(err, &fe) || fe.File != "server.log" || fe.Line != 2 || !errors.Is(err, boom) {
		t.Errorf("read error: %v, want server.log:2 wrapping %v", err, boom)
	}
	if n := len(ps.Events()); n != 1 {
		t.Errorf("%d events kept, want 1", n)
	}
	if err := NewParser(Options{Partition: "orders"}).Parse(strings.NewReader(""), "x"); !errors.Is(err, ErrNoPartition) {
		t.Errorf("partition without a number: %v", err)
	}
}

// FuzzParse: any input parses without a panic, the counts add up, and
// the events are in time order.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/server.log", "testdata/log-cleaner.log"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b[:min(len(b), 4096)]), 0)
	}
	f.Add(line("2026-03-02 09:00:00,000", "INFO", uIdent("hi-payments-0")+"Deleting segments due to log start offset 15 breach: "+seg(0, 1, 2, 3), ul), 64)
	f.Fuzz(func(t *testing.T, in string, max int) {
		ps := NewParser(Options{Partition: "hi-payments-0", MaxLineBytes: max % 4096})
		if err := ps.Parse(strings.NewReader(in), "f"); err != nil {
			t.Fatal(err)
		}
		evs := ps.Events()
		st := ps.Stats()
		if st.Used > st.About || st.About > st.Records || st.Records+st.Unparsed > st.Lines || st.Lines > strings.Count(in, "\n")+1 {
			t.Errorf("stats %+v of %d newlines", st, strings.Count(in, "\n"))
		}
		if !slices.IsSortedFunc(evs, func(a, b Event) int { return a.Time.Compare(b.Time) }) {
			t.Error("events not in time order")
		}
		for _, e := range evs {
			if e.Lines < 1 || e.End.Before(e.Time) && e.Kind != KindRecovery {
				t.Errorf("event %+v", e)
			}
			if !utf8.ValidString(e.File) {
				t.Error("file name")
			}
		}
	})
}

var _ io.Reader = (*errReader)(nil)

// BenchmarkParse measures the parser on the real broker's server.log
// excerpt, a tenth of whose lines are about the partition.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/server.log")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := NewParser(Options{Partition: tdPayment})
		if err := p.Parse(strings.NewReader(string(data)), "server.log"); err != nil {
			b.Fatal(err)
		}
	}
}
