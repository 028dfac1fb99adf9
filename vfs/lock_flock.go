//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// osLock opens (creating it if needed) and locks the named file: an
// exclusive flock, and where the kernel has them (Linux) an open file
// description record lock too, because the JVM's FileChannel.tryLock — what
// a Kafka broker holds on its log directory's .lock — takes a POSIX record
// lock, which Linux keeps apart from flock (BSD kernels do not).
func osLock(name string) (io.Closer, error) {
	f, err := os.OpenFile(filepath.FromSlash(name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, osErr(err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		err = recordLock(f)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			err = ErrLocked
		}
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	return &fileLock{f: f}, nil
}

// fileLock is a locked open file; Close unlocks and closes it.
type fileLock struct {
	f    *os.File
	once sync.Once
}

func (l *fileLock) Close() error {
	err := error(&fs.PathError{Op: "unlock", Path: l.f.Name(), Err: fs.ErrClosed})
	l.once.Do(func() {
		// Closing the only descriptor releases both locks.
		err = l.f.Close()
	})
	return err
}
