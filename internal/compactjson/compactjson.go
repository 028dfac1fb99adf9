package compactjson

import (
	"encoding/base64"
	"math"

	"github.com/segkit/segkit/compaction"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/timeline"
)

// Report is what a clean at Now would do, or did: the cleanable range, the
// dirty ratio, the verdict and what went. Times are epoch milliseconds.
type Report struct {
	Now              int64 `json:"now"`
	LogStartOffset   int64 `json:"logStartOffset"`
	LogEndOffset     int64 `json:"logEndOffset"`
	HighWatermark    int64 `json:"highWatermark"`
	LastStableOffset int64 `json:"lastStableOffset"`
	// Checkpoint is the partition's entry of the log directory's
	// cleaner-offset-checkpoint (null without one); CheckpointReset says it
	// lay outside the log, so the first dirty offset went back to the log
	// start offset.
	Checkpoint      *int64 `json:"checkpoint"`
	CheckpointReset bool   `json:"checkpointReset"`
	// The cleanable range [FirstDirtyOffset, FirstUncleanableOffset):
	// FirstUncleanableDirtyOffset is what bounds it (UncleanableBy, in
	// words) before it is rounded down to a segment's base.
	FirstDirtyOffset            int64  `json:"firstDirtyOffset"`
	FirstUncleanableDirtyOffset int64  `json:"firstUncleanableDirtyOffset"`
	FirstUncleanableOffset      int64  `json:"firstUncleanableOffset"`
	UncleanableBy               string `json:"uncleanableBy"`
	// The dirty ratio: CleanableBytes / TotalBytes (null for a log
	// without bytes), against min.cleanable.dirty.ratio.
	CleanBytes             int64    `json:"cleanBytes"`
	CleanableBytes         int64    `json:"cleanableBytes"`
	TotalBytes             int64    `json:"totalBytes"`
	DirtyRatio             *float64 `json:"dirtyRatio"`
	MinCleanableDirtyRatio float64  `json:"minCleanableDirtyRatio"`
	// MaxCompactionDelayMs is how far past max.compaction.lag.ms the
	// oldest dirty segment is; NeedCompactionNow makes the log cleanable
	// whatever its ratio.
	MaxCompactionDelayMs int64 `json:"maxCompactionDelayMs"`
	NeedCompactionNow    bool  `json:"needCompactionNow"`
	// Cleanable says whether the cleaner cleans the log at Now; Why says
	// why not.
	Cleanable bool   `json:"cleanable"`
	Why       string `json:"why"`
	// EndOffset is where the clean stops, the next clean's start (null when
	// not cleanable); MapFull says the offset map filled first.
	EndOffset   *int64 `json:"endOffset"`
	MapFull     bool   `json:"mapFull"`
	MapEntries  int    `json:"mapEntries"`
	MapCapacity int    `json:"mapCapacity"`
	// DeleteHorizonMs is the delete horizon a clean at Now stamps on the
	// batches of the tombstones and markers it keeps.
	DeleteHorizonMs int64   `json:"deleteHorizonMs"`
	Removed         Removal `json:"removed"`
	Stats           Stats   `json:"stats"`
	Groups          []Group `json:"groups"`
	// Kept lists the tombstones and transaction markers the clean keeps,
	// by the delete horizon until which they stay.
	Kept []Kept `json:"kept"`
	// Until answers a question about one offset (null without one).
	Until *Until `json:"until"`
	// Holds are the savepoints in force; HeldBy is the one pinning the
	// first held segment, whose base is HeldBase (both null when no hold
	// pins a segment): no clean rewrites that segment or any later one.
	Holds    []Hold `json:"holds"`
	HeldBy   *Hold  `json:"heldBy"`
	HeldBase *int64 `json:"heldBase"`
}

// Hold is a savepoint in force: Savepoint is its instant time as
// "segviz savepoint --release" takes it (17 digits), TakenAt the same in
// epoch ms.
type Hold struct {
	Savepoint   string `json:"savepoint"`
	TakenAt     int64  `json:"takenAt"`
	Label       string `json:"label"`
	FirstOffset int64  `json:"firstOffset"`
	LastOffset  int64  `json:"lastOffset"`
}

