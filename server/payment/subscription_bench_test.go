package payment_test

import (
	"context"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
)

// BenchmarkSchedulerPayments is how fast the scheduler carries b.N
// payments that fall due together from due to paid (its item, the charge's
// authorisation, the next payment made), beside the baseline of b.N
// one-time charges already made, carried from pending to paid, in the
// same run: the sandbox answers at once, so both are the database's.
//
//	go test -run '^$' -bench '^BenchmarkSchedulerPayments$' -benchtime 2000x ./server/payment/
func BenchmarkSchedulerPayments(b *testing.B) {
	ctx := context.Background()
	limits := payment.DefaultResourceLimits()
	limits.TestChargesPerDay = 1 << 30
	setup := func(b *testing.B) (*services.Set, *payment.Caller, *kessaitest.Clock) {
		clock := kessaitest.NewClock(time.Date(2027, 1, 1, 1, 0, 0, 0, time.UTC))
		st := servicetest.New(b, servicetest.Options{Clock: clock, Config: payment.Config{Limits: limits}})
		return st.Service, st.SeedDemo(b).Caller, clock
	}
	token := func(b *testing.B, svc *services.Set, c *payment.Caller, typ payment.TokenType) *payment.TransactionToken {
		tok, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: "card", Type: typ, Email: "d@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"}})
		if err != nil {
			b.Fatal(err)
		}
		return tok
	}
	drain := func(b *testing.B, svc *services.Set) {
		for {
			n, err := svc.Work.ProcessPending(ctx, 256)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	b.Run("baseline=one-time charges", func(b *testing.B) {
		svc, c, _ := setup(b)
		for range b.N {
			if _, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: token(b, svc, c, payment.OneTime).ID, Amount: 1000, Currency: "JPY"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		start := time.Now()
		drain(b, svc)
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "payments/s")
	})
	b.Run("scheduled payments", func(b *testing.B) {
		svc, c, clock := setup(b)
		for range b.N {
			if _, err := svc.Subscriptions.CreateSubscription(ctx, c, payment.NewSubscription{
				TokenID: token(b, svc, c, payment.SubscriptionToken).ID, Amount: 1000, Currency: "JPY", Period: "daily",
			}); err != nil {
				b.Fatal(err)
			}
		}
		drain(b, svc) // the first charges
		clock.Advance(24 * time.Hour)
		b.ResetTimer()
		start := time.Now()
		drain(b, svc)
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "payments/s")
		b.StopTimer()
		page, err := svc.Subscriptions.Subscriptions(ctx, c, c.Token().StoreID, payment.SubscriptionFilter{}, payment.ListParams{Limit: 1})
		if err != nil || *page.TotalHits != b.N || page.Items[0].PaymentsMade != 2 {
			b.Fatalf("after the day: %v, %+v", err, page)
		}
	})
}
