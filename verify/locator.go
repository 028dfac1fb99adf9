package verify

import (
	"sort"
)

// Locator answers questions about a summarised log's entries by position
// and by offset; the verifiers of both kinds of index share it.
type Locator struct {
	entries []LogEntrySummary
	maxTs   []int64 // maxTs[i]: the largest MaxTimestamp of entries [0, i]
	maxLast []int64 // maxLast[i]: the largest LastOffset of entries [0, i]
}

// NewLocator indexes entries, which must be in file order.
func NewLocator(entries []LogEntrySummary) *Locator {
	l := &Locator{entries: entries, maxTs: make([]int64, len(entries)), maxLast: make([]int64, len(entries))}
	ts, last := int64(-1), int64(-1)
	for i, e := range entries {
		ts, last = max(ts, e.MaxTimestamp), max(last, e.LastOffset)
		l.maxTs[i], l.maxLast[i] = ts, last
	}
	return l
}

// End returns the position after the last entry.
func (l *Locator) End() int64 {
	if len(l.entries) == 0 {
		return 0
	}
	return l.entries[len(l.entries)-1].End()
}

// LastOffset returns the log's largest offset, or -1 for an empty log.
func (l *Locator) LastOffset() int64 {
	if len(l.entries) == 0 {
		return -1
	}
	return l.maxLast[len(l.maxLast)-1]
}

// AtPosition returns the index of the entry starting at pos, or -1.
func (l *Locator) AtPosition(pos int64) int {
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].Position >= pos })
	if i < len(l.entries) && l.entries[i].Position == pos {
		return i
	}
	return -1
}

// Holding returns the index of the first entry whose LastOffset is at
// least offset (where a scan for offset stops), and whether that entry
// holds offset (its BaseOffset is not above it).
func (l *Locator) Holding(offset int64) (int, bool) {
	i := sort.Search(len(l.entries), func(i int) bool { return l.maxLast[i] >= offset })
	if i == len(l.entries) {
		return -1, false
	}
	return i, l.entries[i].BaseOffset <= offset
}

// MaxTimestampThrough returns the largest MaxTimestamp of entries [0, i].
func (l *Locator) MaxTimestampThrough(i int) int64 { return l.maxTs[i] }

// MaxLastOffsetThrough returns the largest LastOffset of entries [0, i].
func (l *Locator) MaxLastOffsetThrough(i int) int64 { return l.maxLast[i] }

// Entry returns entry i.
func (l *Locator) Entry(i int) *LogEntrySummary { return &l.entries[i] }
