package main

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// progress is one status line of `go test -fuzz`:
//
//	fuzz: elapsed: 3s, gathering baseline coverage: 12/144 completed
//	fuzz: elapsed: 6s, gathering baseline coverage: 144/144 completed, now fuzzing with 2 workers
//	fuzz: elapsed: 9s, execs: 12345 (4115/sec), new interesting: 7 (total: 151)
type progress struct {
	Elapsed time.Duration
	// Baseline is set on the lines of the baseline coverage phase;
	// BaselineDone on the one that ends it.
	Baseline, BaselineDone bool
	Execs                  int64
	Rate                   int64 // the engine's own rate over its last interval
	NewInteresting         int
	Total                  int // corpus size: seeds, testdata and cache entries
}

var (
	reElapsed  = regexp.MustCompile(`^fuzz: elapsed: ([0-9hms.]+),`)
	reExecs    = regexp.MustCompile(`execs: (\d+) \((\d+)/sec\), new interesting: (\d+) \(total: (\d+)\)`)
	reBaseline = regexp.MustCompile(`gathering baseline coverage: (\d+)/(\d+) completed`)
	reWritten  = regexp.MustCompile(`Failing input written to (\S+)`)
	reRerun    = regexp.MustCompile(`^\s*go test -run=(\S+)`)
)

// parseProgress decodes a status line; ok is false for other lines.
func parseProgress(line string) (p progress, ok bool) {
	m := reElapsed.FindStringSubmatch(line)
	if m == nil {
		return p, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		return p, false
	}
	p.Elapsed = d
	if b := reBaseline.FindStringSubmatch(line); b != nil {
		p.Baseline = true
		p.BaselineDone = b[1] == b[2] && strings.Contains(line, "now fuzzing")
		p.Total, _ = strconv.Atoi(b[2])
		return p, true
	}
	e := reExecs.FindStringSubmatch(line)
	if e == nil {
		return p, true // "minimizing" and the like
	}
	p.Execs, _ = strconv.ParseInt(e[1], 10, 64)
	p.Rate, _ = strconv.ParseInt(e[2], 10, 64)
	p.NewInteresting, _ = strconv.Atoi(e[3])
	p.Total, _ = strconv.Atoi(e[4])
	return p, true
}

// stats accumulates what one `go test -fuzz` run printed.
type stats struct {
	Last          progress
	Seen          bool          // any execs line
	BaselineAt    time.Duration // elapsed when fuzzing proper began
	BaselineTotal int           // corpus size at the start
	Crasher       string        // "testdata/fuzz/FuzzX/abc", if one was written
	Rerun         string        // the -run argument go test suggests
	Failed        []string      // the --- FAIL block and what follows, for the report
	Tail          []string      // the last other lines (a build failure, say)
	failing       bool
}

// feed takes one line of output.
func (s *stats) feed(line string) {
	if p, ok := parseProgress(line); ok {
		if p.Baseline {
			if p.BaselineDone {
				s.BaselineAt = p.Elapsed
			}
			if s.BaselineTotal == 0 {
				s.BaselineTotal = p.Total
			}
			return
		}
		if p.Execs > 0 || p.Total > 0 {
			s.Last, s.Seen = p, true
		}
		return
	}
	if m := reWritten.FindStringSubmatch(line); m != nil {
		s.Crasher = m[1]
	}
	if m := reRerun.FindStringSubmatch(line); m != nil {
		s.Rerun = m[1]
	}
	if strings.HasPrefix(line, "--- FAIL") {
		s.failing = true
	}
	if s.failing && len(s.Failed) < 60 {
		s.Failed = append(s.Failed, line)
	}
	if !s.failing {
		s.Tail = append(s.Tail, line)
		if len(s.Tail) > 20 {
			s.Tail = s.Tail[1:]
		}
	}
}

// ExecsPerSec is the rate over the fuzzing phase (after the baseline
// coverage pass), from the engine's cumulative counters.
func (s *stats) ExecsPerSec() float64 {
	d := s.Last.Elapsed - s.BaselineAt
	if !s.Seen || d <= 0 {
		return 0
	}
	return float64(s.Last.Execs) / d.Seconds()
}

// NewEntries is how many inputs the run added to the corpus.
func (s *stats) NewEntries() int { return s.Last.NewInteresting }
