package sqlite

// What a point read of a charge costs in a View and in a ViewOne, with a
// cancelable context as an HTTP request's:
//
//	go test -run '^$' -bench 'BenchmarkViewCharge' -benchmem ./server/sqlite/

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

func BenchmarkViewCharge(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := Open(ctx, filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	// The charge alone, without the store, token and merchant it names.
	if _, err := db.write.ExecContext(ctx, "PRAGMA foreign_keys=OFF"); err != nil {
		b.Fatal(err)
	}
	at := time.UnixMicro(1_790_000_000_000_000).UTC()
	charged := int64(1000)
	ch := &payment.Charge{ID: payment.NewID(), StoreID: payment.NewID(), MerchantID: payment.NewID(), TokenID: payment.NewID(),
		TokenType: payment.OneTime, Mode: payment.ModeTest, RequestedAmount: 1000, ChargedAmount: &charged, Currency: "JPY",
		Status: payment.ChargeSuccessful, PaymentType: payment.PaymentTypeCard, CreatedOn: at, UpdatedOn: at}
	if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateCharge(ctx, ch) }); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		view func(context.Context, func(payment.Tx) error) error
	}{{"View", db.View}, {"ViewOne", db.ViewOne}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.view(ctx, func(tx payment.Tx) error { _, err := tx.Charge(ctx, ch.ID); return err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
