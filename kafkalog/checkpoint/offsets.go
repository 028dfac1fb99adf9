package checkpoint

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/segkit/segkit/vfs"
)

// Names of the offset checkpoint files of a log directory.
//
// These constants are part of the on-disk format and should not be changed.
const (
	// RecoveryPointFile holds each partition's recovery point: the offset
	// up to which its log is known to be flushed.
	RecoveryPointFile = "recovery-point-offset-checkpoint"
	// LogStartOffsetFile holds each partition's log start offset.
	LogStartOffsetFile = "log-start-offset-checkpoint"
	// ReplicationOffsetFile holds each partition's high watermark.
	ReplicationOffsetFile = "replication-offset-checkpoint"
	// CleanerOffsetFile holds each compacted partition's cleaner
	// position.
	CleanerOffsetFile = "cleaner-offset-checkpoint"

	// OffsetsVersion is the version of the offset checkpoint format
	// (OffsetCheckpointFile.CURRENT_VERSION).
	OffsetsVersion = 0
)

// OffsetEntry is one line of an offset checkpoint: "topic partition
// offset".
type OffsetEntry struct {
	TopicPartition
	Offset int64
}

// ParseOffsets decodes an offset checkpoint, keeping the entries in file
// order (and any duplicates). See ParseText for the errors.
func ParseOffsets(b []byte) ([]OffsetEntry, error) {
	return ParseText(b, OffsetsVersion, parseOffsetLine)
}

func parseOffsetLine(f []string) (OffsetEntry, bool) {
	if len(f) != 3 || f[0] == "" {
		// Kafka would accept an empty topic (a line with leading
		// whitespace); no topic is named "", so it is malformed here.
		return OffsetEntry{}, false
	}
	p, ok1 := parseInt32(f[1])
	o, ok2 := parseInt64(f[2])
	return OffsetEntry{TopicPartition{f[0], p}, o}, ok1 && ok2
}

// AppendOffsets appends the checkpoint text of entries, in the given
// order, exactly as Kafka writes it.
func AppendOffsets(dst []byte, entries []OffsetEntry) []byte {
	return AppendText(dst, OffsetsVersion, entries, func(dst []byte, e OffsetEntry) []byte {
		dst = append(dst, e.Topic...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(e.Partition), 10)
		dst = append(dst, ' ')
		return strconv.AppendInt(dst, e.Offset, 10)
	})
}

// ReadOffsetEntries reads the named offset checkpoint file in file order.
// A missing file gives an error matching fs.ErrNotExist; bad content a
// *format.CorruptionError naming the file.
func ReadOffsetEntries(fsys vfs.FS, path string) ([]OffsetEntry, error) {
	entries, _, err := readText(fsys, path, OffsetsVersion, parseOffsetLine)
	return entries, err
}

// ReadOffsets reads the named offset checkpoint file into a map, as
// OffsetCheckpointFile.read does (a later duplicate wins). Errors are
// ReadOffsetEntries's.
func ReadOffsets(fsys vfs.FS, path string) (map[TopicPartition]int64, error) {
	entries, err := ReadOffsetEntries(fsys, path)
	if err != nil {
		return nil, err
	}
	m := make(map[TopicPartition]int64, len(entries))
	for _, e := range entries {
		m[e.TopicPartition] = e.Offset
	}
	return m, nil
}

// WriteOffsetEntries replaces the named checkpoint file with entries, in
// the given order, durably and atomically (vfs.WriteFileAtomic: a .tmp
// file, fsync, rename, directory fsync), as CheckpointFile.write does.
// After a crash the file holds its old or its new content, never a mix.
func WriteOffsetEntries(fsys vfs.FS, path string, entries []OffsetEntry) error {
	for _, e := range entries {
		if !encodableToken(e.Topic) {
			return fmt.Errorf("%w: topic %q in %s", ErrUnencodable, e.Topic, path)
		}
	}
	return vfs.WriteFileAtomic(fsys, path, AppendOffsets(nil, entries), filePerm)
}

// WriteOffsets is WriteOffsetEntries for a map, written sorted by topic
// and partition. Kafka writes its map's iteration order; any order reads
// back the same, and sorting makes the file reproducible.
func WriteOffsets(fsys vfs.FS, path string, offsets map[TopicPartition]int64) error {
	return WriteOffsetEntries(fsys, path, SortedOffsets(offsets))
}

// SortedOffsets returns the entries of offsets sorted by topic, then
// partition.
func SortedOffsets(offsets map[TopicPartition]int64) []OffsetEntry {
	entries := make([]OffsetEntry, 0, len(offsets))
	for tp, o := range offsets {
		entries = append(entries, OffsetEntry{tp, o})
	}
	slices.SortFunc(entries, func(a, b OffsetEntry) int { return a.TopicPartition.Compare(b.TopicPartition) })
	return entries
}

// Compare orders topic partitions by topic, then partition.
func (tp TopicPartition) Compare(o TopicPartition) int {
	if c := cmp.Compare(tp.Topic, o.Topic); c != 0 {
		return c
	}
	return cmp.Compare(tp.Partition, o.Partition)
}