// HoldOf is the view of h.
func HoldOf(h timeline.Hold) Hold {
	return Hold{Savepoint: h.Savepoint.String(), TakenAt: h.Savepoint.Millis, Label: h.Label, FirstOffset: h.FirstOffset, LastOffset: h.LastOffset}
}

// Removal counts what a clean removes, by reason.
type Removal struct {
	Records          int64 `json:"records"`
	Bytes            int64 `json:"bytes"`
	Superseded       int64 `json:"superseded"`
	Tombstones       int64 `json:"tombstones"`
	Unkeyed          int64 `json:"unkeyed"`
	Aborted          int64 `json:"aborted"`
	Markers          int64 `json:"markers"`
	Batches          int64 `json:"batches"`
	BatchesEmptied   int64 `json:"batchesEmptied"`
	BatchesRewritten int64 `json:"batchesRewritten"`
	BatchesCopied    int64 `json:"batchesCopied"`
}

// Stats are Kafka's CleanerStats.
type Stats struct {
	BytesRead           int64   `json:"bytesRead"`
	MessagesRead        int64   `json:"messagesRead"`
	InvalidMessagesRead int64   `json:"invalidMessagesRead"`
	BytesWritten        int64   `json:"bytesWritten"`
	MessagesWritten     int64   `json:"messagesWritten"`
	MapBytesRead        int64   `json:"mapBytesRead"`
	MapMessagesRead     int64   `json:"mapMessagesRead"`
	BufferUtilization   float64 `json:"bufferUtilization"`
}

// Group is one group of segments a clean rewrites into one.
type Group struct {
	BaseOffset int64   `json:"baseOffset"`
	Sources    []int64 `json:"sources"`
	SizeBefore int64   `json:"sizeBefore"`
	SizeAfter  int64   `json:"sizeAfter"`
}

// Kept is a delete horizon of kept batches: their tombstones and markers
// stay until DeleteHorizonMs and go at the first clean after it. New says
// this clean stamps it.
type Kept struct {
	DeleteHorizonMs int64 `json:"deleteHorizonMs"`
	New             bool  `json:"new"`
	Batches         int   `json:"batches"`
	Tombstones      int64 `json:"tombstones"`
	Markers         int64 `json:"markers"`
}

// Until is compaction.ReadableUntil for one offset. Times are null for
// never; Key is base64 (null for a null key).
type Until struct {
	Offset                 int64    `json:"offset"`
	Kind                   string   `json:"kind"`
	Key                    *string  `json:"key"`
	Tombstone              bool     `json:"tombstone"`
	Timestamp              int64    `json:"timestamp"`
	SegmentBase            int64    `json:"segmentBase"`
	ActiveSegment          bool     `json:"activeSegment"`
	Successor              *int64   `json:"successor"`
	DeleteHorizonMs        *int64   `json:"deleteHorizonMs"`
	RemovedByCleanNow      bool     `json:"removedByCleanNow"`
	StampedByCleanNow      bool     `json:"stampedByCleanNow"`
	NotBefore              *int64   `json:"notBefore"`
	ReadableUntil          *int64   `json:"readableUntil"`
	IfAppendsContinue      *int64   `json:"ifAppendsContinue"`
	RetentionReadableUntil *int64   `json:"retentionReadableUntil"`
	DependsOn              []string `json:"dependsOn"`
	Explanation            string   `json:"explanation"`
	// HeldBy is the savepoint that keeps the record (null when none does).
	HeldBy *Hold `json:"heldBy"`
}

