package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const restoreHelp = `Usage: segviz restore --savepoint T [--json] DIR
       segviz restore --savepoint T --apply [--now T] [--json] DIR

Restores the partition directory DIR to the savepoint whose instant time
is T (see "segviz savepoint --list"): the log ends again where it ended
when the savepoint was taken. A Kafka log only grows at its end, so that
is a truncation: every record appended after the savepoint — the offsets
from the savepoint's log end offset to the current log end offset - 1 —
goes, and nothing else does. Hudi's restore, for a Kafka log.

A restore cannot bring back what retention (or a DeleteRecords request)
removed since the savepoint: when the log start offset has moved past the
savepoint's, the report says which of its offsets are gone for good.

It refuses (exit 2, nothing written):
  - a T that names no savepoint, or names the release of one (restore to
    the savepoint it released);
  - a log whose segments below the savepoint's log end offset changed
    since it was taken: each must be there with the size the savepoint
    recorded, and no other may start below that offset. The last one, then
    the active segment, may have grown by appends: its batch holding the
    savepoint's last offset must still end at the byte it recorded, and
    the next batch begin at the savepoint's log end offset. A compaction
    that rewrote one is such a change: truncating would not give the
    savepoint's records back. The message names the segment;
  - a restore that would remove offsets another savepoint in force holds
    (release that one first).
When the log end offset is already at or below the savepoint's there is
nothing to restore: it says so and exits 0.

Without --apply it is a dry run: it reads DIR (no lock, creates nothing,
may run beside a broker) and prints what --apply would remove: the
offsets, the segments deleted whole and the bytes cut from the one
truncated.

--apply restores: it takes Kafka's lock of the log directory (an flock of
its .lock, as a broker holds it; if a broker or another segviz holds it,
it stops before writing anything, exit 3), opens the log for writing
(which cuts only a torn tail and resolves the instants an interrupted
run left pending, saying so on stderr), records a restore instant on the
partition's timeline (DIR/.segkit/timeline, see "segviz history"), and
truncates the log to the savepoint's log end offset, which the engine
records as a truncate instant ("restore to savepoint T"). The restore
instant completes once the truncation is durable; a crash in between
leaves it inflight, and the next open of the partition for writing
completes it if the log ends at or below the savepoint's log end offset,
else rolls it back. --now stamps the instants (default: the current
time). The savepoint stays as it was, in force or released.

Text goes to stdout: the savepoint, the log end offset before and after,
the offsets removed, each segment deleted whole (base offset, offsets,
bytes), the segment truncated (bytes before and after), and with --apply
the restore and truncate instants' times. --json prints one object
  {"savepoint", "label", "applied", "restore", "restoredAt", "truncate",
   "logStartOffset", "oldLogEndOffset", "newLogEndOffset", "removed",
   "deletedSegments", "truncatedSegment", "bytes", "notRestored",
   "resolved"}
("savepoint" is T in full; "applied" is false for the dry run and when
there was nothing to restore; "restore" and "truncate" are the instant
times of the restore and the engine's truncate instants, "restoredAt" the
restore's in epoch ms, null when none was recorded; "removed" is
{"firstOffset", "lastOffset"}, or null when nothing is; "deletedSegments" are {"baseOffset", "nextOffset", "size",
"largestTimestamp"}; "truncatedSegment" is {"baseOffset", "oldSize",
"newSize", "bytes"}, or null; "bytes" is every byte removed; "notRestored"
is {"firstOffset", "lastOffset"} of the savepoint's offsets retention
removed since, or null; "resolved" the pending instants the open resolved,
{"instant", "action", "completed", "why"}).

Exit status: 0 when the log was restored, or there was nothing to
restore; 1 when a dry run found something --apply would remove; 2 for a
bad command line, a DIR that is not a partition directory, or a refused
restore; 3 when the command could not run (the log directory locked by a
broker or another segviz: nothing written; I/O; a damaged timeline or
log).

Examples:
  segviz savepoint --list payments-0
  segviz restore --savepoint 17728320000000000 payments-0          # what it would remove
  segviz restore --savepoint 17728320000000000 --apply /var/kafka-logs/payments-0
  segviz history --offset 120 payments-0                           # "truncated (restore to savepoint ...)"
`

