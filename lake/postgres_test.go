package lake

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
)

// opener opens an empty catalog for a test.
type opener func(testing.TB, Clock) *SQLStore

// openPostgres opens a catalog in a fresh schema of the server at
// SEGKIT_POSTGRES_URL, dropped when the test ends.
func openPostgres(t testing.TB, c Clock) *SQLStore {
	t.Helper()
	ctx := context.Background()
	base := os.Getenv("SEGKIT_POSTGRES_URL")
	admin, err := sql.Open("pgx", base) // no catalog schema in the default search path
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "lake_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	cat, err := OpenPostgres(ctx, u.String(), StoreOptions{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// TestPostgres runs the catalog's tests on PostgreSQL: the server at
// SEGKIT_POSTGRES_URL (postgres://user@127.0.0.1:5432/db), each test in
// a schema of its own. Without the variable it is skipped, except under
// CI=true, where CI starts the server (scripts/postgres.sh) and a missing
// one is a failure.
func TestPostgres(t *testing.T) {
	requirePostgres(t)
	tests := []struct {
		name string
		fn   func(*testing.T, opener)
	}{
		{"tiling_forward", testTilingForward},
		{"tiling_backfill", testTilingBackfill},
		{"age_trigger", testAgeTrigger},
		{"lease_late_write", testLeaseLateWrite},
		{"indexer_loses_lease", testIndexerLosesLease},
		{"stop_restart", testStopRestart},
		{"backfill", testBackfill},
		{"retention", testRetention},
		{"run_standby", testRunStandby},
		{"open_transaction", testOpenTransaction},
		{"retention_overtakes", testRetentionOvertakes},
		{"catalog_lookups", testCatalogLookups},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, openPostgres) })
	}
}

// requirePostgres skips t without SEGKIT_POSTGRES_URL, or fails it under
// CI=true.
func requirePostgres(t *testing.T) {
	t.Helper()
	if os.Getenv("SEGKIT_POSTGRES_URL") != "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("SEGKIT_POSTGRES_URL is not set (required under CI=true: scripts/test.sh starts a server with scripts/postgres.sh)")
	}
	t.Skip("SEGKIT_POSTGRES_URL is not set: the PostgreSQL catalog tests need a server (see README.md)")
}
