package compaction

import (
	"fmt"
	"strings"

	"github.com/segkit/segkit/timeline"
)

// Report says what a clean does (Plan) or did (Clean): the cleanable
// range and why the log is or is not cleanable, Kafka's cleaner stats,
// the segments it rewrote, and what it removed.
type Report struct {
	// Dir is the partition directory; Now the time the clean ran at (ms).
	Dir string
	Now int64

	// LogStartOffset, LogEndOffset, HighWatermark and LastStableOffset
	// are the log's, as the cleaner saw them.
	LogStartOffset, LogEndOffset, HighWatermark, LastStableOffset int64
	// ActiveProducers are the producers whose last batch the clean keeps,
	// by producer id.
	ActiveProducers []Producer

	// Checkpoint is the cleaner-offset-checkpoint entry found, if
	// HasCheckpoint. CheckpointReset says it was below the log start
	// offset or past the log end, so the first dirty offset went back to
	// the log start offset (and Clean rewrites the checkpoint with it even
	// when it does not clean, as Kafka does).
	Checkpoint      int64
	HasCheckpoint   bool
	CheckpointReset bool

	// The cleanable range (LogCleanerManager.cleanableOffsets,
	// LogToClean). FirstUncleanableDirtyOffset is the lowest of the last
	// stable offset, the active segment's base and the first segment
	// within min.compaction.lag.ms (UncleanableBy names which), and
	// FirstUncleanableOffset that rounded down to a segment's base.
	FirstDirtyOffset            int64
	FirstUncleanableDirtyOffset int64
	FirstUncleanableOffset      int64
	UncleanableBy               string
	// CleanBytes are the bytes of the segments below the first dirty
	// offset, CleanableBytes those of the dirty segments up to the
	// uncleanable one; CleanableRatio = CleanableBytes / TotalBytes, the
	// dirty ratio compared with min.cleanable.dirty.ratio.
	CleanBytes, CleanableBytes, TotalBytes int64
	CleanableRatio                         float64
	MinCleanableRatio                      float64
	// Holds are the savepoints in force (the partition's timeline and
	// Options.Holds). HeldBy is the one pinning an offset of the first
	// held segment, whose base is HeldBase, nil when no hold pins a
	// segment: the cleanable range ends at HeldBase (UncleanableBy names
	// the hold when it is what ends it), and when HeldBase is below the
	// first dirty offset no clean runs at all, every clean rewriting the
	// log from its start.
	Holds    []timeline.Hold
	HeldBy   *timeline.Hold
	HeldBase int64
	// MaxCompactionDelayMs is how long past max.compaction.lag.ms the
	// oldest dirty segment's first batch is; NeedCompactionNow (a positive
	// delay) makes the log cleanable whatever its ratio.
	MaxCompactionDelayMs int64
	NeedCompactionNow    bool

	// Cleanable says whether the cleaner would clean the log now; Why
	// says why not.
	Cleanable bool
	Why       string

	// DeleteHorizonMs is the delete horizon a clean now stamps on batches
	// holding tombstones or markers: Now + delete.retention.ms. They go at
	// the first clean after it. LegacyDeleteHorizonMs is the horizon of
	// v0/v1 tombstones: the last modification time of the last clean
	// segment minus delete.retention.ms.
	DeleteHorizonMs       int64
	LegacyDeleteHorizonMs int64

	// EndOffset is where the clean stopped, the new cleaner checkpoint:
	// one past the offset map's latest offset. It is below
	// FirstUncleanableOffset when the map filled (MapFull) before the end
	// of the dirty section; the next clean goes on from there.
	EndOffset int64
	MapFull   bool
	// MapSlots and MapCapacity are the offset map's slots and the keys it
	// takes before it is full (Slots × load factor); MapEntries the keys
	// it held.
	MapSlots, MapCapacity, MapEntries int
	// MapBytes is the memory the offset map's table held: at most
	// MapSlots × 20 bytes (24 when an offset was more than 2^32−2 from the
	// first), less while it holds fewer keys (see OffsetMap).
	MapBytes int64

	// Stats are Kafka's CleanerStats of the clean.
	Stats Stats
	// Groups are the segments rewritten, each group into one segment.
	Groups []Group
	// Removed counts what the clean removed, by reason.
	Removed Removal
	// Horizons lists the delete horizons of the batches kept with
	// tombstones or transaction markers: they stay until then.
	Horizons []Horizon

	// Instant is the completed compaction instant Clean recorded on the
	// partition's timeline (see the package doc, "The timeline"); nil for
	// a Plan, and for a clean that rewrote nothing or failed (the error
	// says what became of its instant). It is left out of the Report's
	// JSON, which must decode back: an instant's payloads are interfaces
	// (internal/historyjson has its JSON, as segviz compact prints it).
	Instant *timeline.Instant `json:"-"`
}

