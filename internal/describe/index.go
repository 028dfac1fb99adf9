package describe

import (
	"fmt"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/timeindex"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// IndexKind is the kind of an index of fixed-size entries beside a
// segment: its offset index or its time index.
type IndexKind int8

// The index kinds.
const (
	// OffsetIndex is a .index: (offset, log position) entries.
	OffsetIndex IndexKind = iota
	// TimeIndex is a .timeindex: (timestamp, offset) entries.
	TimeIndex
)

// String is the kind's name in the visualiser's requests: "offset" or
// "time".
func (k IndexKind) String() string {
	if k == TimeIndex {
		return "time"
	}
	return "offset"
}

// EntrySize is the size of one of the kind's entries in its file.
func (k IndexKind) EntrySize() int {
	if k == TimeIndex {
		return timeindex.EntrySize
	}
	return index.EntrySize
}

// IndexEntry describes one entry of an offset or a time index.
type IndexEntry struct {
	Kind IndexKind
	// Slot is the entry's number in its file, Position its byte position
	// there (Slot times the entry size).
	Slot     int
	Position int64
	// Offset is the entry's (absolute) offset.
	Offset int64
	// LogPosition is an offset index entry's byte position in the .log.
	LogPosition int32
	// Timestamp is a time index entry's timestamp.
	Timestamp int64
}

// Pair returns the two numbers the entry stores, in its file's order:
// (offset, log position) for an offset index, (timestamp, offset) for a
// time index.
func (e *IndexEntry) Pair() (int64, int64) {
	if e.Kind == TimeIndex {
		return e.Timestamp, e.Offset
	}
	return e.Offset, int64(e.LogPosition)
}

// OutOfOrder returns the problem with e if it does not follow prev, the
// entry before it in its file, as entries of its kind must: the first
// number of Pair increases (an offset index's offset, a time index's
// timestamp) and the second never decreases (the log position, the
// offset). The problem is the one verify reports for the same entries
// (finding.KindIndexOffsetOrder or finding.KindTimeOutOfOrder), about file.
func (e *IndexEntry) OutOfOrder(file string, prev *IndexEntry) (finding.Problem, bool) {
	a, b := e.Pair()
	pa, pb := prev.Pair()
	if a > pa && b >= pb {
		return finding.Problem{}, false
	}
	kind, detail := finding.KindIndexOffsetOrder, fmt.Sprintf("entry (offset %d, position %d) follows (offset %d, position %d)", a, b, pa, pb)
	if e.Kind == TimeIndex {
		kind = finding.KindTimeOutOfOrder
		detail = fmt.Sprintf("entry (timestamp %s, offset %d) follows (timestamp %s, offset %d)", finding.Timestamp(a), b, finding.Timestamp(pa), pb)
	}
	return finding.Problem{File: file, Position: e.Position, Kind: kind, Level: finding.Error, Detail: detail}, true
}

// Index is an offset or a time index, opened read-only, behind one type:
// what a dump or a page of entries reads of either kind. Its methods are
// those of the index type beneath (index.OffsetIndex or
// timeindex.TimeIndex), with entries as IndexEntry views.
type Index struct {
	f      entryFile // offset or time
	kind   IndexKind
	offset *index.OffsetIndex
	time   *timeindex.TimeIndex
}

// entryFile is what both index types have in common.
type entryFile interface {
	Entries() int
	Length() int64
	Padding() index.Padding
	SanityCheck() error
	Close() error
}

var (
	_ entryFile = (*index.OffsetIndex)(nil)
	_ entryFile = (*timeindex.TimeIndex)(nil)
)

// OpenIndex opens the index of the given kind at path of fsys, read-only,
// for the segment of base offset base. A missing file is an error matching
// fs.ErrNotExist.
func OpenIndex(fsys vfs.FS, path string, base int64, kind IndexKind) (*Index, error) {
	x := &Index{kind: kind}
	var err error
	if kind == TimeIndex {
		x.time, err = timeindex.OpenTimeIndex(fsys, path, base, index.OpenOptions{})
		x.f = x.time
	} else {
		x.offset, err = index.OpenOffsetIndex(fsys, path, base, index.OpenOptions{})
		x.f = x.offset
	}
	if err != nil {
		return nil, err
	}
	return x, nil
}

// Kind returns the index's kind.
func (x *Index) Kind() IndexKind { return x.kind }

// Offset returns the offset index beneath, nil for a time index.
func (x *Index) Offset() *index.OffsetIndex { return x.offset }

// Time returns the time index beneath, nil for an offset index.
func (x *Index) Time() *timeindex.TimeIndex { return x.time }

// Entries returns the number of entries Kafka reads in the file
// (floor(size/entry size)), zero padding included.
func (x *Index) Entries() int { return x.f.Entries() }

// Length returns the file's size.
func (x *Index) Length() int64 { return x.f.Length() }

// Padding reports the file's trailing zero entries.
func (x *Index) Padding() index.Padding { return x.f.Padding() }

// SanityCheck runs Kafka's sanity check of the index.
func (x *Index) SanityCheck() error { return x.f.SanityCheck() }

// Close closes the file.
func (x *Index) Close() error { return x.f.Close() }

// Entry returns entry i, which must be in [0, Entries()).
func (x *Index) Entry(i int) IndexEntry {
	if x.time != nil {
		return x.timeEntry(i, x.time.Entry(i))
	}
	return x.offsetEntry(i, x.offset.Entry(i))
}

// AppendAll appends every entry to dst, all read at once (see
// index.OffsetIndex.AppendAll).
func (x *Index) AppendAll(dst []IndexEntry) []IndexEntry {
	if x.time != nil {
		for i, e := range x.time.AppendAll(nil) {
			dst = append(dst, x.timeEntry(i, e))
		}
		return dst
	}
	for i, e := range x.offset.AppendAll(nil) {
		dst = append(dst, x.offsetEntry(i, e))
	}
	return dst
}

func (x *Index) offsetEntry(i int, e index.Entry) IndexEntry {
	return IndexEntry{Kind: OffsetIndex, Slot: i, Position: int64(i) * index.EntrySize, Offset: e.Offset, LogPosition: e.Position}
}

func (x *Index) timeEntry(i int, e timeindex.Entry) IndexEntry {
	return IndexEntry{Kind: TimeIndex, Slot: i, Position: int64(i) * timeindex.EntrySize, Offset: e.Offset, Timestamp: e.Timestamp}
}

// Verify cross-checks the index against the entries of its segment's log
// (verify.OffsetIndex or verify.TimeIndex).
func (x *Index) Verify(log []verify.LogEntrySummary) []finding.Problem {
	if x.time != nil {
		return verify.TimeIndex(x.time, log)
	}
	return verify.OffsetIndex(x.offset, log)
}
