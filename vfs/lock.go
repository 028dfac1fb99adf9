package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
)

// ErrLocked is matched (errors.Is) by the error of a Lock whose file another
// holder has locked: another process, or another Lock of the same file in
// this one.
var ErrLocked = errors.New("vfs: locked by another holder")

// LockTable is an in-process table of exclusive locks by name: what Mem's
// Lock uses, for an FS without locks of its own (an adapter of an afero.Fs
// embeds one). Names are cleaned with path.Clean. The zero value is ready;
// a LockTable is safe for concurrent use.
type LockTable struct {
	mu   sync.Mutex
	held map[string]bool
}

// Lock takes the lock on name without waiting, or fails with an
// *fs.PathError wrapping ErrLocked if it is held. Closing the returned
// io.Closer releases it; a second Close fails with fs.ErrClosed.
func (t *LockTable) Lock(name string) (io.Closer, error) {
	key := path.Clean("/" + name)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[key] {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	if t.held == nil {
		t.held = map[string]bool{}
	}
	t.held[key] = true
	return &tableLock{t: t, key: key, name: name}, nil
}

type tableLock struct {
	t         *LockTable
	key, name string
	once      sync.Once
}

func (l *tableLock) Close() error {
	err := error(&fs.PathError{Op: "unlock", Path: l.name, Err: fs.ErrClosed})
	l.once.Do(func() {
		l.t.mu.Lock()
		delete(l.t.held, l.key)
		l.t.mu.Unlock()
		err = nil
	})
	return err
}

// touch creates the named file if it does not exist, as locking a file does
// (Kafka's FileLock creates .lock), and leaves its content alone.
func touch(fsys FS, name string) error {
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
