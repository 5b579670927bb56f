package storagetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// RunOneReadViews checks an engine's one-read views (payment.OneReadViewer):
// they read what was committed and answer NOT_FOUND for what is not there;
// they hand their connection back every time (more views than any pool
// has connections, each bounded by a deadline); a second statement panics
// rather than answer from a second snapshot; and a write is refused,
// leaving nothing behind. open must return an engine that offers them.
func RunOneReadViews(t *testing.T, open func(t *testing.T) payment.Storage) {
	viewer := func(t *testing.T) (payment.Storage, payment.OneReadViewer) {
		t.Helper()
		db := open(t)
		v, ok := db.(payment.OneReadViewer)
		if !ok {
			t.Fatalf("%T offers no one-read views", db)
		}
		return db, v
	}
	t.Run("Reads", func(t *testing.T) {
		t.Parallel()
		db, v := viewer(t)
		ctx := t.Context()
		m := &payment.Merchant{ID: payment.NewID(), Name: "Shop", Email: "shop@example.com", CreatedOn: time.UnixMicro(1_700_000_000_000_000).UTC()}
		if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, m) }); err != nil {
			t.Fatal(err)
		}
		for i := range 64 {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			var got *payment.Merchant
			err := v.ViewOne(ctx, func(tx payment.Tx) error {
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
		err := v.ViewOne(ctx, func(tx payment.Tx) error { _, err := tx.Merchant(ctx, payment.NewID()); return err })
		if !payment.IsNotFound(err) {
			t.Fatalf("missing merchant: %v, want NOT_FOUND", err)
		}
	})
	t.Run("SecondReadPanics", func(t *testing.T) {
		t.Parallel()
		_, v := viewer(t)
		ctx := t.Context()
		var recovered any
		func() {
			defer func() { recovered = recover() }()
			_ = v.ViewOne(ctx, func(tx payment.Tx) error {
				if _, err := tx.CountMerchants(ctx); err != nil {
					return err
				}
				_, err := tx.CountMerchants(ctx)
				return err
			})
		}()
		if recovered == nil {
			t.Fatal("a one-read view read twice without a panic")
		}
		// The connection went back to the pool all the same.
		for range 64 {
			if err := v.ViewOne(ctx, func(tx payment.Tx) error { _, err := tx.CountMerchants(ctx); return err }); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("WriteRefused", func(t *testing.T) {
		t.Parallel()
		db, v := viewer(t)
		ctx := t.Context()
		m := &payment.Merchant{ID: payment.NewID(), Name: "Shop", Email: "shop@example.com", CreatedOn: time.UnixMicro(1_700_000_000_000_000).UTC()}
		if err := v.ViewOne(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, m) }); err == nil {
			t.Fatal("a one-read view wrote")
		}
		if err := db.View(ctx, func(tx payment.Tx) error { _, err := tx.Merchant(ctx, m.ID); return err }); !payment.IsNotFound(err) {
			t.Fatalf("after the refused write: %v, want NOT_FOUND", err)
		}
	})
}
