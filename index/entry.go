package index

import (
	"fmt"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/indexfile"
)

// Layout of one offset-index entry (OffsetIndex.java).
//
// These constants are part of the wire format and should not be changed.
const (
	relativeOffsetAt = 0                    // int32: offset - baseOffset
	positionAt       = relativeOffsetAt + 4 // int32: byte position in the .log
	// EntrySize is the size of one .index entry.
	EntrySize = positionAt + 4 // 8
)

// Entry is one offset-index entry: the batch holding Offset (or, after a
// multi-batch append, the first batch of that append) starts at byte
// Position of the segment's .log. Offset is absolute.
type Entry struct {
	Offset   int64
	Position int32
}

// AppendEntry appends the 8-byte encoding of e, relative to baseOffset, to
// dst. It returns an error wrapping ErrOffsetOverflow, and dst unchanged,
// when e.Offset - baseOffset is outside [0, MaxInt32].
func AppendEntry(dst []byte, baseOffset int64, e Entry) ([]byte, error) {
	rel, ok := indexfile.Relative(e.Offset, baseOffset)
	if !ok {
		return dst, fmt.Errorf("%w: offset %d with base offset %d", ErrOffsetOverflow, e.Offset, baseOffset)
	}
	dst = format.AppendInt32(dst, rel)
	return format.AppendInt32(dst, e.Position), nil
}

// DecodeEntry decodes the entry at the start of b, which must hold at least
// EntrySize bytes, relative to baseOffset.
func DecodeEntry(b []byte, baseOffset int64) Entry {
	_ = b[EntrySize-1]
	return Entry{Offset: baseOffset + int64(format.Int32(b[relativeOffsetAt:])), Position: format.Int32(b[positionAt:])}
}
