package compaction

import (
	"errors"

	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
)

// Defaults of the broker's cleaner settings, as one cleaner thread of a
// broker with Kafka's defaults has them (CleanerConfig.java,
// ServerConfigs.java, LogCleaner.CleanerThread).
const (
	// DefaultDedupeBufferSize is log.cleaner.dedupe.buffer.size (128 MiB)
	// divided by log.cleaner.threads (1): the offset map's budget.
	DefaultDedupeBufferSize = 128 << 20
	// DefaultLoadFactor is log.cleaner.io.buffer.load.factor: the share
	// of the map's slots the cleaner fills before it stops.
	DefaultLoadFactor = 0.9
	// DefaultIOBufferSize is log.cleaner.io.buffer.size (512 KiB) divided
	// by the threads and by 2 (a read and a write buffer): the size of
	// the chunks the cleaner reads.
	DefaultIOBufferSize = 512 << 10 / 2
	// DefaultMaxIOBufferSize is message.max.bytes (the broker's), the
	// most the cleaner's buffers grow to, unless the topic's
	// max.message.bytes is larger.
	DefaultMaxIOBufferSize = 1<<20 + 12
	// DefaultProducerIDExpirationMs is producer.id.expiration.ms: a
	// producer idle that long (with no open transaction) is no longer
	// active, and its last batch no longer kept for it.
	DefaultProducerIDExpirationMs = 24 * 60 * 60 * 1000
)

// Options are the settings of a clean that are not topic config: the
// clock, the broker's log.cleaner.* settings and the replication state.
// The zero value is Kafka's defaults at the wall clock, with the high
// watermark at the log end.
type Options struct {
	// Clock is the time the clean runs at (its now, for delete horizons,
	// compaction lags and producer expiry); nil means the wall clock.
	Clock segment.Clock
	// DedupeBufferSize is the offset map's budget in bytes
	// (log.cleaner.dedupe.buffer.size / log.cleaner.threads, at most
	// 2 GiB); 0 means DefaultDedupeBufferSize. Each key takes
	// BytesPerEntry: the map holds up to DedupeBufferSize/24 × LoadFactor
	// keys, and a dirty section with more is cleaned in several rounds.
	DedupeBufferSize int64
	// LoadFactor is log.cleaner.io.buffer.load.factor; 0 means
	// DefaultLoadFactor.
	LoadFactor float64
	// IOBufferSize is the cleaner's read chunk
	// (log.cleaner.io.buffer.size / threads / 2); 0 means
	// DefaultIOBufferSize. It changes nothing on disk, only
	// Stats.MapBytesRead when the map fills, as in Kafka.
	IOBufferSize int
	// MaxIOBufferSize is the broker's message.max.bytes, the most the
	// buffers grow to (or the topic's max.message.bytes, if larger): a
	// batch larger than both fails the clean, as in Kafka. 0 means
	// DefaultMaxIOBufferSize.
	MaxIOBufferSize int
	// HighWatermark bounds the clean: nothing at or above the last stable
	// offset, itself at most the high watermark, is cleaned. A value ≤ 0
	// means the log end offset, as for a partition whose replicas are all
	// in sync.
	HighWatermark int64
	// ProducerIDExpirationMs is producer.id.expiration.ms; 0 means
	// DefaultProducerIDExpirationMs, a negative value keeps every
	// producer active.
	ProducerIDExpirationMs int64
	// Holds are savepoints in force besides those of the partition's own
	// timeline, which Plan, Clean and ReadableUntil read themselves
	// (timeline.Timeline.Holds; Clean under the partition's lock). A clean
	// never rewrites a segment holding an offset a hold pins, nor any
	// later one: the cleanable range ends at the first such segment's
	// base (Report.HeldBy).
	Holds []timeline.Hold
}

func (o *Options) withDefaults() Options {
	r := *o
	if r.Clock == nil {
		r.Clock = segment.SystemClock{}
	}
	if r.DedupeBufferSize <= 0 {
		r.DedupeBufferSize = DefaultDedupeBufferSize
	}
	if r.LoadFactor <= 0 {
		r.LoadFactor = DefaultLoadFactor
	}
	if r.IOBufferSize <= 0 {
		r.IOBufferSize = DefaultIOBufferSize
	}
	if r.MaxIOBufferSize <= 0 {
		r.MaxIOBufferSize = DefaultMaxIOBufferSize
	}
	if r.ProducerIDExpirationMs == 0 {
		r.ProducerIDExpirationMs = DefaultProducerIDExpirationMs
	}
	return r
}

func (o *Options) now() int64 { return o.Clock.Now().UnixMilli() }

// Errors.
var (
	// ErrMapTooSmall is returned when the dedupe buffer cannot hold one
	// key (Kafka's Cleaner asserts "offset map is too small to fit in even
	// a single message").
	ErrMapTooSmall = errors.New("compaction: offset map too small")
	// ErrNotCompacted is matched by the error Clean returns for a log
	// whose cleanup.policy does not include compact; Plan reports it in
	// Report.Why instead.
	ErrNotCompacted = errors.New("compaction: cleanup.policy does not include compact")
	// ErrMessageTooLarge is returned for a batch larger than the
	// cleaner's buffers may grow to (Kafka's IllegalStateException "This
	// log contains a message larger than maximum allowable size").
	ErrMessageTooLarge = errors.New("compaction: a batch is larger than the cleaner's buffers may grow")
	// ErrEmptyLegacyBatch is returned when the last entry of a cleaning
	// round is a legacy (v0/v1) message whose records all go: Kafka keeps
	// the last batch of a round as an empty batch, which only v2 has, and
	// fails the clean with IllegalStateException.
	ErrEmptyLegacyBatch = errors.New("compaction: empty batches are only supported for magic v2 and above")
)
