package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/tier"
)

// Remote is a tier.Remote over a bucket: segment files under the keys of
// tier.Dir's layout, metadata files beside them. It implements
// tier.Remote and tier.Auditor. Its methods may be called concurrently.
type Remote struct {
	b       *Bucket
	prefix  string // "" or ends in "/"
	timeout time.Duration
}

var (
	_ tier.Remote  = (*Remote)(nil)
	_ tier.Auditor = (*Remote)(nil)
)

// DefaultTimeout bounds each call of a Remote method (all its requests).
const DefaultTimeout = 10 * time.Minute

// NewRemote returns the remote under prefix in b: the keys are what
// tier.Dir's paths are under its directory, with prefix for the
// directory ("" for the bucket's root). Each method's requests are
// bounded by timeout (DefaultTimeout when 0).
func NewRemote(b *Bucket, prefix string, timeout time.Duration) *Remote {
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Remote{b: b, prefix: prefix, timeout: timeout}
}

// Bucket is the remote's bucket.
func (r *Remote) Bucket() *Bucket { return r.b }

// PartitionPrefix is the key prefix of tp's segment files, ending in "/".
func (r *Remote) PartitionPrefix(tp tier.TopicIDPartition) string {
	return r.prefix + tier.RootDirName + "/" + tier.PartitionDirName(tp) + "/"
}

// MetadataPrefix is the key prefix of tp's metadata files, ending in "/".
func (r *Remote) MetadataPrefix(tp tier.TopicIDPartition) string {
	return r.prefix + tier.MetadataDirName + "/" + tier.PartitionDirName(tp) + "/"
}

// FileKey is the key of one file of a remote segment.
func (r *Remote) FileKey(m tier.SegmentMetadata, t tier.FileType) string {
	return r.PartitionPrefix(m.ID.TopicIDPartition) + tier.SegmentFileName(m.StartOffset, m.ID.ID, t)
}

// MetadataKey is the key of a segment's metadata file.
func (r *Remote) MetadataKey(m tier.SegmentMetadata) string {
	return r.MetadataPrefix(m.ID.TopicIDPartition) + metadataName(m)
}

func metadataName(m tier.SegmentMetadata) string {
	return fmt.Sprintf("%020d-%s%s", m.StartOffset, m.ID.ID, tier.MetadataSuffix)
}

func (r *Remote) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.timeout)
}

// fileTypes are the segment file types, in tier.FileType's order.
var fileTypes = []tier.FileType{tier.FileSegment, tier.FileOffsetIndex, tier.FileTimeIndex,
	tier.FileTransactionIndex, tier.FileLeaderEpochCheckpoint, tier.FileProducerSnapshot}

// CopyLogSegmentData puts each of the segment's files under its key. A
// PUT is atomic, so the keys only ever hold whole files; a retry
// overwrites.
func (r *Remote) CopyLogSegmentData(m tier.SegmentMetadata, d tier.SegmentData) error {
	ctx, cancel := r.ctx()
	defer cancel()
	for _, t := range fileTypes {
		key := r.FileKey(m, t)
		var src string
		switch t {
		case tier.FileLeaderEpochCheckpoint:
			if err := r.b.PutBytes(ctx, key, d.LeaderEpochIndex); err != nil {
				return err
			}
			continue
		case tier.FileSegment:
			src = d.LogSegment
		case tier.FileOffsetIndex:
			src = d.OffsetIndex
		case tier.FileTimeIndex:
			src = d.TimeIndex
		case tier.FileTransactionIndex:
			src = d.TransactionIndex
		case tier.FileProducerSnapshot:
			src = d.ProducerSnapshot
		}
		if src == "" {
			if t.Optional() {
				continue
			}
			return fmt.Errorf("tier/s3: copying segment %s: no %s file", m.ID.ID, t.Suffix())
		}
		if err := r.putFile(ctx, key, d, src); err != nil {
			return err
		}
	}
	return nil
}

func (r *Remote) putFile(ctx context.Context, key string, d tier.SegmentData, src string) error {
	f, err := d.FS.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return r.b.Put(ctx, key, f, fi.Size())
}

