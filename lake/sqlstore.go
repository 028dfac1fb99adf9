package lake

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Clock is a time source (the wall clock when nil).
type Clock interface{ Now() time.Time }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Dialect is the SQL flavour of a SQLStore.
type Dialect int8

// Dialects.
const (
	// SQLite takes ? placeholders.
	SQLite Dialect = iota
	// Postgres takes $1, $2 … placeholders.
	Postgres
)

// StoreOptions tune a SQLStore. The zero value uses the wall clock.
type StoreOptions struct {
	// Clock decides lease expiry, and stamps snapshots. When nil, a
	// PostgreSQL store judges leases by the server's clock
	// (clock_timestamp(), read in the transaction that checks or takes
	// the lease), so that indexers on machines whose clocks disagree
	// still agree on who holds a partition; SQLite, on one machine, by
	// the wall clock.
	Clock Clock
	// Author is written in ducklake_snapshot_changes.author.
	Author string
}

// SQLStore is the Catalog on a database/sql database holding SQLSchema.
// It is safe for concurrent use; with several processes the database's
// transactions serialise them (SQLite: BEGIN IMMEDIATE; PostgreSQL: the
// row lock of segkit_counter's update and of segkit_lease's).
type SQLStore struct {
	db      *sql.DB
	dialect Dialect
	clock   Clock
	author  string
	// serverClock: leases are judged by the database server's clock.
	serverClock bool
}

var _ Catalog = (*SQLStore)(nil)

// NewSQLStore creates the schema (if needed) in db and returns the store.
func NewSQLStore(ctx context.Context, db *sql.DB, d Dialect, o StoreOptions) (*SQLStore, error) {
	s := &SQLStore{db: db, dialect: d, clock: o.Clock, author: o.Author, serverClock: o.Clock == nil && d == Postgres}
	if s.clock == nil {
		s.clock = wallClock{}
	}
	if s.author == "" {
		s.author = "segkit lake"
	}
	for _, stmt := range strings.Split(SQLSchema, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("lake: catalog schema: %w", err)
		}
	}
	for _, c := range []string{"snapshot", "file", "table"} {
		if _, err := db.ExecContext(ctx, s.q(`INSERT INTO segkit_counter (name, value) VALUES (?, 0) ON CONFLICT (name) DO NOTHING`), c); err != nil {
			return nil, fmt.Errorf("lake: catalog counters: %w", err)
		}
	}
	return s, nil
}

// Close closes the database.
func (s *SQLStore) Close() error { return s.db.Close() }

// DB is the store's database (for tests and tools that query it).
func (s *SQLStore) DB() *sql.DB { return s.db }

// q rewrites ? placeholders for the dialect. The catalog's SQL has no ?
// inside literals.
func (s *SQLStore) q(query string) string {
	if s.dialect != Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (s *SQLStore) now() int64 { return s.clock.Now().UnixMilli() }

// leaseNow is the time leases are judged by, in ms, read in tx: the
// server's clock (serverClock) or the store's.
func (s *SQLStore) leaseNow(ctx context.Context, tx *sql.Tx) (int64, error) {
	if !s.serverClock {
		return s.now(), nil
	}
	var ms int64
	if err := tx.QueryRowContext(ctx, `SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)`).Scan(&ms); err != nil {
		return 0, fmt.Errorf("lake: the catalog server's clock: %w", err)
	}
	return ms, nil
}

// tx runs fn in a transaction, committed if fn returns nil.
func (s *SQLStore) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// txRetry is tx for a transaction that creates a row others may create
// at the same time (a table, a schema version): when it loses the race —
// a unique violation, or a serialization failure (SQLSTATE 23505, 40001:
// what PostgreSQL reports between concurrent indexers of one topic's
// partitions) — it runs again, a few times, in a new transaction, where
// it reads what the winner wrote.
func (s *SQLStore) txRetry(ctx context.Context, fn func(*sql.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := s.tx(ctx, fn)
		if err == nil || attempt == 4 || !isConflict(err) {
			return err
		}
	}
}

// isConflict reports a unique violation or a serialization failure.
func isConflict(err error) bool {
	var se interface{ SQLState() string } // *pgconn.PgError
	if errors.As(err, &se) {
		switch se.SQLState() {
		case "23505", "40001":
			return true
		}
	}
	return false
}

// next reserves n ids of counter name and returns the first.
func (s *SQLStore) next(ctx context.Context, tx *sql.Tx, name string, n int64) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, s.q(`UPDATE segkit_counter SET value = value + ? WHERE name = ? RETURNING value`), n, name).Scan(&v)
	return v - n + 1, err
}

