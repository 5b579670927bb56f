package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Snapshot is one read transaction over the whole store, for copying it
// to another engine (kessai migrate): every table read through it is read
// as of one moment, whatever is written meanwhile.
type Snapshot struct {
	tx     *sql.Tx
	tables map[string][]string
}

// Snapshot begins a read transaction and takes its snapshot at once (in
// WAL mode a transaction's snapshot is taken by its first read), listing
// the tables and their columns. Close ends it.
func (db *DB) Snapshot(ctx context.Context) (*Snapshot, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: snapshot: %w", err)
	}
	s := &Snapshot{tx: tx, tables: map[string][]string{}}
	rows, err := tx.QueryContext(ctx, `SELECT m.name, c.name FROM sqlite_schema AS m, pragma_table_info(m.name) AS c
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, c.cid`)
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("sqlite: snapshot: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("sqlite: snapshot: %w", err)
		}
		s.tables[table] = append(s.tables[table], column)
	}
	if err := rows.Err(); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("sqlite: snapshot: %w", err)
	}
	return s, nil
}

// Close ends the snapshot's transaction.
func (s *Snapshot) Close() error { return s.tx.Rollback() }

// Tables returns the store's tables and each one's columns, in their
// order.
func (s *Snapshot) Tables() map[string][]string { return s.tables }

// Count returns how many rows table holds.
func (s *Snapshot) Count(ctx context.Context, table string) (int64, error) {
	if _, ok := s.tables[table]; !ok {
		return 0, fmt.Errorf("sqlite: no table %q", table)
	}
	var n int64
	if err := s.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quote(table)).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count %s: %w", table, err)
	}
	return n, nil
}

// Rows returns columns of every row of table in the order they were
// written (rowid). The values are SQLite's: int64, float64, string,
// []byte or nil.
func (s *Snapshot) Rows(ctx context.Context, table string, columns []string) (*sql.Rows, error) {
	have, ok := s.tables[table]
	if !ok {
		return nil, fmt.Errorf("sqlite: no table %q", table)
	}
	quoted := make([]string, len(columns))
	for i, c := range columns {
		if !slices.Contains(have, c) {
			return nil, fmt.Errorf("sqlite: no column %s.%s", table, c)
		}
		quoted[i] = quote(c)
	}
	rows, err := s.tx.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+quote(table)+` ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read %s: %w", table, err)
	}
	return rows, nil
}

// quote makes name an SQL identifier; the names come from the schema.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
