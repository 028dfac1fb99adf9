package serverlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxLineBytes is Options.MaxLineBytes's default.
const DefaultMaxLineBytes = 1 << 20

// timeLayout is log4j2's default %d: yyyy-MM-dd HH:mm:ss,SSS.
const timeLayout = "2006-01-02 15:04:05,000"

// Options say which partition to read the lines of, and how.
type Options struct {
	// Partition is the partition's directory name, "topic-N". Required.
	Partition string
	// Dir, when set, is the broker's log directory (the partition
	// directory's parent) as the broker named it: a line that names
	// another directory is not about the partition. Empty: any.
	Dir string
	// Location is the broker JVM's time zone, in which the lines' times
	// are read; nil means UTC.
	Location *time.Location
	// MaxLineBytes bounds a line and a message with its continuation
	// lines; longer ones are skipped and counted. 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
}

// ErrNoPartition is returned by Parse when Options.Partition is not of
// the form topic-N.
var ErrNoPartition = errors.New("serverlog: the partition must be named topic-N")

// FileError is an error reading a log file: Line is the line being read
// (0 when the file could not be opened).
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("serverlog: %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("serverlog: %s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// Stats count the lines a Parser read.
type Stats struct {
	// Lines are the physical lines read; Records the log lines among them
	// (a continuation line is part of its record).
	Lines, Records int
	// Unparsed are the lines that were neither a log line nor the
	// continuation of one; TooLong the lines, and records with their
	// continuation lines, over MaxLineBytes (skipped).
	Unparsed, TooLong int
	// About are the records about the partition, Used those of them that
	// went into an event.
	About, Used int
	// Dirs are the directories the records about the partition named
	// (log directories, or partition directories), sorted.
	Dirs []string
}

// Parser reads log files and keeps the events of one partition. The
// state it carries from line to line (the log start offset, the last
// roll, an open deletion, load or cleaner pass) carries across files, so
// files are parsed oldest first (server.log.2026-03-02-08, then
// server.log); a cleaner log may come after them.
type Parser struct {
	opt    Options
	max    int
	events []Event
	stats  Stats
	dirs   map[string]bool

	// The record being assembled: its header and message so far.
	rec     record
	hasRec  bool
	recLong bool

	// State across records.
	lso           int64 // the log start offset, -1 unknown
	lastRoll      int64 // the last roll's new base offset, -1 unknown
	rollRequested bool
	increment     *pendingIncrement
	deletion      *Event
	recovery      *Event
	compaction    *Event
	unclean       map[string]bool // log dirs without a clean shutdown, this start
}

type pendingIncrement struct {
	ev     Event
	offset int64
	old    int64
}

// record is one log line with its continuation lines: where it is, its
// time and its message.
type record struct {
	file string
	line int
	time time.Time
	msg  string
}

// NewParser returns a parser of the lines about opt.Partition.
func NewParser(opt Options) *Parser {
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	limit := opt.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	opt.Dir = strings.TrimSuffix(opt.Dir, "/")
	return &Parser{opt: opt, max: limit, dirs: map[string]bool{}, lso: -1, lastRoll: -1, unclean: map[string]bool{}}
}

// validPartition reports whether p is topic-N.
func validPartition(p string) bool {
	i := strings.LastIndexByte(p, '-')
	if i <= 0 || i == len(p)-1 {
		return false
	}
	_, err := strconv.ParseUint(p[i+1:], 10, 31)
	return err == nil
}

// ParseFile parses the file at name (see Parse).
func (p *Parser) ParseFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return &FileError{File: name, Err: err}
	}
	defer f.Close()
	return p.Parse(f, name)
}

