package sqlite

import "context"

// WaitingForTurn is how many writes wait to start, for tests that build a
// group of a known size.
func (db *DB) WaitingForTurn() int { return int(db.writer.waiting.Load()) }

// SQL runs statements inside one write (UpdateSQL).
type SQL struct {
	ctx context.Context
	q   querier
}

// Exec runs a statement.
func (s SQL) Exec(query string, args ...any) error {
	_, err := s.q.ExecContext(s.ctx, query, args...)
	return err
}

// Int runs a query answering one integer.
func (s SQL) Int(query string, args ...any) (int, error) {
	var n int
	err := s.q.QueryRowContext(s.ctx, query, args...).Scan(&n)
	return n, err
}

// UpdateSQL runs fn as a write of its own, a member of a group like an
// Update's.
func (db *DB) UpdateSQL(ctx context.Context, fn func(SQL) error) error {
	return db.writer.update(ctx, func(q querier) error { return fn(SQL{ctx: ctx, q: q}) })
}
