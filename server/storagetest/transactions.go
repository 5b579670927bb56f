package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

func testNotFound(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	missing := payment.NewID()
	// One object of each payment type, so that a lookup by another type's
	// id is checked too: ids are unique across tables, a lookup never
	// finds a row of another type.
	tok := newToken(st, 1)
	createTokens(t, s, tok)
	ch := newCharge(tok, 2)
	createCharges(t, s, ch)
	r, cn := newRefund(ch, 3), newCancel(ch, 4)
	createRefunds(t, s, r)
	createCancels(t, s, cn)
	getToken := func(id uuid.UUID) func(ctx context.Context, tx payment.Tx) error {
		return func(ctx context.Context, tx payment.Tx) error { _, err := tx.Token(ctx, id); return err }
	}
	getCharge := func(id uuid.UUID) func(ctx context.Context, tx payment.Tx) error {
		return func(ctx context.Context, tx payment.Tx) error { _, err := tx.Charge(ctx, id); return err }
	}
	getRefund := func(id uuid.UUID) func(ctx context.Context, tx payment.Tx) error {
		return func(ctx context.Context, tx payment.Tx) error { _, err := tx.Refund(ctx, st.ID, ch.ID, id); return err }
	}
	getCancel := func(id uuid.UUID) func(ctx context.Context, tx payment.Tx) error {
		return func(ctx context.Context, tx payment.Tx) error { _, err := tx.Cancel(ctx, st.ID, ch.ID, id); return err }
	}
	cases := []struct {
		name string
		get  func(ctx context.Context, tx payment.Tx) error
	}{
		{"Merchant", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Merchant(ctx, missing); return err }},
		{"MerchantNil", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Merchant(ctx, uuid.Nil); return err }},
		{"UserByEmail", func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.UserByEmail(ctx, "nobody@kessai.test")
			return err
		}},
		{"Store", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Store(ctx, missing); return err }},
		{"StoreIsNotMerchant", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Store(ctx, m.ID); return err }},
		{"AppToken", func(ctx context.Context, tx payment.Tx) error { _, err := tx.AppToken(ctx, missing); return err }},
		{"Token", getToken(missing)},
		{"TokenNil", getToken(uuid.Nil)},
		{"TokenIsNotCharge", getToken(ch.ID)},
		{"Charge", getCharge(missing)},
		{"ChargeNil", getCharge(uuid.Nil)},
		{"ChargeIsNotToken", getCharge(tok.ID)},
		{"ChargeIsNotRefund", getCharge(r.ID)},
		{"Refund", getRefund(missing)},
		{"RefundNil", getRefund(uuid.Nil)},
		{"RefundIsNotCharge", getRefund(ch.ID)},
		{"RefundIsNotCancel", getRefund(cn.ID)},
		{"Cancel", getCancel(missing)},
		{"CancelNil", getCancel(uuid.Nil)},
		{"CancelIsNotRefund", getCancel(r.ID)},
		{"QueuedRefund", func(ctx context.Context, tx payment.Tx) error { _, err := tx.QueuedRefund(ctx, missing); return err }},
		{"QueuedRefundIsNotCancel", func(ctx context.Context, tx payment.Tx) error { _, err := tx.QueuedRefund(ctx, cn.ID); return err }},
		{"QueuedCancel", func(ctx context.Context, tx payment.Tx) error { _, err := tx.QueuedCancel(ctx, missing); return err }},
		{"QueuedCancelIsNotRefund", func(ctx context.Context, tx payment.Tx) error { _, err := tx.QueuedCancel(ctx, r.ID); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.View(t.Context(), func(tx payment.Tx) error { return c.get(t.Context(), tx) })
			if !payment.IsNotFound(err) {
				t.Errorf("got %v (code %s), want NOT_FOUND", err, payment.ErrorCode(err))
			}
		})
	}
}

