package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// OpKind is the kind of an operation a FaultFS sees.
type OpKind uint8

// The operation kinds. Mutating kinds (see OpKind.Mutating) are those a
// crash stops.
const (
	OpOpen     OpKind = iota // Open, or OpenFile without O_CREATE or O_TRUNC
	OpCreate                 // Create, or OpenFile with O_CREATE or O_TRUNC
	OpRead                   // File.Read
	OpReadAt                 // File.ReadAt
	OpWrite                  // File.Write
	OpWriteAt                // File.WriteAt
	OpSync                   // File.Sync (a file's or a directory's)
	OpTruncate               // File.Truncate
	OpRename                 // FS.Rename
	OpRemove                 // FS.Remove, FS.RemoveAll
	OpMkdir                  // FS.MkdirAll
	OpStat                   // FS.Stat, File.Stat
	OpReadDir                // File.Readdir, File.Readdirnames
	OpClose                  // File.Close
	OpChtimes                // FS.Chtimes
	OpLock                   // FS.Lock
	numOpKinds
)

var opKindNames = [numOpKinds]string{"open", "create", "read", "readat", "write", "writeat",
	"sync", "truncate", "rename", "remove", "mkdir", "stat", "readdir", "close", "chtimes", "lock"}

// String returns the kind's name, as used for fs.PathError.Op.
func (k OpKind) String() string {
	if k < numOpKinds {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Mutating reports whether operations of kind k change the filesystem:
// create, write, write-at, sync, truncate, rename, remove, mkdir, chtimes.
func (k OpKind) Mutating() bool {
	switch k {
	case OpCreate, OpWrite, OpWriteAt, OpSync, OpTruncate, OpRename, OpRemove, OpMkdir, OpChtimes:
		return true
	}
	return false
}

// Op is one operation seen by a FaultFS. An Injector sees it before it runs
// (Err nil); Log returns it after, with Err set to its outcome.
type Op struct {
	Index   int64  // position in the FaultFS's sequence of operations, from 0
	Kind    OpKind // what it is
	Path    string // the name it acts on (for a File, the name it was opened with)
	NewPath string // OpRename: the new name
	Offset  int64  // OpRead, OpReadAt, OpWrite, OpWriteAt: file offset; OpTruncate: size
	Len     int64  // OpRead, OpReadAt, OpWrite, OpWriteAt: bytes asked for
	Err     error  // in Log only: the error returned, injected or not
}

// String formats op for test output: "#3 write a.log [0,+100): error".
func (op Op) String() string {
	s := fmt.Sprintf("#%d %s %s", op.Index, op.Kind, op.Path)
	if op.Kind == OpRename {
		s += " -> " + op.NewPath
	}
	switch op.Kind {
	case OpRead, OpReadAt, OpWrite, OpWriteAt:
		s += fmt.Sprintf(" [%d,+%d)", op.Offset, op.Len)
	case OpTruncate:
		s += fmt.Sprintf(" to %d", op.Offset)
	}
	if op.Err != nil {
		s += ": " + op.Err.Error()
	}
	return s
}

// Injector decides the fate of each operation a FaultFS runs. MaybeError
// returns nil to let op run, or the error it fails with: a *Fault for the
// special behaviours (short write, bit flip), any other error to fail op
// before it runs. Injectors are called concurrently when the FaultFS is used
// concurrently.
type Injector interface {
	MaybeError(op Op) error
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op) error

// MaybeError calls f(op).
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// Fault is an injected error. FaultFS wraps it in an *fs.PathError (an
// *os.LinkError for Rename); errors.Is matches it with ErrInjected and with
// Err (syscall.EIO, syscall.ENOSPC, ErrCrashed ...).
type Fault struct {
	// Err is the error the operation reports.
	Err error
	// ShortWrite makes a Write or WriteAt write the first half of its
	// bytes, then fail with Err, as a write to a disk that fills up does.
	// Other operations fail whole.
	ShortWrite bool
	// FlipBit makes a Read or ReadAt succeed, but with the lowest bit of
	// the byte at file offset FlipOffset inverted if the read covers it
	// (of its first byte if FlipOffset < 0). Err is not reported: the
	// corruption is silent, as a bad disk's is. Other operations run
	// normally.
	FlipBit    bool
	FlipOffset int64
}

// Error describes the fault.
func (f *Fault) Error() string {
	switch {
	case f.FlipBit:
		return fmt.Sprintf("vfs: injected bit flip at %d", f.FlipOffset)
	case f.ShortWrite:
		return "vfs: injected short write: " + f.Err.Error()
	}
	return "vfs: injected " + f.Err.Error()
}

// Unwrap returns Err.
func (f *Fault) Unwrap() error { return f.Err }

// Is reports whether target is ErrInjected.
func (f *Fault) Is(target error) bool { return target == ErrInjected }

// Predicate chooses operations. Predicates built by OnIndex and Randomly
// keep state (a counter); the others do not. A plain function converts:
// Predicate(func(op Op) bool { ... }).
type Predicate func(op Op) bool

// Inject returns an Injector that fails the operations p chooses with err
// (a *Fault, or any error).
func Inject(err error, p Predicate) Injector {
	return InjectorFunc(func(op Op) error {
		if p(op) {
			return err
		}
		return nil
	})
}

// EIO fails the operations p chooses with syscall.EIO.
func EIO(p Predicate) Injector { return Inject(&Fault{Err: syscall.EIO}, p) }

// ENOSPC fails the operations p chooses with syscall.ENOSPC.
func ENOSPC(p Predicate) Injector { return Inject(&Fault{Err: syscall.ENOSPC}, p) }

// ShortWrite makes the writes p chooses write half their bytes and then fail
// with ENOSPC.
func ShortWrite(p Predicate) Injector {
	return Inject(&Fault{Err: syscall.ENOSPC, ShortWrite: true}, And(KindIs(OpWrite, OpWriteAt), p))
}

// FlipBit makes the reads p chooses return the byte at file offset off with
// its lowest bit flipped (RELIABILITY E5); off < 0 flips each read's first
// byte. Sweep off over a file to check that every byte is covered by a
// checksum.
func FlipBit(off int64, p Predicate) Injector {
	return Inject(&Fault{Err: syscall.EIO, FlipBit: true, FlipOffset: off}, And(KindIs(OpRead, OpReadAt), p))
}

// Injectors combines injectors: the first non-nil error wins. Every
// injector sees every operation, so that their counters stay in step.
func Injectors(injs ...Injector) Injector {
	return InjectorFunc(func(op Op) error {
		var first error
		for _, inj := range injs {
			if err := inj.MaybeError(op); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
}

// Crash is an Injector that lets k mutating operations run and fails every
// later one with ErrCrashed: the machine lost power. Reads still work, so the
// test can look around; the state the crash left is that of the filesystem
// below, whose Mem.CrashClone gives the disk after reboot.
type Crash struct {
	k       int64
	n       atomic.Int64
	crashed atomic.Bool
}

// CrashAfter returns a Crash that lets k mutating operations through. Sweep
// k from 0 until Crashed stays false to visit every crash point.
func CrashAfter(k int) *Crash { return &Crash{k: int64(k)} }

// MaybeError implements Injector.
func (c *Crash) MaybeError(op Op) error {
	if !op.Kind.Mutating() {
		return nil
	}
	if c.crashed.Load() || c.n.Add(1) > c.k {
		c.crashed.Store(true)
		return &Fault{Err: ErrCrashed}
	}
	return nil
}

// Crashed reports whether the crash happened.
func (c *Crash) Crashed() bool { return c.crashed.Load() }

// And chooses the operations all of ps choose. It stops at the first that
// does not, so stateful predicates after it (OnIndex) count only what the
// earlier ones chose: And(KindIs(OpSync), OnIndex(2)) is the third sync.
func And(ps ...Predicate) Predicate {
	return func(op Op) bool {
		for _, p := range ps {
			if !p(op) {
				return false
			}
		}
		return true
	}
}

// Or chooses the operations any of ps chooses. Every predicate sees every
// operation.
func Or(ps ...Predicate) Predicate {
	return func(op Op) bool {
		any := false
		for _, p := range ps {
			if p(op) {
				any = true
			}
		}
		return any
	}
}

// Not chooses the operations p does not.
func Not(p Predicate) Predicate { return func(op Op) bool { return !p(op) } }

// Always chooses every operation.
func Always() Predicate { return func(Op) bool { return true } }

// OnIndex chooses the k-th operation it is asked about (from 0), and no
// other.
func OnIndex(k int64) Predicate {
	var n atomic.Int64
	return func(Op) bool { return n.Add(1)-1 == k }
}

// KindIs chooses operations of the given kinds.
func KindIs(kinds ...OpKind) Predicate {
	var set [numOpKinds]bool
	for _, k := range kinds {
		if k < numOpKinds {
			set[k] = true
		}
	}
	return func(op Op) bool { return op.Kind < numOpKinds && set[op.Kind] }
}

// Mutating chooses the operations that change the filesystem.
func Mutating() Predicate { return func(op Op) bool { return op.Kind.Mutating() } }

// PathMatch chooses operations whose Path (or NewPath) matches the
// path.Match pattern glob; a pattern without a slash is matched against the
// base name. It panics if glob is malformed.
func PathMatch(glob string) Predicate {
	if _, err := path.Match(glob, ""); err != nil {
		panic("vfs: PathMatch: " + err.Error())
	}
	base := !strings.Contains(glob, "/")
	match := func(p string) bool {
		if p == "" {
			return false
		}
		p = path.Clean(p)
		if base {
			p = path.Base(p)
		}
		ok, _ := path.Match(glob, p)
		return ok
	}
	return func(op Op) bool { return match(op.Path) || match(op.NewPath) }
}

// Randomly chooses each operation with probability p, deterministically for
// a seed: the choice for the n-th operation on a path depends only on seed,
// path and n, so other files' operations do not shift it.
func Randomly(p float64, seed uint64) Predicate {
	var mu sync.Mutex
	counts := make(map[string]uint64)
	return func(op Op) bool {
		mu.Lock()
		n := counts[op.Path]
		counts[op.Path] = n + 1
		mu.Unlock()
		h := uint64(14695981039346656037) // FNV-1a: the same in every process
		for i := 0; i < len(op.Path); i++ {
			h = (h ^ uint64(op.Path[i])) * 1099511628211
		}
		x := splitmix64(seed ^ splitmix64(h^splitmix64(n)))
		return float64(x>>11)/(1<<53) < p
	}
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// FaultFS wraps an FS, asks an Injector about every operation, fails the
// ones it chooses, and logs them all.
type FaultFS struct {
	fs  FS
	inj Injector

	next   atomic.Int64
	mu     sync.Mutex
	log    []Op // ring buffer of the last logCap operations
	logCap int
	logged int64 // operations logged since the log was last cleared
	counts [numOpKinds]int64
}

var _ FS = (*FaultFS)(nil)

// DefaultLogLimit is how many operations a FaultFS's Log keeps by default.
const DefaultLogLimit = 1 << 16

// WithFaults wraps fsys so that inj decides which operations fail. A nil inj
// injects nothing (the FaultFS still logs).
func WithFaults(fsys FS, inj Injector) *FaultFS {
	return &FaultFS{fs: fsys, inj: inj, logCap: DefaultLogLimit}
}

// Unwrap returns the wrapped FS.
func (f *FaultFS) Unwrap() FS { return f.fs }

// Name returns "faults(" + the wrapped FS's name + ")".
func (f *FaultFS) Name() string { return "faults(" + f.fs.Name() + ")" }

// SetLogLimit makes Log keep the last n operations (n <= 0: none) and
// clears it.
func (f *FaultFS) SetLogLimit(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logCap = max(n, 0)
	f.log, f.logged = nil, 0
}

// Log returns the last operations run, oldest first, with their outcomes.
func (f *FaultFS) Log() []Op {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.logCap == 0 || len(f.log) < f.logCap {
		return append([]Op(nil), f.log...)
	}
	i := int(f.logged % int64(f.logCap)) // where the oldest is
	return append(append([]Op(nil), f.log[i:]...), f.log[:i]...)
}

// Count returns how many operations of kind k have run.
func (f *FaultFS) Count(k OpKind) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k >= numOpKinds {
		return 0
	}
	return f.counts[k]
}

// Ops returns how many operations have run.
func (f *FaultFS) Ops() int64 { return f.next.Load() }

// before numbers op and asks the injector about it.
func (f *FaultFS) before(op *Op) error {
	op.Index = f.next.Add(1) - 1
	if f.inj == nil {
		return nil
	}
	return f.inj.MaybeError(*op)
}

// after logs op with its outcome and returns err.
func (f *FaultFS) after(op Op, err error) error {
	op.Err = err
	f.mu.Lock()
	f.counts[op.Kind]++
	if f.logCap > 0 {
		if len(f.log) < f.logCap {
			f.log = append(f.log, op)
		} else {
			f.log[f.logged%int64(f.logCap)] = op
		}
		f.logged++
	}
	f.mu.Unlock()
	return err
}

// simple runs an operation with no special fault behaviour.
func (f *FaultFS) simple(op Op, run func() error) error {
	if err := f.before(&op); err != nil {
		return f.after(op, wrapFault(op, err))
	}
	return f.after(op, run())
}

// wrapFault wraps an injected error the way os would report op's failure.
func wrapFault(op Op, err error) error {
	if op.Kind == OpRename {
		return &os.LinkError{Op: "rename", Old: op.Path, New: op.NewPath, Err: err}
	}
	return &fs.PathError{Op: op.Kind.String(), Path: op.Path, Err: err}
}

// Create runs Create on the wrapped FS as an OpCreate.
func (f *FaultFS) Create(name string) (File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Open runs Open on the wrapped FS as an OpOpen.
func (f *FaultFS) Open(name string) (File, error) {
	return f.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile runs OpenFile on the wrapped FS as an OpCreate if flag has
// O_CREATE or O_TRUNC, an OpOpen otherwise. The File it returns reports its
// operations to f too.
func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	op := Op{Kind: OpOpen, Path: name}
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		op.Kind = OpCreate
	}
	var file File
	err := f.simple(op, func() (err error) {
		file, err = f.fs.OpenFile(name, flag, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, f: file, name: name}, nil
}

// MkdirAll runs MkdirAll on the wrapped FS as an OpMkdir.
func (f *FaultFS) MkdirAll(p string, perm fs.FileMode) error {
	return f.simple(Op{Kind: OpMkdir, Path: p}, func() error { return f.fs.MkdirAll(p, perm) })
}

// Remove runs Remove on the wrapped FS as an OpRemove.
func (f *FaultFS) Remove(name string) error {
	return f.simple(Op{Kind: OpRemove, Path: name}, func() error { return f.fs.Remove(name) })
}

// RemoveAll runs RemoveAll on the wrapped FS as an OpRemove.
func (f *FaultFS) RemoveAll(p string) error {
	return f.simple(Op{Kind: OpRemove, Path: p}, func() error { return f.fs.RemoveAll(p) })
}

// Rename runs Rename on the wrapped FS as an OpRename.
func (f *FaultFS) Rename(oldname, newname string) error {
	return f.simple(Op{Kind: OpRename, Path: oldname, NewPath: newname}, func() error { return f.fs.Rename(oldname, newname) })
}

// Stat runs Stat on the wrapped FS as an OpStat.
func (f *FaultFS) Stat(name string) (fi fs.FileInfo, err error) {
	err = f.simple(Op{Kind: OpStat, Path: name}, func() (err error) {
		fi, err = f.fs.Stat(name)
		return err
	})
	return fi, err
}

// Chtimes runs Chtimes on the wrapped FS as an OpChtimes.
func (f *FaultFS) Chtimes(name string, atime, mtime time.Time) error {
	return f.simple(Op{Kind: OpChtimes, Path: name}, func() error { return f.fs.Chtimes(name, atime, mtime) })
}

// Lock runs Lock on the wrapped FS as an OpLock. Taking a lock is not a
// mutating operation (it creates at most an empty file), so a crash does
// not stop it; an injector can still fail it.
func (f *FaultFS) Lock(name string) (lk io.Closer, err error) {
	err = f.simple(Op{Kind: OpLock, Path: name}, func() (err error) {
		lk, err = f.fs.Lock(name)
		return err
	})
	return lk, err
}

// faultFile is a File of a FaultFS.
type faultFile struct {
	fs   *FaultFS
	f    File
	name string
}

func (f *faultFile) Name() string { return f.f.Name() }

func (f *faultFile) Read(p []byte) (n int, err error) {
	off, _ := f.f.Seek(0, io.SeekCurrent)
	op := Op{Kind: OpRead, Path: f.name, Offset: off, Len: int64(len(p))}
	return f.read(op, p, func() (int, error) { return f.f.Read(p) })
}

func (f *faultFile) ReadAt(p []byte, off int64) (n int, err error) {
	op := Op{Kind: OpReadAt, Path: f.name, Offset: off, Len: int64(len(p))}
	return f.read(op, p, func() (int, error) { return f.f.ReadAt(p, off) })
}

func (f *faultFile) read(op Op, p []byte, run func() (int, error)) (int, error) {
	ierr := f.fs.before(&op)
	flt, _ := ierr.(*Fault)
	if ierr != nil && (flt == nil || !flt.FlipBit) {
		return 0, f.fs.after(op, wrapFault(op, ierr))
	}
	n, err := run()
	if flt != nil && n > 0 {
		i := flt.FlipOffset - op.Offset
		if flt.FlipOffset < 0 {
			i = 0
		}
		if i >= 0 && i < int64(n) {
			p[i] ^= 1
		}
	}
	return n, f.fs.after(op, err)
}

func (f *faultFile) Write(p []byte) (int, error) {
	off, _ := f.f.Seek(0, io.SeekCurrent)
	op := Op{Kind: OpWrite, Path: f.name, Offset: off, Len: int64(len(p))}
	return f.write(op, p, f.f.Write)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	op := Op{Kind: OpWriteAt, Path: f.name, Offset: off, Len: int64(len(p))}
	return f.write(op, p, func(p []byte) (int, error) { return f.f.WriteAt(p, off) })
}

func (f *faultFile) write(op Op, p []byte, run func([]byte) (int, error)) (int, error) {
	ierr := f.fs.before(&op)
	if ierr == nil {
		n, err := run(p)
		return n, f.fs.after(op, err)
	}
	n := 0
	if flt, ok := ierr.(*Fault); ok && flt.ShortWrite && len(p) > 1 {
		var err error
		if n, err = run(p[:len(p)/2]); err != nil {
			return n, f.fs.after(op, err)
		}
	}
	return n, f.fs.after(op, wrapFault(op, ierr))
}

func (f *faultFile) Seek(offset int64, whence int) (int64, error) { return f.f.Seek(offset, whence) }

func (f *faultFile) Close() error {
	op := Op{Kind: OpClose, Path: f.name}
	ierr := f.fs.before(&op)
	err := f.f.Close() // an injected close error still releases the file
	if ierr != nil {
		err = wrapFault(op, ierr)
	}
	return f.fs.after(op, err)
}

func (f *faultFile) Readdir(count int) (infos []fs.FileInfo, err error) {
	err = f.fs.simple(Op{Kind: OpReadDir, Path: f.name}, func() (err error) {
		infos, err = f.f.Readdir(count)
		return err
	})
	return infos, err
}

func (f *faultFile) Readdirnames(n int) (names []string, err error) {
	err = f.fs.simple(Op{Kind: OpReadDir, Path: f.name}, func() (err error) {
		names, err = f.f.Readdirnames(n)
		return err
	})
	return names, err
}

func (f *faultFile) Stat() (fi fs.FileInfo, err error) {
	err = f.fs.simple(Op{Kind: OpStat, Path: f.name}, func() (err error) {
		fi, err = f.f.Stat()
		return err
	})
	return fi, err
}

func (f *faultFile) Sync() error {
	return f.fs.simple(Op{Kind: OpSync, Path: f.name}, f.f.Sync)
}

func (f *faultFile) Truncate(size int64) error {
	return f.fs.simple(Op{Kind: OpTruncate, Path: f.name, Offset: size}, func() error { return f.f.Truncate(size) })
}