// restoreJSON is the --json object; its field names are part of the
// command's interface.
type restoreJSON struct {
	Savepoint        string                `json:"savepoint"`
	Label            string                `json:"label"`
	Applied          bool                  `json:"applied"`
	Restore          *string               `json:"restore"`
	RestoredAt       *int64                `json:"restoredAt"`
	Truncate         *string               `json:"truncate"`
	LogStartOffset   int64                 `json:"logStartOffset"`
	OldLogEndOffset  int64                 `json:"oldLogEndOffset"`
	NewLogEndOffset  int64                 `json:"newLogEndOffset"`
	Removed          *offsetsJSON          `json:"removed"`
	DeletedSegments  []timeline.SegmentRef `json:"deletedSegments"`
	TruncatedSegment *truncatedJSON        `json:"truncatedSegment"`
	Bytes            int64                 `json:"bytes"`
	NotRestored      *offsetsJSON          `json:"notRestored"`
	Resolved         []resolvedJSON        `json:"resolved"`
}

// offsetsJSON is a range of offsets, both inclusive.
type offsetsJSON struct {
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
}

// truncatedJSON is the segment a restore cuts in place.
type truncatedJSON struct {
	BaseOffset int64 `json:"baseOffset"`
	OldSize    int64 `json:"oldSize"`
	NewSize    int64 `json:"newSize"`
	Bytes      int64 `json:"bytes"`
}

// restorePlan is what restoring to a savepoint removes from the log as
// it is.
type restorePlan struct {
	e              savepointEntry
	logStartOffset int64
	oldEnd, newEnd int64
	// deleted are the segments removed whole, truncated the one cut in
	// place (nil if none), keep the segments left.
	deleted   []timeline.SegmentRef
	truncated *truncatedJSON
	keep      []timeline.SegmentRef
	// lost are the savepoint's offsets retention removed since (nil if
	// none).
	lost *offsetsJSON
}

func (p *restorePlan) nothing() bool { return p.oldEnd <= p.newEnd }

func (p *restorePlan) bytes() int64 {
	var n int64
	for _, s := range p.deleted {
		n += s.Size
	}
	if p.truncated != nil {
		n += p.truncated.Bytes
	}
	return n
}

func (p *restorePlan) hold() timeline.Hold {
	return timeline.Hold{Savepoint: p.e.inst.Time, Label: p.e.sp.Label}
}

// restoreRefusal is a restore the command refuses: exit 2.
type restoreRefusal struct{ msg string }

func (r *restoreRefusal) Error() string { return r.msg }

func refuse(format string, a ...any) error { return &restoreRefusal{fmt.Sprintf(format, a...)} }

func runRestore(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("restore", restoreHelp, stderr)
	spFlag := fs.String("savepoint", "", "restore to the savepoint with instant time `T` (17 digits, or its epoch ms)")
	apply := fs.Bool("apply", false, "restore for real, under Kafka's lock, and record it in the partition's timeline")
	nowFlag := fs.String("now", "", "with --apply, the instants' time, epoch ms or RFC 3339 (default: the current time)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if code := parseFlags(fs, args, stdout); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz restore: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "segviz restore: want one partition directory")
		fs.Usage()
		return exitUsage
	}
	if *spFlag == "" {
		return usageErr("--savepoint T is required: the instant time of the savepoint to restore to (\"segviz savepoint --list %s\" lists them)", fs.Arg(0))
	}
	if _, err := timeline.ParseInstantTime(*spFlag); err != nil {
		if _, err := strconv.ParseInt(*spFlag, 10, 64); err != nil {
			return usageErr("--savepoint %q: want a savepoint's instant time (17 digits, as \"segviz savepoint --list\" prints it)", *spFlag)
		}
	}
	now := time.Now().UnixMilli()
	if *nowFlag != "" {
		ms, err := parseTimeFlag(*nowFlag)
		if err != nil || ms < 0 || ms > timeline.MaxMillis {
			return usageErr("--now: %v", timeFlagErr(*nowFlag, err))
		}
		now = ms
	}
	dir, code := osDir("restore", fs.Arg(0), stderr)
	if code >= 0 {
		return code
	}
	fsys := vfs.OS()
	if code := checkPartition("restore", fsys, dir, stderr); code >= 0 {
		return code
	}
	r := restorer{fsys: fsys, dir: dir, t: *spFlag, now: now, json: *jsonOut, stdout: stdout, stderr: stderr}
	if *apply {
		return r.apply()
	}
	return r.dryRun()
}

