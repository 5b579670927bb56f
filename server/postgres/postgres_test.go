package postgres_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/postgres"
	"github.com/kessai/kessai/server/postgres/postgrestest"
	"github.com/kessai/kessai/server/storagetest"
)

// TestMain fails at once, with one message saying how to start it, when
// the test database cannot be reached, and runs 8 parallel tests at once
// unless -parallel says otherwise: the suite's areas mostly wait on the
// server (each migrates a schema of its own), not on this process's CPUs,
// which is what -parallel's default counts.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "8")
	}
	// Without the database every test would fail alike: say it once.
	if err := postgrestest.Reachable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Println("FAIL")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) payment.Storage { return postgrestest.Open(t) })
}

func TestIdempotencyStore(t *testing.T) {
	t.Parallel()
	storagetest.RunIdempotency(t, func(t *testing.T) storagetest.IdempotencyEngine { return postgrestest.Open(t) })
}

// TestMigrateConcurrently: processes starting at once on one empty schema
// each apply the migrations, or find them applied, and every migration is
// applied once (the advisory lock); opening again changes nothing.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := postgrestest.Schema(t)
	const n = 4
	dbs := make([]*postgres.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	again, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open after the migrations: %v", err)
	}
	again.Close()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, names int
	if err := conn.QueryRow(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT name) FROM schema_migrations`).Scan(&rows, &names); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || rows != names {
		t.Errorf("schema_migrations holds %d rows for %d migrations, want one each", rows, names)
	}
}

// TestClaimWorkSkipsLocked: a claim does not wait for the items another
// transaction is claiming; it takes the next ones (FOR UPDATE SKIP LOCKED),
// so the workers of several processes share the queue.
func TestClaimWorkSkipsLocked(t *testing.T) {
	t.Parallel()
	db := postgrestest.Open(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	first, second := payment.NewID(), payment.NewID()
	err := db.Update(t.Context(), func(tx payment.Tx) error {
		if err := tx.InsertWork(t.Context(), payment.WorkAuthorize, first, now); err != nil {
			return err
		}
		return tx.InsertWork(t.Context(), payment.WorkAuthorize, second, now.Add(time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, release := make(chan []payment.Work, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Update(context.Background(), func(tx payment.Tx) error {
			w, err := tx.ClaimWork(context.Background(), "a", now.Add(time.Minute), now.Add(time.Hour), 1)
			if err != nil {
				return err
			}
			claimed <- w
			<-release
			return nil
		})
	}()
	var a []payment.Work
	select {
	case a = <-claimed:
	case err := <-done:
		t.Fatalf("the first claim ended early: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var b []payment.Work
	err = db.Update(ctx, func(tx payment.Tx) error {
		var err error
		b, err = tx.ClaimWork(ctx, "b", now.Add(time.Minute), now.Add(time.Hour), 1)
		return err
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the second claim waited for the first one's items")
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || a[0].ID != first || len(b) != 1 || b[0].ID != second {
		t.Errorf("claims took %v and %v, want %s then %s", a, b, first, second)
	}
}

func TestOneReadViews(t *testing.T) {
	storagetest.RunOneReadViews(t, func(t *testing.T) payment.Storage { return postgrestest.Open(t) })
}
