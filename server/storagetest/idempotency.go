package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// RunIdempotency runs the conformance suite of payment.IdempotencyStore:
// what a record holds comes back as stored (the answer's bytes, headers
// and an empty body included), a key is per scope, Complete, Replace and
// Release act only while their lock holds, of concurrent reservations of
// one key exactly one reserves, and DeleteExpired deletes exactly the
// expired records, however many batches that takes. open must return a new,
// empty store each time it is called and arrange (with t.Cleanup) for it to
// be closed. The areas run in parallel, each on a store of its own.
func RunIdempotency(t *testing.T, open func(t *testing.T) payment.IdempotencyStore) {
	areas := []struct {
		name string
		test func(*testing.T, payment.IdempotencyStore)
	}{
		{"RoundTrip", testIdempotencyRoundTrip},
		{"ReplaceAndRelease", testIdempotencyReplaceAndRelease},
		{"ReserveIsAtomic", testIdempotencyReserveIsAtomic},
		{"DeleteExpired", testIdempotencyDeleteExpired},
	}
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			a.test(t, open(t))
		})
	}
}

// idemEpoch is a time in UTC to the microsecond: records must come back
// equal to what was stored.
var idemEpoch = time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)

func idemRecord(scope, key, lock string, at time.Time) *payment.IdempotencyRecord {
	return &payment.IdempotencyRecord{
		Scope: scope, Key: key, Fingerprint: []byte("fp-" + key), Lock: lock,
		State: payment.IdempotencyInFlight, CreatedOn: at, LockedOn: at, ExpiresOn: at.Add(24 * time.Hour),
	}
}

func mustReserve(t *testing.T, st payment.IdempotencyStore, rec *payment.IdempotencyRecord) (*payment.IdempotencyRecord, bool) {
	t.Helper()
	existing, reserved, err := st.Reserve(t.Context(), rec)
	if err != nil {
		t.Fatalf("Reserve(%s, %s): %v", rec.Scope, rec.Key, err)
	}
	if reserved != (existing == nil) {
		t.Fatalf("Reserve: reserved=%v but existing=%v", reserved, existing)
	}
	return existing, reserved
}

func testIdempotencyRoundTrip(t *testing.T, st payment.IdempotencyStore) {
	ctx := t.Context()
	rec := idemRecord("store:a", "5f1a2b3c4d5e6.12345678", "lock-1", idemEpoch)
	if _, reserved := mustReserve(t, st, rec); !reserved {
		t.Fatal("first Reserve did not reserve")
	}

	// The same key in another scope is another key.
	if _, reserved := mustReserve(t, st, idemRecord("store:b", rec.Key, "lock-b", idemEpoch)); !reserved {
		t.Fatal("same key in another scope was not reserved")
	}

	existing, reserved := mustReserve(t, st, idemRecord("store:a", rec.Key, "lock-2", idemEpoch.Add(time.Second)))
	if reserved {
		t.Fatal("second Reserve reserved an existing key")
	}
	if !reflect.DeepEqual(existing, rec) {
		t.Fatalf("existing = %+v, want %+v", existing, rec)
	}

	// Complete only with the lock held.
	body := []byte("{\"id\":1}\n\x00\xff binary")
	resp := &payment.IdempotentResponse{Status: 201, Body: body,
		Header: map[string]string{"Content-Type": "application/json; charset=utf-8", "Location": "/x/1"}}
	expires := idemEpoch.Add(25 * time.Hour)
	if ok, err := st.Complete(ctx, rec.Scope, rec.Key, "other-lock", resp, expires); err != nil || ok {
		t.Fatalf("Complete with a foreign lock = %v, %v; want false", ok, err)
	}
	if ok, err := st.Complete(ctx, rec.Scope, rec.Key, rec.Lock, resp, expires); err != nil || !ok {
		t.Fatalf("Complete = %v, %v; want true", ok, err)
	}
	if ok, err := st.Complete(ctx, rec.Scope, rec.Key, rec.Lock, resp, expires); err != nil || ok {
		t.Fatalf("second Complete = %v, %v; want false (no longer in flight)", ok, err)
	}
	existing, _ = mustReserve(t, st, idemRecord("store:a", rec.Key, "lock-3", idemEpoch))
	if existing.State != payment.IdempotencyCompleted || !existing.ExpiresOn.Equal(expires) {
		t.Fatalf("completed record: state %s, expires %v", existing.State, existing.ExpiresOn)
	}
	if !reflect.DeepEqual(existing.Response, resp) {
		t.Fatalf("stored response = %+v, want %+v", existing.Response, resp)
	}

	// An empty answer (204) comes back empty, not missing.
	empty := idemRecord("store:a", "empty", "lock-e", idemEpoch)
	mustReserve(t, st, empty)
	if ok, err := st.Complete(ctx, empty.Scope, empty.Key, empty.Lock, &payment.IdempotentResponse{Status: 204}, expires); err != nil || !ok {
		t.Fatalf("Complete(204) = %v, %v", ok, err)
	}
	existing, _ = mustReserve(t, st, idemRecord("store:a", "empty", "lock-e2", idemEpoch))
	if existing.Response == nil || existing.Response.Status != 204 || len(existing.Response.Body) != 0 || existing.Response.Header != nil {
		t.Fatalf("empty response = %+v", existing.Response)
	}
}

