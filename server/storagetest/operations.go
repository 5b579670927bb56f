package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// newRefund is a refund of ch with every field set.
func newRefund(ch *payment.Charge, i int) *payment.Refund {
	return &payment.Refund{
		ID: payment.NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
		Status: payment.OperationSuccessful, Amount: 1_000 + int64(i), Currency: ch.Currency, Reason: "customer_request",
		Message:  fmt.Sprintf("返金 %d: \"wrong size\"", i),
		Error:    &payment.PaymentError{Code: payment.ErrRefundFailed, Message: "REFUND_FAILED", Detail: "issuer unavailable"},
		Metadata: fullMetadata(i), CreatedOn: at(i), UpdatedOn: at(i + 3),
	}
}

// refundFixed are the refund's fields an update never changes.
var refundFixed = []string{"ID", "StoreID", "MerchantID", "ChargeID", "Mode", "CreatedOn"}

func changedRefund(r *payment.Refund) *payment.Refund {
	c := *r
	c.Status, c.Amount, c.Currency, c.Reason, c.Message = payment.OperationError, 9_999_999_999, "USD", "fraud", "changed"
	c.Error = &payment.PaymentError{Code: payment.ErrProcessingError, Message: "PROCESSING_ERROR", Detail: "changed"}
	c.Metadata, c.UpdatedOn = payment.Metadata{"changed": json.Number("1.0")}, at(800)
	return &c
}

// newCancel is a cancel of ch with every field set.
func newCancel(ch *payment.Charge, i int) *payment.Cancel {
	return &payment.Cancel{
		ID: payment.NewID(), StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID, Mode: ch.Mode,
		Status:   payment.OperationFailed,
		Error:    &payment.PaymentError{Code: payment.ErrCancelUnavailable, Message: "CANCEL_UNAVAILABLE", Detail: "the charge was captured"},
		Metadata: fullMetadata(i), CreatedOn: at(i), UpdatedOn: at(i + 4),
	}
}

// cancelFixed are the cancel's fields an update never changes.
var cancelFixed = []string{"ID", "StoreID", "MerchantID", "ChargeID", "Mode", "CreatedOn"}

func changedCancel(cn *payment.Cancel) *payment.Cancel {
	c := *cn
	c.Status = payment.OperationSuccessful
	c.Error = &payment.PaymentError{Code: payment.ErrProcessingError, Message: "PROCESSING_ERROR", Detail: "changed"}
	c.Metadata, c.UpdatedOn = payment.Metadata{"changed": "yes"}, at(801)
	return &c
}

func createRefunds(t *testing.T, s payment.Storage, rs ...*payment.Refund) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, r := range rs {
			if err := tx.CreateRefund(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
}

func createCancels(t *testing.T, s payment.Storage, cs ...*payment.Cancel) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, c := range cs {
			if err := tx.CreateCancel(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// readRefund reads the refund of want's store, charge and id, both ways:
// as a request does and as the worker does; the two must agree.
func readRefund(t *testing.T, s payment.Storage, want *payment.Refund) *payment.Refund {
	t.Helper()
	var r, queued *payment.Refund
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		if r, err = tx.Refund(ctx, want.StoreID, want.ChargeID, want.ID); err != nil {
			return err
		}
		queued, err = tx.QueuedRefund(ctx, want.ID)
		return err
	})
	checkSame(t, queued, r)
	return r
}

// readCancel is readRefund for a cancel.
func readCancel(t *testing.T, s payment.Storage, want *payment.Cancel) *payment.Cancel {
	t.Helper()
	var c, queued *payment.Cancel
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		if c, err = tx.Cancel(ctx, want.StoreID, want.ChargeID, want.ID); err != nil {
			return err
		}
		queued, err = tx.QueuedCancel(ctx, want.ID)
		return err
	})
	checkSame(t, queued, c)
	return c
}

