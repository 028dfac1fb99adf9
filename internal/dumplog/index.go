package dumplog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/segkit/segkit/finding"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/index"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/verify"
	"github.com/segkit/segkit/vfs"
)

// IndexOptions select what an index dump prints.
type IndexOptions struct {
	// JSON prints JSON lines instead of text.
	JSON bool
	// Verify cross-checks every entry against the segment's .log, the file
	// of the same base name (--verify-index).
	Verify bool
	// VerifyOnly prints the problems and not the entries
	// (--verify-index-only); it implies Verify.
	VerifyOnly bool
	// SanityOnly runs Kafka's sanity check and prints its verdict only
	// (--index-sanity-check).
	SanityOnly bool
	// MaxMessageSize bounds the batch Kafka's check reads at each
	// .index entry (--max-message-size; 0: Kafka's default, 5 MiB).
	MaxMessageSize int
	// Errors receives, in text mode, what Kafka's tool would stop at with
	// an exception (a failed sanity check, an entry pointing at no batch):
	// segviz's own "Error: ..." lines. Nil sends them to the dump's writer.
	Errors io.Writer
}

// DefaultMaxMessageSize is the default of Kafka's --max-message-size.
const DefaultMaxMessageSize = 5 << 20

// IndexResult summarises an index dump. Only Errors make a dump fail:
// warnings (zero padding) and infos (multi-batch appends) describe valid
// files.
type IndexResult struct {
	Entries  int
	Errors   int
	Warnings int
	Infos    int

	// What Kafka's tool reports on standard error after all files, found
	// by its checks in text mode. Mismatches: for an .index, each entry
	// whose offset is not the last offset of the batch at its position
	// (entry offset, batch's last offset). For a .timeindex:
	// TimestampMismatches, an entry whose timestamp is not its batch's
	// largest record timestamp (index, log); OutOfOrder, an entry whose
	// timestamp is not above the previous entry's (timestamp, previous);
	// NotFound, an entry whose offset is not a batch's last offset (entry
	// offset, the last offset of the batch holding it, or -1).
	Mismatches          []OffsetPair
	TimestampMismatches []OffsetPair
	OutOfOrder          []OffsetPair
	NotFound            []OffsetPair
}

// IndexJSON is the JSON line printed per .index entry. Position is the
// entry's byte position in the index file; LogPosition the byte position
// in the .log it points at.
type IndexJSON struct {
	Type        string `json:"type"` // "index"
	File        string `json:"file"`
	Position    int64  `json:"position"`
	Offset      int64  `json:"offset"`
	LogPosition int32  `json:"logPosition"`
}

// TimeIndexJSON is the JSON line printed per .timeindex entry.
type TimeIndexJSON struct {
	Type      string `json:"type"` // "timeindex"
	File      string `json:"file"`
	Position  int64  `json:"position"`
	Timestamp int64  `json:"timestamp"`
	Offset    int64  `json:"offset"`
}

// TxnIndexJSON is the JSON line printed per .txnindex entry.
type TxnIndexJSON struct {
	Type             string `json:"type"` // "txnindex"
	File             string `json:"file"`
	Position         int64  `json:"position"`
	Version          int16  `json:"version"`
	ProducerID       int64  `json:"producerId"`
	FirstOffset      int64  `json:"firstOffset"`
	LastOffset       int64  `json:"lastOffset"`
	LastStableOffset int64  `json:"lastStableOffset"`
}

// ProblemJSON is the JSON line printed per finding of a verification (and
// for zero padding, and a failed sanity check). Kind is one of index's
// Kind constants, or "log-corrupt" for a .log that could not be read to
// its end; Level is "error", "warning" or "info".
type ProblemJSON struct {
	Type string `json:"type"` // "problem"
	finding.Problem
}

