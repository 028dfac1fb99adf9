package viz

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/dumplog"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/segment"
)

// logTarget is the .log file a call reads: a live segment's, or a deleted
// one's (".log.deleted").
type logTarget struct {
	p      *partition
	base   int64
	path   string
	size   int64
	active bool
}

// target resolves p["dir"], p["base"] and, for a segment waiting as
// .deleted, p["suffix"].
func (s *Session) target(q Params) (*logTarget, error) {
	dir, err := q.str("dir")
	if err != nil {
		return nil, err
	}
	p, err := s.open(dir, false)
	if err != nil {
		return nil, err
	}
	base, err := q.required64("base")
	if err != nil {
		return nil, err
	}
	if suffix := q["suffix"]; suffix != "" {
		if _, ok := tempSuffix(suffix); !ok || suffix[0] != '.' || len(suffix) > 9 {
			return nil, fmt.Errorf("%w: bad suffix %q", ErrBadRequest, suffix)
		}
		name := segment.Path(p.dir, base, segment.LogSuffix+suffix)
		st, err := s.fsys.Stat(name)
		if err != nil {
			return nil, notFound(err)
		}
		return &logTarget{p: p, base: base, path: name, size: st.Size()}, nil
	}
	sg, active, err := p.segment(base)
	if err != nil {
		return nil, err
	}
	return &logTarget{p: p, base: base, path: sg.LogPath(), size: sg.Size(), active: active}, nil
}

// readerAt opens the target's .log.
func (s *Session) readerAt(t *logTarget) (io.ReaderAt, func() error, error) {
	f, err := s.fsys.Open(t.path)
	if err != nil {
		return nil, nil, notFound(err)
	}
	return f, f.Close, nil
}

// Flags of a scanned entry.
const (
	FlagTransactional = 1 << iota
	FlagControl
	FlagLogAppendTime
	FlagCRCInvalid
	FlagDeleteHorizon
	FlagCommit
	FlagAbort
	FlagLegacyWrapper
)

// ScanJSON is a page of a segment's entries, as columns: what the batch
// table lists. Columns keep it small: a 1 GiB segment of 1 KiB batches has
// a million rows.
type ScanJSON struct {
	File string `json:"file"`
	From int64  `json:"from"`
	// Next is where the next page starts; Done says there is none.
	Next int64    `json:"next"`
	Done bool     `json:"done"`
	Size int64    `json:"size"`
	Rows ScanRows `json:"rows"`
	// Records is the sum of the page's counts.
	Records int64 `json:"records"`
	// Tail describes how the segment ends when Done: "none", "partial"
	// (a torn write) or "zeros" (preallocated or crash-extended).
	Tail *TailJSON `json:"tail,omitempty"`
	// Error is the corruption that stopped the scan (entries after it
	// cannot be found without guessing).
	Error *ErrorJSON `json:"error,omitempty"`
}

// ScanRows are the columns of ScanJSON.
type ScanRows struct {
	Position     []int64 `json:"position"`
	BaseOffset   []int64 `json:"baseOffset"`
	LastOffset   []int64 `json:"lastOffset"`
	Count        []int32 `json:"count"`
	MaxTimestamp []int64 `json:"maxTimestamp"`
	Size         []int32 `json:"size"`
	Magic        []int8  `json:"magic"`
	Codec        []int8  `json:"codec"`
	Flags        []int32 `json:"flags"`
}

// TailJSON describes the end of a segment.
type TailJSON struct {
	Kind     string `json:"kind"`
	Position int64  `json:"position"`
	Bytes    int64  `json:"bytes"`
}

// ErrorJSON is a problem at a position.
type ErrorJSON struct {
	Position int64  `json:"position"`
	Detail   string `json:"detail"`
}

