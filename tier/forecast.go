package tier

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
)

// ForecastParams are the inputs of ReadableUntil: a tiered partition's
// state at Now and the schedules of the tasks that change it.
type ForecastParams struct {
	// Now is the time of the forecast (ms since the epoch).
	Now int64
	// Local are the local segments, oldest first; the last is the active
	// segment.
	Local []LocalSegment
	// LocalLogStartOffset ("earliest-local"), LogEndOffset,
	// HighWatermark and LastStableOffset of the local log.
	LocalLogStartOffset, LogEndOffset, HighWatermark, LastStableOffset int64
	// Remote is the partition's remote log metadata.
	Remote RemoteLog
	// Config is the topic's: remote.storage.enable,
	// remote.log.copy.disable, retention.ms/bytes and
	// local.retention.ms/bytes.
	Config config.Config
	// RetentionChecks is the schedule of the log manager's retention
	// checks (log.retention.check.interval.ms), which delete local
	// segments.
	RetentionChecks retention.Schedule
	// Tasks is the schedule of the remote log manager's copy and
	// expiration tasks (remote.log.manager.task.interval.ms), which copy
	// segments and delete remote ones.
	Tasks retention.Schedule
}

// SegmentForecast is how long one segment stays on local disk and how
// long its records stay readable.
type SegmentForecast struct {
	// BaseOffset and NextOffset delimit the segment's offsets:
	// [BaseOffset, NextOffset).
	BaseOffset, NextOffset int64
	Size                   int64
	// MaxTimestamp is what retention.ms and local.retention.ms compare.
	MaxTimestamp int64
	// Local says the segment is on local disk now, Remote that a
	// finished copy of it is in remote storage now; Active that it is the
	// local log's last segment, which takes appends.
	Local, Remote, Active bool
	// CopiedBy is when a copy task copies it: Never when none will (the
	// active segment, a successor above the last stable offset, copies
	// disabled); Now when it is already copied.
	CopiedBy int64
	// LocalUntil is the retention check that deletes the local copy
	// (its files then wait file.delete.delay.ms as .deleted); Never when
	// no check will; 0 when the segment is not on local disk.
	LocalUntil int64
	// LocalReason is the rule behind LocalUntil: local.retention.ms,
	// local.retention.bytes, "log start offset" (total retention moved
	// the log start offset past it), or with remote.log.copy.disable
	// retention.ms/retention.bytes.
	LocalReason string
	// ReadableUntil is when the segment's records stop being readable:
	// the expiration task that deletes its remote copy (the log start
	// offset then moves past it), or for a segment never copied the
	// check that deletes it locally; Never when nothing will.
	ReadableUntil int64
	// Reason is the rule behind ReadableUntil.
	Reason string
	// Explanation says in words how both times were reached.
	Explanation string
}

// Forecast is ReadableUntil's answer.
type Forecast struct {
	Now int64
	// LogStartOffset (earliest), LocalLogStartOffset (earliest-local) and
	// LogEndOffset now.
	LogStartOffset, LocalLogStartOffset, LogEndOffset int64
	// Segments are the remote-only segments, then the local ones, in
	// offset order.
	Segments []SegmentForecast
}

// ForOffset returns the forecast of the segment holding offset, and
// false when the offset is not readable now.
func (f Forecast) ForOffset(offset int64) (SegmentForecast, bool) {
	if offset < f.LogStartOffset || offset >= f.LogEndOffset {
		return SegmentForecast{}, false
	}
	i := sort.Search(len(f.Segments), func(i int) bool { return f.Segments[i].BaseOffset > offset }) - 1
	if i < 0 || offset >= f.Segments[i].NextOffset {
		return SegmentForecast{}, false
	}
	return f.Segments[i], true
}

