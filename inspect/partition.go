package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/segment"
	"github.com/segkit/segkit/vfs"
)

// ErrNotPartition is matched (errors.Is) by the error of a command that
// writes (Recover, Append) given a directory that is not a partition
// directory: its name is not <topic>-<partition>, it holds partition
// directories (a log directory), or its parent is a partition directory.
var ErrNotPartition = errors.New("inspect: not a partition directory")

// CheckPartitionDir checks that dir of fsys can be written as a partition
// directory, before anything is written: its name must be a live
// partition's, <topic>-<partition> (checkpoint.ParseDirName, the test
// Verify makes); if it exists it must be a directory holding no partition
// directory (a directory that holds partitions is a log directory, never a
// partition); and its parent, where the log directory's checkpoints go,
// must not itself be a partition directory. The error wraps ErrNotPartition,
// or is the error of reading dir.
func CheckPartitionDir(fsys vfs.FS, dir string) error {
	dir = path.Clean(dir)
	if _, err := checkpoint.ParseDirName(path.Base(dir)); err != nil {
		return fmt.Errorf("%w: %s: the name is not <topic>-<partition> (%v)", ErrNotPartition, dir, err)
	}
	if st, err := fsys.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrNotPartition, dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if err == nil {
		infos, err := vfs.ReadDir(fsys, dir)
		if err != nil {
			return err
		}
		if subs := partitionSubdirs(fsys, dir, infos); len(subs) > 0 {
			return fmt.Errorf("%w: %s holds partition directories (%s ...): it is a log directory; name one of its partitions", ErrNotPartition, dir, path.Base(subs[0]))
		}
	}
	parent := path.Dir(dir)
	if infos, err := vfs.ReadDir(fsys, parent); err == nil && holdsPartitionFiles(infos) {
		return fmt.Errorf("%w: %s is inside %s, which is itself a partition directory", ErrNotPartition, dir, parent)
	}
	return nil
}

// Listing is a partition directory FindPartitions found, with its entries
// as vfs.ReadDirFollow describes them (symbolic links followed).
type Listing struct {
	// Dir is the partition directory, as fsys names it.
	Dir string
	// Entries are its entries, sorted by name.
	Entries []fs.FileInfo
}

// Limits of FindPartitions' walk: a partition directory, a log directory,
// a folder of log directories and one more level (a host's disks) are all
// a user points segviz at; deeper trees are not Kafka's layout.
const (
	findDepth = 3
	findDirs  = 10000
)

// FindPartitions returns the partition directories at dir, sorted by name:
// dir itself if it is a partition directory, else the partitions of the
// log directory dir, else those of the log directories under it, down to
// three levels. It is the one discovery routine of every command that takes
// "a partition or a log directory" (verify, serve): they accept and refuse
// the same folders.
//
// The rules, in order, for each directory met:
//   - a directory that holds partition directories is never itself a
//     partition (a log directory named "disk-2" is not topic "disk",
//     partition 2); if it also holds a partition's files (segments,
//     leader-epoch-checkpoint, partition.metadata) it is neither, and
//     FindPartitions refuses it rather than guess;
//   - a directory that holds a partition's files is a partition;
//   - a directory without subdirectories whose name is a partition
//     directory's (<topic>-<partition>, or a renamed -delete,
//     -future or -stray one) is an empty partition.
//
// Subdirectories that cannot be listed, or whose links leave an os.Root,
// are skipped; dir itself must be listable. The error wraps ErrNoPartition
// when nothing under dir is a partition, or when a directory is refused.
func FindPartitions(fsys vfs.FS, dir string) ([]Listing, error) {
	return findPartitions(fsys, dir, 1)
}

// findPartitions is FindPartitions with the subdirectories of dir (a log
// directory's partitions) listed by up to workers goroutines; the result,
// and the error, are the sequential walk's.
func findPartitions(fsys vfs.FS, dir string, workers int) ([]Listing, error) {
	dir = path.Clean(dir)
	f := finder{fsys: fsys, workers: workers}
	out, err := f.visit(dir, 0)
	if errors.Is(err, errTooMany) {
		// Which error the sequential walk meets first, this one or a
		// refusal, depends on its order: walk again in that order (it
		// stops after findDirs directories).
		f = finder{fsys: fsys, workers: 1}
		out, err = f.visit(dir, 0)
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no segment file and no partition directory", ErrNoPartition, dir)
	}
	slices.SortFunc(out, func(a, b Listing) int { return strings.Compare(a.Dir, b.Dir) })
	return out, nil
}

