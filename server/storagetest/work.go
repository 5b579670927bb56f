package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// The worker's queue is the unfinished operations themselves:
//
//   - authorize: a charge whose status is pending (awaiting waits for the
//     customer, not the worker);
//   - capture: an authorized charge whose capture is requested;
//   - refund: a pending refund; cancel: a pending cancel.
//
// PendingWork(now, limit) returns at most limit of those that are due, the
// lowest id (the oldest) first, whatever their kind, each with the number
// of its failed attempts. An operation never deferred is due at once.
// DeferWork(w, until) counts one failed attempt of exactly that kind of
// work on exactly that object and hides it until until: it is due again
// when now reaches until (inclusive, at the microsecond). A charge's
// authorisation and its capture are separate operations with separate
// retry state: a capture starts at 0 attempts and is due at once, whatever
// its authorisation went through.

func pendingWork(t *testing.T, s payment.Storage, now time.Time, limit int) []payment.Work {
	t.Helper()
	var work []payment.Work
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		work, err = tx.PendingWork(ctx, now, limit)
		return err
	})
	return work
}

func checkWork(t *testing.T, s payment.Storage, now time.Time, limit int, want ...payment.Work) {
	t.Helper()
	got := pendingWork(t, s, now, limit)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PendingWork(%s, %d) =\n  %v\nwant\n  %v", now.UTC().Format(time.RFC3339Nano), limit, workString(got), workString(want))
	}
}

func workString(ws []payment.Work) string {
	s := ""
	for _, w := range ws {
		s += fmt.Sprintf("{%s %s attempts=%d} ", w.Kind, w.ID, w.Attempts)
	}
	return s
}

func deferWork(t *testing.T, s payment.Storage, w payment.Work, until time.Time) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.DeferWork(ctx, w, until) })
}

func work(kind payment.WorkKind, id uuid.UUID, attempts int) payment.Work {
	return payment.Work{Kind: kind, ID: id, Attempts: attempts}
}

// workFixture is one object of every state the queue must tell apart, made
// in an order that interleaves the kinds, so that "oldest first" is checked
// across them.
type workFixture struct {
	authorize, refund, capture, cancel, authorize2 uuid.UUID
	// captured is the charge refunded and authorized the one canceled.
	captured, authorized *payment.Charge
}

func newWorkFixture(t *testing.T, s payment.Storage) workFixture {
	t.Helper()
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	i := 0
	charge := func(status payment.ChargeStatus, capture payment.CaptureState) *payment.Charge {
		i++
		ch := newCharge(tok, i)
		ch.Status, ch.CaptureState = status, capture
		return ch
	}
	refund := func(of *payment.Charge, status payment.OperationStatus) *payment.Refund {
		i++
		r := newRefund(of, i)
		r.Status = status
		return r
	}
	cancel := func(of *payment.Charge, status payment.OperationStatus) *payment.Cancel {
		i++
		c := newCancel(of, i)
		c.Status = status
		return c
	}
	var f workFixture
	f.captured = charge(payment.ChargeSuccessful, payment.CaptureDone)
	f.authorized = charge(payment.ChargeAuthorized, payment.CaptureNone)
	chs := []*payment.Charge{f.captured, f.authorized}
	var rs []*payment.Refund
	var cs []*payment.Cancel
	// Finished charges, and unfinished ones that are not the worker's.
	for _, st := range []payment.ChargeStatus{payment.ChargeAwaiting, payment.ChargeFailed, payment.ChargeError, payment.ChargeCanceled} {
		chs = append(chs, charge(st, payment.CaptureNone))
	}
	chs = append(chs, charge(payment.ChargeSuccessful, payment.CaptureNone))
	for _, st := range []payment.OperationStatus{payment.OperationSuccessful, payment.OperationFailed, payment.OperationError} {
		rs = append(rs, refund(f.captured, st))
		cs = append(cs, cancel(f.authorized, st))
	}
	// The work, in this order.
	a := charge(payment.ChargePending, payment.CaptureNone)
	r := refund(f.captured, payment.OperationPending)
	c := charge(payment.ChargeAuthorized, payment.CaptureRequested)
	k := cancel(f.authorized, payment.OperationPending)
	a2 := charge(payment.ChargePending, payment.CaptureNone)
	a2.Capture = false // an authorisation without capture is still an authorisation to make
	chs = append(chs, a, c, a2)
	rs, cs = append(rs, r), append(cs, k)
	createCharges(t, s, chs...)
	createRefunds(t, s, rs...)
	createCancels(t, s, cs...)
	f.authorize, f.refund, f.capture, f.cancel, f.authorize2 = a.ID, r.ID, c.ID, k.ID, a2.ID
	return f
}

