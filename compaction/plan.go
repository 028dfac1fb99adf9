package compaction

import (
	"fmt"
	"math"
	"sort"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/timeline"
)

// segFacts is what the range and grouping rules read of a segment.
type segFacts struct {
	base int64
	size int64
	// indexBytes and timeIndexBytes are the indexes' sizes as Kafka's
	// AbstractIndex.sizeInBytes has them: the file's length rounded down
	// to whole entries.
	indexBytes, timeIndexBytes int64
	largestTs                  int64 // LogSegment.largestTimestamp
	firstBatchTs               int64 // LogSegment.getFirstBatchTimestamp
	lastModified               int64
}

// logFacts is the log as the range rules see it.
type logFacts struct {
	segs           []segFacts // by base offset; the last is the active segment
	logStart       int64
	logEnd         int64
	lastStable     int64
	highWatermark  int64
	checkpoint     int64
	hasCheckpoint  bool
	now            int64
	cfg            config.Config
	activeProducer map[int64]Producer
	holds          []timeline.Hold
	// held is the index of the first segment a hold pins an offset of,
	// heldBy that hold, when hasHeld.
	held    int
	heldBy  timeline.Hold
	hasHeld bool
}

// findHeld sets held and heldBy: the first segment, in offset order,
// holding an offset [base, next) one of the holds pins.
func (f *logFacts) findHeld() {
	f.held, f.hasHeld = 0, false
	for i := range f.segs {
		lo, hi := f.segs[i].base, f.logEnd
		if i+1 < len(f.segs) {
			hi = f.segs[i+1].base
		}
		for _, h := range f.holds {
			if lo < hi && h.FirstOffset < hi && h.LastOffset >= lo {
				f.held, f.heldBy, f.hasHeld = i, h, true
				return
			}
		}
	}
}

// values returns the indexes [i, j) of the segments Kafka's
// LogSegments.values(from, to) returns: from the one holding from (the
// greatest base at most from, or the first) to those below to.
func (f *logFacts) values(from, to int64) (int, int) {
	if from == to {
		return 0, 0
	}
	// first index whose base > from, minus one: the floor.
	i := sort.Search(len(f.segs), func(i int) bool { return f.segs[i].base > from }) - 1
	if i < 0 {
		i = 0
	}
	j := sort.Search(len(f.segs), func(j int) bool { return f.segs[j].base >= to })
	if j < i {
		j = i
	}
	return i, j
}

// nonActiveFrom is LogSegments.nonActiveLogSegmentsFrom.
func (f *logFacts) nonActiveFrom(from int64) (int, int) {
	active := f.segs[len(f.segs)-1].base
	if from > active {
		return 0, 0
	}
	return f.values(from, active)
}

func (f *logFacts) bytes(i, j int) int64 {
	var n int64
	for _, s := range f.segs[i:j] {
		n += s.size
	}
	return n
}

