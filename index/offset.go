package index

import (
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/indexfile"
	"github.com/segkit/segkit/vfs"
)

// OffsetIndex is a segment's .index file: a sparse map from offsets to
// byte positions in the segment's .log (Kafka's OffsetIndex). See the
// package documentation for the format, the storage and the concurrency
// contract.
type OffsetIndex struct {
	f    *indexfile.File
	base int64
}

// OpenOptions are how an index file is opened. The zero value opens it
// read-only.
type OpenOptions struct {
	// Writable opens the file for appends, truncation and trimming, and
	// creates it if it is missing. Without it the file is never modified
	// (this is how verify, dump and the WASM viewer open indexes), and a
	// missing file is an error matching fs.ErrNotExist (except for a
	// .txnindex, which is then empty).
	Writable bool
	// MaxIndexSize is segment.index.bytes: what a writable offset or time
	// index created here is preallocated to, and the most it may grow to;
	// 0 means Kafka's default segment.index.bytes, 10 MiB. It must hold one entry (ErrInvalidSize).
	// A read-only open ignores it, as does a transaction index.
	MaxIndexSize int
}

// maxIndexSize returns o.MaxIndexSize or its default.
func (o OpenOptions) maxIndexSize() int {
	if o.MaxIndexSize == 0 {
		return indexfile.DefaultMaxIndexSize
	}
	return o.MaxIndexSize
}

// OpenOffsetIndex opens the offset index at path of fsys for the segment
// whose base offset is baseOffset.
//
// When o.Writable, a missing file is created and preallocated to
// roundDown(o.MaxIndexSize, 8) with zeros, and an existing file keeps its
// length: a rolled segment's trimmed index stays trimmed, and the active
// segment's gets its room back from Resize, as Kafka resizes it when it
// loads the log. Read-only, the file is never modified.
//
// An existing file is trusted as Kafka trusts it: floor(length/8) entries.
// Padding reports the zero entries among them that an untrimmed index
// leaves; DiscardPadding drops them.
func OpenOffsetIndex(fsys vfs.FS, path string, baseOffset int64, o OpenOptions) (*OffsetIndex, error) {
	f, err := indexfile.Open(fsys, path, EntrySize, o.maxIndexSize(), o.Writable)
	if err != nil {
		return nil, err
	}
	return &OffsetIndex{f: f, base: baseOffset}, nil
}

// BaseOffset returns the base offset of the index's segment.
func (x *OffsetIndex) BaseOffset() int64 { return x.base }

// Path returns the index file's name.
func (x *OffsetIndex) Path() string { return x.f.Path() }

// Entries returns the number of entries.
func (x *OffsetIndex) Entries() int { return x.f.Entries() }

// maxEntries returns how many entries the file has room for.
func (x *OffsetIndex) maxEntries() int { return x.f.MaxEntries() }

// Length returns the index file's length in bytes.
func (x *OffsetIndex) Length() int64 { return x.f.Length() }

// sizeInBytes returns the bytes the entries use: Entries()*8.
func (x *OffsetIndex) sizeInBytes() int { return x.f.Entries() * EntrySize }

// IsFull reports whether no entry can be appended: the preallocated
// file's room for entries is used up. A full index makes the segment roll.
func (x *OffsetIndex) IsFull() bool {
	v := x.f.View()
	return v.Entries() >= v.MaxEntries()
}

// Entry returns entry i, which must be in [0, Entries()); it panics
// otherwise (a concurrent TruncateTo can make an index that was in range
// out of range: use AppendAll or LastEntry for a consistent read).
func (x *OffsetIndex) Entry(i int) Entry {
	v := x.f.View()
	return DecodeEntry(v.Entry(i), x.base)
}

// AppendAll appends every entry to dst, all from one snapshot (unlike a
// loop over Entry, which a concurrent TruncateTo can cut short).
func (x *OffsetIndex) AppendAll(dst []Entry) []Entry {
	v := x.f.View()
	for i := range v.Entries() {
		dst = append(dst, DecodeEntry(v.Entry(i), x.base))
	}
	return dst
}

