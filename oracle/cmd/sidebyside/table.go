package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"
)

// row is one line of the table: segkit's runs (a) against the other
// side's (b), interleaved in one harness run. For times, the ratio is
// b/a: how many times faster segkit is (or, against the CRC floor, which
// fraction of the floor's speed it reaches). For a peak RSS row, a holds
// bytes and the ratio is the largest over the budget in target.
type row struct {
	name   string
	vs     string // the other side; "" is Kafka
	a, b   series // seconds (or bytes for rss)
	bytes  int64  // show rates of this many bytes instead of times
	target float64
	atMost bool // the ratio must be at most target (else at least)
	rss    bool
	cmds   []string
	// void says why the row's figures mean nothing (a steady-state row
	// whose big runs took hardly longer than start-up).
	void string
}

// steadyRow is a steady-state row: each side's big runs less its median
// run on the tiny input, as a rate of bytes.
func steadyRow(name string, a, aTiny, b, bTiny series, bytes int64, target float64) *row {
	r := &row{name: name, a: a.minus(aTiny.median()), b: b.minus(bTiny.median()), bytes: bytes, target: target,
		cmds: []string{"the row above, less each tool's median run on the tiny input"}}
	if a.median() < 1.5*aTiny.median() || b.median() < 1.5*bTiny.median() {
		r.void = "start-up dominates (big run < 1.5× the tiny one): use a larger -size"
	}
	return r
}

// ratios are the ratio of the medians and of the minima.
func (r *row) ratios() (med, min float64) {
	if r.rss {
		return r.a.max() / r.target, r.a.min() / r.target
	}
	return r.b.median() / r.a.median(), r.b.min() / r.a.min()
}

func (r *row) spread() float64 {
	if r.rss {
		return r.a.spread()
	}
	return max(r.a.spread(), r.b.spread())
}

func (r *row) side(s series) string {
	switch {
	case len(s) == 0:
		return ""
	case r.rss:
		return fmt.Sprintf("max %s, med %s", mib(s.max()), mib(s.median()))
	case r.bytes > 0:
		return fmt.Sprintf("%s / %s", rate(float64(r.bytes)/s.min()), rate(float64(r.bytes)/s.median()))
	default:
		return fmt.Sprintf("%s / %s", dur(s.min()), dur(s.median()))
	}
}

func (r *row) verdict(spreadMax float64) string {
	if r.void != "" {
		return "n/a: " + r.void
	}
	med, _ := r.ratios()
	var v string
	switch {
	case r.target == 0:
		v = "(no target)"
	case r.atMost && med <= 1, !r.atMost && med >= r.target:
		v = "met"
	default:
		v = "MISSED"
	}
	if sp := r.spread(); sp > spreadMax {
		v += fmt.Sprintf(" (untrusted: spread %.2f > %.2f)", sp, spreadMax)
	}
	return v
}

func (r *row) targetText() string {
	switch {
	case r.rss:
		return "≤ " + mib(r.target)
	case r.target == 0:
		return "-"
	case r.target < 1:
		return fmt.Sprintf("≥ %.2f×", r.target)
	default:
		return fmt.Sprintf("≥ %.1f×", r.target)
	}
}

func (b *bench) print(w io.Writer) {
	fmt.Fprintf(w, "segkit side by side (%s/%s, %d CPUs, %s): %d measured runs each, interleaved, after %d warm-up round(s); big segment %d bytes, dumped segment %d bytes (%v in about half of the batches)\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339), b.runs, b.warmup, b.bigSize, b.dumpLen, b.codec)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "#\trow\tsegkit best / median\tvs\tother best / median\tratio med (min)\tspread\ttarget\tverdict")
	for i, r := range b.rows {
		vs := r.vs
		if vs == "" {
			vs = "Kafka 4.3.1"
		}
		if r.rss {
			vs = "budget"
		}
		med, min := r.ratios()
		sp := fmt.Sprintf("%.2f", r.a.spread())
		if !r.rss {
			sp += fmt.Sprintf(" / %.2f", r.b.spread())
		}
		other := r.side(r.b)
		if r.rss {
			other = mib(r.target)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f× (%.2f×)\t%s\t%s\t%s\n", i+1, r.name, r.side(r.a), vs, other, med, min, sp, r.targetText(), r.verdict(b.spreadMax))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nTimes are whole-process wall times (JVM start included for Kafka) unless a row says in-process (\"WASM decode\" rows: go test's time per batch);")
	fmt.Fprintln(w, "\"steady\" rows subtract each tool's median time on the tiny segment and show bytes/s; ratio = other's time / segkit's;")
	fmt.Fprintln(w, "spread = max/min of each side's runs; peak RSS is the child's VmHWM (/proc/PID/status, polled every millisecond, in untimed runs of its own).")
	fmt.Fprintln(w, "\nCommands:")
	for i, r := range b.rows {
		for _, c := range r.cmds {
			fmt.Fprintf(w, "  [%d] %s\n", i+1, c)
		}
	}
	if len(b.notes) > 0 {
		fmt.Fprintln(w, "\nChecks:")
		for _, n := range b.notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
}

func dur(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1f ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.1f µs", s*1e6)
	default:
		return fmt.Sprintf("%.0f ns", s*1e9)
	}
}

func rate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f GB/s", bps/1e9)
	default:
		return fmt.Sprintf("%.0f MB/s", bps/1e6)
	}
}

func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }
