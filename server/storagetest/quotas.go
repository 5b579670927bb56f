package storagetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

func take(t *testing.T, s payment.Storage, k payment.QuotaKey, limit int) bool {
	t.Helper()
	var ok bool
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		ok, err = tx.TakeQuota(ctx, k, limit)
		return err
	})
	return ok
}

func release(t *testing.T, s payment.Storage, k payment.QuotaKey) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.ReleaseQuota(ctx, k) })
}

// takeAll takes until the quota refuses and returns how many it took.
func takeAll(t *testing.T, s payment.Storage, k payment.QuotaKey, limit int) int {
	t.Helper()
	n := 0
	for take(t, s, k, limit) {
		n++
		if n > limit+1 {
			t.Fatalf("quota %v took %d units with limit %d", k, n, limit)
		}
	}
	return n
}

func testQuota(t *testing.T, s payment.Storage) {
	key := payment.QuotaKey{Resource: "app_token", Scope: "store:1", Period: ""}
	t.Run("LimitRespected", func(t *testing.T) {
		for i := range 3 {
			if !take(t, s, key, 3) {
				t.Fatalf("take %d of 3 refused", i+1)
			}
		}
		for range 2 {
			if take(t, s, key, 3) {
				t.Fatal("took a 4th unit with limit 3")
			}
		}
	})
	t.Run("ReleaseFreesOnePlace", func(t *testing.T) {
		release(t, s, key)
		// The refused takes above counted nothing: exactly one place.
		if got := takeAll(t, s, key, 3); got != 1 {
			t.Errorf("after one release, %d units could be taken, want 1", got)
		}
	})
	t.Run("HigherLimit", func(t *testing.T) {
		// The limit is the caller's: configuration may raise it.
		if got := takeAll(t, s, key, 5); got != 2 {
			t.Errorf("with limit 5 after 3 used, took %d, want 2", got)
		}
	})
	t.Run("Independent", func(t *testing.T) {
		for _, k := range []payment.QuotaKey{
			{Resource: key.Resource, Scope: key.Scope, Period: "2025-01-31"},
			{Resource: key.Resource, Scope: key.Scope, Period: "2025-02-01"},
			{Resource: key.Resource, Scope: "store:2", Period: key.Period},
			{Resource: "test_charge", Scope: key.Scope, Period: key.Period},
		} {
			if got := takeAll(t, s, k, 2); got != 2 {
				t.Errorf("quota %+v: took %d, want 2", k, got)
			}
		}
		// ... and taking them did not touch the first key.
		if take(t, s, key, 5) {
			t.Error("first key gained a place")
		}
	})
	t.Run("ReleaseUnusedDoesNotGoNegative", func(t *testing.T) {
		k := payment.QuotaKey{Resource: "webhook", Scope: "store:3"}
		release(t, s, k)
		release(t, s, k)
		if got := takeAll(t, s, k, 2); got != 2 {
			t.Errorf("after releasing an unused quota, took %d with limit 2, want 2", got)
		}
		release(t, s, k)
		release(t, s, k)
		release(t, s, k)
		if got := takeAll(t, s, k, 2); got != 2 {
			t.Errorf("after releasing more than taken, took %d with limit 2, want 2", got)
		}
	})
	t.Run("LimitZero", func(t *testing.T) {
		if take(t, s, payment.QuotaKey{Resource: "none", Scope: "store:4"}, 0) {
			t.Error("took a unit with limit 0")
		}
	})
	t.Run("SeveralInOneTransaction", func(t *testing.T) {
		k := payment.QuotaKey{Resource: "app_token", Scope: "store:5"}
		var got []bool
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			for range 4 {
				ok, err := tx.TakeQuota(ctx, k, 3)
				if err != nil {
					return err
				}
				got = append(got, ok)
			}
			return nil
		})
		if want := []bool{true, true, true, false}; !slices.Equal(got, want) {
			t.Errorf("takes in one transaction = %v, want %v", got, want)
		}
	})
}

func testQuotaConcurrent(t *testing.T, s payment.Storage) {
	t.Run("LastUnit", func(t *testing.T) {
		const limit, workers = 20, 50
		key := payment.QuotaKey{Resource: "app_token", Scope: "store:concurrent"}
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			for range limit - 1 {
				if ok, err := tx.TakeQuota(ctx, key, limit); err != nil || !ok {
					return fmt.Errorf("setting up: ok=%v err=%v", ok, err)
				}
			}
			return nil
		})
		if granted := concurrentTakes(t, s, key, limit, workers); granted != 1 {
			t.Errorf("%d of %d concurrent takes at %d/%d succeeded, want exactly 1", granted, workers, limit-1, limit)
		}
		if take(t, s, key, limit) {
			t.Error("a unit was left after the concurrent takes")
		}
	})
	t.Run("FromEmpty", func(t *testing.T) {
		const limit, workers = 5, 20
		key := payment.QuotaKey{Resource: "test_charge", Scope: "store:concurrent", Period: "2025-01-31"}
		if granted := concurrentTakes(t, s, key, limit, workers); granted != limit {
			t.Errorf("%d of %d concurrent takes with limit %d succeeded, want exactly %d", granted, workers, limit, limit)
		}
		if take(t, s, key, limit) {
			t.Error("a unit was left after the concurrent takes")
		}
		// Giving one back makes exactly one place.
		release(t, s, key)
		if got := takeAll(t, s, key, limit); got != 1 {
			t.Errorf("after one release, %d units could be taken, want 1", got)
		}
	})
}

// concurrentTakes lets workers goroutines take one unit of key each, in
// separate Update calls started together, and returns how many were
// granted.
func concurrentTakes(t *testing.T, s payment.Storage, key payment.QuotaKey, limit, workers int) int {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		granted int
		errs    []error
	)
	start := make(chan struct{})
	for range workers {
		wg.Go(func() {
			<-start
			var ok bool
			err := s.Update(context.Background(), func(tx payment.Tx) error {
				var err error
				ok, err = tx.TakeQuota(context.Background(), key, limit)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				granted++
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Errorf("%d of %d concurrent takes failed, first: %v", len(errs), workers, errs[0])
	}
	return granted
}
