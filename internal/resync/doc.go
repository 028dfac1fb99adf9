// Package resync walks the valid entries of a .log past damage: after a bad
// entry it finds the next position where an entry with a plausible header
// and a verifying checksum starts (record.Finder), reports the damaged
// region between, and goes on. Verification (inspect) uses it to tell
// corruption from a torn tail; salvage and recover (repair) use it to say
// what a damaged region held and what follows it.
//
// WalkFrom walks from a position another reader reached: verify's
// concurrent read (package entrychunks) hands a .log to the walker at
// the first chunk it cannot take whole, and takes it back after the
// damaged region.
//
// An OS file is walked through read-only mappings (internal/maprange,
// WalkMapWindow at a time: 16 MiB), not copied: on 1 GiB, `segviz verify` took 1.62-1.74 s
// on one core against 1.75-2.08 s with pread, and 0.99-1.21 s on two
// against 1.19-1.37 s (same session). A file that shrinks under a mapping
// makes the reads past its new end fault; Walk recovers the fault
// (debug.SetPanicOnFault) and returns an I/O error naming the file.
package resync
