package lake

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// OpenSQLite opens (creating if needed) the SQLite catalog at path: the
// embedded default for one machine. Writes take the database lock at
// BEGIN (BEGIN IMMEDIATE), so a lease check and the write that follows
// it cannot interleave with another process's, and a busy database is
// waited for (busy_timeout 10 s) instead of failing.
func OpenSQLite(ctx context.Context, path string, o StoreOptions) (*SQLStore, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("lake: open catalog %s: %w", path, err)
	}
	// One connection: database/sql's pool would otherwise hand a
	// transaction and a plain query two connections that wait on each
	// other's lock.
	db.SetMaxOpenConns(1)
	s, err := NewSQLStore(ctx, db, SQLite, o)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