// testRefundAndCancelScope: a refund or cancel is read under its own
// store and charge only; under another charge of the store, another store
// of the merchant, or another merchant's store and charge, it is
// NOT_FOUND, as a request naming it there must be answered.
func testRefundAndCancelScope(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 2, w.st, w.st2, w.otherSt)
	mine, sibling, sameMerchant, otherMerchant := chs[0][0], chs[0][1], chs[1][0], chs[2][0]
	r, cn := newRefund(mine, 1), newCancel(mine, 2)
	createRefunds(t, s, r)
	createCancels(t, s, cn)
	checkSame(t, readRefund(t, s, r), r)
	checkSame(t, readCancel(t, s, cn), cn)
	for _, c := range []struct {
		name              string
		storeID, chargeID uuid.UUID
	}{
		{"AnotherChargeOfTheStore", mine.StoreID, sibling.ID},
		{"AnotherStoreOfTheMerchant", sameMerchant.StoreID, mine.ID},
		{"AnotherStoreAndItsCharge", sameMerchant.StoreID, sameMerchant.ID},
		{"AnotherMerchant", otherMerchant.StoreID, otherMerchant.ID},
		{"AnotherMerchantsStore", otherMerchant.StoreID, mine.ID},
		{"NoStore", uuid.Nil, mine.ID},
		{"NoCharge", mine.StoreID, uuid.Nil},
		{"TheIdsSwapped", mine.ID, mine.StoreID},
	} {
		t.Run(c.name, func(t *testing.T) {
			view(t, s, func(ctx context.Context, tx payment.Tx) error {
				if got, err := tx.Refund(ctx, c.storeID, c.chargeID, r.ID); !payment.IsNotFound(err) {
					t.Errorf("Refund = %v, %v; want NOT_FOUND", got, err)
				}
				if got, err := tx.Cancel(ctx, c.storeID, c.chargeID, cn.ID); !payment.IsNotFound(err) {
					t.Errorf("Cancel = %v, %v; want NOT_FOUND", got, err)
				}
				return nil
			})
		})
	}
	// Inside an Update too, where PostgreSQL reads for writing.
	t.Run("InAnUpdate", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			if _, err := tx.Refund(ctx, otherMerchant.StoreID, otherMerchant.ID, r.ID); !payment.IsNotFound(err) {
				t.Errorf("Refund under another merchant's charge: %v, want NOT_FOUND", err)
			}
			if _, err := tx.Cancel(ctx, mine.StoreID, sibling.ID, cn.ID); !payment.IsNotFound(err) {
				t.Errorf("Cancel under another charge: %v, want NOT_FOUND", err)
			}
			_, err := tx.Refund(ctx, mine.StoreID, mine.ID, r.ID)
			return err
		})
	})
}

func refundID(r *payment.Refund) uuid.UUID { return r.ID }
func cancelID(c *payment.Cancel) uuid.UUID { return c.ID }

// chargesOf stores one token per store and n charges on each, the i-th of
// each store with index i.
func chargesOf(t *testing.T, s payment.Storage, n int, stores ...*payment.Store) [][]*payment.Charge {
	t.Helper()
	out := make([][]*payment.Charge, len(stores))
	var all []*payment.Charge
	for k, st := range stores {
		tok := newToken(st, k)
		createTokens(t, s, tok)
		for i := range n {
			ch := newCharge(tok, 10*i+k)
			out[k] = append(out[k], ch)
			all = append(all, ch)
		}
	}
	createCharges(t, s, all...)
	return out
}

func testRefunds(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 2, w.st)[0]
	r, other := newRefund(chs[0], 1), newRefund(chs[1], 2)
	requireNoZeroFields(t, r)
	createRefunds(t, s, r, other)
	checkSame(t, readRefund(t, s, r), r)

	t.Run("Update", func(t *testing.T) {
		changed := changedRefund(r)
		requireAllChanged(t, r, changed, refundFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateRefund(ctx, changed) })
		checkSame(t, readRefund(t, s, r), changed)
		checkSame(t, readRefund(t, s, other), other)
	})
	t.Run("UpdateClears", func(t *testing.T) {
		cleared := changedRefund(r)
		cleared.Error, cleared.Reason, cleared.Message, cleared.Metadata = nil, "", "", nil
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateRefund(ctx, cleared) })
		checkSame(t, readRefund(t, s, r), cleared)
	})
}

