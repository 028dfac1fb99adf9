package timeline

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/segkit/segkit/format"
)

// Sentinel errors. Decoding errors are *format.CorruptionError values
// wrapping format.ErrCRC, format.ErrTruncated, format.ErrTooLarge or
// format.ErrInvalid, and, for an unknown action, ErrUnknownAction too;
// test with errors.Is and errors.As.
var (
	// ErrUnknownAction is returned for an action this package does not
	// know, in a file name, a record or an argument.
	ErrUnknownAction = errors.New("timeline: unknown action")

	// ErrPayload is returned by Begin and Complete for a payload whose
	// type is not the action's payload type, and for a payload larger
	// than an instant file may be.
	ErrPayload = errors.New("timeline: invalid payload")

	// ErrReadOnly is returned by the mutating methods of a Timeline
	// opened with Options.ReadOnly.
	ErrReadOnly = errors.New("timeline: read-only")

	// ErrState is returned by a Txn method the instant's state does not
	// allow: Inflight twice, Complete after Rollback, and so on.
	ErrState = errors.New("timeline: wrong state for the transition")

	// ErrFailed is matched by the error of every mutating method after
	// a write or sync of the timeline failed: what is on disk is then
	// unknown, and only a new Open tells (RELIABILITY E2).
	ErrFailed = errors.New("timeline: an earlier write failed; open the timeline again")

	// ErrTimeRange is returned when an instant time would pass MaxMillis.
	ErrTimeRange = errors.New("timeline: instant time out of range")
)

// These constants are part of the on-disk format and should not be changed.
const (
	// formatVersion is the "v" of every record this package writes.
	formatVersion = 1
	// crcLen is the width of a record's CRC field, sepLen that of the
	// space after it.
	crcLen = 8
	sepLen = 1
	// jsonStart is where a record's JSON begins within its line.
	jsonStart = crcLen + sepLen

	requestedSuffix = ".requested"
	inflightSuffix  = ".inflight"
	archiveSuffix   = ".archive"
	tmpSuffix       = ".tmp"
)

// Limits. Package variables so that tests can shrink them.
var (
	// maxInstantFile bounds an active instant file: larger ones are not
	// read (format.ErrTooLarge), and Begin and Complete refuse payloads
	// that would make one.
	maxInstantFile int64 = 4 << 20
	// maxArchiveFile bounds an archive file; merges never write one over
	// Options.MergeLimitBytes, which is at most this.
	maxArchiveFile int64 = 64 << 20
	// maxHeaderLine bounds the header line of an archive file.
	maxHeaderLine = 1024
)

// record is the JSON of one instant record.
type record struct {
	V         int             `json:"v"`
	Time      InstantTime     `json:"time"`
	Action    Action          `json:"action"`
	State     State           `json:"state"`
	Completed *InstantTime    `json:"completed,omitempty"`
	Plan      json.RawMessage `json:"plan"`
	Result    json.RawMessage `json:"result,omitempty"`
	Imported  bool            `json:"imported,omitempty"`
}

// archiveHeader is the JSON of an archive file's first line.
type archiveHeader struct {
	V       int         `json:"v"`
	Kind    string      `json:"kind"` // "archive"
	Count   int         `json:"count"`
	Min     InstantTime `json:"min"`
	Max     InstantTime `json:"max"`
	Layer   int         `json:"layer"`
	MaxTime InstantTime `json:"maxTime"`
}

const archiveKind = "archive"

// checkPayload checks that p (nil allowed) is a payload of action a: of
// the action's type, or a pointer to it. It returns nil for a nil
// pointer.
func checkPayload(a Action, p Payload) (Payload, error) {
	if p == nil {
		return nil, nil
	}
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	want := reflect.TypeOf(newPayload(a)) // a pointer type
	if t := v.Type(); t != want && t != want.Elem() {
		return nil, fmt.Errorf("%w: a %s instant takes a %s payload, not %s", ErrPayload, a, want.Elem().Name(), t)
	}
	return p, nil
}

