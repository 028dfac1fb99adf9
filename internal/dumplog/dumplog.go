package dumplog

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/record"
)

// Options select what a dump prints.
type Options struct {
	// Deep adds one line per record (--deep, Kafka's --deep-iteration).
	Deep bool
	// PrintData adds keys and values (--print-data, Kafka's
	// --print-data-log); it implies Deep.
	PrintData bool
	// JSON prints JSON lines instead of text.
	JSON bool
	// MaxDecompressed bounds each batch's decompressed size (0: the
	// record package's default).
	MaxDecompressed int
	// SkipRecordMetadata leaves out the "| offset: ..." part of record
	// lines, and with it control records' contents (Kafka's
	// --skip-record-metadata). Text only.
	SkipRecordMetadata bool
	// MaxBytes reads only the batches that end within the first MaxBytes
	// bytes of the file (Kafka's --max-bytes); 0 reads the whole file. A
	// limit also silences the "invalid bytes at the end" line, as in
	// Kafka.
	MaxBytes int64
	// Errors receives, in text mode, the problems Kafka's tool has no
	// line for (corruption, a checksum failure): segviz's own
	// "Error: ..." lines, kept off the standard output so that it stays
	// Kafka's. Nil sends them to the dump's writer.
	Errors io.Writer
	// Parallelism is how many goroutines dump a long .log (its CRCs and
	// lines; parallel.go), deep or read through Map: 0 means GOMAXPROCS,
	// 1 dumps it sequentially. The output is the same.
	Parallelism int
	// Map, if set, maps n bytes of the file at off, read-only, for the
	// parallel dump to read instead of copying them with ReadAt; release
	// unmaps them. A fault on the mapping (the file shrank under the
	// dump) is caught, and the sequential dump, with ReadAt, takes over
	// where it happened.
	Map func(off int64, n int) (b []byte, release func(), err error)
}

// Result summarises a dump.
type Result struct {
	Batches  int
	Records  int
	Problems int // corrupt entries, bad CRCs, torn tails
	// NonConsecutive lists, with Deep, each record whose offset is not
	// its predecessor's plus one (the first record's predecessor is -1),
	// as (previous offset, offset): what Kafka's tool reports as
	// "Non-consecutive offsets".
	NonConsecutive []OffsetPair
}

// OffsetPair is a pair of numbers Kafka's tool reports together on
// standard error: an offset and the one that follows it, an index entry's
// offset and the batch's, or an index entry's timestamp and the log's.
type OffsetPair struct{ First, Second int64 }

// BatchJSON is the JSON line printed per batch (or legacy entry): a
// describe.Batch (NewBatchJSON).
type BatchJSON struct {
	Type                 string `json:"type"` // "batch"
	File                 string `json:"file"`
	Position             int64  `json:"position"`
	BaseOffset           int64  `json:"baseOffset"`
	LastOffset           int64  `json:"lastOffset"`
	Count                int    `json:"count"`
	Magic                int8   `json:"magic"`
	Compression          string `json:"compression"`
	TimestampType        string `json:"timestampType"`
	BaseTimestamp        int64  `json:"baseTimestamp"`
	MaxTimestamp         int64  `json:"maxTimestamp"`
	ProducerID           int64  `json:"producerId"`
	ProducerEpoch        int16  `json:"producerEpoch"`
	BaseSequence         int32  `json:"baseSequence"`
	PartitionLeaderEpoch int32  `json:"partitionLeaderEpoch"`
	IsTransactional      bool   `json:"isTransactional"`
	IsControl            bool   `json:"isControl"`
	CRC                  uint32 `json:"crc"`
	CRCValid             bool   `json:"crcValid"`
	Size                 int    `json:"size"`
}

// NewBatchJSON is the JSON line of the entry b of file, whose checks
// passed if crcValid.
func NewBatchJSON(file string, b *describe.Batch, crcValid bool) BatchJSON {
	return BatchJSON{Type: "batch", File: file, Position: b.Position,
		BaseOffset: b.BaseOffset, LastOffset: b.LastOffset, Count: b.Count, Magic: b.Magic,
		Compression: b.Codec.String(), TimestampType: b.TimestampType.String(),
		BaseTimestamp: b.BaseTimestamp, MaxTimestamp: b.MaxTimestamp,
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch, IsTransactional: b.IsTransactional, IsControl: b.IsControl,
		CRC: b.CRC, CRCValid: crcValid, Size: b.Size}
}