func testCancels(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 2, w.st)[0]
	c, other := newCancel(chs[0], 1), newCancel(chs[1], 2)
	requireNoZeroFields(t, c)
	createCancels(t, s, c, other)
	checkSame(t, readCancel(t, s, c), c)

	t.Run("Update", func(t *testing.T) {
		changed := changedCancel(c)
		requireAllChanged(t, c, changed, cancelFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCancel(ctx, changed) })
		checkSame(t, readCancel(t, s, c), changed)
		checkSame(t, readCancel(t, s, other), other)
	})
	t.Run("UpdateClears", func(t *testing.T) {
		cleared := changedCancel(c)
		cleared.Error, cleared.Metadata = nil, nil
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCancel(ctx, cleared) })
		checkSame(t, readCancel(t, s, c), cleared)
	})
}

// testListRefunds and testListCancels check that a charge's list holds its
// own operations only (the domain checks beforehand that the caller may see
// the charge; the list itself is scoped by the charge alone) and pages.
func testListRefunds(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 3, w.st, w.otherSt)
	target, sibling, foreign, empty := chs[0][0], chs[0][1], chs[1][0], chs[0][2]
	var mine, all []*payment.Refund
	for i := range 27 {
		r := newRefund(target, i)
		mine, all = append(mine, r), append(all, r)
		if i%3 == 0 {
			all = append(all, newRefund(sibling, i), newRefund(foreign, i))
		}
	}
	createRefunds(t, s, all...)
	list := func(t *testing.T, chargeID uuid.UUID, p payment.ListParams) payment.Page[*payment.Refund] {
		t.Helper()
		var page payment.Page[*payment.Refund]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListRefunds(ctx, chargeID, p)
			return err
		})
		return page
	}
	var asc []uuid.UUID
	for _, r := range mine {
		asc = append(asc, r.ID)
	}
	checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.Refund] { return list(t, target.ID, p) }, refundID)
	t.Run("OtherCharges", func(t *testing.T) {
		for _, ch := range []*payment.Charge{sibling, foreign} {
			var want []uuid.UUID
			for _, r := range all {
				if r.ChargeID == ch.ID {
					want = append(want, r.ID)
				}
			}
			checkPage(t, pageCheck{want: reversed(want), total: intp(len(want))}, list(t, ch.ID, payment.ListParams{Limit: payment.MaxLimit}), refundID)
		}
	})
	t.Run("NoRefunds", func(t *testing.T) {
		checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, list(t, empty.ID, payment.ListParams{Limit: 10}), refundID)
		checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, list(t, payment.NewID(), payment.ListParams{Limit: 10}), refundID)
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, target.ID, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if len(page.Items) != len(mine) {
			t.Fatalf("got %d refunds, want %d", len(page.Items), len(mine))
		}
		for i, got := range page.Items {
			checkSame(t, got, mine[i])
		}
	})
}