// FromReport is the view of r, with the answer b about one offset (nil for
// none).
func FromReport(r *compaction.Report, b *compaction.RecordBound) Report {
	j := Report{
		Now: r.Now, LogStartOffset: r.LogStartOffset, LogEndOffset: r.LogEndOffset, HighWatermark: r.HighWatermark, LastStableOffset: r.LastStableOffset,
		CheckpointReset: r.CheckpointReset, FirstDirtyOffset: r.FirstDirtyOffset, FirstUncleanableDirtyOffset: r.FirstUncleanableDirtyOffset,
		FirstUncleanableOffset: r.FirstUncleanableOffset, UncleanableBy: r.UncleanableBy,
		CleanBytes: r.CleanBytes, CleanableBytes: r.CleanableBytes, TotalBytes: r.TotalBytes, MinCleanableDirtyRatio: r.MinCleanableRatio,
		MaxCompactionDelayMs: r.MaxCompactionDelayMs, NeedCompactionNow: r.NeedCompactionNow, Cleanable: r.Cleanable, Why: r.Why,
		MapFull: r.MapFull, MapEntries: r.MapEntries, MapCapacity: r.MapCapacity, DeleteHorizonMs: r.DeleteHorizonMs,
		Removed: RemovalOf(r.Removed),
		Stats: Stats{r.Stats.BytesRead, r.Stats.MessagesRead, r.Stats.InvalidMessagesRead, r.Stats.BytesWritten, r.Stats.MessagesWritten,
			r.Stats.MapBytesRead, r.Stats.MapMessagesRead, r.Stats.BufferUtilization},
		Groups: []Group{}, Kept: []Kept{}, Holds: []Hold{},
	}
	for _, h := range r.Holds {
		j.Holds = append(j.Holds, HoldOf(h))
	}
	if r.HeldBy != nil {
		h := HoldOf(*r.HeldBy)
		j.HeldBy, j.HeldBase = &h, ptr(r.HeldBase)
	}
	if !math.IsNaN(r.CleanableRatio) { // 0/0 for a log without bytes: JSON has no NaN
		v := r.CleanableRatio
		j.DirtyRatio = &v
	}
	if r.HasCheckpoint {
		j.Checkpoint = ptr(r.Checkpoint)
	}
	if r.Cleanable {
		j.EndOffset = ptr(r.EndOffset)
	}
	for _, g := range r.Groups {
		j.Groups = append(j.Groups, Group{g.BaseOffset, append([]int64{}, g.Sources...), g.SizeBefore, g.SizeAfter})
	}
	for _, h := range r.Horizons {
		j.Kept = append(j.Kept, Kept{h.DeleteHorizonMs, h.New, h.Batches, h.Tombstones, h.Markers})
	}
	if b != nil {
		j.Until = UntilOf(b)
	}
	return j
}

// RemovalOf is the view of r.
func RemovalOf(r compaction.Removal) Removal {
	return Removal{r.Records, r.Bytes, r.Superseded, r.Tombstones, r.Unkeyed, r.Aborted, r.Markers,
		r.Batches, r.BatchesEmptied, r.BatchesRewritten, r.BatchesCopied}
}

// UntilOf is the view of b.
func UntilOf(b *compaction.RecordBound) *Until {
	u := &Until{
		Offset: b.Offset, Kind: string(b.Kind), Tombstone: b.Tombstone, Timestamp: b.Timestamp,
		SegmentBase: b.SegmentBase, ActiveSegment: b.ActiveSegment,
		RemovedByCleanNow: b.RemovedByCleanNow, StampedByCleanNow: b.StampedByCleanNow,
		NotBefore: Time(b.NotBefore), ReadableUntil: Time(b.ReadableUntil), IfAppendsContinue: Time(b.IfAppendsContinue),
		DependsOn: append([]string{}, b.DependsOn...), Explanation: b.Explanation,
	}
	if b.Key != nil {
		k := base64.StdEncoding.EncodeToString(b.Key)
		u.Key = &k
	}
	if b.Successor >= 0 {
		u.Successor = ptr(b.Successor)
	}
	if b.DeleteHorizonMs >= 0 {
		u.DeleteHorizonMs = ptr(b.DeleteHorizonMs)
	}
	if b.Retention != nil {
		u.RetentionReadableUntil = Time(b.Retention.ReadableUntil)
	}
	if b.HeldBy != nil {
		h := HoldOf(*b.HeldBy)
		u.HeldBy = &h
	}
	return u
}

// Time is a time for JSON: null for retention.Never.
func Time(t int64) *int64 {
	if t == retention.Never {
		return nil
	}
	return &t
}

func ptr(v int64) *int64 { return &v }
