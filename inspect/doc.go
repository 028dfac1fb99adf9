// Package inspect checks, recovers and salvages Kafka partition
// directories: the logic behind segviz verify, recover, append and salvage,
// shared with the fuzz targets and the WASM viewer. It never prints and
// runs on any vfs.FS (the OS, a vfs.Mem, a vfs.FromIOFS over files a
// browser page was given).
//
//	rep, err := inspect.Verify(vfs.OS(), "/var/kafka-logs/orders-0", inspect.Options{})
//	for _, p := range rep.Problems {
//		fmt.Println(p) // "error /var/kafka-logs/orders-0/00000000000000000000.log:4096: log-crc: ..."
//	}
//	sr, err := inspect.Salvage(vfs.OS(), "orders-0", vfs.OS(), "/tmp/orders-0", inspect.SalvageOptions{})
//
// # Verify
//
// Verify reads every file of a partition directory once, read-only,
// and reports Problems, each with a file, a byte position, a stable kind
// name and a level (docs/problems.md lists the kinds). The .log walk checks
// every entry and record, and resumes after damage: FindEntry looks for the
// next position where an entry with a plausible header and a verifying
// checksum starts. That is how damage is told from a torn tail (bad bytes
// followed by valid data are corruption, bytes that run to the end of the
// file are a torn write), and how every damaged region is reported, where
// Kafka's recovery stops at the first.
//
// # Salvage
//
// Kafka's recovery truncates a segment at its first bad entry and deletes
// every later segment: nothing after a hole is ever served. Salvage goes
// further: it walks each .log with FindEntry, keeps every valid entry whose
// offsets increase, and appends them, offsets unchanged, to a new partition
// (log.AppendAsFollower), reporting the byte ranges lost and the offsets
// they held.
//
// # Recover and append
//
// Recover runs the log engine's recovery on every segment of a partition
// (ignoring the clean-shutdown marker and the recovery point) and reports
// what it cut and why, with what a salvage could still read from the cut
// bytes. AppendFrom streams JSON lines (a RecordReader) into a partition,
// in memory bounded by one batch; ParseRecords and Append do it for input
// held in memory.
//
// # Concurrency
//
// Every function may be called concurrently with the others on different
// directories. Verify and Salvage only read their input; nothing must write
// to it meanwhile (a running broker's active segment is read as it was at
// that moment, and may show a torn tail).
package inspect
