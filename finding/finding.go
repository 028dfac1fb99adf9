package finding

import (
	"fmt"
	"strconv"
)

// Level says how serious a Problem is. In JSON and text it is "info",
// "warning" or "error".
type Level int8

// Levels.
const (
	// Info: a fact worth knowing that is not a defect (a follower's
	// multi-batch index entry, an offset gap in a compacted log).
	Info Level = iota
	// Warning: not a defect of the data, but a state to know about (the
	// preallocated index of the active segment, a torn tail that recovery
	// will cut, timestamps that make retention delete early).
	Warning
	// Error: something is wrong: a read, a lookup or Kafka's recovery
	// would lose or misplace data.
	Error
)

// String returns "info", "warning" or "error".
func (l Level) String() string {
	switch l {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler, for tools that read
// segviz's JSON back.
func (l *Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "info":
		*l = Info
	case "warning":
		*l = Warning
	case "error":
		*l = Error
	default:
		return fmt.Errorf("finding: unknown level %q", b)
	}
	return nil
}

// Problem is one finding about the data: what every verifier, the load of
// a partition and the retention planner report, what segviz prints (text
// and JSON) and the web page shows.
type Problem struct {
	// File is the file the problem is in, as the FS names it.
	File string `json:"file"`
	// Position is the byte position in File the problem is about: the
	// start of the entry, index entry, checkpoint line or snapshot entry
	// at fault; -1 when it is about the file as a whole.
	Position int64 `json:"position"`
	// Kind is one of the Kind constants: a stable name.
	Kind  string `json:"kind"`
	Level Level  `json:"level"`
	// Detail says what was found, in words, with the values involved.
	Detail string `json:"detail"`
}

// String formats p as "level file:position: kind: detail" (without
// ":position" when it is -1).
func (p Problem) String() string {
	if p.Position < 0 {
		return fmt.Sprintf("%s %s: %s: %s", p.Level, p.File, p.Kind, p.Detail)
	}
	return fmt.Sprintf("%s %s:%d: %s: %s", p.Level, p.File, p.Position, p.Kind, p.Detail)
}

// Count returns how many of problems have the given level.
func Count(problems []Problem, level Level) int {
	n := 0
	for i := range problems {
		if problems[i].Level == level {
			n++
		}
	}
	return n
}
