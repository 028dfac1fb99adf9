package retention

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// Cleaner schedules retention as a broker's LogManager does: the check
// ("kafka-log-retention", cleanupLogs) runs first
// log.initial.task.delay.ms after the Cleaner is made, then every
// log.retention.check.interval.ms at a fixed rate, over every log; and the
// .deleted files of each deleted segment are removed once its
// file.delete.delay.ms has passed (Kafka schedules one "delete-file" task
// per deletion).
//
// A Cleaner starts no goroutine and never sleeps: the caller asks NextRun
// when it is next needed and calls RunDue then, with the time from the
// same clock the logs use. Run is such a loop, for programs that want one;
// tests drive RunDue with a fake clock.
//
// Kafka runs the check on a log only when the log is not compacted; a
// compacted log with cleanup.policy=compact,delete gets the same rules from
// the log cleaner's thread, every log.cleaner.backoff.ms. The Cleaner stands
// in for both, on the retention schedule; for a compact-only log only the
// log start offset rule applies (see Plan).
//
// The methods of a Cleaner are safe for concurrent use, but a check must
// not run concurrently with appends to the logs it deletes from (see
// Apply).
type Cleaner struct {
	logs   func() []*kafkalog.Log
	broker config.Broker
	clock  segment.Clock

	mu      sync.Mutex
	holds   func(*kafkalog.Log) ([]timeline.Hold, error)
	sched   Schedule
	next    int64                     // time of the next check (ms)
	pending map[*kafkalog.Log][]int64 // due times of .deleted files
	checks  int
}

// Result is what one check did to one log.
type Result struct {
	Log  *kafkalog.Log
	Plan Plan
	// Err is the error planning or applying failed with, if any.
	Err error
}

// NewCleaner returns a Cleaner over the logs that logs returns (called at
// every check, so that logs may come and go), with the broker's scheduling
// settings, timed by clock (nil: the wall clock). Its first check is
// broker.InitialTaskDelayMs after clock's current time.
func NewCleaner(logs func() []*kafkalog.Log, broker config.Broker, clock segment.Clock) *Cleaner {
	if clock == nil {
		clock = segment.SystemClock{}
	}
	now := clock.Now().UnixMilli()
	sched := Schedule{First: satAdd(now, max(broker.InitialTaskDelayMs, 0)), Interval: max(broker.RetentionCheckIntervalMs, 1)}
	return &Cleaner{
		logs:    logs,
		broker:  broker,
		clock:   clock,
		sched:   sched,
		next:    sched.First,
		pending: map[*kafkalog.Log][]int64{},
	}
}

// SetHolds makes every later check plan each log with the savepoints
// holds returns for it, besides those StateOf reads from a log opened
// with its timeline: no check deletes a segment they pin, nor any later
// one. An error from holds stops that log's check before it deletes
// anything (a hold that cannot be read is not taken for no hold).
// HoldsFromTimeline reads them from each partition's timeline.
func (c *Cleaner) SetHolds(holds func(*kafkalog.Log) ([]timeline.Hold, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds = holds
}

// HoldsFromTimeline returns a function for Cleaner.SetHolds that reads
// the holds in force from the timeline of each log's directory on fsys,
// opened read-only at every check (so a savepoint taken or released
// between checks counts at the next one). A partition without a timeline
// has no holds.
func HoldsFromTimeline(fsys vfs.FS) func(*kafkalog.Log) ([]timeline.Hold, error) {
	return func(l *kafkalog.Log) ([]timeline.Hold, error) {
		tl, err := timeline.Open(fsys, l.Dir(), timeline.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		return tl.Holds()
	}
}

// Schedule returns the phase of the Cleaner's checks, for ReadableUntil.
func (c *Cleaner) Schedule() Schedule {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sched
}

// Checks returns how many checks have run.
func (c *Cleaner) Checks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checks
}

// NextRun returns when RunDue next has work: the next check, or the
// earliest time a deleted segment's files are due for removal.
func (c *Cleaner) NextRun() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.next
	for _, dues := range c.pending {
		for _, d := range dues {
			t = min(t, d)
		}
	}
	return time.UnixMilli(t)
}

