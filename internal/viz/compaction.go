package viz

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/compactjson"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
)

// CompactionJSON is a compaction what-if: what Kafka's log cleaner would
// do to the partition if it picked it at Now (compaction.Plan, a dry run
// that writes nothing): the cleanable range and the dirty ratio, whether
// the log is cleanable and why not, and, per segment, what a clean would
// remove and why. The numbers are compaction.Plan's, those `segviz compact
// --dry-run --json` prints; the e2e tests compare the page with Plan.
type CompactionJSON struct {
	// Policy is the cleanup.policy asked for (the topic's, or the
	// what-if's), comma-separated; Compacted says it includes compact.
	// When it does not, the plan is what a clean would do were the topic
	// compacted: AsIf is then the policy it ran with ("compact").
	Policy    string `json:"policy"`
	Compacted bool   `json:"compacted"`
	AsIf      string `json:"asIf,omitempty"`
	// Config holds the settings the plan ran with; TopicConfig the
	// partition's own (the what-if's starting point).
	Config      CompactionConfigJSON `json:"config"`
	TopicConfig CompactionConfigJSON `json:"topicConfig"`

	// FirstDirtyFrom says where the first dirty offset came from, in
	// words.
	FirstDirtyFrom string `json:"firstDirtyFrom"`
	// The range, ratio, verdict and totals, under the names of `segviz
	// compact --json`; Until answers the "offset" parameter.
	compactjson.Report
	// SizeBefore and SizeAfter are the bytes of the segments the clean
	// rewrites, before and after.
	SizeBefore int64 `json:"sizeBefore"`
	SizeAfter  int64 `json:"sizeAfter"`
	// Segments lists every segment, with its place in the range.
	Segments []CompactionSegmentJSON `json:"segments"`
	Summary  string                  `json:"summary"`
}

// CompactionConfigJSON holds the topic settings a compaction plan reads.
// MaxCompactionLagMs is null for Long.MAX_VALUE (no bound: JSON numbers
// in a page cannot hold it exactly).
type CompactionConfigJSON struct {
	CleanupPolicy          string  `json:"cleanup.policy"`
	MinCleanableDirtyRatio float64 `json:"min.cleanable.dirty.ratio"`
	MinCompactionLagMs     int64   `json:"min.compaction.lag.ms"`
	MaxCompactionLagMs     *int64  `json:"max.compaction.lag.ms"`
	DeleteRetentionMs      int64   `json:"delete.retention.ms"`
	SegmentBytes           int64   `json:"segment.bytes"`
}

// CompactionSegmentJSON is one segment: where it lies with respect to the
// cleanable range, and what a clean at Now would remove from it.
type CompactionSegmentJSON struct {
	BaseOffset int64 `json:"baseOffset"`
	NextOffset int64 `json:"nextOffset"`
	Size       int64 `json:"size"`
	Active     bool  `json:"active"`
	// State is "clean" (below the first dirty offset), "dirty" (in the
	// cleanable range), "uncleanable" (at or past the first uncleanable
	// offset) or "active" (the active segment, never cleaned).
	State string `json:"state"`
	// Rewritten says the clean rewrites the segment, into the group whose
	// base offset is Into (null when it does not); SizeAfter is its size
	// after the clean.
	Rewritten bool                `json:"rewritten"`
	Into      *int64              `json:"into"`
	SizeAfter int64               `json:"sizeAfter"`
	Removed   compactjson.Removal `json:"removed"`
}

// compactionKeys are the topic settings the compaction what-if takes as
// parameters.
var compactionKeys = []string{config.CleanupPolicy, config.MinCleanableDirtyRatio, config.MinCompactionLagMs,
	config.MaxCompactionLagMs, config.DeleteRetentionMs, config.SegmentBytes}

