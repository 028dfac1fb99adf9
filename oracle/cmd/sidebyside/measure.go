package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/maprange"
)

// proc is one command line the harness times: a whole process, its
// standard output sent to a file.
type proc struct {
	args []string // args[0] is the program
	env  []string // added to the environment
	out  string   // the file standard output goes to ("" discards it)
	ok   []int    // the exit codes that count as success (nil: only 0)
}

// String is the command line as a shell would take it.
func (p proc) String() string {
	var b strings.Builder
	for _, e := range p.env {
		b.WriteString(e)
		b.WriteByte(' ')
	}
	b.WriteString(strings.Join(p.args, " "))
	if p.out != "" {
		b.WriteString(" > ")
		b.WriteString(p.out)
	}
	return b.String()
}

// run runs p once and returns its wall time. Nothing of the harness's
// runs beside it: a poller (peakRSS) would take CPU from a child that
// keeps both cores busy, and not from one that leaves a core idle, and
// so lower every two-cores-against-one ratio.
func (p proc) run() (time.Duration, error) {
	d, _, err := p.exec(false)
	return d, err
}

// peakRSS runs p once, untimed, and returns its peak resident set size:
// its VmHWM, polled every millisecond. ru_maxrss would count the
// harness's own RSS: Go starts children with vfork, and the kernel
// records the shared mm's high-water mark in the child at exec. VmHWM is
// the new mm's alone.
func (p proc) peakRSS() (int64, error) {
	_, rss, err := p.exec(true)
	return rss, err
}

// exec runs p once, polling its VmHWM when poll is set.
func (p proc) exec(poll bool) (time.Duration, int64, error) {
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Env = append(os.Environ(), p.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if p.out != "" {
		f, err := os.Create(p.out)
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		cmd.Stdout = f
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	done := make(chan struct{})
	hwm := make(chan int64, 1)
	if poll {
		go func() { hwm <- pollHWM(cmd.Process.Pid, done) }()
	} else {
		hwm <- 0
	}
	err := cmd.Wait()
	d := time.Since(start)
	close(done)
	rss := <-hwm
	if err != nil {
		ee, isExit := err.(*exec.ExitError)
		if !isExit || !slices.Contains(p.ok, ee.ExitCode()) {
			return d, 0, fmt.Errorf("%s: %v\n%s", p, err, tail(stderr.String(), 20))
		}
	}
	return d, rss, nil
}

// pollHWM reads VmHWM of pid every millisecond until done, and returns
// the last value read, in bytes. It can miss growth in the final
// millisecond of a process.
func pollHWM(pid int, done <-chan struct{}) int64 {
	name := fmt.Sprintf("/proc/%d/status", pid)
	var last int64
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(name); err == nil {
			if i := bytes.Index(b, []byte("VmHWM:")); i >= 0 {
				f := strings.Fields(string(b[i+len("VmHWM:"):]))
				if len(f) > 0 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb*1024 > last {
						last = kb * 1024
					}
				}
			}
		}
		select {
		case <-done:
			return last
		case <-t.C:
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// crcFloor reads files as a reader must (1 MiB reads, from the page cache
// when warm) and checksums every byte with CRC-32C: the least any tool that
// checks every batch's CRC can do.
func crcFloor(files []string, buf []byte) (time.Duration, error) {
	start := time.Now()
	var crc uint32
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		for {
			n, err := f.Read(buf)
			crc = format.UpdateCRC32C(crc, buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return 0, err
			}
		}
		f.Close()
	}
	d := time.Since(start)
	sinkCRC = crc
	return d, nil
}

var sinkCRC uint32

// mapWindowFloor is how much of a file crcFloorMapped maps at once: the
// parallel dump's window.
const mapWindowFloor = 64 << 20

// crcFloorMapped is the floor of a dump that checks every batch's CRC on
// all cores: the file cut into one part per worker (no entry boundaries
// followed), each part mapped mapWindowFloor bytes at a time and
// checksummed by its own goroutine (format.UpdateCRC32C), then unmapped.
// No cutting, no lines, no output: what no dump can beat.
func crcFloorMapped(file string, workers int) (time.Duration, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	mapRange := maprange.For(f)
	if mapRange == nil {
		return 0, fmt.Errorf("%s: files are not mapped here", file)
	}
	per := (size + int64(workers) - 1) / int64(workers)
	start := time.Now()
	errs := make([]error, workers)
	crcs := make([]uint32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := int64(w)*per, min(size, int64(w+1)*per)
		wg.Go(func() {
			for off := lo; off < hi; off += mapWindowFloor {
				n := min(mapWindowFloor, hi-off)
				b, release, err := mapRange(off, int(n))
				if err != nil {
					errs[w] = err
					return
				}
				crcs[w] = format.UpdateCRC32C(crcs[w], b)
				release()
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	for w := range workers {
		if errs[w] != nil {
			return 0, errs[w]
		}
		sinkCRC ^= crcs[w]
	}
	return d, nil
}

// series is one quantity measured once per run.
type series []float64

func (s series) sorted() series { c := slices.Clone(s); slices.Sort(c); return c }
func (s series) min() float64   { return slices.Min(s) }
func (s series) max() float64   { return slices.Max(s) }

func (s series) median() float64 {
	c := s.sorted()
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

// spread is max/min: 1 for identical runs.
func (s series) spread() float64 {
	if s.min() <= 0 {
		return 0
	}
	return s.max() / s.min()
}

// minus returns s with d taken off each run (a start-up estimate), floored
// at a microsecond so that a ratio stays finite.
func (s series) minus(d float64) series {
	out := make(series, len(s))
	for i, v := range s {
		out[i] = max(v-d, 1e-6)
	}
	return out
}
