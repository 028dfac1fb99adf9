package lake

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"
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

// TestPostgresServerClock: without StoreOptions.Clock a PostgreSQL
// catalog judges leases by the server's clock (one clock for every
// indexer, whatever their machines' clocks say): a lease expires at the
// server's time of taking it plus the TTL, and only then may another
// owner take it.
func TestPostgresServerClock(t *testing.T) {
	requirePostgres(t)
	ctx := context.Background()
	cat := openPostgres(t, nil)
	if !cat.serverClock {
		t.Fatal("a PostgreSQL store without a Clock does not use the server's clock")
	}
	table, err := cat.Table(ctx, "clock")
	if err != nil {
		t.Fatal(err)
	}
	serverNow := func() time.Time {
		var ms int64
		if err := cat.DB().QueryRowContext(ctx, `SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)`).Scan(&ms); err != nil {
			t.Fatal(err)
		}
		return time.UnixMilli(ms)
	}
	const ttl = 1500 * time.Millisecond
	before := serverNow()
	l, err := cat.AcquireLease(ctx, table, 0, "a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	after := serverNow()
	if l.ExpiresAt.Before(before.Add(ttl)) || l.ExpiresAt.After(after.Add(ttl)) {
		t.Errorf("lease expires at %v; the server's clock said %v to %v, plus the TTL %v", l.ExpiresAt, before, after, ttl)
	}
	if _, err := cat.AcquireLease(ctx, table, 0, "b", ttl); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("b took a's unexpired lease: %v", err)
	}
	for serverNow().Before(l.ExpiresAt) {
		time.Sleep(50 * time.Millisecond)
	}
	lb, err := cat.AcquireLease(ctx, table, 0, "b", ttl)
	if err != nil {
		t.Fatalf("b could not take the lease after it expired by the server's clock: %v", err)
	}
	if lb.Token <= l.Token {
		t.Errorf("b's token %d, a's %d: want a newer one", lb.Token, l.Token)
	}
	if _, err := cat.RenewLease(ctx, l, ttl); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a renewed a lease b holds: %v", err)
	}
}
