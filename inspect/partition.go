package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/segkit/segkit/log/checkpoint"
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
