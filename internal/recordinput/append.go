package recordinput

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/inspect"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// DefaultMaxLineBytes bounds the length of one JSON line (without its
// newline) that ParseRecords, RecordReader and AppendFrom read, unless a
// RecordReader's MaxLineBytes says otherwise: a longer line is a bad line,
// skipped without being held in memory.
const DefaultMaxLineBytes = 64 << 20

// DefaultSyncBytes is AppendOptions.SyncBytes' default: the bytes of
// batches appended between two flushes of the log.
const DefaultSyncBytes = 4 << 20

// maxKeptLineErrors bounds the bad lines AppendFrom lists; it counts the
// others (InputError.Omitted), so that an input of garbage costs no memory.
const maxKeptLineErrors = 1000

// InputRecord is one record read from a JSON line, with its line number
// (from 1).
type InputRecord struct {
	Line int
	record.Record
}

// LineError is a problem with one input line (or, for a batch, the first
// line of the batch).
type LineError struct {
	Line int
	Err  error
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// InputError lists the bad input lines. ParseRecords and Append refuse the
// whole input and write nothing; AppendFrom stops appending at the first
// bad line, and its AppendSummary says what was appended before.
type InputError struct {
	Lines []LineError
	// Omitted counts the bad lines found past the first thousand, which
	// AppendFrom does not list.
	Omitted int
}

// maxListed is how many line errors InputError.Error lists.
const maxListed = 10

func (e *InputError) Error() string {
	var b strings.Builder
	for i, l := range e.Lines {
		if i == maxListed {
			fmt.Fprintf(&b, "\n... and %d more", len(e.Lines)-maxListed+e.Omitted)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Error())
	}
	return b.String()
}

// inputLine is the JSON form of a record.
type inputLine struct {
	Key       *string       `json:"key"`
	Value     *string       `json:"value"`
	Headers   []inputHeader `json:"headers"`
	Timestamp *int64        `json:"timestamp"`
}

type inputHeader struct {
	Key   *string `json:"key"`
	Value *string `json:"value"`
}

// ParseRecords reads records as JSON lines from r, one object a line:
//
//	{"key": "a2V5", "value": "dmFsdWU=", "headers": [{"key": "trace", "value": "MTIz"}], "timestamp": 1700000000000}
//
// key, value and each header's value are base64 (standard, padded) or
// null, and may be left out (null); a header's key is text (Kafka's header
// keys are strings) and is required; timestamp is in ms since the epoch,
// and records without one get now. Blank lines are skipped; unknown fields
// are errors (to catch typos), and so are a line that is not an object and
// an object with a key twice. Every line is read before anything is
// returned: the error is an *InputError listing each bad line, or a read
// error. ParseRecords holds the whole input; RecordReader reads it a record
// at a time.
func ParseRecords(r io.Reader, now int64) ([]InputRecord, error) {
	rr := NewRecordReader(r, now)
	var out []InputRecord
	var bad []LineError
	for {
		rec, err := rr.Next()
		var le LineError
		switch {
		case err == nil:
			out = append(out, rec)
			continue
		case errors.As(err, &le):
			bad = append(bad, le)
			continue
		case err != io.EOF:
			return nil, err
		}
		break
	}
	if len(bad) > 0 {
		return nil, &InputError{Lines: bad}
	}
	return out, nil
}

// RecordReader reads records from JSON lines, in the format ParseRecords
// reads, one line at a time: it holds one line, never the input.
//
//	rr := recordinput.NewRecordReader(os.Stdin, time.Now().UnixMilli())
//	for {
//		rec, err := rr.Next()
//		if err == io.EOF {
//			break
//		}
//		...
//	}
//
// A RecordReader is not safe for concurrent use.
type RecordReader struct {
	// MaxLineBytes bounds a line's length; 0 means DefaultMaxLineBytes.
	MaxLineBytes int

	br   *bufio.Reader
	long []byte // a line longer than br's buffer, gathered
	now  int64
	line int   // the number of the last line read
	err  error // io.EOF or the read error, returned from then on
}

// NewRecordReader returns a RecordReader of r; records without a timestamp
// get now.
func NewRecordReader(r io.Reader, now int64) *RecordReader {
	return &RecordReader{br: bufio.NewReaderSize(r, 64<<10), now: now}
}

// Next returns the next record, skipping blank lines. A bad line (not a
// JSON object of the record's fields, bad base64, a negative timestamp,
// longer than MaxLineBytes) is a LineError, and reading can go on after
// it. At the end of the input Next returns io.EOF; any other error is the
// reader's, and every later call returns it again. The record's slices are
// its own: they never alias the reader's buffers.
func (rr *RecordReader) Next() (InputRecord, error) {
	for rr.err == nil {
		line, tooLong, err := rr.readLine()
		if err != nil {
			rr.err = err
			break
		}
		rr.line++
		if tooLong {
			return InputRecord{Line: rr.line}, LineError{Line: rr.line, Err: fmt.Errorf("longer than %d bytes", rr.maxLine())}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec, err := parseLine(line, rr.now)
		if err != nil {
			return InputRecord{Line: rr.line}, LineError{Line: rr.line, Err: err}
		}
		return InputRecord{Line: rr.line, Record: rec}, nil
	}
	return InputRecord{}, rr.err
}

// Line is the number of the last line Next read (from 1), blank lines
// included.
func (rr *RecordReader) Line() int { return rr.line }

// maxLine is MaxLineBytes or its default.
func (rr *RecordReader) maxLine() int {
	if rr.MaxLineBytes > 0 {
		return rr.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

// readLine returns the next line without its newline (it aliases the
// reader's buffers until the next call), or reports that the line was
// longer than MaxLineBytes: such a line is skipped, not gathered. The
// error is io.EOF when no line is left, or the reader's: a line cut by a
// read error is dropped, since its end is unknown.
func (rr *RecordReader) readLine() (line []byte, tooLong bool, err error) {
	if cap(rr.long) > 1<<20 {
		rr.long = nil // a huge line's buffer is not kept for the next ones
	}
	rr.long = rr.long[:0]
	n := 0 // bytes of the line so far, without a newline
	for {
		frag, err := rr.br.ReadSlice('\n')
		end := err == nil // frag ends with the newline
		if end {
			frag = frag[:len(frag)-1]
		}
		if n == 0 && end && len(frag) <= rr.maxLine() {
			return frag, false, nil // the line is in the buffer: no copy
		}
		n += len(frag)
		if tooLong = tooLong || n > rr.maxLine(); !tooLong {
			rr.long = append(rr.long, frag...)
		}
		switch {
		case end:
			return rr.long, tooLong, nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && n > 0:
			return rr.long, tooLong, nil // the last line, without a newline
		default:
			return nil, false, err
		}
	}
}

func parseLine(line []byte, now int64) (record.Record, error) {
	if err := checkJSONObject(line); err != nil {
		return record.Record{}, err
	}
	var in inputLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return record.Record{}, fmt.Errorf("not a JSON object of key, value, headers and timestamp: %v", err)
	}
	if dec.More() {
		return record.Record{}, errors.New("more than one JSON value on the line")
	}
	var rec record.Record
	var err error
	if rec.Key, err = decodeB64("key", in.Key); err != nil {
		return rec, err
	}
	if rec.Value, err = decodeB64("value", in.Value); err != nil {
		return rec, err
	}
	for i, h := range in.Headers {
		if h.Key == nil {
			return rec, fmt.Errorf("header %d: the key is missing (a header key is a string, never null)", i)
		}
		if !utf8.ValidString(*h.Key) {
			return rec, fmt.Errorf("header %d: the key is not valid UTF-8", i)
		}
		v, err := decodeB64(fmt.Sprintf("header %d value", i), h.Value)
		if err != nil {
			return rec, err
		}
		rec.Headers = append(rec.Headers, record.Header{Key: []byte(*h.Key), Value: v})
	}
	rec.Timestamp = now
	if in.Timestamp != nil {
		if *in.Timestamp < 0 {
			return rec, fmt.Errorf("timestamp %d is negative (Kafka's producers refuse it)", *in.Timestamp)
		}
		rec.Timestamp = *in.Timestamp
	}
	return rec, nil
}

// checkJSONObject refuses what encoding/json would let through into a
// record silently: a line that is not an object (a bare null decodes into
// an empty record) and an object, at any depth, with a key twice (the last
// one would win, and the other value would be lost without a word).
func checkJSONObject(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a JSON object of key, value, headers and timestamp: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("not a JSON object of key, value, headers and timestamp: %v", tok)
	}
	// One frame per open object or array: the keys seen (nil for arrays),
	// and whether the next token of an object is a key.
	type frame struct {
		keys      map[string]bool
		expectKey bool
	}
	stack := []frame{{keys: map[string]bool{}, expectKey: true}}
	for len(stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not a JSON object of key, value, headers and timestamp: %v", err)
		}
		top := &stack[len(stack)-1]
		if top.keys != nil && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k, _ := tok.(string)
			if top.keys[k] {
				return fmt.Errorf("the key %q appears twice in one object", k)
			}
			top.keys[k] = true
			top.expectKey = false
			continue
		}
		if top.keys != nil {
			top.expectKey = true // this token is a value
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'), json.Delim('}'):
			stack = stack[:len(stack)-1]
		}
	}
	return nil
}

