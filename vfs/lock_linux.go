package vfs

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// fOFDSetLK is F_OFD_SETLK (Linux 3.15), which package syscall does not name.
const fOFDSetLK = 37

// recordLock takes a write lock on the whole of f as an open file
// description lock: it conflicts with the POSIX record locks other
// processes hold (the JVM's FileChannel.tryLock), and, unlike a classic
// F_SETLK lock, with another descriptor of this process too, and is not
// dropped when some other descriptor of the file is closed. A kernel
// without OFD locks (EINVAL) leaves the flock alone to do the job.
func recordLock(f *os.File) error {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	err := syscall.FcntlFlock(f.Fd(), fOFDSetLK, &lk)
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}
