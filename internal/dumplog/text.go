package dumplog

import (
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/internal/describe"
	"github.com/segkit/segkit/record"
)

// The text of a .log dump is Kafka 4.3's DumpLogSegments, line for line:
// dumpLog, printBatchLevel, dumpBatchRecords, printRecordMetadata,
// printRecordContents, printControlRecord and printTrailingBytes.

// kafkaHeaderSizeUpToMagic is FileLogInputStream's HEADER_SIZE_UP_TO_MAGIC:
// with no more than this many bytes left, Kafka's shallow iteration ends
// and counts them as invalid trailing bytes.
const kafkaHeaderSizeUpToMagic = record.HeaderSizeUpToMagic

// kafkaRecordOverheadV0 is LegacyRecord.RECORD_OVERHEAD_V0, the smallest
// size field FileLogInputStream accepts.
const kafkaRecordOverheadV0 = record.RecordOverheadV0

// bootstrapSnapshot is the name of KRaft's bootstrap snapshot
// (BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME).
const bootstrapSnapshot = "bootstrap.checkpoint"

// header prints the lines Kafka prints before a log's batches.
func (p *printer) header() {
	fmt.Fprintf(p.w, "Dumping %s\n", p.path)
	name := filepath.Base(p.path)
	switch {
	case strings.HasSuffix(name, ".log"):
		if base, err := strconv.ParseInt(strings.SplitN(name, ".", 2)[0], 10, 64); err == nil {
			fmt.Fprintf(p.w, "Log starting offset: %d\n", base)
		} else {
			p.errorf("Error: %s: the name does not start with a base offset: %v\n", p.path, err)
		}
	case strings.HasSuffix(name, ".checkpoint"):
		if name == bootstrapSnapshot {
			fmt.Fprintln(p.w, "KRaft bootstrap snapshot")
		} else if off, epoch, ok := parseSnapshotName(name); ok {
			fmt.Fprintf(p.w, "Snapshot end offset: %d, epoch: %d\n", off, epoch)
		} else {
			p.errorf("Error: %s: not a KRaft snapshot name (OFFSET-EPOCH.checkpoint)\n", p.path)
		}
	}
}

// parseSnapshotName parses a KRaft snapshot's name, the end offset in 20
// digits, "-", the epoch in 10 digits and ".checkpoint" (Snapshots.parse).
func parseSnapshotName(name string) (offset int64, epoch int32, ok bool) {
	const offsetWidth, epochWidth = 20, 10
	if len(name) < offsetWidth+1+epochWidth || name[offsetWidth] != '-' {
		return 0, 0, false
	}
	off, err1 := strconv.ParseInt(name[:offsetWidth], 10, 64)
	ep, err2 := strconv.ParseInt(name[offsetWidth+1:offsetWidth+1+epochWidth], 10, 32)
	return off, int32(ep), err1 == nil && err2 == nil
}

// errorf prints one of segviz's own problem lines.
func (p *printer) errorf(f string, args ...any) {
	w := p.opt.Errors
	if w == nil {
		w = p.w
	}
	fmt.Fprintf(w, f, args...)
}

// tailText reports the n bytes at position at that end the log without
// forming an entry, as Kafka's shallow iteration sees them: too short for
// a header, or an entry that does not fit, are invalid trailing bytes; a
// size field below the minimum stops Kafka's tool with an exception,
// whose message segviz prints as an error. A partial entry is a problem;
// zeros (a preallocated or crash-extended file) are not.
func (p *printer) tailText(r io.ReaderAt, kind record.TailKind, at, n int64) {
	if kind != record.TailZeros {
		p.res.Problems++
	}
	if n > kafkaHeaderSizeUpToMagic {
		var hdr [record.LogOverhead]byte
		if _, err := r.ReadAt(hdr[:], at); err == nil {
			if size := format.Int32(hdr[record.LengthOffset:]); size < kafkaRecordOverheadV0 {
				p.errorf("Found record size %d smaller than minimum record overhead (%d) in file %s.\n", size, kafkaRecordOverheadV0, p.path)
				return
			}
		}
	}
	if p.opt.MaxBytes > 0 {
		return
	}
	fmt.Fprintf(p.w, "Found %d invalid bytes at the end of %s\n", n, filepath.Base(p.path))
}