// Parse reads the log lines of r, named name in events and errors. A
// read error is a *FileError with the line it stopped at; the events of
// the lines before it are kept.
func (p *Parser) Parse(r io.Reader, name string) error {
	if !validPartition(p.opt.Partition) {
		return ErrNoPartition
	}
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 0, 4096)
	lineNo := 0
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if room := p.max + 1 - len(buf); len(chunk) <= room { // +1: the newline
			buf = append(buf, chunk...)
		} else {
			// Keep the head: it tells a log line from a continuation.
			buf, long = append(buf, chunk[:max(room, 0)]...), true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			// The line being read is incomplete: not used.
			p.flush()
			return &FileError{File: name, Line: lineNo + 1, Err: err}
		}
		if len(buf) > 0 {
			lineNo++
			p.stats.Lines++
			if long {
				p.stats.TooLong++
				p.longLine(string(buf))
			} else {
				p.line(name, lineNo, strings.TrimRight(string(buf), "\r\n"))
			}
		}
		buf, long = buf[:0], false
		if err == io.EOF {
			break
		}
	}
	p.flush()
	return nil
}

// longLine handles a line over the limit, of which prefix is the first
// MaxLineBytes or so: a log line of its own is skipped (the record before
// it is complete); a continuation line makes its record incomplete, and
// the record is skipped with it.
func (p *Parser) longLine(prefix string) {
	if _, _, ok := p.header(prefix); ok {
		p.flush()
		p.stats.Records++
		// Its continuation lines, if any, belong to a skipped record.
		p.rec, p.hasRec, p.recLong = record{}, true, true
		return
	}
	if p.hasRec {
		p.recLong = true
	}
}

// line takes one physical line.
func (p *Parser) line(file string, n int, s string) {
	if t, rest, ok := p.header(s); ok {
		p.flush()
		p.rec = record{file: file, line: n, time: t, msg: rest}
		p.hasRec, p.recLong = true, false
		p.stats.Records++
		return
	}
	if !p.hasRec || len(s) > 1 && s[0] == '[' && s[1] >= '0' && s[1] <= '9' {
		// Before any log line, or a log line whose time or level does
		// not parse (a continuation line does not look like one): it
		// ends the record being assembled.
		p.flush()
		p.stats.Unparsed++
		return
	}
	if p.recLong {
		return
	}
	if len(p.rec.msg)+1+len(s) > p.max {
		p.recLong = true
		p.stats.TooLong++
		return
	}
	p.rec.msg += "\n" + s
}

// header parses "[yyyy-MM-dd HH:mm:ss,SSS] LEVEL rest" and returns the
// time and rest. Every level is read: the messages used are INFO and
// WARN, and a broker at DEBUG logs them too.
func (p *Parser) header(s string) (time.Time, string, bool) {
	const n = len("[2006-01-02 15:04:05,000] ")
	if len(s) < n+1 || s[0] != '[' || s[n-2] != ']' || s[n-1] != ' ' {
		return time.Time{}, "", false
	}
	t, err := time.ParseInLocation(timeLayout, s[1:n-2], p.opt.Location)
	if err != nil {
		return time.Time{}, "", false
	}
	rest := s[n:]
	sp := strings.IndexByte(rest, ' ')
	if sp <= 0 {
		return time.Time{}, "", false
	}
	switch rest[:sp] {
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL":
	default:
		return time.Time{}, "", false
	}
	return t, rest[sp+1:], true
}

// flush handles the record assembled so far.
func (p *Parser) flush() {
	if !p.hasRec {
		return
	}
	p.hasRec = false
	if p.recLong {
		return
	}
	r := p.rec
	// The logger, " (name)" at the very end, is not part of the message
	// (the logIdent says which class logged it).
	if strings.HasSuffix(r.msg, ")") {
		if i := strings.LastIndex(r.msg, " ("); i >= 0 && !strings.ContainsAny(r.msg[i+2:len(r.msg)-1], " \n") {
			r.msg = r.msg[:i]
		}
	}
	p.record(r)
}

// Events returns the events read so far, in time order (events of one
// time in the order of their lines), with the deletion, load or cleaner
// pass still open at the end included as far as it was read.
func (p *Parser) Events() []Event {
	out := slices.Clone(p.events)
	// A load is an event once "Completed load" ends it; the others are
	// whole as far as they go.
	for _, e := range []*Event{p.deletion, p.compaction} {
		if e != nil {
			out = append(out, p.finish(*e))
		}
	}
	if p.increment != nil {
		out = append(out, p.increment.ev)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Time.Compare(b.Time) })
	return out
}

