package config

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Topic-level property names (TopicConfig.java).
const (
	SegmentBytes                = "segment.bytes"
	SegmentMs                   = "segment.ms"
	SegmentJitterMs             = "segment.jitter.ms"
	SegmentIndexBytes           = "segment.index.bytes"
	FlushMessages               = "flush.messages"
	FlushMs                     = "flush.ms"
	RetentionBytes              = "retention.bytes"
	RetentionMs                 = "retention.ms"
	MaxMessageBytes             = "max.message.bytes"
	IndexIntervalBytes          = "index.interval.bytes"
	DeleteRetentionMs           = "delete.retention.ms"
	MinCompactionLagMs          = "min.compaction.lag.ms"
	MaxCompactionLagMs          = "max.compaction.lag.ms"
	FileDeleteDelayMs           = "file.delete.delay.ms"
	MinCleanableDirtyRatio      = "min.cleanable.dirty.ratio"
	CleanupPolicy               = "cleanup.policy"
	UncleanLeaderElectionEnable = "unclean.leader.election.enable"
	MinInsyncReplicas           = "min.insync.replicas"
	CompressionType             = "compression.type"
	CompressionGzipLevel        = "compression.gzip.level"
	CompressionLz4Level         = "compression.lz4.level"
	CompressionZstdLevel        = "compression.zstd.level"
	Preallocate                 = "preallocate"
	MessageTimestampType        = "message.timestamp.type"
	MessageTimestampBeforeMaxMs = "message.timestamp.before.max.ms"
	MessageTimestampAfterMaxMs  = "message.timestamp.after.max.ms"
	RemoteStorageEnable         = "remote.storage.enable"
	LocalRetentionMs            = "local.retention.ms"
	LocalRetentionBytes         = "local.retention.bytes"
	RemoteLogCopyDisable        = "remote.log.copy.disable"
	RemoteLogDeleteOnDisable    = "remote.log.delete.on.disable"

	// InternalSegmentBytes is Kafka 4.x's internal (test-only) override of
	// segment.bytes (LogConfig.INTERNAL_SEGMENT_BYTES_CONFIG). It has no
	// default; when set, SegmentSize returns it.
	InternalSegmentBytes = "internal.segment.bytes"
)

// Values of cleanup.policy.
const (
	CleanupPolicyDelete  = "delete"
	CleanupPolicyCompact = "compact"
)

// Values of message.timestamp.type.
const (
	CreateTime    = "CreateTime"
	LogAppendTime = "LogAppendTime"
)

// Values of compression.type (BrokerCompressionType.java, in Kafka's
// order). CompressionProducer keeps the producer's codec.
const (
	CompressionUncompressed = "uncompressed"
	CompressionZstd         = "zstd"
	CompressionLZ4          = "lz4"
	CompressionSnappy       = "snappy"
	CompressionGzip         = "gzip"
	CompressionProducer     = "producer"
)

// Limits and sentinel values of the settings.
const (
	// MinSegmentBytes is the smallest segment.bytes Kafka 4.x accepts
	// (KIP-1030).
	MinSegmentBytes = 1024 * 1024
	// LegacyMinSegmentBytes is the smallest segment.bytes the format
	// allows, and the minimum Kafka 3.x enforced: the size of the smallest
	// legacy v0 message (LegacyRecord.RECORD_OVERHEAD_V0).
	LegacyMinSegmentBytes = 14
	// MinSegmentIndexBytes is the smallest segment.index.bytes.
	MinSegmentIndexBytes = 4

	// Unlimited disables a retention.ms or retention.bytes limit.
	Unlimited = -1
	// UseRetention as local.retention.ms or local.retention.bytes means
	// "use the retention.* value".
	UseRetention = -2

	// gzip levels (java.util.zip.Deflater): -1 means zlib's default.
	minGzipLevel, maxGzipLevel, defaultGzipLevel = 1, 9, -1
	minLz4Level, maxLz4Level, defaultLz4Level    = 1, 17, 9
	minZstdLevel, maxZstdLevel, defaultZstdLevel = -131072, 22, 3
)