// Scan walks the entries of a segment's .log from p["from"] (a position
// where an entry starts; 0 by default), up to p["maxBytes"] of log and
// p["maxRows"] rows, checking each entry's size, magic and CRC without
// decoding records (legacy compressed wrappers are opened to count them,
// and control batches to name their marker).
func (s *Session) Scan(q Params) (*ScanJSON, error) {
	t, err := s.target(q)
	if err != nil {
		return nil, err
	}
	from, err := q.int64("from", 0)
	if err != nil {
		return nil, err
	}
	maxBytes, err := q.int64("maxBytes", MaxScanBytes)
	if err != nil {
		return nil, err
	}
	maxRows, err := q.int64("maxRows", int64(MaxScanRows))
	if err != nil {
		return nil, err
	}
	maxBytes = min(max(maxBytes, 1), MaxScanBytes)
	maxRows = min(max(maxRows, 1), int64(MaxScanRows))
	if from < 0 || from > t.size {
		return nil, fmt.Errorf("%w: from %d is outside the segment (0..%d)", ErrBadRequest, from, t.size)
	}
	r, closeFn, err := s.readerAt(t)
	if err != nil {
		return nil, err
	}
	defer closeFn()

	out := &ScanJSON{File: path.Base(t.path), From: from, Next: from, Size: t.size}
	var rs record.ReaderScanner
	var w entryWalker
	limit := from + maxBytes
	pos := from
	for {
		rs.Reset(r, t.size, t.path, pos)
		for rs.Next() {
			e := rs.Entry()
			out.add(e, w.flags(e), w.count(e))
			out.Next = e.Position + int64(e.Size())
			if out.Next >= limit || int64(len(out.Rows.Position)) >= maxRows {
				return out, nil
			}
		}
		err := rs.Err()
		if err == nil {
			break
		}
		var ce *format.CorruptionError
		if !errors.As(err, &ce) {
			return nil, err // an I/O error
		}
		at := rs.ValidEnd()
		if e, ok := badCRCEntry(r, t.size, at, err); ok {
			out.add(&e, w.flags(&e)|FlagCRCInvalid, w.count(&e)) // counted as segviz dump counts it
			out.Next = at + int64(e.Size())
			pos = out.Next
			if out.Next >= limit || int64(len(out.Rows.Position)) >= maxRows {
				return out, nil
			}
			continue
		}
		out.Done = true
		out.Next = at
		out.Error = &ErrorJSON{Position: ce.Offset, Detail: err.Error()}
		return out, nil
	}
	out.Done = true
	out.Next = rs.ValidEnd()
	kind, at, n := rs.Tail()
	out.Tail = &TailJSON{Kind: tailName(kind), Position: at, Bytes: n}
	if kind == record.TailNone {
		out.Tail.Position = rs.ValidEnd()
	}
	return out, nil
}

func tailName(k record.TailKind) string {
	switch k {
	case record.TailPartial:
		return "partial"
	case record.TailZeros:
		return "zeros"
	}
	return "none"
}

func (out *ScanJSON) add(e *record.Entry, flags int32, count int32) {
	r := &out.Rows
	r.Position = append(r.Position, e.Position)
	r.Magic = append(r.Magic, e.Magic)
	r.Size = append(r.Size, int32(e.Size()))
	r.MaxTimestamp = append(r.MaxTimestamp, e.MaxTimestamp())
	r.Flags = append(r.Flags, flags)
	r.Count = append(r.Count, count)
	out.Records += int64(count)
	if e.Magic == record.MagicV2 {
		r.BaseOffset = append(r.BaseOffset, e.Batch.BaseOffset)
		r.LastOffset = append(r.LastOffset, e.Batch.LastOffset())
		r.Codec = append(r.Codec, int8(e.Batch.Attributes.Codec()))
		return
	}
	r.BaseOffset = append(r.BaseOffset, e.Legacy.Offset)
	r.LastOffset = append(r.LastOffset, e.Legacy.Offset)
	r.Codec = append(r.Codec, int8(e.Legacy.Codec()))
}

// entryWalker holds the reusable state of the light decoding a scan does.
type entryWalker struct {
	it  record.Iterator
	lit record.LegacyIterator
	rec record.Record
}

// count is the number of records of an entry: a v2 batch's header field,
// one for a plain legacy message, and the inner messages of a wrapper.
func (w *entryWalker) count(e *record.Entry) int32 {
	if e.Magic == record.MagicV2 {
		return e.Batch.RecordCount
	}
	if e.Legacy.Codec() == compress.None {
		return 1
	}
	w.lit.MaxDecompressed = MaxDecompressed
	w.lit.Reset(&e.Legacy)
	n := int32(0)
	for w.lit.Next(&w.rec) {
		n++
	}
	return n
}