// ReadableUntil forecasts, for a tiered partition (remote.storage.enable)
// to which nothing more is appended, when each segment leaves local disk
// and when its records stop being readable, applying Kafka's tiered rules
// (PlanCopy, PlanLocal, PlanRemote) at the times their tasks run:
//
//   - a closed segment whose successor starts at or below the last stable
//     offset is copied by the next copy task (CopiedBy);
//   - its local copy goes at the first retention check at which it is
//     copied, the high watermark is past it, every older local segment
//     goes too (deletion is a prefix) and local.retention.ms has passed
//     its newest record (now - ts > limit), local.retention.bytes is
//     breached, or total retention moved the log start offset past it;
//   - its records stay readable, from the remote once the local copy is
//     gone, until the expiration task at which retention.ms has passed
//     (ts <= now - limit) or retention.bytes (remote plus local-only
//     bytes) is breached, again as a prefix.
//
// The size rules are applied to the sizes after the next copy task: with
// no appends sizes only shrink, so a segment the size rules do not delete
// then is kept by them for good. The active segment is never copied or
// deleted while nothing is appended (Never): it must roll first. With an
// unknown phase (Schedule.Unknown) each time is the latest the task can
// run. With remote.log.copy.disable nothing more is copied and local
// retention is retention.ms/bytes without the copy condition (KIP-950).
func ReadableUntil(p ForecastParams) (Forecast, error) {
	if !p.Config.RemoteStorageEnable {
		return Forecast{}, fmt.Errorf("%w: the forecast of a partition whose topic is not tiered is retention.ReadableUntil's", ErrRemoteStorageDisabled)
	}
	if p.Config.Compact() {
		return Forecast{}, fmt.Errorf("%w: cleanup.policy %v", ErrCompactedTopic, p.Config.CleanupPolicy)
	}
	w := forecaster{p: p, copyOff: p.Config.RemoteLogCopyDisable}
	w.rows()
	w.copies()
	w.expiry()
	w.localRetention()
	w.explain()
	return Forecast{
		Now:                 p.Now,
		LogStartOffset:      p.Remote.LogStartOffset(p.LocalLogStartOffset),
		LocalLogStartOffset: p.LocalLogStartOffset,
		LogEndOffset:        p.LogEndOffset,
		Segments:            w.segs,
	}, nil
}

type forecaster struct {
	p       ForecastParams
	copyOff bool
	segs    []SegmentForecast
	local   int   // index in segs of the first local segment
	task0   int64 // the next copy/expiration task
	// why holds, per segment, the clauses of its explanation.
	localWhy, readWhy []string
}

// rows lays out the remote-only segments, then the local ones.
func (w *forecaster) rows() {
	p := w.p
	firstLocal := p.LogEndOffset
	if len(p.Local) > 0 {
		firstLocal = p.Local[0].BaseOffset
	}
	served := p.Remote.Served()
	for _, m := range served {
		if m.StartOffset < firstLocal {
			w.segs = append(w.segs, SegmentForecast{BaseOffset: m.StartOffset, NextOffset: m.EndOffset + 1, Size: m.SegmentSizeInBytes,
				MaxTimestamp: m.MaxTimestampMs, Remote: true, CopiedBy: p.Now})
		}
	}
	w.local = len(w.segs)
	high := p.Remote.HighestCopiedOffset()
	for i, s := range p.Local {
		next := p.LogEndOffset
		if i+1 < len(p.Local) {
			next = p.Local[i+1].BaseOffset
		}
		f := SegmentForecast{BaseOffset: s.BaseOffset, NextOffset: next, Size: s.Size, MaxTimestamp: s.LargestTimestamp,
			Local: true, Active: i == len(p.Local)-1, CopiedBy: retention.Never}
		for _, m := range served {
			if m.StartOffset == s.BaseOffset && m.EndOffset+1 == next {
				f.Remote = true
			}
		}
		if f.Remote || next-1 <= high && !f.Active {
			f.CopiedBy = p.Now
		}
		w.segs = append(w.segs, f)
	}
	w.localWhy = make([]string, len(w.segs))
	w.readWhy = make([]string, len(w.segs))
	w.task0 = p.Tasks.NextAtOrAfter(p.Now)
}

// taskAt is the first task at or after t, given that the task that made
// the segment available runs at avail.
func (w *forecaster) taskAt(t, avail int64) int64 {
	if t <= avail {
		return avail
	}
	return w.p.Tasks.NextAtOrAfter(t)
}

// checkAt is the first retention check at or after t.
func (w *forecaster) checkAt(t int64) int64 {
	return w.p.RetentionChecks.NextAtOrAfter(max(t, w.p.Now))
}

