package vfs

import (
	"errors"
	"io/fs"
	"path"
)

// ErrNotRegular is matched (errors.Is) by the error for a file that should
// be a regular file and is not: a FIFO, a device, a socket, a directory
// where a file is wanted, or a symbolic link whose target is missing.
// Opening a FIFO for reading blocks until a writer comes, so segkit checks
// the type before it reads, and refuses.
var ErrNotRegular = errors.New("not a regular file")

// CheckRegular returns nil if fi describes a regular file, and otherwise an
// *fs.PathError for name wrapping ErrNotRegular that says what it is.
func CheckRegular(name string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &fs.PathError{Op: "open", Path: name, Err: &notRegularError{mode: fi.Mode()}}
}

type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	what := "special file"
	switch m := e.mode; {
	case m&fs.ModeNamedPipe != 0:
		what = "FIFO"
	case m&fs.ModeSocket != 0:
		what = "socket"
	case m&fs.ModeCharDevice != 0:
		what = "character device"
	case m&fs.ModeDevice != 0:
		what = "device"
	case m.IsDir():
		what = "directory"
	case m&fs.ModeSymlink != 0:
		what = "symbolic link to nothing"
	}
	return "not a regular file (a " + what + ")"
}

func (e *notRegularError) Unwrap() error { return ErrNotRegular }

// followedInfo describes the target of a symbolic link met in a directory
// listing, under the link's own name.
type followedInfo struct {
	fs.FileInfo // the target's
	name        string
}

func (f followedInfo) Name() string { return f.name }

// Followed reports whether fi, from ReadDirFollow, describes the target of
// a symbolic link rather than the entry itself.
func Followed(fi fs.FileInfo) bool {
	_, ok := fi.(followedInfo)
	return ok
}

// ReadDirFollow is ReadDir with symbolic links followed, as os.Stat and
// os.Open follow them: an entry that is a link is described by its target
// (its size, its type, its modification time), under the link's name, and
// Followed reports it. A link whose target cannot be described (missing,
// or outside an os.Root) keeps the link's own description, which is not a
// regular file (CheckRegular). segkit reads through links everywhere, so a
// segment that is a link is read, sized and copied as the file it points
// to.
func ReadDirFollow(fsys FS, dir string) ([]fs.FileInfo, error) {
	infos, err := ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	for i, fi := range infos {
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if t, err := fsys.Stat(path.Join(dir, fi.Name())); err == nil {
			infos[i] = followedInfo{FileInfo: t, name: fi.Name()}
		}
	}
	return infos, nil
}
