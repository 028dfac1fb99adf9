// Package checkpoint reads and writes the small metadata files Apache Kafka
// keeps beside its logs, byte for byte as a broker writes them, and holds
// the leader epoch cache (LeaderEpochFileCache) and the partition
// directory naming rules.
//
// # Files
//
//	file (where)                          format                              Kafka class
//	recovery-point-offset-checkpoint (*)  text v0: "topic partition offset"   OffsetCheckpointFile
//	log-start-offset-checkpoint (*)       text v0: "topic partition offset"   OffsetCheckpointFile
//	replication-offset-checkpoint (*)     text v0: "topic partition offset"   OffsetCheckpointFile
//	cleaner-offset-checkpoint (*)         text v0: "topic partition offset"   OffsetCheckpointFile
//	leader-epoch-checkpoint (p)           text v0: "epoch startOffset"        LeaderEpochCheckpointFile
//	partition.metadata (p)                "version: 0\ntopic_id: <uuid>"      PartitionMetadataFile
//	.kafka_cleanshutdown (*)              {"version":0,"brokerEpoch":N}       CleanShutdownFileHandler
//	meta.properties (*)                   java.util.Properties (read only)    MetaProperties
//
//	(*) in the log directory, (p) in each partition directory
//
// The text checkpoint format (CheckpointFile.java), with every line ending
// in "\n" as Kafka writes it on Linux:
//
//	line   content
//	   1   version, decimal ("0")
//	   2   number of entries, decimal
//	 3..   one entry per line, fields separated by single spaces
//
// For example "0\n2\norders 0 42\norders 1 17\n". Readers accept any
// whitespace between fields and \n, \r or \r\n line ends, as Kafka's
// BufferedReader and split("\\s+") do. An empty file, which Kafka creates
// when it opens a checkpoint that does not exist yet, reads as no entries.
//
// A topic ID (Uuid) is printed as 22 characters of URL-safe base64
// without padding; the KRaft metadata topic's is "AAAAAAAAAAAAAAAAAAAAAQ".
//
// Partition directories are named "topic-partition"; Kafka renames them
// "topic-partition.<uuid without dashes>-delete" (deletion pending),
// "-future" (being moved to another log directory) or "-stray" (no longer
// assigned), see ParsePartitionDir.
//
// # Use
//
//	offs, err := checkpoint.ReadOffsets(fsys, "data/recovery-point-offset-checkpoint")
//	rp := offs[checkpoint.TopicPartition{Topic: "orders", Partition: 0}]
//	epochs, err := checkpoint.LoadLeaderEpochCache(fsys, "data/orders-0/leader-epoch-checkpoint")
//	epochs.Assign(5, 1000)
//	err = epochs.Flush(fsys, "data/orders-0/leader-epoch-checkpoint")
//
// # Errors
//
// Bad content is a *format.CorruptionError that names the file and the
// byte offset of the line at fault, wrapping format.ErrInvalid, with
// Kafka's wording ("Unrecognised version", "Malformed line", "Expected [n]
// entries ..."). A missing file is an error matching fs.ErrNotExist, except
// where the doc says otherwise (LoadLeaderEpochCache, ReadCleanShutdown).
// Kafka takes a log directory offline when a checkpoint cannot be read;
// segkit's engine instead treats a corrupt or missing checkpoint as a
// reason for full recovery (RELIABILITY C8), so the errors are typed and
// LoadLeaderEpochCache returns an empty cache with its error.
//
// # Crash safety
//
// Every writer goes through vfs.WriteFileAtomic, Kafka's checkpoint
// protocol: write name.tmp, fsync it, rename it over name, fsync the
// directory. After a crash at any point the file holds its old content or
// its new content, never a mix. A stray name.tmp may be left behind; the
// readers never look at it and the next write replaces it. The
// clean-shutdown marker is written the same way (Kafka writes it in
// place).
//
// # Concurrency
//
// The functions are safe for concurrent use on different files; writing
// the same file from two goroutines at once is not (they share the .tmp
// file). A LeaderEpochCache is safe for concurrent use, and serialises
// its own Flushes.
package checkpoint