func testDuplicateIDs(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	tok := createAppToken(t, s, m.ID, st.ID, 1)
	u := &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: "dup@kessai.test", PasswordHash: []byte("x"), CreatedOn: at(1)}
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateUser(ctx, u) })
	ptok := newToken(st, 1)
	createTokens(t, s, ptok)
	ch := newCharge(ptok, 1)
	createCharges(t, s, ch)
	r, cn := newRefund(ch, 1), newCancel(ch, 1)
	createRefunds(t, s, r)
	createCancels(t, s, cn)
	cases := []struct {
		name   string
		create func(ctx context.Context, tx payment.Tx) error
	}{
		{"Merchant", func(ctx context.Context, tx payment.Tx) error {
			again := newMerchant(2)
			again.ID = m.ID
			return tx.CreateMerchant(ctx, again)
		}},
		{"Store", func(ctx context.Context, tx payment.Tx) error {
			again := newStore(m.ID, 2)
			again.ID = st.ID
			return tx.CreateStore(ctx, again)
		}},
		{"AppToken", func(ctx context.Context, tx payment.Tx) error {
			again := newAppToken(m.ID, st.ID, 2)
			again.ID = tok.ID
			return tx.CreateAppToken(ctx, again)
		}},
		{"Token", func(ctx context.Context, tx payment.Tx) error {
			again := newToken(st, 2)
			again.ID = ptok.ID
			return tx.CreateToken(ctx, again)
		}},
		{"Charge", func(ctx context.Context, tx payment.Tx) error {
			again := newCharge(ptok, 2)
			again.ID = ch.ID
			return tx.CreateCharge(ctx, again)
		}},
		{"Refund", func(ctx context.Context, tx payment.Tx) error {
			again := newRefund(ch, 2)
			again.ID = r.ID
			return tx.CreateRefund(ctx, again)
		}},
		{"Cancel", func(ctx context.Context, tx payment.Tx) error {
			again := newCancel(ch, 2)
			again.ID = cn.ID
			return tx.CreateCancel(ctx, again)
		}},
		{"UserEmail", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateUser(ctx, &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: u.Email,
				PasswordHash: []byte("y"), CreatedOn: at(2)})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Update(t.Context(), func(tx payment.Tx) error { return c.create(t.Context(), tx) })
			if err == nil {
				t.Fatal("creating a second row with the same key succeeded")
			}
		})
	}
	// The originals are intact.
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.AppToken(ctx, tok.ID)
		if err != nil {
			return err
		}
		checkAppToken(t, got, tok, nil)
		gotUser, err := tx.UserByEmail(ctx, u.Email)
		if err == nil && gotUser.ID != u.ID {
			t.Errorf("user %s replaced by %s", u.ID, gotUser.ID)
		}
		return err
	})
	checkSame(t, readToken(t, s, ptok.ID), ptok)
	checkSame(t, readCharge(t, s, ch.ID), ch)
	checkSame(t, readRefund(t, s, r), r)
	checkSame(t, readCancel(t, s, cn), cn)
}

var errRollback = errors.New("storagetest: roll back")

