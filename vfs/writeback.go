package vfs

// StartWriteback asks the operating system to start writing f's dirty
// data to the device now, without waiting for it: on Linux, for a file of
// OS (an *os.File), sync_file_range with SYNC_FILE_RANGE_WRITE over the
// whole file. It is a hint, never a durability step: it makes nothing
// durable, and f.Sync is still needed. What it buys is overlap: a writer
// of several files that starts each one's writeback as it finishes it and
// Syncs them all afterwards has their writes (and, on a journaling
// filesystem, their block allocations) in flight together, and the Syncs
// wait for one another's work instead of each starting its own.
//
// It does nothing and returns nil where it cannot start anything: on
// other platforms (js, wasip1, windows, darwin, the BSDs) and for the
// files of other FS implementations (Mem, FaultFS, ...). An error (a
// closed file, a directory, a filesystem that refuses) needs no handling
// beyond the Sync that must follow anyway.
func StartWriteback(f File) error { return startWriteback(f) }
