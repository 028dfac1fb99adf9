package main

import (
	"io"
	"os"
	"syscall"
)

// posixLock takes a classic POSIX record lock (F_SETLK) on the whole of
// name, as the JVM's FileChannel.tryLock does: the lock a Kafka broker
// holds on its log directory's .lock. An empty name only says that the
// platform has them.
func posixLock(name string) (io.Closer, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Len: 1<<63 - 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
