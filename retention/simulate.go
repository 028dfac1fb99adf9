package retention

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// SimConfig describes a simulation: a topic config, the broker's
// scheduling, and a steady traffic into one partition, from Start for
// Duration.
type SimConfig struct {
	Config  config.Config
	Broker  config.Broker
	Traffic Traffic
	// Start is when the broker (and its first check's delay) and the
	// traffic start, in ms since the epoch.
	Start int64
	// Duration is how long to simulate, in ms.
	Duration int64
	// Engine runs segkit's log engine on an in-memory filesystem with a
	// fake clock, and the Cleaner, instead of the model (Policy.Plan over
	// a LogState, with the engine's roll rule). The engine holds every
	// byte in memory: it refuses runs whose worst-case disk use passes
	// Limits.MaxEngineBytes (default DefaultMaxEngineBytes, 256 MiB).
	Engine bool
	// Limits bound the run; a zero field means its default.
	Limits SimLimits
}

// SimLimits bound a simulation. A zero field means the Default constant
// of the same name.
type SimLimits struct {
	// MaxEngineBytes bounds the worst-case disk use of an engine run.
	MaxEngineBytes int64
	// MaxBatches bounds the batches of a run (model or engine).
	MaxBatches int64
	// MaxEngineBatches bounds the batches of an engine run.
	MaxEngineBatches int64
}

// Defaults of SimLimits.
const (
	DefaultMaxEngineBytes   = 256 << 20
	DefaultMaxBatches       = 50_000_000
	DefaultMaxEngineBatches = 500_000
)

// orDefault returns v, or def when v is 0.
func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// ErrSimTooLarge is returned for a simulation past the limits above.
var ErrSimTooLarge = errors.New("retention: simulation too large")

// EventKind names what happened in a simulation.
type EventKind string

// Kinds of events.
const (
	// EventRoll: a new active segment (BaseOffset); Size is the closed
	// segment's size.
	EventRoll EventKind = "roll"
	// EventDelete: a check deleted segment BaseOffset (renamed to
	// .deleted; unreadable from now on).
	EventDelete EventKind = "delete"
	// EventRemove: the segment's .deleted files were removed.
	EventRemove EventKind = "remove"
)

// Event is one thing that happened in a simulation.
type Event struct {
	At         int64
	Kind       EventKind
	BaseOffset int64
	Size       int64
	Reason     Reason // EventDelete
	Detail     string
}

// Timeline is what a simulation saw.
type Timeline struct {
	Config SimConfig
	Policy Policy
	// Engine is "model" or "engine".
	Engine string
	Events []Event
	// Batches and Records appended; Checks run.
	Batches, Records int64
	Checks           int
	// PeakLogBytes is the most bytes the partition's segments held;
	// PeakDiskBytes the most .log bytes on disk, .deleted files included.
	PeakLogBytes, PeakDiskBytes int64
	// EndLogBytes and EndDiskBytes are the same at the end.
	EndLogBytes, EndDiskBytes int64
	// MaxReadableMs is the longest a record was readable: the time from
	// a deleted segment's first append to its deletion. MaxOnDiskMs is the
	// same to the removal of its files.
	MaxReadableMs, MaxOnDiskMs int64
	// End is the model's (or the engine's) state at the end.
	End LogState
}

// pendingSeg is a deleted segment whose files are still on disk.
type pendingSeg struct {
	base, size, due, first int64
}

// sim holds what both drivers share.
type sim struct {
	cfg     SimConfig
	p       Policy
	tl      Timeline
	bb      int64   // batch bytes
	dt      float64 // ms between batches
	first   map[int64]int64
	pending []pendingSeg
}

// Simulate runs the traffic of c for c.Duration and returns the timeline
// of rolls, deletions and removals, with the disk use it saw. Records are
// stamped when appended; segment.jitter.ms is taken as 0. The model (the
// default) scales to any config; c.Engine runs the real engine instead,
// which tests check gives the same timeline.
func Simulate(c SimConfig) (Timeline, error) {
	p := PolicyFrom(c.Config, c.Broker)
	if err := p.Validate(); err != nil {
		return Timeline{}, err
	}
	bb, err := c.Traffic.BatchBytes()
	if err != nil {
		return Timeline{}, err
	}
	if c.Duration < 0 {
		return Timeline{}, fmt.Errorf("%w: negative duration", ErrInvalidTraffic)
	}
	s := &sim{cfg: c, p: p, bb: int64(bb), dt: c.Traffic.batchIntervalMs(), first: map[int64]int64{}}
	s.tl = Timeline{Config: c, Policy: p, Engine: "model"}
	maxBatches := orDefault(c.Limits.MaxBatches, DefaultMaxBatches)
	maxEngineBatches := orDefault(c.Limits.MaxEngineBatches, DefaultMaxEngineBatches)
	maxEngineBytes := orDefault(c.Limits.MaxEngineBytes, DefaultMaxEngineBytes)
	if !math.IsInf(s.dt, 1) {
		if n := float64(c.Duration) / s.dt; n > float64(maxBatches) || (c.Engine && n > float64(maxEngineBatches)) {
			return Timeline{}, fmt.Errorf("%w: %.0f batches (put more records in each batch, or simulate less time)", ErrSimTooLarge, n)
		}
	}
	if c.Engine {
		s.tl.Engine = "engine"
		w, err := WorstCase(p, c.Traffic)
		if err != nil {
			return Timeline{}, err
		}
		if w.DiskBytes < 0 || w.DiskBytes > maxEngineBytes {
			return Timeline{}, fmt.Errorf("%w: the engine would hold up to %d bytes in memory (limit %d); use the model", ErrSimTooLarge, w.DiskBytes, maxEngineBytes)
		}
		err = s.runEngine()
		return s.tl, err
	}
	s.runModel()
	return s.tl, nil
}

