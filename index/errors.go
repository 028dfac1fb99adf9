package index

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/internal/indexfile"
)

// Operational errors. They come wrapped with the index's path and the
// values involved; test with errors.Is. The time index (package timeindex)
// returns the same values, so one errors.Is covers both kinds of index.
var (
	// ErrIndexFull is returned by an append to an index whose preallocated
	// space is used up (Kafka: IllegalArgumentException "Attempt to append
	// to a full index"). Nothing is written.
	ErrIndexFull = indexfile.ErrIndexFull

	// ErrOffsetOrder is returned by an append whose offset is not larger
	// than the last offset in the index (Kafka: InvalidOffsetException), or
	// by an aborted transaction whose last offset does not increase, and by
	// an offset-index append whose position is negative or below the last
	// entry's (Kafka does not check positions; a segment never produces
	// that). Nothing is written.
	ErrOffsetOrder = errors.New("index: offset out of order")

	// ErrOffsetOverflow is returned when an offset cannot be stored
	// relative to the base offset: below it, or more than MaxInt32 above it
	// (Kafka: IndexOffsetOverflowException). Nothing is written.
	ErrOffsetOverflow = errors.New("index: offset outside the relative range")

	// ErrReadOnly is returned by a mutating call on an index opened with
	// writable false.
	ErrReadOnly = indexfile.ErrReadOnly

	// ErrInvalidSize is returned for a maximum index size smaller than one
	// entry, and by Resize to a size that would cut off entries.
	ErrInvalidSize = indexfile.ErrInvalidSize

	// ErrClosed is returned by a file operation on a closed index.
	ErrClosed = indexfile.ErrClosed

	// ErrUnsupportedVersion is returned (inside a *format.CorruptionError)
	// for an aborted-transaction entry whose version is above 0.
	ErrUnsupportedVersion = errors.New("index: unsupported aborted transaction version")

	// ErrCorruptIndex is matched by the *format.CorruptionError a sanity
	// check returns (Kafka: CorruptIndexException). Such errors also match
	// format.ErrInvalid.
	ErrCorruptIndex = indexfile.ErrCorruptIndex
)

// opError wraps a sentinel with the index path and a detail.
func opError(path string, sentinel error, msg string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", path, sentinel, fmt.Sprintf(msg, args...))
}
