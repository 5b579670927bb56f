package payment_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sandbox"
)

// BenchmarkWorkerDrain is the worker's own drain rate, without the API in
// front competing for the database: b.N charges are queued first (untimed),
// then one worker, with the sandbox acquirer taking 300 ms per call, is
// timed until it has finished them all.
//
//	go test -run '^$' -bench '^BenchmarkWorkerDrain$' -benchtime 2000x ./server/payment/
//
// charges/s is b.N over that time. The server package's BenchmarkDrainCharges
// measures the same worker behind the API, beside the API's acceptance rate.
func BenchmarkWorkerDrain(b *testing.B) {
	ctx := context.Background()
	limits := payment.DefaultResourceLimits()
	limits.TestChargesPerDay = 1 << 30
	st := servicetest.New(b, servicetest.Options{Processor: sandbox.Processor{Latency: 300 * time.Millisecond},
		Config: payment.Config{Limits: limits}})
	svc, caller := st.Service, st.SeedDemo(b).Caller
	for range b.N {
		tok, err := svc.Tokens.CreateToken(ctx, caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "d@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"}); err != nil {
			b.Fatal(err)
		}
	}
	pending := func() int {
		page, err := svc.Charging.Charges(ctx, caller, uuid.Nil, payment.ChargeFilter{Status: payment.ChargePending}, payment.ListParams{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		return *page.TotalHits
	}
	if n := pending(); n != b.N {
		b.Fatalf("%d charges pending before the worker starts, want %d", n, b.N)
	}

	workerCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	b.ResetTimer()
	start := time.Now()
	go func() {
		defer close(done)
		svc.Work.RunWorker(workerCtx, time.Second, slog.New(slog.DiscardHandler))
	}()
	for pending() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	<-done
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "charges/s")
}
