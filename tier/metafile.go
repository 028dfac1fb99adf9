package tier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog/checkpoint"
)

// These constants are part of the metadata format and should not be
// changed.
const (
	// metaMagic opens every metadata file.
	metaMagic = "SKTIER1 "
	// metaCRCAt, metaLenAt: where the hex CRC-32C and the decimal body
	// length sit in the header.
	metaCRCAt     = len(metaMagic)
	metaCRCWidth  = 8
	metaLenAt     = metaCRCAt + metaCRCWidth + 1
	metaLenWidth  = 10
	metaHeaderLen = metaLenAt + metaLenWidth + 1 // ends in '\n'
	// MetadataVersion is the version field of the JSON body.
	MetadataVersion = 1
)

// MaxMetadataFileSize bounds a metadata file: larger ones are corrupt
// (ErrTooLarge) and never read whole. A variable so that tests can shrink
// it.
var MaxMetadataFileSize int64 = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type jsonEpoch struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"startOffset"`
}

type jsonMeta struct {
	Version             int         `json:"version"`
	TopicID             string      `json:"topicId"`
	Topic               string      `json:"topic"`
	Partition           int32       `json:"partition"`
	ID                  string      `json:"id"`
	StartOffset         int64       `json:"startOffset"`
	EndOffset           int64       `json:"endOffset"`
	MaxTimestampMs      int64       `json:"maxTimestampMs"`
	BrokerID            int32       `json:"brokerId"`
	EventTimestampMs    int64       `json:"eventTimestampMs"`
	SegmentSizeInBytes  int64       `json:"segmentSizeInBytes"`
	SegmentLeaderEpochs []jsonEpoch `json:"segmentLeaderEpochs"`
	TxnIdxEmpty         bool        `json:"txnIdxEmpty"`
	State               string      `json:"state"`
	Abandoned           bool        `json:"abandoned,omitempty"`
}

// AppendMetadata appends the metadata file bytes of m: the 28-byte header
// and the JSON body (see the package doc).
func AppendMetadata(dst []byte, m SegmentMetadata) []byte {
	j := jsonMeta{
		Version: MetadataVersion, TopicID: m.ID.TopicID.String(), Topic: m.ID.Topic, Partition: m.ID.Partition,
		ID: m.ID.ID.String(), StartOffset: m.StartOffset, EndOffset: m.EndOffset, MaxTimestampMs: m.MaxTimestampMs,
		BrokerID: m.BrokerID, EventTimestampMs: m.EventTimestampMs, SegmentSizeInBytes: m.SegmentSizeInBytes,
		SegmentLeaderEpochs: make([]jsonEpoch, len(m.SegmentLeaderEpochs)), TxnIdxEmpty: m.TxnIdxEmpty,
		State: m.State.String(), Abandoned: m.Abandoned,
	}
	for i, e := range m.SegmentLeaderEpochs {
		j.SegmentLeaderEpochs[i] = jsonEpoch(e)
	}
	body, err := json.Marshal(j)
	if err != nil {
		panic(err) // plain structs of strings and numbers always marshal
	}
	body = append(body, '\n')
	at := len(dst)
	dst = append(dst, metaMagic...)
	dst = append(dst, make([]byte, metaHeaderLen-len(metaMagic))...)
	dst = append(dst, body...)
	h := dst[at : at+metaHeaderLen]
	crc := crc32.Checksum(body, castagnoli)
	copy(h[metaCRCAt:], fmt.Sprintf("%08x", crc))
	h[metaLenAt-1] = ' '
	copy(h[metaLenAt:], fmt.Sprintf("%010d", len(body)))
	h[metaHeaderLen-1] = '\n'
	return dst
}

// ParseMetadata decodes a metadata file. Damage is a
// *format.CorruptionError naming path and the byte, wrapping
// format.ErrTruncated, ErrCRC, ErrTooLarge or ErrInvalid.
func ParseMetadata(b []byte, path string) (SegmentMetadata, error) {
	bad := func(off int, err error, msg string, args ...any) (SegmentMetadata, error) {
		if msg != "" {
			err = fmt.Errorf("%w: "+msg, append([]any{err}, args...)...)
		}
		return SegmentMetadata{}, &format.CorruptionError{Path: path, Offset: int64(off), Err: err}
	}
	if int64(len(b)) > MaxMetadataFileSize {
		return bad(0, format.ErrTooLarge, "metadata file of %d bytes, limit %d", len(b), MaxMetadataFileSize)
	}
	if len(b) < metaHeaderLen {
		return bad(len(b), format.ErrTruncated, "header of %d bytes, want %d", len(b), metaHeaderLen)
	}
	if string(b[:len(metaMagic)]) != metaMagic {
		return bad(0, format.ErrInvalid, "bad magic %q", b[:len(metaMagic)])
	}
	crc, err := strconv.ParseUint(string(b[metaCRCAt:metaCRCAt+metaCRCWidth]), 16, 32)
	if err != nil || b[metaLenAt-1] != ' ' {
		return bad(metaCRCAt, format.ErrInvalid, "bad checksum field")
	}
	n, err := strconv.ParseUint(string(b[metaLenAt:metaLenAt+metaLenWidth]), 10, 63)
	if err != nil || b[metaHeaderLen-1] != '\n' {
		return bad(metaLenAt, format.ErrInvalid, "bad length field")
	}
	rest := b[metaHeaderLen:]
	if n > uint64(len(rest)) {
		return bad(len(b), format.ErrTruncated, "body of %d bytes, %d present", n, len(rest))
	}
	if n < uint64(len(rest)) {
		return bad(metaHeaderLen+int(n), format.ErrInvalid, "%d bytes after the body", uint64(len(rest))-n)
	}
	if got := crc32.Checksum(rest, castagnoli); got != uint32(crc) {
		return bad(metaHeaderLen, format.ErrCRC, "body crc32c %08x, header says %08x", got, crc)
	}
	var j jsonMeta
	dec := json.NewDecoder(bytes.NewReader(rest))
	if err := dec.Decode(&j); err != nil {
		off := metaHeaderLen
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if errors.As(err, &se) {
			off += int(se.Offset)
		} else if errors.As(err, &te) {
			off += int(te.Offset)
		}
		return bad(off, format.ErrInvalid, "%v", err)
	}
	at := metaHeaderLen
	if j.Version != MetadataVersion {
		return bad(at, format.ErrInvalid, "version %d, want %d", j.Version, MetadataVersion)
	}
	var m SegmentMetadata
	if m.ID.TopicID, err = checkpoint.ParseUUID(j.TopicID); err != nil {
		return bad(at, format.ErrInvalid, "topicId: %v", err)
	}
	if m.ID.ID, err = checkpoint.ParseUUID(j.ID); err != nil {
		return bad(at, format.ErrInvalid, "id: %v", err)
	}
	st, ok := ParseSegmentState(j.State)
	if !ok {
		return bad(at, format.ErrInvalid, "state %q", j.State)
	}
	if j.Topic == "" || j.Partition < 0 || j.StartOffset < 0 || j.EndOffset < j.StartOffset || j.SegmentSizeInBytes < 0 {
		return bad(at, format.ErrInvalid, "topic %q partition %d offsets [%d, %d] size %d", j.Topic, j.Partition, j.StartOffset, j.EndOffset, j.SegmentSizeInBytes)
	}
	m.ID.Topic, m.ID.Partition = j.Topic, j.Partition
	m.StartOffset, m.EndOffset, m.MaxTimestampMs = j.StartOffset, j.EndOffset, j.MaxTimestampMs
	m.BrokerID, m.EventTimestampMs, m.SegmentSizeInBytes = j.BrokerID, j.EventTimestampMs, j.SegmentSizeInBytes
	m.TxnIdxEmpty, m.State, m.Abandoned = j.TxnIdxEmpty, st, j.Abandoned
	for _, e := range j.SegmentLeaderEpochs {
		m.SegmentLeaderEpochs = append(m.SegmentLeaderEpochs, checkpoint.EpochEntry(e))
	}
	return m, nil
}