// snapshot adds a ducklake_snapshot and its changes.
func (s *SQLStore) snapshot(ctx context.Context, tx *sql.Tx, schemaVersion int64, changes, message string) (int64, error) {
	id, err := s.next(ctx, tx, "snapshot", 1)
	if err != nil {
		return 0, err
	}
	var nextFile, nextTable int64
	if err := tx.QueryRowContext(ctx, s.q(`SELECT value FROM segkit_counter WHERE name = ?`), "file").Scan(&nextFile); err != nil {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, s.q(`SELECT value FROM segkit_counter WHERE name = ?`), "table").Scan(&nextTable); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO ducklake_snapshot (snapshot_id, snapshot_time, schema_version, next_catalog_id, next_file_id) VALUES (?, ?, ?, ?, ?)`),
		id, s.now(), schemaVersion, nextTable+1, nextFile+1); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO ducklake_snapshot_changes (snapshot_id, changes_made, author, commit_message) VALUES (?, ?, ?, ?)`),
		id, changes, s.author, message); err != nil {
		return 0, err
	}
	return id, nil
}

// Table implements Catalog.
func (s *SQLStore) Table(ctx context.Context, name string) (int64, error) {
	var id int64
	err := s.txRetry(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, s.q(`SELECT table_id FROM ducklake_table WHERE table_name = ?`), name).Scan(&id)
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if id, err = s.next(ctx, tx, "table", 1); err != nil {
			return err
		}
		snap, err := s.snapshot(ctx, tx, 0, "created_table:"+strconv.Quote(name), "table for topic "+name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO ducklake_table (table_id, begin_snapshot, schema_id, table_name) VALUES (?, ?, ?, ?)`), id, snap, 0, name); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO segkit_table_schema (table_id, schema_version, fields) VALUES (?, 0, ?)`), id, `{"fields":[]}`)
		return err
	})
	return id, err
}

// latestSchema reads the table's newest schema.
func (s *SQLStore) latestSchema(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, table int64) (Schema, int64, error) {
	var v int64
	var text string
	err := q.QueryRowContext(ctx, s.q(`SELECT schema_version, fields FROM segkit_table_schema WHERE table_id = ? ORDER BY schema_version DESC LIMIT 1`), table).Scan(&v, &text)
	if err != nil {
		return Schema{}, 0, err
	}
	var sch Schema
	if err := json.Unmarshal([]byte(text), &sch); err != nil {
		return Schema{}, 0, fmt.Errorf("lake: table %d schema %d: %w", table, v, err)
	}
	return sch, v, nil
}

// MergeSchema implements Catalog.
func (s *SQLStore) MergeSchema(ctx context.Context, table int64, add Schema) (Schema, int64, error) {
	var out Schema
	var ver int64
	err := s.txRetry(ctx, func(tx *sql.Tx) error {
		cur, v, err := s.latestSchema(ctx, tx, table)
		if err != nil {
			return err
		}
		merged, changed := cur.Merge(add)
		out, ver = merged, v
		if !changed {
			return nil
		}
		ver = v + 1
		text, err := json.Marshal(merged)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO segkit_table_schema (table_id, schema_version, fields) VALUES (?, ?, ?)`), table, ver, string(text)); err != nil {
			return err
		}
		_, err = s.snapshot(ctx, tx, ver, "altered_table:"+strconv.FormatInt(table, 10), "schema merged")
		return err
	})
	return out, ver, err
}

// SchemaVersion implements Catalog.
func (s *SQLStore) SchemaVersion(ctx context.Context, table, version int64) (Schema, error) {
	var text string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT fields FROM segkit_table_schema WHERE table_id = ? AND schema_version = ?`), table, version).Scan(&text); err != nil {
		return Schema{}, fmt.Errorf("lake: table %d schema %d: %w", table, version, err)
	}
	var sch Schema
	err := json.Unmarshal([]byte(text), &sch)
	return sch, err
}