// SanityJSON is the JSON line printed by a sanity-check dump.
type SanityJSON struct {
	Type   string `json:"type"` // "sanity"
	File   string `json:"file"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
}

// KindLogCorrupt is the kind of the problem reported when the .log an
// index is verified against stops at corruption: entries pointing beyond
// it cannot be checked.
const KindLogCorrupt = "log-corrupt"

// indexDump holds the state of one index dump.
type indexDump struct {
	w    *bufio.Writer
	opt  IndexOptions
	fsys vfs.FS
	path string
	base int64
	res  IndexResult
	// verify runs segviz's cross-check; show prints its findings (always
	// in JSON, in text with Verify only: Kafka's text has no such lines).
	verify, show bool
	sum          *verify.LogSummary // the .log, once summarised
}

// Index dumps the .index, .timeindex or .txnindex file at path of fsys, in
// the manner of kafka-dump-log: one line per entry ("offset: O position:
// P", "timestamp: T offset: O", or the aborted transaction), then, with
// Verify, the problems found by cross-checking the entries against the
// segment's .log. Zero padding of an untrimmed index is always reported, as
// a warning (normal for the partition's last, active segment). Errors are
// returned only when the files cannot be read; what is wrong in them is
// counted in the result.
func Index(w io.Writer, fsys vfs.FS, path string, opt IndexOptions) (IndexResult, error) {
	base, ok := baseOffsetFromName(path)
	if !ok {
		return IndexResult{}, fmt.Errorf("%s: the file name does not start with a 20-digit base offset", path)
	}
	if opt.MaxMessageSize <= 0 {
		opt.MaxMessageSize = DefaultMaxMessageSize
	}
	d := &indexDump{w: bufio.NewWriterSize(w, 64<<10), opt: opt, fsys: fsys, path: path, base: base,
		verify: opt.Verify || opt.VerifyOnly, show: opt.JSON || opt.Verify}
	if !opt.JSON {
		fmt.Fprintf(d.w, "Dumping %s\n", path)
	}
	var err error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".index":
		err = d.entryIndex(describe.OffsetIndex)
	case ".timeindex":
		err = d.entryIndex(describe.TimeIndex)
	case ".txnindex":
		err = d.txnIndex()
	default:
		err = fmt.Errorf("%s: not an index file (%q)", path, ext)
	}
	if ferr := d.w.Flush(); err == nil {
		err = ferr
	}
	return d.res, err
}

// IsIndexFile reports whether path names a file Index dumps.
func IsIndexFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".index", ".timeindex", ".txnindex":
		return true
	}
	return false
}

// entryIndex is the dump of an offset or time index. In JSON: the sanity
// check alone, or the entries (without the padding, which is reported),
// then, with Verify, the cross-check against the .log. In text: Kafka's
// dump, then, with Verify, segviz's findings.
func (d *indexDump) entryIndex(kind describe.IndexKind) error {
	x, err := describe.OpenIndex(d.fsys, d.path, d.base, kind)
	if err != nil {
		return err
	}
	defer x.Close()
	pad := x.Padding()
	d.res.Entries = pad.ValidEntries
	switch {
	case !d.opt.JSON:
		if kind == describe.TimeIndex {
			err = d.kafkaTimeIndex(x.Time())
		} else {
			err = d.kafkaOffsetIndex(x.Offset())
		}
		if err != nil || d.opt.SanityOnly {
			return err
		}
	case d.opt.SanityOnly:
		d.sanity(x.SanityCheck())
		d.padding(kind.EntrySize(), pad)
		return nil
	case !d.opt.VerifyOnly:
		for i := range pad.ValidEntries {
			e := x.Entry(i)
			d.json(indexJSON(d.path, &e))
		}
	}
	d.padding(kind.EntrySize(), pad)
	if !d.verify {
		return nil
	}
	log, err := d.summarizeLog()
	if err != nil {
		return err
	}
	d.problems(x.Verify(log.Entries))
	d.summary(log)
	return nil
}

// indexJSON is the JSON line of the entry e of the index file.
func indexJSON(file string, e *describe.IndexEntry) any {
	if e.Kind == describe.TimeIndex {
		return TimeIndexJSON{Type: "timeindex", File: file, Position: e.Position, Timestamp: e.Timestamp, Offset: e.Offset}
	}
	return IndexJSON{Type: "index", File: file, Position: e.Position, Offset: e.Offset, LogPosition: e.LogPosition}
}

func (d *indexDump) txnIndex() error {
	x, err := index.OpenTransactionIndex(d.fsys, d.path, d.base, index.OpenOptions{})
	if err != nil {
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return err
		}
		// An entry of an unknown version: show the ones before it.
		raw, rerr := vfs.ReadFile(d.fsys, d.path)
		if rerr != nil {
			return rerr
		}
		for pos := int64(0); pos < ce.Offset; pos += index.AbortedTxnSize {
			t, _ := index.DecodeAbortedTxn(raw[pos:])
			d.txn(pos, t)
			d.res.Entries++
		}
		d.problems([]finding.Problem{{File: d.path, Position: ce.Offset, Kind: finding.KindSanity, Level: finding.Error, Detail: err.Error()}})
		if !d.show {
			d.errorf("Error: %v\n", err)
		}
		return nil
	}
	defer x.Close()
	d.res.Entries = x.Entries()
	// Kafka's tool prints a transaction index's entries whatever the
	// flags.
	if d.opt.SanityOnly && d.opt.JSON {
		d.sanity(x.SanityCheck())
		return nil
	}
	if !d.opt.VerifyOnly || !d.opt.JSON {
		for i, t := range x.All() {
			d.txn(int64(i)*index.AbortedTxnSize, t)
		}
	}
	var entries []verify.LogEntrySummary
	var log *verify.LogSummary
	if d.verify {
		if log, err = d.summarizeLog(); err != nil {
			return err
		}
		entries = log.Entries
	}
	// Without the log (entries nil), only what the file shows by itself.
	d.problems(verify.TxnIndex(x, entries))
	if log != nil {
		d.summary(log)
	}
	return nil
}

func (d *indexDump) txn(pos int64, t index.AbortedTxn) {
	if d.opt.JSON {
		d.json(TxnIndexJSON{Type: "txnindex", File: d.path, Position: pos, Version: t.Version, ProducerID: t.ProducerID,
			FirstOffset: t.FirstOffset, LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset})
		return
	}
	fmt.Fprintf(d.w, "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
		t.Version, t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset)
}

// sanity prints the verdict of Kafka's sanity check.
func (d *indexDump) sanity(err error) {
	if err == nil {
		if d.opt.JSON {
			d.json(SanityJSON{Type: "sanity", File: d.path, Passed: true})
		} else {
			fmt.Fprintf(d.w, "%s passed sanity check.\n", d.path)
		}
		return
	}
	d.res.Errors++
	if d.opt.JSON {
		d.json(SanityJSON{Type: "sanity", File: d.path, Passed: false, Detail: err.Error()})
		return
	}
	d.errorf("Error: %s failed sanity check: %v\n", d.path, err)
}

// padding reports the zero padding of an untrimmed index, if any.
func (d *indexDump) padding(entrySize int, p index.Padding) {
	if pp := verify.Padding(d.path, entrySize, p, d.active()); pp != nil {
		d.problems([]finding.Problem{*pp})
	}
}

// active reports whether the index belongs to the last segment of its
// directory: no .log there has a larger base offset.
func (d *indexDump) active() bool {
	dir := filepath.Dir(d.path)
	infos, err := vfs.ReadDir(d.fsys, dir)
	if err != nil {
		return true // cannot tell: assume the common case, a copied active segment
	}
	for _, fi := range infos {
		name := fi.Name()
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		if b, ok := baseOffsetFromName(name); ok && b > d.base {
			return false
		}
	}
	return true
}

// logPath is the path of the index's segment log.
func (d *indexDump) logPath() string {
	return strings.TrimSuffix(d.path, filepath.Ext(d.path)) + ".log"
}

// openLog opens the segment's .log and returns its size.
func (d *indexDump) openLog() (vfs.File, int64, error) {
	f, err := d.fsys.Open(d.logPath())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, fmt.Errorf("%s: checking the index needs the segment's log, %s: %w", d.path, d.logPath(), err)
		}
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// summarizeLog reads the segment's .log, once.
func (d *indexDump) summarizeLog() (*verify.LogSummary, error) {
	if d.sum != nil {
		return d.sum, nil
	}
	f, size, err := d.openLog()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	logPath := d.logPath()
	s, err := verify.SummarizeLog(f, size, logPath)
	if err != nil {
		return nil, err
	}
	d.sum = s
	if s.Err != nil {
		pos := s.ValidEnd
		var ce *format.CorruptionError
		if errors.As(s.Err, &ce) {
			pos = ce.Offset
		}
		d.problems([]finding.Problem{{File: logPath, Position: pos, Kind: KindLogCorrupt, Level: finding.Error,
			Detail: "the log is corrupt here; index entries past " + strconv.FormatInt(s.ValidEnd, 10) + " cannot be checked: " + s.Err.Error()}})
	}
	return s, nil
}

// problems prints findings and counts them.
func (d *indexDump) problems(ps []finding.Problem) {
	for _, p := range ps {
		switch p.Level {
		case finding.Error:
			d.res.Errors++
		case finding.Warning:
			d.res.Warnings++
		default:
			d.res.Infos++
		}
		if !d.show {
			continue
		}
		if d.opt.JSON {
			d.json(ProblemJSON{Type: "problem", Problem: p})
			continue
		}
		label := map[finding.Level]string{finding.Error: "Error", finding.Warning: "Warning", finding.Info: "Info"}[p.Level]
		fmt.Fprintf(d.w, "%s: %s: position %d: %s: %s\n", label, p.File, p.Position, p.Kind, p.Detail)
	}
}

// summary closes a verification with its counts (text only).
func (d *indexDump) summary(log *verify.LogSummary) {
	if d.opt.JSON || !d.opt.Verify || d.opt.VerifyOnly {
		return
	}
	fmt.Fprintf(d.w, "Verified %d entries against %s (%d batches): %d errors, %d warnings, %d notes\n",
		d.res.Entries, log.Path, len(log.Entries), d.res.Errors, d.res.Warnings, d.res.Infos)
}

func (d *indexDump) json(v any) { writeJSON(d.w, v) }