// Config is the topic-level configuration of one log, with Kafka's names
// and defaults (Kafka 4.x). The zero value is not useful: start from
// Default or Parse.
type Config struct {
	// SegmentBytes is segment.bytes: roll the active segment before it
	// exceeds this size. Default 1073741824 (1 GiB); at least 1048576
	// (14 with AllowSmallSegments).
	SegmentBytes int32
	// SegmentMs is segment.ms: roll after this long even if not full.
	// Default 604800000 (7 days); at least 1.
	SegmentMs int64
	// SegmentJitterMs is segment.jitter.ms: the largest random amount
	// subtracted from segment.ms. Default 0; at least 0.
	SegmentJitterMs int64
	// SegmentIndexBytes is segment.index.bytes: the size an active offset
	// index (and time index) is preallocated to. Default 10485760
	// (10 MiB); at least 4.
	SegmentIndexBytes int32
	// FlushMessages is flush.messages: fsync after this many messages.
	// Default Long.MAX_VALUE (never); at least 1.
	FlushMessages int64
	// FlushMs is flush.ms: fsync when a message has waited this long.
	// Default Long.MAX_VALUE (never); at least 0.
	FlushMs int64
	// RetentionBytes is retention.bytes: delete the oldest segments while
	// the log is larger. Default -1 (unlimited); any value, a negative
	// one disables the limit.
	RetentionBytes int64
	// RetentionMs is retention.ms: delete segments whose newest record is
	// older. Default 604800000 (7 days); -1 means unlimited; at least -1.
	RetentionMs int64
	// MaxMessageBytes is max.message.bytes: the largest record batch
	// accepted. Default 1048588 (1 MiB + 12); at least 0.
	MaxMessageBytes int32
	// IndexIntervalBytes is index.interval.bytes: add an offset index
	// entry after this many log bytes. Default 4096; at least 0.
	IndexIntervalBytes int32
	// DeleteRetentionMs is delete.retention.ms: how long compaction keeps
	// tombstones. Default 86400000 (1 day); at least 0.
	DeleteRetentionMs int64
	// MinCompactionLagMs is min.compaction.lag.ms: records younger than
	// this are not compacted. Default 0; at least 0.
	MinCompactionLagMs int64
	// MaxCompactionLagMs is max.compaction.lag.ms: records older than
	// this are compacted even below the dirty ratio. Default
	// Long.MAX_VALUE; at least 1.
	MaxCompactionLagMs int64
	// FileDeleteDelayMs is file.delete.delay.ms: how long a .deleted file
	// is kept before it is removed. Default 60000; at least 0.
	FileDeleteDelayMs int64
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: compact when
	// this share of the log is dirty. Default 0.5; between 0 and 1.
	MinCleanableDirtyRatio float64
	// CleanupPolicy is cleanup.policy: "delete", "compact", both, or
	// neither (an empty list: Kafka 4.x keeps such a log forever).
	// Default [delete]. No value may repeat.
	CleanupPolicy []string
	// UncleanLeaderElectionEnable is unclean.leader.election.enable.
	// Default false. (Replication; kept so configs round-trip.)
	UncleanLeaderElectionEnable bool
	// MinInsyncReplicas is min.insync.replicas. Default 1; at least 1.
	// (Replication; kept so configs round-trip.)
	MinInsyncReplicas int32
	// CompressionType is compression.type: the codec batches are stored
	// with, or "producer" to keep the producer's. Default "producer".
	CompressionType string
	// CompressionGzipLevel is compression.gzip.level. Default -1 (zlib's
	// default); 1 to 9, or -1.
	CompressionGzipLevel int32
	// CompressionLz4Level is compression.lz4.level. Default 9; 1 to 17.
	CompressionLz4Level int32
	// CompressionZstdLevel is compression.zstd.level. Default 3; -131072
	// to 22.
	CompressionZstdLevel int32
	// Preallocate is preallocate: create segment files at full size.
	// Default false.
	Preallocate bool
	// MessageTimestampType is message.timestamp.type: "CreateTime" or
	// "LogAppendTime". Default "CreateTime".
	MessageTimestampType string
	// MessageTimestampBeforeMaxMs is message.timestamp.before.max.ms: how
	// far in the past a CreateTime timestamp may be. Default
	// Long.MAX_VALUE; at least 0.
	MessageTimestampBeforeMaxMs int64
	// MessageTimestampAfterMaxMs is message.timestamp.after.max.ms: how
	// far in the future a CreateTime timestamp may be. Default 3600000
	// (1 hour) since Kafka 4.0 (KIP-1030; Long.MAX_VALUE before); at
	// least 0.
	MessageTimestampAfterMaxMs int64
	// RemoteStorageEnable is remote.storage.enable (KIP-405 tiered
	// storage). Default false.
	RemoteStorageEnable bool
	// LocalRetentionMs is local.retention.ms: retention.ms for the local
	// copy when tiered storage is on. Default -2 (use RetentionMs); at
	// least -2.
	LocalRetentionMs int64
	// LocalRetentionBytes is local.retention.bytes. Default -2 (use
	// RetentionBytes); at least -2.
	LocalRetentionBytes int64
	// RemoteLogCopyDisable is remote.log.copy.disable. Default false.
	RemoteLogCopyDisable bool
	// RemoteLogDeleteOnDisable is remote.log.delete.on.disable. Default
	// false.
	RemoteLogDeleteOnDisable bool
	// InternalSegmentBytes is internal.segment.bytes, Kafka 4.x's
	// test-only override of SegmentBytes; 0 means unset. See SegmentSize.
	InternalSegmentBytes int32
}