// restorer runs one restore command.
type restorer struct {
	fsys           vfs.FS
	dir            string
	t              string
	now            int64
	json           bool
	stdout, stderr io.Writer
}

// fail reports an error that stopped the command: exit 2 for a refusal,
// 3 otherwise.
func (r *restorer) fail(err error) int {
	fmt.Fprintf(r.stderr, "segviz restore: %v\n", err)
	var refusal *restoreRefusal
	if errors.As(err, &refusal) {
		return exitUsage
	}
	return exitFailure
}

// openReadOnly opens the log and its timeline without writing.
func (r *restorer) openReadOnly() (*kafkalog.Log, error) {
	return kafkalog.Open(r.fsys, r.dir, kafkalog.DefaultConfig(), kafkalog.Options{ReadOnly: true, Timeline: true, Clock: fixedClock(r.now)})
}

// dryRun prints what --apply would remove: it only reads.
func (r *restorer) dryRun() int {
	l, err := r.openReadOnly()
	if err != nil {
		return r.fail(err)
	}
	defer l.Close()
	p, err := planRestore(l, r.t)
	if err != nil {
		return r.fail(err)
	}
	r.warnPending(l.Timeline(), "--apply resolves it first")
	if !r.print(p, nil, nil) {
		return exitFailure
	}
	if p.nothing() {
		return exitOK
	}
	return exitProblem
}

// warnPending says which instants an interrupted run left pending.
func (r *restorer) warnPending(tl *timeline.Timeline, what string) {
	for _, x := range tl.Pending() {
		inst := x.Instant()
		fmt.Fprintf(r.stderr, "segviz restore: the %s instant %s was left %s by an interrupted run: %s\n", inst.Action, inst.Time, inst.State, what)
	}
}

