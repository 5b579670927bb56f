package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
)

// The write connection keeps its prepared statements.
//
// Every write waits for the one write connection, and the driver parses
// and plans each statement's text again on every call: a charge's writes,
// and the BEGIN, SAVEPOINT, RELEASE and COMMIT around them, spent 17 % of
// the charge benchmark's CPU in SQLite's parser on that connection. It
// therefore keeps the statements it prepared, by their text, across
// transactions and groups, as the read pool does (readstmt.go), and
// database/sql, which finds no ExecerContext or QueryerContext on it,
// prepares every statement through that cache and "closes" it once done
// (its rows closed), which hands it back.
//
// A statement is handed to one use at a time: the same text run again
// while the rows of its first run are still open (a lookup inside a loop
// over rows) gets a statement of its own, finalized after use.

// maxWriteStmts bounds the statements the write connection keeps; the
// domain's writes use a few dozen texts, and list queries built from
// their filters, or migration scripts, are not worth keeping past that.
const maxWriteStmts = 256

// openWritePool opens the write pool on dsn through the registered sqlite
// driver, with a statement-keeping connection whose transactions begin
// IMMEDIATE.
func openWritePool(dsn string) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	probe.Close()
	return sql.OpenDB(writeConnector{dsn: dsn, drv: drv}), nil
}

type writeConnector struct {
	dsn string
	drv driver.Driver
}

func (c writeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(writeDriverConn)
	if !ok {
		conn.Close()
		return nil, errors.New("sqlite: the driver's connections lack an interface the write pool needs")
	}
	return &writeConn{inner: inner, stmts: map[string]*writeStmt{}}, nil
}

func (c writeConnector) Driver() driver.Driver { return c.drv }

// writeDriverConn is what the write pool needs of the driver's
// connections.
type writeDriverConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.SessionResetter
	driver.Validator
}

// writeConn is the driver connection of the write pool. It deliberately
// implements neither driver.ExecerContext nor driver.QueryerContext, so
// that database/sql goes through PrepareContext.
type writeConn struct {
	inner writeDriverConn
	mu    sync.Mutex
	stmts map[string]*writeStmt
}

func (c *writeConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *writeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.mu.Lock()
	s, ok := c.stmts[query]
	if ok && !s.busy {
		s.busy = true
		c.mu.Unlock()
		return s, nil
	}
	keep := !ok && len(c.stmts) < maxWriteStmts
	c.mu.Unlock()
	ds, err := c.inner.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	stmt, ok := ds.(writeDriverStmt)
	if !ok {
		// Not one the cache can hand out: use it once, as without one.
		return ds, nil
	}
	s = &writeStmt{conn: c, inner: stmt, busy: true}
	if keep {
		c.mu.Lock()
		if _, taken := c.stmts[query]; !taken {
			s.kept = true
			c.stmts[query] = s
		}
		c.mu.Unlock()
	}
	return s, nil
}

func (c *writeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx begins a transaction with BEGIN IMMEDIATE, which takes the write
// lock up front (see the package comment), and ends it with COMMIT or
// ROLLBACK, each a kept statement.
func (c *writeConn) BeginTx(ctx context.Context, _ driver.TxOptions) (driver.Tx, error) {
	if err := c.execKept(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	return &writeTx{conn: c, ctx: ctx}, nil
}

func (c *writeConn) execKept(ctx context.Context, query string) error {
	ds, err := c.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	defer ds.Close()
	if e, ok := ds.(driver.StmtExecContext); ok {
		_, err = e.ExecContext(ctx, nil)
	} else {
		_, err = ds.Exec(nil) //nolint:staticcheck // a driver.Stmt without contexts
	}
	return err
}

type writeTx struct {
	conn *writeConn
	ctx  context.Context
}

// Commit commits. A COMMIT that failed may leave the transaction open (a
// deferred foreign key it found broken, say), and database/sql hands the
// connection on as if it had ended: it is rolled back, as the driver's own
// Commit does; a ROLLBACK with no transaction open fails harmlessly.
func (t *writeTx) Commit() error {
	err := t.conn.execKept(t.ctx, "COMMIT")
	if err != nil {
		_ = t.conn.execKept(context.Background(), "ROLLBACK")
	}
	return err
}

func (t *writeTx) Rollback() error { return t.conn.execKept(context.Background(), "ROLLBACK") }

func (c *writeConn) ResetSession(ctx context.Context) error { return c.inner.ResetSession(ctx) }

func (c *writeConn) IsValid() bool { return c.inner.IsValid() }

// Close finalizes the kept statements, then closes the connection.
func (c *writeConn) Close() error {
	c.mu.Lock()
	stmts := c.stmts
	c.stmts = map[string]*writeStmt{}
	c.mu.Unlock()
	var err error
	for _, s := range stmts {
		err = errors.Join(err, s.inner.Close())
	}
	return errors.Join(err, c.inner.Close())
}

// writeDriverStmt is what the cache needs of the driver's statements.
type writeDriverStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

// writeStmt is a prepared statement of the write connection.
type writeStmt struct {
	conn  *writeConn
	inner writeDriverStmt
	// kept: in the connection's cache, handed back by Close rather than
	// finalized; busy: handed to a use that has not closed it yet.
	kept, busy bool
}

// Close hands a kept statement back to its connection, and finalizes any
// other. database/sql calls it once the statement has run, or once its
// rows are closed.
func (s *writeStmt) Close() error {
	if !s.kept {
		return s.inner.Close()
	}
	s.conn.mu.Lock()
	s.busy = false
	s.conn.mu.Unlock()
	return nil
}

func (s *writeStmt) NumInput() int { return s.inner.NumInput() }

func (s *writeStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.inner.Exec(args) //nolint:staticcheck // the driver.Stmt interface
}

func (s *writeStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.inner.Query(args) //nolint:staticcheck // the driver.Stmt interface
}

func (s *writeStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.inner.ExecContext(ctx, args)
}

func (s *writeStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.inner.QueryContext(ctx, args)
}
