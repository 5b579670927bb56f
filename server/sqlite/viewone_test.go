package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

// TestViewOne: a one-read view reads what was committed, answers NOT_FOUND
// for what is not there, and hands its connection back every time (more
// views than the read pool has connections, each bounded by a deadline).
func TestViewOne(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), sqlite.FileName))
	ctx := t.Context()
	m := &payment.Merchant{ID: payment.NewID(), Name: "Shop", Email: "shop@example.com", CreatedOn: time.UnixMicro(1_700_000_000_000_000).UTC()}
	if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	for i := range 3 * 16 {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var got *payment.Merchant
		err := db.ViewOne(ctx, func(tx payment.Tx) error {
			var err error
			got, err = tx.Merchant(ctx, m.ID)
			return err
		})
		cancel()
		if err != nil {
			t.Fatalf("view %d: %v", i, err)
		}
		if fmt.Sprint(*got) != fmt.Sprint(*m) {
			t.Fatalf("view %d: read %+v, want %+v", i, *got, *m)
		}
	}
	err := db.ViewOne(ctx, func(tx payment.Tx) error { _, err := tx.Merchant(ctx, payment.NewID()); return err })
	if !payment.IsNotFound(err) {
		t.Fatalf("missing merchant: %v, want NOT_FOUND", err)
	}
}

// TestViewOneSecondReadPanics: two statements would read two snapshots,
// so a one-read view whose function reads twice panics rather than answer
// from both.
func TestViewOneSecondReadPanics(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), sqlite.FileName))
	ctx := t.Context()
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_ = db.ViewOne(ctx, func(tx payment.Tx) error {
			if _, err := tx.CountMerchants(ctx); err != nil {
				return err
			}
			_, err := tx.CountMerchants(ctx)
			return err
		})
	}()
	err, _ := recovered.(error)
	if err == nil || !errors.Is(err, sqlite.ErrSecondRead) {
		t.Fatalf("second read: recovered %v, want ErrSecondRead", recovered)
	}
	// The connection went back to the pool all the same.
	for range 16 {
		if err := db.ViewOne(ctx, func(tx payment.Tx) error { _, err := tx.CountMerchants(ctx); return err }); err != nil {
			t.Fatal(err)
		}
	}
}
