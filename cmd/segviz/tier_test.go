package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// tierT0 stamps every record of the tier fixture.
const tierT0 = 1_700_000_000_000

// tierFixture builds the retention article's partition with segviz
// append: 4,000 records of 1 KB, one a batch (as a producer with
// linger.ms 0 sends them), segment.bytes 1 MiB (four closed segments of
// 953 records and the active one), a topic id in partition.metadata, and an
// empty remote directory. It returns the partition and the remote.
func tierFixture(t *testing.T) (dir, remote string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "kafka-logs", "orders-0")
	remote = filepath.Join(root, "tiered")
	if err := os.MkdirAll(remote, 0o755); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	val := strings.Repeat("x", 1024)
	for i := range 4000 {
		v := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%05d", i) + val[5:]))
		fmt.Fprintf(&in, `{"key":%q,"value":%q,"timestamp":%d}`+"\n", b64(fmt.Sprintf("k%d", i)), v, tierT0)
	}
	if code, _, errs := appendCmd(t, in.String(), "--batch-records", "1", "--segment.bytes", "1048576", dir); code != exitOK {
		t.Fatalf("append: exit %d: %s", code, errs)
	}
	if err := checkpoint.WritePartitionMetadata(vfs.OS(), filepath.ToSlash(dir), checkpoint.UUID{3: 7, 15: 42}); err != nil {
		t.Fatal(err)
	}
	return dir, remote
}

var tierEnable = []string{"--remote.storage.enable", "true", "--local.retention.ms", "60000"}

func tierCmd(args ...string) (int, string, string) {
	return runSegviz(append([]string{"tier"}, args...)...)
}

