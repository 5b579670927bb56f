// Package sqlstore is the SQL that Kessai's two storage engines share: the
// tables' columns, how a row is scanned and written, the filters and the
// paging of lists, and the implementation of every payment.Tx method,
// written once. An engine (package sqlite, package postgres) gives it
// what is its own: a Querier that runs statements on the engine's driver,
// and a Dialect that says how the engine stores an id or a time and how
// its SQL spells what the two spell differently. Connections, locking,
// commits and their retries, migrations and change feeds stay in the
// engines.
//
// Statements are written with ? placeholders; an engine whose driver
// numbers them ($1, $2, …) rewrites them as it runs them.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Querier runs the statements of one transaction, or of one read outside
// any. The method names are database/sql's, so that a *sql.Tx is one
// wrapper away.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) Row
}

// Result is what a statement that returns no rows reports.
type Result interface {
	RowsAffected() (int64, error)
}

// Row is the one row of a query. Scan reports a missing row with an error
// that is sql.ErrNoRows (errors.Is), as both engines' drivers do.
type Row interface {
	Scan(dest ...any) error
}

// Rows are the rows of a query, read one after another.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Dialect is what makes one engine's SQL and values differ from the
// other's. SQL fragments it returns use ? placeholders, and take the
// arguments their doc comment says.
type Dialect interface {
	// Name starts the engine's error messages ("sqlite", "postgres").
	Name() string

	// ID is an id as the engine stores it.
	ID(id uuid.UUID) any
	// OptionalID is an id of a column without a foreign key, where
	// uuid.Nil means none and is stored as the engine's "no id".
	OptionalID(id uuid.UUID) any
	// EffectID is an id of an idempotent effect (uuid.Nil: none).
	EffectID(id uuid.UUID) any
	// Time is a time as the engine stores it.
	Time(t time.Time) any

	// MarksReads reports whether a single-row read inside an Update
	// must mark the row it reads (and the reads that decide a rule the
	// row they decide on), because the engine runs writers side by side
	// on snapshots: see Tx.
	MarksReads() bool

	// NoLease is the SQL value of a work item's lease when it is not
	// claimed.
	NoLease() string
	// ContainsFold is the condition "column contains ?", ASCII letters in
	// any case, no character a wildcard; one argument.
	ContainsFold(column string) string
	// EqualFold is the condition "column is ?", ASCII letters in any
	// case; one argument.
	EqualFold(column string) string
	// IDText is an id column compared with a text term: a term that is
	// no id finds none, and is no error.
	IDText(column string) string
	// JSONText is the text of the value at path in the JSON object of
	// column (NULL when there is none).
	JSONText(column string, path ...string) string
	// JSONElements is a FROM item, named j, with a row for each element
	// of the JSON array column, its text in j.value.
	JSONElements(column string) string
	// MetadataMatches is the condition "the metadata column holds the key
	// ? with a value whose text is ?" (payment.Metadata.Matches); the
	// arguments are the key four times, then the value.
	MetadataMatches() string
	// MetadataValueIs is the condition "some value of the metadata
	// column has the text ?"; one argument.
	MetadataValueIs() string
	// InsertionOrder is the column that numbers the approvals in the
	// order they were inserted.
	InsertionOrder() string
	// Bytewise is expr to be ordered byte by byte, as Go orders strings.
	Bytewise(expr string) string
	// WholeTable is table for a query that reads every row of it.
	WholeTable(table string) string
	// SkipLocked ends a subquery that picks rows to delete, so that rows
	// another transaction is deleting are passed over.
	SkipLocked() string
	// ClaimWork is the statement that claims due work (Tx.ClaimWork),
	// returning the claimed items' columns in any order. Its arguments:
	// now, now, limit, the claimant, the end of the lease.
	ClaimWork(columns string) string
}

// Tx implements payment.Tx on one transaction of an engine.
//
// Inside an Update of an engine whose Dialect MarksReads (PostgreSQL:
// REPEATABLE READ writers side by side), every single-row read marks the
// row it reads (an UPDATE that sets a column to its own value, RETURNING
// the row), and the reads that decide a rule mark the row the rule is
// about: two transactions that read one object, or decide one rule, then
// conflict on its row, and the second fails and runs again on a snapshot
// that holds the first one's writes, as they would take turns on one
// writer. Package postgres explains why a SELECT … FOR UPDATE would not
// do. An engine with one writer at a time (SQLite) marks nothing.
type Tx struct {
	q     Querier
	d     Dialect
	marks bool
}

var _ payment.Tx = (*Tx)(nil)

