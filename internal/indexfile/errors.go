package indexfile

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/format"
)

// The errors a File returns, re-exported by packages index and timeindex
// under the same names (their documentation says when each is returned).
// Their messages keep the "index:" prefix of the package that exports them.
var (
	// ErrIndexFull is returned by an Append to a file with no free slot.
	ErrIndexFull = errors.New("index: index is full")

	// ErrReadOnly is returned by a mutating call on a file opened with
	// writable false.
	ErrReadOnly = errors.New("index: index is read-only")

	// ErrInvalidSize is returned by Open for an entry size out of range or
	// a maximum index size smaller than one entry, and by Resize to a size
	// that would cut off entries.
	ErrInvalidSize = errors.New("index: invalid index size")

	// ErrClosed is returned by a file operation on a closed file.
	ErrClosed = errors.New("index: index is closed")

	// ErrCorruptIndex is matched by the errors of CorruptIndexf (Kafka:
	// CorruptIndexException).
	ErrCorruptIndex = errors.New("index: corrupt index")
)

// CorruptIndexf returns the error of a failed sanity check: a
// *format.CorruptionError at byte off of path whose cause matches both
// ErrCorruptIndex and format.ErrInvalid.
func CorruptIndexf(path string, off int64, msg string, args ...any) error {
	return format.Corrupt(path, off, fmt.Errorf("%w: %s (%w)", ErrCorruptIndex, fmt.Sprintf(msg, args...), format.ErrInvalid))
}

// opError wraps a sentinel with the file's path and a detail.
func opError(path string, sentinel error, msg string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", path, sentinel, fmt.Sprintf(msg, args...))
}
