package viz

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/compactjson"
	"github.com/segkit/segkit/internal/demo"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// The compacted test partition: users-0, written at usersT0 + one second
// per batch; the plans run an hour later.
const (
	usersDir = "kafka-logs/users-0"
	usersT0  = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z
	usersNow = usersT0 + 3600_000
)

type msClock struct{ ms *int64 }

func (c msClock) Now() time.Time { return time.UnixMilli(*c.ms) }

// buildUsers writes users-0 into a new in-memory filesystem, with a
// cleaner-offset-checkpoint entry at cleanFrom when it is not negative:
//
//	 0: 0 a=1, 1 b=1 | 2 a=2 | 3 (no key)
//	 4: 4 c=1, 5 b tombstone | 6 k (aborted, producer 5) | 7 ABORT marker
//	 8: 8 a=3, 9 c=2
//	10 (active): 10 d=1
func buildUsers(t *testing.T, cleanFrom int64) *vfs.Mem {
	t.Helper()
	ms := usersT0
	clk := msClock{&ms}
	fsys := vfs.MemOptions{Clock: clk.Now}.New()
	cfg, err := config.Parse(map[string]string{config.CleanupPolicy: config.CleanupPolicyCompact})
	if err != nil {
		t.Fatal(err)
	}
	l, err := kafkalog.Open(fsys, usersDir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var b record.Builder
	add := func(batch []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch, 0); err != nil {
			t.Fatal(err)
		}
		ms += 1000
	}
	put := func(spec record.BatchSpec, kvs ...string) {
		t.Helper()
		var recs []record.Record
		for i := 0; i < len(kvs); i += 2 {
			r := record.Record{Timestamp: ms}
			if kvs[i] != "" {
				r.Key = []byte(kvs[i])
			}
			if kvs[i+1] != "-" {
				r.Value = []byte(kvs[i+1])
			}
			recs = append(recs, r)
		}
		add(b.AppendBatch(nil, &spec, recs))
	}
	roll := func() {
		t.Helper()
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	plain := record.NewBatchSpec(0, compress.None)
	put(plain, "a", "1", "b", "1")
	put(plain, "a", "2")
	put(plain, "", "unkeyed")
	roll()
	put(plain, "c", "1", "b", "-")
	txn := record.NewBatchSpec(0, compress.None)
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 5, 0, 0, true
	put(txn, "k", "aborted")
	marker := record.NewBatchSpec(0, compress.None)
	marker.ProducerID, marker.ProducerEpoch = 5, 0
	add(b.AppendEndTxnMarker(nil, &marker, record.EndTxnMarker{Type: record.ControlAbort}, ms))
	roll()
	put(plain, "a", "3", "c", "2")
	roll()
	put(plain, "d", "1")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if cleanFrom >= 0 {
		tp := checkpoint.TopicPartition{Topic: "users", Partition: 0}
		if err := checkpoint.WriteOffsets(fsys, path.Join(path.Dir(usersDir), compaction.CleanerCheckpointFile), map[checkpoint.TopicPartition]int64{tp: cleanFrom}); err != nil {
			t.Fatal(err)
		}
	}
	return fsys
}

// compactionCall runs Compaction and round-trips its answer through JSON,
// as both of the page's paths do.
func compactionCall(t *testing.T, s *Session, q Params) CompactionJSON {
	t.Helper()
	v, err := s.Compaction(q)
	if err != nil {
		t.Fatalf("compaction %v: %v", q, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out CompactionJSON
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// planFor runs compaction.Plan itself on the same files, with the topic
// settings props over Kafka's defaults and cleanup.policy=compact.
func planFor(t *testing.T, fsys vfs.FS, props map[string]string, now int64) *compaction.Report {
	t.Helper()
	p := map[string]string{config.CleanupPolicy: config.CleanupPolicyCompact}
	for k, v := range props {
		p[k] = v
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := compaction.Plan(fsys, usersDir, cfg, compaction.Options{Clock: msClock{&now}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func states(j CompactionJSON) []string {
	var out []string
	for _, s := range j.Segments {
		out = append(out, s.State)
	}
	return out
}

func TestCompactionWhatIf(t *testing.T) {
	day := int64(86_400_000)
	tests := []struct {
		name      string
		cleanFrom int64             // cleaner-offset-checkpoint entry, -1 for none
		topic     map[string]string // the topic config the session has
		params    map[string]string // the what-if's settings
		now       int64
		// wanted, besides agreeing with compaction.Plan:
		states    []string
		cleanable bool
		asIf      string
		by        string // in UncleanableBy
		why       string // in Why
		groups    int
		check     func(t *testing.T, j CompactionJSON)
	}{
		{name: "compacted", cleanFrom: -1, topic: map[string]string{"cleanup.policy": "compact"},
			states: []string{"dirty", "dirty", "dirty", "active"}, cleanable: true, by: "the active segment", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if j.DirtyRatio == nil || *j.DirtyRatio != 1 || j.CleanBytes != 0 {
					t.Errorf("dirty ratio %v, clean bytes %d: nothing was cleaned before", j.DirtyRatio, j.CleanBytes)
				}
				// a=1, b=1, a=2 superseded and the unkeyed record; c=1 and the aborted record.
				if r := j.Segments[0].Removed; r.Superseded != 3 || r.Unkeyed != 1 || r.Records != 4 {
					t.Errorf("segment 0 removes %+v", r)
				}
				if r := j.Segments[1].Removed; r.Superseded != 1 || r.Aborted != 1 || r.Tombstones != 0 {
					t.Errorf("segment 4 removes %+v", r)
				}
				if r := j.Segments[2].Removed; r.Records != 0 || !j.Segments[2].Rewritten {
					t.Errorf("segment 8 removes %+v (rewritten %v)", r, j.Segments[2].Rewritten)
				}
				if j.Segments[3].Rewritten || j.Segments[3].Removed.Records != 0 {
					t.Errorf("the active segment is cleaned: %+v", j.Segments[3])
				}
				// The tombstone b stays, stamped until now + delete.retention.ms.
				if len(j.Kept) == 0 || !j.Kept[0].New || j.Kept[0].Tombstones != 1 || j.Kept[0].DeleteHorizonMs != usersNow+day {
					t.Errorf("kept %+v", j.Kept)
				}
				if j.EndOffset == nil || *j.EndOffset != 10 {
					t.Errorf("end offset %v, want 10", j.EndOffset)
				}
			}},
		{name: "delete_topic_as_if_compacted", cleanFrom: -1,
			states: []string{"dirty", "dirty", "dirty", "active"}, cleanable: true, asIf: "compact", by: "the active segment", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if j.Policy != "delete" || j.Compacted || j.Config.CleanupPolicy != "compact" || j.TopicConfig.CleanupPolicy != "delete" {
					t.Errorf("policy %q compacted %v, config %q, topic %q", j.Policy, j.Compacted, j.Config.CleanupPolicy, j.TopicConfig.CleanupPolicy)
				}
			}},
		{name: "what_if_compact", cleanFrom: -1, params: map[string]string{"cleanup.policy": "compact,delete"},
			states: []string{"dirty", "dirty", "dirty", "active"}, cleanable: true, by: "the active segment", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if j.Policy != "compact,delete" || !j.Compacted || j.TopicConfig.CleanupPolicy != "delete" {
					t.Errorf("policy %q compacted %v, topic %q", j.Policy, j.Compacted, j.TopicConfig.CleanupPolicy)
				}
			}},
		{name: "checkpoint", cleanFrom: 4, topic: map[string]string{"cleanup.policy": "compact"},
			states: []string{"clean", "dirty", "dirty", "active"}, cleanable: true, by: "the active segment", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if j.Checkpoint == nil || *j.Checkpoint != 4 || j.FirstDirtyOffset != 4 || j.FirstDirtyFrom != "the cleaner-offset-checkpoint" {
					t.Errorf("checkpoint %v, first dirty %d from %q", j.Checkpoint, j.FirstDirtyOffset, j.FirstDirtyFrom)
				}
				want := float64(j.Segments[1].Size+j.Segments[2].Size) / float64(j.Segments[0].Size+j.Segments[1].Size+j.Segments[2].Size)
				if j.DirtyRatio == nil || *j.DirtyRatio != want || j.CleanBytes != j.Segments[0].Size {
					t.Errorf("dirty ratio %v, want %v", j.DirtyRatio, want)
				}
				if !j.Segments[0].Rewritten {
					t.Error("the clean section is not rewritten") // every segment below the end is
				}
			}},
		{name: "ratio_not_above_min", cleanFrom: 4, topic: map[string]string{"cleanup.policy": "compact"}, params: map[string]string{"min.cleanable.dirty.ratio": "0.99"},
			states: []string{"clean", "dirty", "dirty", "active"}, why: "is not above min.cleanable.dirty.ratio 0.99",
			check: func(t *testing.T, j CompactionJSON) {
				if j.EndOffset != nil || j.Removed.Records != 0 || j.Segments[1].Rewritten || j.MinCleanableDirtyRatio != 0.99 {
					t.Errorf("not cleanable, yet end %v, removed %+v", j.EndOffset, j.Removed)
				}
			}},
		{name: "max_lag_forces", cleanFrom: 4, topic: map[string]string{"cleanup.policy": "compact"},
			params: map[string]string{"min.cleanable.dirty.ratio": "0.99", "max.compaction.lag.ms": "60000"},
			states: []string{"clean", "dirty", "dirty", "active"}, cleanable: true, by: "the active segment", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if !j.NeedCompactionNow || j.MaxCompactionDelayMs <= 0 || j.Config.MaxCompactionLagMs == nil || *j.Config.MaxCompactionLagMs != 60000 {
					t.Errorf("need compaction now %v, delay %d, config %v", j.NeedCompactionNow, j.MaxCompactionDelayMs, j.Config.MaxCompactionLagMs)
				}
			}},
		{name: "min_lag", cleanFrom: -1, topic: map[string]string{"cleanup.policy": "compact"},
			params: map[string]string{"min.compaction.lag.ms": fmt.Sprint(3600_000 - 3500)},
			states: []string{"dirty", "uncleanable", "uncleanable", "active"}, cleanable: true, by: "min.compaction.lag.ms", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if j.FirstUncleanableOffset != 4 || j.Segments[1].Rewritten || j.Removed.Aborted != 0 {
					t.Errorf("first uncleanable %d; segment 4 rewritten %v; removed %+v", j.FirstUncleanableOffset, j.Segments[1].Rewritten, j.Removed)
				}
			}},
		{name: "segment_bytes_splits_groups", cleanFrom: -1, topic: map[string]string{"cleanup.policy": "compact"}, params: map[string]string{"segment.bytes": "100"},
			states: []string{"dirty", "dirty", "dirty", "active"}, cleanable: true, by: "the active segment", groups: 3,
			check: func(t *testing.T, j CompactionJSON) {
				for i, s := range j.Segments[:3] {
					if s.Into == nil || *s.Into != s.BaseOffset {
						t.Errorf("segment %d: into %v, want its own group", i, s.Into)
					}
				}
			}},
		{name: "delete_retention_and_now", cleanFrom: -1, topic: map[string]string{"cleanup.policy": "compact"},
			params: map[string]string{"delete.retention.ms": "1000"}, now: usersNow + day,
			states: []string{"dirty", "dirty", "dirty", "active"}, cleanable: true, by: "the active segment", groups: 1,
			check: func(t *testing.T, j CompactionJSON) {
				if j.Now != usersNow+day || j.DeleteHorizonMs != usersNow+day+1000 || len(j.Kept) == 0 || j.Kept[0].DeleteHorizonMs != usersNow+day+1000 {
					t.Errorf("now %d, horizon %d, kept %+v", j.Now, j.DeleteHorizonMs, j.Kept)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := buildUsers(t, tt.cleanFrom)
			topic, err := config.Parse(tt.topic)
			if err != nil {
				t.Fatal(err)
			}
			s := NewSession(fsys, Options{Now: func() time.Time { return time.UnixMilli(usersNow) }, Config: func(string) config.Config { return topic }})
			defer s.Close()
			q := Params{"dir": usersDir}
			for k, v := range tt.params {
				q[k] = v
			}
			now := usersNow
			if tt.now != 0 {
				q["now"] = fmt.Sprint(tt.now)
				now = tt.now
			}
			j := compactionCall(t, s, q)

			// The numbers are compaction.Plan's for the same settings.
			props := map[string]string{}
			for k, v := range tt.topic {
				props[k] = v
			}
			for k, v := range tt.params {
				props[k] = v
			}
			if !strings.Contains(props["cleanup.policy"], "compact") {
				props["cleanup.policy"] = "compact"
			}
			rep := planFor(t, fsys, props, now)
			type rangeOf struct {
				Dirty, Uncleanable, UncleanableDirty, CleanBytes, CleanableBytes, TotalBytes int64
				IsCleanable                                                                  bool
				Why, By                                                                      string
			}
			got := rangeOf{j.FirstDirtyOffset, j.FirstUncleanableOffset, j.FirstUncleanableDirtyOffset, j.CleanBytes, j.CleanableBytes, j.TotalBytes, j.Cleanable, j.Why, j.UncleanableBy}
			want := rangeOf{rep.FirstDirtyOffset, rep.FirstUncleanableOffset, rep.FirstUncleanableDirtyOffset, rep.CleanBytes, rep.CleanableBytes, rep.TotalBytes, rep.Cleanable, rep.Why, rep.UncleanableBy}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("range differs from compaction.Plan's (-Plan +viz):\n%s", diff)
			}
			if j.DirtyRatio == nil || *j.DirtyRatio != rep.CleanableRatio {
				t.Errorf("dirty ratio %v, Plan %v", j.DirtyRatio, rep.CleanableRatio)
			}
			if diff := cmp.Diff(compactjson.RemovalOf(rep.Removed), j.Removed); diff != "" {
				t.Errorf("removed differs (-Plan +viz):\n%s", diff)
			}
			var perSegment []compactjson.Removal
			for _, g := range rep.Groups {
				for _, r := range g.Removed {
					perSegment = append(perSegment, compactjson.RemovalOf(r))
				}
			}
			var viz []compactjson.Removal
			var sum compactjson.Removal
			for _, s := range j.Segments {
				if s.Rewritten {
					viz = append(viz, s.Removed)
				}
				sum.Records += s.Removed.Records
				sum.Bytes += s.Removed.Bytes
				if s.SizeAfter != s.Size-s.Removed.Bytes {
					t.Errorf("segment %d: size after %d, size %d less %d removed", s.BaseOffset, s.SizeAfter, s.Size, s.Removed.Bytes)
				}
			}
			if diff := cmp.Diff(perSegment, viz); diff != "" {
				t.Errorf("per-segment removals differ from Plan's groups (-Plan +viz):\n%s", diff)
			}
			if sum.Records != j.Removed.Records || sum.Bytes != j.Removed.Bytes {
				t.Errorf("segments remove %d records, %d bytes; the total says %d, %d", sum.Records, sum.Bytes, j.Removed.Records, j.Removed.Bytes)
			}
			if j.SizeBefore-j.SizeAfter != j.Removed.Bytes && j.Cleanable {
				t.Errorf("groups shrink by %d bytes, %d removed", j.SizeBefore-j.SizeAfter, j.Removed.Bytes)
			}

			if !slices.Equal(states(j), tt.states) {
				t.Errorf("states %v, want %v", states(j), tt.states)
			}
			if j.Cleanable != tt.cleanable || j.AsIf != tt.asIf || len(j.Groups) != tt.groups {
				t.Errorf("cleanable %v (want %v), as if %q (want %q), %d groups (want %d); why %q", j.Cleanable, tt.cleanable, j.AsIf, tt.asIf, len(j.Groups), tt.groups, j.Why)
			}
			if !strings.Contains(j.UncleanableBy, tt.by) || !strings.Contains(j.Why, tt.why) {
				t.Errorf("uncleanable by %q (want %q), why %q (want %q)", j.UncleanableBy, tt.by, j.Why, tt.why)
			}
			if tt.check != nil {
				tt.check(t, j)
			}
		})
	}
}

// TestCompactionUntil asks, with the plan, until when one record can be
// read, and compares it with compaction.ReadableUntil.
func TestCompactionUntil(t *testing.T) {
	fsys := buildUsers(t, -1)
	topic, _ := config.Parse(map[string]string{"cleanup.policy": "compact"})
	s := NewSession(fsys, Options{Now: func() time.Time { return time.UnixMilli(usersNow) }, Config: func(string) config.Config { return topic }})
	defer s.Close()
	now := int64(usersNow)
	for _, tt := range []struct {
		offset  int64
		kind    compaction.Kind
		removed bool
	}{
		{0, compaction.KindSuperseded, true},
		{3, compaction.KindUnkeyed, true},
		{5, compaction.KindTombstone, false},
		{10, compaction.KindLatest, false},
		{11, compaction.KindAbsent, false},
	} {
		t.Run(fmt.Sprint(tt.offset), func(t *testing.T) {
			j := compactionCall(t, s, Params{"dir": usersDir, "offset": fmt.Sprint(tt.offset)})
			b, err := compaction.ReadableUntil(fsys, usersDir, topic, compaction.Options{Clock: msClock{&now}}, tt.offset)
			if err != nil {
				t.Fatal(err)
			}
			if j.Until == nil {
				t.Fatal("no until")
			}
			if diff := cmp.Diff(*compactjson.UntilOf(&b), *j.Until); diff != "" {
				t.Errorf("differs from compaction.ReadableUntil (-want +got):\n%s", diff)
			}
			if j.Until.Kind != string(tt.kind) || j.Until.RemovedByCleanNow != tt.removed {
				t.Errorf("offset %d: %s, removed now %v; want %s, %v", tt.offset, j.Until.Kind, j.Until.RemovedByCleanNow, tt.kind, tt.removed)
			}
		})
	}
	if j := compactionCall(t, s, Params{"dir": usersDir}); j.Until != nil {
		t.Errorf("until %+v without an offset", j.Until)
	}
}

// TestCompactionReadOnly plans on a filesystem that fails every change,
// and checks that nothing tried one, on the partition that Clean would
// have to reset a checkpoint of (a checkpoint past the log end).
func TestCompactionReadOnly(t *testing.T) {
	mem := buildUsers(t, 99)
	ffs := vfs.WithFaults(mem, vfs.Inject(errors.New("read-only"), vfs.Mutating()))
	s := NewSession(ffs, Options{Now: func() time.Time { return time.UnixMilli(usersNow) }})
	defer s.Close()
	j := compactionCall(t, s, Params{"dir": usersDir, "cleanup.policy": "compact", "offset": "0"})
	if !j.CheckpointReset || j.FirstDirtyOffset != 0 || !j.Cleanable {
		t.Errorf("checkpoint reset %v, first dirty %d, cleanable %v", j.CheckpointReset, j.FirstDirtyOffset, j.Cleanable)
	}
	for _, op := range ffs.Log() {
		if op.Kind.Mutating() {
			t.Errorf("the plan tried %v", op)
		}
	}
	if len(ffs.Log()) == 0 {
		t.Error("no operation logged: the test does not see the plan's reads")
	}
}

func TestCompactionBadRequests(t *testing.T) {
	fsys := buildUsers(t, -1)
	s := NewSession(fsys, Options{})
	defer s.Close()
	for _, tt := range []struct {
		name string
		q    Params
		want error
	}{
		{"no_dir", Params{}, ErrBadRequest},
		{"missing_dir", Params{"dir": "kafka-logs/nope-0"}, ErrNotFound},
		{"ratio_above_1", Params{"dir": usersDir, "min.cleanable.dirty.ratio": "2"}, ErrBadRequest},
		{"ratio_not_a_number", Params{"dir": usersDir, "min.cleanable.dirty.ratio": "x"}, ErrBadRequest},
		{"min_lag_above_max", Params{"dir": usersDir, "min.compaction.lag.ms": "100", "max.compaction.lag.ms": "10"}, ErrBadRequest},
		{"bad_policy", Params{"dir": usersDir, "cleanup.policy": "shred"}, ErrBadRequest},
		{"bad_now", Params{"dir": usersDir, "now": "soon"}, ErrBadRequest},
		{"bad_offset", Params{"dir": usersDir, "offset": "1.5"}, ErrBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Compaction(tt.q); !errors.Is(err, tt.want) {
				t.Errorf("%v: error %v, want %v", tt.q, err, tt.want)
			}
		})
	}
}

// TestCompactionDemo plans the demo's orders-0 (cleanup.policy delete: as
// if compacted), which holds transactions, an empty batch, tombstones and
// a segment waiting as .deleted: one state per live segment, and the
// answer marshals.
func TestCompactionDemo(t *testing.T) {
	s := demoSession(t)
	j := compactionCall(t, s, Params{"dir": demo.Partition})
	if j.AsIf != "compact" || j.Compacted || len(j.Segments) != 7 {
		t.Fatalf("as if %q, compacted %v, %d segments", j.AsIf, j.Compacted, len(j.Segments))
	}
	if j.Segments[6].State != "active" || j.FirstDirtyOffset != j.LogStartOffset {
		t.Errorf("states %v, first dirty %d (log start %d)", states(j), j.FirstDirtyOffset, j.LogStartOffset)
	}
	if j.Now != demo.Now.UnixMilli() {
		t.Errorf("now %d, the demo's is %d", j.Now, demo.Now.UnixMilli())
	}
	// The damaged orders-1: a clean stops at its bad CRC, and says so.
	_, err := s.Compaction(Params{"dir": demo.Damaged})
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "the partition is damaged") {
		t.Errorf("orders-1: %v", err)
	}
}
