package tier

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/vfs"
)

// UUID is Kafka's org.apache.kafka.common.Uuid: 16 bytes, printed as 22
// characters of URL-safe base64 without padding (Uuid.toString).
type UUID = checkpoint.UUID

// TopicIDPartition is Kafka's TopicIdPartition: a topic id and the
// topic's name and partition.
type TopicIDPartition struct {
	TopicID   UUID
	Topic     string
	Partition int32
}

// String prints "topicId:topic-partition", as TopicIdPartition.toString.
func (tp TopicIDPartition) String() string {
	return tp.TopicID.String() + ":" + tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// SegmentID is Kafka's RemoteLogSegmentId: the partition and a uuid drawn
// anew for every copy attempt.
type SegmentID struct {
	TopicIDPartition
	ID UUID
}

// NewSegmentID draws a random segment id from r (crypto/rand when nil) as
// Uuid.randomUuid does: a version-4 uuid that is not one of the reserved
// ids (zero and one) and whose string does not start with "-".
func NewSegmentID(tp TopicIDPartition, r io.Reader) (SegmentID, error) {
	if r == nil {
		r = rand.Reader
	}
	for {
		var u UUID
		if _, err := io.ReadFull(r, u[:]); err != nil {
			return SegmentID{}, fmt.Errorf("tier: drawing a segment id: %w", err)
		}
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // variant 2 (Leach-Salz)
		if u == checkpoint.ZeroUUID || u == checkpoint.MetadataTopicID || u.String()[0] == '-' {
			continue
		}
		return SegmentID{TopicIDPartition: tp, ID: u}, nil
	}
}

// SegmentState is Kafka's RemoteLogSegmentState. The numbers are Kafka's.
type SegmentState int8

// These constants are part of the metadata format and should not be
// changed.
const (
	CopySegmentStarted    SegmentState = 0
	CopySegmentFinished   SegmentState = 1
	DeleteSegmentStarted  SegmentState = 2
	DeleteSegmentFinished SegmentState = 3
)

var stateNames = [...]string{"COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED"}

// String returns Kafka's name of the state.
func (s SegmentState) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "SegmentState(" + strconv.Itoa(int(s)) + ")"
}

// ParseSegmentState parses Kafka's name of a state.
func ParseSegmentState(name string) (SegmentState, bool) {
	for i, n := range stateNames {
		if n == name {
			return SegmentState(i), true
		}
	}
	return 0, false
}

// validTransition is RemoteLogSegmentState.isValidTransition.
func validTransition(from, to SegmentState) bool {
	switch from {
	case CopySegmentStarted:
		return to == CopySegmentFinished || to == DeleteSegmentStarted
	case CopySegmentFinished:
		return to == DeleteSegmentStarted
	case DeleteSegmentStarted:
		return to == DeleteSegmentFinished
	}
	return false
}

// SegmentMetadata is Kafka's RemoteLogSegmentMetadata: what the remote
// log metadata knows about one copy of one segment.
type SegmentMetadata struct {
	ID SegmentID
	// StartOffset is the segment's base offset; EndOffset is the next
	// segment's base offset minus one (not the last record's offset).
	StartOffset, EndOffset int64
	// MaxTimestampMs is the segment's largest timestamp
	// (LogSegment.largestTimestamp), what remote retention.ms compares.
	MaxTimestampMs int64
	BrokerID       int32
	// EventTimestampMs is when the current state was entered.
	EventTimestampMs int64
	// SegmentSizeInBytes is the size of the .log.
	SegmentSizeInBytes int64
	// SegmentLeaderEpochs are the leader epochs that began in [start,
	// end+1), with the offset each began at (segmentLeaderEpochs).
	SegmentLeaderEpochs []checkpoint.EpochEntry
	// TxnIdxEmpty says that the segment has no aborted transactions.
	TxnIdxEmpty bool
	State       SegmentState
	// Abandoned marks a copy that never finished and is being (or has
	// been) deleted: it never held served data, so its deletion does not
	// move the log start offset. segkit's; Kafka's metadata has no such
	// field.
	Abandoned bool
}

// IndexType is Kafka's RemoteStorageManager.IndexType.
type IndexType int8

// These constants are Kafka's order of RemoteStorageManager.IndexType.
const (
	IndexOffset IndexType = iota
	IndexTimestamp
	IndexProducerSnapshot
	IndexTransaction
	IndexLeaderEpoch
)

var indexNames = [...]string{"OFFSET", "TIMESTAMP", "PRODUCER_SNAPSHOT", "TRANSACTION", "LEADER_EPOCH"}

// String returns Kafka's name of the index type.
func (t IndexType) String() string {
	if t >= 0 && int(t) < len(indexNames) {
		return indexNames[t]
	}
	return "IndexType(" + strconv.Itoa(int(t)) + ")"
}

