package dumplog

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/segkit/segkit/record"
)

// The KRaft control records, decoded from their wire form (version 0 of
// LeaderChangeMessage, SnapshotHeaderRecord, SnapshotFooterRecord,
// KRaftVersionRecord and VotersRecord, all flexible: compact arrays and
// strings, and tagged fields closing every struct) and written as the
// JSON of Kafka's generated *JsonConverter classes, printed by Jackson:
// compact, fields in schema order, named in camelCase.

var errShortKRaft = errors.New("the record ends early")

// kraftReader is a sticky-error cursor over a flexible message.
type kraftReader struct {
	b   []byte
	err error
}

func (r *kraftReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errShortKRaft
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// fixed reads an n-byte big-endian number.
func (r *kraftReader) fixed(n int) uint64 {
	var v uint64
	for _, c := range r.take(n) {
		v = v<<8 | uint64(c)
	}
	return v
}

func (r *kraftReader) int16() int64  { return int64(int16(r.fixed(2))) }
func (r *kraftReader) uint16() int64 { return int64(r.fixed(2)) }
func (r *kraftReader) int32() int64  { return int64(int32(r.fixed(4))) }
func (r *kraftReader) int64() int64  { return int64(r.fixed(8)) }

func (r *kraftReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<31 {
		r.err = errShortKRaft
		return 0
	}
	r.b = r.b[n:]
	return v
}

// tagged skips a struct's tagged fields, which the JSON does not show.
func (r *kraftReader) tagged() {
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		r.uvarint()
		r.take(int(r.uvarint()))
	}
}

// kraftObject writes a message as JSON while reading it: each field's
// value is read and appended by the function given for it.
type kraftObject struct {
	r   *kraftReader
	out []byte
}

func (j *kraftObject) field(name string, value func()) {
	if c := j.out[len(j.out)-1]; c != '{' {
		j.out = append(j.out, ',')
	}
	j.out = append(j.out, '"')
	j.out = append(j.out, name...)
	j.out = append(j.out, '"', ':')
	value()
}

func (j *kraftObject) num(name string, read func() int64) {
	j.field(name, func() { j.out = strconv.AppendInt(j.out, read(), 10) })
}

// object appends a struct: its fields, then its tagged fields.
func (j *kraftObject) object(fields func()) {
	j.out = append(j.out, '{')
	fields()
	j.r.tagged()
	j.out = append(j.out, '}')
}

// array appends a compact array of structs (null as null).
func (j *kraftObject) array(name string, elem func()) {
	j.field(name, func() {
		n := j.r.uvarint()
		if n == 0 {
			j.out = append(j.out, "null"...)
			return
		}
		j.out = append(j.out, '[')
		for i := uint64(0); i < n-1 && j.r.err == nil; i++ {
			if i > 0 {
				j.out = append(j.out, ',')
			}
			j.object(elem)
		}
		j.out = append(j.out, ']')
	})
}

// str appends a compact string (null as null), escaped as Jackson does.
func (j *kraftObject) str(name string) {
	j.field(name, func() {
		n := j.r.uvarint()
		if n == 0 {
			j.out = append(j.out, "null"...)
			return
		}
		j.out = appendJacksonString(j.out, appendJavaString(nil, j.r.take(int(n-1))))
	})
}

// uuid appends a Uuid as Uuid.toString prints it: URL-safe base64
// without padding.
func (j *kraftObject) uuid(name string) {
	j.field(name, func() {
		b := j.r.take(16)
		j.out = append(j.out, '"')
		j.out = base64.RawURLEncoding.AppendEncode(j.out, b)
		j.out = append(j.out, '"')
	})
}

// kraftJSON returns the JSON of the KRaft control record of type t whose
// value is v.
func kraftJSON(t record.ControlType, v []byte) ([]byte, error) {
	r := &kraftReader{b: v}
	j := &kraftObject{r: r}
	j.object(func() {
		j.num("version", r.int16)
		switch t {
		case record.ControlLeaderChange:
			j.num("leaderId", r.int32)
			voter := func() { j.num("voterId", r.int32) }
			j.array("voters", voter)
			j.array("grantingVoters", voter)
		case record.ControlSnapshotHeader:
			j.num("lastContainedLogTimestamp", r.int64)
		case record.ControlKRaftVersion:
			j.num("kRaftVersion", r.int16)
		case record.ControlKRaftVoters:
			j.array("voters", func() {
				j.num("voterId", r.int32)
				j.uuid("voterDirectoryId")
				j.array("endpoints", func() {
					j.str("name")
					j.str("host")
					j.num("port", r.uint16)
				})
				j.field("kRaftVersionFeature", func() {
					j.object(func() {
						j.num("minSupportedVersion", r.int16)
						j.num("maxSupportedVersion", r.int16)
					})
				})
			})
		}
	})
	if r.err != nil {
		return nil, r.err
	}
	return j.out, nil
}

// appendJacksonString appends s as a JSON string the way Jackson writes
// it: quotes, backslashes and control characters escaped (the short forms
// for \b \t \n \f \r, else \u00XX in upper case), all else as is.
func appendJacksonString(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, `\b`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\f':
			dst = append(dst, `\f`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	return append(dst, '"')
}