func testListCancels(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 3, w.st, w.otherSt)
	target, sibling, foreign, empty := chs[0][0], chs[0][1], chs[1][0], chs[0][2]
	var mine, all []*payment.Cancel
	for i := range 26 {
		c := newCancel(target, i)
		mine, all = append(mine, c), append(all, c)
		if i%4 == 0 {
			all = append(all, newCancel(sibling, i), newCancel(foreign, i))
		}
	}
	createCancels(t, s, all...)
	list := func(t *testing.T, chargeID uuid.UUID, p payment.ListParams) payment.Page[*payment.Cancel] {
		t.Helper()
		var page payment.Page[*payment.Cancel]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListCancels(ctx, chargeID, p)
			return err
		})
		return page
	}
	var asc []uuid.UUID
	for _, c := range mine {
		asc = append(asc, c.ID)
	}
	checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.Cancel] { return list(t, target.ID, p) }, cancelID)
	t.Run("OtherCharges", func(t *testing.T) {
		for _, ch := range []*payment.Charge{sibling, foreign} {
			var want []uuid.UUID
			for _, c := range all {
				if c.ChargeID == ch.ID {
					want = append(want, c.ID)
				}
			}
			checkPage(t, pageCheck{want: reversed(want), total: intp(len(want))}, list(t, ch.ID, payment.ListParams{Limit: payment.MaxLimit}), cancelID)
		}
	})
	t.Run("NoCancels", func(t *testing.T) {
		checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, list(t, empty.ID, payment.ListParams{Limit: 10}), cancelID)
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, target.ID, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if len(page.Items) != len(mine) {
			t.Fatalf("got %d cancels, want %d", len(page.Items), len(mine))
		}
		for i, got := range page.Items {
			checkSame(t, got, mine[i])
		}
	})
}

// testRefundedAmount checks the sum the refund rule compares with the
// charged amount: the charge's refunds that are pending or successful
// (promised or given back), not failed or error ones, not other charges'.
func testRefundedAmount(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 2, w.st, w.otherSt)
	ch, sibling, foreign := chs[0][0], chs[0][1], chs[1][0]
	refunded := func(t *testing.T, id uuid.UUID) int64 {
		t.Helper()
		var sum int64
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			sum, err = tx.RefundedAmount(ctx, id)
			return err
		})
		return sum
	}
	if got := refunded(t, ch.ID); got != 0 {
		t.Errorf("RefundedAmount with no refunds = %d, want 0", got)
	}
	if got := refunded(t, payment.NewID()); got != 0 {
		t.Errorf("RefundedAmount of a missing charge = %d, want 0", got)
	}
	refund := func(of *payment.Charge, i int, amount int64, status payment.OperationStatus) *payment.Refund {
		r := newRefund(of, i)
		r.Amount, r.Status = amount, status
		return r
	}
	// Amounts at the top of what a charge can be (JPY's maximum is
	// 9,999,999,999): their sum exceeds 32 bits many times over.
	pending := refund(ch, 1, 9_999_999_999, payment.OperationPending)
	successful := refund(ch, 2, 9_999_999_998, payment.OperationSuccessful)
	createRefunds(t, s,
		pending, successful,
		refund(ch, 3, 1_000_000_007, payment.OperationFailed),
		refund(ch, 4, 1_000_000_009, payment.OperationError),
		refund(ch, 5, 1, payment.OperationPending),
		refund(sibling, 6, 500, payment.OperationSuccessful),
		refund(foreign, 7, 700, payment.OperationPending),
	)
	if got, want := refunded(t, ch.ID), int64(9_999_999_999+9_999_999_998+1); got != want {
		t.Errorf("RefundedAmount = %d, want %d", got, want)
	}
	if got := refunded(t, sibling.ID); got != 500 {
		t.Errorf("RefundedAmount of the sibling = %d, want 500", got)
	}
	if got := refunded(t, foreign.ID); got != 700 {
		t.Errorf("RefundedAmount of another merchant's charge = %d, want 700", got)
	}
	t.Run("FollowsStatus", func(t *testing.T) {
		failed := *pending
		failed.Status, failed.UpdatedOn = payment.OperationFailed, at(50)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateRefund(ctx, &failed) })
		if got, want := refunded(t, ch.ID), int64(9_999_999_998+1); got != want {
			t.Errorf("after a refund failed, RefundedAmount = %d, want %d", got, want)
		}
	})
	t.Run("SeesItsOwnTransaction", func(t *testing.T) {
		// The refund rule reads the sum and records the refund in one
		// transaction.
		more := refund(ch, 8, 3, payment.OperationPending)
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			if err := tx.CreateRefund(ctx, more); err != nil {
				return err
			}
			got, err := tx.RefundedAmount(ctx, ch.ID)
			if want := int64(9_999_999_998 + 1 + 3); err == nil && got != want {
				t.Errorf("inside the transaction, RefundedAmount = %d, want %d", got, want)
			}
			return err
		})
	})
}

