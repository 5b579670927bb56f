package storagetest

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// newTransferEntry is a ledger line of chargeID with every field set.
func newTransferEntry(st *payment.Store, chargeID uuid.UUID, i int) *payment.TransferEntry {
	return &payment.TransferEntry{
		ID: payment.NewID(), ChargeID: chargeID, StoreID: st.ID, MerchantID: st.MerchantID, Mode: payment.ModeLive,
		Kind: payment.TransferDeposit, Amount: 9_007_199_254_740_993 + int64(i), Balance: 5 + int64(i),
		Deposited: 7 + int64(i), Currency: "JPY", PaymentStatus: payment.TransferExceeded,
		VirtualAccountID: "va-" + uuid.NewSHA1(chargeID, []byte{byte(i)}).String(), CreatedOn: at(i),
	}
}

// testTransferLedger checks AddTransferEntry's round trip, that
// LatestTransferEntry is a charge's last line (NOT_FOUND before its
// first), that ListTransferEntries keeps to its charge and pages by id,
// and that a rolled-back line is not kept.
func testTransferLedger(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 2, w.st)[0]
	a, b := chs[0].ID, chs[1].ID
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if e, err := tx.LatestTransferEntry(ctx, a); !payment.IsNotFound(err) {
			t.Errorf("LatestTransferEntry before any line = %+v, %v; want NOT_FOUND", e, err)
		}
		return nil
	})
	first := newTransferEntry(w.st, a, 1)
	requireNoZeroFields(t, first)
	second := newTransferEntry(w.st, a, 2)
	second.Kind, second.PaymentStatus = payment.TransferPayment, payment.TransferExact
	other := newTransferEntry(w.st, b, 3)
	add := func(es ...*payment.TransferEntry) {
		t.Helper()
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			for _, e := range es {
				if err := tx.AddTransferEntry(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	add(first, other, second)
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.LatestTransferEntry(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, got, second)
		asc, err := tx.ListTransferEntries(ctx, a, payment.ListParams{Limit: 1, Direction: payment.Asc})
		if err != nil {
			t.Fatal(err)
		}
		if len(asc.Items) != 1 || !asc.HasMore || asc.TotalHits == nil || *asc.TotalHits != 2 {
			t.Fatalf("the first page: %d lines, more %v, total %v", len(asc.Items), asc.HasMore, asc.TotalHits)
		}
		checkSame(t, asc.Items[0], first)
		next, err := tx.ListTransferEntries(ctx, a, payment.ListParams{Limit: 5, Direction: payment.Asc, Cursor: first.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(next.Items) != 1 || next.HasMore {
			t.Fatalf("the page after the first: %d lines, more %v", len(next.Items), next.HasMore)
		}
		checkSame(t, next.Items[0], second)
		desc, err := tx.ListTransferEntries(ctx, b, payment.ListParams{Limit: 5, Direction: payment.Desc})
		if err != nil {
			t.Fatal(err)
		}
		if len(desc.Items) != 1 {
			t.Fatalf("the other charge's ledger holds %d lines, want its 1", len(desc.Items))
		}
		checkSame(t, desc.Items[0], other)
		return nil
	})
	rolledBack := newTransferEntry(w.st, a, 4)
	err := s.Update(context.Background(), func(tx payment.Tx) error {
		if err := tx.AddTransferEntry(context.Background(), rolledBack); err != nil {
			return err
		}
		return errRollback
	})
	if err != errRollback {
		t.Fatalf("the rolled-back update: %v", err)
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.LatestTransferEntry(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, got, second)
		return nil
	})
}
