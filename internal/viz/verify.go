package viz

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/log/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeindex"
)

// Kinds of the findings verification adds to index's (index.Kind*) and
// retention's (retention.Kind*).
const (
	KindLogCorrupt   = dumplog.KindLogCorrupt // bytes that are not a valid entry, followed by more data
	KindLogCRC       = "log-crc-mismatch"     // a complete entry whose checksum fails
	KindLogTornTail  = "log-torn-tail"        // a partial entry at the end: a torn write
	KindLogZeroTail  = "log-zero-tail"        // zero bytes at the end: preallocation or a crash
	KindIndexMissing = "index-missing"        // a segment without its .index or .timeindex
	KindLoad         = "load-problem"         // something opening the partition could not trust
	KindDeleted      = "segment-deleted"      // a segment's files waiting as .deleted
)

// MaxFindings bounds the findings of one verify call.
var MaxFindings = 1000

// VerifyJSON is what verification found in one segment, or (without
// p["base"]) in the partition as a whole.
type VerifyJSON struct {
	Dir     string        `json:"dir"`
	Base    *int64        `json:"base,omitempty"`
	Entries int           `json:"entries"`
	Bytes   int64         `json:"bytes"`
	Errors  int           `json:"errors"`
	Warns   int           `json:"warnings"`
	Infos   int           `json:"infos"`
	Finds   []FindingJSON `json:"findings"`
	// Truncated says MaxFindings was reached.
	Truncated bool `json:"truncated"`
}

// FindingJSON is one finding, with where the page jumps to show it.
type FindingJSON struct {
	ProblemJSON
	Segment int64 `json:"segment"`
	// Target is the view that shows it: log, index, timeindex, txnindex,
	// retention or partition.
	Target string `json:"target"`
}

func (v *VerifyJSON) add(f FindingJSON) {
	if len(v.Finds) >= MaxFindings {
		v.Truncated = true
		return
	}
	switch f.Level {
	case "error":
		v.Errors++
	case "warning":
		v.Warns++
	default:
		v.Infos++
	}
	v.Finds = append(v.Finds, f)
}

// Verify checks segment p["base"] of partition p["dir"]: every entry of its
// .log in full (sizes, CRCs, records), continuing past checksum failures;
// its tail; and each index against the .log. Without p["base"] it reports
// what concerns the partition as a whole: what opening it could not trust,
// segments waiting as .deleted, and the timestamps that make retention
// surprising (at p["now"], under the partition's config).
func (s *Session) Verify(q Params) (*VerifyJSON, error) {
	dir, err := q.str("dir")
	if err != nil {
		return nil, err
	}
	p, err := s.open(dir, false)
	if err != nil {
		return nil, err
	}
	out := &VerifyJSON{Dir: p.dir, Finds: []FindingJSON{}}
	if q["base"] == "" {
		return out, s.verifyPartition(p, q, out)
	}
	base, err := q.int64("base", 0)
	if err != nil {
		return nil, err
	}
	sg, active, err := p.segment(base)
	if err != nil {
		return nil, err
	}
	out.Base = &base
	out.Bytes = sg.Size()
	if err := s.verifyLog(sg, base, active, out); err != nil {
		return nil, err
	}
	sum, err := s.summary(p, sg.LogPath(), sg.Size())
	if err != nil {
		return nil, err
	}
	idx := func(ps []index.Problem, size int, target string) {
		for _, pr := range ps {
			out.add(FindingJSON{ProblemJSON: problemJSON(pr, size), Segment: base, Target: target})
		}
	}
	missing := func(name string) {
		level, detail := "warning", "missing: Kafka rebuilds it from the .log when it loads the partition (the viewer built it in memory)"
		if active {
			level, detail = "info", "missing: normal for a copied active segment, whose index Kafka rebuilds (the viewer built it in memory)"
		}
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: path.Base(name), Kind: KindIndexMissing, Level: level, Detail: detail, Entry: -1}, Segment: base, Target: "log"})
	}
	if x, err := index.OpenOffsetIndex(s.fsys, sg.IndexPath(), base, -1, false); err == nil {
		if err := x.SanityCheck(); err != nil {
			idx([]index.Problem{{File: sg.IndexPath(), Kind: index.KindSanity, Level: index.Error, Detail: err.Error()}}, index.EntrySize, "index")
		}
		if pp := index.PaddingProblem(sg.IndexPath(), index.EntrySize, x.Padding(), active); pp != nil {
			idx([]index.Problem{*pp}, index.EntrySize, "index")
		}
		idx(index.VerifyOffsetIndex(x, sum.s.Entries), index.EntrySize, "index")
		x.Close()
	} else if errors.Is(err, fs.ErrNotExist) {
		missing(sg.IndexPath())
	} else {
		return nil, err
	}
	if x, err := timeindex.OpenTimeIndex(s.fsys, sg.TimeIndexPath(), base, -1, false); err == nil {
		if err := x.SanityCheck(); err != nil {
			idx([]index.Problem{{File: sg.TimeIndexPath(), Kind: index.KindSanity, Level: index.Error, Detail: err.Error()}}, timeindex.EntrySize, "timeindex")
		}
		if pp := index.PaddingProblem(sg.TimeIndexPath(), timeindex.EntrySize, x.Padding(), active); pp != nil {
			idx([]index.Problem{*pp}, timeindex.EntrySize, "timeindex")
		}
		idx(timeindex.Verify(x, sum.s.Entries), timeindex.EntrySize, "timeindex")
		x.Close()
	} else if errors.Is(err, fs.ErrNotExist) {
		missing(sg.TimeIndexPath())
	} else {
		return nil, err
	}
	x, err := index.OpenTransactionIndex(s.fsys, sg.TxnIndexPath(), base, false)
	if err != nil {
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return nil, err
		}
		idx([]index.Problem{{File: sg.TxnIndexPath(), Position: ce.Offset, Kind: index.KindSanity, Level: index.Error, Detail: err.Error()}}, index.AbortedTxnSize, "txnindex")
	} else {
		idx(index.VerifyTxnIndex(x, sum.s.Entries), index.AbortedTxnSize, "txnindex")
		x.Close()
	}
	return out, nil
}

