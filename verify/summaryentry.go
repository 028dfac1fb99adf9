package verify

// LogEntrySummary is what index verification and reconstruction need to
// know about one entry of a .log: a v2 batch or a legacy (v0/v1) message.
type LogEntrySummary struct {
	Position   int64 // byte position of the entry in the .log
	Size       int64 // bytes, log overhead included
	Magic      int8
	BaseOffset int64 // for a legacy entry, its own offset (a compressed wrapper's last inner offset)
	LastOffset int64
	// MaxTimestamp is the batch's maxTimestamp (a legacy message's
	// timestamp), NoTimestamp (-1) for v0.
	MaxTimestamp int64
	// OffsetOfMaxTimestamp is the offset of the first record whose
	// timestamp is MaxTimestamp: what a Kafka leader before 3.8 stored in
	// the time index for an uncompressed CreateTime batch. It is LastOffset
	// when no record carries MaxTimestamp (an empty batch) or the records
	// could not be read.
	OffsetOfMaxTimestamp int64
	Compressed           bool
	LogAppendTime        bool
	Transactional        bool
	Control              bool
	ProducerID           int64
	// Abort is set on a control batch that holds an ABORT marker.
	Abort bool
}

// End returns the position just after the entry.
func (e *LogEntrySummary) End() int64 { return e.Position + e.Size }
