package payment_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sandbox"
)

// flaky is the sandbox acquirer, unreachable while down is set.
type flaky struct {
	sandbox.Processor
	mu    sync.Mutex
	down  bool
	calls int
}

func (f *flaky) Authorize(ctx context.Context, req payment.AuthorizeRequest) (payment.ProcessorResult, error) {
	f.mu.Lock()
	f.calls++
	down := f.down
	f.mu.Unlock()
	if down {
		return payment.ProcessorResult{}, errors.New("acquirer unreachable")
	}
	return f.Processor.Authorize(ctx, req)
}

// TestWorkerBacksOffFailedWork: an operation whose acquirer call fails is
// held back (doubling delays) instead of being retried on every pass, and
// completes once the acquirer answers again.
func TestWorkerBacksOffFailedWork(t *testing.T) {
	ctx := context.Background()
	clk := kessaitest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	acq := &flaky{down: true}
	st := servicetest.New(t, servicetest.Options{Clock: clk, Processor: acq})
	svc, caller := st.Service, st.SeedDemo(t).Caller
	tok, err := svc.Tokens.CreateToken(ctx, caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "a@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	pass := func(wantFound int) {
		t.Helper()
		n, _ := svc.Work.ProcessPending(ctx, 10)
		if n != wantFound {
			t.Fatalf("pass at %s found %d operations, want %d", clk.Now().Format(time.TimeOnly), n, wantFound)
		}
	}
	pass(1) // attempt 1 fails: next in 1 s
	pass(0)
	clk.Advance(time.Second)
	pass(1) // attempt 2 fails: next in 2 s
	clk.Advance(time.Second)
	pass(0)
	clk.Advance(time.Second)
	acq.mu.Lock()
	acq.down = false
	acq.mu.Unlock()
	pass(1) // answered
	got, err := svc.Charging.Charge(ctx, caller, uuid.Nil, ch.ID, 0)
	if err != nil || got.Status != payment.ChargeSuccessful {
		t.Fatalf("charge %v, %v; want successful", got.Status, err)
	}
	if acq.calls != 3 {
		t.Fatalf("acquirer called %d times, want 3", acq.calls)
	}
	pass(0)
}