// copies sets CopiedBy: PlanCopy's candidates at the next task.
func (w *forecaster) copies() {
	p := w.p
	bases := make([]int64, len(p.Local))
	for i, s := range p.Local {
		bases[i] = s.BaseOffset
	}
	var cands []Candidate
	if !w.copyOff {
		cands = PlanCopy(bases, p.Remote.HighestCopiedOffset(), p.Remote.LogStartOffset(p.LocalLogStartOffset), p.LastStableOffset)
	}
	for i := w.local; i < len(w.segs); i++ {
		s := &w.segs[i]
		if s.CopiedBy != retention.Never {
			continue
		}
		for _, c := range cands {
			if c.BaseOffset == s.BaseOffset {
				s.CopiedBy = w.task0
			}
		}
		switch {
		case s.CopiedBy != retention.Never:
			w.readWhy[i] = "copied by the copy task at " + retention.FormatTime(w.task0)
		case s.Active:
			w.readWhy[i] = "the active segment: it is copied only after it rolls, so while nothing is appended it stays local and readable"
		case w.copyOff:
			w.readWhy[i] = "not copied: remote.log.copy.disable is true"
		case s.NextOffset > p.LastStableOffset:
			w.readWhy[i] = fmt.Sprintf("not copied: its successor starts at %d, above the last stable offset %d (an open transaction or the high watermark holds it back)", s.NextOffset, p.LastStableOffset)
		default:
			w.readWhy[i] = fmt.Sprintf("not copied: it is below the log start offset %d", p.Remote.LogStartOffset(p.LocalLogStartOffset))
		}
	}
}

// expiry sets ReadableUntil for every segment in remote storage by the
// next task: RLMExpirationTask's rules applied at the tasks that follow.
func (w *forecaster) expiry() {
	p := w.p
	var remote []SegmentMetadata
	var idx []int
	var onlyLocal int64
	for i := range w.segs {
		s := &w.segs[i]
		s.ReadableUntil = retention.Never
		if s.CopiedBy == retention.Never {
			if s.Local {
				onlyLocal += s.Size
			}
			continue
		}
		remote = append(remote, SegmentMetadata{StartOffset: s.BaseOffset, EndOffset: s.NextOffset - 1, MaxTimestampMs: s.MaxTimestamp, SegmentSizeInBytes: s.Size})
		idx = append(idx, i)
	}
	nSize, _ := PlanRemote(remote, RemoteParams{NowMs: p.Now, OnlyLocalSize: onlyLocal, RetentionMs: -1, RetentionBytes: p.Config.RetentionBytes})
	prev := int64(0)
	for k, i := range idx {
		s := &w.segs[i]
		avail := max(s.CopiedBy, w.task0)
		t, why := retention.Never, ""
		if p.Config.RetentionMs > -1 {
			t = w.taskAt(satAdd(s.MaxTimestamp, p.Config.RetentionMs), avail)
			why = fmt.Sprintf("retention.ms %d after its newest record (%s)", p.Config.RetentionMs, retention.FormatTime(s.MaxTimestamp))
			s.Reason = ReasonRetentionMs
		}
		if k < nSize && avail < t {
			t, s.Reason = avail, ReasonRetentionBytes
			why = fmt.Sprintf("retention.bytes %d is breached by the remote plus local-only bytes", p.Config.RetentionBytes)
		}
		if t < prev {
			why += fmt.Sprintf(", once the older segments go (deletion is a prefix) at %s", retention.FormatTime(prev))
			t = prev
		}
		if t == retention.Never {
			s.Reason = ""
			why = "no total retention rule deletes it (retention.ms and retention.bytes are -1, or an older segment is kept for good)"
		}
		s.ReadableUntil, prev = t, t
		w.readWhy[i] = join(w.readWhy[i], "readable until the expiration task at "+retention.FormatTime(t)+": "+why)
	}
}