// LastEntry returns the last entry, or (BaseOffset(), 0) when the index is
// empty.
func (x *OffsetIndex) LastEntry() Entry {
	v := x.f.View()
	if v.Entries() == 0 {
		return Entry{Offset: x.base}
	}
	return DecodeEntry(v.Entry(v.Entries()-1), x.base)
}

// lastOffset returns the last entry's offset, or BaseOffset() when the
// index is empty.
func (x *OffsetIndex) lastOffset() int64 { return x.LastEntry().Offset }

// Lookup returns the entry with the greatest offset at most target, or
// (BaseOffset(), 0) if there is none: where to start scanning the .log for
// target. It does not allocate. On a damaged file (offsets that do not
// increase, zero padding) it returns what Kafka's search returns, which is
// still an entry whose offset is at most target.
func (x *OffsetIndex) Lookup(target int64) Entry {
	v := x.f.View()
	data := v.Data()
	slot := lookupSlot(data, v.Entries(), x.base, target)
	if off := slot * EntrySize; slot >= 0 && off < len(data) {
		return DecodeEntry(data[off:], x.base)
	}
	return Entry{Offset: x.base} // no entry, or a zero one (not kept in memory)
}

// lookupSlot is indexfile.LargestLowerBound over the relative offsets of
// the first n entries (data holding a prefix of them, the rest being zero),
// written out so that the compiler inlines the key access (Lookup is the
// read path's hot spot). The target is compared relative to the base
// offset, as int64, so no conversion can overflow.
func lookupSlot(data []byte, n int, base, target int64) int {
	if n == 0 {
		return -1
	}
	rel := target - base
	if target < base && rel >= 0 { // target - base overflowed
		return -1
	}
	if target > base && rel < 0 {
		rel = 1 << 62
	}
	key := func(i int) int64 {
		if off := i * EntrySize; off+4 <= len(data) {
			return int64(format.Int32(data[off:]))
		}
		return 0
	}
	const warm = indexfile.WarmSectionBytes / EntrySize
	firstHot := max(0, n-1-warm)
	lo, hi := 0, firstHot
	if key(firstHot) < rel {
		lo, hi = firstHot, n-1
	} else if key(0) > rel {
		return -1
	}
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		switch k := key(mid); {
		case k > rel:
			hi = mid - 1
		case k < rel:
			lo = mid
		default:
			return mid
		}
	}
	return lo
}

// fetchUpperBoundOffset returns the entry with the smallest position at
// least startPosition+fetchSize: an offset certain to lie beyond a fetch of
// fetchSize bytes from startPosition (Kafka uses it to bound the search
// for aborted transactions). ok is false when there is none. It is the
// entry Kafka's search picks, which, when the target equals the position of
// the first entry of the range searched, is the entry after it: a valid
// bound still, if not the smallest.
func (x *OffsetIndex) fetchUpperBoundOffset(startPosition int32, fetchSize int) (e Entry, ok bool) {
	v := x.f.View()
	slot := indexfile.SmallestUpperBound(v.Entries(), EntrySize, int64(startPosition)+int64(fetchSize), func(i int) int64 {
		return int64(format.Int32(v.Entry(i)[positionAt:]))
	})
	if slot < 0 {
		return Entry{}, false
	}
	return DecodeEntry(v.Entry(slot), x.base), true
}

// Append adds (offset, position). The offset must be larger than the last
// entry's (ErrOffsetOrder; Kafka's InvalidOffsetException) and within
// [BaseOffset(), BaseOffset()+MaxInt32] (ErrOffsetOverflow); the position
// must be at least the last entry's and not negative (ErrOffsetOrder);
// and there must be room (ErrIndexFull). On any of these errors nothing is
// written. I/O errors pass through.
func (x *OffsetIndex) Append(offset int64, position int32) error {
	if err := x.f.Check(); err != nil {
		return err
	}
	v := x.f.View()
	if v.Entries() >= v.MaxEntries() {
		return opError(x.Path(), ErrIndexFull, "%d entries (append of offset %d)", v.Entries(), offset)
	}
	if v.Entries() > 0 {
		last := DecodeEntry(v.Entry(v.Entries()-1), x.base)
		if offset <= last.Offset {
			return opError(x.Path(), ErrOffsetOrder, "offset %d is not larger than the last offset %d (entry %d)", offset, last.Offset, v.Entries())
		}
		if position < last.Position {
			return opError(x.Path(), ErrOffsetOrder, "position %d is below the last position %d (entry %d)", position, last.Position, v.Entries())
		}
	}
	if position < 0 {
		return opError(x.Path(), ErrOffsetOrder, "negative position %d", position)
	}
	var buf [EntrySize]byte
	b, err := AppendEntry(buf[:0], x.base, Entry{Offset: offset, Position: position})
	if err != nil {
		return opError(x.Path(), ErrOffsetOverflow, "offset %d with base offset %d", offset, x.base)
	}
	return x.f.Append(b)
}