// Default returns Kafka 4.x's defaults.
func Default() Config {
	return Config{
		SegmentBytes:                1 << 30,
		SegmentMs:                   7 * 24 * 60 * 60 * 1000,
		SegmentJitterMs:             0,
		SegmentIndexBytes:           10 * 1024 * 1024,
		FlushMessages:               math.MaxInt64,
		FlushMs:                     math.MaxInt64,
		RetentionBytes:              -1,
		RetentionMs:                 7 * 24 * 60 * 60 * 1000,
		MaxMessageBytes:             1024*1024 + 12,
		IndexIntervalBytes:          4096,
		DeleteRetentionMs:           24 * 60 * 60 * 1000,
		MinCompactionLagMs:          0,
		MaxCompactionLagMs:          math.MaxInt64,
		FileDeleteDelayMs:           60000,
		MinCleanableDirtyRatio:      0.5,
		CleanupPolicy:               []string{CleanupPolicyDelete},
		UncleanLeaderElectionEnable: false,
		MinInsyncReplicas:           1,
		CompressionType:             CompressionProducer,
		CompressionGzipLevel:        defaultGzipLevel,
		CompressionLz4Level:         defaultLz4Level,
		CompressionZstdLevel:        defaultZstdLevel,
		Preallocate:                 false,
		MessageTimestampType:        CreateTime,
		MessageTimestampBeforeMaxMs: math.MaxInt64,
		MessageTimestampAfterMaxMs:  60 * 60 * 1000,
		RemoteStorageEnable:         false,
		LocalRetentionMs:            UseRetention,
		LocalRetentionBytes:         UseRetention,
		RemoteLogCopyDisable:        false,
		RemoteLogDeleteOnDisable:    false,
	}
}

// SegmentSize returns the segment size the log rolls at:
// InternalSegmentBytes when set, SegmentBytes otherwise
// (LogConfig.segmentSize).
func (c Config) SegmentSize() int32 {
	if c.InternalSegmentBytes != 0 {
		return c.InternalSegmentBytes
	}
	return c.SegmentBytes
}

// Compact reports whether cleanup.policy includes compact.
func (c Config) Compact() bool { return c.hasPolicy(CleanupPolicyCompact) }

// Delete reports whether cleanup.policy includes delete, that is whether
// retention.ms and retention.bytes apply.
func (c Config) Delete() bool { return c.hasPolicy(CleanupPolicyDelete) }

func (c Config) hasPolicy(p string) bool {
	return slices.ContainsFunc(c.CleanupPolicy, func(s string) bool { return strings.EqualFold(s, p) })
}

// MaxSegmentMs returns the roll interval: segment.ms, or
// max.compaction.lag.ms when the log is compacted and that is shorter
// (LogConfig.maxSegmentMs).
func (c Config) MaxSegmentMs() int64 {
	if c.Compact() && c.MaxCompactionLagMs > 0 {
		return min(c.MaxCompactionLagMs, c.SegmentMs)
	}
	return c.SegmentMs
}

// InitFileSize returns the size a new segment file is created with: the
// segment size when preallocate is set, 0 otherwise.
func (c Config) InitFileSize() int32 {
	if c.Preallocate {
		return c.SegmentSize()
	}
	return 0
}

// EffectiveLocalRetentionMs returns local.retention.ms, or retention.ms
// when it is -2 (LogConfig.localRetentionMs).
func (c Config) EffectiveLocalRetentionMs() int64 {
	if c.LocalRetentionMs == UseRetention {
		return c.RetentionMs
	}
	return c.LocalRetentionMs
}

// EffectiveLocalRetentionBytes returns local.retention.bytes, or
// retention.bytes when it is -2 (LogConfig.localRetentionBytes).
func (c Config) EffectiveLocalRetentionBytes() int64 {
	if c.LocalRetentionBytes == UseRetention {
		return c.RetentionBytes
	}
	return c.LocalRetentionBytes
}

// RandomSegmentJitter returns the jitter subtracted from segment.ms for a
// new segment: 0 without segment.jitter.ms, otherwise a value in
// [0, min(segment.jitter.ms, segment.ms)) drawn from r
// (LogConfig.randomSegmentJitter).
func (c Config) RandomSegmentJitter(r *rand.Rand) int64 {
	if c.SegmentJitterMs <= 0 || c.SegmentMs <= 0 {
		return 0
	}
	return r.Int64N(min(c.SegmentJitterMs, c.SegmentMs))
}