func testPendingWork(t *testing.T, s payment.Storage) {
	f := newWorkFixture(t, s)
	now := at(1000)
	all := []payment.Work{
		work(payment.WorkAuthorize, f.authorize, 0), work(payment.WorkRefund, f.refund, 0),
		work(payment.WorkCapture, f.capture, 0), work(payment.WorkCancel, f.cancel, 0),
		work(payment.WorkAuthorize, f.authorize2, 0),
	}
	t.Run("OldestFirst", func(t *testing.T) {
		checkWork(t, s, now, 100, all...)
		// Never deferred: due whatever the time.
		checkWork(t, s, at(-1_000_000), 100, all...)
	})
	t.Run("Limit", func(t *testing.T) {
		for _, n := range []int{1, 2, 4, 5} {
			checkWork(t, s, now, n, all[:n]...)
		}
	})
	t.Run("FinishedIsNotWork", func(t *testing.T) {
		// Each kind of work stops being work when its object moves on.
		finished := func(t *testing.T, fn func(ctx context.Context, tx payment.Tx) error) {
			t.Helper()
			update(t, s, fn)
		}
		var ch, ch2, cp *payment.Charge
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			if ch, err = tx.Charge(ctx, f.authorize); err != nil {
				return err
			}
			if ch2, err = tx.Charge(ctx, f.authorize2); err != nil {
				return err
			}
			cp, err = tx.Charge(ctx, f.capture)
			return err
		})
		ch.Status = payment.ChargeAuthorized // authorised, no capture asked
		ch2.Status, ch2.CaptureState = payment.ChargeAwaiting, payment.CaptureNone
		cp.Status, cp.CaptureState = payment.ChargeSuccessful, payment.CaptureDone
		r, k := readRefund(t, s, f.refund), readCancel(t, s, f.cancel)
		r.Status, k.Status = payment.OperationSuccessful, payment.OperationFailed
		finished(t, func(ctx context.Context, tx payment.Tx) error {
			for _, c := range []*payment.Charge{ch, ch2, cp} {
				if err := tx.UpdateCharge(ctx, c); err != nil {
					return err
				}
			}
			if err := tx.UpdateRefund(ctx, r); err != nil {
				return err
			}
			return tx.UpdateCancel(ctx, k)
		})
		checkWork(t, s, now, 100)
	})
}

