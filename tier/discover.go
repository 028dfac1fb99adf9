package tier

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// ErrReadOnly is returned by every change to a ReadOnly remote.
var ErrReadOnly = errors.New("tier: the remote is read-only")

// Discover builds the metadata of the segments tp's partition directory
// holds from its files alone, for a directory a broker's
// LocalTieredStorage wrote (the broker keeps its metadata in its
// __remote_log_metadata topic, not in MetadataDirName). Each file set
// (one start offset and segment id) becomes a COPY_SEGMENT_FINISHED
// segment: StartOffset and ID from the names; EndOffset the last batch's
// last offset, raised to the next file set's start offset - 1 when that
// is higher (Kafka's end offset is the next segment's base - 1);
// MaxTimestampMs the largest batch maxTimestamp (-1: none);
// SegmentSizeInBytes the .log's size; SegmentLeaderEpochs the
// leader_epoch_checkpoint's entries within [start, end+1); TxnIdxEmpty
// when there is no .txnindex or it is empty; EventTimestampMs the .log's
// modification time; BrokerID -1 (the files do not say). The .log is
// read batch header by batch header (v2 only); record CRCs are left to
// the reads. A directory that does not exist holds no segments.
//
// It guesses nothing: a name that is not a segment file, a file set
// lacking any file but the .txnindex (an unfinished copy), two file sets
// whose offsets overlap (which one is served is only in the broker's
// metadata), or a torn or non-v2 .log is an error.
func (d *Dir) Discover(tp TopicIDPartition) ([]SegmentMetadata, error) {
	pd := d.PartitionDir(tp)
	infos, err := vfs.ReadDir(d.fsys, pd)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type fileset struct {
		start int64
		id    UUID
		have  [numFileTypes]bool
	}
	sets := map[UUID]*fileset{}
	for _, fi := range infos {
		start, id, ft, err := ParseSegmentFileName(fi.Name())
		if err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("tier: discovering %s: %q is not a remote segment file", pd, fi.Name())
		}
		s := sets[id]
		if s == nil {
			s = &fileset{start: start, id: id}
			sets[id] = s
		}
		if s.start != start {
			return nil, fmt.Errorf("tier: discovering %s: segment %s has files at offsets %d and %d", pd, id, s.start, start)
		}
		s.have[ft] = true
	}
	var out []SegmentMetadata
	for _, s := range sets {
		for ft := FileType(0); ft < numFileTypes; ft++ {
			if !s.have[ft] && !ft.Optional() {
				return nil, fmt.Errorf("tier: discovering %s: segment %s at %d has no %s file (an unfinished copy?)", pd, s.id, s.start, ft.Suffix())
			}
		}
		m := SegmentMetadata{ID: SegmentID{TopicIDPartition: tp, ID: s.id}, StartOffset: s.start, BrokerID: -1, State: CopySegmentFinished, TxnIdxEmpty: true}
		if err := d.discoverLog(&m); err != nil {
			return nil, err
		}
		if s.have[FileTransactionIndex] {
			fi, err := d.fsys.Stat(d.FilePath(m, FileTransactionIndex))
			if err != nil {
				return nil, err
			}
			m.TxnIdxEmpty = fi.Size() == 0
		}
		out = append(out, m)
	}
	sortMetadata(out)
	for i := range out {
		if i+1 < len(out) {
			next := out[i+1].StartOffset
			if next <= out[i].EndOffset || next == out[i].StartOffset {
				return nil, fmt.Errorf("tier: discovering %s: segments %s (%d to %d) and %s (from %d) overlap", pd, out[i].ID.ID, out[i].StartOffset, out[i].EndOffset, out[i+1].ID.ID, next)
			}
			out[i].EndOffset = next - 1
		}
		p := d.FilePath(out[i], FileLeaderEpochCheckpoint)
		b, err := vfs.ReadFileLimit(d.fsys, p, MaxMetadataFileSize)
		if err != nil {
			return nil, err
		}
		entries, err := checkpoint.ParseLeaderEpochs(b)
		if err != nil {
			return nil, fmt.Errorf("tier: %s: %w", p, err)
		}
		out[i].SegmentLeaderEpochs = inRange(entries, out[i].StartOffset, out[i].EndOffset+1)
	}
	return out, nil
}

