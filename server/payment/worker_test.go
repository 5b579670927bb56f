package payment_test

import (
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/aesgcm"
	"github.com/kessai/kessai/server/jwt"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/sqlite"
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

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestWorkerBacksOffFailedWork: an operation whose acquirer call fails is
// held back (doubling delays) instead of being retried on every pass, and
// completes once the acquirer answers again.
func TestWorkerBacksOffFailedWork(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "k.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	codec, _ := jwt.NewCodec(randomKey(t))
	vault, _ := aesgcm.New(randomKey(t))
	clk := kessaitest.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	acq := &flaky{down: true}
	svc := payment.NewService(db, clk, codec, payment.Config{SecretKey: randomKey(t), Vault: vault, Processor: acq})
	demo, err := svc.SeedDemo(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	caller, err := svc.Authenticate(ctx, "Bearer "+demo.Token.Secret+"."+demo.Token.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := svc.CreateToken(ctx, caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "a@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	pass := func(wantFound int) {
		t.Helper()
		n, _ := svc.ProcessPending(ctx, 10)
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
	got, err := svc.Charge(ctx, caller, uuid.Nil, ch.ID, 0)
	if err != nil || got.Status != payment.ChargeSuccessful {
		t.Fatalf("charge %v, %v; want successful", got.Status, err)
	}
	if acq.calls != 3 {
		t.Fatalf("acquirer called %d times, want 3", acq.calls)
	}
	pass(0)
}
