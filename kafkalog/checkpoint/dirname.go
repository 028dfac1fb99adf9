package checkpoint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns "topic-partition", as Kafka prints a TopicPartition.
func (tp TopicPartition) String() string { return tp.DirName() }

// DirName returns the name of the partition's directory: "topic-partition"
// (LocalLog.logDirName).
func (tp TopicPartition) DirName() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// DirKind says what a partition directory is for.
type DirKind uint8

// The kinds of partition directory (LocalLog.scala).
const (
	// DirLive is a partition's log: "topic-partition".
	DirLive DirKind = iota
	// DirDelete is a log renamed for asynchronous deletion:
	// "topic-partition.<uniqueId>-delete".
	DirDelete
	// DirFuture is the copy of a log being moved to another log
	// directory: "topic-partition.<uniqueId>-future".
	DirFuture
	// DirStray is a log the cluster no longer assigns to this broker:
	// "topic-partition.<uniqueId>-stray".
	DirStray
)

// Suffixes of renamed partition directories.
//
// These constants are part of the on-disk format and should not be changed.
const (
	DeleteDirSuffix = "-delete"
	FutureDirSuffix = "-future"
	StrayDirSuffix  = "-stray"

	// maxDirName is the longest file name Kafka makes for a renamed
	// directory (the topic is cut short to fit).
	maxDirName = 255
)

var dirSuffixes = [...]string{DirDelete: DeleteDirSuffix, DirFuture: FutureDirSuffix, DirStray: StrayDirSuffix}

// String returns "live", "delete", "future" or "stray".
func (k DirKind) String() string {
	if k == DirLive {
		return "live"
	}
	if int(k) < len(dirSuffixes) {
		return dirSuffixes[k][1:]
	}
	return "DirKind(" + strconv.Itoa(int(k)) + ")"
}

// PartitionDir is a parsed partition directory name.
type PartitionDir struct {
	TopicPartition
	Kind DirKind
	// UniqueID is the id between the '.' and the suffix of a renamed
	// directory (Kafka uses a random UUID without dashes), "" for a live
	// one.
	UniqueID string
}

// Errors of directory name parsing.
var (
	// ErrNotPartitionDir is returned for a name that is not a partition
	// directory of any kind.
	ErrNotPartitionDir = errors.New("checkpoint: not a partition directory name")
	// ErrRenamedDir is returned by ParseDirName for a -delete, -future or
	// -stray directory: one that is not a live log.
	ErrRenamedDir = errors.New("checkpoint: renamed partition directory")
)

// ParsePartitionDir parses a partition directory name of any kind, as
// LocalLog.parseTopicPartitionName does: the partition number follows the
// last '-' (after removing ".<uniqueId>-delete", "-future" or "-stray"),
// and both the topic and the number must be non-empty. A renamed name
// must match ^(\S+)-(\S+)\.(\S+)-suffix$. The topic of a -delete or -stray
// name may have been cut short to keep the name within 255 bytes.
func ParsePartitionDir(name string) (PartitionDir, error) {
	bad := func() (PartitionDir, error) {
		return PartitionDir{}, fmt.Errorf("%w: %q is not in the form of topic-partition or topic-partition.uniqueId-delete", ErrNotPartitionDir, name)
	}
	if !strings.Contains(name, "-") {
		return bad()
	}
	d := PartitionDir{}
	base := name
	for k := DirDelete; k <= DirStray; k++ {
		s := dirSuffixes[k]
		if !strings.HasSuffix(name, s) {
			continue
		}
		rest := name[:len(name)-len(s)]
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 || !renamedShape(rest[:dot], rest[dot+1:]) {
			return bad()
		}
		d.Kind, d.UniqueID, base = k, rest[dot+1:], rest[:dot]
		break
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 || i == len(base)-1 {
		return bad()
	}
	p, err := strconv.ParseInt(base[i+1:], 10, 32)
	if err != nil {
		return bad()
	}
	d.Topic, d.Partition = base[:i], int32(p)
	return d, nil
}

// renamedShape checks the regular expression (\S+)-(\S+)\.(\S+) for the
// part before the suffix, split at its last '.'.
func renamedShape(tp, id string) bool {
	return id != "" && noSpace(id) && noSpace(tp) && len(tp) >= 3 && strings.Contains(tp[1:len(tp)-1], "-")
}

func noSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if isJavaSpace(s[i]) {
			return false
		}
	}
	return true
}

// ParseDirName parses the name of a live partition directory,
// "topic-partition". A renamed directory (-delete, -future, -stray) gives
// an error wrapping ErrRenamedDir; use ParsePartitionDir to read those.
func ParseDirName(name string) (TopicPartition, error) {
	d, err := ParsePartitionDir(name)
	if err != nil {
		return TopicPartition{}, err
	}
	if d.Kind != DirLive {
		return TopicPartition{}, fmt.Errorf("%w: %q is a %s directory of %s", ErrRenamedDir, name, d.Kind, d.TopicPartition)
	}
	return d.TopicPartition, nil
}

// RenamedDirName returns the name Kafka gives tp's directory when it is
// renamed to kind (DirDelete, DirFuture or DirStray) with uniqueID:
// "topic-partition.uniqueID-suffix". For -delete and -stray the topic is
// cut short so that the name stays within 255 bytes
// (LocalLog.logDirNameWithSuffixCappedLength); -future is not capped.
// Kafka's uniqueID is a random UUID printed without dashes.
func (tp TopicPartition) RenamedDirName(kind DirKind, uniqueID string) string {
	suffix := "-" + strconv.FormatInt(int64(tp.Partition), 10) + "." + uniqueID + dirSuffixes[kind]
	topic := tp.Topic
	if kind != DirFuture && len(topic) > maxDirName-len(suffix) {
		topic = topic[:max(0, maxDirName-len(suffix))]
	}
	return topic + suffix
}