// appendTime is when batch i is appended, or Never.
func (s *sim) appendTime(i int64) int64 {
	if math.IsInf(s.dt, 1) {
		return Never
	}
	return satAdd(s.cfg.Start, int64(math.Floor(float64(i)*s.dt)))
}

func (s *sim) end() int64 { return satAdd(s.cfg.Start, s.cfg.Duration) }

// rollWhy says why a segment of size size rolls for a batch at ts.
func (s *sim) rollWhy(size int64) string {
	if size > int64(s.cfg.Config.SegmentBytes)-s.bb {
		return fmt.Sprintf("segment.bytes %d: the next %d-byte batch would not fit", s.cfg.Config.SegmentBytes, s.bb)
	}
	return fmt.Sprintf("segment.ms %d: the next batch is more than that after the segment's first", s.cfg.Config.SegmentMs)
}

// deleted records a check's deletions.
func (s *sim) deleted(t int64, pl Plan) {
	if pl.RollFirst {
		last := pl.Deletions[len(pl.Deletions)-1]
		s.tl.Events = append(s.tl.Events, Event{At: t, Kind: EventRoll, BaseOffset: pl.LogEndOffset, Size: last.Size,
			Detail: "retention: every segment qualified, so the log rolls first"})
	}
	for _, d := range pl.Deletions {
		f := s.first[d.BaseOffset]
		s.tl.Events = append(s.tl.Events, Event{At: t, Kind: EventDelete, BaseOffset: d.BaseOffset, Size: d.Size, Reason: d.Reason, Detail: d.Explanation})
		s.tl.MaxReadableMs = max(s.tl.MaxReadableMs, t-f)
		s.pending = append(s.pending, pendingSeg{base: d.BaseOffset, size: d.Size, due: satAdd(t, s.p.FileDeleteDelayMs), first: f})
	}
}

// removed records the removal of a pending segment's files.
func (s *sim) removed(t int64, ps pendingSeg) {
	s.tl.Events = append(s.tl.Events, Event{At: t, Kind: EventRemove, BaseOffset: ps.base, Size: ps.size,
		Detail: fmt.Sprintf("file.delete.delay.ms %d passed", s.p.FileDeleteDelayMs)})
	s.tl.MaxOnDiskMs = max(s.tl.MaxOnDiskMs, t-ps.first)
}

func (s *sim) measure(logBytes int64) {
	disk := logBytes
	for _, ps := range s.pending {
		disk += ps.size
	}
	s.tl.PeakLogBytes = max(s.tl.PeakLogBytes, logBytes)
	s.tl.PeakDiskBytes = max(s.tl.PeakDiskBytes, disk)
	s.tl.EndLogBytes, s.tl.EndDiskBytes = logBytes, disk
}

func (s *sim) nextDue() int64 {
	t := Never
	for _, ps := range s.pending {
		t = min(t, ps.due)
	}
	return t
}

// removeDue removes the pending segments due at t.
func (s *sim) removeDue(t int64) {
	keep := s.pending[:0]
	for _, ps := range s.pending {
		if ps.due <= t {
			s.removed(t, ps)
		} else {
			keep = append(keep, ps)
		}
	}
	s.pending = keep
}

// runModel drives the pure model: Plan and After at each check, and
// segment.ShouldRoll's size and time rules at each append.
func (s *sim) runModel() {
	c := s.cfg
	st := LogState{Segments: []SegmentInfo{{LargestRecordTimestamp: -1, FirstBatchTimestamp: -1, LastModified: c.Start}}}
	sched := s.p.NewSchedule(c.Start)
	next := sched.First
	n := int64(c.Traffic.batchRecords())
	for i := int64(0); ; {
		ta, tr := s.appendTime(i), s.nextDue()
		t := min(ta, next, tr)
		if t > s.end() || t == Never {
			break
		}
		switch {
		case next <= t:
			pl, err := s.p.plan(st, t)
			if err != nil {
				panic(err) // the model's states are valid by construction
			}
			s.tl.Checks++
			s.deleted(t, pl)
			st = st.After(pl)
			s.removeDue(t)
			next = sched.NextAtOrAfter(satAdd(t, 1))
		case tr <= t:
			s.removeDue(t)
		default:
			a := &st.Segments[len(st.Segments)-1]
			if a.Size > int64(c.Config.SegmentBytes)-s.bb || (a.Size > 0 && a.FirstBatchTimestamp >= 0 && t-a.FirstBatchTimestamp > c.Config.SegmentMs) {
				if a.Size > 0 {
					s.tl.Events = append(s.tl.Events, Event{At: t, Kind: EventRoll, BaseOffset: st.LogEndOffset, Size: a.Size, Detail: s.rollWhy(a.Size)})
					st.Segments = append(st.Segments, SegmentInfo{BaseOffset: st.LogEndOffset, LargestRecordTimestamp: -1, FirstBatchTimestamp: -1})
					a = &st.Segments[len(st.Segments)-1]
				}
			}
			if a.Size == 0 {
				a.FirstBatchTimestamp = t
				s.first[a.BaseOffset] = t
			}
			a.Size += s.bb
			a.LargestRecordTimestamp = max(a.LargestRecordTimestamp, t)
			a.LastModified = t
			st.LogEndOffset += n
			st.HighWatermark = st.LogEndOffset
			s.tl.Batches++
			s.tl.Records += n
			i++
		}
		s.measure(st.Size())
	}
	s.tl.End = st
}

