package viz

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/verify"
)

// IndexJSON is a page of one index file's entries, for the plots. Entries
// are pairs: (offset, position) for an .index, (timestamp, offset) for a
// .timeindex, and for a .txnindex (producerId, firstOffset, lastOffset,
// lastStableOffset).
type IndexJSON struct {
	File      string    `json:"file"`
	Kind      string    `json:"kind"` // offset, time, txn
	Exists    bool      `json:"exists"`
	EntrySize int       `json:"entrySize"`
	FileSize  int64     `json:"fileSize"`
	From      int       `json:"from"`
	Next      int       `json:"next"`
	Done      bool      `json:"done"`
	Entries   [][]int64 `json:"entries"`
	// Total is the number of entries Kafka trusts (floor(size/entry));
	// Valid those before any zero padding.
	Total int `json:"total"`
	Valid int `json:"valid"`
	// Sanity is Kafka's sanity check's verdict: "" when it passes.
	Sanity string `json:"sanity,omitempty"`
	// Problems are the findings about entries of this page: order breaks
	// always; with p["check"], the cross-check against the .log too
	// (Checked then says so).
	Problems []ProblemJSON `json:"problems"`
	Checked  bool          `json:"checked"`
	// Log is the position the .log was read to by the check, and the
	// corruption that stopped it.
	LogValidEnd int64  `json:"logValidEnd,omitempty"`
	LogError    string `json:"logError,omitempty"`
}

// ProblemJSON is one finding (finding.Problem's fields, with the entry's
// slot when it is about an index entry).
type ProblemJSON struct {
	finding.Problem
	Entry int `json:"entry"`
}

func problemJSON(p finding.Problem, entrySize int) ProblemJSON {
	e := -1
	if entrySize > 0 {
		e = int(p.Position / int64(entrySize))
	}
	p.File = path.Base(p.File)
	return ProblemJSON{Problem: p, Entry: e}
}

// Index returns the entries of the index p["kind"] (offset, time or txn) of
// segment p["base"], from entry p["from"], at most p["limit"].
func (s *Session) Index(q Params) (*IndexJSON, error) {
	p, sg, active, err := s.segmentParam(q)
	if err != nil {
		return nil, err
	}
	from64, err := q.int64("from", 0)
	if err != nil {
		return nil, err
	}
	limit, err := q.int64("limit", int64(MaxIndexEntries))
	if err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), int64(MaxIndexEntries))
	from := int(max(from64, 0))
	kind := q["kind"]
	if kind == "" {
		kind = "offset"
	}
	check := q.flag("check")
	out := &IndexJSON{Kind: kind, From: from, Next: from, Entries: [][]int64{}, Problems: []ProblemJSON{}}
	var sum *logSummary
	if check {
		if sum, err = s.summary(p, sg.LogPath(), sg.Size()); err != nil {
			return nil, err
		}
		out.Checked = true
		out.LogValidEnd = sum.s.ValidEnd
		if sum.s.Err != nil {
			out.LogError = sum.s.Err.Error()
		}
	}
	inPage := func(pr finding.Problem, size int) {
		pj := problemJSON(pr, size)
		if pj.Entry >= from && pj.Entry < out.Next {
			out.Problems = append(out.Problems, pj)
		}
	}
	switch kind {
	case describe.OffsetIndex.String(), describe.TimeIndex.String():
		k, name := describe.OffsetIndex, sg.IndexPath()
		if kind == describe.TimeIndex.String() {
			k, name = describe.TimeIndex, sg.TimeIndexPath()
		}
		out.File, out.EntrySize = path.Base(name), k.EntrySize()
		x, err := describe.OpenIndex(s.fsys, name, sg.BaseOffset(), k)
		if errors.Is(err, fs.ErrNotExist) {
			out.Done = true
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		defer x.Close()
		out.Exists, out.FileSize = true, x.Length()
		pad := x.Padding()
		out.Total, out.Valid = x.Entries(), pad.ValidEntries
		if err := x.SanityCheck(); err != nil {
			out.Sanity = err.Error()
		}
		all := x.AppendAll(nil)
		end := min(len(all), from+int(limit))
		for i := from; i < end; i++ {
			a, b := all[i].Pair()
			out.Entries = append(out.Entries, []int64{a, b})
		}
		out.Next, out.Done = max(end, from), end >= len(all)
		if check {
			for _, pr := range x.Verify(sum.s.Entries) {
				inPage(pr, k.EntrySize())
			}
		} else {
			for i := max(from, 1); i < end && i < pad.ValidEntries; i++ {
				if pr, bad := all[i].OutOfOrder(out.File, &all[i-1]); bad {
					out.Problems = append(out.Problems, problemJSON(pr, k.EntrySize()))
				}
			}
		}
		if pp := verify.Padding(name, k.EntrySize(), pad, active); pp != nil {
			inPage(*pp, k.EntrySize())
		}
	case "txn":
		name := sg.TxnIndexPath()
		out.File, out.EntrySize = path.Base(name), index.AbortedTxnSize
		x, err := index.OpenTransactionIndex(s.fsys, name, sg.BaseOffset(), index.OpenOptions{})
		if err != nil {
			var ce *format.CorruptionError
			if errors.As(err, &ce) {
				out.Exists, out.Done = true, true
				out.Sanity = err.Error()
				return out, nil
			}
			return nil, err
		}
		defer x.Close()
		if st, err := s.fsys.Stat(name); err == nil {
			out.Exists, out.FileSize = true, st.Size()
		}
		all := x.All()
		out.Total, out.Valid = len(all), len(all)
		if err := x.SanityCheck(); err != nil {
			out.Sanity = err.Error()
		}
		end := min(len(all), from+int(limit))
		for i := from; i < end; i++ {
			t := all[i]
			out.Entries = append(out.Entries, []int64{t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset})
		}
		out.Next, out.Done = max(end, from), end >= len(all)
		var entries []verify.LogEntrySummary
		if check {
			entries = sum.s.Entries
		}
		for _, pr := range verify.TxnIndex(x, entries) {
			inPage(pr, index.AbortedTxnSize)
		}
	default:
		return nil, fmt.Errorf("%w: kind %q is not offset, time or txn", ErrBadRequest, kind)
	}
	return out, nil
}

// logSummary is a cached verify.SummarizeLog of one segment.
type logSummary struct {
	key string
	s   *verify.LogSummary
}

// maxSummaries is how many segment summaries a partition keeps.
const maxSummaries = 4

// summary returns the summary of the .log at name (size bytes), computing
// it once per partition open.
func (s *Session) summary(p *partition, name string, size int64) (*logSummary, error) {
	key := name + "@" + strconv.FormatInt(size, 10)
	p.mu.Lock()
	for i, e := range p.summaries {
		if e.key == key {
			p.summaries = append(append(p.summaries[:i:i], p.summaries[i+1:]...), e)
			p.mu.Unlock()
			return e, nil
		}
	}
	p.mu.Unlock()
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, notFound(err)
	}
	defer f.Close()
	sum, err := verify.SummarizeLog(f, size, name)
	if err != nil {
		return nil, err
	}
	e := &logSummary{key: key, s: sum}
	p.mu.Lock()
	p.summaries = append(p.summaries, e)
	if len(p.summaries) > maxSummaries {
		p.summaries = p.summaries[1:]
	}
	p.mu.Unlock()
	return e, nil
}