// appendLine appends the record line of JSON value v: the CRC-32C of its
// JSON in 8 lowercase hex digits, a space, the JSON, a newline.
func appendLine(dst []byte, v any) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	dst = fmt.Appendf(dst, "%08x ", format.CRC32C(js))
	dst = append(dst, js...)
	return append(dst, '\n'), nil
}

// encodeInstant returns the record line of inst.
func encodeInstant(inst *Instant) ([]byte, error) {
	r := record{V: formatVersion, Time: inst.Time, Action: inst.Action, State: inst.State, Imported: inst.Imported}
	raw := func(p Payload) (json.RawMessage, error) {
		if p == nil {
			return json.RawMessage("null"), nil
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPayload, err)
		}
		return b, nil
	}
	var err error
	if r.Plan, err = raw(inst.Plan); err != nil {
		return nil, err
	}
	if inst.State == Completed {
		c := inst.Completed
		r.Completed = &c
		if r.Result, err = raw(inst.Result); err != nil {
			return nil, err
		}
	}
	return appendLine(nil, r)
}

// splitLine returns the JSON of the record line starting at b[0] and the
// bytes after the line; off is b's position in the file, for errors.
func splitLine(path string, b []byte, off int64) (js, rest []byte, err error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, format.Corruptf(path, off+int64(len(b)), format.ErrTruncated, "record line without its newline")
	}
	line := b[:nl]
	if len(line) < jsonStart+2 { // the shortest JSON object is "{}"
		return nil, nil, format.Corruptf(path, off, format.ErrTruncated, "record line of %d bytes", len(line))
	}
	var crc [4]byte
	if _, err := hex.Decode(crc[:], line[:crcLen]); err != nil || !isLowerHex(line[:crcLen]) {
		return nil, nil, format.Corruptf(path, off, format.ErrInvalid, "record line does not start with a CRC-32C in hex: %q", line[:crcLen])
	}
	if line[crcLen] != ' ' {
		return nil, nil, format.Corruptf(path, off+crcLen, format.ErrInvalid, "no space after the record's CRC")
	}
	js = line[jsonStart:]
	want := uint32(crc[0])<<24 | uint32(crc[1])<<16 | uint32(crc[2])<<8 | uint32(crc[3])
	if got := format.CRC32C(js); got != want {
		return nil, nil, format.Corruptf(path, off, format.ErrCRC, "record CRC-32C %08x, computed %08x", want, got)
	}
	return js, b[nl+1:], nil
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decodeStrict decodes js into v, rejecting unknown fields and trailing
// data; errors are CorruptionErrors at their byte in the file (js begins
// at off).
func decodeStrict(path string, js []byte, off int64, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(path, js, off, err)
	}
	if dec.More() {
		return format.Corruptf(path, off+dec.InputOffset(), format.ErrInvalid, "data after the record's JSON")
	}
	return nil
}

// jsonError turns a JSON decoding error into a CorruptionError at its
// byte.
func jsonError(path string, js []byte, off int64, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	at := int64(0)
	switch {
	case errors.As(err, &syn):
		at = syn.Offset - 1 // Offset counts the bytes read, the bad one included
	case errors.As(err, &typ):
		at = typ.Offset
	}
	at = min(max(at, 0), int64(len(js)))
	if errors.Is(err, ErrUnknownAction) {
		return &format.CorruptionError{Path: path, Offset: off + at, Err: fmt.Errorf("%w: %w", format.ErrInvalid, err)}
	}
	return format.Corruptf(path, off+at, format.ErrInvalid, "%v", err)
}

// valueOffset returns the offset within js of the value of the top-level
// key of the JSON object js, or 0 if it is not found.
func valueOffset(js []byte, key string) int64 {
	dec := json.NewDecoder(bytes.NewReader(js))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0
		}
		k, _ := t.(string)
		at := dec.InputOffset()
		for at < int64(len(js)) && (js[at] == ':' || js[at] == ' ' || js[at] == '\t' || js[at] == '\r' || js[at] == '\n') {
			at++
		}
		if k == key {
			return at
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0
		}
	}
	return 0
}

