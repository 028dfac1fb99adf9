package retention

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/kafkalog/config"
)

// Policy holds the settings retention follows, with Kafka's names. Durations
// are milliseconds and sizes bytes, as in Kafka; a negative RetentionMs or
// RetentionBytes disables that rule.
type Policy struct {
	// RetentionMs is retention.ms: a segment goes once its newest record
	// is older than this. Default 604800000 (7 days); negative: disabled.
	RetentionMs int64
	// RetentionBytes is retention.bytes: the oldest segments go while the
	// log stays at least this large without them. Default -1 (disabled).
	RetentionBytes int64
	// FileDeleteDelayMs is file.delete.delay.ms: how long a deleted
	// segment's files stay on disk as .deleted. Default 60000.
	FileDeleteDelayMs int64
	// CleanupPolicy is cleanup.policy. Without "delete" only the log
	// start offset rule runs (Kafka checks config.delete). Default
	// [delete].
	CleanupPolicy []string
	// RetentionCheckIntervalMs is the broker's
	// log.retention.check.interval.ms: how often the check runs.
	// Default 300000 (5 minutes).
	RetentionCheckIntervalMs int64
	// InitialTaskDelayMs is the broker's log.initial.task.delay.ms: the
	// delay before the first check. Default 30000.
	InitialTaskDelayMs int64
	// SegmentMs is segment.ms: the active segment rolls once a new record
	// is more than this much newer than its first batch. It bounds how
	// long a segment takes appends, so ReadableUntil and WorstCase use it;
	// Plan does not. Default 604800000 (7 days).
	SegmentMs int64
	// SegmentBytes is segment.bytes: the active segment rolls before it
	// would pass this size. WorstCase uses it. Default 1073741824 (1 GiB).
	SegmentBytes int64
}

// DefaultPolicy returns Kafka's defaults.
func DefaultPolicy() Policy { return PolicyFrom(config.Default(), config.DefaultBroker()) }

// PolicyFrom takes the retention settings of a topic's config and of the
// broker's scheduling settings.
//
// Remote (tiered) storage is not modelled: with remote.storage.enable Kafka
// applies local.retention.* and deletes only segments already copied to
// remote storage; PolicyFrom uses retention.* either way. SegmentMs is
// segment.ms itself, not Kafka's maxSegmentMs (which a compacted topic
// lowers to max.compaction.lag.ms): the larger value keeps every bound
// ReadableUntil gives a true upper bound.
func PolicyFrom(cfg config.Config, b config.Broker) Policy {
	return Policy{
		RetentionMs:              cfg.RetentionMs,
		RetentionBytes:           cfg.RetentionBytes,
		FileDeleteDelayMs:        cfg.FileDeleteDelayMs,
		CleanupPolicy:            slices.Clone(cfg.CleanupPolicy),
		RetentionCheckIntervalMs: b.RetentionCheckIntervalMs,
		InitialTaskDelayMs:       b.InitialTaskDelayMs,
		SegmentMs:                cfg.SegmentMs,
		SegmentBytes:             int64(cfg.SegmentBytes),
	}
}

// Delete reports whether cleanup.policy includes delete, that is whether
// the size and time rules run.
func (p Policy) Delete() bool { return slices.Contains(p.CleanupPolicy, config.CleanupPolicyDelete) }

// timeRule reports whether the retention.ms rule runs.
func (p Policy) timeRule() bool { return p.Delete() && p.RetentionMs >= 0 }

// sizeRule reports whether the retention.bytes rule runs.
func (p Policy) sizeRule() bool { return p.Delete() && p.RetentionBytes >= 0 }

// ErrInvalidPolicy is returned for a Policy whose scheduling or delay
// settings are out of range.
var ErrInvalidPolicy = errors.New("retention: invalid policy")

