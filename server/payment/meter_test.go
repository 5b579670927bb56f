package payment_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
)

// fakeMeter keeps what the service told it.
type fakeMeter struct {
	mu           sync.Mutex
	settled      []string // kind/status/error
	work         []string // kind/failed
	transactions map[string]int
}

func (m *fakeMeter) Settled(kind, status, errorName string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settled = append(m.settled, kind+"/"+status+"/"+errorName)
}

func (m *fakeMeter) WorkAttempted(kind payment.WorkKind, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := "done"
	if failed {
		r = "failed"
	}
	m.work = append(m.work, string(kind)+"/"+r)
}

func (m *fakeMeter) WebhookAttempted(payment.DeliveryStatus, time.Duration) {}

func (m *fakeMeter) Transaction(kind string, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.transactions == nil {
		m.transactions = map[string]int{}
	}
	m.transactions[kind]++
}

func (m *fakeMeter) settledNow() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.settled)
}

// flakyStorage fails the commit of the Updates that finish a refund, after
// fn ran (as a COMMIT that fails would), when told to; or runs the
// function of every Update twice, the first run rolled back, as
// PostgreSQL's engine does after a serialization failure.
type flakyStorage struct {
	*sqlite.DB
	failCommit, runTwice atomic.Bool
}

// refundSpyTx notes whether a transaction updated a refund.
type refundSpyTx struct {
	payment.Tx
	updated *bool
}

func (t refundSpyTx) UpdateRefund(ctx context.Context, r *payment.Refund) error {
	*t.updated = true
	return t.Tx.UpdateRefund(ctx, r)
}

var errCommitFailed = errors.New("commit failed")

func (s *flakyStorage) Update(ctx context.Context, fn func(payment.Tx) error) error {
	if s.runTwice.Load() {
		errRetry := errors.New("serialization failure")
		if err := s.DB.Update(ctx, func(tx payment.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return errRetry
		}); !errors.Is(err, errRetry) {
			return err
		}
	}
	return s.DB.Update(ctx, func(tx payment.Tx) error {
		refunded := false
		if err := fn(refundSpyTx{Tx: tx, updated: &refunded}); err != nil {
			return err
		}
		if refunded && s.failCommit.Load() {
			return errCommitFailed
		}
		return nil
	})
}

// TestMeterIsToldWhatCommitted: charges, refunds and work attempts are
// told once each, with their status and payment error name, once their
// transaction committed — not when it failed, and once when it ran twice.
func TestMeterIsToldWhatCommitted(t *testing.T) {
	ctx := context.Background()
	meter := &fakeMeter{}
	var flaky *flakyStorage
	st := servicetest.New(t, servicetest.Options{
		Storage:   func(db *sqlite.DB) payment.Storage { flaky = &flakyStorage{DB: db}; return flaky },
		Configure: func(c *payment.Config) { c.Meter = meter },
	})
	demo := st.SeedDemo(t, "shop.example")
	svc := st.Service

	paid := servicetest.Pay(t, svc, demo.Caller, "4000020000000000", 1000, "JPY", nil)
	declined := servicetest.Pay(t, svc, demo.Caller, "4111111111111111", 1000, "JPY", nil)
	if paid.Status != payment.ChargeSuccessful || declined.Status != payment.ChargeFailed {
		t.Fatalf("charges %s and %s", paid.Status, declined.Status)
	}
	if got, want := meter.settledNow(), []string{"charge/successful/", "charge/failed/CARD_REJECTED"}; !slices.Equal(got, want) {
		t.Fatalf("settled %q, want %q", got, want)
	}
	if !slices.Contains(meter.work, "authorize/done") {
		t.Errorf("work attempts %q, want authorize/done", meter.work)
	}
	for _, kind := range []string{payment.TransactionUpdate, payment.TransactionView} {
		if meter.transactions[kind] == 0 {
			t.Errorf("no %s transactions told: %v", kind, meter.transactions)
		}
	}

	// A refund whose outcome fails to commit is not told; the retry that
	// commits is, once, though its function ran twice.
	refund, err := svc.Refunds.CreateRefund(ctx, demo.Caller, paid.StoreID, paid.ID, payment.NewRefund{Amount: 300, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	flaky.failCommit.Store(true)
	if _, err := svc.Work.ProcessPending(ctx, 10); err != nil && !errors.Is(err, errCommitFailed) {
		t.Fatal(err)
	}
	flaky.failCommit.Store(false)
	if r, err := svc.Refunds.Refund(ctx, demo.Caller, paid.StoreID, paid.ID, refund.ID, 0); err != nil || r.Status != payment.OperationPending {
		t.Fatalf("the refund whose outcome failed to commit: %v, %v; want it still pending", r, err)
	}
	if got := meter.settledNow(); len(got) != 2 {
		t.Fatalf("settled %q after a failed commit, want nothing new", got)
	}
	flaky.runTwice.Store(true)
	awaitRefund(t, svc, demo, paid, refund.ID)
	flaky.runTwice.Store(false)
	if got, want := meter.settledNow(), []string{"charge/successful/", "charge/failed/CARD_REJECTED", "refund/successful/"}; !slices.Equal(got, want) {
		t.Fatalf("settled %q, want %q", got, want)
	}
}

// awaitRefund runs the worker until the refund is no longer
// pending (its retry waits a back-off of the failed attempt: the fixture's
// clock is the system's, so this waits it out, at most a few seconds).
func awaitRefund(t *testing.T, svc *services.Set, demo *servicetest.Demo, ch *payment.Charge, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := svc.Work.ProcessPending(ctx, 10); err != nil {
			t.Fatal(err)
		}
		r, err := svc.Refunds.Refund(ctx, demo.Caller, ch.StoreID, ch.ID, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != payment.OperationPending {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the refund stayed pending")
}