// updateRolledBack runs the steps of one transaction of s in order, then
// fails the transaction so that it rolls back; a step that fails, or an
// Update that does not return the transaction's own error, fails the test.
func updateRolledBack(t *testing.T, s payment.Storage, steps func(ctx context.Context, tx payment.Tx) []func() error) {
	t.Helper()
	ctx := t.Context()
	err := s.Update(ctx, func(tx payment.Tx) error {
		for _, step := range steps(ctx, tx) {
			if err := step(); err != nil {
				return err
			}
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}
}

func testUpdateRollsBack(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	kept := createAppToken(t, s, m.ID, st.ID, 1, "kept.example")
	key := payment.QuotaKey{Resource: "app_token", Scope: "store:" + st.ID.String()}
	if !take(t, s, key, 2) {
		t.Fatal("setting up the quota failed")
	}

	m2 := newMerchant(2)
	st2 := newStore(m2.ID, 2)
	u := &payment.User{ID: payment.NewID(), MerchantID: m2.ID, Email: "rolled@kessai.test", PasswordHash: []byte("h"), CreatedOn: at(2)}
	tok := newAppToken(m2.ID, st2.ID, 2, "rolled.example")
	updateRolledBack(t, s, func(ctx context.Context, tx payment.Tx) []func() error {
		return []func() error{
			func() error { return tx.CreateMerchant(ctx, m2) },
			func() error { return tx.CreateUser(ctx, u) },
			func() error { return tx.CreateStore(ctx, st2) },
			func() error { return tx.CreateAppToken(ctx, tok) },
			func() error { return tx.RevokeAppToken(ctx, kept.ID, at(3)) },
			func() error { return tx.SetUserPassword(ctx, u.ID, []byte("other")) },
			func() error {
				ok, err := tx.TakeQuota(ctx, key, 2)
				if err == nil && !ok {
					err = errors.New("quota refused inside the transaction")
				}
				return err
			},
			func() error { return tx.ReleaseQuota(ctx, payment.QuotaKey{Resource: "app_token", Scope: "other"}) },
			func() error {
				// What was written is visible inside the transaction.
				if _, err := tx.Store(ctx, st2.ID); err != nil {
					return fmt.Errorf("own write not visible: %w", err)
				}
				return nil
			},
		}
	})

	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if _, err := tx.Merchant(ctx, m2.ID); !payment.IsNotFound(err) {
			t.Errorf("merchant after rollback: %v, want NOT_FOUND", err)
		}
		if _, err := tx.UserByEmail(ctx, u.Email); !payment.IsNotFound(err) {
			t.Errorf("user after rollback: %v, want NOT_FOUND", err)
		}
		if _, err := tx.Store(ctx, st2.ID); !payment.IsNotFound(err) {
			t.Errorf("store after rollback: %v, want NOT_FOUND", err)
		}
		if _, err := tx.AppToken(ctx, tok.ID); !payment.IsNotFound(err) {
			t.Errorf("app token after rollback: %v, want NOT_FOUND", err)
		}
		got, err := tx.AppToken(ctx, kept.ID)
		if err != nil {
			return err
		}
		if !got.Active() {
			t.Error("a revocation survived the rollback")
		}
		n, err := tx.CountMerchants(ctx)
		if err == nil && n != 1 {
			t.Errorf("CountMerchants after rollback = %d, want 1", n)
		}
		ds, err := tx.ActiveDomains(ctx)
		if err == nil && !sameSet(ds, []string{"kept.example"}) {
			t.Errorf("ActiveDomains after rollback = %v", ds)
		}
		return err
	})
	if got := takeAll(t, s, key, 2); got != 1 {
		t.Errorf("after rollback the quota had %d places, want 1", got)
	}

	t.Run("DomainError", func(t *testing.T) {
		want := payment.Invalid("name", payment.ReasonRequired)
		m3 := newMerchant(3)
		err := s.Update(t.Context(), func(tx payment.Tx) error {
			if err := tx.CreateMerchant(t.Context(), m3); err != nil {
				return err
			}
			return want
		})
		var got *payment.Error
		if !errors.As(err, &got) || got != want {
			t.Errorf("Update returned %v, want the *payment.Error itself", err)
		}
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			if _, err := tx.Merchant(ctx, m3.ID); !payment.IsNotFound(err) {
				t.Errorf("merchant after rollback: %v, want NOT_FOUND", err)
			}
			return nil
		})
	})
	t.Run("Token", func(t *testing.T) {
		tok := newToken(st, 5)
		err := s.Update(t.Context(), func(tx payment.Tx) error {
			if err := tx.CreateToken(t.Context(), tok); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("Update returned %v, want the function's error", err)
		}
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			if _, err := tx.Token(ctx, tok.ID); !payment.IsNotFound(err) {
				t.Errorf("token after rollback: %v, want NOT_FOUND", err)
			}
			return nil
		})
	})
	t.Run("PaymentWrites", func(t *testing.T) { testPaymentRollback(t, s, st) })
	t.Run("Commits", func(t *testing.T) {
		m4 := newMerchant(4)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateMerchant(ctx, m4) })
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.Merchant(ctx, m4.ID)
			return err
		})
	})
}

