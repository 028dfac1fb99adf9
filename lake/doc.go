// Package lake is segkit's indexer: it turns a Kafka partition's
// committed records into data files with exact statistics, kept in a
// catalog, so that query engines can read a topic as a table without a
// copy of it in object storage. Records are read once and not kept: the
// catalog holds each file's offset range, time bucket, statistics,
// Parquet footer and checksum, and no data file is stored. The bytes are
// built again from Kafka on read (Rebuild), identical: the build is
// deterministic.
//
// Sketch:
//
//	src, _ := lake.OpenDir(vfs.OS(), "/var/kafka-logs/orders-0")
//	cat, _ := lake.OpenSQLite(ctx, "catalog.db", lake.StoreOptions{})
//	x := lake.NewIndexer(cat, src, lake.Options{Table: "orders", Partition: 0})
//	err := x.Run(ctx) // until ctx is done or the lease is lost
//	files, _ := cat.Files(ctx, tableID, 0, false)
//	b, _ := lake.Rebuild(ctx, cat, src, tableID, files[0], lake.Options{})
//
// This module (github.com/segkit/segkit/lake) is separate from segkit's
// core: it needs Parquet and SQL drivers, which the core (small, and
// built for WASM) never imports.
//
// # The rules
//
// One indexer per partition at a time, under a lease in the catalog
// (Options.LeaseTTL, 30 s; renewed every third of it). Every write of a
// partition's files checks the writer's lease — owner, fencing token and
// expiry — in the same transaction that writes, and a writer without it
// gets a *LeaseError matching ErrLeaseLost and adds nothing. An indexer
// that loses its lease stops at once (Run returns the error); another
// takes the partition when the lease expires. Expiry is judged by one
// clock: on PostgreSQL the server's (clock_timestamp(), read in the
// transaction that takes, renews or checks the lease), so indexers on
// machines whose clocks disagree still agree on the holder; on SQLite,
// one machine's; StoreOptions.Clock overrides both (tests).
//
// Where it starts: a partition never indexed starts at its last stable
// offset, and backfill reads what came before (History: all, the
// default, down to the earliest offset; since a time, down to the first
// offset at or after it; none). An indexed partition resumes at the end
// of its indexed range. The catalog keeps the indexed range [start, end)
// per partition, and every commit must touch it (ErrNotContiguous
// otherwise), so no offset is ever indexed twice or skipped: what an
// indexer had read but not committed when it stopped is only in memory,
// and the next one reads it again.
//
// Only committed records: read_committed, as Kafka's fetch: up to the
// last stable offset, without the records of aborted transactions (from
// the segments' .txnindex files and the producer state) and without
// control records.
//
// # Data files
//
// Records are grouped into offset ranges in offset order. A range ends
// at the first of (Trigger):
//
//   - file_bytes: its key, value and header bytes reached
//     Options.FileBytes (128 MiB);
//   - file_window: the next record's timestamp would make the range's
//     timestamps span Options.FileWindow (60 s);
//   - age: its first record was read FileWindow ago (the indexer's
//     clock), so a quiet partition still gets files;
//   - bucket: the next record falls in a later time bucket of
//     Options.Granularity (an hour);
//
// and at the indexer's boundaries: the end of a backfill chunk (chunk),
// the last stable offset a run-once indexer indexes to (caught_up), and
// offsets that retention deleted before the indexer read them
// (retention: an indexer stopped longer than the topic's retention skips
// them, with no file, rather than stall).
// A range becomes one data file per time bucket among its records (a
// record late into an earlier hour does not close a range, so a range
// can have several), sharing the range's offsets. A range closes just
// before the record that breaks a rule, so the offsets with no committed
// record before that record (aborted records, transaction markers,
// compaction gaps) end the range before: they belong to the file before
// them, and the ranges tile the offset space with no gap and no overlap.
// Backfill chunks begin at their first record for the same reason (the
// offsets below it are read again with the chunk below), and a live
// range that begins with such offsets hands them to the files before it
// (Commit.GapEnd). The exception is the very start of the indexed
// offsets (the earliest offset, or where a table began), where no file
// is before them.
//
// # The file format
//
// A data file is Parquet, written by parquet-go with fixed options
// (Snappy, data page v2, 256 KiB pages, at most 2^20 rows per row
// group, created_by "segkit lake version 1(build 1)", no key/value
// metadata): the bytes depend only on the partition number, the table
// schema version and the records, never on the clock, the time zone or
// map order. They also depend on parquet-go's version: upgrading it may
// change the bytes, and files built before then no longer match their
// checksums (pin it; a format change is a new formatVersion). Its
// columns, in Parquet's order (parquet-go sorts a group's fields by
// name):
//
//	headers         repeated group { key STRING, value optional BINARY }
//	key             optional BINARY
//	offset          INT64
//	partition       INT32
//	timestamp       INT64 TIMESTAMP(MILLIS, UTC)
//	timestamp_type  INT32  (-1 none, 0 CreateTime, 1 LogAppendTime)
//	value           optional group { one optional column per JSON field }
//	value_raw       optional BINARY
//
// A value that is a JSON object whose fields fit the table schema is
// stored in the value group's typed columns (value_raw null); any other
// value (not JSON, not an object, a duplicate or empty field name, more
// than Options.MaxFields fields) is stored as it is in value_raw. A null
// value is null in both.
//
// # Schemas
//
// The table schema is the merge of every schema the records bring, and
// it is merged in the catalog (a new version) before a file with a new
// field or a widened type is written; each file names the version it was
// written with, which its rebuild uses. The merge rules (MergeType):
//
//   - JSON types: true/false → boolean; an integer number in int64's
//     range written without fraction or exponent → int64; any other
//     number → double; a string → string; an object or array → json
//     (its compact text); null → no type (a null in any column);
//   - a new field is added (columns are never removed; a field missing
//     from a record is null);
//   - int64 and double widen to double;
//   - any other pair is incompatible and becomes string (each value then
//     stored as its JSON text, a string as itself).
//
// The merge is commutative and associative, so the schema does not
// depend on the order of the records or of the partitions. A Schema
// Registry source (records in Confluent's wire format, naming a schema
// id) will bring its schemas through the same Schema.Merge; that source
// is a later step.
//
// # Statistics
//
// Each file is built once in memory to take its row count, byte size
// and, per leaf column, the value count, null count, NaN count (counted
// here: Parquet footers carry none) and min/max (exact, NaN excluded) as
// text (ColumnStats). The catalog stores them with the offset range,
// the bucket, the footer and the SHA-256 of the bytes, and the bytes are
// dropped.
//
// # The catalog
//
// One SQL schema (SQLSchema) for SQLite (modernc.org/sqlite, the
// embedded default) and PostgreSQL, modelled on DuckLake's catalog:
// ducklake_snapshot, ducklake_snapshot_changes, ducklake_table,
// ducklake_data_file and ducklake_file_column_stats, plus segkit_lease
// (owner, fencing token, expiry per partition), segkit_partition (the
// indexed range and the backfill target), segkit_table_schema (the
// schema versions) and segkit_counter (id allocation). Every change is a
// snapshot with its ducklake_snapshot_changes row (created_table,
// altered_table, inserted_into_table, deleted_from_table).
//
// # Retention
//
// Every Options.RetentionCheck (5 min) the indexer reads the partition's
// earliest offset; the files wholly below it are marked expired (their
// end_snapshot is set): kept in the catalog, listed only when asked.
//
// # Sources
//
// A Source is a partition as a read_committed consumer sees it: its
// earliest offset, its last stable offset, offsets by time, and fetches
// of committed records below the last stable offset, with the offsets
// of everything else (aborted records, transaction markers, compaction
// gaps) reported as skipped. Two are built:
//
//   - DirSource (OpenDir) reads a partition directory with segkit's
//     engine, read-only: a copy, or a broker's live directory. The
//     aborted transactions come from the producer state and the
//     .txnindex files, as Kafka's fetch reads them.
//   - BrokerSource (OpenBroker) reads a live cluster through a franz-go
//     client the caller made (its TLS, SASL, seeds): Fetch requests
//     with isolation level READ_COMMITTED to the partition's leader,
//     which return Kafka's on-disk batches and the aborted transactions
//     among them, and ListOffsets for the earliest offset, the last
//     stable offset (latest, read_committed) and offsets by time. A
//     stale leader is looked up again and the request retried once.
//
// Both decode and filter the batches with the same code, so the same
// partition gives the same files from either (TestBrokerMatchesDir runs
// Kafka 4.3.1's broker through the oracle and compares the two).
//
// # Memory
//
// An indexer holds the records of one open range (about FileBytes of
// keys, values and headers, plus the last record read) and, while a
// range closes, its file's row group: the build writes the Parquet bytes
// through a hash and keeps only the footer, so its peak is about the
// file once plus a few MiB of column buffers (a rebuild, which returns
// the bytes, about twice the file). A backfill chunk builds each range as
// it closes and keeps only the files' entries (statistics and footers)
// until its commit.
//
// # Concurrency
//
// An Indexer and a Source are used by one goroutine. A SQLStore is safe
// for concurrent use; indexers of different partitions may share it.
package lake
