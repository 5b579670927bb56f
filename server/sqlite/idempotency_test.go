package sqlite_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite/sqlitetest"
	"github.com/kessai/kessai/server/storagetest"
)

var idemEpoch = time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)

func openIdempotency(t *testing.T) (payment.IdempotencyStore, *kessaitest.Clock) {
	t.Helper()
	db := open(t, sqlitetest.Path(t))
	return db, kessaitest.NewClock(idemEpoch)
}

// The store's own rules are the storage suite's (storagetest.RunIdempotency).
func TestIdempotencyStore(t *testing.T) {
	storagetest.RunIdempotency(t, func(t *testing.T) storagetest.IdempotencyEngine {
		return open(t, sqlitetest.Path(t))
	})
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
	if made, err := first.Release(ctx); err != nil || made != nil {
		t.Fatalf("Release by the abandoned holder = %+v, %v", made, err)
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
	if made, err := res.Release(t.Context()); err != nil || made != nil {
		t.Fatalf("Release = %+v, %v", made, err)
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

// An abandoned reservation's takeover carries what the abandoned run made
// (Effect), and only what it committed under its lock; the retry is not
// to run again. A key that expired is free again, its effect forgotten.
func TestIdempotencyTakeOverFindsEffect(t *testing.T) {
	db := open(t, sqlitetest.Path(t))
	clock := kessaitest.NewClock(idemEpoch)
	idem := payment.NewIdempotency(db, clock, payment.IdempotencyConfig{LockTimeout: time.Minute})
	ctx := t.Context()
	made := payment.IdempotentEffect{Kind: payment.EffectCharge, StoreID: payment.NewID(), ID: payment.NewID()}
	record := func(t *testing.T, res *payment.IdempotencyReservation) bool {
		t.Helper()
		var held bool
		if err := db.Update(ctx, func(tx payment.Tx) error {
			var err error
			held, err = tx.RecordIdempotentEffect(ctx, *res.Ref(), made)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return held
	}

	t.Run("made", func(t *testing.T) {
		req := idemRequest("made", `{"amount":1000}`)
		crashed := mustBegin(t, idem, req)
		if crashed.Effect() != nil || !record(t, crashed) {
			t.Fatalf("a fresh reservation: effect %+v, or its effect did not hold", crashed.Effect())
		}
		clock.Advance(time.Minute)
		retry := mustBegin(t, idem, req)
		if got := retry.Effect(); got == nil || *got != made {
			t.Fatalf("the takeover's effect = %+v, want %+v", got, made)
		}
		if record(t, crashed) {
			t.Fatal("the abandoned reservation recorded an effect after the takeover")
		}
		// Released, a key with an effect stays taken and says what it made.
		if got, err := retry.Release(ctx); err != nil || got == nil || *got != made {
			t.Fatalf("Release = %+v, %v; want %+v", got, err, made)
		}
		wantConflict(t, idem, req)
	})
	t.Run("nothing made", func(t *testing.T) {
		req := idemRequest("nothing", `{"amount":1000}`)
		mustBegin(t, idem, req)
		clock.Advance(time.Minute)
		if got := mustBegin(t, idem, req).Effect(); got != nil {
			t.Fatalf("the takeover's effect = %+v, want none", got)
		}
	})
	t.Run("expired", func(t *testing.T) {
		req := idemRequest("expired", `{"amount":1000}`)
		if !record(t, mustBegin(t, idem, req)) {
			t.Fatal("the effect did not hold")
		}
		clock.Advance(payment.DefaultIdempotencyTTL)
		if got := mustBegin(t, idem, req).Effect(); got != nil {
			t.Fatalf("an expired key's effect = %+v, want none", got)
		}
	})
}
