package tier

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// A View shows a partition directory as a reader of its whole history
// sees it: the local directory's files, and, for each remote segment it
// is given, that segment's files in the same directory under the names
// Kafka gives them locally — <base>.log, .index, .timeindex, .txnindex
// (when the copy has one), and the producer snapshot the copy carries as
// <next base>.snapshot (unless a local snapshot has that name) — and the
// log directory's log-start-offset-checkpoint with the partition's entry
// lowered to the first remote segment's start (segkit's engine keeps the
// local log start offset there; the partition's log start offset is the
// remote's, see Tier.LogStartOffset), and the partition's
// leader-epoch-checkpoint with the epochs of the remote segments before
// the local ones (segkit's engine trims its epochs to its local log start
// offset, where a broker keeps them from offset 0; the last remote
// segment's leader_epoch_checkpoint holds every epoch that began below its
// end). Any reader
// of a partition directory (inspect.Verify, kafkalog.Open read-only, the
// visualiser) then reads the history as one log. The remote files are the
// Dir's own files, opened read-only: nothing is copied.
//
// A View is read-only: every call that would change a file fails with an
// *fs.PathError wrapping fs.ErrPermission.
type View struct {
	local vfs.FS
	dir   string // the partition directory, cleaned
	d     *Dir
	// names maps a file name shown in dir to the remote segment and file
	// it is.
	names map[string]ViewFile
	// segs are the remote segments shown, oldest first.
	segs []SegmentMetadata
	// over holds the checkpoints the view rewrites (the log directory's
	// log-start-offset-checkpoint, the partition's leader-epoch-checkpoint)
	// at their paths; overPaths says which paths it holds.
	over      vfs.FS
	overPaths map[string]bool
}

// ViewFile is a remote file a View shows: its segment's metadata, its
// type, and its path in the remote's file system.
type ViewFile struct {
	Segment SegmentMetadata
	Type    FileType
	Path    string
}

