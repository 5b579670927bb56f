package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kessai/kessai/server/sqlstore"
)

// Group commit.
//
// SQLite has one writer, and with synchronous=FULL every COMMIT waits for
// an fsync of the WAL: one transaction per COMMIT would cap the write rate
// at the disk's fsync rate however many requests wait. Concurrent writes
// therefore share one SQLite transaction and one COMMIT:
//
//   - One caller at a time runs statements on the write connection: it
//     holds the turn, a semaphore whose waiters are served first come,
//     first served. The first caller opens a transaction (BEGIN
//     IMMEDIATE); a caller that gets the turn while it is open joins it.
//   - Each caller's function (a logical transaction, a member) runs in its
//     own SAVEPOINT. When it fails or panics, ROLLBACK TO undoes exactly
//     its writes and the members before it keep theirs. Should the
//     savepoint be gone (SQLite rolls a whole transaction back by itself
//     after some errors, such as an I/O error), the group is lost and
//     every member of it fails.
//   - A member whose function succeeded hands the turn on and queues for
//     it again, behind everyone already waiting. When it gets the turn
//     back with its group still open, every caller that was waiting has
//     joined: it commits, one COMMIT and one fsync for the whole group (at
//     once when the group has maxGroup members, to bound its latency).
//   - Every member is answered only once the shared COMMIT has returned:
//     with success only if it succeeded, when its writes are durable; a
//     failed COMMIT fails every member. A member whose function failed is
//     answered after the COMMIT too (with the COMMIT's error if it
//     failed): its refusal may rest on what an earlier member wrote.
//
// Why what members read is safe: the members of a group run one after
// another, each seeing the writes of the members before it exactly as if
// each had committed on its own just before: the same serial order as one
// transaction per COMMIT gives, so every rule decided inside a transaction
// (the duplicate-charge rule, a one-time token used once, quotas, work
// claims, idempotency reservations) is decided as before. What a member
// saw of another member either lands with it in the same COMMIT or fails
// it, so no answer rests on writes that never landed. Every other reader
// (the read pool, other processes) sees committed data only (WAL
// snapshots): a group's writes appear all at once, at the COMMIT that also
// acknowledges its members.
//
// Cancellation: a caller waits for the turn as long as its context allows;
// once its function runs, its statements are not interrupted by its
// context (an interrupted statement may make SQLite roll back the whole
// transaction, the other members' writes with it), and once its writes are
// in the group it waits for the COMMIT, as a caller of a plain COMMIT
// would.
type groupWriter struct {
	pool *sql.DB
	// turn is held (a value in it) by the caller using the connection.
	turn chan struct{}
	// open is the group whose transaction is open; nil when none. Read
	// and written only by the caller holding the turn.
	open *group
	// maxGroup is the most members a group takes before it commits.
	maxGroup atomic.Int32

	transactions atomic.Uint64
	commits      atomic.Uint64
	// waiting counts the callers waiting for their first turn.
	waiting atomic.Int32
}

// defaultMaxGroup bounds a group: its first member waits for the others'
// functions (tens of microseconds each) before its COMMIT.
const defaultMaxGroup = 128

type group struct {
	tx *sql.Tx
	// members counts the members whose writes are in the transaction.
	members int
	// done is closed once the group is settled; err is then its outcome.
	done chan struct{}
	err  error
}

func newGroupWriter(pool *sql.DB) *groupWriter {
	w := &groupWriter{pool: pool, turn: make(chan struct{}, 1)}
	w.maxGroup.Store(defaultMaxGroup)
	return w
}

// querier is what a member's statements run on.
type querier = sqlstore.Querier

// uncancelled runs a member's statements without letting its context
// interrupt them (see Cancellation above); its values still reach the
// driver. The write connection keeps the statements prepared across
// groups (keptstmt.go).
type uncancelled struct{ g *group }

func (u uncancelled) ExecContext(ctx context.Context, query string, args ...any) (sqlstore.Result, error) {
	ctx = context.WithoutCancel(ctx)
	return u.g.tx.ExecContext(ctx, query, args...)
}

func (u uncancelled) QueryContext(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return rowsOf(u.g.tx.QueryContext(context.WithoutCancel(ctx), query, args...))
}

func (u uncancelled) QueryRowContext(ctx context.Context, query string, args ...any) sqlstore.Row {
	return u.g.tx.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}