// AcquireLease implements Catalog.
func (s *SQLStore) AcquireLease(ctx context.Context, table int64, partition int32, owner string, ttl time.Duration) (Lease, error) {
	l := Lease{Table: table, Partition: partition, Owner: owner}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		var cur string
		var token, exp int64
		query := `SELECT owner, token, expires_at FROM segkit_lease WHERE table_id = ? AND kafka_partition = ?`
		if s.dialect == Postgres {
			query += ` FOR UPDATE`
		}
		err = tx.QueryRowContext(ctx, s.q(query), table, partition).Scan(&cur, &token, &exp)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			l.Token = 1
			l.ExpiresAt = time.UnixMilli(now + ttl.Milliseconds())
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO segkit_lease (table_id, kafka_partition, owner, token, expires_at) VALUES (?, ?, ?, ?, ?)`), table, partition, owner, l.Token, l.ExpiresAt.UnixMilli()); err != nil {
				// Two first acquirers raced (PostgreSQL: the primary
				// key's unique violation); the other one won.
				return &LeaseError{Table: table, Partition: partition, Err: fmt.Errorf("%w (%v)", ErrLeaseHeld, err)}
			}
			return nil
		case err != nil:
			return err
		case cur != owner && exp > now:
			return &LeaseError{Table: table, Partition: partition, Owner: cur, ExpiresAt: time.UnixMilli(exp), Err: ErrLeaseHeld}
		}
		// A new holder gets a new token, so that whatever the previous
		// one still tries to write is fenced off. The same owner
		// re-acquiring a lease it still holds keeps its token; after
		// expiry it gets a new one (it may have lost in-memory state).
		l.Token = token
		if cur != owner || exp <= now {
			l.Token = token + 1
		}
		l.ExpiresAt = time.UnixMilli(now + ttl.Milliseconds())
		_, err = tx.ExecContext(ctx, s.q(`UPDATE segkit_lease SET owner = ?, token = ?, expires_at = ? WHERE table_id = ? AND kafka_partition = ?`), owner, l.Token, l.ExpiresAt.UnixMilli(), table, partition)
		return err
	})
	return l, err
}

// checkLease fails with ErrLeaseLost unless l holds its partition now.
// It runs inside the transaction that writes, so a lease lost between the
// check and the write cannot happen: SQLite's write transaction is
// exclusive, and PostgreSQL's SELECT … FOR UPDATE locks the lease row
// until the commit (AcquireLease by another owner waits for it).
func (s *SQLStore) checkLease(ctx context.Context, tx *sql.Tx, l Lease) error {
	query := `SELECT owner, token, expires_at FROM segkit_lease WHERE table_id = ? AND kafka_partition = ?`
	if s.dialect == Postgres {
		query += ` FOR UPDATE`
	}
	var owner string
	var token, exp int64
	err := tx.QueryRowContext(ctx, s.q(query), l.Table, l.Partition).Scan(&owner, &token, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return &LeaseError{Table: l.Table, Partition: l.Partition, Err: ErrLeaseLost}
	}
	if err != nil {
		return err
	}
	now, err := s.leaseNow(ctx, tx)
	if err != nil {
		return err
	}
	if owner != l.Owner || token != l.Token || exp <= now {
		return &LeaseError{Table: l.Table, Partition: l.Partition, Owner: owner, ExpiresAt: time.UnixMilli(exp), Err: ErrLeaseLost}
	}
	return nil
}

// RenewLease implements Catalog.
func (s *SQLStore) RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.checkLease(ctx, tx, l); err != nil {
			return err
		}
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		l.ExpiresAt = time.UnixMilli(now + ttl.Milliseconds())
		_, err = tx.ExecContext(ctx, s.q(`UPDATE segkit_lease SET expires_at = ? WHERE table_id = ? AND kafka_partition = ?`), l.ExpiresAt.UnixMilli(), l.Table, l.Partition)
		return err
	})
	return l, err
}

// ReleaseLease implements Catalog.
func (s *SQLStore) ReleaseLease(ctx context.Context, l Lease) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.checkLease(ctx, tx, l); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				return nil // nothing of ours to release
			}
			return err
		}
		now, err := s.leaseNow(ctx, tx)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`UPDATE segkit_lease SET expires_at = ? WHERE table_id = ? AND kafka_partition = ?`), now, l.Table, l.Partition)
		return err
	})
}

// State implements Catalog.
func (s *SQLStore) State(ctx context.Context, table int64, partition int32) (PartitionState, bool, error) {
	st := PartitionState{Table: table, Partition: partition}
	err := s.db.QueryRowContext(ctx, s.q(`SELECT indexed_start, indexed_end, backfill_to FROM segkit_partition WHERE table_id = ? AND kafka_partition = ?`), table, partition).Scan(&st.Start, &st.End, &st.BackfillTo)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	return st, err == nil, err
}

// InitState implements Catalog.
func (s *SQLStore) InitState(ctx context.Context, l Lease, st PartitionState) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.checkLease(ctx, tx, l); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM segkit_partition WHERE table_id = ? AND kafka_partition = ?`), l.Table, l.Partition).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrStateExists
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO segkit_partition (table_id, kafka_partition, indexed_start, indexed_end, backfill_to) VALUES (?, ?, ?, ?, ?)`),
			l.Table, l.Partition, st.Start, st.End, min(st.BackfillTo, st.Start))
		return err
	})
}

// Commit implements Catalog.
func (s *SQLStore) Commit(ctx context.Context, l Lease, c Commit) ([]int64, error) {
	var ids []int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.checkLease(ctx, tx, l); err != nil {
			return err
		}
		var st PartitionState
		err := tx.QueryRowContext(ctx, s.q(`SELECT indexed_start, indexed_end, backfill_to FROM segkit_partition WHERE table_id = ? AND kafka_partition = ?`), l.Table, l.Partition).Scan(&st.Start, &st.End, &st.BackfillTo)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNoState
		}
		if err != nil {
			return err
		}
		rerr := &RangeError{Dir: c.Dir, Start: c.Start, End: c.End, IndexedStart: st.Start, IndexedEnd: st.End}
		if c.End < c.Start-1 {
			return rerr
		}
		switch c.Dir {
		case Forward:
			if c.Start != st.End {
				return rerr
			}
			st.End = c.End + 1
		case Backward:
			if c.End+1 != st.Start {
				return rerr
			}
			st.Start = c.Start
		default:
			return rerr
		}
		if c.BackfillTo >= 0 {
			st.BackfillTo = c.BackfillTo
		}
		st.BackfillTo = min(st.BackfillTo, st.Start)
		for _, f := range c.Files {
			if f.StartOffset < c.Start || f.EndOffset > c.End || f.EndOffset < f.StartOffset {
				return rerr
			}
		}
		var schemaVer int64
		for _, f := range c.Files {
			schemaVer = max(schemaVer, f.SchemaVersion)
		}
		snap, err := s.snapshot(ctx, tx, schemaVer, "inserted_into_table:"+strconv.FormatInt(l.Table, 10),
			fmt.Sprintf("partition %d offsets %d..%d: %d files", l.Partition, c.Start, c.End, len(c.Files)))
		if err != nil {
			return err
		}
		if c.Dir == Forward && c.GapEnd >= c.Start {
			res, err := tx.ExecContext(ctx, s.q(`UPDATE ducklake_data_file SET end_offset = ? WHERE table_id = ? AND kafka_partition = ? AND end_offset = ? AND end_snapshot IS NULL`),
				c.GapEnd, l.Table, l.Partition, c.Start-1)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				for i := range c.Files {
					c.Files[i].StartOffset = c.GapEnd + 1
				}
			}
		}
		if len(c.Files) > 0 {
			first, err := s.next(ctx, tx, "file", int64(len(c.Files)))
			if err != nil {
				return err
			}
			for i := range c.Files {
				id := first + int64(i)
				if err := s.insertFile(ctx, tx, l.Table, snap, id, &c.Files[i]); err != nil {
					return err
				}
				ids = append(ids, id)
			}
		}
		_, err = tx.ExecContext(ctx, s.q(`UPDATE segkit_partition SET indexed_start = ?, indexed_end = ?, backfill_to = ? WHERE table_id = ? AND kafka_partition = ?`),
			st.Start, st.End, st.BackfillTo, l.Table, l.Partition)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// filePath names a file in ducklake_data_file.path: no file is stored,
// the name says what to rebuild. It leaves the end offset out, which a
// later commit may extend (Commit.GapEnd).
func filePath(f *DataFile) string {
	return fmt.Sprintf("partition-%d/%d/%d.parquet", f.Partition, f.StartOffset, f.Bucket)
}

func (s *SQLStore) insertFile(ctx context.Context, tx *sql.Tx, table, snap, id int64, f *DataFile) error {
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, file_order, path, path_is_relative, file_format,
		record_count, file_size_bytes, footer_size, partition_id, kafka_partition, start_offset, end_offset, bucket_ms, close_trigger, schema_version, checksum, footer)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		id, table, snap, f.StartOffset, filePath(f), true, "parquet",
		f.Rows, f.Bytes, int64(len(f.Footer)), int64(f.Partition), f.Partition, f.StartOffset, f.EndOffset, f.Bucket, string(f.Trigger), f.SchemaVersion,
		f.Checksum, base64.StdEncoding.EncodeToString(f.Footer)); err != nil {
		return err
	}
	for _, c := range f.Columns {
		var mn, mx sql.NullString
		if c.HasMinMax {
			mn, mx = sql.NullString{String: c.Min, Valid: true}, sql.NullString{String: c.Max, Valid: true}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO ducklake_file_column_stats (data_file_id, table_id, column_id, value_count, null_count, min_value, max_value, contains_nan, nan_count, column_name, column_type)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			id, table, int64(c.ID), c.ValueCount, c.NullCount, mn, mx, c.NaNCount > 0, c.NaNCount, c.Name, c.Type); err != nil {
			return err
		}
	}
	return nil
}

// Expire implements Catalog.
func (s *SQLStore) Expire(ctx context.Context, l Lease, earliest int64) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.checkLease(ctx, tx, l); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM ducklake_data_file WHERE table_id = ? AND kafka_partition = ? AND end_offset < ? AND end_snapshot IS NULL`),
			l.Table, l.Partition, earliest).Scan(&n); err != nil || n == 0 {
			return err
		}
		snap, err := s.snapshot(ctx, tx, 0, "deleted_from_table:"+strconv.FormatInt(l.Table, 10),
			fmt.Sprintf("partition %d: files below offset %d expired by Kafka retention", l.Partition, earliest))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, s.q(`UPDATE ducklake_data_file SET end_snapshot = ? WHERE table_id = ? AND kafka_partition = ? AND end_offset < ? AND end_snapshot IS NULL`),
			snap, l.Table, l.Partition, earliest)
		return err
	})
	return int(n), err
}