// apply restores under the partition's lock.
func (r *restorer) apply() int {
	lock, err := kafkalog.LockPartition(r.fsys, r.dir)
	if err != nil {
		if code := writerError("restore", err, r.stderr); code >= 0 {
			return code
		}
		return r.fail(err)
	}
	defer lock.Close() // after the log's Close: the lock goes last
	// Plan read-only first, under the lock: a refusal writes nothing,
	// not even what a writable open would.
	l, err := r.openReadOnly()
	if err != nil {
		return r.fail(err)
	}
	p, err := planRestore(l, r.t)
	pending := len(l.Timeline().Pending())
	l.Close()
	if err != nil {
		return r.fail(err)
	}
	if p.nothing() && pending == 0 {
		if !r.print(p, nil, nil) {
			return exitFailure
		}
		return exitOK
	}

	l, err = kafkalog.Open(r.fsys, r.dir, kafkalog.DefaultConfig(), kafkalog.Options{Locked: true, Timeline: true, Clock: fixedClock(r.now)})
	if err != nil {
		if code := writerError("restore", err, r.stderr); code >= 0 {
			return code
		}
		return r.fail(err)
	}
	closed := false
	defer func() {
		if !closed {
			l.Close()
		}
	}()
	printRemoved(r.stderr, "restore", l.LoadReport())
	resolved := l.LoadReport().Resolved
	for _, res := range resolved {
		what := "rolled back"
		if res.Completed {
			what = "completed"
		}
		fmt.Fprintf(r.stderr, "segviz restore: %s the %s instant %s an interrupted run left %s: %s\n", what, res.Instant.Action, res.Instant.Time, res.Instant.State, res.Why)
	}
	tl := l.Timeline()
	// Plan again on the log as the open left it.
	p, err = planRestore(l, r.t)
	if err != nil {
		return r.fail(err)
	}
	if p.nothing() {
		closed = true
		if err := l.Close(); err != nil {
			return r.fail(err)
		}
		if !r.print(p, nil, resolved) {
			return exitFailure
		}
		return exitOK
	}
	plan := &timeline.Restore{Savepoint: p.e.inst.Time, OldLogEndOffset: p.oldEnd, NewLogEndOffset: p.newEnd, Segments: p.keep}
	x, err := tl.Begin(timeline.ActionRestore, plan)
	if err != nil {
		return r.fail(fmt.Errorf("record the restore, so nothing was removed: %w", err))
	}
	if err := x.Inflight(); err != nil {
		return r.fail(fmt.Errorf("record the restore, so nothing was removed: %w", err))
	}
	stranded := func(err error) int {
		fmt.Fprintf(r.stderr, "segviz restore: the restore instant %s is left inflight: the next open of %s for writing (another \"segviz restore --apply\", \"segviz retention --apply\", \"segviz append\") completes it if the log ends at or below offset %d, else rolls it back\n",
			x.Instant().Time, r.dir, p.newEnd)
		return r.fail(err)
	}
	if err := l.TruncateToFor(p.newEnd, "restore to savepoint "+p.e.inst.Time.String()); err != nil {
		return stranded(err)
	}
	if err := l.Flush(); err != nil {
		return stranded(err)
	}
	res := &timeline.Restore{Savepoint: p.e.inst.Time, OldLogEndOffset: p.oldEnd, NewLogEndOffset: l.LogEndOffset(), Segments: segmentRefs(l)}
	if err := x.Complete(res); err != nil {
		return stranded(fmt.Errorf("the log is restored, but recording it failed: %w", err))
	}
	restoreInst := x.Instant()
	var truncInst *timeline.Instant
	if insts, err := tl.Instants(timeline.Filter{Actions: []timeline.Action{timeline.ActionTruncate}, Since: restoreInst.Time}); err == nil && len(insts) > 0 {
		truncInst = &insts[len(insts)-1]
	}
	p.newEnd = l.LogEndOffset()
	closed = true
	if err := l.Close(); err != nil {
		fmt.Fprintf(r.stderr, "segviz restore: the log is restored and the restore recorded, but closing the partition failed: %v\n", err)
		r.printApplied(p, restoreInst, truncInst, resolved)
		return exitFailure
	}
	if !r.printApplied(p, restoreInst, truncInst, resolved) {
		return exitFailure
	}
	return exitOK
}

// segmentRefs describes the log's segments.
func segmentRefs(l *kafkalog.Log) []timeline.SegmentRef {
	segs := l.Segments()
	out := make([]timeline.SegmentRef, 0, len(segs))
	for i, s := range segs {
		next := l.LogEndOffset()
		if i+1 < len(segs) {
			next = segs[i+1].BaseOffset()
		}
		ts, err := s.LargestTimestamp()
		if err != nil {
			ts = -1
		}
		out = append(out, timeline.SegmentRef{BaseOffset: s.BaseOffset(), NextOffset: next, Size: s.Size(), LargestTimestamp: ts})
	}
	return out
}

