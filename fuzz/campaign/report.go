package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

type result struct {
	Target   target
	Args     []string
	Stats    stats
	Wall     time.Duration
	Attempts int
	Err      error
}

// Replay is the command that replays the crasher with plain go test.
func (r result) Replay() string {
	run := "^" + r.Target.Name + "$"
	if r.Stats.Crasher != "" {
		run = "^" + r.Target.Name + "$/^" + filepath.Base(r.Stats.Crasher) + "$"
	} else if r.Stats.Rerun != "" {
		run = r.Stats.Rerun
	}
	return fmt.Sprintf("go test -run='%s' %s", run, r.Target.ImportPath)
}

func printResult(w io.Writer, r result) {
	status := "ok"
	if r.Err != nil {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%-24s %-4s %8.0f execs/s  %9d execs  %4d new  (corpus %d, %v)\n",
		r.Target.Name, status, r.Stats.ExecsPerSec(), r.Stats.Last.Execs, r.Stats.NewEntries(), r.Stats.Last.Total, r.Wall.Round(time.Second))
	if r.Err != nil {
		lines := r.Stats.Failed
		if len(lines) == 0 {
			lines = r.Stats.Tail
		}
		for _, l := range lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
		if r.Stats.Crasher != "" {
			fmt.Fprintf(w, "    crasher: %s\n", filepath.Join(r.Target.Dir, r.Stats.Crasher))
		}
		fmt.Fprintf(w, "    replay:  %s\n", r.Replay())
	}
}

func printSummary(w io.Writer, rs []result) {
	fmt.Fprintf(w, "%-24s %-40s %6s %10s %10s %6s %8s %s\n", "target", "package", "result", "execs/s", "execs", "new", "corpus", "time")
	failed := 0
	for _, r := range rs {
		status := "ok"
		if r.Err != nil {
			status = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "%-24s %-40s %6s %10.0f %10d %6d %8d %s\n", r.Target.Name, r.Target.ImportPath, status,
			r.Stats.ExecsPerSec(), r.Stats.Last.Execs, r.Stats.NewEntries(), r.Stats.Last.Total, r.Wall.Round(time.Second))
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d of %d targets failed; each crasher stays in its package's testdata/fuzz/<Target>/, where go test replays it:\n", failed, len(rs))
		for _, r := range rs {
			if r.Err != nil {
				fmt.Fprintf(w, "  %s\n", r.Replay())
			}
		}
	}
}
