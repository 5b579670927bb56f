// Package sqlite is Kessai's embedded storage engine: one SQLite file in the
// data directory, through the pure-Go modernc.org/sqlite driver so that no
// C toolchain is needed.
//
// SQLite allows one writer at a time. Writes therefore go through a pool of
// one connection whose transactions begin IMMEDIATE (they take the write
// lock up front, so a read-then-write transaction never fails half-way with
// SQLITE_BUSY), while reads use a separate pool and, thanks to WAL, never
// wait for the writer. synchronous=FULL: a commit that was acknowledged
// survives a power loss, which is what a payment ledger needs. Concurrent
// writes share one transaction and one COMMIT, each in a savepoint of its
// own (group commit, group.go), so that one fsync serves them all.
//
// The SQL itself, shared with package postgres, is package sqlstore's;
// this package gives it the statements' runners and its dialect
// (dialect.go), and keeps the pools, the kept statements, the group
// commit, the migrations and the snapshot for backups.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlstore"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open database.
type DB struct {
	write *sql.DB
	read  *sql.DB
	// writer runs the write transactions on write, grouping concurrent
	// ones into one COMMIT (group.go).
	writer *groupWriter
	// direct serves payment.IdempotencyStore and the key fingerprints:
	// each of its writes is a member of the write groups, like an Update,
	// so reservations are serialised with each other and with the
	// domain's transactions, and answered once their COMMIT is durable.
	direct
}

// direct is embedded under a name of the package's own, so that its
// methods are the DB's but its fields are not.
type direct = sqlstore.Direct

var (
	_ payment.Storage          = (*DB)(nil)
	_ payment.IdempotencyStore = (*DB)(nil)
)

// FileName is the database's name inside the data directory.
const FileName = "kessai.db"

// Open opens (creating if needed) the database at path and applies any
// migration it has not seen.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := restrictFiles(abs); err != nil {
		return nil, err
	}
	pragmas := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		pragmas.Add("_pragma", p)
	}
	// The path goes into a URI, where "#", "?" and "%" mean something: a
	// data directory named "shop #1" must not open "shop ".
	base := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: pragmas.Encode()}).String()
	// Its transactions begin IMMEDIATE (writestmt.go). Each member of a
	// group runs in a savepoint, which copies every page it changes first
	// into a sub-journal: in memory, not a temporary file written with a
	// system call a page.
	write, err := openWritePool(base + "&_pragma=temp_store(MEMORY)")
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	read, err := openReadPool(base + "&_pragma=query_only(1)") // View must not write: the driver ignores TxOptions.ReadOnly
	if err != nil {
		write.Close()
		return nil, err
	}
	read.SetMaxOpenConns(max(4, runtime.NumCPU()))
	// Keep them all: a connection closed when idle and opened again on
	// the next burst loses the statements it kept (keptstmt.go).
	read.SetMaxIdleConns(max(4, runtime.NumCPU()))
	db := &DB{write: write, read: read, writer: newGroupWriter(write)}
	db.direct = direct{Dialect: dialect{}, Write: db.writer.update}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// restrictFiles makes the database's files readable by their owner only:
// they hold sealed card data and secret hashes. SQLite's unix VFS creates
// the -wal and -shm files with the permission bits of the main file
// (whatever the umask), so creating the main file 0600 before SQLite does
// covers all three; files that already exist, perhaps left wider by an
// older version, are tightened.
func restrictFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600) // an empty file is an empty database
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sqlite: %w", err)
		}
	}
	return nil
}

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.write.Close(), db.read.Close())
}

// migrate applies the embedded migrations in name order, each in its own
// transaction together with its row in schema_migrations, so a crash leaves
// either the whole migration or none of it.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_on INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: migrations table: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		base := filepath.Base(name)
		sqlTx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var seen int
		if err := sqlTx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE name = ?`, base).Scan(&seen); err != nil {
			sqlTx.Rollback()
			return err
		}
		if seen > 0 {
			sqlTx.Rollback()
			continue
		}
		if _, err := sqlTx.ExecContext(ctx, string(body)); err != nil {
			sqlTx.Rollback()
			return fmt.Errorf("sqlite: migration %s: %w", base, err)
		}
		if _, err := sqlTx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_on) VALUES (?, strftime('%s','now'))`, base); err != nil {
			sqlTx.Rollback()
			return err
		}
		if err := sqlTx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Update runs fn in a write transaction: its own savepoint in a
// transaction that concurrent Updates share, committed together (group
// commit, group.go). It returns once that COMMIT is durable, or failed.
func (db *DB) Update(ctx context.Context, fn func(payment.Tx) error) error {
	return db.writer.update(ctx, func(q querier) error { return fn(sqlstore.NewTx(q, dialect{}, true)) })
}

// View runs fn in a read-only transaction.
func (db *DB) View(ctx context.Context, fn func(payment.Tx) error) error {
	return run(ctx, db.read, &sql.TxOptions{ReadOnly: true}, fn)
}

func run(ctx context.Context, pool *sql.DB, opts *sql.TxOptions, fn func(payment.Tx) error) (err error) {
	sqlTx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	// Roll back on an error and also when fn panics: a deferred call runs
	// while a panic unwinds (and, recovering nothing, lets it go on up to
	// the caller), so a panic never leaves the transaction open, which on
	// the write pool's one connection would stall every later write. After
	// a commit, Rollback is a no-op (sql.ErrTxDone).
	defer func() { _ = sqlTx.Rollback() }()
	if err = fn(sqlstore.NewTx(txStatements{sqlTx}, dialect{}, false)); err != nil {
		return err
	}
	if err = sqlTx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// Exec runs a statement outside the domain's transactions; benchmarks use
// it to measure the raw commit rate of the same file.
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	_, err := db.write.ExecContext(ctx, query, args...)
	return err
}

// txStatements runs a read transaction's statements for sqlstore.
type txStatements struct{ tx *sql.Tx }

func (s txStatements) ExecContext(ctx context.Context, query string, args ...any) (sqlstore.Result, error) {
	return s.tx.ExecContext(ctx, query, args...)
}

func (s txStatements) QueryContext(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return rowsOf(s.tx.QueryContext(ctx, query, args...))
}

func (s txStatements) QueryRowContext(ctx context.Context, query string, args ...any) sqlstore.Row {
	return s.tx.QueryRowContext(ctx, query, args...)
}

// rowsOf passes database/sql's rows on as sqlstore's, and no rows as
// none (not a nil *sql.Rows in an interface that is not nil).
func rowsOf(rows *sql.Rows, err error) (sqlstore.Rows, error) {
	if err != nil {
		return nil, err
	}
	return rows, nil
}
