package viz

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/segkit/segkit/internal/historyjson"
	"github.com/segkit/segkit/timeline"
)

// MaxTimelineInstants bounds the instants one timeline call returns: the
// most recent ones, the right end of the lane. A timeline holds at most
// timeline.DefaultArchiveAfter active instants, but its archive grows
// without bound. A variable so that tests can shrink it.
var MaxTimelineInstants = 2000

// TimelineJSON is the timeline lane of a partition: its completed
// instants (the timeline package's, read-only), oldest first, each as
// `segviz history --json` prints it plus what the lane draws.
type TimelineJSON struct {
	Dir string `json:"dir"`
	// Exists says the partition has a timeline directory
	// (timeline.DirName); without one the timeline is empty.
	Exists bool `json:"exists"`
	// Instants are the completed instants in time order, at most
	// MaxTimelineInstants of them (the latest); Total counts them all and
	// Truncated says some were left out.
	Instants  []TimelineInstantJSON `json:"instants"`
	Total     int                   `json:"total"`
	Truncated bool                  `json:"truncated"`
	// Pending counts the instants an interrupted run left requested or
	// inflight, which a reader does not see (the next `segviz retention
	// --apply` resolves them).
	Pending int `json:"pending"`
	// Actions are every action an instant can have, in the timeline
	// package's order: the lane's legend.
	Actions []string `json:"actions"`
}

// TimelineInstantJSON is one instant of the lane: the line `segviz history
// --json` prints for it (instant, completed, action, state, imported,
// detail) — where "instant" and "completed" (epoch ms) are the start and
// the end the lane draws — with its full instant times (17 digits, the
// names `segviz history` prints), a one-line summary (historyjson.Summary:
// `segviz history`'s WHAT column, shortened for the actions that column
// prints as JSON) and the offsets it touched.
type TimelineInstantJSON struct {
	historyjson.Instant
	InstantTime   string              `json:"instantTime"`
	CompletedTime string              `json:"completedTime"`
	Summary       string              `json:"summary"`
	Offsets       []historyjson.Range `json:"offsets"`
}

// timelineInstant describes one instant for the page.
func timelineInstant(inst timeline.Instant) TimelineInstantJSON {
	out := TimelineInstantJSON{
		Instant: historyjson.InstantOf(inst), InstantTime: inst.Time.String(), CompletedTime: inst.Completed.String(),
		Summary: historyjson.Summary(inst), Offsets: historyjson.Affects(inst),
	}
	if out.Offsets == nil {
		out.Offsets = []historyjson.Range{}
	}
	return out
}

// instants reads the completed instants of p's timeline, read-only: it
// creates nothing (a partition without a timeline has an empty one), so
// it works on a filesystem that refuses every write. It also returns how
// many instants are pending and whether the timeline's directory exists.
func (s *Session) instants(p *partition) ([]timeline.Instant, int, bool, error) {
	exists := true
	if _, err := s.fsys.Stat(timeline.Dir(p.dir)); errors.Is(err, fs.ErrNotExist) {
		exists = false
	}
	tl, err := timeline.Open(s.fsys, p.dir, timeline.Options{ReadOnly: true})
	if err != nil {
		return nil, 0, exists, fmt.Errorf("%s: the timeline: %w", p.dir, err)
	}
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		return nil, 0, exists, fmt.Errorf("%s: the timeline: %w", p.dir, err)
	}
	return insts, len(tl.Pending()), exists, nil
}

// Timeline returns the timeline lane of partition p["dir"]: its completed
// instants (at most MaxTimelineInstants, the latest) and how many are
// pending. It reads the timeline afresh at every call, so that a
// directory a writer is still changing shows its latest instants.
func (s *Session) Timeline(q Params) (*TimelineJSON, error) {
	p, err := s.partitionParam(q, false)
	if err != nil {
		return nil, err
	}
	insts, pending, exists, err := s.instants(p)
	if err != nil {
		return nil, err
	}
	out := &TimelineJSON{Dir: p.dir, Exists: exists, Total: len(insts), Pending: pending, Instants: []TimelineInstantJSON{}}
	for _, a := range timeline.Actions() {
		out.Actions = append(out.Actions, string(a))
	}
	if limit := max(MaxTimelineInstants, 0); len(insts) > limit {
		insts, out.Truncated = insts[len(insts)-limit:], true
	}
	for _, inst := range insts {
		out.Instants = append(out.Instants, timelineInstant(inst))
	}
	return out, nil
}

// WhyGoneJSON answers "why is this gone" for one offset: `segviz history
// --offset N --json`'s object (offset, readable, writtenBy, removedBy,
// rule, at) with the reason in words and the instants it names.
type WhyGoneJSON struct {
	historyjson.Offset
	// Why says how the answer was reached: which check removed the
	// offset, by which rule and config, or why no instant did.
	Why string `json:"why"`
	// Text is what `segviz history --offset N` prints for the partition,
	// line by line.
	Text string `json:"text"`
	// RemovedInstant and WrittenInstant are the instants RemovedBy and
	// WrittenBy name (null when they are).
	RemovedInstant *TimelineInstantJSON `json:"removedInstant"`
	WrittenInstant *TimelineInstantJSON `json:"writtenInstant"`
	// The log's offsets when it was asked.
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	// Pending counts the pending instants, which the answer cannot see.
	Pending int `json:"pending"`
}

// WhyGone answers for offset p["offset"] of partition p["dir"] whether it
// is still readable and, if not, which instant of the timeline removed it,
// by which rule and config, and when — or, readable, which roll closed its
// segment: historyjson.Lookup over every completed instant and the log's
// facts, the answer of `segviz history --offset N`. It reads at most the
// batches from the offset's to the first record at or above it, each
// decompressed within MaxDecompressed.
func (s *Session) WhyGone(q Params) (*WhyGoneJSON, error) {
	p, err := s.partitionParam(q, false)
	if err != nil {
		return nil, err
	}
	n, err := q.required64("offset")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: offset %d: want an offset, 0 or more", ErrBadRequest, n)
	}
	insts, pending, _, err := s.instants(p)
	if err != nil {
		return nil, err
	}
	f, err := historyjson.ReadFacts(p.l, n, MaxDecompressed)
	if err != nil {
		return nil, fmt.Errorf("%s: offset %d: %w", p.dir, n, err)
	}
	a := historyjson.Lookup(n, insts, f)
	out := &WhyGoneJSON{Offset: a.JSON(), Why: a.Why, Text: a.Text(p.dir),
		LogStartOffset: f.LogStartOffset, LogEndOffset: f.LogEndOffset, Pending: pending}
	if a.Removed != nil {
		j := timelineInstant(*a.Removed)
		out.RemovedInstant = &j
	}
	if a.Written != nil {
		j := timelineInstant(*a.Written)
		out.WrittenInstant = &j
	}
	return out, nil
}
