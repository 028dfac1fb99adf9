package viz

import (
	"fmt"
	"slices"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
)

// RetentionJSON is a retention what-if: what a check at Now deletes, and
// until when each segment (so each of its records) stays readable. The
// numbers are those of `segviz retention --json`, which the e2e tests
// compare.
type RetentionJSON struct {
	Now               int64            `json:"now"`
	Policy            map[string]int64 `json:"policy"`
	Schedule          string           `json:"schedule"`
	LogStartOffset    int64            `json:"logStartOffset"`
	LogEndOffset      int64            `json:"logEndOffset"`
	HighWatermark     int64            `json:"highWatermark"`
	NewLogStartOffset int64            `json:"newLogStartOffset"`
	RollFirst         bool             `json:"rollFirst"`
	BytesFreed        int64            `json:"bytesFreed"`
	Bytes             int64            `json:"bytes"`
	Summary           string           `json:"summary"`
	Deletions         []DeletionJSON   `json:"deletions"`
	Segments          []BoundJSON      `json:"segments"`
	Warnings          []FindingJSON    `json:"warnings"`
	// Charts are the pictures of time: the what-if's first, then, when
	// the what-if changes a setting, the partition's current settings.
	Charts []ChartJSON `json:"charts"`
}

// DeletionJSON is one segment the check at Now deletes.
type DeletionJSON struct {
	BaseOffset       int64  `json:"baseOffset"`
	NextOffset       int64  `json:"nextOffset"`
	Size             int64  `json:"size"`
	Reason           string `json:"reason"`
	LargestTimestamp int64  `json:"largestTimestamp"`
	MtimeFallback    bool   `json:"mtimeFallback"`
	Explanation      string `json:"explanation"`
}

// BoundJSON is how long one segment stays readable. Times are null for
// never.
type BoundJSON struct {
	BaseOffset       int64  `json:"baseOffset"`
	NextOffset       int64  `json:"nextOffset"`
	Size             int64  `json:"size"`
	LargestTimestamp int64  `json:"largestTimestamp"`
	Active           bool   `json:"active"`
	ReadableUntil    *int64 `json:"readableUntil"`
	IfIdle           *int64 `json:"ifIdle"`
	// IfAppendsContinue is the worst case should records keep being
	// appended; it differs from ReadableUntil only for an active segment
	// the check at Now deletes.
	IfAppendsContinue *int64 `json:"ifAppendsContinue"`
	OnDiskUntil       *int64 `json:"onDiskUntil"`
	Reason            string `json:"reason"`
	Explanation       string `json:"explanation"`
	// DeletedNow says the check at Now deletes the segment.
	DeletedNow bool `json:"deletedNow"`
}

