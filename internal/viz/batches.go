package viz

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/describe"
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
	p, err := s.partitionParam(q, false)
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

// entryTarget resolves the target of q and its entry position
// p["position"].
func (s *Session) entryTarget(q Params) (*logTarget, int64, error) {
	t, err := s.target(q)
	if err != nil {
		return nil, 0, err
	}
	pos, err := q.required64("position")
	if err != nil {
		return nil, 0, err
	}
	return t, pos, nil
}

// entryBytes reads the entry at pos of the target's .log (readEntry).
func (s *Session) entryBytes(t *logTarget, pos int64) ([]byte, error) {
	r, closeFn, err := s.readerAt(t)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return readEntry(r, t.size, pos)
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
	w := newWalker()
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

// entryWalker holds the reusable state of the decoding a call does.
type entryWalker struct{ describe.Walker }

func newWalker() *entryWalker {
	return &entryWalker{describe.Walker{MaxDecompressed: MaxDecompressed}}
}

// count is the number of records of an entry: a v2 batch's header field,
// one for a plain legacy message, and the inner messages of a wrapper.
func (w *entryWalker) count(e *record.Entry) int32 {
	b := describe.NewBatch(e)
	w.Wrapper(&b, e)
	return int32(b.Count)
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
		commit, abort := w.TxnMarkers(e)
		if commit {
			f |= FlagCommit
		}
		if abort {
			f |= FlagAbort
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
	return describe.PeekEntry(raw, pos)
}

// checkedEntry is an entry the page can show, and what its checks found
// wrong with it (nil when nothing).
type checkedEntry struct {
	record.Entry
	damage error
}

// decodeEntry reads the entry at pos and checks it (checkEntry).
func decodeEntry(r io.ReaderAt, size, pos int64) (checkedEntry, error) {
	raw, err := readEntry(r, size, pos)
	if err != nil {
		return checkedEntry{}, err
	}
	return checkEntry(raw, pos)
}

// checkEntry checks the entry raw, read at pos, as the scan does. A
// complete entry that fails its checks is still returned (peeked), with
// the damage, so that the page can show a damaged batch; an entry that
// cannot even be peeked is an error.
func checkEntry(raw []byte, pos int64) (checkedEntry, error) {
	s := record.NewScanner(raw, "", pos)
	if s.Next() {
		return checkedEntry{Entry: *s.Entry()}, nil
	}
	check := s.Err()
	if check == nil {
		check = format.Corruptf("", pos, format.ErrTruncated, "the entry at %d runs past the end of the segment", pos)
	}
	e, ok := describe.PeekEntry(raw, pos)
	if !ok {
		return checkedEntry{}, check
	}
	return checkedEntry{Entry: e, damage: check}, nil
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
	w := newWalker()
	for pos := from; int64(len(out.Batches)) < limit; {
		if t.size-pos < record.HeaderSizeUpToMagic {
			out.Done = true
			break
		}
		ce, err := decodeEntry(r, t.size, pos)
		if err != nil {
			out.Done = true
			out.Error = &ErrorJSON{Position: pos, Detail: err.Error()}
			break
		}
		e := ce.Entry
		bv := w.view(&e, path.Base(t.path), ce.damage)
		out.Batches = append(out.Batches, bv)
		pos += int64(e.Size())
		out.Next = pos
		if ce.damage != nil && !errors.Is(ce.damage, format.ErrCRC) {
			out.Done = true // the next entry cannot be trusted to start here
			break
		}
	}
	return out, nil
}

// view builds the full description of an entry: what `segviz dump --json`
// prints of it, and more. A wrapper's records are counted, and a control
// batch's markers found, only when it passed its checks.
func (w *entryWalker) view(e *record.Entry, file string, check error) BatchView {
	b := describe.NewBatch(e)
	bv := BatchView{Attributes: b.Attributes, LastSequence: b.LastSequence, DeleteHorizonMs: b.DeleteHorizonMs, PayloadSize: b.PayloadSize}
	if check != nil {
		bv.Error = check.Error()
	} else {
		if err := w.Wrapper(&b, e); err != nil {
			bv.Error = err.Error()
		}
		if b.IsControl {
			switch commit, abort := w.TxnMarkers(e); {
			case commit:
				bv.ControlType = record.ControlCommit.String()
			case abort:
				bv.ControlType = record.ControlAbort.String()
			}
		}
	}
	bv.BatchJSON = dumplog.NewBatchJSON(file, &b, check == nil || !errors.Is(check, format.ErrCRC))
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
	t, pos, err := s.entryTarget(q)
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
	raw, err := s.entryBytes(t, pos)
	if err != nil {
		return nil, err
	}
	ce, err := checkEntry(raw, pos)
	if err != nil {
		return nil, err
	}
	e := ce.Entry
	w := newWalker()
	out := &RecordsJSON{Batch: w.view(&e, path.Base(t.path), ce.damage), From: from, Next: from, Records: []RecordView{}}
	i, more := 0, true
	for w.Reset(&e); more && w.Next(); {
		switch {
		case i < from:
			i++
		case len(out.Records) >= int(limit):
			more = false
		default:
			out.Records = append(out.Records, recordView(w.Record()))
			i++
			out.Next = i
		}
	}
	out.Done = more
	if err := w.Err(); err != nil {
		out.Error = err.Error()
		out.Done = true
	}
	return out, nil
}

func recordView(r *describe.Record) RecordView {
	v := RecordView{Type: "record", Offset: r.Offset, Timestamp: r.Timestamp, KeySize: r.KeySize, ValueSize: r.ValueSize,
		Headers: make([]HeaderView, 0, len(r.Headers)), Attributes: r.Attributes, OffsetDelta: r.OffsetDelta, TimestampDelta: r.TimestampDelta, Sequence: r.Sequence}
	v.Key, v.KeyTruncated = b64(r.Key)
	v.Value, v.ValueTruncated = b64(r.Value)
	for _, h := range r.Headers {
		hv := HeaderView{Key: string(h.Key), ValueSize: describe.Size(h.Value)}
		hv.Value, hv.Truncated = b64(h.Value)
		v.Headers = append(v.Headers, hv)
	}
	if r.HasControlType {
		v.ControlType = r.ControlType.String()
		if r.IsMarker {
			ep := r.Marker.CoordinatorEpoch
			v.CoordinatorEpoch = &ep
		}
	}
	return v
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
	p, err := s.partitionParam(q, false)
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