// testPendingCancelFor checks the question the cancel rule asks: is a
// cancel of this charge under way (pending)?
func testPendingCancelFor(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 3, w.st)[0]
	ch, sibling, untouched := chs[0], chs[1], chs[2]
	pendingFor := func(t *testing.T, id uuid.UUID) bool {
		t.Helper()
		var open bool
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			open, err = tx.PendingCancelFor(ctx, id)
			return err
		})
		return open
	}
	cancel := func(of *payment.Charge, i int, status payment.OperationStatus) *payment.Cancel {
		c := newCancel(of, i)
		c.Status = status
		return c
	}
	if pendingFor(t, ch.ID) {
		t.Error("PendingCancelFor a charge without cancels = true")
	}
	createCancels(t, s, cancel(ch, 1, payment.OperationFailed), cancel(ch, 2, payment.OperationError))
	if pendingFor(t, ch.ID) {
		t.Error("PendingCancelFor with only failed and error cancels = true")
	}
	open := cancel(ch, 3, payment.OperationPending)
	createCancels(t, s, open, cancel(sibling, 4, payment.OperationSuccessful))
	if !pendingFor(t, ch.ID) {
		t.Error("PendingCancelFor with a pending cancel = false")
	}
	if pendingFor(t, sibling.ID) || pendingFor(t, untouched.ID) || pendingFor(t, payment.NewID()) {
		t.Error("another charge's pending cancel counts")
	}
	for _, st := range []payment.OperationStatus{payment.OperationSuccessful, payment.OperationFailed, payment.OperationError} {
		done := *open
		done.Status, done.UpdatedOn = st, at(60)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCancel(ctx, &done) })
		if pendingFor(t, ch.ID) {
			t.Errorf("PendingCancelFor after the cancel turned %s = true", st)
		}
	}
	back := *open
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCancel(ctx, &back) })
	if !pendingFor(t, ch.ID) {
		t.Error("PendingCancelFor after the cancel turned pending again = false")
	}
}

// testPendingRefundFor checks what a long poll of a charge asks: is a
// refund of this charge still waiting for the worker (pending)?
func testPendingRefundFor(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 3, w.st)[0]
	ch, sibling, untouched := chs[0], chs[1], chs[2]
	pendingFor := func(t *testing.T, id uuid.UUID) bool {
		t.Helper()
		var open bool
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			open, err = tx.PendingRefundFor(ctx, id)
			return err
		})
		return open
	}
	refund := func(of *payment.Charge, i int, status payment.OperationStatus) *payment.Refund {
		r := newRefund(of, i)
		r.Status = status
		return r
	}
	if pendingFor(t, ch.ID) {
		t.Error("PendingRefundFor a charge without refunds = true")
	}
	createRefunds(t, s, refund(ch, 1, payment.OperationSuccessful), refund(ch, 2, payment.OperationFailed), refund(ch, 3, payment.OperationError))
	if pendingFor(t, ch.ID) {
		t.Error("PendingRefundFor with only finished refunds = true")
	}
	open := refund(ch, 4, payment.OperationPending)
	createRefunds(t, s, open, refund(sibling, 5, payment.OperationSuccessful))
	if !pendingFor(t, ch.ID) {
		t.Error("PendingRefundFor with a pending refund = false")
	}
	if pendingFor(t, sibling.ID) || pendingFor(t, untouched.ID) || pendingFor(t, payment.NewID()) {
		t.Error("another charge's pending refund counts")
	}
	for _, st := range []payment.OperationStatus{payment.OperationSuccessful, payment.OperationFailed, payment.OperationError} {
		done := *open
		done.Status, done.UpdatedOn = st, at(60)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateRefund(ctx, &done) })
		if pendingFor(t, ch.ID) {
			t.Errorf("PendingRefundFor after the refund turned %s = true", st)
		}
	}
}
