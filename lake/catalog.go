package lake

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Catalog is where the indexer keeps what it learnt: tables, their
// schemas, each partition's indexed range, the data files with their
// statistics and footers, and the leases. SQLStore implements it on
// SQLite and PostgreSQL with one SQL schema (Schema below).
//
// Every method that changes a partition's files takes the caller's Lease
// and checks it in the same transaction as the change, so a writer that
// lost its lease changes nothing (a *LeaseError matching ErrLeaseLost).
type Catalog interface {
	// Table returns the id of the table named name (a topic), creating
	// it.
	Table(ctx context.Context, name string) (int64, error)
	// MergeSchema merges s into the table's schema and returns the
	// resulting schema and its version (a new version only when s
	// brought a field or a widened type).
	MergeSchema(ctx context.Context, table int64, s Schema) (Schema, int64, error)
	// SchemaVersion returns the table schema of one version.
	SchemaVersion(ctx context.Context, table, version int64) (Schema, error)

	// AcquireLease takes the partition for owner for ttl: when no one
	// holds it, its lease expired, or owner holds it already. Otherwise
	// a *LeaseError matching ErrLeaseHeld.
	AcquireLease(ctx context.Context, table int64, partition int32, owner string, ttl time.Duration) (Lease, error)
	// RenewLease extends a held lease by ttl from now; ErrLeaseLost if
	// it expired or another owner took it.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// ReleaseLease gives the partition up (expires the lease now) if l
	// still holds it.
	ReleaseLease(ctx context.Context, l Lease) error

	// State returns the partition's indexed range; false when the
	// partition was never indexed.
	State(ctx context.Context, table int64, partition int32) (PartitionState, bool, error)
	// InitState records where a new partition starts (lease checked);
	// ErrStateExists if it has a state already.
	InitState(ctx context.Context, l Lease, st PartitionState) error
	// Commit adds the data files of a run of ranges next to the indexed
	// range, and moves the range (lease checked, one transaction).
	Commit(ctx context.Context, l Lease, c Commit) ([]int64, error)
	// Expire marks the files of the partition wholly below earliest
	// expired (lease checked) and returns how many it marked.
	Expire(ctx context.Context, l Lease, earliest int64) (int, error)
	// Files lists the partition's files in offset order (bucket order
	// within a range); expired ones only with includeExpired.
	Files(ctx context.Context, table int64, partition int32, includeExpired bool) ([]DataFile, error)
	// File returns the file with data_file_id id, statistics included
	// (ErrNoFile if there is none).
	File(ctx context.Context, id int64) (DataFile, error)
	// Tables lists the tables: name → table_id.
	Tables(ctx context.Context) (map[string]int64, error)
	// Partitions lists a table's indexed partitions, in order.
	Partitions(ctx context.Context, table int64) ([]PartitionState, error)
	// Close releases the store.
	Close() error
}

// Lease is a held lease. Token grows each time the partition changes
// hands: a fencing token that the commit checks with the owner.
type Lease struct {
	Table     int64
	Partition int32
	Owner     string
	Token     int64
	ExpiresAt time.Time
}

// PartitionState is a partition's indexed range [Start, End) and the
// offset backfill goes down to.
type PartitionState struct {
	Table     int64
	Partition int32
	// Start and End bound the indexed offsets: every offset in [Start,
	// End) is in exactly one range of files, none outside.
	Start, End int64
	// BackfillTo is the lowest offset backfill indexes (== Start when
	// there is nothing to backfill: history none, or done).
	BackfillTo int64
}

// Direction says on which side of the indexed range a commit goes.
type Direction int8

// Directions.
const (
	// Forward: live indexing; the commit starts at the indexed range's
	// end.
	Forward Direction = iota
	// Backward: backfill; the commit ends just below the indexed range's
	// start.
	Backward
)

// Commit is one transaction's worth of files: the ranges covering
// [Start, End] (inclusive), next to the indexed range on Dir's side.
type Commit struct {
	Dir        Direction
	Start, End int64
	Files      []DataFile
	// BackfillTo, for a Backward commit, may lower or raise the target
	// (a since time resolved again, or retention moving the earliest
	// offset up); -1 leaves it.
	BackfillTo int64
	// GapEnd, for a Forward commit, says that [Start, GapEnd] holds no
	// committed record (GapEnd < Start: none such). Those offsets belong
	// to the files before them: the live files ending at Start-1 are
	// extended to end at GapEnd, and the commit's files start at
	// GapEnd+1. With no file ending at Start-1 (nothing indexed before),
	// the commit's files keep Start.
	GapEnd int64
}

// Errors of the catalog.
var (
	// ErrLeaseHeld: another owner holds an unexpired lease.
	ErrLeaseHeld = errors.New("lake: lease held by another indexer")
	// ErrLeaseLost: the caller's lease expired or changed hands; nothing
	// was written.
	ErrLeaseLost = errors.New("lake: lease lost")
	// ErrNotContiguous: a commit does not start (or end) at the indexed
	// range's edge, or its files leave its range; nothing was written.
	ErrNotContiguous = errors.New("lake: commit not next to the indexed range")
	// ErrStateExists: InitState for a partition that has a state.
	ErrStateExists = errors.New("lake: partition already has an indexed range")
	// ErrNoState: a commit for a partition with no state.
	ErrNoState = errors.New("lake: partition has no indexed range")
	// ErrNoFile: File for an id the catalog does not have.
	ErrNoFile = errors.New("lake: no such data file")
)

// LeaseError is a lease refused or lost. It matches ErrLeaseHeld or
// ErrLeaseLost (Err).
type LeaseError struct {
	Table     int64
	Partition int32
	// Owner and ExpiresAt describe the lease the catalog holds (empty if
	// none).
	Owner     string
	ExpiresAt time.Time
	Err       error
}