// cleanableRange fills the range part of r: LogCleanerManager's
// cleanableOffsets, calculateCleanableBytes and maxCompactionDelay, and
// the filter of grabFilthiestCompactedLog.
func (f *logFacts) cleanableRange(r *Report) {
	cfg := &f.cfg
	r.MinCleanableRatio = cfg.MinCleanableDirtyRatio
	r.Checkpoint, r.HasCheckpoint = f.checkpoint, f.hasCheckpoint
	dirty := f.logStart
	if f.hasCheckpoint {
		dirty = f.checkpoint
	}
	if dirty < f.logStart || dirty > f.logEnd {
		dirty, r.CheckpointReset = f.logStart, true
	}
	r.FirstDirtyOffset = dirty

	active := f.segs[len(f.segs)-1].base
	uncleanable, by := f.lastStable, "the last stable offset"
	if active < uncleanable {
		uncleanable, by = active, "the active segment"
	}
	if lag := max(cfg.MinCompactionLagMs, 0); lag > 0 {
		i, j := f.nonActiveFrom(dirty)
		for _, s := range f.segs[i:j] {
			if s.largestTs > f.now-lag {
				if s.base < uncleanable {
					uncleanable, by = s.base, fmt.Sprintf("min.compaction.lag.ms (segment %d's largest timestamp %d is within %d ms of now)", s.base, s.largestTs, lag)
				}
				break
			}
		}
	}
	// A savepoint ends the range at the first segment it pins: a clean
	// rewrites every segment below its end, so none from there on.
	held := f.hasHeld
	r.Holds = f.holds
	if held {
		h := f.heldBy
		r.HeldBy, r.HeldBase = &h, f.segs[f.held].base
		if r.HeldBase < uncleanable {
			uncleanable, by = r.HeldBase, fmt.Sprintf("held by %s, which pins offsets %d to %d of segment %d: a clean never rewrites a held segment, nor any later one",
				h, h.FirstOffset, h.LastOffset, r.HeldBase)
		}
	}
	uncleanable = max(uncleanable, dirty)
	r.FirstUncleanableDirtyOffset, r.UncleanableBy = uncleanable, by

	// Round down to a segment's base (calculateCleanableBytes).
	first := active
	if i, j := f.nonActiveFrom(uncleanable); j > i {
		first = f.segs[i].base
	}
	r.FirstUncleanableOffset = first
	i, j := f.values(min(dirty, first), first)
	r.CleanableBytes = f.bytes(i, j)
	i, j = f.values(-1, dirty)
	r.CleanBytes = f.bytes(i, j)
	r.TotalBytes = r.CleanBytes + r.CleanableBytes
	r.CleanableRatio = float64(r.CleanableBytes) / float64(r.TotalBytes)

	// maxCompactionDelay.
	earliest := int64(math.MaxInt64)
	i, j = f.nonActiveFrom(dirty)
	for _, s := range f.segs[i:j] {
		if s.firstBatchTs > 0 && s.firstBatchTs < earliest {
			earliest = s.firstBatchTs
		}
	}
	cleanUntil := f.now - max(cfg.MaxCompactionLagMs, 0)
	if earliest < cleanUntil {
		r.MaxCompactionDelayMs = cleanUntil - earliest
	}
	r.NeedCompactionNow = r.MaxCompactionDelayMs > 0

	r.DeleteHorizonMs = f.now + cfg.DeleteRetentionMs
	if i, j := f.values(0, dirty); j > i {
		r.LegacyDeleteHorizonMs = f.segs[j-1].lastModified - cfg.DeleteRetentionMs
	}

	switch {
	case !cfg.Compact():
		r.Why = fmt.Sprintf("cleanup.policy is %v, without compact", cfg.CleanupPolicy)
	case held && r.HeldBase < dirty:
		r.Why = fmt.Sprintf("held by %s: it pins segment %d, below the first dirty offset %d, and every clean rewrites the log from its start offset, so none runs while the hold is in force",
			r.HeldBy, r.HeldBase, dirty)
	case r.TotalBytes == 0:
		r.Why = fmt.Sprintf("no bytes below the first uncleanable offset %d (%s)", first, by)
	case r.NeedCompactionNow && r.CleanableBytes > 0:
		r.Cleanable = true
	case r.CleanableRatio > cfg.MinCleanableDirtyRatio:
		r.Cleanable = true
	case r.CleanableBytes == 0:
		r.Why = fmt.Sprintf("nothing is dirty: the dirty section [%d, %d) ends at %s", dirty, first, by)
	default:
		r.Why = fmt.Sprintf("the dirty ratio %d/%d = %.4f is not above min.cleanable.dirty.ratio %g, and no dirty segment is older than max.compaction.lag.ms",
			r.CleanableBytes, r.TotalBytes, r.CleanableRatio, cfg.MinCleanableDirtyRatio)
	}
}

// groupBySize is Cleaner.groupSegmentsBySize over the segments [i, j):
// consecutive segments are merged while the group's log bytes stay within
// maxSize, its offset and time index bytes within maxIndexSize, and —
// unless the next segment is empty — the next segment's estimated last
// offset (the base of the one after it less one, or firstUncleanable-1
// for the last) is within MaxInt32 of the group's base.
func (f *logFacts) groupBySize(i, j int, maxSize, maxIndexSize int64, firstUncleanable int64) [][2]int {
	var groups [][2]int
	for i < j {
		g := i
		logSize, idx, tidx := f.segs[i].size, f.segs[i].indexBytes, f.segs[i].timeIndexBytes
		i++
		for i < j {
			s := &f.segs[i]
			if logSize+s.size > maxSize || idx+s.indexBytes > maxIndexSize || tidx+s.timeIndexBytes > maxIndexSize {
				break
			}
			last := firstUncleanable - 1
			if i+1 < j {
				last = f.segs[i+1].base - 1
			}
			if s.size != 0 && last-f.segs[g].base > math.MaxInt32 {
				break
			}
			logSize += s.size
			idx += s.indexBytes
			tidx += s.timeIndexBytes
			i++
		}
		groups = append(groups, [2]int{g, i})
	}
	return groups
}
