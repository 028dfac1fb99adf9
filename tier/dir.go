package tier

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/vfs"
)

// These names are part of Kafka's LocalTieredStorage layout and of
// segkit's metadata layout, and should not be changed.
const (
	// RootDirName is LocalTieredStorage.ROOT_STORAGE_DIR_NAME: the
	// directory under rsm.config.dir that holds the partitions.
	RootDirName = "kafka-tiered-storage"
	// MetadataDirName is where Dir keeps the remote log metadata, beside
	// RootDirName under the same directory. LocalTieredStorage never
	// creates, lists or deletes it.
	MetadataDirName = ".segkit-tier"
	// MetadataSuffix ends each segment's metadata file.
	MetadataSuffix = ".rlsm"
	// TempSuffix ends the files Dir writes before renaming them into
	// place; they live only in the metadata directory.
	TempSuffix = ".tmp"
)

// FileType is LocalTieredStorage's RemoteLogSegmentFileType.
type FileType int8

// The file types, in RemoteLogSegmentFileType's order.
const (
	FileSegment FileType = iota
	FileOffsetIndex
	FileTimeIndex
	FileTransactionIndex
	FileLeaderEpochCheckpoint
	FileProducerSnapshot
	numFileTypes
)

var fileSuffixes = [numFileTypes]string{".log", ".index", ".timeindex", ".txnindex", ".leader_epoch_checkpoint", ".snapshot"}

// Suffix is the type's file name suffix, dot included.
func (t FileType) Suffix() string { return fileSuffixes[t] }

// Optional reports whether a fileset may lack the type (only the
// transaction index).
func (t FileType) Optional() bool { return t == FileTransactionIndex }

// fileFor maps an IndexType to its file.
var fileFor = [...]FileType{IndexOffset: FileOffsetIndex, IndexTimestamp: FileTimeIndex,
	IndexProducerSnapshot: FileProducerSnapshot, IndexTransaction: FileTransactionIndex, IndexLeaderEpoch: FileLeaderEpochCheckpoint}

// PartitionDirName is RemoteTopicPartitionDirectory's name of a
// partition: "<topic>-<partition>-<topicId base64>".
func PartitionDirName(tp TopicIDPartition) string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10) + "-" + tp.TopicID.String()
}

var partitionDirRE = regexp.MustCompile(`^([a-zA-Z0-9._-]+)-(\d+)-([a-zA-Z0-9_-]{22})$`)

// ParsePartitionDirName inverts PartitionDirName, with
// RemoteTopicPartitionDirectory's pattern.
func ParsePartitionDirName(name string) (TopicIDPartition, error) {
	m := partitionDirRE.FindStringSubmatch(name)
	if m == nil {
		return TopicIDPartition{}, fmt.Errorf("tier: not a topic partition directory: %q", name)
	}
	p, err := strconv.ParseInt(m[2], 10, 32)
	if err != nil {
		return TopicIDPartition{}, fmt.Errorf("tier: not a topic partition directory: %q", name)
	}
	id, err := checkpoint.ParseUUID(m[3])
	if err != nil {
		return TopicIDPartition{}, fmt.Errorf("tier: not a topic partition directory: %q: %w", name, err)
	}
	tp := TopicIDPartition{TopicID: id, Topic: m[1], Partition: int32(p)}
	// A name Kafka did not print (leading zeros, a uuid whose unused
	// bits are set) would alias another: refused rather than guessed.
	if PartitionDirName(tp) != name {
		return TopicIDPartition{}, fmt.Errorf("tier: not a topic partition directory as Kafka names one: %q", name)
	}
	return tp, nil
}

// SegmentFileName is RemoteLogSegmentFileType.toFilename as Kafka 3.9+
// writes it: the 20-digit start offset (LogFileUtils
// .filenamePrefixFromOffset), "-", the segment uuid, the suffix.
func SegmentFileName(start int64, id UUID, t FileType) string {
	return fmt.Sprintf("%020d-%s%s", start, id, t.Suffix())
}

var segmentFileRE = regexp.MustCompile(`^(\d+)-([a-zA-Z0-9_-]{22})(\.[a-z_]+)$`)

