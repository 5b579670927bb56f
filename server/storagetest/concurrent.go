package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// testConcurrentUpdates: Updates running at the same time each behave as a
// transaction of their own, whether or not the engine groups them into one
// COMMIT (payment.Storage): one that fails or panics after writing leaves
// nothing and takes no other down, every one that succeeded is all there,
// none sees another's writes appear in the middle of it, a read-modify-write
// (a quota) counts every success once, and an Update whose context is done
// does not run.
func testConcurrentUpdates(t *testing.T, s payment.Storage) {
	const n = 48
	key := payment.QuotaKey{Resource: "concurrent", Scope: "suite"}
	errBoom := errors.New("boom")
	merchants := make([]*payment.Merchant, n)
	stores := make([]*payment.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		merchants[i] = newMerchant(i)
		stores[i] = newStore(merchants[i].ID, i)
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("panic: %v", r)
				}
			}()
			ctx := t.Context()
			errs[i] = s.Update(ctx, func(tx payment.Tx) error {
				before, err := tx.CountMerchants(ctx)
				if err != nil {
					return err
				}
				if err := tx.CreateMerchant(ctx, merchants[i]); err != nil {
					return err
				}
				if err := tx.CreateStore(ctx, stores[i]); err != nil {
					return err
				}
				if ok, err := tx.TakeQuota(ctx, key, n); err != nil || !ok {
					return fmt.Errorf("quota: %v %v", ok, err)
				}
				after, err := tx.CountMerchants(ctx)
				if err != nil {
					return err
				}
				if after != before+1 {
					return fmt.Errorf("merchants went from %d to %d inside one Update", before, after)
				}
				switch i % 4 {
				case 0:
					return errBoom
				case 1:
					panic("fn panics")
				}
				return nil
			})
		})
	}
	wg.Wait()
	succeeded := 0
	for i, err := range errs {
		switch i % 4 {
		case 0:
			if !errors.Is(err, errBoom) {
				t.Errorf("Update %d: %v, want its own error", i, err)
			}
		case 1:
			if err == nil || err.Error() != "panic: fn panics" {
				t.Errorf("Update %d: %v, want its panic", i, err)
			}
		default:
			if err != nil {
				t.Errorf("Update %d: %v", i, err)
			}
			succeeded++
		}
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		for i := range n {
			_, merr := tx.Merchant(ctx, merchants[i].ID)
			_, serr := tx.Store(ctx, stores[i].ID)
			if i%4 < 2 {
				if !payment.IsNotFound(merr) || !payment.IsNotFound(serr) {
					t.Errorf("failed Update %d left its writes: merchant %v, store %v", i, merr, serr)
				}
			} else if merr != nil || serr != nil {
				t.Errorf("Update %d: merchant %v, store %v", i, merr, serr)
			}
		}
		count, err := tx.CountMerchants(ctx)
		if err != nil {
			return err
		}
		if count != succeeded {
			t.Errorf("%d merchants, want %d", count, succeeded)
		}
		return nil
	})
	// The quota counted each success once: exactly n-succeeded units left.
	for range n - succeeded {
		if !take(t, s, key, n) {
			t.Fatal("the quota counted a failed Update")
		}
	}
	if take(t, s, key, n) {
		t.Error("the quota lost a successful Update's unit")
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	if err := s.Update(ctx, func(tx payment.Tx) error { ran = true; return nil }); err == nil || ran {
		t.Errorf("Update with a done context: %v (fn ran: %v), want an error without running", err, ran)
	}
}