func decodeB64(what string, s *string) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64: %v", what, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// AppendOptions tune Append and AppendFrom.
type AppendOptions struct {
	// Codec compresses each batch.
	Codec compress.Codec
	// BatchRecords is how many records go in one batch; 0 means 1.
	BatchRecords int
	// Config is the partition's configuration (kafkalog.ParseConfig with
	// config.AllowSmallSegments for a segment.bytes below 1 MiB); nil means
	// Kafka's defaults.
	Config *kafkalog.Config
	// Clock is the log's clock, against which the timestamp bounds
	// (message.timestamp.before/after.max.ms) are checked; nil means the
	// wall clock.
	Clock segment.Clock
	// SyncBytes is how many bytes of batches may be appended before the
	// log is flushed (fsync), making them durable; 0 means
	// DefaultSyncBytes. The log is flushed at the end too, and the engine
	// flushes on its own at each roll and as flush.messages and flush.ms
	// say. A smaller value acknowledges batches sooner, at the cost of an
	// fsync each time.
	SyncBytes int
	// OnBatch, if set, is called for each batch appended, in order, once
	// it is durable: when a flush (the log's recovery point) has passed its
	// last offset. A batch it has been called for survives a crash — a
	// kill -9 or a power cut — as the engine's flush guarantees; a batch
	// appended but not yet acknowledged may survive or not.
	OnBatch func(kafkalog.AppendResult)
	// OnRecord, if set, is called by AppendFrom for each valid record
	// read, before it is batched (for warnings about its contents).
	OnRecord func(InputRecord)
	// OnOpen, if set, is called once the log is open, before the first
	// append, with what opening it found and did: a torn tail cut,
	// leftover files removed (kafkalog.LoadReport).
	OnOpen func(kafkalog.LoadReport)
}