// Stats returns the counts so far.
func (p *Parser) Stats() Stats {
	s := p.stats
	s.Dirs = nil
	for d := range p.dirs {
		s.Dirs = append(s.Dirs, d)
	}
	slices.Sort(s.Dirs)
	return s
}

// The messages, after the logIdent.
var (
	reIdent      = regexp.MustCompile(`^\[(\w+) partition=([^,\]]+), dir=([^\]]*)\] `)
	reSegment    = regexp.MustCompile(`LogSegment\(baseOffset=(-?\d+), size=(-?\d+), lastModifiedTime=(-?\d+), largestRecordTimestamp=(-?\d+)\)`)
	reIncrement  = regexp.MustCompile(`^Incremented (local )?log start offset to (-?\d+) due to (?:reason )?(.+)$`)
	reDelTime    = regexp.MustCompile(`^Deleting segment (LogSegment\([^)]*\)) due to (local )?log retention time (-?\d+)ms breach based on the (largest record timestamp in the segment|last modified time of the segment)$`)
	reDelSize    = regexp.MustCompile(`^Deleting segment (LogSegment\([^)]*\)) due to (local )?log retention size (-?\d+) breach\. (?:Local l|L)og size after deletion will be (-?\d+)\.$`)
	reDelStart   = regexp.MustCompile(`^Deleting segments due to (local )?log start offset (-?\d+) breach: (.*)$`)
	reRolled     = regexp.MustCompile(`^Rolled new log segment at offset (-?\d+) in (-?\d+) ms\.$`)
	reTruncTo    = regexp.MustCompile(`^Truncating to offset (-?\d+)$`)
	reTruncNoop  = regexp.MustCompile(`^Truncating to (-?\d+) has no effect as the largest offset in the log is (-?\d+)$`)
	reTruncFull  = regexp.MustCompile(`^Truncate and start at offset (-?\d+), logStartOffset: (-?\d+)$`)
	reRecovering = regexp.MustCompile(`^Recovering unflushed segment (-?\d+)\.`)
	reRecDelete  = regexp.MustCompile(`^Deleting segments as part of log recovery: (.*)$`)
	reCorrupt    = regexp.MustCompile(`^Corruption found in segment (-?\d+), truncating to offset (-?\d+)`)
	reLeftover   = regexp.MustCompile(`^(?:Found log file (\S+) from interrupted swap operation|Deleting stray temporary file (\S+)|Deleting invalid swap file (\S+)|Deleting stray \.clean file (\S+)|Recovering file (\S+) by renaming)`)
	reTruncBytes = regexp.MustCompile(`^Truncated (\d+) invalid bytes at the end of segment (\S+) during recovery`)
	reLoaded     = regexp.MustCompile(`^Completed load of Log\(dir=([^,]+), .*logStartOffset=(-?\d+), logEndOffset=(-?\d+)\) with (\d+) segments`)
	reCreated    = regexp.MustCompile(`^Created log for partition (\S+) in (\S+) `)
	reUnclean    = regexp.MustCompile(`^Recovering \d+ logs from (\S+) since no clean shutdown file was found`)
	reCleaner    = regexp.MustCompile(`^Cleaner (\d+): (.*)$`)
	reBeginClean = regexp.MustCompile(`^Beginning cleaning of log (\S+)$`)
	reOffsetMap  = regexp.MustCompile(`^Building offset map for log (\S+) for \d+ segments in offset range \[(-?\d+), (-?\d+)\)\.$`)
	reSwap       = regexp.MustCompile(`(?s)^Swapping in cleaned segment (LogSegment\([^)]*\)) for segment\(s\) \[(.*)\] in log Log\(dir=([^,]+),`)
	reCleaned    = regexp.MustCompile(`(?s)^\[[^\]]*\]: \n?\s*Log cleaner thread (\d+) cleaned log (\S+) \(dirty section = \[(-?\d+), (-?\d+)\]\)`)
)