// decodeInstant decodes the record line at the start of b (at offset off
// of path) into an Instant, and returns the bytes after the line.
func decodeInstant(path string, b []byte, off int64) (Instant, []byte, error) {
	js, rest, err := splitLine(path, b, off)
	if err != nil {
		return Instant{}, nil, err
	}
	off += jsonStart
	var r record
	if err := decodeStrict(path, js, off, &r); err != nil {
		return Instant{}, nil, err
	}
	bad := func(key string, sentinel error, msg string, args ...any) error {
		return &format.CorruptionError{Path: path, Offset: off + valueOffset(js, key), Err: fmt.Errorf("%w: "+msg, append([]any{sentinel}, args...)...)}
	}
	if r.V != formatVersion {
		return Instant{}, nil, bad("v", format.ErrInvalid, "record version %d, want %d", r.V, formatVersion)
	}
	if newPayload(r.Action) == nil {
		return Instant{}, nil, bad("action", format.ErrInvalid, "%w %q", ErrUnknownAction, string(r.Action))
	}
	inst := Instant{Time: r.Time, Action: r.Action, State: r.State, Imported: r.Imported}
	if r.Imported && r.State != Completed {
		return Instant{}, nil, bad("imported", format.ErrInvalid, "an imported record must be completed")
	}
	switch r.State {
	case Requested, Inflight:
		if r.Completed != nil || len(r.Result) != 0 {
			return Instant{}, nil, bad("state", format.ErrInvalid, "a %s record with a completion", r.State)
		}
	case Completed:
		if r.Completed == nil {
			return Instant{}, nil, bad("state", format.ErrInvalid, "a completed record without its completion time")
		}
		if r.Completed.Compare(r.Time) <= 0 {
			return Instant{}, nil, bad("completed", format.ErrInvalid, "completed at %s, not after its time %s", *r.Completed, r.Time)
		}
		inst.Completed = *r.Completed
	default:
		return Instant{}, nil, bad("state", format.ErrInvalid, "no state")
	}
	if len(r.Plan) == 0 {
		return Instant{}, nil, bad("", format.ErrInvalid, "a record without its plan")
	}
	if r.Action == ActionRollback && (r.State != Completed || string(r.Plan) == "null") {
		return Instant{}, nil, bad("plan", format.ErrInvalid, "a rollback record must be completed and name what it rolled back")
	}
	if inst.Plan, err = decodePayload(r.Action, r.Plan); err != nil {
		return Instant{}, nil, jsonError(path, js[valueOffset(js, "plan"):], off+valueOffset(js, "plan"), err)
	}
	if len(r.Result) != 0 {
		if inst.Result, err = decodePayload(r.Action, r.Result); err != nil {
			return Instant{}, nil, jsonError(path, js[valueOffset(js, "result"):], off+valueOffset(js, "result"), err)
		}
	}
	return inst, rest, nil
}

// decodeInstantFile decodes an active instant file: exactly one record
// line.
func decodeInstantFile(path string, b []byte) (Instant, error) {
	inst, rest, err := decodeInstant(path, b, 0)
	if err != nil {
		return Instant{}, err
	}
	if len(rest) != 0 {
		return Instant{}, format.Corruptf(path, int64(len(b)-len(rest)), format.ErrInvalid, "%d bytes after the record", len(rest))
	}
	return inst, nil
}

// fileName is the parsed name of a file of the active timeline.
type fileName struct {
	time      InstantTime
	completed InstantTime // State Completed only
	action    Action
	state     State
}

// String returns the file name.
func (n fileName) String() string {
	b := appendTime(nil, n.time)
	if n.state == Completed {
		b = append(b, '_')
		b = appendTime(b, n.completed)
	}
	b = append(b, '.')
	b = append(b, n.action...)
	switch n.state {
	case Requested:
		b = append(b, requestedSuffix...)
	case Inflight:
		b = append(b, inflightSuffix...)
	}
	return string(b)
}