// verifyLog walks the .log with full validation, listing every entry that
// fails and going on after checksum failures (whose entry's extent is
// known); other corruption ends the walk, as it ends Kafka's recovery.
func (s *Session) verifyLog(sg *segment.Segment, base int64, active bool, out *VerifyJSON) error {
	f, err := s.fsys.Open(sg.LogPath())
	if err != nil {
		return notFound(err)
	}
	defer f.Close()
	size := sg.Size()
	file := path.Base(sg.LogPath())
	rs := record.ReaderScanner{Validate: true}
	for pos := int64(0); ; {
		rs.Reset(f, size, sg.LogPath(), pos)
		for rs.Next() {
			out.Entries++
		}
		err := rs.Err()
		if err == nil {
			break
		}
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return err
		}
		at := rs.ValidEnd()
		if e, ok := badCRCEntry(f, size, at, err); ok {
			out.Entries++
			out.add(FindingJSON{ProblemJSON: ProblemJSON{File: file, Position: at, Kind: KindLogCRC, Level: "error", Entry: -1,
				Detail: fmt.Sprintf("the entry at %d (offsets %d..%d, %d bytes) fails its checksum: %v; Kafka's recovery truncates the segment here", at, e.BaseOffset(), e.LastOffset(), e.Size(), err)}, Segment: base, Target: "log"})
			pos = at + int64(e.Size())
			continue
		}
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: file, Position: ce.Offset, Kind: KindLogCorrupt, Level: "error", Entry: -1,
			Detail: fmt.Sprintf("%v; the valid entries end at %d, and nothing after can be read", err, at)}, Segment: base, Target: "log"})
		return nil
	}
	switch kind, at, n := rs.Tail(); kind {
	case record.TailPartial:
		level := "error"
		if active {
			level = "warning"
		}
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: file, Position: at, Kind: KindLogTornTail, Level: level, Entry: -1,
			Detail: fmt.Sprintf("%d bytes at the end are a partial entry: a write torn by a crash; Kafka's recovery truncates them", n)}, Segment: base, Target: "log"})
	case record.TailZeros:
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: file, Position: at, Kind: KindLogZeroTail, Level: "warning", Entry: -1,
			Detail: fmt.Sprintf("%d zero bytes at the end: a preallocated file (preallocate=true) or a crash-extended one; Kafka's recovery truncates them", n)}, Segment: base, Target: "log"})
	}
	return nil
}

func (s *Session) verifyPartition(p *partition, q Params, out *VerifyJSON) error {
	for _, pr := range p.l.LoadReport().Problems {
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: path.Base(p.dir), Kind: KindLoad, Level: "warning", Detail: pr, Entry: -1}, Segment: -1, Target: "partition"})
	}
	infos, err := readDirNames(s, p.dir)
	if err != nil {
		return err
	}
	for _, name := range infos {
		base, ext, err := segment.ParseFileName(name)
		if err != nil || ext != segment.LogSuffix+segment.DeletedSuffix {
			continue
		}
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: name, Kind: KindDeleted, Level: "info", Entry: -1,
			Detail: "a deleted segment whose files wait for file.delete.delay.ms; its records are no longer readable, and Kafka removes the files at the next load if the broker restarts first"}, Segment: base, Target: "partition"})
	}
	st, _, err := s.state(p)
	if err != nil {
		return err
	}
	now, err := q.int64("now", s.opt.Now().UnixMilli())
	if err != nil {
		return err
	}
	pol := retention.PolicyFrom(p.cfg, config.DefaultBroker())
	for _, w := range retention.TimestampWarnings(st, pol, now) {
		out.add(FindingJSON{ProblemJSON: ProblemJSON{File: segment.FileName(w.BaseOffset, segment.LogSuffix), Kind: string(w.Kind), Level: "warning", Detail: w.Detail, Entry: -1}, Segment: w.BaseOffset, Target: "retention"})
	}
	return nil
}

func readDirNames(s *Session, dir string) ([]string, error) {
	f, err := s.fsys.Open(dir)
	if err != nil {
		return nil, notFound(err)
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