// NewView returns the view of the partition directory pdir of local with
// those of the remote segments segs of d (oldest first) that start below
// the first local segment: a segment both sides hold is read from local
// disk, as every reader of a tiered partition reads it.
func (d *Dir) NewView(local vfs.FS, pdir string, segs []SegmentMetadata) (*View, error) {
	v := &View{local: local, dir: path.Clean(pdir), d: d, names: map[string]ViewFile{}}
	infos, err := vfs.ReadDir(local, v.dir)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	firstLocal := int64(math.MaxInt64)
	for _, fi := range infos {
		have[fi.Name()] = true
		if base, ext, err := segment.ParseFileName(fi.Name()); err == nil && ext == segment.LogSuffix && !fi.IsDir() {
			firstLocal = min(firstLocal, base)
		}
	}
	var shown []SegmentMetadata
	for _, m := range segs {
		if m.StartOffset >= firstLocal {
			continue
		}
		shown = append(shown, m)
		add := func(name string, t FileType) {
			if !have[name] {
				v.names[name] = ViewFile{Segment: m, Type: t, Path: d.FilePath(m, t)}
			}
		}
		add(segment.FileName(m.StartOffset, segment.LogSuffix), FileSegment)
		add(segment.FileName(m.StartOffset, segment.IndexSuffix), FileOffsetIndex)
		add(segment.FileName(m.StartOffset, segment.TimeIndexSuffix), FileTimeIndex)
		if _, err := d.fsys.Stat(d.FilePath(m, FileTransactionIndex)); err == nil {
			add(segment.FileName(m.StartOffset, segment.TxnIndexSuffix), FileTransactionIndex)
		}
		add(producer.SnapshotFileName(m.EndOffset+1), FileProducerSnapshot)
	}
	v.segs = shown
	v.over, v.overPaths = vfs.NewMem(), map[string]bool{}
	if len(shown) > 0 {
		if err := v.lowerLogStart(shown[0].StartOffset); err != nil {
			return nil, err
		}
		if err := v.mergeEpochs(shown[len(shown)-1]); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// overlay shows b at p instead of the local file.
func (v *View) overlay(p string, b []byte) error {
	if err := v.over.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	if err := vfs.WriteFile(v.over, p, b, 0o644); err != nil {
		return err
	}
	v.overPaths[p] = true
	return nil
}

// mergeEpochs shows the partition's leader-epoch-checkpoint as the epochs
// of last's leader_epoch_checkpoint followed by the local epochs that
// begin after them. The engine's first local entry, trimmed to its local
// log start offset, is the continuation of the remote's last epoch (or a
// later one); a broker's local entries from offset 0 add nothing.
func (v *View) mergeEpochs(last SegmentMetadata) error {
	b, err := vfs.ReadFileLimit(v.d.fsys, v.d.FilePath(last, FileLeaderEpochCheckpoint), MaxIndexBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // readers report what the local checkpoint lacks
	}
	if err != nil {
		return err
	}
	remote, err := checkpoint.ParseLeaderEpochs(b)
	if err != nil || len(remote) == 0 {
		return nil // unreadable: left to the checks of the remote files
	}
	p := path.Join(v.dir, checkpoint.LeaderEpochFile)
	lb, err := vfs.ReadFileLimit(v.local, p, MaxIndexBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	local, err := checkpoint.ParseLeaderEpochs(lb)
	if err != nil && len(lb) > 0 {
		return nil // a damaged local checkpoint is shown as it is
	}
	merged := slices.Clone(remote)
	for _, e := range local {
		if e.Epoch > merged[len(merged)-1].Epoch {
			merged = append(merged, e)
		}
	}
	return v.overlay(p, checkpoint.AppendLeaderEpochs(nil, merged))
}

// lowerLogStart shows the log directory's log-start-offset-checkpoint with
// the partition's entry lowered to start, when it is above it.
func (v *View) lowerLogStart(start int64) error {
	tp, err := checkpoint.ParseDirName(path.Base(v.dir))
	if err != nil {
		return nil // not a partition's name: nothing to lower
	}
	p := path.Join(path.Dir(v.dir), checkpoint.LogStartOffsetFile)
	entries, err := checkpoint.ReadOffsetEntries(v.local, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lowered := false
	for i := range entries {
		if entries[i].TopicPartition == tp && entries[i].Offset > start {
			entries[i].Offset, lowered = start, true
		}
	}
	if !lowered {
		return nil
	}
	return v.overlay(p, checkpoint.AppendOffsets(nil, entries))
}

// shown returns the FS that holds name as the view shows it: the memory
// FS for a rewritten checkpoint, the local FS otherwise.
func (v *View) shown(name string) vfs.FS {
	if v.overPaths[path.Clean(name)] {
		return v.over
	}
	return v.local
}

// Segments returns the remote segments the view shows, oldest first.
func (v *View) Segments() []SegmentMetadata { return slices.Clone(v.segs) }

// Remote returns the remote file the view shows under name (a path in
// the view), if it is one.
func (v *View) Remote(name string) (ViewFile, bool) {
	dir, base := path.Split(path.Clean(name))
	if path.Clean(dir) != v.dir {
		return ViewFile{}, false
	}
	f, ok := v.names[base]
	return f, ok
}

// Files lists the remote files the view shows, by their names in it.
func (v *View) Files() map[string]ViewFile {
	out := make(map[string]ViewFile, len(v.names))
	for n, f := range v.names {
		out[path.Join(v.dir, n)] = f
	}
	return out
}

func (v *View) denied(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrPermission}
}

// Name names the implementation.
func (v *View) Name() string { return "tier-view(" + v.local.Name() + ")" }

// Open opens a local file, or a remote one under its local name. The
// partition directory lists both.
func (v *View) Open(name string) (vfs.File, error) {
	if f, ok := v.Remote(name); ok {
		rf, err := v.d.fsys.Open(f.Path)
		if err != nil {
			return nil, err
		}
		return viewFile{File: rf, name: name, base: path.Base(name)}, nil
	}
	f, err := v.shown(name).Open(name)
	if err != nil || path.Clean(name) != v.dir {
		return f, err
	}
	return &viewDir{File: f, v: v}, nil
}

// OpenFile opens for reading only (os.O_RDONLY); any other flag is refused.
func (v *View) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if flag != 0 { // os.O_RDONLY
		return nil, v.denied("open", name)
	}
	return v.Open(name)
}

// Stat describes a local file, or a remote one under its local name.
func (v *View) Stat(name string) (fs.FileInfo, error) {
	if f, ok := v.Remote(name); ok {
		fi, err := v.d.fsys.Stat(f.Path)
		if err != nil {
			return nil, err
		}
		return renamed{fi, path.Base(name)}, nil
	}
	return v.shown(name).Stat(name)
}

// Create is refused.
func (v *View) Create(name string) (vfs.File, error) { return nil, v.denied("create", name) }

// MkdirAll is refused.
func (v *View) MkdirAll(p string, _ fs.FileMode) error { return v.denied("mkdir", p) }

// Remove is refused.
func (v *View) Remove(name string) error { return v.denied("remove", name) }

// RemoveAll is refused.
func (v *View) RemoveAll(p string) error { return v.denied("removeall", p) }

// Rename is refused.
func (v *View) Rename(oldname, _ string) error { return v.denied("rename", oldname) }

// Chtimes is refused.
func (v *View) Chtimes(name string, _, _ time.Time) error { return v.denied("chtimes", name) }

// Lock is refused: a view is for readers.
func (v *View) Lock(name string) (io.Closer, error) { return nil, v.denied("lock", name) }

var _ vfs.FS = (*View)(nil)

// renamed is a remote file's info under its local name.
type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }

// viewFile is a remote file opened through a View: read-only.
type viewFile struct {
	vfs.File
	name, base string
}

func (f viewFile) Name() string { return f.name }

func (f viewFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	return renamed{fi, f.base}, nil
}

func (f viewFile) Write([]byte) (int, error) { return 0, f.denied("write") }
func (f viewFile) WriteAt([]byte, int64) (int, error) {
	return 0, f.denied("write")
}
func (f viewFile) Truncate(int64) error { return f.denied("truncate") }
func (f viewFile) denied(op string) error {
	return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrPermission}
}

// viewDir is the partition directory opened through a View: its listing
// holds the remote files too.
type viewDir struct {
	vfs.File
	v     *View
	list  []fs.FileInfo // the merged listing, once read
	read  bool
	extra error // the first error a remote file's Stat gave
}

func (d *viewDir) load() error {
	if d.read {
		return d.extra
	}
	d.read = true
	local, err := d.File.Readdir(-1)
	if err != nil {
		return err
	}
	d.list = local
	for name, f := range d.v.names {
		fi, err := d.v.d.fsys.Stat(f.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // a file the copy lacks: readers find it missing
			}
			d.extra = err
			return err
		}
		d.list = append(d.list, renamed{fi, name})
	}
	slices.SortFunc(d.list, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
	return nil
}

func (d *viewDir) Readdir(n int) ([]fs.FileInfo, error) {
	if err := d.load(); err != nil {
		return nil, err
	}
	if n <= 0 {
		out := d.list
		d.list = nil
		return out, nil
	}
	if len(d.list) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.list))
	out := d.list[:k:k]
	d.list = d.list[k:]
	return out, nil
}

func (d *viewDir) Readdirnames(n int) ([]string, error) {
	infos, err := d.Readdir(n)
	names := make([]string, len(infos))
	for i, fi := range infos {
		names[i] = fi.Name()
	}
	return names, err
}
