package storagetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// IdempotencyEngine is a storage engine with its idempotency keys: the
// domain's transactions write the keys' effects (Tx.RecordIdempotentEffect)
// on the table the key store reserves and takes over.
type IdempotencyEngine interface {
	payment.Storage
	payment.IdempotencyStore
}

// RunIdempotency runs the conformance suite of payment.IdempotencyStore:
// what a record holds comes back as stored (the answer's bytes, headers
// and an empty body included), a key is per scope, Complete, Replace and
// Release act only while their lock holds, of concurrent reservations of
// one key exactly one reserves, and DeleteExpired deletes exactly the
// expired records, however many batches that takes. And the effects: a
// transaction records one only while its reservation holds the key in
// flight, and with the transaction (a rollback records nothing); TakeOver
// moves only an in-flight reservation's lock, keeps its effect and returns
// it; Replace clears it; Release keeps a record with an effect and returns
// the effect; and a takeover racing the transactions of the old holder
// returns exactly the effects those committed. open must return a new,
// empty engine each time it is called and arrange (with t.Cleanup) for it
// to be closed. The areas run in parallel, each on an engine of its own.
func RunIdempotency(t *testing.T, open func(t *testing.T) IdempotencyEngine) {
	areas := []struct {
		name string
		test func(*testing.T, IdempotencyEngine)
	}{
		{"RoundTrip", func(t *testing.T, st IdempotencyEngine) { testIdempotencyRoundTrip(t, st) }},
		{"ReplaceAndRelease", func(t *testing.T, st IdempotencyEngine) { testIdempotencyReplaceAndRelease(t, st) }},
		{"ReserveIsAtomic", func(t *testing.T, st IdempotencyEngine) { testIdempotencyReserveIsAtomic(t, st) }},
		{"DeleteExpired", func(t *testing.T, st IdempotencyEngine) { testIdempotencyDeleteExpired(t, st) }},
		{"Effects", testIdempotentEffects},
		{"TakeOverRacesEffects", testTakeOverRacesEffects},
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
	if eff, err := st.Release(ctx, "s", "k", "lock-1"); err != nil || eff != nil {
		t.Fatalf("Release by the superseded holder = %+v, %v", eff, err)
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", "k", "lock-4", idemEpoch)); reserved {
		t.Fatal("Release by the superseded holder deleted the record")
	}
	if eff, err := st.Release(ctx, "s", "k", "lock-2"); err != nil || eff != nil {
		t.Fatalf("Release = %+v, %v", eff, err)
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

// recordEffect runs RecordIdempotentEffect in an Update of its own that
// then returns fail (nil: it commits), and reports whether it held.
func recordEffect(t *testing.T, st IdempotencyEngine, lock string, eff payment.IdempotentEffect, fail error) bool {
	t.Helper()
	var held bool
	err := st.Update(t.Context(), func(tx payment.Tx) error {
		var err error
		held, err = tx.RecordIdempotentEffect(t.Context(), payment.IdempotencyRef{Scope: "s", Key: "k", Lock: lock}, eff)
		if err != nil {
			return err
		}
		return fail
	})
	if err != fail {
		t.Fatalf("Update recording an effect under %s = %v, want %v", lock, err, fail)
	}
	return held
}

func mustTakeOver(t *testing.T, st IdempotencyEngine, from, to string, want *payment.IdempotentEffect) {
	t.Helper()
	rec := idemRecord("s", "k", to, idemEpoch.Add(time.Hour))
	eff, taken, err := st.TakeOver(t.Context(), from, rec)
	if err != nil || !taken {
		t.Fatalf("TakeOver %s → %s = %v, %v; want taken", from, to, taken, err)
	}
	if !reflect.DeepEqual(eff, want) {
		t.Fatalf("TakeOver %s → %s found effect %+v, want %+v", from, to, eff, want)
	}
}

func testIdempotentEffects(t *testing.T, st IdempotencyEngine) {
	ctx := t.Context()
	refund := payment.IdempotentEffect{Kind: payment.EffectRefund, StoreID: payment.NewID(), ChargeID: payment.NewID(), ID: payment.NewID()}
	charge := payment.IdempotentEffect{Kind: payment.EffectCharge, StoreID: payment.NewID(), ID: payment.NewID()}
	rec := idemRecord("s", "k", "lock-1", idemEpoch)
	mustReserve(t, st, rec)

	// Only with the transaction, and only under the reservation's lock.
	if !recordEffect(t, st, "lock-1", charge, errors.New("rolled back")) {
		t.Fatal("the holder's RecordIdempotentEffect did not hold")
	}
	if recordEffect(t, st, "lock-x", charge, nil) {
		t.Fatal("RecordIdempotentEffect held under a foreign lock")
	}
	mustTakeOver(t, st, "lock-1", "lock-2", nil)

	// Once the lock moved, the old holder records nothing.
	if recordEffect(t, st, "lock-1", charge, nil) {
		t.Fatal("the superseded holder recorded an effect")
	}
	if !recordEffect(t, st, "lock-2", refund, nil) {
		t.Fatal("the holder's RecordIdempotentEffect did not hold")
	}
	// A stale lock takes nothing over; the effect comes back whole and
	// survives the move.
	if eff, taken, err := st.TakeOver(ctx, "lock-1", idemRecord("s", "k", "lock-y", idemEpoch)); err != nil || taken || eff != nil {
		t.Fatalf("TakeOver with a stale lock = %+v, %v, %v", eff, taken, err)
	}
	mustTakeOver(t, st, "lock-2", "lock-3", &refund)
	existing, _ := mustReserve(t, st, idemRecord("s", "k", "lock-z", idemEpoch))
	want := idemRecord("s", "k", "lock-3", idemEpoch)
	want.LockedOn, want.ExpiresOn = idemEpoch.Add(time.Hour), idemEpoch.Add(25*time.Hour)
	if !reflect.DeepEqual(existing, want) {
		t.Fatalf("after TakeOver: %+v, want %+v (fingerprint and creation kept)", existing, want)
	}

	// Release keeps a record with an effect, and says what it was.
	if eff, err := st.Release(ctx, "s", "k", "lock-2"); err != nil || eff != nil {
		t.Fatalf("Release with a stale lock = %+v, %v", eff, err)
	}
	if eff, err := st.Release(ctx, "s", "k", "lock-3"); err != nil || !reflect.DeepEqual(eff, &refund) {
		t.Fatalf("Release of a record with an effect = %+v, %v; want %+v", eff, err, refund)
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", "k", "lock-z", idemEpoch)); reserved {
		t.Fatal("Release deleted a record with an effect")
	}

	// A completed record is neither taken over nor given an effect.
	if ok, err := st.Complete(ctx, "s", "k", "lock-3", &payment.IdempotentResponse{Status: 201}, idemEpoch.Add(time.Hour)); err != nil || !ok {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	if recordEffect(t, st, "lock-3", charge, nil) {
		t.Fatal("an effect was recorded on a completed record")
	}
	if eff, taken, err := st.TakeOver(ctx, "lock-3", idemRecord("s", "k", "lock-4", idemEpoch)); err != nil || taken || eff != nil {
		t.Fatalf("TakeOver of a completed record = %+v, %v, %v", eff, taken, err)
	}

	// Replace (a key reserved anew once expired) forgets the effect.
	if ok, err := st.Replace(ctx, "lock-3", idemRecord("s", "k", "lock-5", idemEpoch.Add(48*time.Hour))); err != nil || !ok {
		t.Fatalf("Replace = %v, %v", ok, err)
	}
	mustTakeOver(t, st, "lock-5", "lock-6", nil)
	if eff, err := st.Release(ctx, "s", "k", "lock-6"); err != nil || eff != nil {
		t.Fatalf("Release without an effect = %+v, %v", eff, err)
	}
	if _, reserved := mustReserve(t, st, idemRecord("s", "k", "lock-7", idemEpoch)); !reserved {
		t.Fatal("key not free after Release without an effect")
	}
}

// testTakeOverRacesEffects races, on many keys at once, the transaction of
// a reservation's holder recording its effect with a takeover of that
// reservation: whichever comes first, the takeover returns the effect
// exactly when the holder's transaction committed it. A takeover that
// missed a committed effect is a second charge; one that returned an
// effect whose transaction said it did not hold is an answer with an
// object that was never made.
func testTakeOverRacesEffects(t *testing.T, st IdempotencyEngine) {
	const keys = 40
	var wg sync.WaitGroup
	var heldFirst atomic.Int32
	for i := range keys {
		key := fmt.Sprint("race-", i)
		if _, reserved := mustReserve(t, st, idemRecord("s", key, "old", idemEpoch)); !reserved {
			t.Fatalf("Reserve %s did not reserve", key)
		}
		eff := payment.IdempotentEffect{Kind: payment.EffectCharge, StoreID: payment.NewID(), ID: payment.NewID()}
		var held bool
		var found *payment.IdempotentEffect
		var taken bool
		start := make(chan struct{})
		var pair sync.WaitGroup
		pair.Go(func() {
			<-start
			err := st.Update(context.Background(), func(tx payment.Tx) error {
				var err error
				held, err = tx.RecordIdempotentEffect(context.Background(), payment.IdempotencyRef{Scope: "s", Key: key, Lock: "old"}, eff)
				return err
			})
			if err != nil {
				t.Errorf("%s: Update: %v", key, err)
			}
		})
		pair.Go(func() {
			<-start
			var err error
			found, taken, err = st.TakeOver(context.Background(), "old", idemRecord("s", key, "new", idemEpoch.Add(time.Hour)))
			if err != nil {
				t.Errorf("%s: TakeOver: %v", key, err)
			}
		})
		wg.Go(func() {
			close(start)
			pair.Wait()
			switch {
			case !taken:
				t.Errorf("%s: the takeover did not take the reservation over", key)
			case held && !reflect.DeepEqual(found, &eff):
				t.Errorf("%s: the holder's effect committed, the takeover found %+v", key, found)
			case !held && found != nil:
				t.Errorf("%s: the holder's effect did not hold, the takeover found %+v", key, found)
			}
			if held {
				heldFirst.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("of %d races, the holder's transaction came first in %d", keys, heldFirst.Load())
}
