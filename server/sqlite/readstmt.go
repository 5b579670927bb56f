package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
)

// The read pool keeps each connection's prepared statements.
//
// The driver prepares every query it is handed as text: it parses and
// plans the SQL on each call, which cost more than running the query for
// the point reads of an API request (a store and a charge by id). The read
// pool's connections therefore keep the statements they prepared, by their
// text, and database/sql, which finds no QueryerContext on them, prepares
// through that cache and "closes" the statement once its rows are closed,
// which hands it back. The writer's pool is not concerned.
//
// A statement is handed to one query at a time: a second query of the same
// text on the same connection while the first one's rows are still open (a
// lookup inside a loop over rows) gets a statement of its own, closed
// after use as without the cache.

// maxReadStmts bounds the statements a read connection keeps; list queries
// are built from their filters, so their texts are many but few are hot.
const maxReadStmts = 128

// openReadPool opens the read pool on dsn through the registered sqlite
// driver, with statement-keeping connections.
func openReadPool(dsn string) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	probe.Close()
	return sql.OpenDB(readConnector{dsn: dsn, drv: drv}), nil
}

type readConnector struct {
	dsn string
	drv driver.Driver
}

func (c readConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(readDriverConn)
	if !ok {
		conn.Close()
		return nil, errors.New("sqlite: the driver's connections lack an interface the read pool needs")
	}
	return &readConn{inner: inner, stmts: map[string]*readStmt{}}, nil
}

func (c readConnector) Driver() driver.Driver { return c.drv }

// readDriverConn is what the read pool needs of the driver's connections.
type readDriverConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.SessionResetter
	driver.Validator
}

// readConn is a driver connection of the read pool. It deliberately does
// not implement driver.QueryerContext or driver.ExecerContext, so that
// database/sql goes through PrepareContext.
type readConn struct {
	inner readDriverConn
	mu    sync.Mutex
	stmts map[string]*readStmt
}

func (c *readConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *readConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.mu.Lock()
	s, ok := c.stmts[query]
	if ok && !s.busy {
		s.busy = true
		c.mu.Unlock()
		return s, nil
	}
	keep := !ok && len(c.stmts) < maxReadStmts
	c.mu.Unlock()
	ds, err := c.inner.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	stmt, ok := ds.(readDriverStmt)
	if !ok {
		// Not one the cache can hand out: use it once, as without one.
		return ds, nil
	}
	s = &readStmt{conn: c, inner: stmt, busy: true}
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

func (c *readConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx begins a transaction with the kept statement BEGIN, and ends it
// with COMMIT or ROLLBACK, kept too: what the driver runs for a pool whose
// DSN sets no _txlock (it ignores the options), without preparing them
// again for every read.
func (c *readConn) BeginTx(ctx context.Context, _ driver.TxOptions) (driver.Tx, error) {
	if err := c.execKept(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	return &readTx{conn: c, ctx: ctx}, nil
}

func (c *readConn) execKept(ctx context.Context, query string) error {
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

type readTx struct {
	conn *readConn
	ctx  context.Context
}

// Commit commits; a COMMIT that failed (say, interrupted) leaves the
// transaction open, so it is rolled back, as the driver does.
func (t *readTx) Commit() error {
	err := t.conn.execKept(t.ctx, "COMMIT")
	if err != nil {
		_ = t.conn.execKept(context.Background(), "ROLLBACK")
	}
	return err
}

func (t *readTx) Rollback() error { return t.conn.execKept(context.Background(), "ROLLBACK") }

func (c *readConn) ResetSession(ctx context.Context) error { return c.inner.ResetSession(ctx) }

func (c *readConn) IsValid() bool { return c.inner.IsValid() }

// Close finalizes the kept statements, then closes the connection.
func (c *readConn) Close() error {
	c.mu.Lock()
	stmts := c.stmts
	c.stmts = map[string]*readStmt{}
	c.mu.Unlock()
	var err error
	for _, s := range stmts {
		err = errors.Join(err, s.inner.Close())
	}
	return errors.Join(err, c.inner.Close())
}

// readDriverStmt is what the cache needs of the driver's statements.
type readDriverStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

// readStmt is a prepared statement of a read connection.
type readStmt struct {
	conn  *readConn
	inner readDriverStmt
	// kept: in the connection's cache, handed back by Close rather than
	// finalized; busy: handed to a query whose rows are not closed yet.
	kept, busy bool
}

// Close hands a kept statement back to its connection, and finalizes any
// other. database/sql calls it once the statement's rows are closed.
func (s *readStmt) Close() error {
	if !s.kept {
		return s.inner.Close()
	}
	s.conn.mu.Lock()
	s.busy = false
	s.conn.mu.Unlock()
	return nil
}

func (s *readStmt) NumInput() int { return s.inner.NumInput() }

func (s *readStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.inner.Exec(args) //nolint:staticcheck // the driver.Stmt interface
}

func (s *readStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.inner.Query(args) //nolint:staticcheck // the driver.Stmt interface
}

func (s *readStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.inner.ExecContext(ctx, args)
}

func (s *readStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.inner.QueryContext(ctx, args)
}
