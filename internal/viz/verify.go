package viz

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
)

// MaxFindings bounds the findings one verify call returns (the counts
// cover them all).
const MaxFindings = 2000

// VerifyJSON is what verification (inspect.Verify, the engine of
// `segviz verify`) found in a partition.
type VerifyJSON struct {
	Dir      string `json:"dir"`
	OK       bool   `json:"ok"`
	Segments int    `json:"segments"`
	Batches  int64  `json:"batches"`
	Records  int64  `json:"records"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Infos    int    `json:"infos"`
	// PerSegment summarises each segment (inspect.SegmentReport).
	PerSegment []inspect.SegmentReport `json:"perSegment"`
	Findings   []FindingJSON           `json:"findings"`
	// Truncated says there were more than MaxFindings findings.
	Truncated bool `json:"truncated"`
}

// FindingJSON is one finding (finding.Problem) with where the page jumps
// to show it.
type FindingJSON struct {
	ProblemJSON
	// Segment is the base offset of the segment the file belongs to, -1
	// for a file of no segment (a checkpoint).
	Segment int64 `json:"segment"`
	// Suffix is the segment's temporary suffix (".deleted"), if any.
	Suffix string `json:"suffix,omitempty"`
	// Target is the view that shows it: log, index, timeindex, txnindex,
	// retention or partition.
	Target string `json:"target"`
}

// ProgressJSON is how far a running verification is.
type ProgressJSON struct {
	Running bool  `json:"running"`
	Done    int64 `json:"done"`
	Total   int64 `json:"total"`
}

// progress tracks the running verifications, by directory.
type progress struct {
	running     atomic.Bool
	done, total atomic.Int64
	// stop interrupts the running verification (Cancel closes it); nil
	// when none runs. Guarded by Session.mu.
	stop chan struct{}
}

func (s *Session) progressOf(dir string) *progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.progress == nil {
		s.progress = map[string]*progress{}
	}
	p := s.progress[dir]
	if p == nil {
		p = &progress{}
		s.progress[dir] = p
	}
	return p
}

// dir is the parameter "dir", cleaned (cleanDir).
func (q Params) dir() (string, error) {
	dir, err := q.str("dir")
	if err != nil {
		return "", err
	}
	return cleanDir(dir)
}

// Progress reports how far the verification of p["dir"] is, for a page
// waiting on a long one.
func (s *Session) Progress(q Params) (*ProgressJSON, error) {
	dir, err := q.dir()
	if err != nil {
		return nil, err
	}
	p := s.progressOf(dir)
	return &ProgressJSON{Running: p.running.Load(), Done: p.done.Load(), Total: p.total.Load()}, nil
}

// CancelJSON is the answer of Cancel.
type CancelJSON struct {
	// Cancelled says a verification was running and is being stopped.
	Cancelled bool `json:"cancelled"`
}

// Cancel stops the verification of p["dir"] that is running, if one is:
// its Verify call then fails with ErrCancelled.
func (s *Session) Cancel(q Params) (*CancelJSON, error) {
	dir, err := q.dir()
	if err != nil {
		return nil, err
	}
	p := s.progressOf(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.stop == nil {
		return &CancelJSON{}, nil
	}
	close(p.stop)
	p.stop = nil
	return &CancelJSON{Cancelled: true}, nil
}

// Verify checks partition p["dir"] with inspect.Verify: every entry and
// record of every .log, resuming after damage so that every damaged region
// is found; each index against its .log; snapshots, checkpoints and the
// timestamps that make retention surprising at p["now"] under the
// partition's config (retention.ms replaced by p["retention.ms"] if
// given). It reads every byte of the partition once: the page shows
// Progress meanwhile.
func (s *Session) Verify(q Params) (*VerifyJSON, error) {
	p, err := s.partitionParam(q, false)
	if err != nil {
		return nil, err
	}
	now, err := q.int64("now", s.opt.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	pol := retention.PolicyFrom(p.cfg, config.DefaultBroker())
	if q["retention.ms"] != "" {
		if pol.RetentionMs, err = q.int64("retention.ms", pol.RetentionMs); err != nil {
			return nil, err
		}
	}
	prog := s.progressOf(p.dir)
	stop := make(chan struct{})
	s.mu.Lock()
	prog.stop = stop
	s.mu.Unlock()
	prog.running.Store(true)
	defer func() {
		prog.running.Store(false)
		s.mu.Lock()
		if prog.stop == stop {
			prog.stop = nil
		}
		s.mu.Unlock()
	}()
	prog.done.Store(0)
	prog.total.Store(0)
	rep, err := inspect.Verify(s.fsys, p.dir, inspect.Options{
		Now: now, Policy: &pol, MaxDecompressed: MaxDecompressed, Interrupt: stop,
		Progress: func(done, total int64) { prog.done.Store(done); prog.total.Store(total) },
	})
	if errors.Is(err, inspect.ErrInterrupted) {
		return nil, fmt.Errorf("%w: the verification of %s was cancelled after %.1f of %.1f MiB", ErrCancelled, s.dirName(p.dir), float64(prog.done.Load())/(1<<20), float64(prog.total.Load())/(1<<20))
	}
	if err != nil {
		return nil, notFound(err)
	}
	out := &VerifyJSON{Dir: p.dir, OK: rep.OK, Segments: rep.Segments, Batches: rep.Batches, Records: rep.Records,
		Errors: rep.Count(finding.Error), Warnings: rep.Count(finding.Warning), Infos: rep.Count(finding.Info),
		PerSegment: []inspect.SegmentReport{}, Findings: []FindingJSON{}}
	for _, pr := range rep.Partitions {
		out.PerSegment = append(out.PerSegment, pr.Segments...)
	}
	for _, pr := range rep.Problems {
		if len(out.Findings) >= MaxFindings {
			out.Truncated = true
			break
		}
		out.Findings = append(out.Findings, placeFinding(pr))
	}
	return out, nil
}

// placeFinding places an finding.Problem: its segment, and the view that shows
// the bytes it is about.
func placeFinding(pr finding.Problem) FindingJSON {
	name := path.Base(pr.File)
	pr.File = name
	f := FindingJSON{ProblemJSON: ProblemJSON{Problem: pr, Entry: -1}, Segment: -1, Target: "partition"}
	base, ext, err := segment.ParseFileName(name)
	if err != nil {
		return f
	}
	f.Segment = base
	if s, ok := tempSuffix(ext); ok {
		f.Suffix = s
		ext = strings.TrimSuffix(ext, s)
	}
	size := 0
	switch ext {
	case segment.LogSuffix:
		f.Target = "log"
	case segment.IndexSuffix:
		f.Target, size = "index", index.EntrySize
	case segment.TimeIndexSuffix:
		f.Target, size = "timeindex", timeindex.EntrySize
	case segment.TxnIndexSuffix:
		f.Target, size = "txnindex", index.AbortedTxnSize
	}
	switch pr.Kind {
	case finding.KindFarPastTimestamp, finding.KindFutureTimestamp, finding.KindMtimeFallback, finding.KindTimestampOrder:
		f.Target = "retention"
	}
	if size > 0 && pr.Position >= 0 {
		f.Entry = int(pr.Position / int64(size))
	}
	return f
}
