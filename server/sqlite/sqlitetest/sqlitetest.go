// Package sqlitetest gives tests an empty, migrated SQLite database in a
// file of their own, without migrating one for each test: the first call in
// a test binary opens a new file with sqlite.Open, which migrates it, and
// keeps its bytes; every call copies them. Under the race detector a
// migration costs half a second of CPU (the SQLite engine is Go code,
// instrumented like the rest), and most tests want an empty store, not to
// watch a migration: sqlite's own tests of Open and of migrations open new
// files themselves.
//
// It is test support only: no production package may import it.
package sqlitetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kessai/kessai/server/sqlite"
)

var empty struct {
	once  sync.Once
	err   error
	files map[string][]byte // the database file, and its WAL if Close left one
}

// Place writes an empty, migrated database at path, which must not exist
// yet; sqlite.Open then opens it as it would one it had migrated itself.
func Place(tb testing.TB, path string) {
	tb.Helper()
	empty.once.Do(func() { empty.err = makeEmpty() })
	if empty.err != nil {
		tb.Fatalf("sqlitetest: the empty database: %v", empty.err)
	}
	for name, b := range empty.files {
		f, err := os.OpenFile(path+name[len(sqlite.FileName):], os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.Write(b)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			tb.Fatalf("sqlitetest: %v", err)
		}
	}
}

// Path returns the path of a new empty, migrated database in tb.TempDir().
func Path(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), sqlite.FileName)
	Place(tb, path)
	return path
}

// Open opens a new empty, migrated database, closed when the test ends.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), Path(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func makeEmpty() error {
	dir, err := os.MkdirTemp("", "kessai-sqlitetest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, sqlite.FileName))
	if err != nil {
		return err
	}
	// Closing checkpoints the WAL into the file; copy whatever is left.
	if err := db.Close(); err != nil {
		return err
	}
	empty.files = map[string][]byte{}
	for _, name := range []string{sqlite.FileName, sqlite.FileName + "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) && name != sqlite.FileName {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		empty.files[name] = b
	}
	return nil
}
