package format

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. A CorruptionError wraps one of these (possibly through a
// further %w wrapper that adds detail), so errors.Is(err, format.ErrCRC) is
// the way to ask what went wrong.
var (
	// ErrTruncated is returned when the input ends inside a structure whose
	// length was already declared: a short header, or a record that runs past
	// its batch.
	ErrTruncated = errors.New("format: truncated input")

	// ErrCRC is returned when a stored checksum does not match the bytes it
	// covers.
	ErrCRC = errors.New("format: checksum mismatch")

	// ErrTooLarge is returned when a declared or decompressed size exceeds
	// the limit the caller configured (a decompression bomb, an oversized
	// batch).
	ErrTooLarge = errors.New("format: size exceeds limit")

	// ErrInvalid is returned when a field holds a value the format forbids:
	// a negative count, an inconsistent offset range, a bad length.
	ErrInvalid = errors.New("format: invalid value")

	// ErrVarint is returned for a varint longer than 5 bytes, a varlong
	// longer than 10 bytes, or one whose value overflows its type.
	ErrVarint = errors.New("format: malformed varint")

	// ErrMagic is returned for a magic byte the decoder does not handle.
	ErrMagic = errors.New("format: unsupported magic")

	// ErrCodec is returned for a compression codec id outside 0..4.
	ErrCodec = errors.New("format: unknown compression codec")

	// ErrCompressed is returned when compressed data cannot be decompressed:
	// a bad frame, a bad block, a short stream.
	ErrCompressed = errors.New("format: corrupt compressed data")
)

// CorruptionError reports bad bytes and where they are. Path is the file
// (empty when the input was a bare buffer) and Offset is the byte position of
// the problem: absolute within Path when Path is set, relative to the buffer
// the decoder was given otherwise. Err is, or wraps, one of the sentinel
// errors of this package.
type CorruptionError struct {
	Path   string
	Offset int64
	Err    error
}

// Error formats the error as "path: byte N: cause" (or "byte N: cause").
func (e *CorruptionError) Error() string {
	var b []byte
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ": "...)
	}
	b = append(b, "byte "...)
	b = strconv.AppendInt(b, e.Offset, 10)
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	} else {
		b = append(b, "corrupt data"...)
	}
	return string(b)
}

// Unwrap returns the underlying cause.
func (e *CorruptionError) Unwrap() error { return e.Err }

// Corrupt builds a CorruptionError at offset off. If err is already a
// *CorruptionError (from a nested decoder working on a sub-slice), its offset
// is taken as relative to off and folded in, so that the result names one
// absolute position rather than a chain of relative ones. A Path already set
// on the inner error is kept when path is empty.
func Corrupt(path string, off int64, err error) *CorruptionError {
	var inner *CorruptionError
	if errors.As(err, &inner) {
		p := path
		if p == "" {
			p = inner.Path
		}
		return &CorruptionError{Path: p, Offset: off + inner.Offset, Err: inner.Err}
	}
	return &CorruptionError{Path: path, Offset: off, Err: err}
}

// Corruptf is Corrupt with a formatted cause that wraps sentinel:
//
//	format.Corruptf("", 17, format.ErrInvalid, "record count %d", n)
func Corruptf(path string, off int64, sentinel error, msg string, args ...any) *CorruptionError {
	return &CorruptionError{Path: path, Offset: off, Err: fmt.Errorf("%w: "+msg, append([]any{sentinel}, args...)...)}
}

// WithPath returns err with its CorruptionError (if any) relocated into file
// path at base offset base: Offset becomes base+Offset and Path becomes path.
// Other errors are returned unchanged. Decoders that work on a buffer read
// from a file use it to report positions in the file.
func WithPath(err error, path string, base int64) error {
	if err == nil {
		return nil
	}
	var ce *CorruptionError
	if errors.As(err, &ce) {
		return &CorruptionError{Path: path, Offset: base + ce.Offset, Err: ce.Err}
	}
	return err
}
