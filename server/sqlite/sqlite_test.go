package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/sqlite/sqlitetest"
	"github.com/kessai/kessai/server/storagetest"
)

func open(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) payment.Storage {
		return open(t, sqlitetest.Path(t))
	})
}

// raw opens the file beside the engine, to look at what the engine does not
// expose.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type migration struct {
	name    string
	applied int64
}

func migrations(t *testing.T, path string) []migration {
	t.Helper()
	rows, err := raw(t, path).QueryContext(t.Context(), `SELECT name, applied_on FROM schema_migrations ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []migration
	for rows.Next() {
		var m migration
		if err := rows.Scan(&m.name, &m.applied); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db := open(t, path)
	m := &payment.Merchant{ID: payment.NewID(), Name: "Kept", Email: "kept@kessai.test", Verified: true,
		CreatedOn: time.Date(2025, 1, 31, 8, 41, 8, 925809000, time.UTC)}
	if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	before := migrations(t, path)
	if len(before) == 0 {
		t.Fatal("no migration recorded")
	}
	// Mark every recorded migration: a migration that ran again would
	// fail on its CREATE TABLE or, at the least, rewrite its row.
	if _, err := raw(t, path).ExecContext(ctx, `UPDATE schema_migrations SET applied_on = 42`); err != nil {
		t.Fatal(err)
	}

	db = open(t, path)
	var got *payment.Merchant
	err := db.View(ctx, func(tx payment.Tx) error {
		var err error
		got, err = tx.Merchant(ctx, m.ID)
		return err
	})
	if err != nil {
		t.Fatalf("merchant after reopening: %v", err)
	}
	if got.Name != m.Name || !got.CreatedOn.Equal(m.CreatedOn) {
		t.Errorf("merchant after reopening = %+v, want %+v", got, m)
	}
	after := migrations(t, path)
	if len(after) != len(before) {
		t.Errorf("reopening changed the migrations from %v to %v", before, after)
	}
	for _, mig := range after {
		if mig.applied != 42 {
			t.Errorf("migration %s was applied again on reopening", mig.name)
		}
	}
	// And it still takes writes.
	m2 := &payment.Merchant{ID: payment.NewID(), Name: "Second", Email: "second@kessai.test", CreatedOn: time.Now()}
	if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, m2) }); err != nil {
		t.Fatalf("write after reopening: %v", err)
	}
}

func TestWALMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db := open(t, path)
	ctx := t.Context()
	// A write makes sure the engine has touched the file.
	m := &payment.Merchant{ID: payment.NewID(), Name: "WAL", Email: "wal@kessai.test", CreatedOn: time.Now()}
	if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	var mode string
	// journal_mode=WAL is stored in the file: a plain connection sees it.
	if err := raw(t, path).QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(mode, "wal") {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

// TestReadsDuringWrite checks what WAL is for: a View completes while an
// Update holds the write lock.
func TestReadsDuringWrite(t *testing.T) {
	db := open(t, sqlitetest.Path(t))
	ctx := t.Context()
	inWrite, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Update(context.Background(), func(tx payment.Tx) error {
			m := &payment.Merchant{ID: payment.NewID(), Name: "Slow", Email: "slow@kessai.test", CreatedOn: time.Now()}
			if err := tx.CreateMerchant(context.Background(), m); err != nil {
				return err
			}
			close(inWrite)
			<-release
			return nil
		})
	}()
	<-inWrite
	viewCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var n int
	err := db.View(viewCtx, func(tx payment.Tx) error {
		var err error
		n, err = tx.CountMerchants(viewCtx)
		return err
	})
	close(release)
	if err != nil {
		t.Fatalf("View during an Update: %v", err)
	}
	if n != 0 {
		t.Errorf("View saw %d merchants of an uncommitted Update", n)
	}
	if err := <-done; err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// TestOpenPathWithURICharacters opens a database whose directory name holds
// the characters a SQLite URI gives meaning to: the file must land exactly
// there, not at a path cut short at "#" or "?".
func TestOpenPathWithURICharacters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shop #1 ?mode=ro %41")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, sqlite.FileName)
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %q: %v", path, err)
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files beside the data directory: %q", names)
	}
}

func TestOneReadViews(t *testing.T) {
	storagetest.RunOneReadViews(t, func(t *testing.T) payment.Storage {
		return open(t, sqlitetest.Path(t))
	})
}