// errGroupLost is a member's error when its group's transaction was lost
// before its COMMIT.
var errGroupLost = errors.New("sqlite: the group's transaction was lost")

// update runs fn as one member of a group (see above) and returns once the
// group's COMMIT has returned.
func (w *groupWriter) update(ctx context.Context, fn func(querier) error) error {
	w.waiting.Add(1)
	select {
	case w.turn <- struct{}{}:
		w.waiting.Add(-1)
	case <-ctx.Done():
		w.waiting.Add(-1)
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil { // both were ready
		<-w.turn
		return err
	}
	g := w.open
	if g == nil {
		// Not the caller's context: the transaction outlives it.
		sqlTx, err := w.pool.BeginTx(context.Background(), nil)
		if err != nil {
			<-w.turn
			return fmt.Errorf("sqlite: begin: %w", err)
		}
		g = &group{tx: sqlTx, done: make(chan struct{})}
		w.open = g
	}
	if _, err := g.tx.Exec(`SAVEPOINT member`); err != nil {
		w.lose(g, err)
		<-w.turn
		return g.err
	}
	// A panic in fn undoes fn's writes and gives the turn back while it
	// unwinds; it is not recovered.
	ran := false
	defer func() {
		if !ran {
			w.undo(g)
			<-w.turn
		}
	}()
	ferr := fn(uncancelled{g})
	ran = true
	if ferr != nil {
		alone := g.members == 0
		w.undo(g)
		<-w.turn
		if alone {
			// Nothing of anyone else was read: the refusal stands on
			// committed data.
			return ferr
		}
		<-g.done
		if g.err != nil {
			return g.err
		}
		return ferr
	}
	if _, err := g.tx.Exec(`RELEASE member`); err != nil {
		w.lose(g, err)
		<-w.turn
		return g.err
	}
	g.members++
	if g.members >= int(w.maxGroup.Load()) {
		w.commit(g)
		<-w.turn
		return g.err
	}
	<-w.turn
	// Queue again behind those waiting for the turn; whoever of the
	// group's members comes back first commits it.
	select {
	case <-g.done:
	case w.turn <- struct{}{}:
		if w.open == g {
			w.commit(g)
		}
		<-w.turn
		<-g.done
	}
	return g.err
}

// undo takes the writes of the member that failed out of g, with the turn
// held. The member alone in g takes the whole transaction away.
func (w *groupWriter) undo(g *group) {
	if g.members == 0 {
		_ = g.tx.Rollback()
		g.err = errGroupLost
		w.settle(g)
		return
	}
	if _, err := g.tx.Exec(`ROLLBACK TO member`); err != nil {
		w.lose(g, err)
		return
	}
	if _, err := g.tx.Exec(`RELEASE member`); err != nil {
		w.lose(g, err)
	}
}

// lose fails every member of g, with the turn held.
func (w *groupWriter) lose(g *group, cause error) {
	_ = g.tx.Rollback()
	g.err = fmt.Errorf("%w: %w", errGroupLost, cause)
	w.settle(g)
}

// commit commits g, with the turn held.
func (w *groupWriter) commit(g *group) {
	if err := g.tx.Commit(); err != nil {
		g.err = fmt.Errorf("sqlite: commit: %w", err)
	} else {
		w.commits.Add(1)
		w.transactions.Add(uint64(g.members))
	}
	w.settle(g)
}

func (w *groupWriter) settle(g *group) {
	if w.open == g {
		w.open = nil
	}
	close(g.done)
}

// WriteStats counts what the database committed since it was opened.
type WriteStats struct {
	// Transactions are the committed Updates and idempotency writes (the
	// logical transactions).
	Transactions uint64
	// Commits are the SQLite COMMITs that made them durable, one WAL
	// fsync each.
	Commits uint64
}

// WriteStats tells how many logical transactions were committed, and in
// how many COMMITs.
func (db *DB) WriteStats() WriteStats {
	return WriteStats{Transactions: db.writer.transactions.Load(), Commits: db.writer.commits.Load()}
}

// SetMaxGroup bounds how many logical transactions share one COMMIT
// (default 128); 1 turns group commit off: every Update commits on its
// own, as before group commit (benchmarks compare the two).
func (db *DB) SetMaxGroup(n int) {
	db.writer.maxGroup.Store(int32(min(max(n, 1), 1<<20)))
}