// NewTx returns the payment.Tx of the statements q runs. write is set for
// the transaction of an Update.
func NewTx(q Querier, d Dialect, write bool) *Tx {
	return &Tx{q: q, d: d, marks: write && d.MarksReads()}
}

// pointRead is a read of one row of a table: a SELECT, and the UPDATE that
// marks the row instead when the transaction must (Tx), both made once.
type pointRead struct {
	sel, mark string
}

// newPointRead reads columns of the row of table where holds; mark is a
// column no index holds, set to itself to mark the row.
func newPointRead(mark, columns, table, where string) pointRead {
	return pointRead{
		sel:  `SELECT ` + columns + ` FROM ` + table + ` WHERE ` + where,
		mark: `UPDATE ` + table + ` SET ` + mark + ` = ` + mark + ` WHERE ` + where + ` RETURNING ` + columns,
	}
}

func (t *Tx) readOne(ctx context.Context, r pointRead, args ...any) Row {
	if t.marks {
		return t.q.QueryRowContext(ctx, r.mark, args...)
	}
	return t.q.QueryRowContext(ctx, r.sel, args...)
}

// lockRow marks the row of table with id, when the transaction marks its
// reads (Tx): it holds the row's lock until it ends, and a transaction
// that locks or writes the row after it fails once it commits. column
// (one no index holds) is set to its own value: the write changes nothing
// anyone reads. A missing row locks nothing and is no error (the rule's
// own query then finds nothing either).
func (t *Tx) lockRow(ctx context.Context, table, column string, id uuid.UUID) error {
	if !t.marks {
		return nil
	}
	_, err := t.q.ExecContext(ctx, `UPDATE `+table+` SET `+column+` = `+column+` WHERE id = ?`, t.d.ID(id))
	return err
}

// notFound turns a missing row into the domain's NOT_FOUND.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return payment.NotFound(what)
	}
	return err
}

// mustAffect turns a write that found no row into NOT_FOUND.
func mustAffect(res Result, err error, what string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return payment.NotFound(what)
	}
	return nil
}

// affectedOne reports whether a write changed exactly one row.
func affectedOne(res Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// queryAll reads every row a query returns.
func queryAll[T any](ctx context.Context, t *Tx, scan func(Dialect, Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := t.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		item, err := scan(t.d, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, rows.Err()
}

// listPage reads one page of table rows matching where, ordered by id (the
// creation order of v7 ids). It fetches one row more than asked to know
// whether more follow, and counts the total only for a first page.
func listPage[T any](ctx context.Context, t *Tx, columns, table, where string, args []any,
	p payment.ListParams, scan func(Dialect, Row) (T, error)) (payment.Page[T], error) {
	page := payment.Page[T]{Items: []T{}}
	order, cmp := "DESC", "<"
	if p.Direction == payment.Asc {
		order, cmp = "ASC", ">"
	}
	limit := p.Limit
	if limit <= 0 {
		limit = payment.DefaultLimit
	}
	cond, condArgs := where, append([]any(nil), args...)
	if p.Cursor != uuid.Nil {
		cond += " AND id " + cmp + " ?"
		condArgs = append(condArgs, t.d.ID(p.Cursor))
	} else {
		var total int
		if err := t.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+where, args...).Scan(&total); err != nil {
			return page, err
		}
		page.TotalHits = &total
	}
	rows, err := t.q.QueryContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+cond+` ORDER BY id `+order+` LIMIT ?`,
		append(condArgs, limit+1)...)
	if err != nil {
		return page, err
	}
	defer rows.Close()
	for rows.Next() {
		item, err := scan(t.d, rows)
		if err != nil {
			return page, err
		}
		page.Items = append(page.Items, item)
	}
	if err := rows.Err(); err != nil {
		return page, err
	}
	if len(page.Items) > limit {
		page.Items, page.HasMore = page.Items[:limit], true
	}
	return page, nil
}

// conditions builds a WHERE clause from the filters that are set.
type conditions struct {
	d     Dialect
	parts []string
	args  []any
}

func (c *conditions) add(part string, args ...any) {
	c.parts = append(c.parts, part)
	c.args = append(c.args, args...)
}

func (c *conditions) where() string {
	if len(c.parts) == 0 {
		return "1 = 1"
	}
	return strings.Join(c.parts, " AND ")
}

// scope restricts a list to one merchant and, if given, one store.
func (c *conditions) scope(merchantID, storeID uuid.UUID) {
	c.add("merchant_id = ?", c.d.ID(merchantID))
	if storeID != uuid.Nil {
		c.add("store_id = ?", c.d.ID(storeID))
	}
}