// whatIf is the config of partition p with the settings keys replaced by
// the parameters of those names, and the time q["now"] (epoch ms; default
// the session's now): what a what-if view plans with.
func (s *Session) whatIf(p *partition, q Params, keys []string) (config.Config, int64, error) {
	props := p.cfg.Props()
	for _, k := range keys {
		if v, ok := q[k]; ok && v != "" {
			props[k] = v
		}
	}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(props)
	if err != nil {
		return cfg, 0, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	now, err := q.int64("now", s.opt.Now().UnixMilli())
	return cfg, now, err
}

// retentionWhatIf is what the retention what-ifs start from: the
// partition p["dir"], its config with the what-if's retention settings,
// the what-if's now and the partition's state.
func (s *Session) retentionWhatIf(q Params) (*partition, config.Config, int64, retention.LogState, error) {
	p, err := s.partitionParam(q, false)
	if err != nil {
		return nil, config.Config{}, 0, retention.LogState{}, err
	}
	cfg, now, err := s.whatIf(p, q, []string{config.RetentionMs, config.RetentionBytes, config.SegmentMs, config.FileDeleteDelayMs, config.CleanupPolicy})
	if err != nil {
		return nil, config.Config{}, 0, retention.LogState{}, err
	}
	st, _, err := s.state(p)
	return p, cfg, now, st, err
}

// Retention plans a check at p["now"] (epoch ms; default the session's now)
// on partition p["dir"] under its config with retention.ms,
// retention.bytes, segment.ms, file.delete.delay.ms and cleanup.policy
// replaced by the parameters of those names, and forecasts each segment's
// readable-until time, with checks on the schedule of a broker started at
// p["brokerStart"] (unknown phase without it).
func (s *Session) Retention(q Params) (*RetentionJSON, error) {
	p, cfg, now, st, err := s.retentionWhatIf(q)
	if err != nil {
		return nil, err
	}
	pol := retention.PolicyFrom(cfg, config.DefaultBroker())
	sched := pol.UnknownSchedule()
	if q["brokerStart"] != "" {
		start, err := q.int64("brokerStart", 0)
		if err != nil {
			return nil, err
		}
		sched = pol.NewSchedule(start)
	}
	plan, err := pol.Plan(st, now)
	if err != nil {
		return nil, err
	}
	fc, err := retention.ReadableUntil(st, pol, sched, now)
	if err != nil {
		return nil, err
	}
	out := &RetentionJSON{
		Now: now, Schedule: sched.String(),
		Policy: map[string]int64{
			config.RetentionMs: pol.RetentionMs, config.RetentionBytes: pol.RetentionBytes, config.SegmentMs: pol.SegmentMs,
			config.FileDeleteDelayMs: pol.FileDeleteDelayMs, config.LogRetentionCheckIntervalMs: pol.RetentionCheckIntervalMs,
		},
		LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset, HighWatermark: st.HighWatermark,
		NewLogStartOffset: plan.NewLogStartOffset, RollFirst: plan.RollFirst, BytesFreed: plan.Bytes(), Bytes: st.Size(),
		Summary:   plan.String(),
		Deletions: []DeletionJSON{}, Segments: []BoundJSON{}, Warnings: []FindingJSON{},
	}
	deleted := map[int64]bool{}
	for _, d := range plan.Deletions {
		deleted[d.BaseOffset] = true
		out.Deletions = append(out.Deletions, DeletionJSON{BaseOffset: d.BaseOffset, NextOffset: d.NextOffset, Size: d.Size, Reason: string(d.Reason),
			LargestTimestamp: d.LargestTimestamp, MtimeFallback: d.MtimeFallback, Explanation: d.Explanation})
	}
	never := func(v int64) *int64 {
		if v == retention.Never {
			return nil
		}
		return &v
	}
	for _, b := range fc.Segments {
		out.Segments = append(out.Segments, BoundJSON{BaseOffset: b.BaseOffset, NextOffset: b.NextOffset, Size: b.Size, LargestTimestamp: b.LargestTimestamp,
			Active: b.Active, ReadableUntil: never(b.ReadableUntil), IfIdle: never(b.IfIdle), IfAppendsContinue: never(b.IfAppendsContinue), OnDiskUntil: never(b.OnDiskUntil),
			Reason: string(b.Reason), Explanation: b.Explanation, DeletedNow: deleted[b.BaseOffset]})
	}
	for _, w := range plan.Warnings {
		out.Warnings = append(out.Warnings, placeFinding(w))
	}
	out.Charts = []ChartJSON{lifetimeChart("what-if", st, pol, sched, fc, now)}
	if cur := retention.PolicyFrom(p.cfg, config.DefaultBroker()); cur.RetentionMs != pol.RetentionMs || cur.RetentionBytes != pol.RetentionBytes ||
		cur.SegmentMs != pol.SegmentMs || cur.FileDeleteDelayMs != pol.FileDeleteDelayMs || !slices.Equal(cur.CleanupPolicy, pol.CleanupPolicy) {
		csched := sched
		csched.Interval = max(cur.RetentionCheckIntervalMs, 1)
		if cfc, err := retention.ReadableUntil(st, cur, csched, now); err == nil {
			out.Charts = append(out.Charts, lifetimeChart("current settings", st, cur, csched, cfc, now))
		}
	}
	return out, nil
}