// mentions reports whether s names the partition: an occurrence of it
// not inside a longer name (payments-1 is not in payments-10).
func (p *Parser) mentions(s string) bool {
	name := p.opt.Partition
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		before := j == 0 || strings.IndexByte("= /[(\n\t", s[j-1]) >= 0
		after := end == len(s) || !nameByte(s[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

// nameByte reports whether c may be part of a topic name.
func nameByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-'
}

// dirOK reports whether a directory a line names fits Options.Dir, and
// notes it. partDir says d is a partition directory (D/P), not a log
// directory.
func (p *Parser) dirOK(d string, partDir bool) bool {
	if d == "" {
		return true
	}
	d = strings.TrimSuffix(d, "/")
	p.dirs[d] = true
	if p.opt.Dir == "" {
		return true
	}
	if partDir {
		return d == p.opt.Dir+"/"+p.opt.Partition
	}
	return d == p.opt.Dir
}

// record handles one log line with its continuation lines.
func (p *Parser) record(r record) {
	msg := r.msg
	// Lines about log directories, not a partition.
	if strings.HasPrefix(msg, "Loading logs from log dirs ") {
		clear(p.unclean)
		return
	}
	if strings.HasPrefix(msg, "Recovering ") { // the cheap test first: every line comes here
		if m := reUnclean.FindStringSubmatch(msg); m != nil {
			p.unclean[strings.TrimSuffix(m[1], "/")] = true
			return
		}
	}
	if !p.mentions(msg) {
		return
	}
	ident := ""
	if m := reIdent.FindStringSubmatch(msg); m != nil {
		if m[2] != p.opt.Partition {
			return // it names the partition elsewhere in the text
		}
		ident = m[1]
		msg = msg[len(m[0]):]
		// LocalLog's dir is the partition directory; the others' the log
		// directory.
		if !p.dirOK(m[3], ident == "LocalLog") {
			return
		}
	}
	p.stats.About++
	used := p.message(r, ident, msg)
	if used {
		p.stats.Used++
	}
}

// message recognises one message about the partition; it reports whether
// the message went into an event.
func (p *Parser) message(r record, ident, msg string) bool {
	switch ident {
	case "UnifiedLog", "LogLoader", "LocalLog":
		return p.logMessage(r, ident, msg)
	case "":
	default:
		return false
	}
	// Lines without the partition's logIdent.
	if m := reLoaded.FindStringSubmatch(msg); m != nil {
		if path.Base(m[1]) != p.opt.Partition || !p.dirOK(m[1], true) {
			return false
		}
		rec := p.openRecovery(r)
		rec.End = r.time
		rec.Lines++
		x := rec.Recovery
		x.LogStartOffset, x.LogEndOffset = atoi(m[2]), atoi(m[3])
		x.Segments = atoi(m[4])
		x.CleanShutdown = !p.unclean[path.Dir(m[1])]
		p.lso = x.LogStartOffset
		p.emit(p.finish(*rec))
		p.recovery = nil
		return true
	}
	if m := reCreated.FindStringSubmatch(msg); m != nil && m[1] == p.opt.Partition {
		// A new log, not a load: what the loader said was about an empty
		// directory.
		p.recovery = nil
		p.lso, p.lastRoll = 0, 0
		return false
	}
	if m := reTruncBytes.FindStringSubmatch(msg); m != nil && p.recovery != nil {
		if path.Base(path.Dir(m[2])) == p.opt.Partition {
			p.recovery.Recovery.BytesTruncated += atoi(m[1])
			p.recovery.Lines++
			return true
		}
	}
	if m := reCleaner.FindStringSubmatch(msg); m != nil {
		return p.cleanerMessage(r, int(atoi(m[1])), m[2])
	}
	if m := reCleaned.FindStringSubmatch(msg); m != nil && m[2] == p.opt.Partition {
		c := p.compaction
		if c == nil {
			return false
		}
		c.End = r.time
		c.Lines++
		if c.Compaction.FirstDirtyOffset < 0 {
			c.Compaction.FirstDirtyOffset = atoi(m[3])
		}
		p.emit(p.finish(*c))
		p.compaction = nil
		return true
	}
	return false
}

// logMessage handles the messages of UnifiedLog, LocalLog and LogLoader.
func (p *Parser) logMessage(r record, ident, msg string) bool {
	if ident == "LogLoader" {
		return p.loaderMessage(r, msg)
	}
	if m := reIncrement.FindStringSubmatch(msg); m != nil {
		p.closeDeletion()
		if p.increment != nil {
			p.emit(p.increment.ev) // no deletion followed it
		}
		inc := &pendingIncrement{ev: p.event(r, KindLogStartOffset), offset: atoi(m[2]), old: p.lso}
		inc.ev.LogStartOffset = &LogStartOffset{Offset: inc.offset, Old: p.lso, Reason: m[3], Local: m[1] != ""}
		if m[1] == "" {
			p.lso = inc.offset
		}
		if m[3] == "segment deletion" {
			p.increment = inc
		} else {
			p.increment = nil
			p.emit(inc.ev)
		}
		return true
	}
	if m := reDelTime.FindStringSubmatch(msg); m != nil {
		seg, _ := parseSegment(m[1])
		d := p.deletionFor(r, RuleTime, m[2] != "", atoi(m[3]), 0, -1)
		d.Deletion.Segments = append(d.Deletion.Segments, seg)
		if strings.HasPrefix(m[4], "last modified") {
			d.Deletion.ByLastModified = true
		}
		return true
	}
	if m := reDelSize.FindStringSubmatch(msg); m != nil {
		seg, _ := parseSegment(m[1])
		d := p.deletionFor(r, RuleSize, m[2] != "", 0, atoi(m[3]), -1)
		d.Deletion.Segments = append(d.Deletion.Segments, seg)
		return true
	}
	if m := reDelStart.FindStringSubmatch(msg); m != nil {
		d := p.deletionFor(r, RuleLogStartOffset, m[1] != "", 0, 0, atoi(m[2]))
		for _, sm := range reSegment.FindAllString(m[3], -1) {
			seg, _ := parseSegment(sm)
			d.Deletion.Segments = append(d.Deletion.Segments, seg)
		}
		return true
	}
	if msg == "Rolling the active segment to make it eligible for deletion" {
		p.rollRequested = true
		return true
	}
	if m := reRolled.FindStringSubmatch(msg); m != nil {
		p.closeDeletion()
		ev := p.event(r, KindRoll)
		ev.Roll = &Roll{NewBaseOffset: atoi(m[1]), PreviousBaseOffset: p.lastRoll, Requested: p.rollRequested, ElapsedMs: atoi(m[2])}
		p.lastRoll, p.rollRequested = ev.Roll.NewBaseOffset, false
		p.emit(ev)
		return true
	}
	var tr *Truncation
	if m := reTruncTo.FindStringSubmatch(msg); m != nil {
		tr = &Truncation{How: TruncateTo, Offset: atoi(m[1]), LogStartOffset: -1, OldLogStartOffset: p.lso, LargestOffset: -1}
	} else if m := reTruncNoop.FindStringSubmatch(msg); m != nil {
		tr = &Truncation{How: TruncateNoEffect, Offset: atoi(m[1]), LogStartOffset: -1, OldLogStartOffset: p.lso, LargestOffset: atoi(m[2])}
	} else if m := reTruncFull.FindStringSubmatch(msg); m != nil && ident == "UnifiedLog" {
		tr = &Truncation{How: TruncateFull, Offset: atoi(m[1]), LogStartOffset: atoi(m[2]), OldLogStartOffset: p.lso, LargestOffset: -1}
		p.lso, p.lastRoll = tr.LogStartOffset, tr.Offset
	}
	if tr != nil {
		p.closeDeletion()
		ev := p.event(r, KindTruncation)
		ev.Truncation = tr
		if tr.How == TruncateTo && p.lastRoll > tr.Offset {
			p.lastRoll = -1 // the segment rolled there may be gone
		}
		p.emit(ev)
		return true
	}
	return false
}

// loaderMessage handles a LogLoader line: part of the load in progress.
func (p *Parser) loaderMessage(r record, msg string) bool {
	rec := p.openRecovery(r)
	x := rec.Recovery
	used := true
	switch {
	case reRecovering.MatchString(msg):
		x.Recovered = append(x.Recovered, atoi(reRecovering.FindStringSubmatch(msg)[1]))
	case reRecDelete.MatchString(msg):
		for _, sm := range reSegment.FindAllString(reRecDelete.FindStringSubmatch(msg)[1], -1) {
			seg, _ := parseSegment(sm)
			x.Deleted = append(x.Deleted, seg)
		}
	case reCorrupt.MatchString(msg):
		// The bytes cut are logged at DEBUG only ("Truncated K invalid
		// bytes"); the segment is noted as recovered.
		if b := atoi(reCorrupt.FindStringSubmatch(msg)[1]); !slices.Contains(x.Recovered, b) {
			x.Recovered = append(x.Recovered, b)
		}
	case reLeftover.MatchString(msg):
		for _, f := range reLeftover.FindStringSubmatch(msg)[1:] {
			if f != "" {
				x.Leftovers = append(x.Leftovers, path.Base(f))
			}
		}
	default:
		used = false // producer state and the like: part of the load, no fact
	}
	rec.End = r.time
	rec.Lines++
	return used
}

// openRecovery returns the load in progress, beginning one at r.
func (p *Parser) openRecovery(r record) *Event {
	if p.recovery == nil {
		ev := p.event(r, KindRecovery)
		ev.Lines = 0
		ev.Recovery = &Recovery{CleanShutdown: true, LogStartOffset: -1, LogEndOffset: -1}
		p.recovery = &ev
	}
	return p.recovery
}

// cleanerMessage handles a "Cleaner i: ..." line about the partition.
func (p *Parser) cleanerMessage(r record, id int, msg string) bool {
	if m := reBeginClean.FindStringSubmatch(msg); m != nil {
		if m[1] != p.opt.Partition {
			return false
		}
		if c := p.compaction; c != nil && len(c.Compaction.Sources) > 0 {
			p.emit(p.finish(*c)) // a pass whose end was not logged
		}
		ev := p.event(r, KindCompaction)
		ev.Compaction = &Compaction{Cleaner: id, FirstDirtyOffset: -1, EndOffset: -1}
		p.compaction = &ev
		return true
	}
	c := p.compaction
	if c == nil || c.Compaction.Cleaner != id {
		return false
	}
	if m := reOffsetMap.FindStringSubmatch(msg); m != nil && m[1] == p.opt.Partition {
		c.Compaction.FirstDirtyOffset, c.Compaction.EndOffset = atoi(m[2]), atoi(m[3])
	} else if m := reSwap.FindStringSubmatch(msg); m != nil && path.Base(m[3]) == p.opt.Partition {
		if !p.dirOK(m[3], true) {
			return false
		}
		cleaned, _ := parseSegment(m[1])
		c.Compaction.Cleaned = append(c.Compaction.Cleaned, cleaned)
		for _, sm := range reSegment.FindAllString(m[2], -1) {
			seg, _ := parseSegment(sm)
			c.Compaction.Sources = append(c.Compaction.Sources, seg)
		}
	} else if !strings.Contains(msg, " log "+p.opt.Partition) {
		return false
	}
	c.End = r.time
	c.Lines++
	return true
}

// deletionFor returns the open deletion for rule and config, closing
// another one first.
func (p *Parser) deletionFor(r record, rule string, local bool, ms, bytes, breach int64) *Event {
	if d := p.deletion; d != nil {
		x := d.Deletion
		// One rule's lines are logged in one loop (deleteSegments calls
		// logReason for them all): a second later is another check, whose
		// increment line the files did not hold.
		same := x.Rule == rule && x.Local == local && x.RetentionMs == ms && x.RetentionBytes == bytes && x.Breach == breach
		if same && r.time.Sub(d.End) <= time.Second {
			d.End = r.time
			d.Lines++
			return d
		}
		p.closeDeletion()
	}
	ev := p.event(r, KindDeletion)
	ev.Deletion = &Deletion{Rule: rule, Local: local, RetentionMs: ms, RetentionBytes: bytes, Breach: breach, OldLogStartOffset: -1, NewLogStartOffset: -1}
	if inc := p.increment; inc != nil && inc.ev.LogStartOffset.Local == local {
		// The increment of this deletion: it begins the event.
		ev.Time, ev.File, ev.Line = inc.ev.Time, inc.ev.File, inc.ev.Line
		ev.Lines++
		ev.Deletion.OldLogStartOffset, ev.Deletion.NewLogStartOffset = inc.old, inc.offset
		p.increment = nil
	} else if rule == RuleLogStartOffset && !local {
		ev.Deletion.OldLogStartOffset, ev.Deletion.NewLogStartOffset = breach, breach
	}
	p.deletion = &ev
	return p.deletion
}

// closeDeletion emits the open deletion.
func (p *Parser) closeDeletion() {
	if p.deletion != nil {
		p.emit(p.finish(*p.deletion))
		p.deletion = nil
	}
}

// finish fills what an event's last line settles: next offsets, a
// deletion's old log start offset.
func (p *Parser) finish(ev Event) Event {
	switch ev.Kind {
	case KindDeletion:
		x := *ev.Deletion
		x.Segments = slices.Clone(x.Segments)
		fillNext(x.Segments, x.NewLogStartOffset)
		if x.OldLogStartOffset < 0 && len(x.Segments) > 0 {
			x.OldLogStartOffset = x.Segments[0].BaseOffset
		}
		ev.Deletion = &x
	case KindCompaction:
		x := *ev.Compaction
		x.Sources, x.Cleaned = slices.Clone(x.Sources), slices.Clone(x.Cleaned)
		slices.SortFunc(x.Sources, func(a, b Segment) int { return cmpInt(a.BaseOffset, b.BaseOffset) })
		slices.SortFunc(x.Cleaned, func(a, b Segment) int { return cmpInt(a.BaseOffset, b.BaseOffset) })
		fillNext(x.Sources, x.EndOffset)
		fillNext(x.Cleaned, x.EndOffset)
		ev.Compaction = &x
	}
	return ev
}

// fillNext sets each segment's NextOffset to the next one's base, the
// last one's to end.
func fillNext(segs []Segment, end int64) {
	for i := range segs {
		if i+1 < len(segs) {
			segs[i].NextOffset = segs[i+1].BaseOffset
		} else {
			segs[i].NextOffset = end
		}
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// event begins an event at r.
func (p *Parser) event(r record, k Kind) Event {
	return Event{Kind: k, Time: r.time, End: r.time, File: r.file, Line: r.line, Lines: 1}
}

// emit records a finished event.
func (p *Parser) emit(ev Event) { p.events = append(p.events, ev) }

// parseSegment parses LogSegment.toString; NextOffset is -1.
func parseSegment(s string) (Segment, bool) {
	m := reSegment.FindStringSubmatch(s)
	if m == nil {
		return Segment{BaseOffset: -1, NextOffset: -1, LargestRecordTimestamp: -1}, false
	}
	return Segment{BaseOffset: atoi(m[1]), NextOffset: -1, Size: atoi(m[2]), LastModified: atoi(m[3]), LargestRecordTimestamp: atoi(m[4])}, true
}

// atoi parses a number the regular expressions matched as -?\d+; one
// that overflows is -1 (unknown), never a panic.
func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n
}