func testViewCannotWrite(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	tok := createAppToken(t, s, m.ID, st.ID, 1)
	key := payment.QuotaKey{Resource: "app_token", Scope: "view"}
	full := payment.QuotaKey{Resource: "app_token", Scope: "view-full"}
	if !take(t, s, full, 1) {
		t.Fatal("setting up the quota failed")
	}
	u := &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: "view@kessai.test", PasswordHash: []byte("h"), CreatedOn: at(1)}
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateUser(ctx, u) })
	ptok := newToken(st, 1)
	createTokens(t, s, ptok)
	ch := newCharge(ptok, 2)
	ch.Status, ch.CaptureState = payment.ChargePending, payment.CaptureNone
	createCharges(t, s, ch)
	r, cn := newRefund(ch, 3), newCancel(ch, 4)
	r.Status, cn.Status = payment.OperationPending, payment.OperationPending
	createRefunds(t, s, r)
	createCancels(t, s, cn)
	line := chargeLine(ch, 5)
	putLines(t, s, line)
	now := at(100).Truncate(time.Microsecond)
	lease := now.Add(time.Minute)
	enqueue(t, s, payment.WorkAuthorize, ch.ID, now)
	enqueue(t, s, payment.WorkRefund, r.ID, now)
	held := checkOne(t, claim(t, s, "w", now, lease, 1), payment.WorkAuthorize, ch.ID)
	changedLine := *line
	changedLine.Status = "successful"
	ap := newApproval(st, ch.ID, approvalKey("v", 1), 1)
	createApprovals(t, s, ap)
	hook := newWebhook(m.ID, st.ID, payment.ModeLive, 1)
	createWebhooks(t, s, hook)
	ev := newEvent(st, payment.ModeLive, payment.EventChargeFinished, 1)
	createEvents(t, s, ev)
	dl := newDelivery(ev, hook, 1)
	createDeliveries(t, s, dl)
	newEv := newEvent(st, payment.ModeLive, payment.EventChargeUpdated, 2)
	sub := newSubscription(ptok, 1)
	createSubscriptions(t, s, sub)
	pay := newScheduledPayment(sub, 1)
	createScheduledPayments(t, s, pay)
	newSub := newSubscription(ptok, 2)
	writes := []struct {
		name  string
		write func(ctx context.Context, tx payment.Tx) error
	}{
		{"CreateMerchant", func(ctx context.Context, tx payment.Tx) error { return tx.CreateMerchant(ctx, newMerchant(2)) }},
		{"CreateStore", func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, newStore(m.ID, 2)) }},
		{"CreateAppToken", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateAppToken(ctx, newAppToken(m.ID, st.ID, 2))
		}},
		{"RevokeAppToken", func(ctx context.Context, tx payment.Tx) error { return tx.RevokeAppToken(ctx, tok.ID, at(5)) }},
		{"TakeQuota", func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.TakeQuota(ctx, key, 1)
			return err
		}},
		{"ReleaseQuota", func(ctx context.Context, tx payment.Tx) error { return tx.ReleaseQuota(ctx, full) }},
		{"CreateUser", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateUser(ctx, &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: "other@kessai.test",
				PasswordHash: []byte("h"), CreatedOn: at(2)})
		}},
		{"SetUserPassword", func(ctx context.Context, tx payment.Tx) error { return tx.SetUserPassword(ctx, u.ID, []byte("new")) }},
		{"CreateToken", func(ctx context.Context, tx payment.Tx) error { return tx.CreateToken(ctx, newToken(st, 6)) }},
		{"UpdateToken", func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, changedToken(ptok)) }},
		{"EraseTokenCVC", func(ctx context.Context, tx payment.Tx) error { return tx.EraseTokenCVC(ctx, ptok.ID) }},
		{"CreateCharge", func(ctx context.Context, tx payment.Tx) error { return tx.CreateCharge(ctx, newCharge(ptok, 7)) }},
		{"UpdateCharge", func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, changedCharge(ch)) }},
		{"CreateRefund", func(ctx context.Context, tx payment.Tx) error { return tx.CreateRefund(ctx, newRefund(ch, 8)) }},
		{"UpdateRefund", func(ctx context.Context, tx payment.Tx) error { return tx.UpdateRefund(ctx, changedRefund(r)) }},
		{"CreateCancel", func(ctx context.Context, tx payment.Tx) error { return tx.CreateCancel(ctx, newCancel(ch, 9)) }},
		{"UpdateCancel", func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCancel(ctx, changedCancel(cn)) }},
		{"PutLedgerEntry", func(ctx context.Context, tx payment.Tx) error { return tx.PutLedgerEntry(ctx, &changedLine) }},
		{"EnqueueWork", func(ctx context.Context, tx payment.Tx) error {
			return tx.InsertWork(ctx, payment.WorkCancel, cn.ID, now)
		}},
		{"ClaimWork", func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.ClaimWork(ctx, "v", now, lease, 10)
			return err
		}},
		{"ExtendWorkLease", func(ctx context.Context, tx payment.Tx) error {
			return tx.ExtendWorkLease(ctx, held, lease.Add(time.Hour))
		}},
		{"CompleteWork", func(ctx context.Context, tx payment.Tx) error { return tx.CompleteWork(ctx, held) }},
		{"RetryWork", func(ctx context.Context, tx payment.Tx) error {
			return tx.RetryWork(ctx, held, now.Add(time.Hour), "viewed")
		}},
		{"ReleaseWork", func(ctx context.Context, tx payment.Tx) error { return tx.ReleaseWork(ctx, held) }},
		{"CreateApproval", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateApproval(ctx, newApproval(st, ch.ID, approvalKey("v", 2), 2))
		}},
		{"UpdateApproval", func(ctx context.Context, tx payment.Tx) error {
			return tx.UpdateApproval(ctx, changedApproval(ap, st))
		}},
		{"CreateWebhook", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateWebhook(ctx, newWebhook(m.ID, st.ID, payment.ModeLive, 2))
		}},
		{"UpdateWebhook", func(ctx context.Context, tx payment.Tx) error { return tx.UpdateWebhook(ctx, changedWebhook(hook)) }},
		{"DeleteWebhook", func(ctx context.Context, tx payment.Tx) error { return tx.DeleteWebhook(ctx, hook.ID) }},
		{"CreateEvent", func(ctx context.Context, tx payment.Tx) error { return tx.CreateEvent(ctx, newEv) }},
		{"CreateDelivery", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateDelivery(ctx, newDelivery(ev, hook, 2))
		}},
		{"UpdateDelivery", func(ctx context.Context, tx payment.Tx) error { return tx.UpdateDelivery(ctx, changedDelivery(dl)) }},
		{"CreateSubscription", func(ctx context.Context, tx payment.Tx) error { return tx.CreateSubscription(ctx, newSub) }},
		{"UpdateSubscription", func(ctx context.Context, tx payment.Tx) error {
			return tx.UpdateSubscription(ctx, changedSubscription(sub, ptok.ID))
		}},
		{"CreateScheduledPayment", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateScheduledPayment(ctx, newScheduledPayment(sub, 2))
		}},
		{"UpdateScheduledPayment", func(ctx context.Context, tx payment.Tx) error {
			return tx.UpdateScheduledPayment(ctx, changedScheduledPayment(pay))
		}},
		{"RescheduleWork", func(ctx context.Context, tx payment.Tx) error {
			return tx.MoveWorkDue(ctx, payment.WorkRefund, r.ID, now.Add(time.Hour))
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := s.View(t.Context(), func(tx payment.Tx) error { return w.write(t.Context(), tx) }); err == nil {
				t.Errorf("%s inside View succeeded, want an error", w.name)
			}
		})
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("View wrote: %d merchants, want 1", n)
		}
		got, err := tx.AppToken(ctx, tok.ID)
		if err != nil {
			return err
		}
		if !got.Active() {
			t.Error("View revoked a token")
		}
		return nil
	})
	if !take(t, s, key, 1) {
		t.Error("View took a quota unit")
	}
	if take(t, s, full, 1) {
		t.Error("View released a quota unit")
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.UserByEmail(ctx, u.Email)
		if err == nil {
			checkSame(t, got, u)
		}
		return err
	})
	checkSame(t, readToken(t, s, ptok.ID), ptok)
	checkSame(t, readCharge(t, s, ch.ID), ch)
	checkSame(t, readRefund(t, s, r), r)
	checkSame(t, readCancel(t, s, cn), cn)
	page := listLedger(t, s, payment.LedgerFilter{MerchantID: m.ID}, payment.ListParams{Limit: 10})
	if len(page.Items) != 1 {
		t.Fatalf("the ledger holds %d lines, want 1", len(page.Items))
	}
	checkSame(t, page.Items[0], line)
	checkItem(t, s, held)
	checkItem(t, s, queued(payment.WorkRefund, r.ID, now))
	checkNoWork(t, s, payment.WorkCancel, cn.ID)
	checkSame(t, readSubscription(t, s, sub.ID), sub)
	checkNoSubscription(t, s, newSub.ID)
	checkSame(t, readScheduledPayment(t, s, pay.ID), pay)
	checkPage(t, pageCheck{want: []uuid.UUID{pay.ID}, total: intp(1)},
		listScheduledPayments(t, s, sub.ID, payment.ListParams{Limit: 10}), scheduledPaymentID)
	checkSame(t, readApproval(t, s, ap.Key), ap)
	checkLatest(t, s, ch.ID, ap)
	checkNoKey(t, s, approvalKey("v", 2))
	checkSame(t, readWebhook(t, s, hook.ID), hook)
	checkSame(t, readEvent(t, s, ev.ID), ev)
	checkNoEvent(t, s, newEv.ID)
	checkSame(t, readDelivery(t, s, dl.ID), dl)
	checkPage(t, pageCheck{want: []uuid.UUID{dl.ID}, total: intp(1)},
		listDeliveries(t, s, hook.ID, payment.ListParams{Limit: 10}), deliveryID)
	checkPage(t, pageCheck{want: []uuid.UUID{hook.ID}, total: intp(1)},
		listWebhooks(t, s, payment.WebhookFilter{MerchantID: m.ID}, payment.ListParams{Limit: 10}), webhookID)
	for _, list := range []func(ctx context.Context, tx payment.Tx) (int, error){
		func(ctx context.Context, tx payment.Tx) (int, error) {
			p, err := tx.ListTokens(ctx, payment.TokenFilter{MerchantID: m.ID}, payment.ListParams{Limit: 10})
			return len(p.Items), err
		},
		func(ctx context.Context, tx payment.Tx) (int, error) {
			p, err := tx.ListCharges(ctx, payment.ChargeFilter{MerchantID: m.ID}, payment.ListParams{Limit: 10})
			return len(p.Items), err
		},
		func(ctx context.Context, tx payment.Tx) (int, error) {
			p, err := tx.ListRefunds(ctx, ch.ID, payment.ListParams{Limit: 10})
			return len(p.Items), err
		},
		func(ctx context.Context, tx payment.Tx) (int, error) {
			p, err := tx.ListCancels(ctx, ch.ID, payment.ListParams{Limit: 10})
			return len(p.Items), err
		},
	} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			n, err := list(ctx, tx)
			if err == nil && n != 1 {
				t.Errorf("View wrote: a list holds %d items, want 1", n)
			}
			return err
		})
	}
}

