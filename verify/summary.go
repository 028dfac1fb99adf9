package verify

import (
	"errors"
	"io"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/record"
)

// LogSummary is the result of SummarizeLog.
type LogSummary struct {
	Path    string
	Size    int64 // the file's size
	Entries []LogEntrySummary
	// ValidEnd is the position after the last valid entry: where recovery
	// would truncate the log.
	ValidEnd int64
	// Err is the corruption that stopped the walk (entries before it are
	// valid), nil when the walk reached the end or a torn or zero tail.
	Err error
}

// SummarizeLog walks the segment file r (size bytes, named path) with a
// record.ReaderScanner, in bounded memory, and summarises each entry. Each
// batch's records are decoded (and decompressed) to find the offset of its
// max timestamp and its control markers; a batch whose records cannot be
// read keeps LastOffset as that offset. Corruption stops the walk and is
// reported in LogSummary.Err; only read errors are returned.
func SummarizeLog(r io.ReaderAt, size int64, path string) (*LogSummary, error) {
	s := &LogSummary{Path: path, Size: size}
	var rs record.ReaderScanner
	var it record.Iterator
	var lit record.LegacyIterator
	var rec record.Record
	rs.Reset(r, size, path, 0)
	for rs.Next() {
		e := rs.Entry()
		sum := LogEntrySummary{
			Position: e.Position, Size: int64(e.Size()), Magic: e.Magic,
			BaseOffset: e.BaseOffset(), LastOffset: e.LastOffset(), MaxTimestamp: e.MaxTimestamp(),
			OffsetOfMaxTimestamp: e.LastOffset(), ProducerID: record.NoProducerID,
		}
		if e.Magic == record.MagicV2 {
			b := &e.Batch
			sum.Compressed = b.Attributes.Codec() != compress.None
			sum.LogAppendTime = b.Attributes.TimestampType() == record.LogAppendTime
			sum.Transactional = b.Attributes.IsTransactional()
			sum.Control = b.Attributes.IsControl()
			sum.ProducerID = b.ProducerID
			found := false
			it.Reset(b)
			for it.Next(&rec) {
				if !found && rec.Timestamp == b.MaxTimestamp {
					sum.OffsetOfMaxTimestamp, found = rec.Offset, true
				}
				if sum.Control {
					if t, err := record.ParseControlKey(rec.Key); err == nil && t == record.ControlAbort {
						sum.Abort = true
					}
				}
			}
		} else {
			sum.Compressed = e.Legacy.Codec() != compress.None
			sum.LogAppendTime = e.Legacy.TimestampType() == record.LogAppendTime
			if sum.Compressed {
				lit.Reset(&e.Legacy)
				first := true
				for lit.Next(&rec) {
					if first {
						sum.BaseOffset, first = rec.Offset, false
					}
				}
			}
		}
		s.Entries = append(s.Entries, sum)
	}
	s.ValidEnd = rs.ValidEnd()
	if err := rs.Err(); err != nil {
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return nil, err
		}
		s.Err = err
	}
	return s, nil
}