// parseFileName parses "<time>.<action>.requested",
// "<time>.<action>.inflight" or "<time>_<completed>.<action>".
func parseFileName(name string) (fileName, error) {
	var n fileName
	bad := func(why string) (fileName, error) {
		return fileName{}, fmt.Errorf("%q is not a timeline file name: %s", name, why)
	}
	if len(name) < timeDigits+2 {
		return bad("too short")
	}
	t, err := ParseInstantTime(name[:timeDigits])
	if err != nil {
		return bad("no instant time")
	}
	n.time = t
	rest := name[timeDigits:]
	if rest[0] == '_' {
		if len(rest) < 1+timeDigits+2 {
			return bad("too short")
		}
		c, err := ParseInstantTime(rest[1 : 1+timeDigits])
		if err != nil {
			return bad("no completion time")
		}
		n.completed, n.state = c, Completed
		rest = rest[1+timeDigits:]
	}
	if rest[0] != '.' {
		return bad("no '.' after the instant time")
	}
	rest = rest[1:]
	if n.state != Completed {
		switch {
		case strings.HasSuffix(rest, requestedSuffix):
			n.state, rest = Requested, strings.TrimSuffix(rest, requestedSuffix)
		case strings.HasSuffix(rest, inflightSuffix):
			n.state, rest = Inflight, strings.TrimSuffix(rest, inflightSuffix)
		default:
			return bad("neither .requested nor .inflight, and no completion time")
		}
	}
	n.action = Action(rest)
	if newPayload(n.action) == nil {
		return fileName{}, fmt.Errorf("%w %q in file name %q", ErrUnknownAction, rest, name)
	}
	if n.state == Completed && n.completed.Compare(n.time) <= 0 {
		return bad("completion time not after the instant time")
	}
	return n, nil
}

// archiveName is the parsed name of an archive file.
type archiveName struct {
	min, max InstantTime
	layer    int
}

// maxLayer is the highest archive layer.
const maxLayer = 9

// String returns "<min>_<max>_<layer>.archive".
func (a archiveName) String() string {
	b := appendTime(nil, a.min)
	b = append(b, '_')
	b = appendTime(b, a.max)
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(a.layer), 10)
	return string(append(b, archiveSuffix...))
}

// parseArchiveName parses "<min>_<max>_<layer>.archive".
func parseArchiveName(name string) (archiveName, error) {
	const l = timeDigits + 1 + timeDigits + 1 + 1
	if len(name) != l+len(archiveSuffix) || !strings.HasSuffix(name, archiveSuffix) || name[timeDigits] != '_' || name[2*timeDigits+1] != '_' {
		return archiveName{}, fmt.Errorf("%q is not an archive file name", name)
	}
	lo, err1 := ParseInstantTime(name[:timeDigits])
	hi, err2 := ParseInstantTime(name[timeDigits+1 : 2*timeDigits+1])
	layer := name[l-1]
	if err1 != nil || err2 != nil || layer < '0' || layer > '9' {
		return archiveName{}, fmt.Errorf("%q is not an archive file name", name)
	}
	if hi.Compare(lo) < 0 {
		return archiveName{}, fmt.Errorf("archive file name %q: its max is below its min", name)
	}
	return archiveName{min: lo, max: hi, layer: int(layer - '0')}, nil
}

// encodeArchive returns an archive file: the header line, then lines,
// the record lines of the instants, in time order.
func encodeArchive(h archiveHeader, lines [][]byte) ([]byte, error) {
	h.V, h.Kind = formatVersion, archiveKind
	b, err := appendLine(nil, h)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		b = append(b, l...)
	}
	return b, nil
}

