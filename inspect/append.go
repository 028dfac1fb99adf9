package inspect

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
	kafkalog "github.com/segkit/segkit/log"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// MaxInputLine bounds the length of one JSON line ParseRecords reads.
var MaxInputLine = 64 << 20

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

// InputError lists every bad input line; nothing was written.
type InputError struct {
	Lines []LineError
}

// maxListed is how many line errors InputError.Error lists.
const maxListed = 10

func (e *InputError) Error() string {
	var b strings.Builder
	for i, l := range e.Lines {
		if i == maxListed {
			fmt.Fprintf(&b, "\n... and %d more", len(e.Lines)-maxListed)
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
// are errors (to catch typos). Every line is read before anything is
// returned: the error is an *InputError listing each bad line, or a read
// error.
func ParseRecords(r io.Reader, now int64) ([]InputRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxInputLine)
	var out []InputRecord
	var bad []LineError
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := parseLine(line, now)
		if err != nil {
			bad = append(bad, LineError{Line: n, Err: err})
			continue
		}
		out = append(out, InputRecord{Line: n, Record: rec})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			bad = append(bad, LineError{Line: n + 1, Err: fmt.Errorf("longer than %d bytes", MaxInputLine)})
			return nil, &InputError{Lines: bad}
		}
		return nil, err
	}
	if len(bad) > 0 {
		return nil, &InputError{Lines: bad}
	}
	return out, nil
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

// AppendOptions tune Append.
type AppendOptions struct {
	// Codec compresses each batch.
	Codec compress.Codec
	// BatchRecords is how many records go in one batch; 0 means 1.
	BatchRecords int
	// Config is the partition's configuration (log.ParseConfig with
	// config.AllowSmallSegments for a segment.bytes below 1 MiB); nil means
	// Kafka's defaults.
	Config *kafkalog.Config
	// Clock is the log's clock, against which the timestamp bounds
	// (message.timestamp.before/after.max.ms) are checked; nil means the
	// wall clock.
	Clock segment.Clock
	// OnBatch, if set, is called after each batch is appended.
	OnBatch func(kafkalog.AppendResult)
	// OnOpen, if set, is called once the log is open, before the first
	// append, with what opening it found and did: a torn tail cut,
	// leftover files removed (log.LoadReport).
	OnOpen func(kafkalog.LoadReport)
}

// Append appends recs to the partition directory dir of fsys, creating
// it if needed, as a leader does (log.Append): opt.BatchRecords records a
// batch, compressed with opt.Codec, one append per batch so that the log
// rolls between batches as segment.bytes says. Every batch is built and
// checked first — its size against max.message.bytes, its timestamps
// against message.timestamp.before/after.max.ms — and an *InputError names
// the lines of the batches that would be refused before anything is
// written. dir must be a partition directory (CheckPartitionDir). Opening
// the log locks it (a *log.LockError if a broker or another writer holds
// its log directory) and cuts only a torn tail: corruption fails it with a
// *log.CorruptLogError, before anything is written. An error after that
// is the log's (I/O): the batches before it were appended, and the results
// say which.
func Append(fsys vfs.FS, dir string, recs []InputRecord, opt AppendOptions) ([]kafkalog.AppendResult, error) {
	n := max(opt.BatchRecords, 1)
	var clock segment.Clock = segment.SystemClock{}
	if opt.Clock != nil {
		clock = opt.Clock
	}
	now := clock.Now().UnixMilli()
	cfg := kafkalog.DefaultConfig()
	if opt.Config != nil {
		cfg = *opt.Config
	}
	var w record.Builder
	var batches [][]byte
	var bad []LineError
	var rs []record.Record
	for i := 0; i < len(recs); i += n {
		group := recs[i:min(i+n, len(recs))]
		rs = rs[:0]
		for j := range group {
			if err := checkTimestamp(group[j].Timestamp, now, cfg); err != nil {
				bad = append(bad, LineError{Line: group[j].Line, Err: err})
			}
			rs = append(rs, group[j].Record)
		}
		spec := record.NewBatchSpec(0, opt.Codec)
		b, err := w.AppendBatch(nil, &spec, rs)
		if err != nil {
			bad = append(bad, LineError{Line: group[0].Line, Err: err})
			continue
		}
		if len(b) > int(cfg.MaxMessageBytes) {
			bad = append(bad, LineError{Line: group[0].Line, Err: fmt.Errorf("the batch of lines %d-%d is %d bytes, more than max.message.bytes (%d): Kafka refuses it (RecordTooLargeException); use fewer --batch-records or smaller records",
				group[0].Line, group[len(group)-1].Line, len(b), cfg.MaxMessageBytes)})
			continue
		}
		batches = append(batches, b)
	}
	if len(bad) > 0 {
		return nil, &InputError{Lines: bad}
	}
	if err := CheckPartitionDir(fsys, dir); err != nil {
		return nil, err
	}
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: clock})
	if err != nil {
		return nil, err
	}
	if opt.OnOpen != nil {
		opt.OnOpen(l.LoadReport())
	}
	var out []kafkalog.AppendResult
	for _, b := range batches {
		res, err := l.Append(b, -1)
		if err != nil {
			l.Close()
			return out, err
		}
		out = append(out, res)
		if opt.OnBatch != nil {
			opt.OnBatch(res)
		}
	}
	return out, l.Close()
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