// HeaderJSON is one record header in a record line.
type HeaderJSON struct {
	Key string `json:"key"`
	// Value is the header's value in base64, or nil for a null value;
	// with --print-data only.
	Value *string `json:"value"`
	// PrintData says whether Value is printed: with --print-data, as
	// base64 or null; without, it is left out.
	PrintData bool `json:"-"`
}

// MarshalJSON leaves the value out without --print-data, and prints a
// null value as null with it.
func (h HeaderJSON) MarshalJSON() ([]byte, error) {
	if !h.PrintData {
		return json.Marshal(struct {
			Key string `json:"key"`
		}{h.Key})
	}
	type plain HeaderJSON
	return json.Marshal(plain(h))
}

// RecordJSON is the JSON line printed per record with --deep.
type RecordJSON struct {
	Type      string       `json:"type"` // "record"
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	KeySize   int          `json:"keySize"`
	ValueSize int          `json:"valueSize"`
	Headers   []HeaderJSON `json:"headers"`
	// With --print-data: base64, or null when null. Without, omitted.
	Key   *string `json:"key,omitempty"`
	Value *string `json:"value,omitempty"`
	// Control records carry their type ("COMMIT", "ABORT", ...).
	ControlType string `json:"controlType,omitempty"`
	PrintData   bool   `json:"-"`
}

// ErrorJSON is the JSON line printed for a problem.
type ErrorJSON struct {
	Type     string `json:"type"` // "error"
	File     string `json:"file"`
	Position int64  `json:"position"`
	Error    string `json:"error"`
}

// MarshalJSON writes key and value as explicit nulls under --print-data.
func (r RecordJSON) MarshalJSON() ([]byte, error) {
	type plain RecordJSON
	if !r.PrintData {
		return json.Marshal(plain(r))
	}
	type withData struct {
		plain
		Key   *string `json:"key"`
		Value *string `json:"value"`
	}
	return json.Marshal(withData{plain: plain(r), Key: r.Key, Value: r.Value})
}

// printer holds the output state of one dump.
type printer struct {
	w    *bufio.Writer
	opt  Options
	path string
	res  Result
	line []byte
	last int64 // the offset of the last record printed, -1 before the first
	// first is the first record's offset, in a parallel worker's printer
	// (whose last is noOffset before its chunk's first record).
	first int64
	walk  describe.Walker
	// chunk is the parallel dump's read size (chunkSize; tests shrink it).
	chunk int
	// errLines is a parallel worker's error writer (parallel.go), nil
	// in the printer of the dump itself.
	errLines *errLines
}

// Log dumps the log segment r (size bytes, named path) to w.
func Log(w io.Writer, r io.ReaderAt, size int64, path string, opt Options) (Result, error) {
	return logChunked(w, r, size, path, opt, chunkSize)
}

// logChunked is Log with the parallel dump's chunks of chunk bytes.
func logChunked(w io.Writer, r io.ReaderAt, size int64, path string, opt Options, chunk int) (Result, error) {
	if opt.PrintData {
		opt.Deep = true
	}
	p := &printer{w: bufio.NewWriterSize(w, 64<<10), opt: opt, path: path, last: -1, walk: describe.Walker{MaxDecompressed: opt.MaxDecompressed}, chunk: chunk}
	err := p.log(r, size)
	if ferr := p.w.Flush(); err == nil {
		err = ferr
	}
	return p.res, err
}

func (p *printer) log(r io.ReaderAt, size int64) error {
	if !p.opt.JSON {
		p.header()
	}
	if p.opt.MaxBytes > 0 && p.opt.MaxBytes < size {
		size = p.opt.MaxBytes
	}
	var rs record.ReaderScanner
	start := int64(0)
	if n := p.opt.workers(size, p.chunk); n >= 2 {
		start = p.parallel(r, size, n, p.chunk)
	}
	for {
		rs.Reset(r, size, p.path, start)
		for rs.Next() {
			e := rs.Entry()
			p.entry(e, true)
		}
		err := rs.Err()
		if err == nil {
			break
		}
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return err // an I/O error
		}
		// A complete entry whose checksum fails is shown, as Kafka shows
		// it (isvalid: false), and the dump goes on after it.
		at := rs.ValidEnd()
		if next, ok := p.badCRC(r, size, at, err); ok {
			start = next
			continue
		}
		p.problem(ce.Offset, err.Error())
		return nil
	}
	if kind, at, n := rs.Tail(); kind != record.TailNone {
		if p.opt.JSON {
			if kind != record.TailZeros && p.opt.MaxBytes == 0 {
				p.problem(at, fmt.Sprintf("found %d invalid bytes at the end of %s (a partial entry)", n, p.path))
			}
			return nil
		}
		p.tailText(r, kind, at, n)
	}
	return nil
}