func (w *entryWalker) flags(e *record.Entry) int32 {
	var f int32
	if e.Magic != record.MagicV2 {
		if e.Legacy.Codec() != compress.None {
			f |= FlagLegacyWrapper
		}
		if e.Legacy.TimestampType() == record.LogAppendTime {
			f |= FlagLogAppendTime
		}
		return f
	}
	a := e.Batch.Attributes
	if a.IsTransactional() {
		f |= FlagTransactional
	}
	if a.IsControl() {
		f |= FlagControl
		w.it.MaxDecompressed = MaxDecompressed
		w.it.Reset(&e.Batch)
		for w.it.Next(&w.rec) {
			if t, err := record.ParseControlKey(w.rec.Key); err == nil {
				switch t {
				case record.ControlCommit:
					f |= FlagCommit
				case record.ControlAbort:
					f |= FlagAbort
				}
			}
		}
	}
	if a.TimestampType() == record.LogAppendTime {
		f |= FlagLogAppendTime
	}
	if a.HasDeleteHorizon() {
		f |= FlagDeleteHorizon
	}
	return f
}

// readEntry reads the whole entry at pos of r (size bytes), whatever its
// state: complete bytes, as far as they go.
func readEntry(r io.ReaderAt, size, pos int64) ([]byte, error) {
	if pos < 0 || pos >= size {
		return nil, fmt.Errorf("%w: position %d is outside the segment (0..%d)", ErrBadRequest, pos, size)
	}
	var hdr [record.LogOverhead]byte
	if n, err := r.ReadAt(hdr[:], pos); n < len(hdr) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("position %d: %w", pos, err)
	}
	length := int64(format.Int32(hdr[record.LengthOffset:]))
	if length < record.MinLegacyEntrySize {
		return nil, format.Corruptf("", pos+record.LengthOffset, format.ErrInvalid, "entry size %d is below the minimum %d: no entry starts at position %d", length, record.MinLegacyEntrySize, pos)
	}
	end := min(pos+record.LogOverhead+length, size)
	if end-pos > int64(MaxDecompressed) {
		return nil, fmt.Errorf("%w: the entry at %d is %d bytes, more than the viewer reads (%d)", ErrBadRequest, pos, end-pos, MaxDecompressed)
	}
	raw := make([]byte, end-pos)
	n, err := r.ReadAt(raw, pos)
	if n < len(raw) && err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return raw[:n], nil
}

// badCRCEntry returns the entry at pos if err is the checksum failure of a
// complete entry, so that it can be listed (as Kafka's dump tool lists it,
// isvalid: false) and the walk go on after it.
func badCRCEntry(r io.ReaderAt, size, pos int64, err error) (record.Entry, bool) {
	if !errors.Is(err, format.ErrCRC) {
		return record.Entry{}, false
	}
	raw, rerr := readEntry(r, size, pos)
	if rerr != nil || len(raw) < record.HeaderSizeUpToMagic || int64(len(raw)) < record.LogOverhead+int64(format.Int32(raw[record.LengthOffset:])) {
		return record.Entry{}, false
	}
	return peekEntry(raw, pos)
}

// peekEntry decodes the header of the entry in raw without checking it.
func peekEntry(raw []byte, pos int64) (record.Entry, bool) {
	if len(raw) < record.HeaderSizeUpToMagic {
		return record.Entry{}, false
	}
	e := record.Entry{Position: pos, Magic: int8(raw[record.MagicOffset])}
	switch e.Magic {
	case record.MagicV2:
		h, ok := record.PeekBatchHeader(raw)
		if !ok {
			return e, false
		}
		e.Batch = record.Batch{BatchHeader: h, Raw: raw}
	case record.MagicV0, record.MagicV1:
		if len(raw) < 18 {
			return e, false
		}
		m := record.LegacyMessage{Raw: raw, Offset: format.Int64(raw), CRC: format.Uint32(raw[12:]), Magic: e.Magic, Attributes: int8(raw[17]), Timestamp: record.NoTimestamp}
		if m.Magic == record.MagicV1 && len(raw) >= 26 {
			m.Timestamp = format.Int64(raw[18:])
		}
		e.Legacy = m
	default:
		return e, false
	}
	return e, true
}

// decodeEntry reads the entry at pos and checks it as the scan does. A
// complete entry that fails its checks is still returned (peeked), with
// the error, so that the page can show a damaged batch.
func decodeEntry(r io.ReaderAt, size, pos int64) (record.Entry, error, error) {
	raw, err := readEntry(r, size, pos)
	if err != nil {
		return record.Entry{}, nil, err
	}
	s := record.NewScanner(raw, "", pos)
	if s.Next() {
		return *s.Entry(), nil, nil
	}
	check := s.Err()
	if check == nil {
		check = format.Corruptf("", pos, format.ErrTruncated, "the entry at %d runs past the end of the segment", pos)
	}
	e, ok := peekEntry(raw, pos)
	if !ok {
		return record.Entry{}, nil, check
	}
	return e, check, nil
}