// SegmentData is Kafka's LogSegmentData: where a segment's files are.
// Paths are in FS; TransactionIndex is "" when the segment has none.
type SegmentData struct {
	FS               vfs.FS
	LogSegment       string
	OffsetIndex      string
	TimeIndex        string
	TransactionIndex string
	ProducerSnapshot string
	// LeaderEpochIndex is the leader-epoch checkpoint text of every epoch
	// that began below the next segment's base offset (RemoteLogManager
	// epochEntriesAsByteBuffer): "0\n<n>\n<epoch> <offset>\n...".
	LeaderEpochIndex []byte
}

// RemoteStorageManager is Kafka's
// org.apache.kafka.server.log.remote.storage.RemoteStorageManager: the
// plug-in that holds segment data.
//
// Fetches return an io.ReadCloser, as Kafka returns an InputStream: a
// remote over object storage answers a ranged GET with a body it streams,
// and a 1 GiB segment need not be held in memory. The caller bounds what
// it reads and must Close.
type RemoteStorageManager interface {
	// CopyLogSegmentData copies the segment's files (copyLogSegmentData).
	// It is idempotent: a retry overwrites what an earlier attempt with the
	// same metadata left. When it returns nil the copy is durable.
	CopyLogSegmentData(m SegmentMetadata, d SegmentData) error
	// FetchLogSegment returns the bytes [start, end) of the .log; end < 0
	// means to the end (fetchLogSegment; Kafka's end position is
	// inclusive, this one is not).
	FetchLogSegment(m SegmentMetadata, start, end int64) (io.ReadCloser, error)
	// FetchIndex returns one index file (fetchIndex). A missing
	// transaction index, or any missing file, is a *NotFoundError
	// (RemoteResourceNotFoundException).
	FetchIndex(m SegmentMetadata, t IndexType) (io.ReadCloser, error)
	// DeleteLogSegmentData removes the segment's files
	// (deleteLogSegmentData). Files already gone are not an error; when
	// it returns nil the removal is durable.
	DeleteLogSegmentData(m SegmentMetadata) error
}

// MetadataManager keeps the remote log metadata: the part of Kafka's
// RemoteLogMetadataManager this package needs, durable where the data is
// (Kafka keeps it in the __remote_log_metadata topic).
type MetadataManager interface {
	// PutSegmentMetadata durably records m, replacing the earlier state
	// of the same segment id (addRemoteLogSegmentMetadata and
	// updateRemoteLogSegmentMetadata). When it returns nil the state is
	// durable; after an error the old or the new state is recorded.
	PutSegmentMetadata(m SegmentMetadata) error
	// ListSegmentMetadata returns every segment recorded for tp, in any
	// state, sorted by start offset then id (listRemoteLogSegments).
	ListSegmentMetadata(tp TopicIDPartition) ([]SegmentMetadata, error)
}

// Remote is what a tiered log needs of its remote: data and metadata.
type Remote interface {
	RemoteStorageManager
	MetadataManager
}

// Auditor is implemented by remotes that can list what they hold, so that
// start-up can find files no metadata knows (Dir does).
type Auditor interface {
	// Files lists the partition's remote files as segment ids with the
	// file name; names that are not segment files have a zero id. The
	// temporary files of interrupted writes are listed as
	// MetadataDirName+"/"+name, name ending in TempSuffix: Open removes
	// those, and only reports the others it does not know.
	Files(tp TopicIDPartition) ([]RemoteFile, error)
	// RemoveFile removes one listed file, durably.
	RemoveFile(tp TopicIDPartition, name string) error
}

// RemoteFile is one file a remote holds for a partition.
type RemoteFile struct {
	Name        string
	StartOffset int64
	ID          UUID // zero when Name is not a segment file
}

// Errors.
var (
	// ErrNotFound is matched by a *NotFoundError.
	ErrNotFound = errors.New("tier: remote resource not found")
	// ErrCompactedTopic is returned for a topic whose cleanup.policy
	// contains compact: Kafka does not tier compacted topics (KAFKA-19273).
	ErrCompactedTopic = errors.New("tier: compacted topics cannot be tiered")
	// ErrRemoteStorageDisabled is returned when remote.storage.enable is
	// false, or remote.log.copy.disable is true, for an upload.
	ErrRemoteStorageDisabled = errors.New("tier: remote storage is not enabled for the topic")
	// ErrNoTopicID is returned when the partition has no partition.metadata
	// topic id.
	ErrNoTopicID = errors.New("tier: the partition has no topic id")
	// ErrNoProducerSnapshot is returned when the producer snapshot at the
	// next segment's base offset, which the copy includes, is missing.
	ErrNoProducerSnapshot = errors.New("tier: producer snapshot missing")
	// ErrBadTransition is returned for a metadata update that Kafka's
	// state machine forbids.
	ErrBadTransition = errors.New("tier: invalid segment state transition")
)

// NotFoundError is Kafka's RemoteResourceNotFoundException.
type NotFoundError struct {
	Segment SegmentID
	What    string // the index type or "log"
	Path    string
}

func (e *NotFoundError) Error() string {
	return "tier: " + e.What + " of remote segment " + e.Segment.ID.String() + " not found: " + e.Path
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }
