package kafkalog

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"sort"
	"sync"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

// Config is a topic's log configuration, with Kafka's property names and
// defaults; see package kafkalog/config.
type Config = config.Config

// ParseConfig builds a Config from Kafka property names and values
// ("segment.bytes": "1048576", ...), starting from Kafka's defaults, and
// validates it as Kafka 4.x does; config.ParseOptions relaxes it
// (config.ParseOptions{AllowSmallSegments: true}.Parse(props)).
func ParseConfig(props map[string]string) (Config, error) { return config.Parse(props) }

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config { return config.Default() }

// Options are the settings of one opened log that are not topic config.
type Options struct {
	// Clock is the time source; nil means the wall clock.
	Clock segment.Clock
	// ReadOnly opens the partition without ever writing to it: no
	// recovery (corrupt tails are reported, not cut), no marker or
	// checkpoint changes, no index resizing. Appends fail.
	ReadOnly bool
	// Rand draws the segment.jitter.ms of each new segment; nil means a
	// seeded source (jitter is zero unless segment.jitter.ms is set).
	Rand *rand.Rand
	// BrokerEpoch is written into the clean-shutdown marker at Close.
	BrokerEpoch int64
	// ForceRecovery recovers every segment, as after an unclean shutdown
	// with no recovery point: for repair tools, or to check a directory
	// whose clean-shutdown marker is not trusted. The marker itself is
	// handled as usual (removed before the first write, written again at
	// Close if it was there).
	ForceRecovery bool
	// TruncateCorrupt lets a writable Open truncate corruption, as
	// Kafka's LogLoader does: a segment is cut at its first bad entry, and
	// every later segment deleted, even when valid batches follow the
	// damage. That is a repair, for repair tools (repair.Recover, segviz
	// recover) and for tests that compare the engine's recovery with
	// Kafka's. Without it, a writable Open cuts only what is proved torn —
	// bytes in which no valid entry starts, at the end of the last
	// non-empty segment — and otherwise fails with a *CorruptLogError
	// without cutting a byte of any .log. Read-only opens never truncate.
	TruncateCorrupt bool
	// Timeline records the engine's actions on the partition's timeline
	// (package timeline, in <dir>/.segkit/timeline): every roll (noted,
	// made durable by Flush and Close — see timeline.Timeline.Note),
	// every TruncateTo (requested, inflight, completed), and a recovery
	// when the load cut, deleted or swapped anything, or rechecked
	// segments after an unclean shutdown. A writable Open resolves the
	// instants an earlier run left pending (LoadReport.Resolved) and
	// records the rolls whose noted instants a crash lost. A read-only
	// Open opens the timeline read-only (Log.Timeline), for its holds
	// and history. Open fails if the timeline cannot be read.
	Timeline bool
	// BeforeDiscard, if set, is called while Open recovers the log, before
	// it cuts the bytes of a .log from position from to its end: a
	// recovery's cut at the end of the valid prefix, each later segment
	// that cut deletes (from 0), and every segment when the log is below
	// its checkpointed start (deleteSegmentsIfLogStartGreaterThanLogEnd,
	// from 0). The file is as it was; an error stops Open with it before
	// anything is cut. repair.Recover reads there what recovery drops, for
	// its report, without reading the rest of the log again.
	BeforeDiscard func(file string, from int64) error
	// Locked says that the caller holds LockPartition(fsys, dir) for as
	// long as the Log is open, so a writable Open does not lock. Without
	// it a writable Open locks the partition (and Close releases it),
	// failing with a *LockError if a broker or another writer holds its
	// log directory. Read-only opens take no lock.
	Locked bool
}

// Errors.
var (
	// ErrOffsetOutOfRange is returned for a read or lookup below the log
	// start offset or above the log end offset (OffsetOutOfRangeException).
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	// ErrClosed is returned by operations on a closed log.
	ErrClosed = errors.New("log: closed")
	// ErrReadOnly is returned by mutating operations on a read-only log.
	ErrReadOnly = errors.New("log: opened read-only")
	// ErrFailed is returned after an I/O error made the log's state
	// uncertain: reopen it to recover (LogDirFailureChannel).
	ErrFailed = errors.New("log: failed by an earlier I/O error")
	// ErrInvalidRecords is returned for batches an append refuses
	// (corrupt, too large, out-of-order offsets, bad timestamps).
	ErrInvalidRecords = errors.New("log: invalid records")
	// ErrCorruptLog is matched (errors.Is) by a *CorruptLogError: a
	// writable Open found damage it would have to truncate past valid
	// data to recover from.
	ErrCorruptLog = errors.New("log: corruption that only a repair may truncate")
)

// Log is one partition directory: an ordered run of segments, the last of
// which (the active segment) takes appends.
//
// A Log takes one writer and any number of readers: Append,
// AppendAsFollower, Roll, TruncateTo, DeleteSegments, Flush and Close are
// serialised by the caller (and by an internal lock), while Read,
// OffsetForTimestamp, Segments and the offset accessors may run
// concurrently with them and with each other.
type Log struct {
	fsys  vfs.FS
	dir   string
	tp    checkpoint.TopicPartition
	cfg   Config
	opt   Options
	clock segment.Clock
	rng   *rand.Rand

	mu             sync.RWMutex
	segs           []*segment.Segment // sorted by base offset; never empty once open
	logStartOffset int64
	nextOffset     int64 // log end offset
	highWatermark  int64
	hwManual       bool // SetHighWatermark was called: HW no longer follows LEO
	recoveryPoint  int64
	epochs         *checkpoint.LeaderEpochCache
	epochsDirty    bool // epochs changed since the checkpoint was written
	producers      *producer.State
	unflushed      int64 // messages appended since the last flush
	lastFlushMs    int64
	pendingDeletes []pendingDelete
	failed         error
	closed         bool
	dirLock        io.Closer // the partition's lock, if Open took it
	load           LoadReport
	tl             *timeline.Timeline // Options.Timeline
	it             record.Iterator    // reused by validation and producer state
	rec            record.Record
}

// pendingDelete is a segment renamed to .deleted, to be removed when its
// file.delete.delay.ms has passed.
type pendingDelete struct {
	seg *segment.Segment
	due int64
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// TopicPartition is the topic and partition parsed from the directory
// name (Topic is the whole name when it does not parse).
func (l *Log) TopicPartition() checkpoint.TopicPartition { return l.tp }

// Config returns the log's configuration.
func (l *Log) Config() Config { return l.cfg }

// LogStartOffset is the first offset readers may see.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.logStartOffset
}

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.nextOffset
}

// HighWatermark is the replication high watermark: without replication,
// the log end offset, unless set lower with SetHighWatermark.
func (l *Log) HighWatermark() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.highWatermark
}

// SetHighWatermark sets the high watermark, clamped to [logStartOffset,
// logEndOffset], as a replicated partition's leader would. From then on it
// no longer follows the log end offset. Retention deletes only segments
// below it.
func (l *Log) SetHighWatermark(hw int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hwManual = true
	l.setHighWatermarkLocked(min(max(hw, l.logStartOffset), l.nextOffset))
}

// setHighWatermarkLocked moves the high watermark and tells producer
// state, so that transactions whose markers are now replicated stop
// holding back the last stable offset (UnifiedLog.updateHighWatermarkMetadata
// calls ProducerStateManager.onHighWatermarkUpdated the same way).
func (l *Log) setHighWatermarkLocked(hw int64) {
	l.highWatermark = hw
	l.producers.OnHighWatermarkUpdated(hw)
}

// RecoveryPoint is the offset below which everything is flushed.
func (l *Log) RecoveryPoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.recoveryPoint
}

// LoadReport returns what opening the log found and did.
func (l *Log) LoadReport() LoadReport {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.load
}

// Segments returns read-only views of the log's segments in offset
// order, the active one last. The segments stay owned by the log: only
// its own methods append to, roll, truncate or delete them.
func (l *Log) Segments() []SegmentView {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return views(l.segs)
}

// ActiveSegment is a read-only view of the segment that takes appends.
func (l *Log) ActiveSegment() SegmentView {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return SegmentView{l.segs[len(l.segs)-1]}
}

// LeaderEpochs returns a copy of the leader epoch cache's entries.
func (l *Log) LeaderEpochs() []checkpoint.EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.Entries()
}

// floorSegment returns the index of the last segment whose base offset is
// ≤ offset, or -1. Caller holds l.mu.
func (l *Log) floorSegment(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].BaseOffset() > offset })
	return i - 1
}

func (l *Log) segConfig() segment.Config {
	return segment.Config{
		IndexIntervalBytes: int(l.cfg.IndexIntervalBytes),
		MaxIndexSize:       int(l.cfg.SegmentIndexBytes),
		Preallocate:        l.cfg.Preallocate,
		InitFileSize:       int64(l.cfg.InitFileSize()),
		RollJitterMs:       l.cfg.RandomSegmentJitter(l.rng),
	}
}

func (l *Log) checkWritable() error {
	switch {
	case l.closed:
		return ErrClosed
	case l.opt.ReadOnly:
		return ErrReadOnly
	case l.failed != nil:
		return fmt.Errorf("%w: %v", ErrFailed, l.failed)
	}
	return nil
}

// fail marks the log failed after an I/O error whose effect on disk is
// unknown (E1, E2), and returns err.
func (l *Log) fail(err error) error {
	if l.failed == nil {
		l.failed = err
	}
	return err
}

// parentDir is the log directory that holds the partition directory and
// the per-log-dir checkpoint files.
func (l *Log) parentDir() string { return path.Dir(l.dir) }

func (l *Log) nowMs() int64 { return l.clock.Now().UnixMilli() }