// BatchView is a batch (or legacy entry) in full: the fields of
// `segviz dump --json`, and a few more.
type BatchView struct {
	dumplog.BatchJSON
	Attributes      int16  `json:"attributes"`
	LastSequence    int32  `json:"lastSequence"`
	DeleteHorizonMs int64  `json:"deleteHorizonMs"`
	ControlType     string `json:"controlType,omitempty"`
	PayloadSize     int    `json:"payloadSize"`
	// Error is what is wrong with the entry (a bad CRC, records that do
	// not decode).
	Error string `json:"error,omitempty"`
}

// BatchesJSON is a page of batches.
type BatchesJSON struct {
	File    string      `json:"file"`
	From    int64       `json:"from"`
	Next    int64       `json:"next"`
	Done    bool        `json:"done"`
	Batches []BatchView `json:"batches"`
	Error   *ErrorJSON  `json:"error,omitempty"`
}

// Batches returns up to p["limit"] batches in full from position p["from"].
func (s *Session) Batches(q Params) (*BatchesJSON, error) {
	t, err := s.target(q)
	if err != nil {
		return nil, err
	}
	from, err := q.int64("from", 0)
	if err != nil {
		return nil, err
	}
	limit, err := q.int64("limit", 50)
	if err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), int64(MaxBatches))
	r, closeFn, err := s.readerAt(t)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	out := &BatchesJSON{File: path.Base(t.path), From: from, Next: from, Batches: []BatchView{}}
	var w entryWalker
	for pos := from; int64(len(out.Batches)) < limit; {
		if t.size-pos < record.HeaderSizeUpToMagic {
			out.Done = true
			break
		}
		e, check, err := decodeEntry(r, t.size, pos)
		if err != nil {
			out.Done = true
			out.Error = &ErrorJSON{Position: pos, Detail: err.Error()}
			break
		}
		bv := w.view(&e, path.Base(t.path), check)
		out.Batches = append(out.Batches, bv)
		pos += int64(e.Size())
		out.Next = pos
		if check != nil && !errors.Is(check, format.ErrCRC) {
			out.Done = true // the next entry cannot be trusted to start here
			break
		}
	}
	return out, nil
}

// view builds the full description of an entry.
func (w *entryWalker) view(e *record.Entry, file string, check error) BatchView {
	bv := BatchView{BatchJSON: dumplog.BatchJSON{Type: "batch", File: file, Position: e.Position, Magic: e.Magic, CRCValid: check == nil || !errors.Is(check, format.ErrCRC), Size: e.Size()}}
	if check != nil {
		bv.Error = check.Error()
	}
	if e.Magic == record.MagicV2 {
		b := &e.Batch
		bv.BaseOffset, bv.LastOffset, bv.Count = b.BaseOffset, b.LastOffset(), int(b.RecordCount)
		bv.Compression = b.Attributes.Codec().String()
		bv.TimestampType = b.Attributes.TimestampType().String()
		bv.BaseTimestamp, bv.MaxTimestamp = b.BaseTimestamp, b.MaxTimestamp
		bv.ProducerID, bv.ProducerEpoch, bv.BaseSequence = b.ProducerID, b.ProducerEpoch, b.BaseSequence
		bv.PartitionLeaderEpoch = b.PartitionLeaderEpoch
		bv.IsTransactional, bv.IsControl = b.Attributes.IsTransactional(), b.Attributes.IsControl()
		bv.CRC = b.CRC
		bv.Attributes = int16(b.Attributes)
		bv.LastSequence = b.LastSequence()
		bv.DeleteHorizonMs = b.DeleteHorizonMs()
		bv.PayloadSize = len(b.Raw) - record.RecordsOffset
		if bv.IsControl && check == nil {
			f := w.flags(e)
			switch {
			case f&FlagCommit != 0:
				bv.ControlType = record.ControlCommit.String()
			case f&FlagAbort != 0:
				bv.ControlType = record.ControlAbort.String()
			}
		}
		return bv
	}
	m := &e.Legacy
	bv.BaseOffset, bv.LastOffset, bv.Count = m.Offset, m.Offset, 1
	bv.Compression = m.Codec().String()
	bv.TimestampType = m.TimestampType().String()
	bv.BaseTimestamp, bv.MaxTimestamp = m.Timestamp, m.Timestamp
	bv.ProducerID, bv.ProducerEpoch, bv.BaseSequence = record.NoProducerID, record.NoProducerEpoch, record.NoSequence
	bv.LastSequence = record.NoSequence
	bv.DeleteHorizonMs = record.NoTimestamp
	bv.PartitionLeaderEpoch = record.NoPartitionLeaderEpoch
	bv.CRC = m.CRC
	bv.Attributes = int16(m.Attributes)
	bv.PayloadSize = len(m.Value)
	if m.Codec() != compress.None && check == nil {
		w.lit.MaxDecompressed = MaxDecompressed
		w.lit.Reset(m)
		n := 0
		for w.lit.Next(&w.rec) {
			if n == 0 {
				bv.BaseOffset = w.rec.Offset
			}
			n++
		}
		bv.Count = n
		if err := w.lit.Err(); err != nil {
			bv.Error = err.Error()
		}
	}
	return bv
}

