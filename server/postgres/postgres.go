// Package postgres is Kessai's PostgreSQL storage engine, for merchants who
// run several gateway processes on one database: the same payment.Storage
// and payment.IdempotencyStore as package sqlite, through pgx's pool.
//
// Transactions. An Update is a REPEATABLE READ transaction: fn reads one
// snapshot throughout (the storage suite checks that no other Update's
// writes appear in the middle of one), and a row it writes that another
// transaction changed since that snapshot fails it with a serialization
// failure (40001) instead of losing that change. Update then runs fn again
// from the start, in a new transaction with a fresh snapshot; likewise when
// PostgreSQL aborts it as a deadlock victim (40P01). Snapshot isolation
// alone would still let two transactions decide a rule on snapshots that
// miss each other's inserts (two identical charges each seeing no other),
// so what decides a rule first writes to ("marks": an UPDATE that sets a
// column to its own value) the row the rule is about, which makes two such
// transactions conflict on that row: the second waits for the first one's
// COMMIT, fails, and runs again on a snapshot that holds its writes.
// (SELECT … FOR UPDATE would not do: once the first commits, the second
// goes on with its old snapshot.) The SQL core (package sqlstore) does the
// marking, because this engine's dialect says its reads must
// (MarksReads). So:
//
//   - every single-row read of a charge, token, refund, cancel,
//     subscription, scheduled payment, approval, webhook, delivery, console
//     user, console session or password reset inside an Update marks the
//     row, so two Updates that read one object take turns as they would on
//     one writer: no lost update, and no rule decided on a snapshot that
//     misses the other's writes (one pending cancel per charge, one use of
//     a reset link);
//   - a store's read does not mark it (every token on it would take
//     turns): UpdateStore writes the row it read, and that write fails
//     with 40001 when another transaction changed the row meanwhile;
//   - the duplicate-charge rule (RecentCharge) marks its token's row, so of
//     concurrent identical charges on one token exactly one is accepted,
//     across processes;
//   - RefundedAmount marks its charge's row, so concurrent refunds of one
//     charge cannot together exceed it;
//   - WebhookURLTaken marks the merchant's row, so one owner's webhooks
//     never get one URL twice;
//   - TakeQuota is one guarded INSERT … ON CONFLICT DO UPDATE … WHERE
//     used < limit on the counter's row;
//   - ClaimWork takes due, unleased items FOR UPDATE SKIP LOCKED, so every
//     process's worker claims different items without waiting on another.
//
// A rule that decides a write on rows none of these marks would need a mark
// of its own: REPEATABLE READ is not SERIALIZABLE, which would catch every
// such case but also aborts transactions that merely share index pages
// (every concurrent claim of the work queue, for one).
//
// fn may therefore run more than once: package payment's Update closures
// assign their results afresh on each run and act outside the transaction
// only after Update returns (Service.update gathers its effects afresh on each run). A
// View is a REPEATABLE READ, READ ONLY transaction that takes no locks.
//
// Types: ids are uuid, with the nil UUID where SQLite stores the empty
// string for an absent id (a merchant-level webhook's store) except in
// columns with a foreign key, where it is NULL; times are timestamptz
// (microseconds, read back in UTC); amounts bigint; metadata, event data
// and the other JSON documents text, kept byte for byte (jsonb would
// normalise them); calendar days date.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open database: a pool of connections to one PostgreSQL
// database (and the schema its search_path names).
type DB struct {
	pool *pgxpool.Pool
	// direct serves payment.IdempotencyStore and the key fingerprints,
	// each write one short transaction of its own (idempotency.go).
	direct
}

// direct is embedded under a name of the package's own, so that its
// methods are the DB's but its fields are not.
type direct = sqlstore.Direct

var (
	_ payment.Storage          = (*DB)(nil)
	_ payment.IdempotencyStore = (*DB)(nil)
)

// maxAttempts bounds how often Update runs fn when PostgreSQL aborts it as
// a deadlock victim or a serialization failure. Of n transactions that
// conflict on one row, each round commits one, so the last of 50 at once
// may need 50 rounds.
const maxAttempts = 200

// Open connects to the database at url (a postgres:// URL or key=value
// string as pgx reads it: pool_max_conns sizes the pool, by default the
// larger of 4 and the number of CPUs; parameters pgx does not know, such as
// search_path, are set on every connection) and applies any migration it
// has not seen. synchronous_commit is on unless url sets it: an Update is
// acknowledged only once its COMMIT is durable, whatever the server's
// default.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if _, set := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; !set {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		// The suite and the domain compare times in UTC; pgx would give
		// them back in the machine's zone.
		conn.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db := &DB{pool: pool}
	db.direct = direct{Dialect: dialect{}, Write: db.writeEach}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the pool.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// migrate applies the embedded migrations in name order in one
