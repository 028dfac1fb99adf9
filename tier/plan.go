package tier

// LocalSegment is what the retention plans need of one local segment.
type LocalSegment struct {
	BaseOffset       int64
	Size             int64
	LargestTimestamp int64
}

// Reasons a plan gives for a deletion.
const (
	ReasonRetentionMs    = "retention.ms"
	ReasonRetentionBytes = "retention.bytes"
	ReasonLocalMs        = "local.retention.ms"
	ReasonLocalBytes     = "local.retention.bytes"
	ReasonLogStartOffset = "log start offset"
)

// LocalParams are the inputs of PlanLocal.
type LocalParams struct {
	NowMs int64
	// LogEndOffset and HighWatermark of the log.
	LogEndOffset, HighWatermark int64
	// HighestCopiedOffset is the highest offset in remote storage (-1:
	// none) and LogStartOffset the log's (earliest) start offset.
	HighestCopiedOffset, LogStartOffset int64
	// RetentionMs and RetentionBytes are the effective local limits (-1:
	// none).
	RetentionMs, RetentionBytes int64
}

// PlanLocal returns how many of the oldest local segments local retention
// deletes, and why, with the rules of UnifiedLog.deletableSegments when
// remote storage is on: a segment goes only if it is not the active one,
// everything in it is in remote storage (nextBase-1 <= highest copied) or
// below the log start offset, the high watermark has reached its end,
// and local.retention.ms (now - largestTimestamp > limit) or then
// local.retention.bytes (while the local size minus the segment stays at
// or above the limit) passes it. The time pass runs first, then the size
// pass over what is left, as UnifiedLog.deleteOldSegments does.
func PlanLocal(segs []LocalSegment, p LocalParams) (n int, reasons []string) {
	eligible := func(i int) bool {
		if i+1 >= len(segs) {
			return false // the active segment
		}
		upper := segs[i+1].BaseOffset
		inRemote := upper > 0 && upper-1 <= p.HighestCopiedOffset
		return (inRemote || p.LogStartOffset >= upper) && p.HighWatermark >= upper
	}
	for n < len(segs) && eligible(n) {
		if segs[n+1].BaseOffset <= p.LogStartOffset {
			reasons = append(reasons, ReasonLogStartOffset)
		} else if p.RetentionMs >= 0 && p.NowMs-segs[n].LargestTimestamp > p.RetentionMs {
			reasons = append(reasons, ReasonLocalMs)
		} else {
			break
		}
		n++
	}
	if p.RetentionBytes < 0 {
		return n, reasons
	}
	var size int64
	for _, s := range segs[n:] {
		size += s.Size
	}
	if size < p.RetentionBytes {
		return n, reasons
	}
	diff := size - p.RetentionBytes
	for n < len(segs) && eligible(n) && diff-segs[n].Size >= 0 {
		diff -= segs[n].Size
		reasons = append(reasons, ReasonLocalBytes)
		n++
	}
	return n, reasons
}

// RemoteParams are the inputs of PlanRemote.
type RemoteParams struct {
	NowMs int64
	// OnlyLocalSize is the size of the local segments not in remote
	// storage (UnifiedLog.onlyLocalLogSegmentsSize).
	OnlyLocalSize int64
	// RetentionMs and RetentionBytes are the topic's retention.ms and
	// retention.bytes (-1: none).
	RetentionMs, RetentionBytes int64
}

// PlanRemote returns how many of segs (the copied segments, oldest first)
// total retention deletes, and why, with the rules of
// RemoteLogManager.RLMExpirationTask: a segment goes when its
// maxTimestampMs <= now - retention.ms, or while the total size (remote
// plus local-only) minus what was already chosen still exceeds
// retention.bytes by at least the segment's size; the first segment kept
// ends the run.
func PlanRemote(segs []SegmentMetadata, p RemoteParams) (n int, reasons []string) {
	var breached int64
	if p.RetentionBytes > -1 {
		total := p.OnlyLocalSize
		for _, s := range segs {
			total += s.SegmentSizeInBytes
		}
		breached = max(total-p.RetentionBytes, 0)
	}
	for _, s := range segs {
		switch {
		case p.RetentionMs > -1 && s.MaxTimestampMs <= p.NowMs-p.RetentionMs:
			breached = max(0, breached-s.SegmentSizeInBytes)
			reasons = append(reasons, ReasonRetentionMs)
		case breached > 0 && breached-s.SegmentSizeInBytes >= 0:
			breached -= s.SegmentSizeInBytes
			reasons = append(reasons, ReasonRetentionBytes)
		default:
			return n, reasons
		}
		n++
	}
	return n, reasons
}

// Candidate is a local segment the copy rule picks, with the base offset
// of the segment after it.
type Candidate struct {
	BaseOffset, NextBaseOffset int64
}

// PlanCopy returns the segments to copy, oldest first, with the rule of
// RemoteLogManager.RLMCopyTask.candidateLogSegments: from the segment
// holding max(highestCopied+1, logStart), every segment whose next
// segment's base offset is at or below the last stable offset; never the
// active one. Nothing is copied unless lso > 0 and highestCopied < lso.
// bases are the local segments' base offsets, ascending.
func PlanCopy(bases []int64, highestCopied, logStart, lso int64) []Candidate {
	if lso <= 0 || highestCopied >= lso {
		return nil
	}
	from := max(highestCopied+1, logStart)
	i := 0
	for j, b := range bases {
		if b <= from {
			i = j
		}
	}
	var out []Candidate
	for j := i + 1; j < len(bases); j++ {
		if bases[j] <= lso {
			out = append(out, Candidate{bases[j-1], bases[j]})
		}
	}
	return out
}
