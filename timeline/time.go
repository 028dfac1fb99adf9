package timeline

import (
	"fmt"
	"strconv"
	"time"
)

// These constants are part of the on-disk format and should not be changed.
const (
	// millisDigits and seqDigits are the widths of the two parts of an
	// instant time's text form: epoch milliseconds, zero-padded, then the
	// sequence number within the millisecond.
	millisDigits = 13
	seqDigits    = 4
	// timeDigits is the width of an instant time in file names and JSON.
	timeDigits = millisDigits + seqDigits

	// MaxMillis is the largest epoch millisecond an instant time holds
	// (13 digits: 2286-11-20).
	MaxMillis = 9_999_999_999_999
	// MaxSeq is the largest sequence number within a millisecond.
	MaxSeq = 9_999
)

// InstantTime identifies an instant and orders the timeline: epoch
// milliseconds, plus a sequence number that tells apart the times issued
// within one millisecond. A Timeline never issues the same time twice,
// and each time it issues is greater than every time it has seen (the
// requested and completed times of every instant, archived ones
// included), so instant times are unique and increase in the order the
// instants were begun, whatever the clock does.
//
// Its text form, in file names and JSON, is 17 decimal digits: 13 of
// Millis, zero-padded, then 4 of Seq; the text forms sort as the times do.
type InstantTime struct {
	Millis int64  // milliseconds since the Unix epoch, 0..MaxMillis
	Seq    uint16 // 0..MaxSeq
}

// Compare returns -1, 0 or +1 as t is before, equal to or after u.
func (t InstantTime) Compare(u InstantTime) int {
	switch {
	case t.Millis < u.Millis:
		return -1
	case t.Millis > u.Millis:
		return 1
	case t.Seq < u.Seq:
		return -1
	case t.Seq > u.Seq:
		return 1
	}
	return 0
}

// IsZero reports whether t is the zero time (00000000000000000).
func (t InstantTime) IsZero() bool { return t == InstantTime{} }

// Time returns the wall-clock time of t's milliseconds (Seq dropped), in UTC.
func (t InstantTime) Time() time.Time { return time.UnixMilli(t.Millis).UTC() }

// String returns t's 17-digit text form.
func (t InstantTime) String() string { return string(appendTime(nil, t)) }

// AppendText appends t's 17-digit text form to dst.
func (t InstantTime) AppendText(dst []byte) ([]byte, error) {
	return appendTime(dst, t), nil
}

// MarshalText returns t's 17-digit text form.
func (t InstantTime) MarshalText() ([]byte, error) { return appendTime(nil, t), nil }

// UnmarshalText parses a 17-digit text form.
func (t *InstantTime) UnmarshalText(b []byte) error {
	v, err := ParseInstantTime(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

func appendTime(dst []byte, t InstantTime) []byte {
	var buf [20]byte
	m := strconv.AppendInt(buf[:0], t.Millis, 10)
	for i := len(m); i < millisDigits; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, m...)
	s := strconv.AppendUint(buf[:0], uint64(t.Seq), 10)
	for i := len(s); i < seqDigits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// ParseInstantTime parses the 17-digit text form of an instant time.
func ParseInstantTime(s string) (InstantTime, error) {
	if len(s) != timeDigits {
		return InstantTime{}, fmt.Errorf("timeline: instant time %q is not %d digits", s, timeDigits)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return InstantTime{}, fmt.Errorf("timeline: instant time %q is not %d digits", s, timeDigits)
		}
	}
	m, _ := strconv.ParseInt(s[:millisDigits], 10, 64)
	q, _ := strconv.ParseUint(s[millisDigits:], 10, 16)
	return InstantTime{Millis: m, Seq: uint16(q)}, nil
}

// Clock gives the time instants are stamped with. segment.Clock and the
// other clocks of segkit satisfy it.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// nextTime returns the time to issue after last at wall-clock time now:
// now's millisecond if it is past last's, else last's millisecond with
// the next sequence number (the next millisecond once Seq is exhausted).
func nextTime(last InstantTime, now time.Time) (InstantTime, error) {
	ms := max(now.UnixMilli(), 0)
	var t InstantTime
	switch {
	case ms > last.Millis:
		t = InstantTime{Millis: ms}
	case last.Seq < MaxSeq:
		t = InstantTime{Millis: last.Millis, Seq: last.Seq + 1}
	default:
		t = InstantTime{Millis: last.Millis + 1}
	}
	if t.Millis > MaxMillis {
		return InstantTime{}, fmt.Errorf("%w: instant time past %d ms (year 2286)", ErrTimeRange, int64(MaxMillis))
	}
	return t, nil
}