type finder struct {
	fsys    vfs.FS
	workers int
	seen    atomic.Int64
}

// errTooMany stops a concurrent walk that met more than findDirs
// directories.
var errTooMany = errors.New("inspect: too many directories")

func (f *finder) visit(dir string, depth int) ([]Listing, error) {
	if f.seen.Add(1) > findDirs {
		if f.workers > 1 {
			return nil, errTooMany
		}
		return nil, fmt.Errorf("%w: more than %d directories under the one given; name a log directory or a partition", ErrNoPartition, findDirs)
	}
	infos, err := vfs.ReadDirFollow(f.fsys, dir)
	if err != nil {
		if depth > 0 {
			return nil, nil // unreadable, or a link leaving the root: not a partition we can show
		}
		return nil, err
	}
	var kids []Listing
	subdirs := 0
	var todo []string
	for _, fi := range infos {
		if !fi.IsDir() {
			continue
		}
		subdirs++
		if depth >= findDepth {
			continue
		}
		todo = append(todo, path.Join(dir, fi.Name()))
	}
	if depth == 0 && f.workers > 1 && len(todo) > 1 {
		// The root's subdirectories concurrently, their results (and the
		// first error) taken in order, as the sequential walk takes them.
		subs := make([][]Listing, len(todo))
		errs := make([]error, len(todo))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(f.workers, len(todo)) {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(todo)); i = next.Add(1) - 1 {
					subs[i], errs[i] = f.visit(todo[i], depth+1)
				}
			})
		}
		wg.Wait()
		for i := range todo {
			if errs[i] != nil {
				if slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, errTooMany) }) {
					return nil, errTooMany // the order decides which comes first
				}
				return nil, errs[i]
			}
			kids = append(kids, subs[i]...)
		}
		todo = nil
	}
	for _, d := range todo {
		sub, err := f.visit(d, depth+1)
		if err != nil {
			return nil, err
		}
		kids = append(kids, sub...)
	}
	files := holdsPartitionFiles(infos)
	switch {
	case len(kids) > 0 && files:
		return nil, fmt.Errorf("%w: %s holds both a partition's files and partition directories (%s ...); name one of them", ErrNoPartition, dir, path.Base(kids[0].Dir))
	case len(kids) > 0:
		return kids, nil
	case files:
		return []Listing{{Dir: dir, Entries: infos}}, nil
	case subdirs == 0:
		if _, err := checkpoint.ParsePartitionDir(path.Base(dir)); err == nil {
			return []Listing{{Dir: dir, Entries: infos}}, nil
		}
	}
	return nil, nil
}

// partitionSubdirs returns the partition directories among the entries
// infos of dir: subdirectories named as partitions, or holding files only
// a partition directory has.
func partitionSubdirs(fsys vfs.FS, dir string, infos []fs.FileInfo) []string {
	var out []string
	for _, fi := range infos {
		if !fi.IsDir() {
			continue
		}
		sub := path.Join(dir, fi.Name())
		if _, err := checkpoint.ParsePartitionDir(fi.Name()); err == nil {
			out = append(out, sub)
			continue
		}
		if sinfos, err := vfs.ReadDirFollow(fsys, sub); err == nil && holdsPartitionFiles(sinfos) {
			out = append(out, sub)
		}
	}
	return out
}

// holdsPartitionFiles reports whether a directory listing has a file only
// a partition directory has.
func holdsPartitionFiles(infos []fs.FileInfo) bool {
	for _, fi := range infos {
		if fi.IsDir() {
			continue
		}
		if _, _, err := segment.ParseFileName(fi.Name()); err == nil {
			return true
		}
		if fi.Name() == checkpoint.LeaderEpochFile || fi.Name() == checkpoint.PartitionMetadataFile {
			return true
		}
		if _, _, ok := kafkaName(fi.Name()); ok {
			return true // a segment file Kafka's loader would pick, badly named
		}
	}
	return false
}
