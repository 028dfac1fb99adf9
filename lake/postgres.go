package lake

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // the pure-Go PostgreSQL driver, registered as "pgx"
)

// OpenPostgres opens the PostgreSQL catalog at url (postgres://…),
// creating the schema if needed: the catalog for several nodes. The
// lease row is locked (SELECT … FOR UPDATE) by the transaction that
// checks it and writes, so a lease cannot change hands between the
// check and the commit.
func OpenPostgres(ctx context.Context, url string, o StoreOptions) (*SQLStore, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("lake: open catalog: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("lake: open catalog: %w", err)
	}
	s, err := NewSQLStore(ctx, db, Postgres, o)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
