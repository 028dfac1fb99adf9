// Package maprange maps ranges of a file read-only, for readers that want
// a file's bytes without copying them: the parallel dump and verify's
// decoders (package entrychunks, which maps a file 64 or 16 MiB at a
// time), the walker (package resync, through record.ReaderScanner.Map)
// and segment recovery (Whole: one mapping of the .log for both of its passes, served
// to record.ReaderScanner.Map, so that the pages are faulted in once;
// two passes of pread were most of a recovery's time). On Linux each
// range is its own mmap(2), its pages faulted in by whichever goroutine
// reads them first, so that the faults are spread over the readers
// (MAP_POPULATE, which faults them all in the mapping's goroutine, made the
// parallel dump of 1 GiB 15-40% slower when it mapped 4 MiB at a time);
// elsewhere there is no mapping and For returns nil.
//
// A mapping faults if the file shrinks under it: readers of one must run
// with debug.SetPanicOnFault and recover; Faulted tells such a fault from
// another panic, and ErrShrank is the I/O error to report it as.
package maprange