// findSavepoint returns the savepoint (hold) taken at t among the
// completed instants insts, or a refusal saying what t names instead.
func findSavepoint(insts []timeline.Instant, t, dir string) (savepointEntry, error) {
	match := func(it timeline.InstantTime) bool { return it.String() == t }
	if _, err := timeline.ParseInstantTime(t); err != nil {
		ms, _ := strconv.ParseInt(t, 10, 64)
		match = func(it timeline.InstantTime) bool { return it.Millis == ms }
	}
	var holds []savepointEntry
	for _, e := range savepoints(insts) {
		if match(e.inst.Time) {
			holds = append(holds, e)
		}
	}
	switch {
	case len(holds) == 1:
		return holds[0], nil
	case len(holds) > 1:
		return savepointEntry{}, refuse("%d savepoints were taken in the millisecond %s: give the instant time in full (17 digits, as \"segviz savepoint --list\" prints it)", len(holds), t)
	}
	for _, inst := range insts {
		if !match(inst.Time) {
			continue
		}
		if sp := savepointOf(inst); inst.Action == timeline.ActionSavepoint && sp != nil && sp.Release != nil {
			return savepointEntry{}, refuse("instant %s is the release of the savepoint %s, not a savepoint: a release holds nothing to restore to; to restore to the savepoint it released, give --savepoint %s", inst.Time, *sp.Release, *sp.Release)
		}
		return savepointEntry{}, refuse("instant %s is a %s, not a savepoint: \"segviz savepoint --list %s\" lists the savepoints", inst.Time, inst.Action, dir)
	}
	return savepointEntry{}, refuse("no savepoint of %s was taken at %s: \"segviz savepoint --list %s\" lists them", dir, t, dir)
}

// planRestore works out what restoring l to the savepoint at t removes,
// or refuses it.
func planRestore(l *kafkalog.Log, t string) (*restorePlan, error) {
	tl := l.Timeline()
	insts, err := tl.Instants(timeline.Filter{})
	if err != nil {
		return nil, err
	}
	e, err := findSavepoint(insts, t, l.Dir())
	if err != nil {
		return nil, err
	}
	sp := e.sp
	p := &restorePlan{e: e, logStartOffset: l.LogStartOffset(), oldEnd: l.LogEndOffset(), newEnd: sp.LogEndOffset}
	if p.logStartOffset > sp.LogStartOffset {
		p.lost = &offsetsJSON{FirstOffset: sp.LogStartOffset, LastOffset: min(p.logStartOffset, sp.LogEndOffset) - 1}
	}
	cur := segmentRefs(l)
	if p.nothing() {
		p.keep = cur
		return p, nil
	}
	if len(sp.Segments) == 0 {
		return nil, refuse("%s recorded no segments, so whether the log still holds its records as it saw them cannot be checked: not restoring", p.hold())
	}
	if err := checkSegments(l, e, cur, insts); err != nil {
		return nil, err
	}
	// Another savepoint in force that holds an offset the restore removes.
	for _, o := range savepoints(insts) {
		if o.release == nil && o.inst.Time != e.inst.Time && o.sp.LastOffset >= p.newEnd && o.sp.FirstOffset < p.oldEnd {
			return nil, refuse("restoring to %s would remove offsets %d-%d, which %s holds (offsets %d-%d): release it first (\"segviz savepoint --release %s %s\")",
				p.hold(), max(p.newEnd, o.sp.FirstOffset), min(p.oldEnd-1, o.sp.LastOffset),
				timeline.Hold{Savepoint: o.inst.Time, Label: o.sp.Label}, o.sp.FirstOffset, o.sp.LastOffset, o.inst.Time, l.Dir())
		}
	}
	// What TruncateTo(newEnd) removes: the segments above it, the one
	// starting at it unless it is the first, all of them when it is below
	// the first; the rest of the segment holding it.
	off := p.newEnd
	if off < cur[0].BaseOffset {
		p.deleted = cur
		return p, nil
	}
	i := 0
	for j, s := range cur {
		if s.BaseOffset <= off {
			i = j
		}
	}
	if cur[i].BaseOffset == off && i > 0 {
		i--
	}
	p.deleted = cur[i+1:]
	p.keep = append([]timeline.SegmentRef(nil), cur[:i+1]...)
	s := cur[i]
	var newSize int64 // the segment starts at off: it is cut to nothing
	if s.BaseOffset < off {
		newSize = recordedSize(sp, s.BaseOffset)
	}
	if s.Size > newSize {
		p.truncated = &truncatedJSON{BaseOffset: s.BaseOffset, OldSize: s.Size, NewSize: newSize, Bytes: s.Size - newSize}
	}
	k := &p.keep[len(p.keep)-1]
	k.Size, k.NextOffset = newSize, off
	return p, nil
}

