package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlstore"
)

// ViewOne runs fn, which makes exactly one read, as one statement on the
// pool with no transaction around it (payment.OneReadViewer). A single
// statement reads one snapshot of its own, so BEGIN and COMMIT would buy
// nothing but two more round trips to the server, for the point read that
// every checkout polls (GET of a charge).
//
// A second statement would read a second snapshot, so it panics
// (ErrSecondRead) rather than answer from two; a write is refused, as in
// any View.
func (db *DB) ViewOne(ctx context.Context, fn func(payment.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(sqlstore.NewTx(&querier{tx: &oneStatement{pool: db.pool}, aborted: new(error)}, dialect{}, false))
}

// ErrSecondRead is the panic of a ViewOne whose function read twice.
var ErrSecondRead = errors.New("postgres: ViewOne's function ran a second statement")

// errWriteInView refuses a write in a one-read view.
var errWriteInView = errors.New("postgres: a write in a read-only view")

// oneStatement runs one read on the pool, then none.
type oneStatement struct {
	pool interface {
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
	used bool
}

func (o *oneStatement) take() {
	if o.used {
		panic(ErrSecondRead)
	}
	o.used = true
}

func (o *oneStatement) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errWriteInView
}

func (o *oneStatement) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	o.take()
	return o.pool.Query(ctx, sql, args...)
}

func (o *oneStatement) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	o.take()
	return o.pool.QueryRow(ctx, sql, args...)
}