// Error describes the error.
func (e *LeaseError) Error() string {
	return fmt.Sprintf("%v: table %d partition %d (held by %q until %s)", e.Err, e.Table, e.Partition, e.Owner, e.ExpiresAt.UTC().Format(time.RFC3339Nano))
}

// Unwrap returns Err.
func (e *LeaseError) Unwrap() error { return e.Err }

// RangeError is a commit refused for its offsets. It matches
// ErrNotContiguous.
type RangeError struct {
	Dir                      Direction
	Start, End               int64 // the commit's
	IndexedStart, IndexedEnd int64 // the indexed range [IndexedStart, IndexedEnd)
}

// Error describes the error.
func (e *RangeError) Error() string {
	return fmt.Sprintf("%v: commit [%d, %d] (direction %d) against the indexed range [%d, %d)", ErrNotContiguous, e.Start, e.End, e.Dir, e.IndexedStart, e.IndexedEnd)
}

// Unwrap returns ErrNotContiguous.
func (e *RangeError) Unwrap() error { return ErrNotContiguous }

// SQLSchema is the catalog's SQL: one schema for SQLite and PostgreSQL
// (standard types only; timestamps are epoch milliseconds in BIGINT, the
// footer is base64 text, so no BLOB/BYTEA or time-zone difference
// arises). The ducklake_ tables follow DuckLake's catalog specification
// (its names and columns, with segkit's additions at the end of a
// table); the segkit_ tables are the indexer's own.
//
// Differences from DuckLake: snapshot_time is epoch ms; a file's Kafka
// offsets, bucket, trigger, schema version, checksum and footer are extra
// columns of ducklake_data_file, and its path is
// "partition-P/START/BUCKET.parquet" (a name: no file is stored);
// ducklake_file_column_stats has an exact nan_count beside contains_nan,
// and column_name and column_type; an expired file gets an end_snapshot
// (it is no longer in the table) and stays in the catalog.
const SQLSchema = `
CREATE TABLE IF NOT EXISTS ducklake_snapshot (
	snapshot_id BIGINT PRIMARY KEY,
	snapshot_time BIGINT NOT NULL,
	schema_version BIGINT NOT NULL,
	next_catalog_id BIGINT NOT NULL,
	next_file_id BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS ducklake_snapshot_changes (
	snapshot_id BIGINT PRIMARY KEY,
	changes_made TEXT NOT NULL,
	author TEXT,
	commit_message TEXT,
	commit_extra_info TEXT
);
CREATE TABLE IF NOT EXISTS ducklake_table (
	table_id BIGINT PRIMARY KEY,
	table_uuid TEXT,
	begin_snapshot BIGINT,
	end_snapshot BIGINT,
	schema_id BIGINT,
	table_name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS ducklake_data_file (
	data_file_id BIGINT PRIMARY KEY,
	table_id BIGINT NOT NULL,
	begin_snapshot BIGINT NOT NULL,
	end_snapshot BIGINT,
	file_order BIGINT,
	path TEXT NOT NULL,
	path_is_relative BOOLEAN NOT NULL,
	file_format TEXT NOT NULL,
	record_count BIGINT NOT NULL,
	file_size_bytes BIGINT NOT NULL,
	footer_size BIGINT NOT NULL,
	row_id_start BIGINT,
	partition_id BIGINT,
	encryption_key TEXT,
	partial_file_info TEXT,
	mapping_id BIGINT,
	kafka_partition INTEGER NOT NULL,
	start_offset BIGINT NOT NULL,
	end_offset BIGINT NOT NULL,
	bucket_ms BIGINT NOT NULL,
	close_trigger TEXT NOT NULL,
	schema_version BIGINT NOT NULL,
	checksum TEXT NOT NULL,
	footer TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ducklake_data_file_offsets ON ducklake_data_file (table_id, kafka_partition, start_offset);
CREATE TABLE IF NOT EXISTS ducklake_file_column_stats (
	data_file_id BIGINT NOT NULL,
	table_id BIGINT NOT NULL,
	column_id BIGINT NOT NULL,
	column_size_bytes BIGINT,
	value_count BIGINT NOT NULL,
	null_count BIGINT NOT NULL,
	min_value TEXT,
	max_value TEXT,
	contains_nan BOOLEAN NOT NULL,
	extra_stats TEXT,
	nan_count BIGINT NOT NULL,
	column_name TEXT NOT NULL,
	column_type TEXT NOT NULL,
	PRIMARY KEY (data_file_id, column_id)
);
CREATE TABLE IF NOT EXISTS segkit_table_schema (
	table_id BIGINT NOT NULL,
	schema_version BIGINT NOT NULL,
	fields TEXT NOT NULL,
	PRIMARY KEY (table_id, schema_version)
);
CREATE TABLE IF NOT EXISTS segkit_partition (
	table_id BIGINT NOT NULL,
	kafka_partition INTEGER NOT NULL,
	indexed_start BIGINT NOT NULL,
	indexed_end BIGINT NOT NULL,
	backfill_to BIGINT NOT NULL,
	PRIMARY KEY (table_id, kafka_partition)
);
CREATE TABLE IF NOT EXISTS segkit_lease (
	table_id BIGINT NOT NULL,
	kafka_partition INTEGER NOT NULL,
	owner TEXT NOT NULL,
	token BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (table_id, kafka_partition)
);
CREATE TABLE IF NOT EXISTS segkit_counter (
	name TEXT PRIMARY KEY,
	value BIGINT NOT NULL
);
`