// RunDue does what is due at now: the check, if its time has come (checks
// missed because RunDue was not called in time collapse into this one, as
// a late fixed-rate task's runs would find nothing more to do), and the
// removal of .deleted files whose delay has passed. It returns what the
// check did to each log (nil when no check ran) and the errors joined.
func (c *Cleaner) RunDue(now time.Time) ([]Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	nowMs := now.UnixMilli()
	var res []Result
	var errs []error
	if nowMs >= c.next {
		res, errs = c.checkLocked(nowMs)
		c.next = c.sched.NextAtOrAfter(satAdd(nowMs, 1))
	}
	for l, dues := range c.pending {
		keep := dues[:0]
		due := false
		for _, d := range dues {
			if d <= nowMs {
				due = true
			} else {
				keep = append(keep, d)
			}
		}
		if !due {
			continue
		}
		if _, err := l.DeletePendingSegments(); err != nil {
			errs = append(errs, fmt.Errorf("retention: %s: remove .deleted files: %w", l.Dir(), err))
			c.pending[l] = append(keep, satAdd(nowMs, c.sched.Interval)) // retry later
			continue
		}
		if len(keep) == 0 {
			delete(c.pending, l)
		} else {
			c.pending[l] = keep
		}
	}
	return res, errors.Join(errs...)
}

// Check runs a check at now out of schedule (LogManager.cleanupLogs, as
// tests call it); the schedule is unchanged.
func (c *Cleaner) Check(now time.Time) ([]Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res, errs := c.checkLocked(now.UnixMilli())
	return res, errors.Join(errs...)
}

func (c *Cleaner) checkLocked(now int64) ([]Result, []error) {
	c.checks++
	var res []Result
	var errs []error
	for _, l := range c.logs() {
		r := Result{Log: l}
		r.Plan, r.Err = c.checkLog(l, now)
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("retention: %s: %w", l.Dir(), r.Err))
		}
		res = append(res, r)
	}
	return res, errs
}

func (c *Cleaner) checkLog(l *kafkalog.Log, now int64) (Plan, error) {
	st, err := StateOf(l)
	if err != nil {
		return Plan{}, err
	}
	if c.holds != nil {
		more, err := c.holds(l)
		if err != nil {
			return Plan{}, fmt.Errorf("read the savepoints, so nothing was deleted: %w", err)
		}
		st.Holds = MergeHolds(st.Holds, more)
	}
	p := PolicyFrom(l.Config(), c.broker)
	plan, err := p.Plan(st, now)
	if err != nil {
		return plan, err
	}
	if len(plan.Deletions) > 0 {
		// A log opened with its timeline (kafkalog Options.Timeline)
		// gets its deletions recorded, as "segviz retention --apply"
		// records them.
		if tl := l.Timeline(); tl != nil {
			if _, err := ApplyRecorded(l, tl, p, plan, nil); err != nil {
				return plan, err
			}
		} else if err := Apply(l, plan); err != nil {
			return plan, err
		}
		c.pending[l] = append(c.pending[l], satAdd(c.clock.Now().UnixMilli(), l.Config().FileDeleteDelayMs))
	}
	// Files whose delay passed (or left by an earlier failure) go too.
	if _, err := l.DeletePendingSegments(); err != nil {
		return plan, err
	}
	return plan, nil
}

// Run calls RunDue whenever NextRun comes, until ctx is done, passing each
// outcome to report (which may be nil). It sleeps on real timers, for the
// duration NextRun is ahead of the Cleaner's clock. It returns ctx's error.
func (c *Cleaner) Run(ctx context.Context, report func([]Result, error)) error {
	for {
		if d := c.NextRun().Sub(c.clock.Now()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		res, err := c.RunDue(c.clock.Now())
		if report != nil {
			report(res, err)
		}
	}
}