func testDeferWork(t *testing.T, s payment.Storage) {
	f := newWorkFixture(t, s)
	now := at(1000)
	until := now.Truncate(time.Microsecond).Add(10 * time.Second)
	justBefore := until.Add(-time.Microsecond)
	a, r, c, k, a2 := work(payment.WorkAuthorize, f.authorize, 0), work(payment.WorkRefund, f.refund, 0),
		work(payment.WorkCapture, f.capture, 0), work(payment.WorkCancel, f.cancel, 0), work(payment.WorkAuthorize, f.authorize2, 0)
	attempts := func(w payment.Work, n int) payment.Work { w.Attempts = n; return w }

	t.Run("Refund", func(t *testing.T) {
		deferWork(t, s, r, until)
		// Hidden until until, and no cancel (nor anything else) with it.
		checkWork(t, s, now, 100, a, c, k, a2)
		checkWork(t, s, justBefore, 100, a, c, k, a2)
		checkWork(t, s, until, 100, a, attempts(r, 1), c, k, a2)
		checkWork(t, s, until.Add(time.Hour), 100, a, attempts(r, 1), c, k, a2)
	})
	t.Run("WrongKindTouchesNothing", func(t *testing.T) {
		// A refund's id deferred as a cancel, a cancel's as a refund and a
		// charge's as a refund or a cancel change nothing: the kind names
		// the table. An engine may answer an error or nothing at all.
		for _, wrong := range []payment.Work{
			work(payment.WorkCancel, f.refund, 0), work(payment.WorkRefund, f.cancel, 0),
			work(payment.WorkRefund, f.authorize, 0), work(payment.WorkCancel, f.capture, 0),
		} {
			_ = s.Update(t.Context(), func(tx payment.Tx) error { return tx.DeferWork(t.Context(), wrong, until.Add(time.Hour)) })
		}
		checkWork(t, s, now, 100, a, c, k, a2)
		checkWork(t, s, until, 100, a, attempts(r, 1), c, k, a2)
	})
	t.Run("Cancel", func(t *testing.T) {
		later := until.Add(10 * time.Second)
		deferWork(t, s, k, later)
		checkWork(t, s, now, 100, a, c, a2)
		checkWork(t, s, until, 100, a, attempts(r, 1), c, a2)
		checkWork(t, s, later, 100, a, attempts(r, 1), c, attempts(k, 1), a2)
	})
	t.Run("AttemptsAccumulate", func(t *testing.T) {
		// The worker defers with the attempts it saw; the count is the
		// engine's, one more per DeferWork.
		later := until.Add(30 * time.Second)
		deferWork(t, s, attempts(r, 1), later)
		deferWork(t, s, attempts(r, 2), later)
		checkWork(t, s, until, 100, a, c, a2)
		checkWork(t, s, later, 100, a, attempts(r, 3), c, attempts(k, 1), a2)
	})
	t.Run("Authorize", func(t *testing.T) {
		deferWork(t, s, a, until)
		// The other charge's authorisation and the capture stay due.
		checkWork(t, s, now, 100, c, a2)
		checkWork(t, s, until, 100, attempts(a, 1), c, a2)
	})
	t.Run("Capture", func(t *testing.T) {
		deferWork(t, s, c, until)
		checkWork(t, s, now, 100, a2)
		checkWork(t, s, until, 100, attempts(a, 1), attempts(c, 1), a2)
	})
	t.Run("PastTime", func(t *testing.T) {
		// Deferring to a time already past counts the attempt and hides
		// nothing.
		deferWork(t, s, a2, at(0))
		checkWork(t, s, now, 100, attempts(a2, 1))
	})
	t.Run("LimitAfterDeferring", func(t *testing.T) {
		checkWork(t, s, until.Add(time.Hour), 2, attempts(a, 1), attempts(r, 3))
	})
	t.Run("FinishedAfterDeferring", func(t *testing.T) {
		// An operation deferred and then finished is not work when its
		// time comes.
		rf := readRefund(t, s, f.refund)
		rf.Status = payment.OperationSuccessful
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateRefund(ctx, rf) })
		checkWork(t, s, until.Add(time.Hour), 100, attempts(a, 1), attempts(c, 1), attempts(k, 1), attempts(a2, 1))
	})
}

// testCaptureRetryState checks that a capture does not inherit its
// authorisation's retry state: authorised after three failed attempts and
// a deferral, a charge whose capture is requested is due at once with no
// attempts counted.
func testCaptureRetryState(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	ch := newCharge(tok, 1)
	ch.Status, ch.CaptureState, ch.ChargedAmount = payment.ChargePending, payment.CaptureNone, nil
	createCharges(t, s, ch)
	now := at(1000)
	later := now.Add(time.Hour)
	for n := range 3 {
		deferWork(t, s, work(payment.WorkAuthorize, ch.ID, n), later)
	}
	checkWork(t, s, now, 100)
	checkWork(t, s, later, 100, work(payment.WorkAuthorize, ch.ID, 3))

	ch.Status, ch.CaptureState, ch.ChargedAmount, ch.UpdatedOn = payment.ChargeAuthorized, payment.CaptureRequested, int64p(ch.RequestedAmount), now
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, ch) })
	checkWork(t, s, now, 100, work(payment.WorkCapture, ch.ID, 0))

	// And the capture's own deferrals count from there.
	deferWork(t, s, work(payment.WorkCapture, ch.ID, 0), now.Add(time.Minute))
	checkWork(t, s, now, 100)
	checkWork(t, s, now.Add(time.Minute), 100, work(payment.WorkCapture, ch.ID, 1))
}