// ParseSegmentFileName inverts SegmentFileName. It also accepts the
// unpadded offsets of older LocalTieredStorage versions.
func ParseSegmentFileName(name string) (start int64, id UUID, t FileType, err error) {
	m := segmentFileRE.FindStringSubmatch(name)
	if m == nil {
		return 0, id, 0, fmt.Errorf("tier: not a remote log segment file: %q", name)
	}
	if start, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return 0, id, 0, fmt.Errorf("tier: not a remote log segment file: %q", name)
	}
	if id, err = checkpoint.ParseUUID(m[2]); err != nil {
		return 0, id, 0, fmt.Errorf("tier: not a remote log segment file: %q: %w", name, err)
	}
	// As Kafka prints them, padded or not: no name aliases another.
	if id.String() != m[2] || (m[1] != fmt.Sprintf("%020d", start) && m[1] != strconv.FormatInt(start, 10)) {
		return 0, id, 0, fmt.Errorf("tier: not a remote log segment file as Kafka names one: %q", name)
	}
	i := slices.Index(fileSuffixes[:], m[3])
	if i < 0 {
		return 0, id, 0, fmt.Errorf("tier: not a remote log segment file: %q", name)
	}
	return start, id, FileType(i), nil
}

// Dir is a remote in a vfs directory, in the layout of Kafka's
// LocalTieredStorage (rsm.config.dir = the directory), with the remote
// log metadata beside it in MetadataDirName. It implements Remote and
// Auditor. Its methods may be called concurrently.
type Dir struct {
	fsys vfs.FS
	dir  string

	mu    sync.Mutex
	ready map[string]bool // directories created and synced
}

var (
	_ Remote  = (*Dir)(nil)
	_ Auditor = (*Dir)(nil)
)

// NewDir returns the remote in dir (Kafka's rsm.config.dir).
func NewDir(fsys vfs.FS, dir string) *Dir {
	return &Dir{fsys: fsys, dir: dir, ready: map[string]bool{}}
}

// PartitionDir is the directory of tp's segment files.
func (d *Dir) PartitionDir(tp TopicIDPartition) string {
	return path.Join(d.dir, RootDirName, PartitionDirName(tp))
}

// MetadataDir is the directory of tp's metadata files.
func (d *Dir) MetadataDir(tp TopicIDPartition) string {
	return path.Join(d.dir, MetadataDirName, PartitionDirName(tp))
}

// FilePath is the path of one file of a remote segment.
func (d *Dir) FilePath(m SegmentMetadata, t FileType) string {
	return path.Join(d.PartitionDir(m.ID.TopicIDPartition), SegmentFileName(m.StartOffset, m.ID.ID, t))
}

// MetadataPath is the path of a segment's metadata file.
func (d *Dir) MetadataPath(m SegmentMetadata) string {
	return path.Join(d.MetadataDir(m.ID.TopicIDPartition), fmt.Sprintf("%020d-%s%s", m.StartOffset, m.ID.ID, MetadataSuffix))
}

// ensureDir creates p and makes its entry, and those of its new
// ancestors up to d.dir, durable.
func (d *Dir) ensureDir(p string) error {
	d.mu.Lock()
	ok := d.ready[p]
	d.mu.Unlock()
	if ok {
		return nil
	}
	if err := d.fsys.MkdirAll(p, 0o755); err != nil {
		return err
	}
	for q := p; ; q = path.Dir(q) {
		parent := path.Dir(q)
		if err := vfs.SyncDir(d.fsys, parent); err != nil {
			return err
		}
		if q == d.dir || parent == q || parent == "." || parent == "/" || !strings.HasPrefix(q, d.dir) {
			break
		}
	}
	d.mu.Lock()
	d.ready[p] = true
	d.mu.Unlock()
	return nil
}

