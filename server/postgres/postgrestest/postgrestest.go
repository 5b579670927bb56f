// Package postgrestest gives tests a PostgreSQL database of their own: a
// fresh schema of the machine's test database, dropped when the test ends,
// so that tests run in parallel, in one process or several, and leave
// nothing behind.
//
// The database is KESSAI_TEST_DATABASE_URL, by default the local server's
// database "test" with trust authentication (DefaultURL). A test that
// cannot reach it fails, saying how to start it: it is never skipped.
package postgrestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kessai/kessai/server/postgres"
)

// DefaultURL is the test database when KESSAI_TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// EnvURL names the variable that overrides DefaultURL.
const EnvURL = "KESSAI_TEST_DATABASE_URL"

// URL is the test database's URL.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// Schema creates a schema named kessai_t_<random> in the test database and
// returns a URL whose connections use it (pgx sets search_path, a
// parameter it does not know itself, on every connection as a run-time
// parameter). The schema is dropped, with everything in it, when t ends;
// whatever t opened on it must be closed by then (register its Close with
// t.Cleanup after calling Schema).
func Schema(t testing.TB) string {
	t.Helper()
	base := URL()
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("postgrestest: %s=%q is not a postgres:// URL", EnvURL, base)
	}
	var b [8]byte
	rand.Read(b[:])
	schema := "kessai_t_" + hex.EncodeToString(b[:])
	admin(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin(t, base, "DROP SCHEMA "+schema+" CASCADE") })
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens the engine on a fresh schema (Schema) and closes it when t
// ends. Its pool opens four connections at once (pool_min_conns): a pool
// that grew only on demand would serve a burst of short Updates one after
// another on its first connection while the others are still connecting,
// and the concurrency tests would not be concurrent.
func Open(t testing.TB) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), Schema(t)+"&pool_min_conns=4")
	if err != nil {
		t.Fatalf("postgrestest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Reachable reports, with what to do about it, why the test database
// cannot be used; nil when it can. A package's TestMain may call it to fail
// once, with one message, rather than in every test.
func Reachable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		return unreachable(URL(), err)
	}
	return conn.Close(ctx)
}

func unreachable(dbURL string, err error) error {
	return fmt.Errorf("postgrestest: cannot reach the test database %s: %w\n"+
		"Start PostgreSQL with .ci/ensure-deps, or: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n"+
		"(it needs trust authentication for postgres on 127.0.0.1 and a database named test; %s overrides the URL)",
		redact(dbURL), err, EnvURL)
}

// admin runs one statement on a connection of its own.
func admin(t testing.TB, dbURL, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(unreachable(dbURL, err))
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("postgrestest: %s: %v", stmt, err)
	}
}

// redact hides a password in a URL that is printed.
func redact(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "(the URL in " + EnvURL + ")"
	}
	return u.Redacted()
}