// TruncateTo removes the entries whose offset is at least offset
// (Kafka's truncateTo); an offset above the last one removes nothing.
// The file keeps its length; the removed slots are zeroed.
func (x *OffsetIndex) TruncateTo(offset int64) error {
	if err := x.f.Check(); err != nil {
		return err
	}
	v := x.f.View()
	return x.f.TruncateEntries(firstAtLeast(v, func(e []byte) bool {
		return DecodeEntry(e, x.base).Offset >= offset
	}))
}

// firstAtLeast returns the first slot whose entry satisfies atLeast. It
// scans from the start rather than searching: on a damaged file the
// entries need not increase, and truncation must keep exactly the prefix of
// entries that fail atLeast. The scan costs about a millisecond per million
// entries, once per truncation.
func firstAtLeast(v *indexfile.View, atLeast func(e []byte) bool) int {
	for i := 0; i < v.Entries(); i++ {
		if atLeast(v.Entry(i)) {
			return i
		}
	}
	return v.Entries()
}

// Reset removes every entry and resizes the file back to its maximum size
// (Kafka's reset, the first step of segment recovery).
func (x *OffsetIndex) Reset() error { return x.f.Reset() }

// TrimToValidSize cuts the file to its entries: length Entries()*8.
func (x *OffsetIndex) TrimToValidSize() error { return x.f.TrimToValidSize() }

// Resize sets the file's length to roundDown(newSize, 8), as Kafka's
// AbstractIndex.resize does, and reports whether it changed. A size that
// would cut off entries fails with ErrInvalidSize (Kafka fails too, with an
// IllegalArgumentException from the mapping).
func (x *OffsetIndex) Resize(newSize int) (bool, error) { return x.f.Resize(newSize) }

// SanityCheck runs Kafka's OffsetIndex.sanityCheck: with entries, the last
// offset must not be below the base offset, and the file length must be a
// multiple of 8. A failure is a *format.CorruptionError matching
// ErrCorruptIndex and format.ErrInvalid (Kafka's CorruptIndexException,
// which makes a broker rebuild the index). It says nothing about zero
// padding, which Kafka's check lets through: see Padding.
func (x *OffsetIndex) SanityCheck() error {
	v := x.f.View()
	if v.Entries() != 0 {
		if last := DecodeEntry(v.Entry(v.Entries()-1), x.base); last.Offset < x.base {
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
// end of those Kafka trusts.
func (x *OffsetIndex) Padding() Padding { return Padding(x.f.Padding()) }

// DiscardPadding drops the entries Padding reports as zero padding and
// reports whether there were any: the index then holds what it would hold
// had it been trimmed before the broker stopped (Entries becomes
// Padding().ValidEntries), and the zero slots are free for appends again.
// The file is not changed (its bytes there are zero), so a read-only index
// may discard its padding too.
func (x *OffsetIndex) DiscardPadding() (bool, error) { return x.f.DiscardPadding() }

// Flush makes the file durable (Sync).
func (x *OffsetIndex) Flush() error { return x.f.Flush() }

// Close closes the file without trimming it: a segment calls
// TrimToValidSize first when the index is no longer active. The entries
// stay readable.
func (x *OffsetIndex) Close() error { return x.f.Close() }

// Rename renames the file, for the segment's suffix changes (.deleted,
// .cleaned, .swap).
func (x *OffsetIndex) Rename(newPath string) error { return x.f.Rename(newPath) }

// Delete closes and removes the file; a file already gone is not an error.
func (x *OffsetIndex) Delete() error { return x.f.Delete() }