func testIdempotencyReplaceAndRelease(t *testing.T, st payment.IdempotencyStore) {
	ctx := t.Context()
	rec := idemRecord("s", "k", "lock-1", idemEpoch)
	mustReserve(t, st, rec)

	next := idemRecord("s", "k", "lock-2", idemEpoch.Add(time.Minute))
	next.Fingerprint = []byte("other")
	if ok, err := st.Replace(ctx, "wrong", next); err != nil || ok {
		t.Fatalf("Replace with a stale lock = %v, %v; want false", ok, err)
	}
	if ok, err := st.Replace(ctx, "lock-1", next); err != nil || !ok {
		t.Fatalf("Replace = %v, %v; want true", ok, err)
	}
	existing, _ := mustReserve(t, st, idemRecord("s", "k", "lock-3", idemEpoch))
	if !reflect.DeepEqual(existing, next) {
		t.Fatalf("after Replace: %+v, want %+v", existing, next)
	}

	// The superseded holder can neither complete nor release.
	if ok, err := st.Complete(ctx, "s", "k", "lock-1", &payment.IdempotentResponse{Status: 200}, idemEpoch); err != nil || ok {
		t.Fatalf("Complete by the superseded holder = %v, %v", ok, err)
	}
	if err := st.Release(ctx, "s", "k", "lock-1"); err != nil {
		t.Fatal(err)
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", "k", "lock-4", idemEpoch)); reserved {
		t.Fatal("Release by the superseded holder deleted the record")
	}
	if err := st.Release(ctx, "s", "k", "lock-2"); err != nil {
		t.Fatal(err)
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", "k", "lock-5", idemEpoch)); !reserved {
		t.Fatal("key not free after Release")
	}
}

func testIdempotencyReserveIsAtomic(t *testing.T, st payment.IdempotencyStore) {
	const n = 50
	var wg sync.WaitGroup
	results := make(chan bool, n)
	for i := range n {
		wg.Go(func() {
			_, reserved, err := st.Reserve(context.Background(), idemRecord("s", "k", fmt.Sprint("lock-", i), idemEpoch))
			if err != nil {
				t.Error(err)
			}
			results <- reserved
		})
	}
	wg.Wait()
	close(results)
	won := 0
	for r := range results {
		if r {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent Reserves reserved; want exactly 1", won, n)
	}
}

func testIdempotencyDeleteExpired(t *testing.T, st payment.IdempotencyStore) {
	ctx := t.Context()
	// More than two sweep batches (an engine's batch is up to 1000 rows)
	// expire, reserved by concurrent writers (which an engine may commit
	// together); a few do not.
	const expired, live, writers = 2100, 5, 32
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < expired; i += writers {
				if _, reserved, err := st.Reserve(ctx, idemRecord("s", fmt.Sprint("k", i), "l", idemEpoch)); err != nil || !reserved {
					t.Errorf("Reserve k%d = %v, %v", i, reserved, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i := expired; i < expired+live; i++ {
		rec := idemRecord("s", fmt.Sprint("k", i), "l", idemEpoch)
		rec.ExpiresOn = idemEpoch.Add(48 * time.Hour)
		mustReserve(t, st, rec)
	}
	n, err := st.DeleteExpired(ctx, idemEpoch.Add(24*time.Hour))
	if err != nil || n != expired {
		t.Fatalf("DeleteExpired = %d, %v; want %d", n, err, expired)
	}
	if n, err := st.DeleteExpired(ctx, idemEpoch.Add(24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second DeleteExpired = %d, %v; want 0", n, err)
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", "k0", "new", idemEpoch)); !reserved {
		t.Fatal("expired key still present")
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", fmt.Sprint("k", expired), "new", idemEpoch)); reserved {
		t.Fatal("live key was deleted")
	}
}