// Stats are Kafka's CleanerStats: what the offset map read, what the
// cleaning read and wrote.
type Stats struct {
	// MapBytesRead and MapMessagesRead are what building the offset map
	// read (bytes of the chunks it finished, records and markers).
	MapBytesRead, MapMessagesRead int64
	// BytesRead and MessagesRead are what cleaning read (the records of
	// the batches it did not drop whole); InvalidMessagesRead the records
	// without a key among them.
	BytesRead, MessagesRead, InvalidMessagesRead int64
	// BytesWritten and MessagesWritten are what it kept.
	BytesWritten, MessagesWritten int64
	// BufferUtilization is the offset map's MapEntries / MapSlots.
	BufferUtilization float64
}

// Group is one group of segments rewritten into one
// (Cleaner.groupSegmentsBySize): the cleaned segment takes the first
// source's base offset.
type Group struct {
	BaseOffset int64
	// Sources are the base offsets of the segments it replaces.
	Sources []int64
	// SizeBefore and SizeAfter are the bytes of the sources and of the
	// cleaned segment.
	SizeBefore, SizeAfter int64
	// Removed is what went from each source, in the order of Sources.
	Removed []Removal
}

// Removal counts what a clean removed.
type Removal struct {
	// Records and Bytes are the records and bytes that went.
	Records, Bytes int64
	// Superseded are keyed records with a later offset for their key.
	Superseded int64
	// Tombstones are tombstones (records with a key and no value) that
	// went because their batch's delete horizon had passed.
	Tombstones int64
	// Unkeyed are records without a key.
	Unkeyed int64
	// Aborted are the records of aborted transactions.
	Aborted int64
	// Markers are transaction markers (control records) that went.
	Markers int64
	// Batches were dropped whole; BatchesEmptied were kept as empty
	// 61-byte batches (the last batch of an active producer, or of the
	// round); BatchesRewritten were rewritten with fewer records or a new
	// delete horizon; BatchesCopied were kept as they were.
	Batches, BatchesEmptied, BatchesRewritten, BatchesCopied int64
}

// Horizon is a delete horizon of kept batches: the tombstones and
// markers they hold stay until DeleteHorizonMs, and go at the first clean
// after it. New says the clean stamped it (Now + delete.retention.ms).
type Horizon struct {
	DeleteHorizonMs int64
	New             bool
	Batches         int
	Tombstones      int64
	Markers         int64
}

// String summarises the report in a few lines.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: range [%d, %d) of [%d, %d), dirty ratio %.4f (min %.4g)", r.Dir, r.FirstDirtyOffset, r.FirstUncleanableOffset,
		r.LogStartOffset, r.LogEndOffset, r.CleanableRatio, r.MinCleanableRatio)
	if r.HeldBy != nil {
		fmt.Fprintf(&b, "; segment %d and every later one held by %s", r.HeldBase, r.HeldBy)
	}
	if !r.Cleanable {
		fmt.Fprintf(&b, ": not cleanable: %s", r.Why)
		return b.String()
	}
	fmt.Fprintf(&b, "\ncleaned up to %d", r.EndOffset)
	if r.MapFull {
		fmt.Fprintf(&b, " (offset map full at %d keys)", r.MapEntries)
	}
	fmt.Fprintf(&b, "; read %d bytes, %d records; wrote %d bytes, %d records", r.Stats.BytesRead, r.Stats.MessagesRead, r.Stats.BytesWritten, r.Stats.MessagesWritten)
	fmt.Fprintf(&b, "\nremoved %d records (%d superseded, %d tombstones, %d unkeyed, %d aborted, %d markers), %d bytes",
		r.Removed.Records, r.Removed.Superseded, r.Removed.Tombstones, r.Removed.Unkeyed, r.Removed.Aborted, r.Removed.Markers, r.Removed.Bytes)
	for _, h := range r.Horizons {
		what := "kept until"
		if h.New {
			what = "stamped, kept until"
		}
		fmt.Fprintf(&b, "\n%d tombstones, %d markers in %d batches %s %d", h.Tombstones, h.Markers, h.Batches, what, h.DeleteHorizonMs)
	}
	return b.String()
}
