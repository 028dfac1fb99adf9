package kafkalog

import (
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
)

// SegmentView is a read-only view of one segment of an open Log, as
// Segments and ActiveSegment hand it out: its files, its size, its
// timestamps and its bytes, without the methods that append, truncate,
// roll, rename or close, which only the Log may call. A view stays valid
// while the Log is open; once the Log deletes or replaces the segment
// (retention, truncation, Close), its reads fail or see the state the Log
// left.
type SegmentView struct{ s *segment.Segment }

// BaseOffset is the segment's base offset: the first offset it can hold.
func (v SegmentView) BaseOffset() int64 { return v.s.BaseOffset() }

// Dir is the partition directory that holds the segment.
func (v SegmentView) Dir() string { return v.s.Dir() }

// LogPath is the path of the segment's .log (with its temporary suffix, if
// any).
func (v SegmentView) LogPath() string { return v.s.LogPath() }

// IndexPath is the path of the segment's .index.
func (v SegmentView) IndexPath() string { return v.s.IndexPath() }

// TimeIndexPath is the path of the segment's .timeindex.
func (v SegmentView) TimeIndexPath() string { return v.s.TimeIndexPath() }

// TxnIndexPath is the path of the segment's .txnindex.
func (v SegmentView) TxnIndexPath() string { return v.s.TxnIndexPath() }

// Suffix is the segment files' temporary suffix (segment.DeletedSuffix for
// a segment waiting out file.delete.delay.ms), "" for a live segment.
func (v SegmentView) Suffix() string { return v.s.Suffix() }

// Size is the .log's size in bytes.
func (v SegmentView) Size() int64 { return v.s.Size() }

// ReadAt reads the .log's bytes at off (io.ReaderAt).
func (v SegmentView) ReadAt(p []byte, off int64) (int, error) { return v.s.ReadAt(p, off) }

// Read is segment.Segment.Read: up to maxSize bytes of whole batches from
// the batch holding startOffset, below maxPosition.
func (v SegmentView) Read(startOffset int64, maxSize int, maxPosition int64, minOneMessage bool) (segment.ReadInfo, bool, error) {
	return v.s.Read(startOffset, maxSize, maxPosition, minOneMessage)
}

// ScanHeaders calls fn with the header of each entry from byte position
// from on, until fn returns false (segment.Segment.ScanHeaders).
func (v SegmentView) ScanHeaders(from int64, fn func(segment.EntryHeader) bool) error {
	return v.s.ScanHeaders(from, fn)
}

// ReadNextOffset is the offset after the segment's last batch.
func (v SegmentView) ReadNextOffset() (int64, error) { return v.s.ReadNextOffset() }

// LargestTimestamp is Kafka's LogSegment.largestTimestamp: the newest
// timestamp of the segment, or its file's modification time when it has
// none.
func (v SegmentView) LargestTimestamp() (int64, error) { return v.s.LargestTimestamp() }

// FirstBatchTimestamp is the max timestamp of the segment's first batch
// (what max.compaction.lag.ms and segment.ms measure from).
func (v SegmentView) FirstBatchTimestamp() (int64, error) { return v.s.FirstBatchTimestamp() }

// MaxTimestampSoFar is the segment's newest timestamp and its offset.
func (v SegmentView) MaxTimestampSoFar() (ts, offset int64, err error) {
	return v.s.MaxTimestampSoFar()
}

// LastModified is the .log's modification time in epoch milliseconds.
func (v SegmentView) LastModified() (int64, error) { return v.s.LastModified() }

// FindOffsetByTimestamp is segment.Segment.FindOffsetByTimestamp: the
// first offset from startingOffset whose timestamp is at least ts.
func (v SegmentView) FindOffsetByTimestamp(ts, startingOffset int64) (segment.TimestampOffset, bool, error) {
	return v.s.FindOffsetByTimestamp(ts, startingOffset)
}

// TranslateOffset is where the batch holding offset starts.
func (v SegmentView) TranslateOffset(offset int64) (segment.OffsetPosition, bool, error) {
	return v.s.TranslateOffset(offset)
}

// views wraps segs.
func views(segs []*segment.Segment) []SegmentView {
	out := make([]SegmentView, len(segs))
	for i, s := range segs {
		out[i] = SegmentView{s}
	}
	return out
}

// OffsetIndexBytes is the bytes of the offset index's entries (Kafka's
// offsetIndex.sizeInBytes: entries × 8, not the preallocated length).
func (v SegmentView) OffsetIndexBytes() (int, error) {
	x, err := v.s.OffsetIndex()
	if err != nil {
		return 0, err
	}
	return x.Entries() * index.EntrySize, nil
}

// TimeIndexBytes is the bytes of the time index's entries (Kafka's
// timeIndex.sizeInBytes: entries × 12).
func (v SegmentView) TimeIndexBytes() (int, error) {
	x, err := v.s.TimeIndex()
	if err != nil {
		return 0, err
	}
	return x.SizeInBytes(), nil
}

// IndexEntries returns the offset index's entries as the engine holds
// them (the active segment's unflushed ones included).
func (v SegmentView) IndexEntries() ([]index.Entry, error) {
	x, err := v.s.OffsetIndex()
	if err != nil {
		return nil, err
	}
	return x.AppendAll(nil), nil
}

// TimeIndexEntries returns the time index's entries as the engine holds
// them.
func (v SegmentView) TimeIndexEntries() ([]timeindex.Entry, error) {
	x, err := v.s.TimeIndex()
	if err != nil {
		return nil, err
	}
	return x.AppendAll(nil), nil
}

// AbortedTxns returns the transaction index's entries: the transactions
// aborted in the segment.
func (v SegmentView) AbortedTxns() ([]index.AbortedTxn, error) {
	x, err := v.s.TransactionIndex()
	if err != nil {
		return nil, err
	}
	return x.All(), nil
}