// entryText prints a batch line and, with Deep, its record lines.
func (p *printer) entryText(e *record.Entry, valid bool) {
	b := describe.NewBatch(e)
	l := p.line[:0]
	// strconv rather than fmt: these lines are most of a dump's work
	// after the CRCs (fmt.Appendf was a fifth of a plain dump's CPU).
	if b.Magic == record.MagicV2 {
		l = appendField(l, "baseOffset: ", b.BaseOffset)
		l = appendField(l, " lastOffset: ", b.LastOffset)
		l = appendField(l, " count: ", int64(b.Count))
		l = appendField(l, " baseSequence: ", int64(b.BaseSequence))
		l = appendField(l, " lastSequence: ", int64(b.LastSequence))
		l = appendField(l, " producerId: ", b.ProducerID)
		l = appendField(l, " producerEpoch: ", int64(b.ProducerEpoch))
		l = appendField(l, " partitionLeaderEpoch: ", int64(b.PartitionLeaderEpoch))
		l = strconv.AppendBool(append(l, " isTransactional: "...), b.IsTransactional)
		l = strconv.AppendBool(append(l, " isControl: "...), b.IsControl)
		l = append(append(l, " deleteHorizonMs: "...), optionalLong(b.DeleteHorizonMs)...)
	} else {
		l = appendField(l, "offset: ", b.LastOffset)
	}
	p.res.Records += b.Count
	tsType := b.TimestampType.String()
	l = appendField(l, " position: ", b.Position)
	l = appendField(append(append(l, ' '), tsType...), ": ", b.MaxTimestamp)
	l = appendField(l, " size: ", int64(b.Size))
	l = appendField(l, " magic: ", int64(b.Magic))
	l = append(append(l, " compresscodec: "...), b.Codec.String()...)
	l = strconv.AppendUint(append(l, " crc: "...), uint64(b.CRC), 10)
	l = append(strconv.AppendBool(append(l, " isvalid: "...), valid), '\n')
	p.w.Write(l)
	p.line = l
	if !p.opt.Deep {
		return
	}
	// A legacy record line shows its message's checksum: the entry's own,
	// or a wrapper's inner message's (the i-th, or the last one decoded).
	var msgs []describe.Message
	if b.Magic != record.MagicV2 {
		if msgs = p.walk.Messages(&e.Legacy); len(msgs) == 0 {
			msgs = noMessage[:] // the iterator may still yield
		}
	}
	p.walk.Reset(e)
	for i := 0; p.walk.Next(); i++ {
		var m *describe.Message
		if msgs != nil {
			m = &msgs[min(i, len(msgs)-1)]
		}
		p.recordText(p.walk.Record(), tsType, m)
	}
	if err := p.walk.Err(); err != nil {
		p.problem(e.Position, format.WithPath(err, p.path, e.Position).Error())
	}
}

// noMessage stands for the message of a legacy record whose wrapper's
// inner messages cannot be listed.
var noMessage [1]describe.Message

// recordText prints one record line. m is the legacy message the record
// is, nil for a v2 record.
func (p *printer) recordText(r *describe.Record, tsType string, m *describe.Message) {
	switch {
	case p.last == noOffset: // a parallel worker's first record: its chunk's merge checks it
		p.first = r.Offset
	case r.Offset != p.last+1:
		p.res.NonConsecutive = append(p.res.NonConsecutive, OffsetPair{p.last, r.Offset})
	}
	p.last = r.Offset
	l := p.line[:0]
	if !p.opt.SkipRecordMetadata {
		l = appendField(l, "| offset: ", r.Offset)
		l = appendField(append(append(l, ' '), tsType...), ": ", r.Timestamp)
		l = appendField(l, " keySize: ", int64(r.KeySize))
		l = appendField(l, " valueSize: ", int64(r.ValueSize))
		if m != nil {
			l = strconv.AppendBool(append(l, " isValid: "...), m.CRCValid)
			l = appendField(l, " crc: ", int64(m.CRC))
		} else {
			l = append(appendField(l, " sequence: ", int64(r.Sequence)), " headerKeys: ["...)
			for i, hd := range r.Headers {
				if i > 0 {
					l = append(l, ',')
				}
				l = appendJavaString(l, hd.Key)
			}
			l = append(l, ']')
		}
		if r.Control {
			l = p.appendControl(l, &r.Record)
		}
	}
	if p.opt.PrintData && !r.Control {
		prefix := " "
		if p.opt.SkipRecordMetadata {
			prefix = "| "
		}
		if r.Key != nil {
			l = append(l, prefix+"key: "...)
			l = appendJavaString(l, r.Key)
			prefix = " "
		}
		if r.Value != nil {
			l = append(l, prefix+"payload: "...)
			l = appendJavaString(l, r.Value)
		}
	}
	l = append(l, '\n')
	p.w.Write(l)
	p.line = l
}

// appendField appends label and v in decimal.
func appendField(l []byte, label string, v int64) []byte {
	return strconv.AppendInt(append(l, label...), v, 10)
}

