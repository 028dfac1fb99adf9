// Package vfs is the filesystem segkit's engine runs on: a narrow FS/File
// interface with afero's method signatures and os's semantics, and the
// implementations the engine, its tests and the browser need.
//
//   - OS: the real disk, through the os package (Sub roots it in a directory).
//   - Mem (NewMem): in memory, crash-aware: CrashClone returns the disk as a
//     power cut could leave it.
//   - FaultFS (WithFaults): wraps any FS and fails chosen operations (EIO,
//     ENOSPC, short writes, bit flips, a crash after the k-th write), logging
//     every operation.
//   - FromIOFS: read-only, over any io/fs.FS (embed.FS, os.DirFS, zip files,
//     files dropped on a web page); FromRoot, the same over an *os.Root,
//     opened without the race of a Stat before the open.
//
// No FS opens a FIFO, device or socket for reading: OS opens with
// O_NONBLOCK and checks the open file's type, and such a file is an error
// matching ErrNotRegular (a FIFO's open would otherwise block until a
// writer came). ReadDirFollow lists a directory with symbolic links
// followed; ReadFile never preallocates from an absurd Stat size, and
// ReadFileLimit (ErrTooLarge) bounds what it reads.
//   - interop/vfsafero (a separate module): any afero.Fs.
//
// The package vfstest holds the conformance suite all of them pass.
//
//	fsys := vfs.NewMem()                       // or vfs.Sub(vfs.OS(), dir)
//	f, _ := fsys.Create("t-0/00000000000000000000.log")
//	f.Write(batch)
//	f.Sync()                                   // the data is durable
//	vfs.SyncDir(fsys, "t-0")                   // and so is its name
//	disk := fsys.CrashClone(vfs.CrashConfig{Seed: 1, UnsyncedDataPercent: 50, TornWrites: true})
//
// Names are slash-separated. Mem, FaultFS over Mem, Sub and FromIOFS clean
// them with path.Clean and treat them as rooted ("a", "/a" and "./a" are the
// same file); OS hands them to the os package as they are.
//
// Errors are the os package's: *fs.PathError (*os.LinkError from Rename)
// wrapping an error that errors.Is matches with fs.ErrNotExist,
// fs.ErrExist, fs.ErrPermission, fs.ErrClosed, or a syscall.Errno (Mem
// answers with the errno Linux would: ENOENT, EEXIST, ENOTDIR, EISDIR,
// ENOTEMPTY, EBADF, EINVAL).
//
// # Concurrency
//
// Every FS here is safe for concurrent use, and so is a File's ReadAt and
// WriteAt; Read, Write and Seek share the file offset, as with *os.File.
// Mem takes one lock for the namespace (exclusive for creates, removes,
// renames, directory syncs and CrashClone; shared for everything else) and
// one per file (shared for reads, exclusive for writes), so readers of a file
// proceed in parallel with each other, and a crash clone sees one instant.
// A Predicate from OnIndex or Randomly counts operations: concurrent use is
// safe, but which operation is "the k-th" then depends on scheduling.
//
// # Crash model
//
// Mem keeps, besides the current state, what is durable, and CrashClone(cfg)
// returns a new Mem holding one state a power cut at that moment could leave
// on disk, chosen at random from cfg.Seed. These are the rules; the crash
// tests and FuzzMemCrash check them against a reference model.
//
// File data:
//
//   - File.Sync makes a file's data (content and size) durable. Nothing else
//     does: not Close, not a directory Sync.
//   - Synced bytes always survive, unless a later write or truncation
//     replaced them; then the replaced range holds the old or the new bytes.
//   - Unsynced data survives or not per file, with probability
//     cfg.UnsyncedDataPercent. Without cfg.TornWrites it survives whole. With
//     it, a surviving file is, with equal chance: whole; torn, cut at a
//     uniformly chosen unsynced byte (any byte, not only at write
//     boundaries: new bytes before the cut, old after); or block-torn, each
//     4 KiB block holding unsynced bytes kept with probability
//     UnsyncedDataPercent, holes read as zeros, and the size the synced one,
//     the current one (a zero tail, as after a preallocation or a lost data
//     block), or the end of the last block kept (RELIABILITY C1–C4).
//   - So for a file with synced content S and current content C, every byte
//     i after the crash is S[i] or C[i] where both exist, S[i] past the end of
//     C, and C[i] or 0 past the end of S; the size lies between len(S) and
//     len(C). A file with no unsynced change is exactly S.
//   - Modification times are carried over as they are.
//
// Directory entries:
//
//   - A create (Create, OpenFile with O_CREATE, MkdirAll), a remove (Remove,
//     and RemoveAll, one entry at a time, deepest first) and a rename are
//     directory operations. Each is atomic: a rename is never half done, so
//     after a crash the file is under its old name or its new one, never
//     both and never neither.
//   - A directory operation becomes durable when every directory it changed
//     has been synced after it (open the directory and Sync it, or SyncDir):
//     the parent for a create or remove, both parents for a rename across
//     directories. Syncing a file never makes its name durable, and a
//     directory entry is only reachable if its parent directories' entries
//     are durable too.
//   - A directory Sync also makes durable the earlier pending operations
//     that a newly durable one depends on: the previous pending operation on
//     any entry it changes (a create of "a" after "a" was renamed away needs
//     the rename), and, for a directory rename, the previous directory
//     rename. Real filesystems, which commit a journal in order, keep at
//     least as much.
//   - At a crash, each pending operation survives with probability
//     cfg.UnsyncedDataPercent, and only if the operations it depends on
//     survive: the surviving ones are applied in order to the durable
//     entries. Hence 0 keeps exactly the durable namespace and 100 the
//     current one.
//
// Everything in a clone is durable; further writes to the clone start a new
// history. This model is deliberately harsher than ext4 or XFS in ordered
// mode (which commit whole journal transactions, so syncing any directory
// makes every earlier rename durable): code that survives Mem survives them.
// It does not model a disk that lies about flushes, nor a failed fsync that
// drops dirty data while later syncs succeed: FaultFS injects those errors,
// and the engine must treat a failed Sync as fatal (RELIABILITY E2).
//
// # Faults
//
// WithFaults(fsys, inj) asks inj about every operation (an Op: kind, path,
// offset, length) before running it. Injectors are built from a kind of
// fault and a Predicate choosing the operations: EIO(p), ENOSPC(p),
// ShortWrite(p), FlipBit(off, p), Inject(err, p); predicates combine with
// And, Or, Not from OnIndex(k), KindIs(...), PathMatch(glob), Mutating(),
// Randomly(prob, seed), or any func(Op) bool. CrashAfter(k) lets k mutating
// operations run and fails every later one with ErrCrashed; the test then
// takes a CrashClone of the Mem below and recovers from it, for k = 0, 1, 2,
// ... until no crash happens. Log and Count report what ran.
//
// # Locks
//
// Lock(name) takes an exclusive advisory lock on a file without waiting,
// creating the file: what a Kafka broker holds on each log directory's
// ".lock", and what segkit's writers take (kafkalog.LockPartition). OS uses
// flock, plus on Linux an open file description record lock, so that the
// JVM's FileChannel.tryLock (a POSIX record lock, which Linux keeps apart
// from flock) and segkit keep each other out; under js, wasip1 and windows
// it fails with an error matching errors.ErrUnsupported, without creating
// the file. Mem, and adapters through LockTable, lock in process (a crash
// clone holds no locks); FromIOFS refuses, read-only; FaultFS passes it on
// as an OpLock. A held lock fails a second Lock with ErrLocked, whether the
// holder is another process or this one.
//
// # Mapping indexes
//
// Map returns a ReadOnlyMap of a file: a memory mapping (golang.org/x/exp/mmap)
// for OS files on native platforms, a copy elsewhere. BenchmarkIndexLookup
// decided to keep the mapping. Binary searches of a 10 MiB offset index
// (8-byte entries, 21 probes a lookup), on linux/amd64 with 2 cores:
//
//	                      warm (index open)   cold (open + 1 lookup + close)
//	Map (mmap)                  282 ns               13 µs
//	ReadAt into a buffer once   297 ns             2543 µs   (+10 MiB heap)
//	ReadAt per probe           5514 ns                9 µs
//
// The mapping is as fast as a heap copy once open, 20x faster than a system
// call per probe, and opens 190x faster than reading the file, without heap;
// only a single lookup on a freshly opened file is a little faster with
// ReadAt (9 µs against 13 µs). The WASM builds never map.
//
// # WebAssembly
//
// Everything builds for GOOS=js and GOOS=wasip1 (GOARCH=wasm). Under js, OS
// works where the host gives Go a filesystem (Node.js, which
// go_js_wasm_exec uses for tests); in a browser it fails with errors matching
// errors.ErrUnsupported, and the page uses Mem or FromIOFS instead. Under
// wasip1, OS works inside the directories the runtime preopened.
package vfs