// recordedSize is the size the savepoint recorded for the segment at
// base (checkSegments has checked that it recorded one).
func recordedSize(sp *timeline.Savepoint, base int64) int64 {
	for _, s := range sp.Segments {
		if s.BaseOffset == base {
			return s.Size
		}
	}
	return 0
}

// checkSegments checks that the segments holding the savepoint's offsets
// are as it saw them: those retention has not deleted since are in the
// log with the sizes it recorded (the last, then the active segment, at
// least that size, with the batch at the savepoint's log end offset
// beginning where its records ended), and the log has no other segment
// below its log end offset.
func checkSegments(l *kafkalog.Log, e savepointEntry, cur []timeline.SegmentRef, insts []timeline.Instant) error {
	sp := e.sp
	end := sp.LogEndOffset
	h := timeline.Hold{Savepoint: e.inst.Time, Label: sp.Label}
	changed := func(base int64, format string, a ...any) error {
		return refuse("segment %d changed since %s was taken: %s; restoring would not give the savepoint's records back, so nothing was changed", base, h, fmt.Sprintf(format, a...))
	}
	saw := map[int64]timeline.SegmentRef{}
	last := sp.Segments[len(sp.Segments)-1]
	for _, s := range sp.Segments {
		if s.BaseOffset < end {
			saw[s.BaseOffset] = s
		}
	}
	first := cur[0].BaseOffset
	has := map[int64]timeline.SegmentRef{}
	for _, s := range cur {
		if s.BaseOffset >= end {
			break
		}
		has[s.BaseOffset] = s
		was, ok := saw[s.BaseOffset]
		if !ok {
			return changed(s.BaseOffset, "the savepoint saw no segment at base offset %d, and the log has one (%s, %d bytes): segments were rewritten, merged or replaced", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size)
		}
		if was.BaseOffset == last.BaseOffset {
			if s.Size < was.Size {
				return changed(s.BaseOffset, "it was the active segment, of %d bytes, and is now %d bytes: something other than appends rewrote it (a compaction)", was.Size, s.Size)
			}
			continue
		}
		if s.Size != was.Size {
			return changed(s.BaseOffset, "it was %d bytes (%s) and is now %d bytes (%s): it was rewritten (a compaction)", was.Size, offsetRange(was.BaseOffset, was.NextOffset), s.Size, offsetRange(s.BaseOffset, s.NextOffset))
		}
	}
	for _, s := range sp.Segments {
		if s.BaseOffset >= end {
			continue
		}
		if _, ok := has[s.BaseOffset]; ok {
			continue
		}
		if s.BaseOffset >= first || s.NextOffset > first {
			return changed(s.BaseOffset, "the savepoint saw it (%s, %d bytes) and the log no longer has it, though it has later segments: it was merged into another or removed", offsetRange(s.BaseOffset, s.NextOffset), s.Size)
		}
		// Below the log's first segment: retention deleted it.
	}
	// A clean the timeline recorded since the savepoint, of a segment the
	// log still holds.
	for _, inst := range insts {
		c, ok := inst.Result.(*timeline.Compaction)
		if !ok || inst.Time.Compare(e.inst.Time) <= 0 {
			continue
		}
		for _, src := range c.Sources {
			if _, ok := has[src.BaseOffset]; ok {
				return changed(src.BaseOffset, "the compaction instant %s rewrote it", inst.Time)
			}
		}
	}
	// The active segment the savepoint saw: its last batch, holding
	// offset end-1, ends at the byte it recorded, and the first batch
	// appended since, if any, begins there with offset end.
	if _, ok := has[last.BaseOffset]; ok && last.BaseOffset < end {
		for _, v := range l.Segments() {
			if v.BaseOffset() == last.BaseOffset {
				if err := checkBoundary(v, last.Size, end); err != nil {
					return changed(last.BaseOffset, "%v", err)
				}
			}
		}
	}
	return nil
}

