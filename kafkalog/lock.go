package kafkalog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"sync"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// LockFile is the name of the file a writer locks in the log directory
// (the parent of the partition directories): Kafka's LogManager.LockFileName,
// which a running broker holds locked (FileChannel.tryLock) for as long as
// it runs.
const LockFile = ".lock"

// LockError is returned when a partition cannot be locked for writing:
// a broker or another process holds its log directory's lock, or this
// process already has the partition open for writing (Err matches
// vfs.ErrLocked either way), or the platform has no file locks (Err
// matches errors.ErrUnsupported).
type LockError struct {
	// Path is the lock file, <log dir>/.lock.
	Path string
	Err  error
}

func (e *LockError) Error() string {
	if errors.Is(e.Err, vfs.ErrLocked) {
		return fmt.Sprintf("log: %s is locked: a Kafka broker or another writer is using this log directory (%v)", e.Path, e.Err)
	}
	return fmt.Sprintf("log: cannot lock %s: %v", e.Path, e.Err)
}

// Unwrap returns Err.
func (e *LockError) Unwrap() error { return e.Err }

// The log directory locks this process holds. A broker's LogManager holds
// one lock per log directory for all its partitions; likewise, the Logs of
// one process share the lock of their log directory, and each partition
// directory is registered so that it has one writer at a time.
var held struct {
	sync.Mutex
	dirs map[lockKey]*heldDir
}

// lockKey names a log directory of a filesystem.
type lockKey struct {
	fsys   vfs.FS
	logDir string
}

// heldDir is a log directory's lock and the partitions held under it.
type heldDir struct {
	lock  io.Closer
	parts map[string]bool
}

// LockPartition locks the partition directory dir of fsys for writing, as a
// writable Open does: it takes the exclusive lock of its log directory
// (path.Dir(dir)), an flock of LockFile there, without waiting — or shares
// it, when this process already holds it for another partition of that
// directory — and fails with a *LockError if a broker or another process
// holds it, or if this process has dir locked already. Closing the result
// releases it (the log directory's lock goes with its last partition).
//
// Open takes the lock by itself; a tool that reads a partition before it
// opens it for writing, or writes beside it after Close, takes it first
// and opens with Options.Locked.
func LockPartition(fsys vfs.FS, dir string) (io.Closer, error) {
	dir = path.Clean(dir)
	logDir := path.Dir(dir)
	p := path.Join(logDir, LockFile)
	if !reflect.TypeOf(fsys).Comparable() {
		// No way to tell this filesystem again: an exclusive lock each.
		lk, err := fsys.Lock(p)
		if err != nil {
			return nil, &LockError{Path: p, Err: err}
		}
		return lk, nil
	}
	key := lockKey{fsys, logDir}
	held.Lock()
	defer held.Unlock()
	d := held.dirs[key]
	if d != nil && d.parts[dir] {
		return nil, &LockError{Path: p, Err: fmt.Errorf("%w: %s is already open for writing in this process", vfs.ErrLocked, dir)}
	}
	if d == nil {
		lk, err := fsys.Lock(p)
		if err != nil {
			return nil, &LockError{Path: p, Err: err}
		}
		d = &heldDir{lock: lk, parts: map[string]bool{}}
		if held.dirs == nil {
			held.dirs = map[lockKey]*heldDir{}
		}
		held.dirs[key] = d
	}
	d.parts[dir] = true
	return &partitionLock{key: key, dir: dir}, nil
}

// partitionLock is a partition registered under its log directory's lock.
type partitionLock struct {
	key  lockKey
	dir  string
	once sync.Once
}

func (l *partitionLock) Close() error {
	err := error(&fs.PathError{Op: "unlock", Path: l.dir, Err: fs.ErrClosed})
	l.once.Do(func() {
		held.Lock()
		defer held.Unlock()
		d := held.dirs[l.key]
		delete(d.parts, l.dir)
		err = nil
		if len(d.parts) == 0 {
			delete(held.dirs, l.key)
			err = d.lock.Close()
		}
	})
	return err
}

// unlockDir releases the partition's lock, if Open took it.
func (l *Log) unlockDir() error {
	if l.dirLock == nil {
		return nil
	}
	err := l.dirLock.Close()
	l.dirLock = nil
	return err
}

// CorruptLogError is returned by a writable Open without
// Options.TruncateCorrupt when recovering a segment would truncate bytes
// that are not proved torn: a valid entry starts after the damage, or the
// segment is followed by non-empty segments that the truncation would
// delete. No byte of any .log was cut and no segment deleted; indexes that
// Open rebuilt before it met the damage (a missing .index, say) stay
// rebuilt, as they are derived from the .log.
// errors.Is matches it with ErrCorruptLog, and errors.As finds the
// *format.CorruptionError of the first bad entry when there is one.
type CorruptLogError struct {
	// Path is the segment's .log file; Position is where its valid prefix
	// ends: the start of the damage, where recovery would truncate.
	Path     string
	Position int64
	// Size is the .log's size.
	Size int64
	// NextValid is the position of the first valid entry after Position,
	// or -1 when none starts in the rest of the file.
	NextValid int64
	// LaterSegments is how many later non-empty segments recovery would
	// delete after truncating this one.
	LaterSegments int
	// Reason is why the valid prefix ends there: a *format.CorruptionError,
	// or nil for a partial entry or zeros (see Tail in segment.RecoverResult).
	Reason error
}

func (e *CorruptLogError) Error() string {
	msg := fmt.Sprintf("log: %s: damage at byte %d", e.Path, e.Position)
	if e.Reason != nil {
		var ce *format.CorruptionError
		if errors.As(e.Reason, &ce) && ce.Err != nil {
			msg += fmt.Sprintf(" (%v)", ce.Err)
		} else {
			msg += fmt.Sprintf(" (%v)", e.Reason)
		}
	}
	switch {
	case e.NextValid >= 0:
		msg += fmt.Sprintf(", followed by a valid batch at byte %d: corruption, not a torn write", e.NextValid)
	default:
		msg += " in a segment that is not the last"
	}
	if e.LaterSegments > 0 {
		msg += fmt.Sprintf("; recovery would cut %d bytes and delete %d later segments", e.Size-e.Position, e.LaterSegments)
	} else {
		msg += fmt.Sprintf("; recovery would cut %d bytes", e.Size-e.Position)
	}
	return msg + "; nothing was cut (truncating corruption is a repair: Options.TruncateCorrupt)"
}

// Unwrap returns ErrCorruptLog and, if set, Reason.
func (e *CorruptLogError) Unwrap() []error {
	if e.Reason == nil {
		return []error{ErrCorruptLog}
	}
	return []error{ErrCorruptLog, e.Reason}
}