// decodeArchiveHeader decodes the header line at the start of b and
// checks it against the file's name; it returns the header and the bytes
// after it.
func decodeArchiveHeader(path string, b []byte, name archiveName) (archiveHeader, []byte, error) {
	js, rest, err := splitLine(path, b, 0)
	if err != nil {
		return archiveHeader{}, nil, err
	}
	var h archiveHeader
	if err := decodeStrict(path, js, jsonStart, &h); err != nil {
		return archiveHeader{}, nil, err
	}
	bad := func(key, msg string, args ...any) error {
		return format.Corruptf(path, jsonStart+valueOffset(js, key), format.ErrInvalid, msg, args...)
	}
	switch {
	case h.V != formatVersion:
		return h, nil, bad("v", "archive version %d, want %d", h.V, formatVersion)
	case h.Kind != archiveKind:
		return h, nil, bad("kind", "kind %q, want %q", h.Kind, archiveKind)
	case h.Count <= 0:
		return h, nil, bad("count", "count %d", h.Count)
	case h.Min != name.min || h.Max != name.max || h.Layer != name.layer:
		return h, nil, bad("min", "the header says %s..%s layer %d, the name %s..%s layer %d", h.Min, h.Max, h.Layer, name.min, name.max, name.layer)
	case h.MaxTime.Compare(h.Max) <= 0:
		return h, nil, bad("maxTime", "maxTime %s not past max %s", h.MaxTime, h.Max)
	}
	return h, rest, nil
}

// decodeArchive decodes a whole archive file: its instants, in time
// order, each with its record line, which they are checked against: as
// many as the header counts, strictly increasing, the first at the
// name's min and the last at its max, every one completed, no time past
// maxTime.
func decodeArchive(path string, b []byte, name archiveName) ([]Instant, [][]byte, error) {
	h, rest, err := decodeArchiveHeader(path, b, name)
	if err != nil {
		return nil, nil, err
	}
	if h.Count > len(rest)/(jsonStart+3) {
		return nil, nil, format.Corruptf(path, 0, format.ErrInvalid, "count %d in %d bytes", h.Count, len(rest))
	}
	insts := make([]Instant, 0, h.Count)
	lines := make([][]byte, 0, h.Count)
	for len(rest) > 0 {
		off := int64(len(b) - len(rest))
		inst, r, err := decodeInstant(path, rest, off)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case len(insts) == h.Count:
			return nil, nil, format.Corruptf(path, off, format.ErrInvalid, "more instants than the header's count %d", h.Count)
		case inst.State != Completed:
			return nil, nil, format.Corruptf(path, off, format.ErrInvalid, "archived instant %s is %s", inst.Time, inst.State)
		case len(insts) == 0 && inst.Time != h.Min:
			return nil, nil, format.Corruptf(path, off, format.ErrInvalid, "first instant %s, the name says %s", inst.Time, h.Min)
		case len(insts) > 0 && inst.Time.Compare(insts[len(insts)-1].Time) <= 0:
			return nil, nil, format.Corruptf(path, off, format.ErrInvalid, "instant %s after %s", inst.Time, insts[len(insts)-1].Time)
		case inst.Time.Compare(h.Max) > 0 || inst.Completed.Compare(h.MaxTime) > 0:
			return nil, nil, format.Corruptf(path, off, format.ErrInvalid, "instant %s (completed %s) past the header's max %s (maxTime %s)", inst.Time, inst.Completed, h.Max, h.MaxTime)
		}
		insts = append(insts, inst)
		lines = append(lines, rest[:len(rest)-len(r)])
		rest = r
	}
	if len(insts) != h.Count {
		return nil, nil, format.Corruptf(path, int64(len(b)), format.ErrTruncated, "%d instants, the header counts %d", len(insts), h.Count)
	}
	if last := insts[len(insts)-1]; last.Time != h.Max {
		return nil, nil, format.Corruptf(path, int64(len(b)-len(lines[len(lines)-1])), format.ErrInvalid, "last instant %s, the name says %s", last.Time, h.Max)
	}
	return insts, lines, nil
}