// checkBoundary checks that the entries of v end at byte size with
// offset end-1, and that the entry there, if any, begins at offset end.
func checkBoundary(v kafkalog.SegmentView, size, end int64) error {
	var ending, next *segment.EntryHeader
	err := v.ScanHeaders(0, func(eh segment.EntryHeader) bool {
		switch {
		case eh.Position+int64(eh.Size) == size:
			ending = &eh
		case eh.Position == size:
			next = &eh
		}
		return eh.Position < size
	})
	switch {
	case err != nil:
		return fmt.Errorf("it cannot be read up to byte %d, where its records ended when the savepoint was taken: %w", size, err)
	case ending == nil:
		return fmt.Errorf("no batch ends at byte %d, where its records ended when the savepoint was taken", size)
	case ending.LastOffset != end-1:
		return fmt.Errorf("the batch ending at byte %d, where its records ended when the savepoint was taken, ends at offset %d, not at the savepoint's last offset %d", size, ending.LastOffset, end-1)
	case next != nil && next.BaseOffset != end:
		return fmt.Errorf("the batch at byte %d, the first appended since the savepoint, begins at offset %d, not at the savepoint's log end offset %d", size, next.BaseOffset, end)
	}
	return nil
}

// print prints a plan: the dry run, or a restore that removed nothing
// (inst is the restore instant when one was recorded).
func (r *restorer) print(p *restorePlan, inst *timeline.Instant, resolved []kafkalog.Resolution) bool {
	out := r.jsonOf(p, inst, nil, resolved)
	text := func() {
		r.printHeader(p)
		if p.nothing() {
			if p.oldEnd == p.newEnd {
				fmt.Fprintf(r.stdout, "nothing to restore: the log end offset is %d, as when the savepoint was taken; no record was appended since\n", p.oldEnd)
			} else {
				fmt.Fprintf(r.stdout, "nothing to restore: the log end offset is %d, below the savepoint's %d: the log was truncated since (see \"segviz history %s\"), and a restore cannot bring offsets %d-%d back\n",
					p.oldEnd, p.newEnd, r.dir, p.oldEnd, p.newEnd-1)
			}
			r.printLost(p)
			return
		}
		fmt.Fprintf(r.stdout, "dry run, nothing written: --apply would cut the log end offset %d -> %d, removing offsets %d-%d (%s), %s\n",
			p.oldEnd, p.newEnd, p.newEnd, p.oldEnd-1, plural(p.oldEnd-p.newEnd, "offset"), r.removedSummary(p))
		r.printRemovals(p, "would delete", "would cut")
		r.printLost(p)
		fmt.Fprintf(r.stdout, "restore with: segviz restore --savepoint %s --apply %s (under Kafka's lock: stop the broker first)\n", p.e.inst.Time, r.dir)
	}
	return report(r.stdout, r.stderr, "restore", r.json, out, text)
}

// printApplied prints a restore that was applied.
func (r *restorer) printApplied(p *restorePlan, inst timeline.Instant, trunc *timeline.Instant, resolved []kafkalog.Resolution) bool {
	out := r.jsonOf(p, &inst, trunc, resolved)
	text := func() {
		r.printHeader(p)
		fmt.Fprintf(r.stdout, "restored: the log end offset went %d -> %d; removed offsets %d-%d (%s), %s\n",
			p.oldEnd, p.newEnd, p.newEnd, p.oldEnd-1, plural(p.oldEnd-p.newEnd, "offset"), r.removedSummary(p))
		r.printRemovals(p, "deleted", "cut")
		r.printLost(p)
		fmt.Fprintf(r.stdout, "recorded in %s/%s (see \"segviz history %s\"):\n", r.dir, timeline.DirName, r.dir)
		fmt.Fprintf(r.stdout, "  %s restore, completed %s: %s\n", inst.Time, inst.Completed, instantSummary(inst))
		if trunc != nil {
			fmt.Fprintf(r.stdout, "  %s truncate, completed %s: %s\n", trunc.Time, trunc.Completed, instantSummary(*trunc))
		}
	}
	return report(r.stdout, r.stderr, "restore", r.json, out, text)
}