// RecordView is one record: the fields of `segviz dump --deep --print-data
// --json` (key, value and header values in base64, null when null), and
// the record's own fields.
type RecordView struct {
	Type           string       `json:"type"` // "record"
	Offset         int64        `json:"offset"`
	Timestamp      int64        `json:"timestamp"`
	KeySize        int          `json:"keySize"`
	ValueSize      int          `json:"valueSize"`
	Headers        []HeaderView `json:"headers"`
	Key            *string      `json:"key"`
	Value          *string      `json:"value"`
	KeyTruncated   bool         `json:"keyTruncated,omitempty"`
	ValueTruncated bool         `json:"valueTruncated,omitempty"`
	ControlType    string       `json:"controlType,omitempty"`
	// CoordinatorEpoch is set for a COMMIT or ABORT marker.
	CoordinatorEpoch *int32 `json:"coordinatorEpoch,omitempty"`
	Attributes       int8   `json:"attributes"`
	OffsetDelta      int32  `json:"offsetDelta"`
	TimestampDelta   int64  `json:"timestampDelta"`
	Sequence         int32  `json:"sequence"`
}

// HeaderView is one record header.
type HeaderView struct {
	Key       string  `json:"key"`
	Value     *string `json:"value"`
	ValueSize int     `json:"valueSize"`
	Truncated bool    `json:"truncated,omitempty"`
}

// RecordsJSON is a page of the records of one batch.
type RecordsJSON struct {
	Batch   BatchView    `json:"batch"`
	From    int          `json:"from"`
	Next    int          `json:"next"`
	Done    bool         `json:"done"`
	Records []RecordView `json:"records"`
	Error   string       `json:"error,omitempty"`
}

// Records returns the records of the batch at position p["position"], from
// the p["from"]-th on, at most p["limit"]. A batch whose CRC fails is
// decoded all the same, with the error.
func (s *Session) Records(q Params) (*RecordsJSON, error) {
	t, err := s.target(q)
	if err != nil {
		return nil, err
	}
	pos, err := q.required64("position")
	if err != nil {
		return nil, err
	}
	from64, err := q.int64("from", 0)
	if err != nil {
		return nil, err
	}
	limit, err := q.int64("limit", 100)
	if err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), int64(MaxRecords))
	from := int(max(from64, 0))
	r, closeFn, err := s.readerAt(t)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	e, check, err := decodeEntry(r, t.size, pos)
	if err != nil {
		return nil, err
	}
	var w entryWalker
	out := &RecordsJSON{Batch: w.view(&e, path.Base(t.path), check), From: from, Next: from, Records: []RecordView{}}
	var rec record.Record
	i := 0
	emit := func(control bool, seqBase int32, seqOK bool) bool {
		if i < from {
			i++
			return true
		}
		if len(out.Records) >= int(limit) {
			return false
		}
		out.Records = append(out.Records, recordView(&rec, control, seqBase, seqOK))
		i++
		out.Next = i
		return true
	}
	var iterErr error
	if e.Magic == record.MagicV2 {
		b := &e.Batch
		w.it.MaxDecompressed = MaxDecompressed
		w.it.Reset(b)
		more := true
		for more && w.it.Next(&rec) {
			more = emit(b.Attributes.IsControl(), b.BaseSequence, b.BaseSequence >= 0)
		}
		out.Done = more
		iterErr = w.it.Err()
	} else {
		w.lit.MaxDecompressed = MaxDecompressed
		w.lit.Reset(&e.Legacy)
		more := true
		for more && w.lit.Next(&rec) {
			more = emit(false, 0, false)
		}
		out.Done = more
		iterErr = w.lit.Err()
	}
	if iterErr != nil {
		out.Error = iterErr.Error()
		out.Done = true
	}
	return out, nil
}