// CopyLogSegmentData copies each file to a temporary file in the metadata
// directory, syncs it and renames it into the partition directory, then
// syncs both directories: the partition directory only ever holds whole
// files, under LocalTieredStorage's names. A retry overwrites.
//
// The files are all written first, each one's writeback started as it is
// done (vfs.StartWriteback), then all synced, then all renamed: the
// device's writes of a segment's files overlap, and on a journaling
// filesystem one commit makes most of them durable, where a sync after
// each write would commit once per file. Every file is still synced
// before any rename, and the directories after the last.
func (d *Dir) CopyLogSegmentData(m SegmentMetadata, data SegmentData) error {
	pd, md := d.PartitionDir(m.ID.TopicIDPartition), d.MetadataDir(m.ID.TopicIDPartition)
	if err := d.ensureDir(pd); err != nil {
		return err
	}
	if err := d.ensureDir(md); err != nil {
		return err
	}
	src := [numFileTypes]string{data.LogSegment, data.OffsetIndex, data.TimeIndex, data.TransactionIndex, "", data.ProducerSnapshot}
	type temp struct {
		f         vfs.File
		tmp, name string
	}
	var temps []temp
	var buf []byte // for copies the kernel cannot do, made on first use
	defer func() {
		for _, t := range temps {
			if t.f != nil {
				t.f.Close()
			}
		}
	}()
	for t := FileType(0); t < numFileTypes; t++ {
		name := SegmentFileName(m.StartOffset, m.ID.ID, t)
		tmp := path.Join(md, name+TempSuffix)
		var f vfs.File
		var err error
		switch {
		case t == FileLeaderEpochCheckpoint:
			f, err = writeTemp(d.fsys, tmp, nil, data.LeaderEpochIndex, nil)
		case src[t] == "" && t.Optional():
			continue
		case src[t] == "":
			return fmt.Errorf("tier: copying segment %s: no %s file", m.ID.ID, t.Suffix())
		default:
			f, err = d.copyTemp(data.FS, src[t], tmp, &buf)
		}
		if err != nil {
			return err
		}
		temps = append(temps, temp{f, tmp, name})
	}
	for i := range temps {
		f := temps[i].f
		temps[i].f = nil
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	for _, t := range temps {
		if err := d.fsys.Rename(t.tmp, path.Join(pd, t.name)); err != nil {
			return err
		}
	}
	if err := vfs.SyncDir(d.fsys, md); err != nil {
		return err
	}
	return vfs.SyncDir(d.fsys, pd)
}

func (d *Dir) copyTemp(srcFS vfs.FS, src, tmp string, buf *[]byte) (vfs.File, error) {
	f, err := srcFS.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return writeTemp(d.fsys, tmp, f, nil, buf)
}

// writeTemp writes r's bytes (or b) to a new file name, starts its
// writeback and returns it open, for the caller to Sync and Close.
func writeTemp(fsys vfs.FS, name string, r io.Reader, b []byte, buf *[]byte) (vfs.File, error) {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if r != nil {
		// Plain files on both sides let *os.File copy in the kernel
		// (copy_file_range), as a plain file copy does: io.Copy's
		// WriterTo and ReaderFrom paths need no buffer. *buf serves
		// the others.
		_, wt := r.(io.WriterTo)
		_, rf := f.(io.ReaderFrom)
		if !wt && !rf && *buf == nil {
			*buf = make([]byte, 1<<20)
		}
		_, err = io.CopyBuffer(f, r, *buf)
	} else {
		_, err = f.Write(b)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	_ = vfs.StartWriteback(f) // a hint; the Sync that follows reports
	return f, nil
}

type sectionFile struct {
	*io.SectionReader
	f vfs.File
}

func (s sectionFile) Close() error { return s.f.Close() }

func (d *Dir) open(m SegmentMetadata, t FileType, what string, start, end int64) (io.ReadCloser, error) {
	p := d.FilePath(m, t)
	f, err := d.fsys.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{Segment: m.ID, What: what, Path: p}
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := fi.Size()
	if end < 0 || end > size {
		end = size
	}
	if start < 0 || start > end {
		f.Close()
		return nil, fmt.Errorf("tier: %s: range [%d, %d) outside the file's %d bytes", p, start, end, size)
	}
	return sectionFile{io.NewSectionReader(f, start, end-start), f}, nil
}

// FetchLogSegment returns bytes [start, end) of the segment's .log (end
// < 0 or past the end: to the end).
func (d *Dir) FetchLogSegment(m SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	return d.open(m, FileSegment, "log", start, end)
}

// FetchIndex returns one index file.
func (d *Dir) FetchIndex(m SegmentMetadata, t IndexType) (io.ReadCloser, error) {
	if t < 0 || int(t) >= len(fileFor) {
		return nil, fmt.Errorf("tier: unknown index type %d", t)
	}
	return d.open(m, fileFor[t], t.String(), 0, -1)
}

// DeleteLogSegmentData removes the segment's files and syncs the
// directory. Missing files are not an error.
func (d *Dir) DeleteLogSegmentData(m SegmentMetadata) error {
	removed := false
	for t := FileType(0); t < numFileTypes; t++ {
		err := d.fsys.Remove(d.FilePath(m, t))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		removed = true
	}
	if !removed {
		return nil
	}
	return vfs.SyncDir(d.fsys, d.PartitionDir(m.ID.TopicIDPartition))
}

// PutSegmentMetadata writes m's metadata file atomically and durably.
func (d *Dir) PutSegmentMetadata(m SegmentMetadata) error {
	md := d.MetadataDir(m.ID.TopicIDPartition)
	if err := d.ensureDir(md); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(d.fsys, d.MetadataPath(m), AppendMetadata(nil, m), 0o644)
}

// ListSegmentMetadata reads every metadata file of tp. A damaged one is
// a *format.CorruptionError; a file whose name, partition or offsets
// disagree with its content is one wrapping format.ErrInvalid.
func (d *Dir) ListSegmentMetadata(tp TopicIDPartition) ([]SegmentMetadata, error) {
	md := d.MetadataDir(tp)
	infos, err := vfs.ReadDir(d.fsys, md)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SegmentMetadata
	for _, fi := range infos {
		name := fi.Name()
		if !strings.HasSuffix(name, MetadataSuffix) {
			continue
		}
		p := path.Join(md, name)
		b, err := vfs.ReadFileLimit(d.fsys, p, MaxMetadataFileSize)
		if errors.Is(err, vfs.ErrTooLarge) {
			return nil, &format.CorruptionError{Path: p, Offset: MaxMetadataFileSize, Err: fmt.Errorf("%w: %v", format.ErrTooLarge, err)}
		}
		if err != nil {
			return nil, err
		}
		m, err := ParseMetadata(b, p)
		if err != nil {
			return nil, err
		}
		if m.ID.TopicIDPartition != tp || path.Base(d.MetadataPath(m)) != name {
			return nil, &format.CorruptionError{Path: p, Offset: int64(metaHeaderLen),
				Err: fmt.Errorf("%w: metadata of %s at %d in the file of another segment", format.ErrInvalid, m.ID, m.StartOffset)}
		}
		out = append(out, m)
	}
	sortMetadata(out)
	return out, nil
}

func sortMetadata(ms []SegmentMetadata) {
	slices.SortFunc(ms, func(a, b SegmentMetadata) int {
		if a.StartOffset != b.StartOffset {
			if a.StartOffset < b.StartOffset {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID.ID.String(), b.ID.ID.String())
	})
}

// Files lists tp's partition directory, and the temporary files Dir left
// in its metadata directory (Name prefixed with MetadataDirName+"/").
func (d *Dir) Files(tp TopicIDPartition) ([]RemoteFile, error) {
	var out []RemoteFile
	infos, err := vfs.ReadDir(d.fsys, d.PartitionDir(tp))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, fi := range infos {
		rf := RemoteFile{Name: fi.Name()}
		if start, id, _, err := ParseSegmentFileName(fi.Name()); err == nil {
			rf.StartOffset, rf.ID = start, id
		}
		out = append(out, rf)
	}
	infos, err = vfs.ReadDir(d.fsys, d.MetadataDir(tp))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, fi := range infos {
		if strings.HasSuffix(fi.Name(), TempSuffix) {
			out = append(out, RemoteFile{Name: MetadataDirName + "/" + fi.Name()})
		}
	}
	return out, nil
}

// RemoveFile removes one file Files listed, durably.
func (d *Dir) RemoveFile(tp TopicIDPartition, name string) error {
	dir := d.PartitionDir(tp)
	if rest, ok := strings.CutPrefix(name, MetadataDirName+"/"); ok {
		dir, name = d.MetadataDir(tp), rest
	}
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("tier: bad remote file name %q", name)
	}
	if err := d.fsys.Remove(path.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return vfs.SyncDir(d.fsys, dir)
}
