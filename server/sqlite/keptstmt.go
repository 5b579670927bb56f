package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
)

// Both pools' connections keep their prepared statements.
//
// The driver prepares every statement it is handed as text: it parses and
// plans the SQL on each call, which cost more than running it for the
// point reads of an API request (14 % of the read path's CPU) and for a
// charge's writes on the one write connection every write waits for (17 %
// of the charge benchmark's CPU, BEGIN, SAVEPOINT, RELEASE and COMMIT
// included). So each connection keeps the statements it prepared, by
// their text, across transactions, and database/sql, which finds no
// QueryerContext or ExecerContext on it, prepares every statement through
// that cache and "closes" it once done (once its rows are closed), which
// hands it back.
//
// A statement is handed to one use at a time: the same text run again
// while the rows of its first run are still open (a lookup inside a loop
// over rows) gets a statement of its own, finalized after use.

// openKeptPool opens a pool on dsn through the registered sqlite driver,
// whose connections keep up to maxStmts statements and begin their
// transactions with begin (BEGIN for reads, BEGIN IMMEDIATE for writes).
func openKeptPool(dsn, begin string, maxStmts int) (*sql.DB, error) {
	probe, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	drv := probe.Driver()
	probe.Close()
	return sql.OpenDB(keptConnector{dsn: dsn, drv: drv, begin: begin, maxStmts: maxStmts}), nil
}

type keptConnector struct {
	dsn      string
	drv      driver.Driver
	begin    string
	maxStmts int
}

func (c keptConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(keptDriverConn)
	if !ok {
		conn.Close()
		return nil, errors.New("sqlite: the driver's connections lack an interface the pools need")
	}
	return &keptConn{inner: inner, begin: c.begin, maxStmts: c.maxStmts, stmts: map[string]*keptStmt{}}, nil
}

func (c keptConnector) Driver() driver.Driver { return c.drv }

// keptDriverConn is what the pools need of the driver's connections.
type keptDriverConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.SessionResetter
	driver.Validator
}

// keptConn is a driver connection that keeps its statements. It
// deliberately implements neither driver.QueryerContext nor
// driver.ExecerContext, so that database/sql goes through PrepareContext.
type keptConn struct {
	inner    keptDriverConn
	begin    string
	maxStmts int
	mu       sync.Mutex
	stmts    map[string]*keptStmt
}

func (c *keptConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *keptConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.mu.Lock()
	s, ok := c.stmts[query]
	if ok && !s.busy {
		s.busy = true
		c.mu.Unlock()
		return s, nil
	}
	keep := !ok && len(c.stmts) < c.maxStmts
	c.mu.Unlock()
	ds, err := c.inner.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	stmt, ok := ds.(keptDriverStmt)
	if !ok {
		// Not one the cache can hand out: use it once, as without one.
		return ds, nil
	}
	s = &keptStmt{conn: c, inner: stmt, busy: true}
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

func (c *keptConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx begins a transaction with the connection's kept BEGIN statement
// (the driver ignores the options, and so do the pools: a read pool's DSN
// makes it read-only), and ends it with COMMIT or ROLLBACK, kept too.
func (c *keptConn) BeginTx(ctx context.Context, _ driver.TxOptions) (driver.Tx, error) {
	if err := c.execKept(ctx, c.begin); err != nil {
		return nil, err
	}
	return &keptTx{conn: c, ctx: ctx}, nil
}

func (c *keptConn) execKept(ctx context.Context, query string) error {
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

type keptTx struct {
	conn *keptConn
	ctx  context.Context
}

// Commit commits; a COMMIT that failed (say, interrupted, or the disk
// full) leaves the transaction open, so it is rolled back, as the driver
// does: the next transaction could not begin otherwise.
func (t *keptTx) Commit() error {
	err := t.conn.execKept(t.ctx, "COMMIT")
	if err != nil {
		_ = t.conn.execKept(context.Background(), "ROLLBACK")
	}
	return err
}

func (t *keptTx) Rollback() error { return t.conn.execKept(context.Background(), "ROLLBACK") }

func (c *keptConn) ResetSession(ctx context.Context) error { return c.inner.ResetSession(ctx) }

func (c *keptConn) IsValid() bool { return c.inner.IsValid() }

// Close finalizes the kept statements, then closes the connection.
func (c *keptConn) Close() error {
	c.mu.Lock()
	stmts := c.stmts
	c.stmts = map[string]*keptStmt{}
	c.mu.Unlock()
	var err error
	for _, s := range stmts {
		err = errors.Join(err, s.inner.Close())
	}
	return errors.Join(err, c.inner.Close())
}

// keptDriverStmt is what the cache needs of the driver's statements.
type keptDriverStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

// keptStmt is a prepared statement of a keeping connection.
type keptStmt struct {
	conn  *keptConn
	inner keptDriverStmt
	// kept: in the connection's cache, handed back by Close rather than
	// finalized; busy: handed to a use that has not closed it yet.
	kept, busy bool
}

// Close hands a kept statement back to its connection, and finalizes any
// other. database/sql calls it once the statement has run, or once its
// rows are closed.
func (s *keptStmt) Close() error {
	if !s.kept {
		return s.inner.Close()
	}
	s.conn.mu.Lock()
	s.busy = false
	s.conn.mu.Unlock()
	return nil
}

func (s *keptStmt) NumInput() int { return s.inner.NumInput() }

func (s *keptStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.inner.Exec(args) //nolint:staticcheck // the driver.Stmt interface
}

func (s *keptStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.inner.Query(args) //nolint:staticcheck // the driver.Stmt interface
}

func (s *keptStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.inner.ExecContext(ctx, args)
}

func (s *keptStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.inner.QueryContext(ctx, args)
}
