package retention_test

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/segkit/segkit/retention"
)

// refPlan is a second, independent model of Kafka's deleteOldSegments,
// written as a line-by-line transliteration of UnifiedLog.java
// (deletableSegments, deleteSegments and the three rules) over a mutable
// log, with time arithmetic in math/big. Plan must agree with it on every
// input.
func refPlan(st retention.LogState, p retention.Policy, now int64) (dels []refDel, newLSO int64, rolled bool) {
	l := &refLog{segs: slices.Clone(st.Segments), lso: st.LogStartOffset, leo: st.LogEndOffset, hw: st.HighWatermark}
	l.deleteLogStartOffsetBreachedSegments()
	if slices.Contains(p.CleanupPolicy, "delete") {
		l.deleteRetentionSizeBreachedSegments(p.RetentionBytes)
		l.deleteRetentionMsBreachedSegments(p.RetentionMs, now)
	}
	return l.dels, l.lso, l.rolled
}

type refDel struct {
	Base   int64
	Reason retention.Reason
}

func (d refDel) String() string { return fmt.Sprintf("%d:%s", d.Base, d.Reason) }

type refLog struct {
	segs         []retention.SegmentInfo
	lso, leo, hw int64
	dels         []refDel
	rolled       bool
}

func (l *refLog) deletableSegments(pred func(seg retention.SegmentInfo, next *retention.SegmentInfo) bool) int {
	n := 0
	for i := 0; i < len(l.segs); i++ {
		seg := l.segs[i]
		var next *retention.SegmentInfo
		if i+1 < len(l.segs) {
			next = &l.segs[i+1]
		}
		isLastSegmentAndEmpty := next == nil && seg.Size == 0
		upperBoundOffset := l.leo
		if next != nil {
			upperBoundOffset = next.BaseOffset
		}
		predicateResult := l.hw >= upperBoundOffset && pred(seg, next)
		if predicateResult && !isLastSegmentAndEmpty {
			n++
		} else {
			break
		}
	}
	return n
}

func (l *refLog) deleteSegments(n int, reason retention.Reason) {
	if n == 0 {
		return
	}
	if n == len(l.segs) {
		// roll(): a new segment at max(0, logEndOffset).
		l.segs = append(l.segs, retention.SegmentInfo{BaseOffset: l.leo, LargestRecordTimestamp: -1, FirstBatchTimestamp: -1})
		l.rolled = true
	}
	newStart := l.segs[n].BaseOffset
	if newStart > l.lso {
		l.lso = newStart
	}
	for _, s := range l.segs[:n] {
		l.dels = append(l.dels, refDel{s.BaseOffset, reason})
	}
	l.segs = l.segs[n:]
}

func (l *refLog) deleteLogStartOffsetBreachedSegments() {
	n := l.deletableSegments(func(_ retention.SegmentInfo, next *retention.SegmentInfo) bool {
		return next != nil && next.BaseOffset <= l.lso
	})
	l.deleteSegments(n, retention.ReasonLogStartOffset)
}

func (l *refLog) deleteRetentionSizeBreachedSegments(retentionSize int64) {
	var logSize big.Int
	for _, s := range l.segs {
		logSize.Add(&logSize, big.NewInt(s.Size))
	}
	if retentionSize < 0 || logSize.Cmp(big.NewInt(retentionSize)) < 0 {
		return
	}
	diff := new(big.Int).Sub(&logSize, big.NewInt(retentionSize))
	n := l.deletableSegments(func(seg retention.SegmentInfo, _ *retention.SegmentInfo) bool {
		after := new(big.Int).Sub(diff, big.NewInt(seg.Size))
		if after.Sign() >= 0 {
			diff = after
			return true
		}
		return false
	})
	l.deleteSegments(n, retention.ReasonSize)
}

func (l *refLog) deleteRetentionMsBreachedSegments(retentionMs, startMs int64) {
	if retentionMs < 0 {
		return
	}
	n := l.deletableSegments(func(seg retention.SegmentInfo, _ *retention.SegmentInfo) bool {
		largest := seg.LargestRecordTimestamp
		if largest < 0 {
			largest = seg.LastModified
		}
		age := new(big.Int).Sub(big.NewInt(startMs), big.NewInt(largest))
		return age.Cmp(big.NewInt(retentionMs)) > 0
	})
	l.deleteSegments(n, retention.ReasonTime)
}

// planDels returns a plan's deletions in refPlan's form.
func planDels(p retention.Plan) []refDel {
	var out []refDel
	for _, d := range p.Deletions {
		out = append(out, refDel{d.BaseOffset, d.Reason})
	}
	return out
}
