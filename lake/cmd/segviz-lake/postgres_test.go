package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
)

// postgresCatalog returns a catalog URL of the server at
// SEGKIT_POSTGRES_URL with a fresh schema in its search_path (dropped
// when the test ends). Without the variable the test is skipped, except
// under CI=true.
func postgresCatalog(t *testing.T) string {
	t.Helper()
	base := os.Getenv("SEGKIT_POSTGRES_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SEGKIT_POSTGRES_URL is not set (required under CI=true)")
		}
		t.Skip("SEGKIT_POSTGRES_URL is not set: the PostgreSQL catalog test needs a server (see lake/README.md)")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "lake_cli_test_" + hex.EncodeToString(b[:])
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
	return u.String()
}

// TestPostgresCatalog: index --once, files --json --where and rebuild
// with a postgres:// catalog.
func TestPostgresCatalog(t *testing.T) {
	catSpec := postgresCatalog(t)
	dir, counts := logDir(t)
	mustRun(t, "index", "--catalog", catSpec, "--once", dir)
	files := decodeFiles(t, mustRun(t, "files", "--catalog", catSpec, "--json").stdout)
	rows, total := 0, 0
	for _, f := range files {
		rows += int(f.Rows)
	}
	for _, n := range counts {
		total += n.committed
	}
	if rows != total {
		t.Fatalf("%d rows in files, %d committed", rows, total)
	}
	r := mustRun(t, "files", "--catalog", catSpec, "--json", "--where", "value.amount > 100")
	if kept := len(decodeFiles(t, r.stdout)); kept == 0 || kept == len(files) {
		t.Fatalf("--where kept %d of %d files", kept, len(files))
	}
	for _, f := range files {
		out := mustRun(t, "rebuild", "--catalog", catSpec, "--dir", dir, fmt.Sprint(f.ID)).stdout
		sum := sha256.Sum256([]byte(out))
		if "sha256:"+hex.EncodeToString(sum[:]) != f.Checksum {
			t.Fatalf("file %d: rebuilt bytes differ from the checksum", f.ID)
		}
	}
}