// AppendSummary says what AppendFrom appended and made durable.
type AppendSummary struct {
	// Records and Batches count what was acknowledged (OnBatch): appended
	// and durable.
	Records int64
	Batches int
	// FirstOffset and LastOffset are the offsets of the first and the last
	// record acknowledged; both are -1 when none was.
	FirstOffset, LastOffset int64
	// ResumeLine is the input line to go on from: the records of every
	// earlier line are durable, and unless Unacknowledged says otherwise,
	// none of this line or later was written.
	ResumeLine int
	// Unacknowledged counts the batches written after those, but not
	// acknowledged: after an I/O error (a failed write or flush), they may
	// be in the log, whole or torn, or not. Check its log end offset before
	// appending the rest.
	Unacknowledged int
}

// Append appends recs to the partition directory dir of fsys, creating
// it if needed, as a leader does (log.Append): opt.BatchRecords records a
// batch, compressed with opt.Codec, one append per batch so that the log
// rolls between batches as segment.bytes says. Every batch is built and
// checked first — its size against max.message.bytes, its timestamps
// against message.timestamp.before/after.max.ms — and an *InputError names
// the lines of the batches that would be refused before anything is
// written. dir must be a partition directory (CheckPartitionDir). Opening
// the log locks it (a *kafkalog.LockError if a broker or another writer holds
// its log directory) and cuts only a torn tail: corruption fails it with a
// *kafkalog.CorruptLogError, before anything is written. An error after that
// is the log's (I/O): the batches before it were appended, and the results
// say which (OnBatch, which says which are durable, is called only for
// those a flush made durable).
//
// Append holds every batch in memory; AppendFrom streams an input of any
// size.
func Append(fsys vfs.FS, dir string, recs []InputRecord, opt AppendOptions) ([]kafkalog.AppendResult, error) {
	n := max(opt.BatchRecords, 1)
	pw := newPartitionWriter(fsys, dir, &opt)
	var w record.Builder
	var batches [][]byte
	var bad []LineError
	var rs []record.Record
	for i := 0; i < len(recs); i += n {
		group := recs[i:min(i+n, len(recs))]
		rs = rs[:0]
		for j := range group {
			if err := checkTimestamp(group[j].Timestamp, pw.now, pw.cfg); err != nil {
				bad = append(bad, LineError{Line: group[j].Line, Err: err})
			}
			rs = append(rs, group[j].Record)
		}
		b, le := pw.build(&w, nil, rs, group[0].Line, group[len(group)-1].Line)
		if le != nil {
			bad = append(bad, *le)
			continue
		}
		batches = append(batches, b)
	}
	if len(bad) > 0 {
		return nil, &InputError{Lines: bad}
	}
	var out []kafkalog.AppendResult
	for i, b := range batches {
		res, err := pw.append(b, recs[min((i+1)*n, len(recs))-1].Line)
		if err != nil {
			return out, pw.stop(err)
		}
		out = append(out, res)
	}
	return out, pw.close(true)
}