// fileColumns is the select list scanFile reads.
const fileColumns = `data_file_id, table_id, kafka_partition, start_offset, end_offset, bucket_ms, close_trigger, schema_version, record_count, file_size_bytes, checksum, footer, end_snapshot`

func scanFile(rows interface{ Scan(...any) error }) (DataFile, error) {
	var f DataFile
	var trig, footer string
	var end sql.NullInt64
	if err := rows.Scan(&f.ID, &f.Table, &f.Partition, &f.StartOffset, &f.EndOffset, &f.Bucket, &trig, &f.SchemaVersion, &f.Rows, &f.Bytes, &f.Checksum, &footer, &end); err != nil {
		return f, err
	}
	f.Trigger, f.Expired = Trigger(trig), end.Valid
	var err error
	if f.Footer, err = base64.StdEncoding.DecodeString(footer); err != nil {
		return f, fmt.Errorf("lake: file %d footer: %w", f.ID, err)
	}
	return f, nil
}

// File implements Catalog.
func (s *SQLStore) File(ctx context.Context, id int64) (DataFile, error) {
	f, err := scanFile(s.db.QueryRowContext(ctx, s.q(`SELECT `+fileColumns+` FROM ducklake_data_file WHERE data_file_id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("%w: %d", ErrNoFile, id)
	}
	if err != nil {
		return f, err
	}
	cols, err := s.columnStats(ctx, `c.data_file_id = ?`, id)
	if err != nil {
		return f, err
	}
	f.Columns = cols[id]
	return f, nil
}

// Tables implements Catalog.
func (s *SQLStore) Tables(ctx context.Context) (map[string]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT table_name, table_id FROM ducklake_table`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var n string
		var id int64
		if err := rows.Scan(&n, &id); err != nil {
			return nil, err
		}
		out[n] = id
	}
	return out, rows.Err()
}

// Partitions implements Catalog.
func (s *SQLStore) Partitions(ctx context.Context, table int64) ([]PartitionState, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT kafka_partition, indexed_start, indexed_end, backfill_to FROM segkit_partition WHERE table_id = ? ORDER BY kafka_partition`), table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PartitionState
	for rows.Next() {
		st := PartitionState{Table: table}
		if err := rows.Scan(&st.Partition, &st.Start, &st.End, &st.BackfillTo); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// columnStats reads the column statistics of the files matching where
// (over ducklake_file_column_stats c joined with ducklake_data_file f),
// by file id.
func (s *SQLStore) columnStats(ctx context.Context, where string, args ...any) (map[int64][]ColumnStats, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT c.data_file_id, c.column_id, c.column_name, c.column_type, c.value_count, c.null_count, c.nan_count, c.min_value, c.max_value
		FROM ducklake_file_column_stats c JOIN ducklake_data_file f ON f.data_file_id = c.data_file_id
		WHERE `+where+` ORDER BY c.data_file_id, c.column_id`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]ColumnStats{}
	for rows.Next() {
		var id int64
		var c ColumnStats
		var mn, mx sql.NullString
		if err := rows.Scan(&id, &c.ID, &c.Name, &c.Type, &c.ValueCount, &c.NullCount, &c.NaNCount, &mn, &mx); err != nil {
			return nil, err
		}
		c.Min, c.Max, c.HasMinMax = mn.String, mx.String, mn.Valid
		out[id] = append(out[id], c)
	}
	return out, rows.Err()
}

// Files implements Catalog.
func (s *SQLStore) Files(ctx context.Context, table int64, partition int32, includeExpired bool) ([]DataFile, error) {
	query := `SELECT ` + fileColumns + ` FROM ducklake_data_file WHERE table_id = ? AND kafka_partition = ?`
	if !includeExpired {
		query += ` AND end_snapshot IS NULL`
	}
	query += ` ORDER BY start_offset, bucket_ms`
	rows, err := s.db.QueryContext(ctx, s.q(query), table, partition)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DataFile
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	cols, err := s.columnStats(ctx, `f.table_id = ? AND f.kafka_partition = ?`, table, partition)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Columns = cols[out[i].ID]
	}
	return out, nil
}
