package timeindex

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/vfs"
)

// Layout of one time-index entry (TimeIndex.java).
//
// These constants are part of the wire format and should not be changed.
const (
	timestampAt      = 0               // int64: the largest timestamp up to the offset
	relativeOffsetAt = timestampAt + 8 // int32: offset - baseOffset
	// EntrySize is the size of one .timeindex entry.
	EntrySize = relativeOffsetAt + 4 // 12
)

// Errors. The operational ones are package index's, so that one errors.Is
// covers both kinds of index.
var (
	ErrIndexFull      = index.ErrIndexFull
	ErrOffsetOrder    = index.ErrOffsetOrder
	ErrOffsetOverflow = index.ErrOffsetOverflow
	ErrReadOnly       = index.ErrReadOnly
	ErrInvalidSize    = index.ErrInvalidSize
	ErrClosed         = index.ErrClosed
	ErrCorruptIndex   = index.ErrCorruptIndex

	// ErrTimestampOrder is returned by MaybeAppend for a timestamp below
	// the last entry's (Kafka: IllegalStateException). Nothing is written.
	ErrTimestampOrder = errors.New("timeindex: timestamp out of order")
)

// Entry is one time-index entry: Timestamp is the largest timestamp of the
// segment's records up to Offset (absolute), so any record with a larger
// timestamp comes after Offset.
type Entry struct {
	Timestamp int64
	Offset    int64
}

// AppendEntry appends the 12-byte encoding of e, relative to baseOffset, to
// dst. It returns an error wrapping ErrOffsetOverflow, and dst unchanged,
// when e.Offset - baseOffset is outside [0, MaxInt32].
func AppendEntry(dst []byte, baseOffset int64, e Entry) ([]byte, error) {
	rel, ok := indexfile.Relative(e.Offset, baseOffset)
	if !ok {
		return dst, fmt.Errorf("%w: offset %d with base offset %d", ErrOffsetOverflow, e.Offset, baseOffset)
	}
	dst = format.AppendInt64(dst, e.Timestamp)
	return format.AppendInt32(dst, rel), nil
}

// DecodeEntry decodes the entry at the start of b, which must hold at least
// EntrySize bytes, relative to baseOffset.
func DecodeEntry(b []byte, baseOffset int64) Entry {
	_ = b[EntrySize-1]
	return Entry{Timestamp: format.Int64(b[timestampAt:]), Offset: baseOffset + int64(format.Int32(b[relativeOffsetAt:]))}
}

// TimeIndex is a segment's .timeindex file: a sparse map from timestamps to
// offsets (Kafka's TimeIndex). See the package documentation for the
// format, the storage and the concurrency contract.
type TimeIndex struct {
	f    *indexfile.File
	base int64
}

// OpenTimeIndex opens the time index at path of fsys for the segment whose
// base offset is baseOffset, as index.OpenOffsetIndex opens an offset
// index: o.Writable creates a missing file, preallocated to
// roundDown(o.MaxIndexSize, 12) (10485756 bytes at the default), read-only
// never modifies the file, and an existing file is trusted as Kafka trusts
// it (floor(length/12) entries; see Padding).
func OpenTimeIndex(fsys vfs.FS, path string, baseOffset int64, o index.OpenOptions) (*TimeIndex, error) {
	size := o.MaxIndexSize
	if size == 0 {
		size = indexfile.DefaultMaxIndexSize
	}
	f, err := indexfile.Open(fsys, path, EntrySize, size, o.Writable)
	if err != nil {
		return nil, err
	}
	return &TimeIndex{f: f, base: baseOffset}, nil
}

// BaseOffset returns the base offset of the index's segment.
func (x *TimeIndex) BaseOffset() int64 { return x.base }

// Path returns the index file's name.
func (x *TimeIndex) Path() string { return x.f.Path() }

// Entries returns the number of entries.
func (x *TimeIndex) Entries() int { return x.f.Entries() }

// MaxEntries returns how many entries the file has room for.
func (x *TimeIndex) MaxEntries() int { return x.f.MaxEntries() }

// Length returns the index file's length in bytes.
func (x *TimeIndex) Length() int64 { return x.f.Length() }

// SizeInBytes returns the bytes the entries use: Entries()*12.
func (x *TimeIndex) SizeInBytes() int { return x.f.Entries() * EntrySize }

// IsFull reports whether the index is full for ordinary appends:
// Entries() >= MaxEntries()-1. The last slot is kept for the entry a
// segment writes when it rolls or closes (MaybeAppend with skipFullCheck).
func (x *TimeIndex) IsFull() bool {
	v := x.f.View()
	return v.Entries() >= v.MaxEntries()-1
}