// AppendFrom reads records from r as JSON lines (the format ParseRecords
// reads) and appends them to the partition directory dir of fsys, creating
// it if needed, as Append does — but as they come: each batch of
// opt.BatchRecords records is built, checked and appended as soon as it is
// full, so that memory holds one batch, whatever the size of the input.
// The log is opened (locked, and its torn tail cut, as Append says) when
// the first batch is ready, or at the end of an input with no batch: an
// input whose first batch holds a bad line creates nothing. The log is
// flushed every opt.SyncBytes bytes of batches and at the end, and each
// batch is acknowledged through opt.OnBatch once durable.
//
// Lines are checked as they are read. The first bad line — or a batch
// Kafka would refuse (max.message.bytes, message.timestamp.*.max.ms) —
// stops the appending: the batches appended before the batch that holds it
// stay, made durable, and nothing from that batch on is written (so that
// appending the corrected input from ResumeLine gives the batches a clean
// run would). The rest of the input is still read and checked, so that the
// *InputError lists every bad line (the first thousand; it counts the
// others). The summary says what was appended, with an error or without.
// An I/O error, and an error reading r, stop everything at once.
func AppendFrom(fsys vfs.FS, dir string, r io.Reader, opt AppendOptions) (AppendSummary, error) {
	n := max(opt.BatchRecords, 1)
	pw := newPartitionWriter(fsys, dir, &opt)
	rr := NewRecordReader(r, pw.now)
	var w record.Builder
	var buf []byte
	rs := make([]record.Record, 0, min(n, 1024))
	firstLine, lastLine := 0, 0
	var bad []LineError
	omitted := 0
	writing := true // until the first bad line
	// refuse records a bad line; the first one stops the appending, and
	// makes what was appended durable.
	refuse := func(le LineError) error {
		if len(bad) < maxKeptLineErrors {
			bad = append(bad, le)
		} else {
			omitted++
		}
		if !writing {
			return nil
		}
		writing = false
		return pw.close(false)
	}
	// batch builds the records gathered into a batch, checks it, and
	// appends it unless a bad line has stopped the appending.
	batch := func() error {
		if len(rs) == 0 {
			return nil
		}
		b, le := pw.build(&w, buf[:0], rs, firstLine, lastLine)
		clear(rs) // the records' bytes are not kept past their batch
		rs = rs[:0]
		if le != nil {
			return refuse(*le)
		}
		buf = b
		if !writing {
			return nil
		}
		_, err := pw.append(b, lastLine)
		return err
	}
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			break
		}
		var le LineError
		if errors.As(err, &le) {
			if err := refuse(le); err != nil {
				return pw.sum, err
			}
			continue
		}
		if err != nil {
			err = pw.stop(fmt.Errorf("reading the input: %w", err))
			return pw.sum, err
		}
		if err := checkTimestamp(rec.Timestamp, pw.now, pw.cfg); err != nil {
			if err := refuse(LineError{Line: rec.Line, Err: err}); err != nil {
				return pw.sum, err
			}
			continue
		}
		if opt.OnRecord != nil {
			opt.OnRecord(rec)
		}
		if len(rs) == 0 {
			firstLine = rec.Line
		}
		rs = append(rs, rec.Record)
		lastLine = rec.Line
		if len(rs) == n {
			if err := batch(); err != nil {
				err = pw.stop(err)
				return pw.sum, err
			}
		}
	}
	if err := batch(); err != nil {
		err = pw.stop(err)
		return pw.sum, err
	}
	if len(bad) > 0 {
		return pw.sum, &InputError{Lines: bad, Omitted: omitted}
	}
	err := pw.close(true) // before reading pw.sum, which it completes
	return pw.sum, err
}

