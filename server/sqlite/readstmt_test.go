package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// readPoolFixture is a database file with a table t of x = 1..5 and the
// read pool over it.
func readPoolFixture(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3), (4), (5)`); err != nil {
		t.Fatal(err)
	}
	read, err := openReadPool("file:" + path + "?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { read.Close() })
	return read
}

func keptStmts(t *testing.T, conn *sql.Conn) int {
	t.Helper()
	n := -1
	if err := conn.Raw(func(dc any) error {
		c := dc.(*keptConn)
		c.mu.Lock()
		n = len(c.stmts)
		c.mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadStmtNested: a query run again on the same connection while the
// rows of its first run are still open gets a statement of its own; both
// answer in full, and the statement is kept for later reads.
func TestReadStmtNested(t *testing.T) {
	read := readPoolFixture(t)
	ctx := context.Background()
	conn, err := read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for round := range 3 {
		tx := conn
		const q = `SELECT x FROM t WHERE x >= ? ORDER BY x`
		rows, err := tx.QueryContext(ctx, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		var outer []int
		for rows.Next() {
			var x, first int
			if err := rows.Scan(&x); err != nil {
				t.Fatal(err)
			}
			outer = append(outer, x)
			if err := tx.QueryRowContext(ctx, q, x).Scan(&first); err != nil || first != x {
				t.Fatalf("round %d: nested query from %d: %d, %v", round, x, first, err)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(outer) != "[1 2 3 4 5]" {
			t.Fatalf("round %d: outer rows %v", round, outer)
		}
		if n := keptStmts(t, conn); n != 1 {
			t.Errorf("round %d: %d statements kept, want 1", round, n)
		}
	}
}

// TestReadStmtBounded: a connection keeps at most maxReadStmts statements;
// past that queries are prepared and finalized each time, and still answer.
func TestReadStmtBounded(t *testing.T) {
	read := readPoolFixture(t)
	read.SetMaxOpenConns(1)
	ctx := context.Background()
	tx, err := read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	for i := range 2 * maxReadStmts {
		for range 2 {
			var n int
			if err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT COUNT(*) + %d FROM t`, i)).Scan(&n); err != nil || n != 5+i {
				t.Fatalf("query %d: %d, %v", i, n, err)
			}
		}
	}
	if n := keptStmts(t, tx); n != maxReadStmts {
		t.Errorf("%d statements kept, want %d", n, maxReadStmts)
	}
	// A query that fails leaves its statement usable.
	var x int
	if err := tx.QueryRowContext(ctx, `SELECT x FROM t WHERE x = ?`, 9).Scan(&x); err != sql.ErrNoRows {
		t.Fatalf("no row: %v", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT x FROM t WHERE x = ?`, 4).Scan(&x); err != nil || x != 4 {
		t.Fatalf("after no row: %d, %v", x, err)
	}
}

// TestReadTxSnapshot: the read pool's transactions, begun and ended with
// kept statements, are transactions: a write committed meanwhile is not
// seen until the next one; a rollback ends one as well.
func TestReadTxSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	read, err := openReadPool("file:" + path + "?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	ctx := context.Background()
	count := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		t.Helper()
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, end := range []string{"commit", "rollback", "commit"} {
		tx, err := read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		before := count(tx)
		if before != i+1 {
			t.Fatalf("%d rows at the start of transaction %d, want %d", before, i, i+1)
		}
		if _, err := w.Exec(`INSERT INTO t VALUES (2)`); err != nil {
			t.Fatal(err)
		}
		if n := count(tx); n != before {
			t.Fatalf("transaction %d saw a write committed after it began: %d rows, want %d", i, n, before)
		}
		if end == "commit" {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		if n := count(read); n != before+1 {
			t.Fatalf("after %s: %d rows, want %d", end, n, before+1)
		}
	}
}