// discoverLog fills m's EndOffset, MaxTimestampMs, SegmentSizeInBytes and
// EventTimestampMs from its .log, a batch header at a time.
func (d *Dir) discoverLog(m *SegmentMetadata) error {
	p := d.FilePath(*m, FileSegment)
	f, err := d.fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	m.SegmentSizeInBytes, m.EventTimestampMs = size, fi.ModTime().UnixMilli()
	m.EndOffset, m.MaxTimestampMs = m.StartOffset-1, -1
	var hdr [record.RecordBatchOverhead]byte
	for pos := int64(0); pos < size; {
		if _, err := f.ReadAt(hdr[:], pos); err != nil {
			return &format.CorruptionError{Path: p, Offset: pos, Err: fmt.Errorf("%w: a batch header of %d bytes: %v", format.ErrTruncated, len(hdr), err)}
		}
		h, _ := record.PeekBatchHeader(hdr[:])
		if h.Magic != record.MagicV2 {
			return &format.CorruptionError{Path: p, Offset: pos + record.MagicOffset, Err: fmt.Errorf("%w: magic %d (discovery reads v2 batches only)", format.ErrInvalid, h.Magic)}
		}
		n := int64(h.Size())
		if n < record.RecordBatchOverhead || pos+n > size {
			return &format.CorruptionError{Path: p, Offset: pos + record.LengthOffset, Err: fmt.Errorf("%w: a batch of %d bytes at %d in %d", format.ErrTruncated, n, pos, size)}
		}
		if h.BaseOffset < m.StartOffset || h.LastOffset() <= m.EndOffset {
			return &format.CorruptionError{Path: p, Offset: pos, Err: fmt.Errorf("%w: batch %d to %d after offset %d in the segment at %d", format.ErrInvalid, h.BaseOffset, h.LastOffset(), m.EndOffset, m.StartOffset)}
		}
		m.EndOffset = h.LastOffset()
		m.MaxTimestampMs = max(m.MaxTimestampMs, h.MaxTimestamp)
		pos += n
	}
	return nil
}

// ReadOnly returns d as a Remote and Auditor whose metadata is ms (sorted
// as ListSegmentMetadata sorts; for every partition of theirs) and which
// refuses every change with ErrReadOnly: for Open over a directory a
// broker owns, with ms from Discover. Reads are d's.
func ReadOnly(d *Dir, ms []SegmentMetadata) Remote {
	ms = slices.Clone(ms)
	sortMetadata(ms)
	return readOnly{d, ms}
}

type readOnly struct {
	d  *Dir
	ms []SegmentMetadata
}

var _ Auditor = readOnly{}

func (r readOnly) CopyLogSegmentData(m SegmentMetadata, _ SegmentData) error {
	return fmt.Errorf("%w: copying segment %s", ErrReadOnly, m.ID.ID)
}

func (r readOnly) FetchLogSegment(m SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	return r.d.FetchLogSegment(m, start, end)
}

func (r readOnly) FetchIndex(m SegmentMetadata, t IndexType) (io.ReadCloser, error) {
	return r.d.FetchIndex(m, t)
}

func (r readOnly) DeleteLogSegmentData(m SegmentMetadata) error {
	return fmt.Errorf("%w: deleting segment %s", ErrReadOnly, m.ID.ID)
}

func (r readOnly) PutSegmentMetadata(m SegmentMetadata) error {
	return fmt.Errorf("%w: recording %s for segment %s", ErrReadOnly, m.State, m.ID.ID)
}

func (r readOnly) ListSegmentMetadata(tp TopicIDPartition) ([]SegmentMetadata, error) {
	var out []SegmentMetadata
	for _, m := range r.ms {
		if m.ID.TopicIDPartition == tp {
			out = append(out, m)
		}
	}
	return out, nil
}

func (r readOnly) Files(tp TopicIDPartition) ([]RemoteFile, error) { return r.d.Files(tp) }

func (r readOnly) RemoveFile(_ TopicIDPartition, name string) error {
	return fmt.Errorf("%w: removing %s", ErrReadOnly, path.Base(name))
}