// partitionWriter appends built batches to a partition directory, opening
// the log at the first, flushing it every SyncBytes bytes, and
// acknowledging each batch (OnBatch, the summary) once the log's recovery
// point has passed it.
type partitionWriter struct {
	fsys      vfs.FS
	dir       string
	opt       *AppendOptions
	cfg       kafkalog.Config
	clock     segment.Clock
	now       int64 // ms, for the timestamp checks
	syncBytes int
	l         *kafkalog.Log
	closed    bool
	unsynced  int            // bytes appended since the last flush
	pending   []pendingBatch // appended, not yet durable, in order
	sum       AppendSummary
}

// pendingBatch is an appended batch and the input line after its last.
type pendingBatch struct {
	res      kafkalog.AppendResult
	nextLine int
}

func newPartitionWriter(fsys vfs.FS, dir string, opt *AppendOptions) *partitionWriter {
	pw := &partitionWriter{fsys: fsys, dir: dir, opt: opt, cfg: kafkalog.DefaultConfig(), clock: segment.SystemClock{}, syncBytes: opt.SyncBytes}
	if opt.Clock != nil {
		pw.clock = opt.Clock
	}
	if opt.Config != nil {
		pw.cfg = *opt.Config
	}
	if pw.syncBytes <= 0 {
		pw.syncBytes = DefaultSyncBytes
	}
	pw.now = pw.clock.Now().UnixMilli()
	pw.sum = AppendSummary{FirstOffset: -1, LastOffset: -1, ResumeLine: 1}
	return pw
}

// build appends to dst the batch of rs, the records of lines first to
// last, and checks its size against max.message.bytes; a batch refused is
// reported as a problem with its first line.
func (pw *partitionWriter) build(w *record.Builder, dst []byte, rs []record.Record, first, last int) ([]byte, *LineError) {
	spec := record.NewBatchSpec(0, pw.opt.Codec)
	b, err := w.AppendBatch(dst, &spec, rs)
	if err != nil {
		return dst, &LineError{Line: first, Err: err}
	}
	if len(b) > int(pw.cfg.MaxMessageBytes) {
		return b, &LineError{Line: first, Err: fmt.Errorf("the batch of lines %d-%d is %d bytes, more than max.message.bytes (%d): Kafka refuses it (RecordTooLargeException); use fewer --batch-records or smaller records",
			first, last, len(b), pw.cfg.MaxMessageBytes)}
	}
	return b, nil
}

func (pw *partitionWriter) open() error {
	if err := inspect.CheckPartitionDir(pw.fsys, pw.dir); err != nil {
		return err
	}
	// The timeline records the rolls the appends make (kafkalog,
	// Options.Timeline), so that "segviz history" can say which roll closed
	// the segment of an offset.
	l, err := kafkalog.Open(pw.fsys, pw.dir, pw.cfg, kafkalog.Options{Clock: pw.clock, Timeline: true})
	if err != nil {
		return err
	}
	pw.l = l
	if pw.opt.OnOpen != nil {
		pw.opt.OnOpen(l.LoadReport())
	}
	return nil
}

// append appends the batch b, whose last record is of line last, opening
// the log first if needed, and flushes when SyncBytes have accumulated.
func (pw *partitionWriter) append(b []byte, last int) (kafkalog.AppendResult, error) {
	if pw.l == nil {
		if err := pw.open(); err != nil {
			return kafkalog.AppendResult{}, err
		}
	}
	res, err := pw.l.Append(b, -1)
	if err != nil {
		pw.sum.Unacknowledged = len(pw.pending) + 1
		return res, err
	}
	pw.pending = append(pw.pending, pendingBatch{res: res, nextLine: last + 1})
	pw.unsynced += len(b)
	if pw.unsynced >= pw.syncBytes {
		return res, pw.flush()
	}
	pw.ack() // a roll, or flush.messages, may have made earlier batches durable
	return res, nil
}

// flush makes every batch appended durable, and acknowledges them.
func (pw *partitionWriter) flush() error {
	if pw.l == nil || len(pw.pending) == 0 {
		return nil
	}
	if err := pw.l.Flush(); err != nil {
		pw.sum.Unacknowledged = len(pw.pending)
		return err
	}
	pw.ack()
	return nil
}

// ack acknowledges the pending batches below the log's recovery point: the
// engine has flushed them.
func (pw *partitionWriter) ack() {
	rp := pw.l.RecoveryPoint()
	i := 0
	for ; i < len(pw.pending) && pw.pending[i].res.LastOffset < rp; i++ {
		p := pw.pending[i]
		if pw.sum.Batches == 0 {
			pw.sum.FirstOffset = p.res.FirstOffset
		}
		pw.sum.Batches++
		pw.sum.Records += p.res.LastOffset - p.res.FirstOffset + 1
		pw.sum.LastOffset = p.res.LastOffset
		pw.sum.ResumeLine = p.nextLine
		if pw.opt.OnBatch != nil {
			pw.opt.OnBatch(p.res)
		}
	}
	pw.pending = pw.pending[:copy(pw.pending, pw.pending[i:])]
	if len(pw.pending) == 0 {
		pw.unsynced = 0
	}
}

// close flushes and closes the log. With openEmpty a log never opened is
// opened first (so that an input with no record still creates, checks and
// locks the partition, as it always has); without, it stays unopened.
func (pw *partitionWriter) close(openEmpty bool) error {
	if pw.closed {
		return nil
	}
	pw.closed = true
	if pw.l == nil {
		if !openEmpty {
			return nil
		}
		if err := pw.open(); err != nil {
			return err
		}
	}
	err := pw.flush()
	return errors.Join(err, pw.l.Close())
}

// stop closes the log after err, flushing (and acknowledging) what can be,
// and returns err: after an I/O error the log refuses the flush, and
// what was not acknowledged is left as the engine wrote it.
func (pw *partitionWriter) stop(err error) error {
	pw.close(false)
	return err
}

// checkTimestamp applies message.timestamp.before/after.max.ms as
// log.Append will.
func checkTimestamp(ts, now int64, cfg kafkalog.Config) error {
	if cfg.MessageTimestampType == "LogAppendTime" || ts < 0 {
		return nil
	}
	if before := cfg.MessageTimestampBeforeMaxMs; before != math.MaxInt64 && now-ts > before {
		return fmt.Errorf("timestamp %d is %d ms before now, more than message.timestamp.before.max.ms (%d)", ts, now-ts, before)
	}
	if after := cfg.MessageTimestampAfterMaxMs; after != math.MaxInt64 && ts-now > after {
		return fmt.Errorf("timestamp %d is %d ms after now, more than message.timestamp.after.max.ms (%d): Kafka 4.x refuses records stamped more than an hour ahead by default", ts, ts-now, after)
	}
	return nil
}
