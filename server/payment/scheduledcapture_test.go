package payment_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
)

// Capture at capture_at: an authorised charge with a capture_at is captured
// by the worker once the clock reaches it, unless the merchant captured or
// voided it first. Every test runs over a real SQLite file with a
// hand-moved clock.

const captureAfter = 2 * time.Hour

// scheduledCharge makes a charge of 1000 JPY on pan, not captured, with
// capture_at captureAfter from now, authorises it and returns it with its
// capture_at.
func (in *instance) scheduledCharge(t *testing.T, q *queue, pan string) (*payment.Charge, time.Time) {
	t.Helper()
	ctx := context.Background()
	tok, err := in.svc.Tokens.CreateToken(ctx, in.caller, payment.NewToken{PaymentType: "card", Type: payment.OneTime, Email: "q@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: pan, ExpMonth: 12, ExpYear: 2030, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	capture, at := false, q.clk.Now().Add(captureAfter)
	ch, err := in.svc.Charging.CreateCharge(ctx, in.caller, payment.NewCharge{TokenID: tok.ID, Amount: 1000, Currency: "JPY", Capture: &capture, CaptureAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	in.pass(t, 1)
	if got := in.charge(t, ch.ID); got.Status != payment.ChargeAuthorized {
		t.Fatalf("charge %s after its authorisation, want authorized", got.Status)
	}
	return ch, at
}

// historyLine is the charge's line of the transaction history.
func (in *instance) historyLine(t *testing.T, id uuid.UUID) *payment.LedgerEntry {
	t.Helper()
	page, err := in.svc.Merchants.Transactions(context.Background(), in.caller, uuid.Nil, payment.LedgerFilter{}, payment.ListParams{Limit: 100, Direction: payment.Desc})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Items {
		if e.ResourceID == id {
			return e
		}
	}
	t.Fatalf("charge %s not in the transaction history", id)
	return nil
}

// TestScheduledCapture: the capture is queued with the authorisation, due
// at capture_at; nothing happens before then; at capture_at the whole
// authorisation is captured, once, and the charge and its history line end
// successful as after the merchant's own capture.
func TestScheduledCapture(t *testing.T) {
	q := newQueue(t)
	in := q.instance(t, "w", payment.Config{})
	ch, at := in.scheduledCharge(t, q, "4000020000000000")
	if w := in.item(t, payment.WorkScheduledCapture, ch.ID); w == nil || !w.Due.Equal(at) {
		t.Fatalf("the scheduled capture: %+v, want an item due at %v", w, at)
	}
	q.clk.Set(at.Add(-time.Millisecond))
	in.pass(t, 0)
	if got := in.charge(t, ch.ID); got.Status != payment.ChargeAuthorized || got.CaptureState != payment.CaptureNone {
		t.Fatalf("charge %s (capture %q) before capture_at, want authorized and not being captured", got.Status, got.CaptureState)
	}
	q.clk.Set(at)
	in.pass(t, 1) // asks for the capture
	in.pass(t, 1) // carries it out
	got := in.charge(t, ch.ID)
	if got.Status != payment.ChargeSuccessful || charged(got) != 1000 || got.CaptureState != payment.CaptureDone {
		t.Errorf("charge after capture_at: %s %d (capture %q), want successful 1000, captured", got.Status, charged(got), got.CaptureState)
	}
	if e := in.historyLine(t, ch.ID); e.Status != string(payment.ChargeSuccessful) || e.Amount != 1000 {
		t.Errorf("history after capture_at: %s %d, want successful 1000", e.Status, e.Amount)
	}
	if n := q.acq.callsOf("capture", ch.ID); n != 1 {
		t.Errorf("the acquirer was asked to capture %d times, want once", n)
	}
	for _, kind := range []payment.WorkKind{payment.WorkScheduledCapture, payment.WorkCapture} {
		if w := in.item(t, kind, ch.ID); w != nil {
			t.Errorf("the %s item is still queued: %+v", kind, *w)
		}
	}
	in.pass(t, 0)
}

// TestNoScheduledCaptureWithoutCaptureAt: an authorisation without a
// capture_at waits for the merchant however long it is left.
func TestNoScheduledCaptureWithoutCaptureAt(t *testing.T) {
	q := newQueue(t)
	in := q.instance(t, "w", payment.Config{})
	ch := in.newCharge(t, false)
	in.pass(t, 1)
	if w := in.item(t, payment.WorkScheduledCapture, ch.ID); w != nil {
		t.Fatalf("a charge without capture_at has a scheduled capture: %+v", *w)
	}
	q.clk.Advance(8 * 24 * time.Hour)
	in.pass(t, 0)
	if got := in.charge(t, ch.ID); got.Status != payment.ChargeAuthorized {
		t.Errorf("charge %s, want still authorized", got.Status)
	}
}

// TestScheduledCaptureByRunningWorker: a running worker, which looks for due
// work every interval, captures the charge within about an interval of the
// clock passing capture_at, and not before.
func TestScheduledCaptureByRunningWorker(t *testing.T) {
	q := newQueue(t)
	in := q.instance(t, "w", payment.Config{})
	ch, at := in.scheduledCharge(t, q, "4000020000000000")
	in.run(t, 10*time.Millisecond)
	q.clk.Set(at.Add(-time.Second))
	time.Sleep(100 * time.Millisecond) // ten intervals
	if got := in.charge(t, ch.ID); got.Status != payment.ChargeAuthorized || got.CaptureState != payment.CaptureNone {
		t.Fatalf("charge %s (capture %q) before capture_at, want authorized", got.Status, got.CaptureState)
	}
	q.clk.Set(at)
	kessaitest.WaitFor(t, 5*time.Second, "the charge captured", func() bool {
		return in.charge(t, ch.ID).Status == payment.ChargeSuccessful
	})
}

// TestScheduledCaptureWakesWorker: the capture that the scheduled item
// asks for is carried out at once, not at the worker's next look for due
// work. The worker here looks only every hour; another charge wakes it,
// and its claim takes the scheduled item with it.
func TestScheduledCaptureWakesWorker(t *testing.T) {
	q := newQueue(t)
	in := q.instance(t, "w", payment.Config{})
	ch, at := in.scheduledCharge(t, q, "4000020000000000")
	in.run(t, time.Hour)
	// A first charge, and a pause, for the worker to use up the wakes
	// made so far: one left over would have it claim again after the
	// scheduled item, and the capture would not need a wake of its own.
	first := in.newCharge(t, true)
	kessaitest.WaitFor(t, 5*time.Second, "the first charge done", func() bool {
		return in.charge(t, first.ID).Status == payment.ChargeSuccessful
	})
	time.Sleep(100 * time.Millisecond)
	q.clk.Set(at)
	other := in.newCharge(t, true)
	kessaitest.WaitFor(t, 5*time.Second, "the other charge done", func() bool {
		return in.charge(t, other.ID).Status == payment.ChargeSuccessful
	})
	kessaitest.WaitFor(t, 5*time.Second, "the scheduled capture carried out", func() bool {
		return in.charge(t, ch.ID).Status == payment.ChargeSuccessful
	})
}

// TestEarlierDecisionWins: a charge the merchant captured (in part),
// asked to capture, voided or asked to void before capture_at is left as
// the merchant's decision makes it: the scheduled item is removed without
// asking the acquirer anything.
func TestEarlierDecisionWins(t *testing.T) {
	ctx := context.Background()
	part := int64(600)
	cases := []struct {
		name string
		// decide acts on the authorised charge before capture_at and
		// returns how many items the pass at capture_at then claims.
		decide  func(t *testing.T, q *queue, in *instance, ch *payment.Charge) int
		status  payment.ChargeStatus
		charged int64
		capture payment.CaptureState
		// captures is how many capture calls the acquirer gets.
		captures int
	}{
		{"Captured", func(t *testing.T, q *queue, in *instance, ch *payment.Charge) int {
			if err := in.svc.Charging.CaptureCharge(ctx, in.caller, ch.StoreID, ch.ID, payment.ChargeCapture{Amount: &part, Currency: "JPY"}); err != nil {
				t.Fatal(err)
			}
			in.pass(t, 1)
			return 1
		}, payment.ChargeSuccessful, 600, payment.CaptureDone, 1},
		{"CaptureUnderWay", func(t *testing.T, q *queue, in *instance, ch *payment.Charge) int {
			// The acquirer is unreachable: the capture is retried after
			// capture_at, alongside the scheduled item.
			if err := in.svc.Charging.CaptureCharge(ctx, in.caller, ch.StoreID, ch.ID, payment.ChargeCapture{Amount: &part, Currency: "JPY"}); err != nil {
				t.Fatal(err)
			}
			q.acq.failNext("capture", 1)
			in.pass(t, 1)
			return 2
		}, payment.ChargeSuccessful, 600, payment.CaptureDone, 2},
		{"Voided", func(t *testing.T, q *queue, in *instance, ch *payment.Charge) int {
			if _, err := in.svc.Refunds.CreateCancel(ctx, in.caller, ch.StoreID, ch.ID, payment.NewCancel{}); err != nil {
				t.Fatal(err)
			}
			in.pass(t, 1)
			return 1
		}, payment.ChargeCanceled, 1000, payment.CaptureNone, 0},
		{"VoidUnderWay", func(t *testing.T, q *queue, in *instance, ch *payment.Charge) int {
			if _, err := in.svc.Refunds.CreateCancel(ctx, in.caller, ch.StoreID, ch.ID, payment.NewCancel{}); err != nil {
				t.Fatal(err)
			}
			// Unreachable until after capture_at: the cancel is still
			// pending when the scheduled item runs.
			q.acq.failNext("void", 2)
			in.pass(t, 1)
			return 2
		}, payment.ChargeCanceled, 1000, payment.CaptureNone, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(t)
			in := q.instance(t, "w", payment.Config{})
			ch, at := in.scheduledCharge(t, q, "4000020000000000")
			claims := tc.decide(t, q, in, ch)
			q.clk.Set(at)
			in.pass(t, claims)
			q.clk.Advance(time.Minute)
			for n := -1; n != 0; {
				var err error
				if n, err = in.svc.Work.ProcessPending(ctx, 100); err != nil {
					t.Fatal(err)
				}
			}
			got := in.charge(t, ch.ID)
			if got.Status != tc.status || charged(got) != tc.charged || got.CaptureState != tc.capture {
				t.Errorf("charge %s %d (capture %q), want %s %d (capture %q)", got.Status, charged(got), got.CaptureState, tc.status, tc.charged, tc.capture)
			}
			if n := q.acq.callsOf("capture", ch.ID); n != tc.captures {
				t.Errorf("the acquirer was asked to capture %d times, want %d", n, tc.captures)
			}
			if w := in.item(t, payment.WorkScheduledCapture, ch.ID); w != nil {
				t.Errorf("the scheduled capture is still queued: %+v", *w)
			}
		})
	}
}

// TestScheduledCaptureFailures: the capture asked for at capture_at is
// retried after an unreachable acquirer as any capture is, and a refusal
// ends the charge failed with the acquirer's error.
func TestScheduledCaptureFailures(t *testing.T) {
	t.Run("Retried", func(t *testing.T) {
		q := newQueue(t)
		in := q.instance(t, "w", payment.Config{})
		ch, at := in.scheduledCharge(t, q, "4000020000000000")
		q.clk.Set(at)
		q.acq.failNext("capture", 1)
		in.pass(t, 1)
		in.pass(t, 1)
		if w := in.item(t, payment.WorkCapture, ch.ID); w == nil || w.Attempts != 1 || !w.Due.Equal(at.Add(time.Second)) {
			t.Fatalf("the capture after a failed attempt: %+v, want 1 attempt, due a second later", w)
		}
		if got := in.charge(t, ch.ID); got.Status != payment.ChargeAuthorized || got.CaptureState != payment.CaptureRequested {
			t.Fatalf("charge %s (capture %q) after a failed attempt, want authorized, being captured", got.Status, got.CaptureState)
		}
		q.clk.Advance(time.Second)
		in.pass(t, 1)
		if got := in.charge(t, ch.ID); got.Status != payment.ChargeSuccessful || charged(got) != 1000 {
			t.Errorf("charge %s %d after the retry, want successful 1000", got.Status, charged(got))
		}
		if n := q.acq.callsOf("capture", ch.ID); n != 2 {
			t.Errorf("the acquirer was asked to capture %d times, want 2", n)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		q := newQueue(t)
		in := q.instance(t, "w", payment.Config{})
		ch, at := in.scheduledCharge(t, q, "4000000000000341")
		q.clk.Set(at)
		in.pass(t, 1)
		in.pass(t, 1)
		got := in.charge(t, ch.ID)
		if got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrChargeExpired || got.ChargedAmount != nil {
			t.Errorf("charge %s %+v charged %v, want failed with %d and nothing charged", got.Status, got.Error, got.ChargedAmount, payment.ErrChargeExpired)
		}
		if e := in.historyLine(t, ch.ID); e.Status != string(payment.ChargeFailed) {
			t.Errorf("history after the refusal: %s, want failed", e.Status)
		}
		in.pass(t, 0)
	})
}

// TestScheduledCaptureSurvivesRestart: the scheduled capture is a row of the
// database, not a timer: a new service on the same file, started after the
// one that authorised the charge is gone, captures it.
func TestScheduledCaptureSurvivesRestart(t *testing.T) {
	q := newQueue(t)
	a := q.instance(t, "a", payment.Config{})
	ch, at := a.scheduledCharge(t, q, "4000020000000000")
	if err := a.db.Close(); err != nil {
		t.Fatal(err)
	}
	q.clk.Set(at.Add(time.Minute))
	b := q.instance(t, "b", payment.Config{})
	b.pass(t, 1)
	b.pass(t, 1)
	if got := b.charge(t, ch.ID); got.Status != payment.ChargeSuccessful || charged(got) != 1000 {
		t.Errorf("charge %s %d after the restart, want successful 1000", got.Status, charged(got))
	}
	if n := q.acq.by["b"]; n != 1 {
		t.Errorf("the new service made %d acquirer calls, want the one capture", n)
	}
}
