package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Column is a column of the schema, as a copy into it needs to know it.
type Column struct {
	Name string
	// Type is information_schema's data_type: uuid, text, bigint,
	// integer, boolean, bytea, date, timestamp with time zone.
	Type     string
	Nullable bool
	// Identity: the column numbers its rows (GENERATED … AS IDENTITY).
	Identity bool
}

// Table is a table of the schema and its columns, in their order.
type Table struct {
	Name    string
	Columns []Column
}

// ErrNotEmpty is Restore's answer when the schema already holds rows.
type ErrNotEmpty struct{ Table string }

func (e ErrNotEmpty) Error() string {
	return fmt.Sprintf("postgres: the target already holds data (table %s): a store is only copied into an empty schema", e.Table)
}

// RowSource gives a table's rows one at a time, as pgx's CopyFromSource.
type RowSource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// Restorer writes whole tables in Restore's transaction.
type Restorer struct {
	tx     pgx.Tx
	tables []Table
}

// Restore runs fn in one transaction that it commits only if fn returns
// nil: a copy into the schema is all or nothing. It first takes the lock
// under which migrations are applied (a gateway starting on the schema
// meanwhile waits for the copy) and refuses, with ErrNotEmpty, a schema
// any of whose tables holds a row.
func (db *DB) Restore(ctx context.Context, fn func(*Restorer) error) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('kessai.migrate.' || current_schema()))`); err != nil {
			return fmt.Errorf("postgres: migration lock: %w", err)
		}
		tables, err := schemaTables(ctx, tx)
		if err != nil {
			return err
		}
		for _, t := range tables {
			var held bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{t.Name}.Sanitize()+`)`).Scan(&held); err != nil {
				return fmt.Errorf("postgres: %s: %w", t.Name, err)
			}
			if held {
				return ErrNotEmpty{Table: t.Name}
			}
		}
		return fn(&Restorer{tx: tx, tables: tables})
	})
}

// Tables returns the schema's tables but schema_migrations, each after
// every table its foreign keys reference, so that copying them in this
// order satisfies every foreign key.
func (r *Restorer) Tables() []Table { return r.tables }

// Copy writes the rows of src into table's columns (COPY), numbering
// identity columns on from the largest value written, and returns how
// many rows it wrote.
func (r *Restorer) Copy(ctx context.Context, table string, columns []string, src RowSource) (int64, error) {
	i := slices.IndexFunc(r.tables, func(t Table) bool { return t.Name == table })
	if i < 0 {
		return 0, fmt.Errorf("postgres: no table %q", table)
	}
	n, err := r.tx.CopyFrom(ctx, pgx.Identifier{table}, columns, src)
	if err != nil {
		return n, fmt.Errorf("postgres: copy %s: %w", table, err)
	}
	for _, c := range r.tables[i].Columns {
		if !c.Identity || !slices.Contains(columns, c.Name) {
			continue
		}
		// The next row numbered by the column comes after the copied ones.
		if _, err := r.tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(MAX(`+pgx.Identifier{c.Name}.Sanitize()+`), 1), MAX(`+
			pgx.Identifier{c.Name}.Sanitize()+`) IS NOT NULL) FROM `+pgx.Identifier{table}.Sanitize(), table, c.Name); err != nil {
			return n, fmt.Errorf("postgres: %s.%s: %w", table, c.Name, err)
		}
	}
	return n, nil
}

// Count returns how many rows table holds.
func (db *DB) Count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count %s: %w", table, err)
	}
	return n, nil
}

// schemaTables lists the tables of the current schema but
// schema_migrations, ordered so that referenced tables come first.
func schemaTables(ctx context.Context, tx pgx.Tx) ([]Table, error) {
	rows, err := tx.Query(ctx, `SELECT table_name, column_name, data_type, is_nullable = 'YES', is_identity = 'YES'
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'
		ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("postgres: schema: %w", err)
	}
	var tables []Table
	for rows.Next() {
		var table string
		var c Column
		if err := rows.Scan(&table, &c.Name, &c.Type, &c.Nullable, &c.Identity); err != nil {
			return nil, fmt.Errorf("postgres: schema: %w", err)
		}
		if len(tables) == 0 || tables[len(tables)-1].Name != table {
			tables = append(tables, Table{Name: table})
		}
		tables[len(tables)-1].Columns = append(tables[len(tables)-1].Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: schema: %w", err)
	}
	refs := map[string][]string{}
	rows, err = tx.Query(ctx, `SELECT f.relname, t.relname FROM pg_constraint c
		JOIN pg_class f ON f.oid = c.conrelid JOIN pg_class t ON t.oid = c.confrelid
		WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, fmt.Errorf("postgres: schema: %w", err)
	}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			return nil, fmt.Errorf("postgres: schema: %w", err)
		}
		if from != to {
			refs[from] = append(refs[from], to)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: schema: %w", err)
	}
	// Depth-first: a table after what it references.
	var ordered []Table
	state := map[string]int{} // 1 visiting, 2 done
	byName := map[string]Table{}
	for _, t := range tables {
		byName[t.Name] = t
	}
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case 1:
			return errors.New("postgres: the schema's foreign keys make a cycle at " + name)
		case 2:
			return nil
		}
		state[name] = 1
		for _, to := range refs[name] {
			if err := visit(to); err != nil {
				return err
			}
		}
		state[name] = 2
		if t, ok := byName[name]; ok {
			ordered = append(ordered, t)
		}
		return nil
	}
	for _, t := range tables {
		if err := visit(t.Name); err != nil {
			return nil, err
		}
	}
	return ordered, nil
}