// body closes the request's context with the body.
type body struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b body) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (r *Remote) open(m tier.SegmentMetadata, t tier.FileType, what string, start, end int64) (io.ReadCloser, error) {
	ctx, cancel := r.ctx()
	key := r.FileKey(m, t)
	rc, err := r.b.GetRange(ctx, key, start, end)
	if errors.Is(err, ErrNotFound) {
		cancel()
		return nil, &tier.NotFoundError{Segment: m.ID, What: what, Path: r.b.URL(key)}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return body{rc, cancel}, nil
}

// FetchLogSegment returns bytes [start, end) of the segment's .log (end
// < 0 or past the end: to the end) with one ranged GET, streamed.
func (r *Remote) FetchLogSegment(m tier.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	return r.open(m, tier.FileSegment, "log", start, end)
}

// indexFile maps a tier.IndexType to its file.
var indexFile = [...]tier.FileType{tier.IndexOffset: tier.FileOffsetIndex, tier.IndexTimestamp: tier.FileTimeIndex,
	tier.IndexProducerSnapshot: tier.FileProducerSnapshot, tier.IndexTransaction: tier.FileTransactionIndex,
	tier.IndexLeaderEpoch: tier.FileLeaderEpochCheckpoint}

// FetchIndex returns one index file.
func (r *Remote) FetchIndex(m tier.SegmentMetadata, t tier.IndexType) (io.ReadCloser, error) {
	if t < 0 || int(t) >= len(indexFile) {
		return nil, fmt.Errorf("tier/s3: unknown index type %d", t)
	}
	return r.open(m, indexFile[t], t.String(), 0, -1)
}

// DeleteLogSegmentData deletes the segment's objects. Missing ones are
// not an error.
func (r *Remote) DeleteLogSegmentData(m tier.SegmentMetadata) error {
	ctx, cancel := r.ctx()
	defer cancel()
	for _, t := range fileTypes {
		if err := r.b.Delete(ctx, r.FileKey(m, t)); err != nil {
			return err
		}
	}
	return nil
}

// PutSegmentMetadata puts m's metadata file (tier.AppendMetadata's
// bytes), replacing the earlier state atomically.
func (r *Remote) PutSegmentMetadata(m tier.SegmentMetadata) error {
	ctx, cancel := r.ctx()
	defer cancel()
	return r.b.PutBytes(ctx, r.MetadataKey(m), tier.AppendMetadata(nil, m))
}

// ListSegmentMetadata reads every metadata file of tp, sorted by start
// offset then id. A damaged one is a *format.CorruptionError, as from
// tier.Dir.
func (r *Remote) ListSegmentMetadata(tp tier.TopicIDPartition) ([]tier.SegmentMetadata, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	pre := r.MetadataPrefix(tp)
	objs, err := r.b.List(ctx, pre)
	if err != nil {
		return nil, err
	}
	var out []tier.SegmentMetadata
	for _, o := range objs {
		name := strings.TrimPrefix(o.Key, pre)
		if strings.Contains(name, "/") || !strings.HasSuffix(name, tier.MetadataSuffix) {
			continue
		}
		url := r.b.URL(o.Key)
		if o.Size > tier.MaxMetadataFileSize {
			return nil, &format.CorruptionError{Path: url, Offset: tier.MaxMetadataFileSize,
				Err: fmt.Errorf("%w: metadata object of %d bytes, limit %d", format.ErrTooLarge, o.Size, tier.MaxMetadataFileSize)}
		}
		p, err := r.b.ReadAll(ctx, o.Key, tier.MaxMetadataFileSize)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since the listing
		}
		if errors.Is(err, ErrRange) {
			return nil, &format.CorruptionError{Path: url, Offset: tier.MaxMetadataFileSize, Err: fmt.Errorf("%w: %v", format.ErrTooLarge, err)}
		}
		if err != nil {
			return nil, err
		}
		m, err := tier.ParseMetadata(p, url)
		if err != nil {
			return nil, err
		}
		if m.ID.TopicIDPartition != tp || metadataName(m) != name {
			return nil, &format.CorruptionError{Path: url, Offset: 0,
				Err: fmt.Errorf("%w: metadata of %s at %d in the object of another segment", format.ErrInvalid, m.ID, m.StartOffset)}
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b tier.SegmentMetadata) int {
		if a.StartOffset != b.StartOffset {
			if a.StartOffset < b.StartOffset {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID.ID.String(), b.ID.ID.String())
	})
	return out, nil
}

// Files lists tp's segment objects. An S3 PUT leaves no temporary
// objects, so unlike tier.Dir there are no metadata-directory entries.
func (r *Remote) Files(tp tier.TopicIDPartition) ([]tier.RemoteFile, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	pre := r.PartitionPrefix(tp)
	objs, err := r.b.List(ctx, pre)
	if err != nil {
		return nil, err
	}
	var out []tier.RemoteFile
	for _, o := range objs {
		rf := tier.RemoteFile{Name: strings.TrimPrefix(o.Key, pre)}
		if start, id, _, err := tier.ParseSegmentFileName(path.Base(rf.Name)); err == nil && !strings.Contains(rf.Name, "/") {
			rf.StartOffset, rf.ID = start, id
		}
		out = append(out, rf)
	}
	return out, nil
}

// RemoveFile deletes one object Files listed. A missing one is not an
// error.
func (r *Remote) RemoveFile(tp tier.TopicIDPartition, name string) error {
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("tier/s3: bad remote file name %q", name)
	}
	ctx, cancel := r.ctx()
	defer cancel()
	return r.b.Delete(ctx, r.PartitionPrefix(tp)+name)
}