// Compaction plans a clean of partition p["dir"] at p["now"] (epoch ms;
// default the session's now) with compaction.Plan, under its config with
// cleanup.policy, min.cleanable.dirty.ratio, min.compaction.lag.ms,
// max.compaction.lag.ms, delete.retention.ms and segment.bytes replaced
// by the parameters of those names. A policy without compact is planned
// as if it were compact (AsIf), so that the view says what a compaction
// would do. With p["offset"], it also says until when the record at that
// offset can be read (compaction.ReadableUntil). The high watermark is
// the log directory's replication-offset-checkpoint entry, as for `segviz
// compact`, and the cleaner's settings are Kafka's defaults.
//
// Like every method it only reads: Plan opens the log read-only, takes no
// lock and writes nothing, not even the reset checkpoint Clean would.
func (s *Session) Compaction(q Params) (*CompactionJSON, error) {
	p, err := s.partitionParam(q, false)
	if err != nil {
		return nil, err
	}
	cfg, now, err := s.whatIf(p, q, compactionKeys)
	if err != nil {
		return nil, err
	}
	offset, err := q.int64("offset", -1)
	if err != nil {
		return nil, err
	}
	out := &CompactionJSON{
		Policy: strings.Join(cfg.CleanupPolicy, ","), Compacted: cfg.Compact(),
		TopicConfig: compactionConfig(p.cfg),
		Segments:    []CompactionSegmentJSON{},
	}
	if !cfg.Compact() {
		cfg.CleanupPolicy = []string{config.CleanupPolicyCompact}
		out.AsIf = config.CleanupPolicyCompact
	}
	out.Config = compactionConfig(cfg)
	opt := compaction.Options{Clock: nowClock(func() time.Time { return time.UnixMilli(now) })}
	if m, err := checkpoint.ReadOffsets(s.fsys, path.Join(path.Dir(p.dir), checkpoint.ReplicationOffsetFile)); err == nil {
		if hw := m[p.l.TopicPartition()]; hw > 0 {
			opt.HighWatermark = hw // ≤ 0 means the log end offset, as `segviz compact` has it
		}
	}
	rep, err := compaction.Plan(s.fsys, p.dir, cfg, opt)
	if err != nil {
		return nil, damaged(notFound(err))
	}
	var bound *compaction.RecordBound
	if offset >= 0 {
		b, err := compaction.ReadableUntil(s.fsys, p.dir, cfg, opt, offset)
		if err != nil {
			return nil, damaged(notFound(err))
		}
		bound = &b
	}
	out.fromReport(rep, bound)
	out.segments(rep, p)
	return out, nil
}

// damaged says, of an error from damage in the partition, that a clean
// would stop there.
func damaged(err error) error {
	var ce *format.CorruptionError
	var cle *kafkalog.CorruptLogError
	if errors.As(err, &ce) || errors.As(err, &cle) {
		return fmt.Errorf("%w (the partition is damaged: a clean stops there, as Kafka's cleaner does; see the Verification tab)", err)
	}
	return err
}

func compactionConfig(c config.Config) CompactionConfigJSON {
	j := CompactionConfigJSON{
		CleanupPolicy: strings.Join(c.CleanupPolicy, ","), MinCleanableDirtyRatio: c.MinCleanableDirtyRatio,
		MinCompactionLagMs: c.MinCompactionLagMs, DeleteRetentionMs: c.DeleteRetentionMs, SegmentBytes: int64(c.SegmentSize()),
	}
	if c.MaxCompactionLagMs != math.MaxInt64 {
		v := c.MaxCompactionLagMs
		j.MaxCompactionLagMs = &v
	}
	return j
}

// fromReport copies the report's range, ratio, verdict and totals.
func (out *CompactionJSON) fromReport(r *compaction.Report, b *compaction.RecordBound) {
	out.Report = compactjson.FromReport(r, b)
	out.FirstDirtyFrom = "the log start offset: no cleaner-offset-checkpoint entry"
	switch {
	case r.CheckpointReset:
		out.FirstDirtyFrom = fmt.Sprintf("the log start offset: the cleaner-offset-checkpoint's %d is outside the log", r.Checkpoint)
	case r.HasCheckpoint:
		out.FirstDirtyFrom = "the cleaner-offset-checkpoint"
	}
	for _, g := range r.Groups {
		out.SizeBefore += g.SizeBefore
		out.SizeAfter += g.SizeAfter
	}
	out.Summary = r.String()
}

// segments lists the partition's segments with their place in the range
// and what the groups remove from each.
func (out *CompactionJSON) segments(r *compaction.Report, p *partition) {
	type removal struct {
		into    int64
		removed compaction.Removal
	}
	rewritten := map[int64]removal{}
	for _, g := range r.Groups {
		for i, base := range g.Sources {
			x := removal{into: g.BaseOffset}
			if len(g.Removed) == len(g.Sources) {
				x.removed = g.Removed[i]
			}
			rewritten[base] = x
		}
	}
	segs := p.l.Segments()
	for i, sg := range segs {
		s := CompactionSegmentJSON{BaseOffset: sg.BaseOffset(), NextOffset: r.LogEndOffset, Size: sg.Size(), Active: i == len(segs)-1}
		if i+1 < len(segs) {
			s.NextOffset = segs[i+1].BaseOffset()
		}
		switch {
		case s.Active:
			s.State = "active"
		case s.BaseOffset >= r.FirstUncleanableOffset:
			s.State = "uncleanable"
		case s.NextOffset <= r.FirstDirtyOffset:
			s.State = "clean"
		default:
			s.State = "dirty"
		}
		s.SizeAfter = s.Size
		if x, ok := rewritten[s.BaseOffset]; ok {
			into := x.into
			s.Rewritten, s.Into = true, &into
			s.Removed = compactjson.RemovalOf(x.removed)
			s.SizeAfter = s.Size - x.removed.Bytes
		}
		out.Segments = append(out.Segments, s)
	}
}