// testPaymentRollback makes every kind of payment write in a transaction
// that fails, and checks that none of them landed.
func testPaymentRollback(t *testing.T, s payment.Storage, st *payment.Store) {
	tok := newToken(st, 10)
	createTokens(t, s, tok)
	pending, captured, authorized := newCharge(tok, 11), newCharge(tok, 12), newCharge(tok, 13)
	pending.Status, pending.CaptureState = payment.ChargePending, payment.CaptureNone
	captured.Status, captured.CaptureState = payment.ChargeSuccessful, payment.CaptureDone
	authorized.Status, authorized.CaptureState = payment.ChargeAuthorized, payment.CaptureNone
	createCharges(t, s, pending, captured, authorized)
	r, cn := newRefund(captured, 14), newCancel(authorized, 15)
	r.Status, cn.Status = payment.OperationPending, payment.OperationPending
	createRefunds(t, s, r)
	createCancels(t, s, cn)
	line := chargeLine(pending, 16)
	putLines(t, s, line)
	now := at(2000).Truncate(time.Microsecond)
	lease := now.Add(time.Minute)
	enqueue(t, s, payment.WorkAuthorize, pending.ID, now)
	enqueue(t, s, payment.WorkRefund, r.ID, now)
	enqueue(t, s, payment.WorkCancel, cn.ID, now)
	held := claim(t, s, "w", now, lease, 10)
	if len(held) != 3 {
		t.Fatalf("setting up: claimed %s, want three items", workString(held))
	}
	ledger := payment.LedgerFilter{MerchantID: st.MerchantID, StoreID: st.ID}
	key := payment.QuotaKey{Resource: "test_charge", Scope: "store:rollback", Period: "2025-01-31"}

	newTok := newToken(st, 20)
	newCh := newCharge(newTok, 21)
	newR, newCn := newRefund(captured, 22), newCancel(authorized, 23)
	newLine := chargeLine(newCh, 24)
	changedLine := *line
	changedLine.Status, changedLine.Amount, changedLine.UpdatedOn = "successful", 1, at(25)
	updateRolledBack(t, s, func(ctx context.Context, tx payment.Tx) []func() error {
		return []func() error{
			func() error { return tx.CreateToken(ctx, newTok) },
			func() error { return tx.CreateCharge(ctx, newCh) },
			func() error { return tx.CreateRefund(ctx, newR) },
			func() error { return tx.CreateCancel(ctx, newCn) },
			func() error { return tx.PutLedgerEntry(ctx, newLine) },
			func() error { return tx.PutLedgerEntry(ctx, &changedLine) },
			func() error { return tx.UpdateToken(ctx, changedToken(tok)) },
			func() error { return tx.EraseTokenCVC(ctx, tok.ID) },
			func() error { return tx.UpdateCharge(ctx, changedCharge(pending)) },
			func() error { return tx.UpdateRefund(ctx, changedRefund(r)) },
			func() error { return tx.UpdateCancel(ctx, changedCancel(cn)) },
			func() error { return tx.InsertWork(ctx, payment.WorkAuthorize, newCh.ID, now) },
			func() error { return tx.InsertWork(ctx, payment.WorkRefund, newR.ID, now) },
			func() error { return tx.InsertWork(ctx, payment.WorkCancel, newCn.ID, now) },
			func() error { return tx.RetryWork(ctx, held[0], now.Add(time.Hour), "rolled back") },
			func() error { return tx.CompleteWork(ctx, held[1]) },
			func() error { return tx.ReleaseWork(ctx, held[2]) },
			func() error {
				ok, err := tx.TakeQuota(ctx, key, 1)
				if err == nil && !ok {
					err = errors.New("quota refused inside the transaction")
				}
				return err
			},
			func() error {
				// What was written is visible inside the transaction.
				if _, err := tx.Charge(ctx, newCh.ID); err != nil {
					return fmt.Errorf("own write not visible: %w", err)
				}
				return nil
			},
		}
	})
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		for what, err := range map[string]error{
			"token":  second(tx.Token(ctx, newTok.ID)),
			"charge": second(tx.Charge(ctx, newCh.ID)),
			"refund": second(tx.QueuedRefund(ctx, newR.ID)),
			"cancel": second(tx.QueuedCancel(ctx, newCn.ID)),
		} {
			if !payment.IsNotFound(err) {
				t.Errorf("%s after rollback: %v, want NOT_FOUND", what, err)
			}
		}
		return nil
	})
	checkSame(t, readToken(t, s, tok.ID), tok)
	checkSame(t, readCharge(t, s, pending.ID), pending)
	checkSame(t, readRefund(t, s, r), r)
	checkSame(t, readCancel(t, s, cn), cn)
	page := listLedger(t, s, ledger, payment.ListParams{Limit: 10})
	if len(page.Items) != 1 {
		t.Fatalf("after rollback the ledger holds %d lines, want 1", len(page.Items))
	}
	checkSame(t, page.Items[0], line)
	for _, w := range held {
		checkItem(t, s, w)
	}
	checkNoWork(t, s, payment.WorkAuthorize, newCh.ID)
	checkNoWork(t, s, payment.WorkRefund, newR.ID)
	checkNoWork(t, s, payment.WorkCancel, newCn.ID)
	if !take(t, s, key, 1) {
		t.Error("after rollback the quota unit was still taken")
	}
}

// second returns the error of a lookup.
func second[T any](_ T, err error) error { return err }
