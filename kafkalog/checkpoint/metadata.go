package checkpoint

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// UUID is Kafka's Uuid: 128 bits, printed as URL-safe base64 without
// padding (22 characters), as Uuid.toString does.
type UUID [16]byte

// TopicID is the UUID that names a topic.
type TopicID = UUID

// Reserved UUIDs (Uuid.java).
var (
	// ZeroUUID is Uuid.ZERO_UUID, "no id"; a partition.metadata file
	// holding it is invalid.
	ZeroUUID = UUID{}
	// MetadataTopicID is Uuid.METADATA_TOPIC_ID (Uuid.ONE_UUID), the topic
	// ID of KRaft's __cluster_metadata: "AAAAAAAAAAAAAAAAAAAAAQ".
	MetadataTopicID = UUID{15: 1}
)

// ErrBadUUID is returned by ParseUUID.
var ErrBadUUID = errors.New("checkpoint: invalid base64 UUID")

// String returns the 22-character URL-safe base64 form.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports whether u is ZeroUUID.
func (u UUID) IsZero() bool { return u == ZeroUUID }

// ParseUUID parses the base64 form of a UUID as Uuid.fromString does: at
// most 24 characters of URL-safe base64, with or without "==" padding,
// decoding to exactly 16 bytes. Like Java's decoder, it ignores the unused
// low bits of the last character, so a few non-canonical strings parse to
// a UUID whose String differs.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) > 24 {
		return u, fmt.Errorf("%w: input string with prefix `%s` is too long to be decoded as a base64 UUID", ErrBadUUID, s[:24])
	}
	enc := base64.RawURLEncoding
	if strings.HasSuffix(s, "=") {
		enc = base64.URLEncoding
	}
	if strings.ContainsAny(s, "\r\n") { // Go's decoder skips these; Java's does not
		return u, fmt.Errorf("%w: %q", ErrBadUUID, s)
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return u, fmt.Errorf("%w: %q: %v", ErrBadUUID, s, err)
	}
	if len(b) != len(u) {
		return u, fmt.Errorf("%w: input string `%s` decoded as %d bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID", ErrBadUUID, s, len(b))
	}
	copy(u[:], b)
	return u, nil
}

// PartitionMetadataFile is the name of the file that records a
// partition's topic ID.
//
// This constant is part of the on-disk format and should not be changed.
const PartitionMetadataFile = "partition.metadata"

// PartitionMetadata is the content of partition.metadata.
type PartitionMetadata struct {
	// Version is 0 as written today; any version ≥ 0 is accepted on read,
	// so that an older broker can read a newer file after a downgrade.
	Version int32
	TopicID TopicID
}

// ParsePartitionMetadata decodes partition.metadata as
// PartitionMetadataReadBuffer does: line 1 "version: <int>", line 2
// "topic_id: <base64 UUID>", each split at the first ':' followed by
// whitespace; later lines are ignored. Errors are *format.CorruptionError
// wrapping format.ErrInvalid at the offset of the bad line: "Malformed
// line in partition metadata file: ...", "Unrecognized version of
// partition metadata file: -1", "Invalid topic ID in partition metadata
// file" (the zero UUID).
func ParsePartitionMetadata(b []byte) (PartitionMetadata, error) {
	var m PartitionMetadata
	r := lineReader{b: b}
	line, at, present := r.next()
	value, ok := metadataField(line, present, "version")
	if !ok {
		return m, metadataMalformed(at, line, present)
	}
	v, ok := parseInt32(value)
	if !ok {
		return m, metadataMalformed(at, line, true)
	}
	if v < 0 {
		return m, format.Corruptf("", at, format.ErrInvalid, "Unrecognized version of partition metadata file: %d", v)
	}
	m.Version = v
	line, at, present = r.next()
	if !present {
		at = int64(len(b))
	}
	value, ok = metadataField(line, present, "topic_id")
	if !ok {
		return m, metadataMalformed(at, line, present)
	}
	id, err := ParseUUID(value)
	if err != nil {
		return m, format.Corruptf("", at, format.ErrInvalid, "Malformed line in partition metadata file: %q: %v", line, err)
	}
	if id.IsZero() {
		return m, format.Corruptf("", at, format.ErrInvalid, "Invalid topic ID in partition metadata file")
	}
	m.TopicID = id
	return m, nil
}

// metadataField splits "key: value" at the first ':' followed by one or
// more whitespace characters (Pattern ":\s+", split limit 2) and checks
// the key.
func metadataField(line string, ok bool, key string) (string, bool) {
	if !ok {
		return "", false
	}
	for i := 0; i+1 < len(line); i++ {
		if line[i] != ':' || !isJavaSpace(line[i+1]) {
			continue
		}
		j := i + 1
		for j < len(line) && isJavaSpace(line[j]) {
			j++
		}
		return line[j:], line[:i] == key
	}
	return "", false
}

func metadataMalformed(at int64, line string, present bool) error {
	if !present {
		return format.Corruptf("", at, format.ErrInvalid, "Malformed line in partition metadata file: null")
	}
	return format.Corruptf("", at, format.ErrInvalid, "Malformed line in partition metadata file: %q", line)
}

// AppendPartitionMetadata appends the file content Kafka writes:
// "version: 0\ntopic_id: <id>", with no final newline
// (PartitionMetadata.encode).
func AppendPartitionMetadata(dst []byte, m PartitionMetadata) []byte {
	dst = append(dst, "version: "...)
	dst = strconv.AppendInt(dst, int64(m.Version), 10)
	dst = append(dst, "\ntopic_id: "...)
	return append(dst, m.TopicID.String()...)
}

// ReadPartitionMetadata reads dir/partition.metadata. A missing file gives
// an error matching fs.ErrNotExist (a log written before Kafka 2.8 has
// none); bad content a *format.CorruptionError naming the file.
func ReadPartitionMetadata(fsys vfs.FS, dir string) (PartitionMetadata, error) {
	p := path.Join(dir, PartitionMetadataFile)
	b, err := vfs.ReadFile(fsys, p)
	if err != nil {
		return PartitionMetadata{}, err
	}
	m, err := ParsePartitionMetadata(b)
	return m, format.WithPath(err, p, 0)
}

// WritePartitionMetadata writes dir/partition.metadata with version 0 and
// id, atomically and durably, as PartitionMetadataFile.maybeFlush does
// (a .tmp file, fsync, rename, directory fsync). The zero UUID, which no
// reader accepts, is an error wrapping ErrUnencodable.
func WritePartitionMetadata(fsys vfs.FS, dir string, id TopicID) error {
	if id.IsZero() {
		return fmt.Errorf("%w: the zero topic ID", ErrUnencodable)
	}
	p := path.Join(dir, PartitionMetadataFile)
	return vfs.WriteFileAtomic(fsys, p, AppendPartitionMetadata(nil, PartitionMetadata{Version: 0, TopicID: id}), filePerm)
}
