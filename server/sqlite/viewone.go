package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlstore"
)

// ViewOne runs fn, which makes exactly one read, on a read connection with
// no transaction around it (payment.OneReadViewer).
//
// Why it is safe: in WAL mode a single statement reads one snapshot, from
// its first step until it is reset, so one SELECT outside a transaction
// sees exactly what it would see between BEGIN and COMMIT. Both would be
// two more statements on the connection, and the transaction's watcher
// goroutines (database/sql's and the driver's, for a request's cancelable
// context) cost about as much again as the point read of a charge.
//
// The statement runs without ctx's cancellation (the driver would start a
// goroutine to interrupt it): it is one point read, over in microseconds.
// Waiting for a free connection still ends with ctx.
//
// A second statement would read a second snapshot: fn's reads would not be
// one consistent view, so it panics (ErrSecondRead) rather than answer.
func (db *DB) ViewOne(ctx context.Context, fn func(payment.Tx) error) error {
	conn, err := db.read.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(sqlstore.NewTx(&oneRead{conn: conn}, dialect{}, false))
}

// ErrSecondRead is the panic of a ViewOne whose function read twice.
var ErrSecondRead = errors.New("sqlite: ViewOne's function ran a second statement")

// oneRead is the querier of a ViewOne: one statement, then none.
type oneRead struct {
	conn *sql.Conn
	used bool
}

func (o *oneRead) take() {
	if o.used {
		panic(ErrSecondRead)
	}
	o.used = true
}

func (o *oneRead) ExecContext(ctx context.Context, query string, args ...any) (sqlstore.Result, error) {
	o.take()
	return o.conn.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (o *oneRead) QueryContext(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	o.take()
	return rowsOf(o.conn.QueryContext(context.WithoutCancel(ctx), query, args...))
}

func (o *oneRead) QueryRowContext(ctx context.Context, query string, args ...any) sqlstore.Row {
	o.take()
	return o.conn.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}