func tierStatusOf(t *testing.T, args ...string) tierStatusJSON {
	t.Helper()
	code, out, errs := tierCmd(append([]string{"status", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("status: exit %d: %s", code, errs)
	}
	var st tierStatusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

func tierUploadOf(t *testing.T, args ...string) tierUploadJSON {
	t.Helper()
	code, out, errs := tierCmd(append([]string{"upload", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("upload: exit %d: %s", code, errs)
	}
	var up tierUploadJSON
	if err := json.Unmarshal([]byte(out), &up); err != nil {
		t.Fatalf("upload --json: %v\n%s", err, out)
	}
	return up
}

// TestTierRetentionArticle: the retention article's experiment through
// the CLI with a fake clock. The first upload copies the four closed
// segments and deletes nothing locally (local.retention.ms has not
// passed); the second, two minutes on, leaves only the active segment on
// local disk; status says earliest 0 and earliest-local the active
// segment's base; and a read from 0 through the remote returns the 4,000
// records in order, as the read before the upload did.
func TestTierRetentionArticle(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	code, before, errs := readCmd("--from", "0", dir)
	if code != exitOK {
		t.Fatalf("read before: exit %d: %s", code, errs)
	}
	if n := strings.Count(before, "\n"); n != 4000 {
		t.Fatalf("read before: %d records, want 4000", n)
	}

	st := tierStatusOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	if len(st.Segments) != 5 || len(st.NextCheck.Copy) != 4 || len(st.NextCheck.DeleteLocal) != 0 || st.HighestCopiedOffset != -1 {
		t.Fatalf("status before the upload: %d segments, next check copies %d and deletes %d locally, highest copied %d; want 5, 4, 0, -1",
			len(st.Segments), len(st.NextCheck.Copy), len(st.NextCheck.DeleteLocal), st.HighestCopiedOffset)
	}
	// The forecast if nothing more is appended, with both phases
	// unknown (each time the latest the task can run): the next copy task
	// copies the four closed segments, the retention check after
	// local.retention.ms deletes them locally, and they stay readable
	// from the remote until the expiration task after retention.ms (7
	// days, the default); the active segment stays, local.
	if fc := st.Forecast; fc == nil || len(fc.Segments) != 5 {
		t.Fatalf("status forecast: %+v", fc)
	} else {
		now, task, check := int64(tierT0+1000), int64(30_000), int64(300_000)
		for i, s := range fc.Segments[:4] {
			ts := st.Segments[i].MaxTimestamp
			copied := now + task - 1
			wantLocal := max(copied, ts+60_001) + check - 1
			wantRead := ts + 604_800_000 + task - 1
			if s.CopiedBy == nil || *s.CopiedBy != copied || s.LocalUntil == nil || *s.LocalUntil != wantLocal ||
				s.ReadableUntil == nil || *s.ReadableUntil != wantRead || deref(s.LocalReason, "") != "local.retention.ms" || deref(s.Reason, "") != "retention.ms" {
				t.Errorf("forecast of segment %d: %+v (%s); want copied by %d, local until %d, readable until %d", s.BaseOffset, s, s.Explanation, copied, wantLocal, wantRead)
			}
		}
		if a := fc.Segments[4]; a.CopiedBy != nil || a.LocalUntil != nil || a.ReadableUntil != nil || a.Where != "local" {
			t.Errorf("forecast of the active segment: %+v", a)
		}
	}
	// Two minutes on, the plan deletes locally what the same check copies.
	st2 := tierStatusOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+120_000), dir)...)
	if len(st2.NextCheck.Copy) != 4 || len(st2.NextCheck.DeleteLocal) != 4 {
		t.Errorf("status at T+2min: copies %d, deletes %d locally; want 4, 4", len(st2.NextCheck.Copy), len(st2.NextCheck.DeleteLocal))
	}
	// With retention.ms 60000 too, total retention deletes them as well.
	st2 = tierStatusOf(t, append(tierEnable, "--retention.ms", "60000", "--remote", uri, "--now", fmt.Sprint(tierT0+120_000), dir)...)
	if len(st2.NextCheck.DeleteRemote) != 4 || len(st2.NextCheck.DeleteLocal) != 4 {
		t.Errorf("status at T+2min, retention.ms 60000: deletes %d remotely, %d locally; want 4, 4", len(st2.NextCheck.DeleteRemote), len(st2.NextCheck.DeleteLocal))
	}
	active := st.Segments[len(st.Segments)-1].BaseOffset

	up := tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	if len(up.Copied) != 4 || len(up.DeletedLocal) != 0 || len(up.DeletedRemote) != 0 {
		t.Fatalf("first upload: copied %d, deleted %d local, %d remote; want 4, 0, 0", len(up.Copied), len(up.DeletedLocal), len(up.DeletedRemote))
	}
	if up.HighestCopiedOffset != active-1 || up.LocalLogStartOffset != 0 || up.LogStartOffset != 0 {
		t.Errorf("first upload: highest copied %d (want %d), earliest-local %d, earliest %d", up.HighestCopiedOffset, active-1, up.LocalLogStartOffset, up.LogStartOffset)
	}
	if len(up.Instants) != 4 {
		t.Errorf("first upload: %d instants, want 4 tier instants", len(up.Instants))
	}

	later := fmt.Sprint(tierT0 + 120_000) // past local.retention.ms
	up = tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", later, dir)...)
	if len(up.Copied) != 0 || len(up.DeletedLocal) != 4 || len(up.DeletedRemote) != 0 {
		t.Fatalf("second upload: copied %d, deleted %d local, %d remote; want 0, 4, 0", len(up.Copied), len(up.DeletedLocal), len(up.DeletedRemote))
	}
	if up.DeletedLocalBytes < 4<<20-4*2048 {
		t.Errorf("second upload: deleted %d bytes locally, want about 4 MiB", up.DeletedLocalBytes)
	}
	if len(up.Instants) != 1 || up.Instants[0].Action != string(timeline.ActionClean) {
		t.Errorf("second upload: instants %+v, want one clean", up.Instants)
	}

	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) != 1 || filepath.Base(logs[0]) != fmt.Sprintf("%020d.log", active) {
		t.Errorf("local .log files %v, want only the active segment %d", logs, active)
	}
	rlogs, _ := filepath.Glob(filepath.Join(remote, "kafka-tiered-storage", "*", "*.log"))
	if len(rlogs) != 4 {
		t.Errorf("remote .log files %v, want the 4 closed segments", rlogs)
	}

	st = tierStatusOf(t, append(tierEnable, "--remote", uri, "--now", later, dir)...)
	if st.LogStartOffset != 0 || st.LocalLogStartOffset != active || st.HighestCopiedOffset != active-1 {
		t.Errorf("status: earliest %d, earliest-local %d, highest copied %d; want 0, %d, %d", st.LogStartOffset, st.LocalLogStartOffset, st.HighestCopiedOffset, active, active-1)
	}
	// After the local deletion the remote segments are not on local
	// disk and keep their readable-until.
	for _, s := range st.Forecast.Segments[:4] {
		if s.Where != "remote" || s.LocalUntil != nil || s.ReadableUntil == nil {
			t.Errorf("forecast after the local deletion, segment %d: %+v", s.BaseOffset, s)
		}
	}
	where := map[string]int{}
	for _, s := range st.Segments {
		where[s.Where]++
		if s.Where == "remote" && (s.RemoteState == nil || *s.RemoteState != "COPY_SEGMENT_FINISHED") {
			t.Errorf("remote segment %d: state %v", s.BaseOffset, s.RemoteState)
		}
	}
	if where["remote"] != 4 || where["local"] != 1 || len(st.Segments) != 5 {
		t.Errorf("status segments by where %v, want 4 remote, 1 local", where)
	}

	code, after, errs := readCmd("--remote", uri, "--from", "0", dir)
	if code != exitOK {
		t.Fatalf("read --remote: exit %d: %s", code, errs)
	}
	if after != before {
		t.Errorf("read --remote --from 0 differs from the read before the upload (%d vs %d bytes)", len(after), len(before))
	}
	// Without the remote, offset 0 is gone from local disk.
	if code, _, errs := readCmd("--from", "0", dir); code != exitProblem || !strings.Contains(errs, "--remote") {
		t.Errorf("read --from 0 without --remote: exit %d, %s", code, errs)
	}
	// earliest is the remote's first offset; -N and a mid-segment start.
	if code, out, errs := readCmd("--remote", uri, "--from", "1500", "--limit", "3", dir); code != exitOK || !strings.HasPrefix(out, "1500\t") || strings.Count(out, "\n") != 3 {
		t.Errorf("read --remote --from 1500: exit %d, %q, %s", code, out, errs)
	}
	if code, out, errs := readCmd("--remote", uri, "--at", fmt.Sprint(tierT0), "--limit", "1", dir); code != exitOK || !strings.HasPrefix(out, "0\t") {
		t.Errorf("read --remote --at T0: exit %d, %q, %s", code, out, errs)
	}
	// read_committed: no transactions, so the same records.
	if code, out, errs := readCmd("--remote", uri, "--isolation", "read_committed", "--from", "0", dir); code != exitOK || out != before {
		t.Errorf("read_committed --remote from earliest: exit %d (%d bytes, want %d), %s", code, len(out), len(before), errs)
	}
	if code, _, errs := readCmd("--remote", uri, "--isolation", "read_committed", "--from", fmt.Sprint(active), dir); code != exitOK {
		t.Errorf("read_committed --remote from earliest-local: exit %d, %s", code, errs)
	}

	// A remote without segkit's metadata, as a broker writes it: read
	// from its files alone; status says so; upload refuses it.
	bare := filepath.Join(t.TempDir(), "broker-tiered")
	if err := os.CopyFS(bare, os.DirFS(remote)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(bare, ".segkit-tier")); err != nil {
		t.Fatal(err)
	}
	if code, got, errs := readCmd("--remote", "file://"+bare, "--from", "0", dir); code != exitOK || got != before {
		t.Errorf("read --remote of a broker-layout remote: exit %d (%d bytes, want %d): %s", code, len(got), len(before), errs)
	}
	if st := tierStatusOf(t, "--remote", "file://"+bare, dir); !st.Discovered || st.LogStartOffset != 0 || len(st.Segments) != 5 {
		t.Errorf("status of a broker-layout remote: discovered %v, earliest %d, %d segments", st.Discovered, st.LogStartOffset, len(st.Segments))
	}
	if code, _, errs := tierCmd(append([]string{"upload", "--remote", "file://" + bare}, append(tierEnable, dir)...)...); code != exitUsage || !strings.Contains(errs, "no segkit metadata") {
		t.Errorf("upload to a broker-layout remote: exit %d, %s", code, errs)
	}

	// The timeline has the four copies and the local clean.
	tl, err := timeline.Open(vfs.OS(), filepath.ToSlash(dir), timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionTier}})
	if err != nil || len(insts) != 4 {
		t.Fatalf("tier instants: %d, %v; want 4", len(insts), err)
	}
	for _, inst := range insts {
		p, ok := inst.Result.(*timeline.Tier)
		if !ok || p.Op != timeline.TierCopy || p.RemoteSegmentID == "" || p.Segment.Size == 0 || p.Remote != uri {
			t.Errorf("tier instant %s: %+v", inst.Time, inst.Result)
		}
	}

	// Total retention: retention.ms passed for every remote segment.
	up = tierUploadOf(t, "--remote.storage.enable", "true", "--local.retention.ms", "60000", "--retention.ms", "60000", "--remote", uri, "--now", later, dir)
	if len(up.DeletedRemote) != 4 || up.LogStartOffset != active || up.DeletedRemoteBytes == 0 {
		t.Errorf("total retention: deleted %d remote segments (%d bytes), earliest %d; want 4, %d", len(up.DeletedRemote), up.DeletedRemoteBytes, up.LogStartOffset, active)
	}
	tl, err = timeline.Open(vfs.OS(), filepath.ToSlash(dir), timeline.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	insts, err = tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionTier}})
	if err != nil || len(insts) != 8 {
		t.Fatalf("tier instants after total retention: %d, %v; want 8", len(insts), err)
	}
	for _, inst := range insts[4:] {
		if p, ok := inst.Result.(*timeline.Tier); !ok || p.Op != timeline.TierDelete || p.Rule != "time" || p.RemoteSegmentID == "" {
			t.Errorf("tier instant %s: %+v, want a delete by the time rule", inst.Time, inst.Result)
		}
	}
	if code, _, errs := readCmd("--remote", uri, "--from", "0", dir); code != exitProblem || !strings.Contains(errs, "total retention") {
		t.Errorf("read --remote --from 0 after total retention: exit %d, %s", code, errs)
	}
	code, out, _ := tierCmd("upload", "--remote.storage.enable", "true", "--retention.ms", "60000", "--remote", uri, "--now", later, dir)
	if code != exitOK || !strings.Contains(out, "copied nothing") || !strings.Contains(out, "deleted nothing locally") {
		t.Errorf("upload with nothing to do: exit %d\n%s", code, out)
	}
}

