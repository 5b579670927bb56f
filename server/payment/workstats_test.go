package payment_test

import (
	"context"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// TestWorkQueueStatsReportsQueuedCharge: a charge created while no worker
// runs leaves its authorisation queued, due at once: WorkQueueStats, at
// the service's clock, counts it as due since the charge was made, late
// by as much as the clock has moved on since; once the worker has run it,
// it is no longer counted.
func TestWorkQueueStatsReportsQueuedCharge(t *testing.T) {
	ctx := context.Background()
	created := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clk := kessaitest.NewClock(created)
	st := servicetest.New(t, servicetest.Options{Clock: clk})
	svc, caller := st.Service, st.SeedDemo(t).Caller
	authorize := func(t *testing.T) *payment.WorkQueueStats {
		t.Helper()
		stats, err := svc.Work.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range stats {
			if stats[i].Kind == payment.WorkAuthorize {
				return &stats[i]
			}
		}
		return nil
	}
	if got := authorize(t); got != nil {
		t.Fatalf("before any charge: %+v, want no authorisation queued", *got)
	}

	tok, err := svc.Tokens.CreateToken(ctx, caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "a@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"}); err != nil {
		t.Fatal(err)
	}
	want := payment.WorkQueueStats{Kind: payment.WorkAuthorize, Due: 1, OldestDue: created}
	// Due at the very time it was queued, and still so later.
	for _, late := range []time.Duration{0, 90 * time.Second} {
		clk.Set(created.Add(late))
		got := authorize(t)
		if got == nil {
			t.Fatalf("%s after the charge: no authorisation queued, want %+v", late, want)
		}
		same := *got
		same.OldestDue = want.OldestDue
		if !got.OldestDue.Equal(want.OldestDue) || same != want {
			t.Fatalf("%s after the charge: authorize stats %+v, want %+v", late, *got, want)
		}
	}

	if n, err := svc.Work.ProcessPending(ctx, 10); err != nil || n != 1 {
		t.Fatalf("ProcessPending = %d, %v; want the one authorisation", n, err)
	}
	if got := authorize(t); got != nil {
		t.Fatalf("after the worker: %+v, want no authorisation queued", *got)
	}
}