// badCRC prints the entry at pos if err is a checksum failure of a
// complete entry, and returns the position after it.
func (p *printer) badCRC(r io.ReaderAt, size, pos int64, err error) (int64, bool) {
	if !errors.Is(err, format.ErrCRC) {
		return 0, false
	}
	var hdr [record.RecordBatchOverhead]byte
	n, _ := r.ReadAt(hdr[:], pos)
	if n < record.HeaderSizeUpToMagic {
		return 0, false
	}
	length := int64(format.Int32(hdr[record.LengthOffset:]))
	end := pos + record.LogOverhead + length
	if length < record.MinLegacyEntrySize || end > size {
		return 0, false
	}
	raw := make([]byte, end-pos)
	if _, err := r.ReadAt(raw, pos); err != nil {
		return 0, false
	}
	e, ok := describe.PeekEntry(raw, pos)
	if !ok {
		return 0, false
	}
	p.entry(&e, false)
	p.problem(pos+record.CRCOffset, err.Error())
	return end, true
}

func (p *printer) problem(pos int64, msg string) {
	p.res.Problems++
	if p.opt.JSON {
		p.writeJSON(ErrorJSON{Type: "error", File: p.path, Position: pos, Error: msg})
		return
	}
	p.errorf("Error: %s: position %d: %s\n", p.path, pos, msg)
}

func (p *printer) writeJSON(v any) { writeJSON(p.w, v) }

// writeJSON writes v as one JSON line.
func writeJSON(w *bufio.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own types always marshal
	}
	w.Write(b)
	w.WriteByte('\n')
}

// entry prints one entry and, if deep, its records. valid says whether the
// entry passed its checks (in JSON, the records of a bad entry are not
// decoded; in text they are, as Kafka's tool decodes them).
func (p *printer) entry(e *record.Entry, valid bool) {
	p.res.Batches++
	if !p.opt.JSON {
		p.entryText(e, valid)
		return
	}
	b := describe.NewBatch(e)
	// Records are decoded first for legacy wrappers, whose count and first
	// offset are only known inside.
	var recs []RecordJSON
	var recErr error
	switch {
	case !valid:
	case p.opt.Deep:
		recs, recErr = p.records(e)
		if e.Magic != record.MagicV2 {
			b.Count = len(recs)
			if len(recs) > 0 {
				b.BaseOffset = recs[0].Offset
			}
		}
	default:
		recErr = p.walk.Wrapper(&b, e)
	}
	p.res.Records += b.Count
	p.writeJSON(NewBatchJSON(p.path, &b, valid))
	for i := range recs {
		p.writeJSON(recs[i])
	}
	if recErr != nil {
		p.problem(e.Position, format.WithPath(recErr, p.path, e.Position).Error())
	}
}

// records returns the record lines of e.
func (p *printer) records(e *record.Entry) ([]RecordJSON, error) {
	var out []RecordJSON
	for p.walk.Reset(e); p.walk.Next(); {
		out = append(out, NewRecordJSON(p.walk.Record(), p.opt.PrintData))
	}
	return out, p.walk.Err()
}

// NewRecordJSON is the JSON line of the record r; with printData, its
// key, value and header values too (base64, or null). segviz read prints
// these objects too, so that both commands share one definition.
func NewRecordJSON(r *describe.Record, printData bool) RecordJSON {
	rj := RecordJSON{Type: "record", Offset: r.Offset, Timestamp: r.Timestamp, KeySize: r.KeySize, ValueSize: r.ValueSize,
		Headers: make([]HeaderJSON, 0, len(r.Headers)), PrintData: printData}
	for _, h := range r.Headers {
		hj := HeaderJSON{Key: string(h.Key), PrintData: printData}
		if printData {
			hj.Value = b64(h.Value)
		}
		rj.Headers = append(rj.Headers, hj)
	}
	if printData {
		rj.Key, rj.Value = b64(r.Key), b64(r.Value)
	}
	if r.HasControlType {
		rj.ControlType = r.ControlType.String()
	}
	return rj
}

func b64(b []byte) *string {
	if b == nil {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

// baseOffsetFromName parses a segment file name's 20-digit base offset.
func baseOffsetFromName(path string) (int64, bool) {
	name := path
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == '\\' {
			name = path[i+1:]
			break
		}
	}
	if len(name) < 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	return v, err == nil
}