// transaction that first takes an advisory lock of the schema's, so that
// two processes starting at once apply each migration once: the second
// waits, then finds them recorded in schema_migrations.
func (db *DB) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('kessai.migrate.' || current_schema()))`); err != nil {
			return fmt.Errorf("postgres: migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			name text PRIMARY KEY, applied_on timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("postgres: migrations table: %w", err)
		}
		for _, name := range names {
			base := path.Base(name)
			var seen bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, base).Scan(&seen); err != nil {
				return err
			}
			if seen {
				continue
			}
			body, err := migrations.ReadFile(name)
			if err != nil {
				return err
			}
			// No arguments: the simple protocol, which runs a file of
			// several statements.
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("postgres: migration %s: %w", base, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, base); err != nil {
				return err
			}
		}
		return nil
	})
}

// Update runs fn in a REPEATABLE READ read-write transaction and commits
// it when fn returns nil. When PostgreSQL aborts the transaction as a
// deadlock victim or a serialization failure, fn runs again in a new one
// after a short random pause (see the package comment); fn is not started
// once ctx is done.
func (db *DB) Update(ctx context.Context, fn func(payment.Tx) error) error {
	var err error
	for attempt := range maxAttempts {
		if attempt > 0 {
			// A random pause, growing a little with each attempt, so that
			// the transactions that lost to one another do not meet again
			// at once.
			pause := time.Duration(rand.Int64N(int64(min(attempt, 20)) * int64(time.Millisecond)))
			select {
			case <-time.After(pause):
			case <-ctx.Done():
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		err = db.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadWrite}, true, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// View runs fn in a read-only transaction.
func (db *DB) View(ctx context.Context, fn func(payment.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

func (db *DB) run(ctx context.Context, opts pgx.TxOptions, write bool, fn func(payment.Tx) error) error {
	ptx, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	// Roll back on an error and when fn panics (a deferred call runs while
	// the panic unwinds, then lets it go on); after a commit, Rollback is a
	// no-op.
	defer func() { _ = ptx.Rollback(context.WithoutCancel(ctx)) }()
	q := &querier{tx: ptx, aborted: new(error)}
	if err := fn(sqlstore.NewTx(q, dialect{}, write)); err != nil {
		// fn may have wrapped the statement's error in its own without
		// %w (or returned another error because of it): a transaction a
		// conflict aborted is retried whatever fn made of that.
		if *q.aborted != nil {
			return *q.aborted
		}
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

// retryable reports whether err is PostgreSQL aborting a transaction that
// would succeed if run again: a deadlock victim or a serialization failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// querier runs sqlstore's statements, written with ? placeholders, on
// one pgx transaction: rebind numbers them $1, $2, …. aborted keeps the
// first error that aborted the transaction as a conflict with another
// (retryable), whatever the caller does with it.
type querier struct {
	tx      statements
	aborted *error
}

// statements is what a querier runs its statements on: a transaction, the
// pool itself for a one-read view (viewone.go) or for the writes outside
// the domain's transactions (idempotency.go).
type statements interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (q *querier) note(err error) error {
	if *q.aborted == nil && retryable(err) {
		*q.aborted = err
	}
	return err
}

func (q *querier) ExecContext(ctx context.Context, query string, args ...any) (sqlstore.Result, error) {
	tag, err := q.tx.Exec(ctx, rebind(query), args...)
	if err != nil {
		return nil, q.note(err)
	}
	return affected(tag.RowsAffected()), nil
}

func (q *querier) QueryRowContext(ctx context.Context, query string, args ...any) sqlstore.Row {
	return notedRow{q.tx.QueryRow(ctx, rebind(query), args...), q}
}

func (q *querier) QueryContext(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.tx.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, q.note(err)
	}
	return notedRows{rows, q}, nil
}

// affected is the rows a statement changed, as sqlstore asks for them.
type affected int64

func (n affected) RowsAffected() (int64, error) { return int64(n), nil }

// notedRow and notedRows pass the errors of a query's rows through note.
type notedRow struct {
	pgx.Row
	q *querier
}

func (r notedRow) Scan(dest ...any) error { return r.q.note(r.Row.Scan(dest...)) }

type notedRows struct {
	pgx.Rows
	q *querier
}

func (r notedRows) Scan(dest ...any) error { return r.q.note(r.Rows.Scan(dest...)) }

func (r notedRows) Err() error { return r.q.note(r.Rows.Err()) }

func (r notedRows) Close() error {
	r.Rows.Close()
	return nil
}

// rebind numbers the ? placeholders of query. The engine's statements hold
// no ? of their own (no string literal or operator with one), so every ?
// is a placeholder.
func rebind(query string) string {
	n := strings.Count(query, "?")
	if n == 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 2*n)
	i := 0
	for {
		j := strings.IndexByte(query, '?')
		if j < 0 {
			b.WriteString(query)
			return b.String()
		}
		i++
		b.WriteString(query[:j])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(i))
		query = query[j+1:]
	}
}