// Validate checks the settings that have a lower bound: the check interval
// (at least 1), the initial delay, file.delete.delay.ms and segment.ms and
// segment.bytes (at least 0, or 1).
func (p Policy) Validate() error {
	switch {
	case p.RetentionCheckIntervalMs < 1:
		return fmt.Errorf("%w: log.retention.check.interval.ms %d must be at least 1", ErrInvalidPolicy, p.RetentionCheckIntervalMs)
	case p.InitialTaskDelayMs < 0:
		return fmt.Errorf("%w: log.initial.task.delay.ms %d must be at least 0", ErrInvalidPolicy, p.InitialTaskDelayMs)
	case p.FileDeleteDelayMs < 0:
		return fmt.Errorf("%w: file.delete.delay.ms %d must be at least 0", ErrInvalidPolicy, p.FileDeleteDelayMs)
	case p.SegmentMs < 1:
		return fmt.Errorf("%w: segment.ms %d must be at least 1", ErrInvalidPolicy, p.SegmentMs)
	case p.SegmentBytes < 1:
		return fmt.Errorf("%w: segment.bytes %d must be at least 1", ErrInvalidPolicy, p.SegmentBytes)
	}
	return nil
}

// Schedule is the phase of the retention checks: Kafka's
// "kafka-log-retention" task runs first log.initial.task.delay.ms after the
// broker (its LogManager) starts, then every
// log.retention.check.interval.ms, at a fixed rate.
type Schedule struct {
	// First is when the first check runs (ms since the epoch).
	First int64
	// Interval is the time between checks (ms, at least 1).
	Interval int64
	// Unknown says the phase is not known (First is ignored): all that
	// is known is that a check runs in every Interval.
	Unknown bool
}

// NewSchedule returns the schedule of a broker (or Cleaner) started at
// startMs with the policy's initial delay and interval.
func (p Policy) NewSchedule(startMs int64) Schedule {
	return Schedule{First: satAdd(startMs, p.InitialTaskDelayMs), Interval: max(p.RetentionCheckIntervalMs, 1)}
}

// UnknownSchedule returns a schedule with the policy's interval and an
// unknown phase, for a broker whose start time is not known.
func (p Policy) UnknownSchedule() Schedule {
	return Schedule{Interval: max(p.RetentionCheckIntervalMs, 1), Unknown: true}
}

// NextAtOrAfter returns the time of the first check at or after t, or Never
// if it would overflow. For an unknown phase it returns the latest time that
// check can be at: t + Interval - 1.
func (s Schedule) NextAtOrAfter(t int64) int64 {
	iv := max(s.Interval, 1)
	if s.Unknown {
		return satAdd(t, iv-1)
	}
	if t <= s.First {
		return s.First
	}
	// t > First: First + ceil((t-First)/iv)*iv, computed without overflow.
	d := uint64(t) - uint64(s.First)
	k := (d + uint64(iv) - 1) / uint64(iv)
	if k > uint64(math.MaxInt64)/uint64(iv) {
		return Never
	}
	return satAdd(s.First, int64(k*uint64(iv)))
}

// String describes the schedule in words.
func (s Schedule) String() string {
	if s.Unknown {
		return fmt.Sprintf("checks every %s, phase unknown", finding.Duration(s.Interval))
	}
	return fmt.Sprintf("checks every %s from %s", finding.Duration(s.Interval), FormatTime(s.First))
}

// Never is the time of an event that does not happen: a segment no rule
// will delete, a check past the end of int64 time.
const Never int64 = math.MaxInt64

// satAdd returns a+b, saturated to [MinInt64, MaxInt64].
func satAdd(a, b int64) int64 {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

// olderThan reports whether now - ts > limit, computed exactly (Kafka's
// Java arithmetic would wrap for timestamps near the ends of int64).
// limit must be ≥ 0.
func olderThan(now, ts, limit int64) bool {
	if ts >= now {
		return false
	}
	return uint64(now)-uint64(ts) > uint64(limit)
}
