package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// writeFixture is a database opened as the gateway opens it, with a table
// t of x = 1..5.
func writeFixture(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Exec(t.Context(), `CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3), (4), (5)`); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// keptWriteStmts counts the statements the write connection keeps, and
// tells whether query is one of them.
func keptWriteStmts(t *testing.T, db *DB, query string) (int, bool) {
	t.Helper()
	conn, err := db.write.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, kept := -1, false
	if err := conn.Raw(func(dc any) error {
		c := dc.(*keptConn)
		c.mu.Lock()
		n = len(c.stmts)
		_, kept = c.stmts[query]
		c.mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n, kept
}

// TestWriteStmtNested: in a write, a query run again while the rows of its
// first run are still open gets a statement of its own; both answer in
// full, in every group, and the statement is kept across groups.
func TestWriteStmtNested(t *testing.T) {
	db, _ := writeFixture(t)
	const q = `SELECT x FROM t WHERE x >= ? ORDER BY x`
	first := 0
	for round := range 3 {
		var outer []int
		err := db.writer.update(t.Context(), func(tx querier) error {
			outer = outer[:0]
			rows, err := tx.QueryContext(t.Context(), q, 1)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var x, first int
				if err := rows.Scan(&x); err != nil {
					return err
				}
				outer = append(outer, x)
				if err := tx.QueryRowContext(t.Context(), q, x).Scan(&first); err != nil || first != x {
					return fmt.Errorf("nested query from %d: %d, %v", x, first, err)
				}
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if fmt.Sprint(outer) != "[1 2 3 4 5]" {
			t.Fatalf("round %d: outer rows %v", round, outer)
		}
		n, kept := keptWriteStmts(t, db, q)
		if round == 0 {
			first = n
		}
		if !kept || n != first {
			t.Errorf("round %d: %d statements kept (%d after the first), the query's among them: %t", round, n, first, kept)
		}
	}
}

// TestWriteStmtBounded: the write connection keeps at most maxWriteStmts
// statements; past that statements are prepared and finalized each time,
// and still run.
func TestWriteStmtBounded(t *testing.T) {
	db, _ := writeFixture(t)
	ctx := context.Background()
	// A statement that failed leaves its kept statement usable.
	if err := db.Exec(ctx, `CREATE TABLE u (x INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for i, v := range []int{1, 1, 2} {
		err := db.writer.update(ctx, func(tx querier) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO u (x) VALUES (?)`, v)
			return err
		})
		if fails := i == 1; (err != nil) != fails {
			t.Fatalf("insert %d of %d: %v", i, v, err)
		}
	}
	for i := range 2 * maxWriteStmts {
		for range 2 {
			err := db.writer.update(ctx, func(tx querier) error {
				if _, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE t SET x = x + %d WHERE x < 0`, i)); err != nil {
					return err
				}
				var n int
				if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 5 {
					return fmt.Errorf("%d rows, %v", n, err)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("statement %d: %v", i, err)
			}
		}
	}
	if n, _ := keptWriteStmts(t, db, ""); n != maxWriteStmts {
		t.Errorf("%d statements kept, want %d", n, maxWriteStmts)
	}
}

// TestWriteTxImmediate: a write takes the database's write lock when it
// begins, before its first write: another process cannot slip a write in
// between a write's reads and its writes (it would fail half-way with
// SQLITE_BUSY instead), and waits or is refused at once.
func TestWriteTxImmediate(t *testing.T) {
	db, path := writeFixture(t)
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	ctx := context.Background()
	err = db.writer.update(ctx, func(tx querier) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			return err
		}
		_, err := other.ExecContext(ctx, `INSERT INTO t VALUES (6)`)
		if err == nil || !strings.Contains(err.Error(), "locked") {
			return fmt.Errorf("another connection wrote while a write that had only read was open: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteTempStoreInMemory: the write connection keeps its temporary
// files, the savepoints' sub-journals among them, in memory.
func TestWriteTempStoreInMemory(t *testing.T) {
	db, _ := writeFixture(t)
	var mode int
	err := db.writer.update(t.Context(), func(tx querier) error {
		return tx.QueryRowContext(t.Context(), `PRAGMA temp_store`).Scan(&mode)
	})
	if err != nil || mode != 2 {
		t.Fatalf("temp_store %d, %v; want 2 (MEMORY)", mode, err)
	}
}
