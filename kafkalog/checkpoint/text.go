package checkpoint

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// ErrUnencodable is returned by the writers for an entry that the file
// format cannot hold so that it reads back: an empty topic name, or one
// with whitespace or invalid UTF-8; a zero topic ID.
var ErrUnencodable = errors.New("checkpoint: entry cannot be written")

// filePerm is the permission bits of the files this package creates.
const filePerm = 0o644

// ParseText decodes Kafka's checkpoint text format (CheckpointFile.java):
// line 1 the version, line 2 the entry count, then one entry per line,
// which parse turns into a T from the line's whitespace-separated fields
// (Java's split on \s+: a leading space gives a leading empty field,
// trailing ones are dropped), reporting false for a malformed line.
//
// Lines end with \n, \r or \r\n, as BufferedReader.readLine reads them;
// the last line needs no terminator. As in Kafka, an empty input, or one
// with a version line but no count line, holds no entries.
//
// Errors are *format.CorruptionError wrapping format.ErrInvalid, whose
// Offset is the byte position of the line at fault (the count line for a
// count mismatch): "Unrecognised version:1, expected version: 0",
// "Malformed line: ...", "Expected [3] entries in checkpoint file, but
// found only [2]" (Kafka's wording, "only" even when there are more).
func ParseText[T any](b []byte, version int32, parse func(fields []string) (T, bool)) ([]T, error) {
	entries, _, err := parseText(b, version, parse)
	return entries, err
}

// parseText is ParseText that also returns each entry's line offset.
func parseText[T any](b []byte, version int32, parse func(fields []string) (T, bool)) ([]T, []int64, error) {
	r := lineReader{b: b}
	line, at, ok := r.next()
	if !ok {
		return nil, nil, nil
	}
	v, ok := parseInt32(line)
	if !ok {
		return nil, nil, malformed(at, line)
	}
	if v != version {
		return nil, nil, format.Corruptf("", at, format.ErrInvalid, "Unrecognised version:%d, expected version: %d", v, version)
	}
	line, countAt, ok := r.next()
	if !ok {
		return nil, nil, nil
	}
	count, ok := parseInt32(line)
	if !ok {
		return nil, nil, malformed(countAt, line)
	}
	if count < 0 {
		return nil, nil, format.Corruptf("", countAt, format.ErrInvalid, "Illegal entry count %d", count)
	}
	// Never allocate from the count: a file cannot hold more entries
	// than it has line terminators, plus one.
	n := min(int(count), r.maxLines())
	entries := make([]T, 0, n)
	offsets := make([]int64, 0, n)
	for {
		line, at, ok := r.next()
		if !ok {
			break
		}
		if !utf8.ValidString(line) {
			return nil, nil, malformed(at, line)
		}
		e, ok := parse(javaFields(line))
		if !ok {
			return nil, nil, malformed(at, line)
		}
		entries = append(entries, e)
		offsets = append(offsets, at)
	}
	if len(entries) != int(count) {
		return nil, nil, format.Corruptf("", countAt, format.ErrInvalid, "Expected [%d] entries in checkpoint file, but found only [%d]", count, len(entries))
	}
	return entries, offsets, nil
}

func malformed(at int64, line string) error {
	return format.Corruptf("", at, format.ErrInvalid, "Malformed line: %q", line)
}

// AppendText appends the checkpoint text of entries to dst: the version
// line, the count line, then one line per entry from line (which must
// not add the line terminator). Lines end with "\n", as Kafka writes them
// on Linux (BufferedWriter.newLine uses the platform separator).
func AppendText[T any](dst []byte, version int32, entries []T, line func(dst []byte, e T) []byte) []byte {
	dst = strconv.AppendInt(dst, int64(version), 10)
	dst = append(dst, '\n')
	dst = strconv.AppendInt(dst, int64(len(entries)), 10)
	dst = append(dst, '\n')
	for _, e := range entries {
		dst = line(dst, e)
		dst = append(dst, '\n')
	}
	return dst
}

// readText reads the named checkpoint file and parses it, reporting
// corruption with the file's path.
func readText[T any](fsys vfs.FS, path string, version int32, parse func(fields []string) (T, bool)) ([]T, []int64, error) {
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return nil, nil, err
	}
	entries, offsets, err := parseText(b, version, parse)
	return entries, offsets, format.WithPath(err, path, 0)
}

// lineReader splits text into lines as java.io.BufferedReader.readLine
// does.
type lineReader struct {
	b   []byte
	off int
}

// next returns the next line without its terminator and its byte offset.
func (r *lineReader) next() (string, int64, bool) {
	if r.off >= len(r.b) {
		return "", 0, false
	}
	start := r.off
	for i := start; i < len(r.b); i++ {
		switch r.b[i] {
		case '\n':
			r.off = i + 1
			return string(r.b[start:i]), int64(start), true
		case '\r':
			r.off = i + 1
			if r.off < len(r.b) && r.b[r.off] == '\n' {
				r.off++
			}
			return string(r.b[start:i]), int64(start), true
		}
	}
	r.off = len(r.b)
	return string(r.b[start:]), int64(start), true
}

// maxLines bounds the number of lines left.
func (r *lineReader) maxLines() int {
	n := 1
	for _, c := range r.b[r.off:] {
		if c == '\n' || c == '\r' {
			n++
		}
	}
	return n
}

// isJavaSpace reports whether c is in the regex class \s: [ \t\n\x0B\f\r].
func isJavaSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// javaFields is String.split("\\s+"): a leading run of whitespace gives a
// leading empty field, trailing empty fields are removed, and an input
// without whitespace is returned whole (so "" gives [""]).
func javaFields(s string) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	start := 0
	for i := 0; i < len(s); {
		if !isJavaSpace(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isJavaSpace(s[j]) {
			j++
		}
		out = append(out, s[start:i])
		start, i = j, j
	}
	out = append(out, s[start:])
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// parseInt32 is Integer.parseInt for ASCII input: an optional sign, then
// decimal digits.
func parseInt32(s string) (int32, bool) {
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil
}

// parseInt64 is Long.parseLong for ASCII input.
func parseInt64(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// encodableToken reports whether s can be written as one field of a
// checkpoint line and read back unchanged.
func encodableToken(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if isJavaSpace(s[i]) {
			return false
		}
	}
	return true
}