// TestTierStatusReadOnly: status writes nothing, in the partition or the
// remote, and takes no lock (it runs while the lock is held).
func TestTierStatusReadOnly(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	lock, err := kafkalog.LockPartition(vfs.OS(), filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	root := filepath.Dir(filepath.Dir(dir))
	before := snapshot(t, root)
	for _, args := range [][]string{
		append(tierEnable, "--remote", uri, dir),
		append(tierEnable, "--remote", uri, "--json", dir),
		{dir},
	} {
		code, out, errs := tierCmd(append([]string{"status"}, args...)...)
		if code != exitOK || out == "" {
			t.Errorf("status %v: exit %d: %s", args, code, errs)
		}
	}
	if code, _, errs := readCmd("--remote", uri, "--from", "0", "--limit", "1", dir); code != exitOK {
		t.Errorf("read --remote: exit %d: %s", code, errs)
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("status or read changed the tree:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestTierUploadLocked: with the log directory locked, upload stops
// before writing anything (exit 3).
func TestTierUploadLocked(t *testing.T) {
	dir, remote := tierFixture(t)
	lock, err := kafkalog.LockPartition(vfs.OS(), filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	root := filepath.Dir(filepath.Dir(dir))
	before := snapshot(t, root)
	code, _, errs := tierCmd(append([]string{"upload", "--remote", "file://" + remote}, append(tierEnable, dir)...)...)
	if code != exitFailure || !strings.Contains(errs, "locked") {
		t.Errorf("upload while locked: exit %d, %s", code, errs)
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("upload while locked changed the tree")
	}
}

// TestTierRefusals: bad command lines and refusals exit 2 and write
// nothing.
func TestTierRefusals(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	noID := filepath.Join(filepath.Dir(dir), "plain-0")
	if code, _, errs := appendCmd(t, records(3), noID); code != exitOK {
		t.Fatal(errs)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no_subcommand", nil, "give a subcommand"},
		{"unknown_subcommand", []string{"push", dir}, "unknown subcommand"},
		{"upload_no_remote", append([]string{"upload"}, append(tierEnable, dir)...), "--remote"},
		{"s3", append([]string{"upload", "--remote", "s3://bucket/p"}, append(tierEnable, dir)...), "not built into this segviz yet"},
		{"s3_status", []string{"status", "--remote", "s3://bucket/p", dir}, "not built into this segviz yet"},
		{"http", []string{"status", "--remote", "http://x/p", dir}, "want file://DIR"},
		{"disabled", []string{"upload", "--remote", uri, dir}, "remote storage is not enabled"},
		{"compacted", []string{"upload", "--remote", uri, "--cleanup.policy", "compact", dir}, "compacted topics are not tiered"},
		{"compacted_status", []string{"status", "--cleanup.policy", "compact,delete", dir}, "compacted topics are not tiered"},
		{"compacted_enabled", append([]string{"upload", "--remote", uri, "--cleanup.policy", "compact"}, append(tierEnable, dir)...), "cleanup.policy"},
		{"no_topic_id", append([]string{"upload", "--remote", uri}, append(tierEnable, noID)...), "topic id"},
		{"two_dirs", []string{"status", dir, dir}, "one partition directory"},
		{"bad_now", []string{"status", "--now", "soon", dir}, "--now"},
	}
	root := filepath.Dir(filepath.Dir(dir))
	before := snapshot(t, root)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := tierCmd(tt.args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errs, tt.want)
			}
		})
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("a refused command changed the tree")
	}
	for _, args := range [][]string{{"--help"}, {"status", "--help"}, {"upload", "--help"}} {
		code, out, _ := tierCmd(args...)
		if code != exitOK || !strings.Contains(out, "COPY_SEGMENT_FINISHED") || !strings.Contains(out, "earliest-local") {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// TestTierUploadResolvesLeftovers: a copy an interrupted run left at
// COPY_SEGMENT_STARTED (with a partial file) and a temporary file are
// resolved by the next upload's start-up, which says so, then copies.
func TestTierUploadResolvesLeftovers(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	d := tier.NewDir(vfs.OS(), filepath.ToSlash(remote))
	tp := tier.TopicIDPartition{TopicID: checkpoint.UUID{3: 7, 15: 42}, Topic: "orders", Partition: 0}
	m := tier.SegmentMetadata{ID: tier.SegmentID{TopicIDPartition: tp, ID: checkpoint.UUID{0: 9, 6: 0x40, 8: 0x80, 15: 1}},
		StartOffset: 0, EndOffset: 954, MaxTimestampMs: tierT0, SegmentSizeInBytes: 100, TxnIdxEmpty: true, State: tier.CopySegmentStarted}
	if err := d.PutSegmentMetadata(m); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(d.PartitionDir(tp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.FilePath(m, tier.FileSegment), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.MetadataDir(tp), "x.log.tmp"), []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := tierCmd(append([]string{"upload", "--remote", uri, "--now", fmt.Sprint(tierT0 + 1000)}, append(tierEnable, dir)...)...)
	if code != exitOK {
		t.Fatalf("upload: exit %d: %s", code, errs)
	}
	for _, want := range []string{"start-up: removed the copy of segment 0", "COPY_SEGMENT_STARTED", "x.log.tmp", "copied 4 segments"} {
		if !strings.Contains(out, want) {
			t.Errorf("upload output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(d.FilePath(m, tier.FileSegment)); !os.IsNotExist(err) {
		t.Errorf("the abandoned copy's file is still there: %v", err)
	}
	st := tierStatusOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	states := map[string]int{}
	for _, s := range st.Segments {
		if s.RemoteState != nil {
			states[*s.RemoteState+"/"+s.Where]++
		}
	}
	if states["COPY_SEGMENT_FINISHED/both"] != 4 || states["DELETE_SEGMENT_FINISHED/none"] != 1 {
		t.Errorf("status remote states %v, want 4 finished copies on both sides and the abandoned one deleted", states)
	}
}

// TestTierJSONFields: every documented field is present in the JSON.
func TestTierJSONFields(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	check := func(what, out string, fields ...string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, f := range fields {
			if _, ok := m[f]; !ok {
				t.Errorf("%s: no field %q", what, f)
			}
		}
		return m
	}
	segFields := []string{"baseOffset", "nextOffset", "size", "where", "remoteState", "remoteId", "maxTimestamp", "reason"}
	_, out, _ := tierCmd(append([]string{"upload", "--json", "--remote", uri, "--now", fmt.Sprint(tierT0 + 120_000)}, append(tierEnable, dir)...)...)
	m := check("upload", out, "partition", "remote", "now", "startup", "lastStableOffset", "copied", "deletedLocal", "deletedLocalBytes",
		"deletedRemote", "deletedRemoteBytes", "removedFiles", "logStartOffset", "localLogStartOffset", "highestCopiedOffset", "instants")
	seg, _ := json.Marshal(m["copied"].([]any)[0])
	check("upload copied", string(seg), segFields...)
	st, _ := json.Marshal(m["startup"])
	check("upload startup", string(st), "copiesAbandoned", "deletesFinished", "tempRemoved", "unknown", "missing", "localSegmentsDeleted")
	_, out, _ = tierCmd(append([]string{"status", "--json", "--remote", uri}, append(tierEnable, dir)...)...)
	m = check("status", out, "partition", "remote", "now", "logStartOffset", "localLogStartOffset", "logEndOffset", "highWatermark",
		"lastStableOffset", "highestCopiedOffset", "discovered", "segments", "nextCheck", "forecast")
	seg, _ = json.Marshal(m["segments"].([]any)[0])
	check("status segment", string(seg), segFields...)
	nc, _ := json.Marshal(m["nextCheck"])
	check("status nextCheck", string(nc), "copy", "deleteLocal", "deleteRemote")
	fc, _ := json.Marshal(m["forecast"])
	fm := check("status forecast", string(fc), "retentionChecks", "tasks", "segments")
	seg, _ = json.Marshal(fm["segments"].([]any)[0])
	check("status forecast segment", string(seg), "baseOffset", "nextOffset", "where", "copiedBy", "localUntil", "localReason", "readableUntil", "reason", "explanation")
}

// TestReadRemoteDamaged: a bad CRC in a remote segment stops the read
// with exit 1, naming the remote file; what came before is printed.
func TestReadRemoteDamaged(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+1000), dir)...)
	tierUploadOf(t, append(tierEnable, "--remote", uri, "--now", fmt.Sprint(tierT0+120_000), dir)...)
	logs, _ := filepath.Glob(filepath.Join(remote, "kafka-tiered-storage", "*", "*.log"))
	if len(logs) != 4 {
		t.Fatalf("remote .log files %v", logs)
	}
	name := logs[1] // the second segment, from 955
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := readCmd("--remote", uri, "--from", "0", dir)
	if code != exitProblem || !strings.Contains(errs, filepath.Base(name)) {
		t.Errorf("exit %d, stderr %q; want 1 naming %s", code, errs, filepath.Base(name))
	}
	if n := strings.Count(out, "\n"); n < 955 || n >= 1909 {
		t.Errorf("%d records printed before the damage, want the first segment's and part of the second", n)
	}
}

// TestRetentionTiered: "segviz retention" on a tiered topic gives tier
// status's forecast and refuses --apply, whose deletions would not wait
// for the copies.
func TestRetentionTiered(t *testing.T) {
	dir, remote := tierFixture(t)
	uri := "file://" + remote
	var out, errb strings.Builder
	args := []string{"--config", "remote.storage.enable=true", "--config", "local.retention.ms=60000", "--remote", uri, "--now", fmt.Sprint(tierT0 + 1000), dir}
	if code := runRetention(args, &out, &errb); code != exitOK {
		t.Fatalf("retention on a tiered topic: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"the topic is tiered", "ON LOCAL DISK UNTIL", "READABLE UNTIL", "local.retention.ms / retention.ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("retention on a tiered topic: no %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	if code := runRetention(append([]string{"--apply"}, args...), &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "segviz tier upload") {
		t.Errorf("retention --apply on a tiered topic: exit %d: %s", code, errb.String())
	}
	if logs, _ := filepath.Glob(filepath.Join(dir, "*.log")); len(logs) != 5 {
		t.Errorf("after the refusals %d .log files, want 5", len(logs))
	}
	errb.Reset()
	if code := runRetention([]string{"--remote", uri, dir}, &out, &errb); code != exitUsage {
		t.Errorf("--remote on a topic not tiered: exit %d: %s", code, errb.String())
	}
}