// localRetention sets LocalUntil for the local segments: PlanLocal's rules
// at the retention checks that follow.
func (w *forecaster) localRetention() {
	p := w.p
	ms, bytes := p.Config.EffectiveLocalRetentionMs(), p.Config.EffectiveLocalRetentionBytes()
	msName, bytesName := ReasonLocalMs, ReasonLocalBytes
	if w.copyOff {
		ms, bytes, msName, bytesName = p.Config.RetentionMs, p.Config.RetentionBytes, ReasonRetentionMs, ReasonRetentionBytes
	}
	// The size rule over the local sizes once the next task copied.
	afterCopy := p.Remote.HighestCopiedOffset()
	for _, s := range w.segs[w.local:] {
		if s.CopiedBy != retention.Never {
			afterCopy = max(afterCopy, s.NextOffset-1)
		}
	}
	nSize, _ := PlanLocal(p.Local, LocalParams{NowMs: p.Now, LogEndOffset: p.LogEndOffset, HighWatermark: p.HighWatermark,
		HighestCopiedOffset: afterCopy, LogStartOffset: p.Remote.LogStartOffset(p.LocalLogStartOffset), RetentionMs: -1, RetentionBytes: bytes})
	if w.copyOff {
		nSize, _ = PlanLocal(p.Local, LocalParams{NowMs: p.Now, LogEndOffset: p.LogEndOffset, HighWatermark: p.HighWatermark,
			HighestCopiedOffset: p.LogEndOffset, LogStartOffset: p.LocalLogStartOffset, RetentionMs: -1, RetentionBytes: bytes})
	}
	prev := int64(0)
	for i := w.local; i < len(w.segs); i++ {
		s := &w.segs[i]
		k := i - w.local
		t, why := retention.Never, ""
		eligible := s.CopiedBy
		if w.copyOff {
			eligible = p.Now
		}
		switch {
		case s.Active:
			why = "the active segment is never deleted locally before it rolls"
		case p.HighWatermark < s.NextOffset:
			why = fmt.Sprintf("the high watermark %d has not reached its end %d", p.HighWatermark, s.NextOffset)
		case eligible == retention.Never && s.ReadableUntil == retention.Never:
			why = "a local segment is deleted only once it is copied"
		default:
			if ms > -1 && eligible != retention.Never {
				t = w.checkAt(max(eligible, satAdd(s.MaxTimestamp, ms+1)))
				s.LocalReason = msName
				why = fmt.Sprintf("%s %d after its newest record (%s)", msName, ms, retention.FormatTime(s.MaxTimestamp))
				if eligible > p.Now && satAdd(s.MaxTimestamp, ms+1) <= eligible {
					why += ", once it is copied"
				}
			}
			if k < nSize && eligible != retention.Never {
				if c := w.checkAt(eligible); c < t {
					t, s.LocalReason = c, bytesName
					why = fmt.Sprintf("%s %d is breached", bytesName, bytes)
				}
			}
			if s.ReadableUntil != retention.Never {
				// On a tie the log start offset is the reason: the
				// records went first.
				if c := w.checkAt(s.ReadableUntil); c <= t {
					t, s.LocalReason = c, ReasonLogStartOffset
					why = "total retention moves the log start offset past it"
				}
			}
			if t == retention.Never {
				why = "no local retention rule deletes it"
			}
		}
		if t < prev {
			why += fmt.Sprintf(", once the older local segments go (deletion is a prefix) at %s", retention.FormatTime(prev))
			t = prev
		}
		if t == retention.Never {
			s.LocalReason = ""
		}
		s.LocalUntil, prev = t, t
		w.localWhy[i] = "on local disk until the retention check at " + retention.FormatTime(t) + ": " + why
		if s.CopiedBy == retention.Never && t != retention.Never && s.ReadableUntil == retention.Never {
			// Never copied: deleting it locally ends its records.
			s.ReadableUntil, s.Reason = t, s.LocalReason
			w.readWhy[i] = join(w.readWhy[i], "readable until it is deleted locally, at "+retention.FormatTime(t))
		}
	}
}

// explain joins the clauses.
func (w *forecaster) explain() {
	for i := range w.segs {
		s := &w.segs[i]
		if !s.Local {
			w.localWhy[i] = "not on local disk: only in remote storage"
		}
		s.Explanation = join(w.localWhy[i], w.readWhy[i])
	}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return strings.TrimSuffix(a, ".") + "; " + b
}

// satAdd is a + b clamped to Never.
func satAdd(a, b int64) int64 {
	if b > 0 && a > retention.Never-b {
		return retention.Never
	}
	return a + b
}

// Forecast is ReadableUntil for t's partition at the clock's now, with
// retention checks and remote log manager tasks on the given schedules.
func (t *Tier) Forecast(checks, tasks retention.Schedule) (Forecast, error) {
	segs, _, err := t.localSegments()
	if err != nil {
		return Forecast{}, err
	}
	t.mu.RLock()
	remote := slices.Clone(RemoteLog(t.meta))
	t.mu.RUnlock()
	return ReadableUntil(ForecastParams{
		Now: t.nowMs(), Local: segs,
		LocalLogStartOffset: t.l.LogStartOffset(), LogEndOffset: t.l.LogEndOffset(),
		HighWatermark: t.l.HighWatermark(), LastStableOffset: t.l.LastStableOffset(),
		Remote: remote, Config: t.l.Config(), RetentionChecks: checks, Tasks: tasks,
	})
}