// simClock is the engine run's fake clock.
type simClock struct{ ms int64 }

func (c *simClock) Now() time.Time { return time.UnixMilli(c.ms) }

// runEngine drives a real log on vfs.Mem with the Cleaner.
func (s *sim) runEngine() error {
	c := s.cfg
	clk := &simClock{ms: c.Start}
	mem := vfs.MemOptions{Clock: clk.Now}.New()
	cfg := c.Config
	cfg.SegmentJitterMs = 0
	cfg.MessageTimestampAfterMaxMs = math.MaxInt64
	cfg.MessageTimestampBeforeMaxMs = math.MaxInt64
	// Size the preallocated indexes to what a segment can need (an entry
	// at most per index.interval.bytes, or per batch), instead of
	// segment.index.bytes (10 MiB each by default), which would make
	// every roll allocate 20 MiB of memory. The model ignores rolls for a
	// full index; a config whose indexes fill before segment.bytes rolls
	// earlier on a broker.
	need := 24 * (int64(cfg.SegmentBytes)/max(min(s.bb, int64(cfg.IndexIntervalBytes)), 1) + 2)
	if int64(cfg.SegmentIndexBytes) > need {
		cfg.SegmentIndexBytes = int32(need)
	}
	const dir = "sim/topic-0"
	l, err := kafkalog.Open(mem, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		return err
	}
	defer l.Close()
	cl := NewCleaner(func() []*kafkalog.Log { return []*kafkalog.Log{l} }, c.Broker, clk)
	var w record.Builder
	var buf []byte
	for i := int64(0); ; {
		ta, tn := s.appendTime(i), cl.NextRun().UnixMilli()
		t := min(ta, tn)
		if t > s.end() || t == Never {
			break
		}
		clk.ms = t
		if tn <= t {
			checks := cl.Checks()
			res, err := cl.RunDue(time.UnixMilli(t))
			if err != nil {
				return err
			}
			s.tl.Checks += cl.Checks() - checks
			for _, r := range res {
				s.deleted(t, r.Plan)
			}
			keep := s.pending[:0]
			for _, ps := range s.pending {
				if _, err := mem.Stat(segment.Path(dir, ps.base, segment.LogSuffix+segment.DeletedSuffix)); errors.Is(err, fs.ErrNotExist) {
					s.removed(t, ps)
				} else {
					keep = append(keep, ps)
				}
			}
			s.pending = keep
		} else {
			buf, err = c.Traffic.Batch(&w, buf[:0], t)
			if err != nil {
				return err
			}
			before := l.ActiveSegment().Size()
			res, err := l.Append(buf, 0)
			if err != nil {
				return err
			}
			active := l.ActiveSegment()
			if res.Rolled && before > 0 {
				s.tl.Events = append(s.tl.Events, Event{At: t, Kind: EventRoll, BaseOffset: active.BaseOffset(), Size: before, Detail: s.rollWhy(before)})
			}
			if _, ok := s.first[active.BaseOffset()]; !ok || active.Size() == int64(res.Bytes) {
				s.first[active.BaseOffset()] = t
			}
			s.tl.Batches++
			s.tl.Records += int64(c.Traffic.batchRecords())
			i++
		}
		var size int64
		for _, sg := range l.Segments() {
			size += sg.Size()
		}
		s.measure(size)
	}
	st, err := StateOf(l)
	s.tl.End = st
	return err
}

// SortEvents orders events by time, then kind (rolls, deletions,
// removals), then base offset: the order both drivers are compared in.
func SortEvents(ev []Event) {
	rank := map[EventKind]int{EventRoll: 0, EventDelete: 1, EventRemove: 2}
	slices.SortStableFunc(ev, func(a, b Event) int {
		switch {
		case a.At != b.At:
			return cmpInt(a.At, b.At)
		case a.Kind != b.Kind:
			return rank[a.Kind] - rank[b.Kind]
		}
		return cmpInt(a.BaseOffset, b.BaseOffset)
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