func optionalLong(v int64) string {
	if v < 0 {
		return "OptionalLong.empty"
	}
	return "OptionalLong[" + strconv.FormatInt(v, 10) + "]"
}

// appendControl appends what printControlRecord prints of a control
// record: the transaction marker, the KRaft record as Kafka's generated
// JSON converter writes it, or the unknown type.
func (p *printer) appendControl(l []byte, rec *record.Record) []byte {
	if len(rec.Key) < 4 || format.Int16(rec.Key) < 0 {
		p.errorf("Error: %s: offset %d: invalid control record key %x\n", p.path, rec.Offset, rec.Key)
		return l
	}
	t := record.ControlType(format.Int16(rec.Key[2:]))
	switch t {
	case record.ControlAbort, record.ControlCommit:
		if len(rec.Value) < 6 || format.Int16(rec.Value) < 0 {
			p.errorf("Error: %s: offset %d: invalid end transaction marker %x\n", p.path, rec.Offset, rec.Value)
			return l
		}
		return fmt.Appendf(l, " endTxnMarker: %s coordinatorEpoch: %d", t, format.Int32(rec.Value[2:]))
	case record.ControlLeaderChange, record.ControlSnapshotHeader, record.ControlSnapshotFooter,
		record.ControlKRaftVersion, record.ControlKRaftVoters:
		js, err := kraftJSON(t, rec.Value)
		if err != nil {
			p.errorf("Error: %s: offset %d: %s record: %v\n", p.path, rec.Offset, t, err)
			return l
		}
		return append(append(l, kraftLabels[t]...), js...)
	}
	return fmt.Appendf(l, " controlType: %s", t) // UNKNOWN(id)
}

// kraftLabels are the words printControlRecord puts before each KRaft
// record's JSON.
var kraftLabels = map[record.ControlType]string{
	record.ControlLeaderChange:   " LeaderChange: ",
	record.ControlSnapshotHeader: " SnapshotHeader ",
	record.ControlSnapshotFooter: " SnapshotFooter ",
	record.ControlKRaftVersion:   " KRaftVersion ",
	record.ControlKRaftVoters:    " KRaftVoters ",
}

// appendJavaString appends b as Java's new String(b, UTF_8) decodes it
// (JDK 17's String.decodeUTF8_UTF16), re-encoded as UTF-8, which is what
// Kafka's StringDecoder prints: every malformed sequence becomes one
// U+FFFD, the JDK choosing where each ends.
func appendJavaString(dst, b []byte) []byte {
	for len(b) > 0 {
		// A run of ASCII, the common case, goes in one append.
		i := 0
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
		}
		for i < len(b) && b[i] < 0x80 {
			i++
		}
		if i > 0 {
			dst = append(dst, b[:i]...)
			if b = b[i:]; len(b) == 0 {
				break
			}
		}
		n, ok := javaUTF8Seq(b)
		if ok {
			dst = append(dst, b[:n]...)
		} else {
			dst = append(dst, "\uFFFD"...)
		}
		b = b[n:]
	}
	return dst
}

// javaUTF8Seq returns the length of the sequence b starts with as the JDK
// delimits it, and whether it is a character (else it decodes to one
// U+FFFD). A sequence cut short by the end of b takes the rest of b.
func javaUTF8Seq(b []byte) (n int, ok bool) {
	c := b[0]
	cont := func(i int) bool { return i < len(b) && b[i]&0xc0 == 0x80 }
	switch {
	case c < 0x80:
		return 1, true
	case c>>5 == 0x6 && c&0x1e != 0: // 2 bytes
		if !cont(1) {
			return 1, false
		}
		return 2, true
	case c>>4 == 0xe: // 3 bytes; no overlong forms, and a surrogate is one error
		ok2 := cont(1) && !(c == 0xe0 && b[1] < 0xa0)
		switch {
		case len(b) < 3:
			if len(b) == 2 && !ok2 {
				return 1, false
			}
			return len(b), false
		case !ok2:
			return 1, false
		case !cont(2):
			return 2, false
		}
		return 3, !(c == 0xed && b[1] >= 0xa0)
	case c>>3 == 0x1e: // 4 bytes, up to U+10FFFF, no overlong forms
		ok2 := cont(1) && c <= 0xf4 && !(c == 0xf0 && b[1] < 0x90) && !(c == 0xf4 && b[1] >= 0x90)
		switch {
		case len(b) < 4:
			if c > 0xf4 || len(b) > 1 && !ok2 {
				return 1, false
			}
			if len(b) > 2 && !cont(2) {
				return 2, false
			}
			return len(b), false
		case !ok2:
			return 1, false
		case !cont(2):
			return 2, false
		case !cont(3):
			return 3, false
		}
		return 4, true
	}
	return 1, false
}