// Entry returns entry i, which must be in [0, Entries()); it panics
// otherwise (a concurrent TruncateTo can make an index that was in range
// out of range: use AppendAll or LastEntry for a consistent read).
func (x *TimeIndex) Entry(i int) Entry {
	v := x.f.View()
	return DecodeEntry(v.Entry(i), x.base)
}

// AppendAll appends every entry to dst, all from one snapshot (unlike a
// loop over Entry, which a concurrent TruncateTo can cut short).
func (x *TimeIndex) AppendAll(dst []Entry) []Entry {
	v := x.f.View()
	for i := range v.Entries() {
		dst = append(dst, DecodeEntry(v.Entry(i), x.base))
	}
	return dst
}

// LastEntry returns the last entry, or (format.NoTimestamp, BaseOffset()) when
// the index is empty. Its timestamp is what Kafka takes as the segment's
// largest timestamp for time-based retention once the segment is loaded.
func (x *TimeIndex) LastEntry() Entry {
	v := x.f.View()
	return x.lastEntry(v)
}

func (x *TimeIndex) lastEntry(v *indexfile.View) Entry {
	if v.Entries() == 0 {
		return Entry{Timestamp: format.NoTimestamp, Offset: x.base}
	}
	return DecodeEntry(v.Entry(v.Entries()-1), x.base)
}

// Lookup returns the entry with the largest timestamp at most ts, or
// (format.NoTimestamp, BaseOffset()) if there is none: the offset from which to
// scan for the first record at or after ts. It does not allocate. On a
// damaged file it returns what Kafka's search returns.
func (x *TimeIndex) Lookup(ts int64) Entry {
	v := x.f.View()
	slot := lookupSlot(v.Data(), v.Entries(), ts)
	if slot < 0 {
		return Entry{Timestamp: format.NoTimestamp, Offset: x.base}
	}
	return DecodeEntry(v.Entry(slot), x.base)
}

// lookupSlot is indexfile.LargestLowerBound over the timestamps of the first n
// entries (data holding a prefix of them, the rest being zero), written out
// so that the key access is inlined.
func lookupSlot(data []byte, n int, ts int64) int {
	if n == 0 {
		return -1
	}
	key := func(i int) int64 {
		if off := i * EntrySize; off+8 <= len(data) {
			return format.Int64(data[off:])
		}
		return 0
	}
	const warm = indexfile.WarmSectionBytes / EntrySize
	firstHot := max(0, n-1-warm)
	lo, hi := 0, firstHot
	if key(firstHot) < ts {
		lo, hi = firstHot, n-1
	} else if key(0) > ts {
		return -1
	}
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		switch k := key(mid); {
		case k > ts:
			hi = mid - 1
		case k < ts:
			lo = mid
		default:
			return mid
		}
	}
	return lo
}

// MaybeAppend adds (ts, offset) if ts is larger than the last entry's
// timestamp (or, for an empty index, than format.NoTimestamp), as Kafka's
// maybeAppend does; otherwise it does nothing, so that timestamps in the
// file strictly increase. Checked in Kafka's order, before anything is
// written: the index must not be full unless skipFullCheck (ErrIndexFull;
// the segment passes skipFullCheck for the entry it writes at roll and
// close, which uses the slot IsFull keeps); with entries, offset must not
// be below the last entry's (ErrOffsetOrder) nor ts below its timestamp
// (ErrTimestampOrder); and the offset must fit relative to the base
// (ErrOffsetOverflow). Even with skipFullCheck nothing is written past the
// file's length: where Kafka overflows its buffer (KAFKA-12734), this
// returns ErrIndexFull.
func (x *TimeIndex) MaybeAppend(ts, offset int64, skipFullCheck bool) error {
	v := x.f.View()
	if !x.f.Writable() {
		return fmt.Errorf("%s: %w", x.Path(), ErrReadOnly)
	}
	if x.f.Closed() {
		return fmt.Errorf("%s: %w", x.Path(), ErrClosed)
	}
	if !skipFullCheck && v.Entries() >= v.MaxEntries()-1 {
		return fmt.Errorf("%s: %w: %d entries (append of timestamp %d)", x.Path(), ErrIndexFull, v.Entries(), ts)
	}
	last := x.lastEntry(v)
	if v.Entries() != 0 && offset < last.Offset {
		return fmt.Errorf("%s: %w: offset %d is below the last offset %d (slot %d)", x.Path(), ErrOffsetOrder, offset, last.Offset, v.Entries())
	}
	if v.Entries() != 0 && ts < last.Timestamp {
		return fmt.Errorf("%s: %w: timestamp %d is below the last timestamp %d (slot %d)", x.Path(), ErrTimestampOrder, ts, last.Timestamp, v.Entries())
	}
	if ts <= last.Timestamp {
		return nil
	}
	var buf [EntrySize]byte
	b, err := AppendEntry(buf[:0], x.base, Entry{Timestamp: ts, Offset: offset})
	if err != nil {
		return fmt.Errorf("%s: %w", x.Path(), err)
	}
	return x.f.Append(b)
}

