package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

var idemEpoch = time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)

func openIdempotency(t *testing.T) (payment.IdempotencyStore, *kessaitest.Clock) {
	t.Helper()
	db := open(t, filepath.Join(t.TempDir(), sqlite.FileName))
	return db, kessaitest.NewClock(idemEpoch)
}

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

func TestIdempotencyStoreRoundTrip(t *testing.T) {
	st, _ := openIdempotency(t)
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

func TestIdempotencyStoreReplaceAndRelease(t *testing.T) {
	st, _ := openIdempotency(t)
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

func TestIdempotencyStoreReserveIsAtomic(t *testing.T) {
	st, _ := openIdempotency(t)
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

func TestIdempotencyStoreDeleteExpired(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), sqlite.FileName))
	st := db
	ctx := t.Context()
	// More than one sweep batch expires (inserted in one statement, which
	// is much faster than one commit each); a few do not.
	const expired, live = 2100, 5
	if err := db.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
		INSERT INTO idempotency_keys (scope, idem_key, fingerprint, lock_id, state, created_on, locked_on, expires_on)
		SELECT 's', 'k' || i, x'00', 'l', 'in_flight', ?, ?, ? FROM n`,
		expired, idemEpoch.UnixMicro(), idemEpoch.UnixMicro(), idemEpoch.Add(24*time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
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

// The rules of payment.Idempotency, on the real store.

func idemRequest(key, body string) payment.IdempotentRequest {
	return payment.IdempotentRequest{Scope: "merchant:m/store:s/mode:test", Key: key, Method: "POST",
		Target: "/charges", WithSecret: true, Body: []byte(body)}
}

func mustBegin(t *testing.T, idem *payment.Idempotency, r payment.IdempotentRequest) *payment.IdempotencyReservation {
	t.Helper()
	res, replay, err := idem.Begin(t.Context(), r)
	if err != nil || res == nil || replay != nil {
		t.Fatalf("Begin(%s) = %v, %v, %v; want a reservation", r.Key, res, replay, err)
	}
	return res
}

func wantConflict(t *testing.T, idem *payment.Idempotency, r payment.IdempotentRequest) {
	t.Helper()
	res, replay, err := idem.Begin(t.Context(), r)
	if payment.ErrorCode(err) != payment.CodeIdempotencyConflict || res != nil || replay != nil {
		t.Fatalf("Begin(%s) = %v, %v, %v; want IDEMPOTENCY_KEY_CONFLICT", r.Key, res, replay, err)
	}
}

func TestIdempotencyRules(t *testing.T) {
	st, clock := openIdempotency(t)
	idem := payment.NewIdempotency(st, clock, payment.IdempotencyConfig{LockTimeout: time.Minute, FingerprintKey: []byte("k")})
	ctx := t.Context()
	req := idemRequest("5f1a2b3c4d5e6.12345678", `{"amount":1000}`)

	first := mustBegin(t, idem, req)
	wantConflict(t, idem, req) // in flight
	clock.Advance(59 * time.Second)
	wantConflict(t, idem, req) // still within the lock timeout

	// Abandoned: another fingerprint still conflicts, the same one takes over.
	clock.Advance(time.Second)
	wantConflict(t, idem, idemRequest(req.Key, `{"amount":2000}`))
	second := mustBegin(t, idem, req)
	if err := first.Complete(ctx, &payment.IdempotentResponse{Status: 201}); !errors.Is(err, payment.ErrIdempotencyLockLost) {
		t.Fatalf("Complete by the abandoned holder = %v; want ErrIdempotencyLockLost", err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wantConflict(t, idem, req) // the abandoned holder's Release freed nothing

	resp := &payment.IdempotentResponse{Status: 201, Body: []byte(`{"id":"c1"}`),
		Header: map[string]string{"Content-Type": "application/json"}}
	if err := second.Complete(ctx, resp); err != nil {
		t.Fatal(err)
	}

	// Completed: the same request replays, any other conflicts.
	clock.Advance(23 * time.Hour)
	res, replay, err := idem.Begin(ctx, req)
	if err != nil || res != nil || !reflect.DeepEqual(replay, resp) {
		t.Fatalf("Begin after Complete = %v, %+v, %v; want the stored answer", res, replay, err)
	}
	for name, other := range map[string]payment.IdempotentRequest{
		"body":   idemRequest(req.Key, `{"amount":1001}`),
		"method": func() payment.IdempotentRequest { r := req; r.Method = "PATCH"; return r }(),
		"target": func() payment.IdempotentRequest { r := req; r.Target = "/charges?x=1"; return r }(),
		"secret": func() payment.IdempotentRequest { r := req; r.WithSecret = false; return r }(),
	} {
		t.Run(name, func(t *testing.T) { wantConflict(t, idem, other) })
	}

	// Another scope never sees the key.
	other := req
	other.Scope = "merchant:m/store:s2/mode:test"
	mustBegin(t, idem, other)

	// 24 h after completion the key is free again, even unswept.
	clock.Advance(time.Hour)
	mustBegin(t, idem, idemRequest(req.Key, `{"amount":3000}`))
}

func TestIdempotencyReleaseFreesKey(t *testing.T) {
	st, clock := openIdempotency(t)
	idem := payment.NewIdempotency(st, clock, payment.IdempotencyConfig{})
	req := idemRequest("k", "")
	res := mustBegin(t, idem, req)
	if err := res.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustBegin(t, idem, req)
}

func TestIdempotencyKeyValidation(t *testing.T) {
	st, clock := openIdempotency(t)
	idem := payment.NewIdempotency(st, clock, payment.IdempotencyConfig{})
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"php uniqid", "5f1a2b3c4d5e6.12345678", true},
		{"uuid", "0b6f9c2e-8a0b-4b1e-9a43-3c5f7e2d1a90", true},
		{"255 characters", strings.Repeat("a", 255), true},
		{"255 multibyte characters", strings.Repeat("鍵", 255), true},
		{"256 characters", strings.Repeat("a", 256), false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := idem.Begin(t.Context(), idemRequest(tt.key, "{}"))
			if tt.ok && err != nil {
				t.Fatalf("Begin: %v", err)
			}
			if !tt.ok {
				var pe *payment.Error
				if !errors.As(err, &pe) || pe.Code != payment.CodeValidation || len(pe.Fields) != 1 || pe.Fields[0].Field != "idempotency_key" {
					t.Fatalf("Begin = %v; want VALIDATION_ERROR on idempotency_key", err)
				}
			}
		})
	}
}

func TestIdempotencySweep(t *testing.T) {
	st, clock := openIdempotency(t)
	idem := payment.NewIdempotency(st, clock, payment.IdempotencyConfig{})
	ctx := t.Context()
	done := mustBegin(t, idem, idemRequest("done", ""))
	if err := done.Complete(ctx, &payment.IdempotentResponse{Status: 200, Body: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	mustBegin(t, idem, idemRequest("abandoned", ""))
	clock.Advance(time.Hour)
	if n, err := idem.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("Sweep after 1 h = %d, %v; want 0", n, err)
	}
	clock.Advance(23 * time.Hour)
	if n, err := idem.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("Sweep after 24 h = %d, %v; want 2", n, err)
	}
	_, replay, err := idem.Begin(ctx, idemRequest("done", ""))
	if err != nil || replay != nil {
		t.Fatalf("Begin after Sweep = %v, %v; want a fresh reservation", replay, err)
	}
}
