package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

// Group commit (group.go): concurrent writes share one COMMIT, each in its
// own savepoint.

// groupDB opens a database with a scratch table gc (id, v).
func groupDB(t *testing.T) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db := open(t, path)
	if err := db.Exec(t.Context(), `CREATE TABLE gc (id TEXT PRIMARY KEY, v INTEGER NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	return db, path
}

// inOneGroup runs first and then every one of others concurrently, as the
// members of one group: first holds the turn until all the others wait for
// it, so they all join its transaction. It returns each one's error (first
// at index 0); a member that panics has a "panic: ..." error.
func inOneGroup(t *testing.T, db *sqlite.DB, first func(sqlite.SQL) error, others ...func() error) []error {
	t.Helper()
	errs := make([]error, 1+len(others))
	inside := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		errs[0] = db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
			close(inside)
			deadline := time.Now().Add(10 * time.Second)
			for db.WaitingForTurn() < len(others) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if n := db.WaitingForTurn(); n != len(others) {
				return fmt.Errorf("%d writes wait for the turn, want %d", n, len(others))
			}
			return first(s)
		})
	})
	<-inside
	for i, fn := range others {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[i+1] = fmt.Errorf("panic: %v", r)
				}
			}()
			errs[i+1] = fn()
		})
	}
	wg.Wait()
	return errs
}

func insert(db *sqlite.DB, ctx context.Context, ids ...string) func() error {
	return func() error {
		return db.UpdateSQL(ctx, func(s sqlite.SQL) error {
			for _, id := range ids {
				if err := s.Exec(`INSERT INTO gc (id) VALUES (?)`, id); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// rows lists the ids in gc, read from a connection of its own: what is
// committed.
func rows(t *testing.T, path string) map[string]bool {
	t.Helper()
	r, err := raw(t, path).QueryContext(t.Context(), `SELECT id FROM gc`)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := map[string]bool{}
	for r.Next() {
		var id string
		if err := r.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got[id] = true
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func checkRows(t *testing.T, path string, present, absent []string) {
	t.Helper()
	got := rows(t, path)
	for _, id := range present {
		if !got[id] {
			t.Errorf("row %s is missing", id)
		}
	}
	for _, id := range absent {
		if got[id] {
			t.Errorf("row %s is there, want none", id)
		}
	}
}

// Concurrent writes share one COMMIT, and every one's writes are there.
func TestGroupCommitSharesOneCommit(t *testing.T) {
	db, path := groupDB(t)
	before := db.WriteStats()
	var others []func() error
	var want []string
	for i := range 20 {
		id := "m" + strconv.Itoa(i)
		want = append(want, id)
		others = append(others, insert(db, t.Context(), id))
	}
	errs := inOneGroup(t, db, func(s sqlite.SQL) error { return s.Exec(`INSERT INTO gc (id) VALUES ('first')`) }, others...)
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
	checkRows(t, path, append(want, "first"), nil)
	after := db.WriteStats()
	if n := after.Transactions - before.Transactions; n != 21 {
		t.Errorf("%d transactions committed, want 21", n)
	}
	if n := after.Commits - before.Commits; n != 1 {
		t.Errorf("%d COMMITs, want 1 for the group of 21", n)
	}
}

var errBoom = errors.New("boom")

// A member that fails, panics, breaks a constraint or has its context
// cancelled takes nothing of the others down: each failed one leaves
// nothing, every other one's writes land, in one COMMIT.
func TestGroupMemberFailureIsItsOwn(t *testing.T) {
	db, path := groupDB(t)
	before := db.WriteStats()
	ctx, cancel := context.WithCancel(t.Context())
	errs := inOneGroup(t, db,
		func(s sqlite.SQL) error { return s.Exec(`INSERT INTO gc (id) VALUES ('first')`) },
		insert(db, t.Context(), "ok1"),
		func() error {
			return db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
				if err := s.Exec(`INSERT INTO gc (id) VALUES ('failed')`); err != nil {
					return err
				}
				return errBoom
			})
		},
		func() error {
			return db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
				if err := s.Exec(`INSERT INTO gc (id) VALUES ('panicked')`); err != nil {
					return err
				}
				panic("member panics")
			})
		},
		// A constraint error: the statement fails, the member returns it.
		insert(db, t.Context(), "dup1", "first"),
		// Cancelled while it runs: its statements are not interrupted.
		func() error {
			return db.UpdateSQL(ctx, func(s sqlite.SQL) error {
				if err := s.Exec(`INSERT INTO gc (id) VALUES ('cancelled1')`); err != nil {
					return err
				}
				cancel()
				return s.Exec(`INSERT INTO gc (id) VALUES ('cancelled2')`)
			})
		},
		insert(db, t.Context(), "ok2"),
	)
	for i, want := range []string{"", "", "boom", "panic: member panics", "UNIQUE constraint failed", "", ""} {
		switch err := errs[i]; {
		case want == "" && err != nil:
			t.Errorf("member %d: %v, want success", i, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("member %d: %v, want %q", i, err, want)
		}
	}
	checkRows(t, path, []string{"first", "ok1", "cancelled1", "cancelled2", "ok2"}, []string{"failed", "panicked", "dup1"})
	after := db.WriteStats()
	if n := after.Transactions - before.Transactions; n != 4 {
		t.Errorf("%d transactions committed, want 4", n)
	}
	if n := after.Commits - before.Commits; n != 1 {
		t.Errorf("%d COMMITs, want 1", n)
	}
	// The connection is clean afterwards.
	if err := insert(db, t.Context(), "later")(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, path, []string{"later"}, nil)
}

// A write whose function fails after writing leaves nothing, alone or in a
// group, and a panic gives the connection back.
func TestGroupFailedWriteLeavesNothing(t *testing.T) {
	db, path := groupDB(t)
	err := db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
		if err := s.Exec(`INSERT INTO gc (id) VALUES ('alone')`); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want boom", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
			_ = s.Exec(`INSERT INTO gc (id) VALUES ('panic-alone')`)
			panic("alone")
		})
	}()
	// Through the domain's Update too.
	m := &payment.Merchant{ID: payment.NewID(), Name: "rolled back", Email: "gc@kessai.test", CreatedOn: time.Now()}
	err = db.Update(t.Context(), func(tx payment.Tx) error {
		if err := tx.CreateMerchant(t.Context(), m); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update: got %v, want boom", err)
	}
	if err := db.View(t.Context(), func(tx payment.Tx) error {
		_, err := tx.Merchant(t.Context(), m.ID)
		return err
	}); !payment.IsNotFound(err) {
		t.Errorf("the failed Update's merchant: %v, want NOT_FOUND", err)
	}
	if err := insert(db, t.Context(), "after")(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, path, []string{"after"}, []string{"alone", "panic-alone"})
}

// A COMMIT that fails fails every member of its group, the one whose own
// function failed included (its refusal may rest on the others' writes),
// and nothing of the group lands.
func TestGroupFailedCommitFailsEveryMember(t *testing.T) {
	db, path := groupDB(t)
	// A deferred foreign key is checked at COMMIT.
	if err := db.Exec(t.Context(), `CREATE TABLE gc_parent (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(t.Context(), `CREATE TABLE gc_child (id TEXT PRIMARY KEY,
		parent TEXT REFERENCES gc_parent (id) DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	errs := inOneGroup(t, db,
		func(s sqlite.SQL) error { return s.Exec(`INSERT INTO gc_child (id, parent) VALUES ('orphan', 'none')`) },
		insert(db, t.Context(), "a"),
		insert(db, t.Context(), "b"),
		// Refuses on what the first member wrote.
		func() error {
			return db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
				n, err := s.Int(`SELECT COUNT(*) FROM gc_child WHERE id = 'orphan'`)
				if err == nil && n == 1 {
					err = errBoom
				}
				return err
			})
		},
	)
	for i, err := range errs {
		if err == nil || errors.Is(err, errBoom) || !strings.Contains(err.Error(), "commit") {
			t.Errorf("member %d: %v, want the COMMIT's error", i, err)
		}
	}
	checkRows(t, path, nil, []string{"a", "b"})
	if err := insert(db, t.Context(), "after")(); err != nil {
		t.Fatalf("a write after the failed COMMIT: %v", err)
	}
	checkRows(t, path, []string{"after"}, nil)
}

// Until its COMMIT a group's writes are seen by its later members and by no
// other connection.
func TestGroupWritesUnseenUntilCommit(t *testing.T) {
	db, path := groupDB(t)
	reader := raw(t, path)
	var seen atomic.Int32
	errs := inOneGroup(t, db,
		func(s sqlite.SQL) error {
			if err := s.Exec(`INSERT INTO gc (id) VALUES ('first')`); err != nil {
				return err
			}
			var n int
			if err := reader.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM gc`).Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				return fmt.Errorf("another connection sees %d uncommitted rows", n)
			}
			return nil
		},
		func() error {
			return db.UpdateSQL(t.Context(), func(s sqlite.SQL) error {
				n, err := s.Int(`SELECT COUNT(*) FROM gc WHERE id = 'first'`)
				seen.Store(int32(n))
				return err
			})
		},
	)
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
	if seen.Load() != 1 {
		t.Error("a later member of the group did not see the first one's write")
	}
}

