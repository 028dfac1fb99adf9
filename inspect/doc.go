// Package inspect reads Kafka partition directories and says what is in
// them and what is wrong with them, without writing a byte: the logic
// behind segviz verify, and the discovery and listing that serve, recover
// and salvage share. It never prints and runs on any vfs.FS (the OS, a
// vfs.Mem, a vfs.FromIOFS over files a browser page was given). Writing
// repairs (recover, salvage) are package repair's.
//
//	rep, err := inspect.Verify(vfs.OS(), "/var/kafka-logs/orders-0", inspect.Options{})
//	for _, p := range rep.Problems {
//		fmt.Println(p) // "error /var/kafka-logs/orders-0/00000000000000000000.log:4096: log-crc: ..."
//	}
//
// # Verify
//
// Verify reads every file of a partition directory once, read-only,
// and reports Problems (finding.Problem), each with a file, a byte
// position, a stable kind name and a level (docs/problems.md lists the
// kinds). The .log walk checks every entry and record, and resumes after
// damage: FindEntry looks for the next position where an entry with a
// plausible header and a verifying checksum starts. That is how damage is
// told from a torn tail (bad bytes followed by valid data are corruption,
// bytes that run to the end of the file are a torn write), and how every
// damaged region is reported, where Kafka's recovery stops at the first.
//
// # Finding and listing partitions
//
// FindPartitions finds the partition directories at a path (a partition,
// a log directory, or a tree of them); CheckPartitionDir is the test a
// writer applies before it touches a directory; ListPartition lists a
// partition's files as Kafka's loader takes them (symbolic links followed,
// special files refused, indexes larger than Kafka could have written
// marked).
//
// # Concurrency
//
// Every function may be called concurrently with the others on different
// directories. Nothing must write to the directory meanwhile (a running
// broker's active segment is read as it was at that moment, and may show a
// torn tail).
package inspect
