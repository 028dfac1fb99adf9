package finding

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeLayout is how a detail prints a time: RFC 3339 in UTC with
// milliseconds, as Kafka's timestamps have them.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Timestamp formats a record or index timestamp (ms since the epoch) for
// a detail: TimeLayout in UTC, or "-1 (no timestamp)" for Kafka's
// RecordBatch.NO_TIMESTAMP and other negative values as they are.
func Timestamp(ms int64) string {
	if ms < 0 {
		if ms == -1 {
			return "-1 (no timestamp)"
		}
		return strconv.FormatInt(ms, 10) + " (before 1970)"
	}
	return time.UnixMilli(ms).UTC().Format(TimeLayout)
}

// Duration formats ms milliseconds in words: "250 ms", "1.5 s", "45 s",
// "3 m 5.895 s", "2 h 5 m", "7 d", "3665 d 8 h". Below an hour it is
// exact (a retention decision can turn on one millisecond: "1 m 0.001 s"
// is more than retention.ms 60000); from an hour on it shows two units,
// the rest rounded down. Negative durations get a leading "-".
func Duration(ms int64) string {
	if ms < 0 {
		if ms == math.MinInt64 {
			return "-" + Duration(math.MaxInt64)
		}
		return "-" + Duration(-ms)
	}
	const (
		sec  = 1000
		min  = 60 * sec
		hour = 60 * min
		day  = 24 * hour
	)
	secs := func(ms int64) string { // exact: "5", "5.895"
		s := strconv.FormatInt(ms/sec, 10)
		if f := ms % sec; f != 0 {
			s += strings.TrimRight("."+strconv.FormatInt(sec+f, 10)[1:], "0")
		}
		return s + " s"
	}
	two := func(a int64, ua string, b int64, ub string) string {
		s := strconv.FormatInt(a, 10) + " " + ua
		if b > 0 {
			s += " " + strconv.FormatInt(b, 10) + " " + ub
		}
		return s
	}
	switch {
	case ms < sec:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < min:
		return secs(ms)
	case ms < hour:
		s := strconv.FormatInt(ms/min, 10) + " m"
		if r := ms % min; r > 0 {
			s += " " + secs(r)
		}
		return s
	case ms < day:
		return two(ms/hour, "h", ms%hour/min, "m")
	}
	return two(ms/day, "d", ms%day/hour, "h")
}