// TruncateTo removes the entries whose offset is at least offset (Kafka's
// truncateTo). On offsets that repeat (Kafka allows an entry to share its
// offset with the one before) every such entry goes, where Kafka's search
// may keep one. The file keeps its length; the removed slots are zeroed.
func (x *TimeIndex) TruncateTo(offset int64) error {
	if !x.f.Writable() {
		return fmt.Errorf("%s: %w", x.Path(), ErrReadOnly)
	}
	v := x.f.View()
	n := v.Entries()
	for i := 0; i < v.Entries(); i++ {
		if DecodeEntry(v.Entry(i), x.base).Offset >= offset {
			n = i
			break
		}
	}
	return x.f.TruncateEntries(n)
}

// Reset removes every entry and resizes the file back to its maximum size
// (Kafka's reset, the first step of segment recovery).
func (x *TimeIndex) Reset() error { return x.f.Reset() }

// TrimToValidSize cuts the file to its entries: length Entries()*12.
func (x *TimeIndex) TrimToValidSize() error { return x.f.TrimToValidSize() }

// Resize sets the file's length to roundDown(newSize, 12), as Kafka's
// AbstractIndex.resize does, and reports whether it changed. A size that
// would cut off entries fails with ErrInvalidSize.
func (x *TimeIndex) Resize(newSize int) (bool, error) { return x.f.Resize(newSize) }

// SanityCheck runs Kafka's TimeIndex.sanityCheck: with entries, the last
// timestamp must not be below the first and the last offset not below the
// base offset, and the file length must be a multiple of 12. A failure is a
// *format.CorruptionError matching ErrCorruptIndex and format.ErrInvalid
// (Kafka's CorruptIndexException). An untrimmed index fails it whenever its
// first timestamp is above 0, since Kafka reads the zero padding as a last
// entry with timestamp 0; the message then says so (see Padding).
func (x *TimeIndex) SanityCheck() error {
	v := x.f.View()
	if v.Entries() != 0 {
		first := DecodeEntry(v.Entry(0), x.base)
		last := x.lastEntry(v)
		if last.Timestamp < first.Timestamp {
			why := ""
			if p := x.Padding(); p.Untrimmed {
				why = fmt.Sprintf("; the index is untrimmed: its last %d entries are zero padding", p.Entries-p.ValidEntries)
			}
			return indexfile.CorruptIndexf(x.Path(), int64(v.Entries()-1)*EntrySize,
				"the last timestamp %d is below the first timestamp %d%s", last.Timestamp, first.Timestamp, why)
		}
		if last.Offset < x.base {
			return indexfile.CorruptIndexf(x.Path(), int64(v.Entries()-1)*EntrySize,
				"the last offset %d is below the base offset %d", last.Offset, x.base)
		}
	}
	if v.Length()%EntrySize != 0 {
		return indexfile.CorruptIndexf(x.Path(), v.Length()-v.Length()%EntrySize,
			"the file holds %d bytes, not a multiple of %d", v.Length(), EntrySize)
	}
	return nil
}

// Padding reports the zero entries an untrimmed index file leaves at the
// end of those Kafka trusts. Kafka would take the last of them, (0,
// BaseOffset()), as the segment's largest timestamp and delete the segment
// at once for time-based retention (KAFKA-10207).
func (x *TimeIndex) Padding() index.Padding { return index.Padding(x.f.Padding()) }

// DiscardPadding drops the entries Padding reports as zero padding and
// reports whether there were any: the index then holds what it would hold
// had it been trimmed before the broker stopped (Entries becomes
// Padding().ValidEntries), and the zero slots are free for appends again.
// The file is not changed, so a read-only index may discard its padding
// too.
func (x *TimeIndex) DiscardPadding() (bool, error) { return x.f.DiscardPadding() }

// Flush makes the file durable (Sync).
func (x *TimeIndex) Flush() error { return x.f.Flush() }

// Close closes the file without trimming it; the entries stay readable.
func (x *TimeIndex) Close() error { return x.f.Close() }

// Rename renames the file.
func (x *TimeIndex) Rename(newPath string) error { return x.f.Rename(newPath) }

// Delete closes and removes the file; a file already gone is not an error.
func (x *TimeIndex) Delete() error { return x.f.Delete() }