func (r *restorer) printHeader(p *restorePlan) {
	state := "in force"
	if p.e.release != nil {
		state = fmt.Sprintf("released %s", retention.FormatTime(p.e.release.Time.Millis))
	}
	fmt.Fprintf(r.stdout, "restore of %s to %s, taken %s (%s): the log ended at offset %d then, and ends at %d now\n",
		r.dir, p.hold(), retention.FormatTime(p.e.inst.Time.Millis), state, p.newEnd, p.oldEnd)
}

func (r *restorer) removedSummary(p *restorePlan) string {
	cut := "none truncated"
	if p.truncated != nil {
		cut = fmt.Sprintf("segment %d truncated", p.truncated.BaseOffset)
	}
	return fmt.Sprintf("%s deleted whole and %s: %d bytes", plural(len(p.deleted), "segment"), cut, p.bytes())
}

func (r *restorer) printRemovals(p *restorePlan, del, cut string) {
	for _, s := range p.deleted {
		fmt.Fprintf(r.stdout, "  %s segment %d (%s, %d bytes)\n", del, s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size)
	}
	if t := p.truncated; t != nil {
		fmt.Fprintf(r.stdout, "  %s %d bytes from segment %d: %d -> %d bytes (it keeps %s)\n", cut, t.Bytes, t.BaseOffset, t.OldSize, t.NewSize, offsetRange(t.BaseOffset, p.newEnd))
	}
	var kept []string
	for _, s := range p.keep {
		kept = append(kept, strconv.FormatInt(s.BaseOffset, 10))
	}
	if len(kept) > 0 && max(p.logStartOffset, p.keep[0].BaseOffset) < p.newEnd {
		fmt.Fprintf(r.stdout, "  kept: offsets %d-%d as the savepoint saw them, in segment(s) %s\n", max(p.logStartOffset, p.keep[0].BaseOffset), p.newEnd-1, strings.Join(kept, ", "))
	}
}

func (r *restorer) printLost(p *restorePlan) {
	if p.lost == nil {
		return
	}
	fmt.Fprintf(r.stdout, "not restored: offsets %d-%d of the savepoint are gone (the log start offset moved %d -> %d since, by retention or a DeleteRecords request); a restore cannot bring them back\n",
		p.lost.FirstOffset, p.lost.LastOffset, p.e.sp.LogStartOffset, p.logStartOffset)
}

func (r *restorer) jsonOf(p *restorePlan, inst, trunc *timeline.Instant, resolved []kafkalog.Resolution) restoreJSON {
	j := restoreJSON{Savepoint: p.e.inst.Time.String(), Label: p.e.sp.Label, Applied: inst != nil,
		LogStartOffset: p.logStartOffset, OldLogEndOffset: p.oldEnd, NewLogEndOffset: p.newEnd,
		DeletedSegments: []timeline.SegmentRef{}, TruncatedSegment: p.truncated, NotRestored: p.lost, Resolved: []resolvedJSON{}}
	if !p.nothing() {
		j.Removed = &offsetsJSON{FirstOffset: p.newEnd, LastOffset: p.oldEnd - 1}
		j.DeletedSegments = append(j.DeletedSegments, p.deleted...)
		j.Bytes = p.bytes()
	}
	if inst != nil {
		s, ms := inst.Time.String(), inst.Time.Millis
		j.Restore, j.RestoredAt = &s, &ms
	}
	if trunc != nil {
		s := trunc.Time.String()
		j.Truncate = &s
	}
	for _, res := range resolved {
		j.Resolved = append(j.Resolved, resolvedJSON{res.Instant.Time.Millis, string(res.Instant.Action), res.Completed, res.Why})
	}
	return j
}