// Every write acknowledged before a SIGKILL is there after it. The child
// (this test binary again) writes from many goroutines and prints each id
// once its Update returned; the parent kills it mid-stream.
func TestGroupAcknowledgedWritesSurviveKill(t *testing.T) {
	if path := os.Getenv("KESSAI_GROUP_CRASH_DB"); path != "" {
		groupCrashChild(path)
		return
	}
	if testing.Short() {
		t.Skip("runs a child process")
	}
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGroupAcknowledgedWritesSurviveKill$")
	cmd.Env = append(os.Environ(), "KESSAI_GROUP_CRASH_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "ack "); ok {
			acked = append(acked, id)
		}
		if len(acked) == 3000 && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("the child stopped after %d writes, before the kill", len(acked))
	}
	db := open(t, path)
	_ = db
	got := rows(t, path)
	lost := 0
	for _, id := range acked {
		if !got[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged writes lost by the kill", lost, len(acked))
	}
	t.Logf("%d acknowledged writes, %d rows after the kill", len(acked), len(got))
}

func groupCrashChild(path string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := db.Exec(ctx, `CREATE TABLE gc (id TEXT PRIMARY KEY, v INTEGER NOT NULL DEFAULT 0)`); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("g%d-%d", g, i)
				if err := insert(db, ctx, id)(); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				os.Stdout.WriteString("ack " + id + "\n") // unbuffered: out before the next write
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