func recordView(r *record.Record, control bool, seqBase int32, seqOK bool) RecordView {
	v := RecordView{Type: "record", Offset: r.Offset, Timestamp: r.Timestamp, KeySize: size(r.Key), ValueSize: size(r.Value),
		Headers: []HeaderView{}, Attributes: r.Attributes, OffsetDelta: r.OffsetDelta, TimestampDelta: r.TimestampDelta, Sequence: record.NoSequence}
	v.Key, v.KeyTruncated = b64(r.Key)
	v.Value, v.ValueTruncated = b64(r.Value)
	for _, h := range r.Headers {
		hv := HeaderView{Key: string(h.Key), ValueSize: size(h.Value)}
		hv.Value, hv.Truncated = b64(h.Value)
		v.Headers = append(v.Headers, hv)
	}
	if seqOK {
		v.Sequence = seqBase + r.OffsetDelta // wraps as Kafka's incrementSequence does
	}
	if control {
		if t, err := record.ParseControlKey(r.Key); err == nil {
			v.ControlType = t.String()
			if m, err := record.ParseEndTxnMarker(r.Key, r.Value); err == nil {
				ep := m.CoordinatorEpoch
				v.CoordinatorEpoch = &ep
			}
		}
	}
	return v
}

func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// b64 encodes b (at most MaxValueBytes of it), nil for nil.
func b64(b []byte) (*string, bool) {
	if b == nil {
		return nil, false
	}
	cut := len(b) > MaxValueBytes
	if cut {
		b = b[:MaxValueBytes]
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, cut
}

// BytesJSON is a range of a file's bytes.
type BytesJSON struct {
	File     string `json:"file"`
	Position int64  `json:"position"`
	Length   int    `json:"length"`
	FileSize int64  `json:"fileSize"`
	Data     string `json:"data"` // base64
}

// Bytes returns p["length"] bytes (at most MaxBytes) of the file p["file"]
// of the partition directory p["dir"], from p["position"].
func (s *Session) Bytes(q Params) (*BytesJSON, error) {
	dirP, err := q.str("dir")
	if err != nil {
		return nil, err
	}
	dir, err := cleanDir(dirP)
	if err != nil {
		return nil, err
	}
	nameP, err := q.str("file")
	if err != nil {
		return nil, err
	}
	name, err := cleanFile(nameP)
	if err != nil {
		return nil, err
	}
	pos, err := q.int64("position", 0)
	if err != nil {
		return nil, err
	}
	length, err := q.int64("length", 4096)
	if err != nil {
		return nil, err
	}
	length = min(max(length, 0), int64(MaxBytes))
	f, err := s.fsys.Open(path.Join(dir, name))
	if err != nil {
		return nil, notFound(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%w: %s is a directory", ErrBadRequest, name)
	}
	if pos < 0 || pos > st.Size() {
		return nil, fmt.Errorf("%w: position %d is outside %s (0..%d)", ErrBadRequest, pos, name, st.Size())
	}
	buf := make([]byte, min(length, st.Size()-pos))
	n, err := f.ReadAt(buf, pos)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return &BytesJSON{File: name, Position: pos, Length: n, FileSize: st.Size(), Data: base64.StdEncoding.EncodeToString(buf[:n])}, nil
}

// LocateJSON says where an offset is.
type LocateJSON struct {
	Offset     int64 `json:"offset"`
	BaseOffset int64 `json:"baseOffset"`
	Position   int64 `json:"position"`
	Found      bool  `json:"found"`
}

// Locate finds the segment and the batch holding offset p["offset"] of the
// partition p["dir"], through the offset index.
func (s *Session) Locate(q Params) (*LocateJSON, error) {
	dir, err := q.str("dir")
	if err != nil {
		return nil, err
	}
	p, err := s.open(dir, false)
	if err != nil {
		return nil, err
	}
	off, err := q.required64("offset")
	if err != nil {
		return nil, err
	}
	out := &LocateJSON{Offset: off}
	segs := p.l.Segments()
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].BaseOffset() > off && i > 0 {
			continue
		}
		out.BaseOffset = segs[i].BaseOffset()
		op, found, err := segs[i].TranslateOffset(off)
		if err != nil {
			return nil, err
		}
		out.Position, out.Found = op.Position, found
		break
	}
	return out, nil
}
