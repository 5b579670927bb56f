package payment_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/univapay"
)

// TestEventBellRings: a transaction that recorded an event rings the event
// bell once it commits, for the event streams (kessai listen) of its own
// process and, through the change feed, for those of the others. The
// streams' own re-read every second is only the fallback.
func TestEventBellRings(t *testing.T) {
	ctx := context.Background()
	newToken := func(t *testing.T, svc *services.Set, c *payment.Caller) {
		t.Helper()
		if _, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
			PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	rung := func(t *testing.T, what string, bell <-chan struct{}) {
		t.Helper()
		select {
		case <-bell:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the event bell did not ring within 5 s of the event's commit", what)
		}
	}

	t.Run("ThisProcess", func(t *testing.T) {
		// No change feed: the bell can only be rung here.
		st := servicetest.New(t, servicetest.Options{EncodeEvent: univapay.EncodeEvent})
		demo := st.SeedDemo(t)
		bell := st.Service.Notify.EventsBell()
		newToken(t, st.Service, demo.Caller)
		rung(t, "the process that recorded the event", bell)
	})

	t.Run("OtherProcess", func(t *testing.T) {
		hub := &newsHub{}
		path := filepath.Join(t.TempDir(), sqlite.FileName)
		open := func() *servicetest.Stack {
			st := servicetest.New(t, servicetest.Options{Path: path, EncodeEvent: univapay.EncodeEvent, Configure: func(c *payment.Config) {
				c.ChangeFeed = &hubFeed{hub: hub}
			}})
			fctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				st.Service.DB.RunChangeFeed(fctx, slog.New(slog.DiscardHandler))
			}()
			t.Cleanup(func() { cancel(); <-done })
			return st
		}
		a, b := open(), open()
		hub.listening(t, 2)
		demo := a.SeedDemo(t)
		bell := b.Service.Notify.EventsBell()
		newToken(t, a.Service, demo.Caller)
		rung(t, "another process", bell)
	})
}
