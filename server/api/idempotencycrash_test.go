package api_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

// Issue 25, defect 1: a retry after a crash made a second charge under
// one Idempotency-Key. The gateway stores a request's answer after the
// request's transaction, so a process that dies in between leaves the key
// in flight with the charge made; past the lock timeout the retry took the
// key over and ran again.

// lostAnswers is the idempotency keys' store of a gateway that dies after
// a request's transaction committed and before its answer was stored:
// while dead is set, Complete stores nothing, as the dead process never
// ran it.
type lostAnswers struct {
	payment.IdempotencyStore
	dead atomic.Bool
}

func (l *lostAnswers) Complete(ctx context.Context, scope, key, lock string, resp *payment.IdempotentResponse, expiresOn time.Time) (bool, error) {
	if l.dead.Load() {
		return false, errors.New("the gateway died before storing the answer")
	}
	return l.IdempotencyStore.Complete(ctx, scope, key, lock, resp, expiresOn)
}

// crashCase is a request that makes something, on a fixture of its own.
type crashCase struct {
	path string
	body any
	// made counts the objects of the kind the request makes that its
	// setup's subject has (nil: it makes none, a capture).
	made func(t *testing.T) int
	// objectPath is where GET reads the object made ("": no object, the
	// answer is empty).
	objectPath func(id string) string
}

func (f *payFixture) countList(t *testing.T, path string) int {
	t.Helper()
	return len(listIDs(t, ok(t, f.do(t, "GET", path, server(f.a1), nil), http.StatusOK)))
}

func chargeCase(f *payFixture, tok string) crashCase {
	return crashCase{
		path: "/charges", body: chargeBody(tok, 1000, "JPY"),
		made:       func(t *testing.T) int { return f.countList(t, "/charges?transaction_token_id="+tok) },
		objectPath: f.chargePath,
	}
}

// TestIdempotentRetryAfterCrash: the first request's change commits and
// its answer is lost with the process; the retry with the same key is
// refused while the reservation may still be running, then, past the lock
// timeout, answered with the object the first request made, as GET shows
// it now, and that answer is stored. Nothing is made twice: no second
// charge of a recurring token (outside the duplicate window by then), no
// TRANSACTION_ALREADY_PROCESSED for a one-time token, no second refund, no
// refused second cancel or capture, no second subscription.
func TestIdempotentRetryAfterCrash(t *testing.T) {
	const card = "4000020000000000"
	tests := []struct {
		name  string
		setup func(t *testing.T, f *payFixture) crashCase
	}{
		{"charge of a recurring token", func(t *testing.T, f *payFixture) crashCase {
			return chargeCase(f, f.token(t, card, "type", "recurring"))
		}},
		{"charge of a one-time token", func(t *testing.T, f *payFixture) crashCase {
			return chargeCase(f, f.token(t, card))
		}},
		{"refund", func(t *testing.T, f *payFixture) crashCase {
			ch := f.paidCharge(t, card, 1000, true)
			refunds := f.chargePath(ch) + "/refunds"
			return crashCase{
				path: refunds, body: map[string]any{"amount": 300, "currency": "JPY"},
				made:       func(t *testing.T) int { return f.countList(t, refunds) },
				objectPath: func(id string) string { return refunds + "/" + id },
			}
		}},
		{"cancel", func(t *testing.T, f *payFixture) crashCase {
			ch := f.paidCharge(t, card, 1000, false)
			cancels := f.chargePath(ch) + "/cancels"
			return crashCase{
				path: cancels, body: map[string]any{},
				made:       func(t *testing.T) int { return f.countList(t, cancels) },
				objectPath: func(id string) string { return cancels + "/" + id },
			}
		}},
		{"cancel of a charge awaiting its shopper", func(t *testing.T, f *payFixture) crashCase {
			// Withdrawn at once, in the cancel's own transaction: a
			// second run would find the charge canceled and refuse.
			ch := f.onlineCharge(t, "we_chat_online", "http_post")
			cancels := f.chargePath(ch) + "/cancels"
			return crashCase{
				path: cancels, body: map[string]any{},
				made:       func(t *testing.T) int { return f.countList(t, cancels) },
				objectPath: func(id string) string { return cancels + "/" + id },
			}
		}},
		{"capture", func(t *testing.T, f *payFixture) crashCase {
			ch := f.paidCharge(t, card, 1000, false)
			return crashCase{path: f.chargePath(ch) + "/capture", body: map[string]any{}}
		}},
		{"subscription", func(t *testing.T, f *payFixture) crashCase {
			tok := f.subToken(t)
			return crashCase{
				path: "/subscriptions", body: subBody(tok),
				made:       func(t *testing.T) int { return f.countList(t, "/subscriptions") },
				objectPath: f.subPath,
			}
		}},
		{"subscription starting later", func(t *testing.T, f *payFixture) crashCase {
			// No first charge now: the subscription alone is what the
			// key made.
			tok := f.subToken(t)
			return crashCase{
				path: "/subscriptions", body: subBody(tok, "schedule_settings", map[string]any{"start_on": "2026-04-01"}),
				made:       func(t *testing.T) int { return f.countList(t, "/subscriptions") },
				objectPath: f.subPath,
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			keys := &lostAnswers{}
			f := newPayFixture(t, payOptions{idemStore: func(db payment.IdempotencyStore) payment.IdempotencyStore {
				keys.IdempotencyStore = db
				return keys
			}})
			c := tt.setup(t, f)
			send := func() *httptest.ResponseRecorder {
				t.Helper()
				return f.do(t, "POST", c.path, server(f.a1), c.body, header("Idempotency-Key", "5f1a2b3c4d5e6.12345678"))
			}

			keys.dead.Store(true)
			first := send()
			wantIdempotent(t, first, http.StatusCreated, "error")
			keys.dead.Store(false)
			var id string
			if c.objectPath != nil {
				id = jstr(body(t, first), "id")
			}
			// The object moves on meanwhile: the retry's answer is the
			// object as it is now.
			f.process(t)

			wantIdempotent(t, send(), http.StatusConflict, "conflicting_key")
			f.clock.Advance(payment.DefaultIdempotencyLockTimeout)
			retry := send()
			wantIdempotent(t, retry, http.StatusCreated, "retrieved_idempotent_response")
			if c.objectPath != nil {
				if got := jstr(body(t, retry), "id"); got != id {
					t.Fatalf("the retry answered %s %s, want the first request's %s", c.path, got, id)
				}
				now := f.do(t, "GET", c.objectPath(id), server(f.a1), nil)
				if now.Code != http.StatusOK || !bytes.Equal(retry.Body.Bytes(), now.Body.Bytes()) {
					t.Errorf("the retry's answer differs from GET's:\n%s\n%d %s", retry.Body, now.Code, now.Body)
				}
			} else if retry.Body.Len() != 0 || first.Body.Len() != 0 {
				t.Errorf("answers %q and %q, want both empty", first.Body, retry.Body)
			}
			// That answer is now the key's.
			again := send()
			wantIdempotent(t, again, http.StatusCreated, "retrieved_idempotent_response")
			if !bytes.Equal(again.Body.Bytes(), retry.Body.Bytes()) {
				t.Errorf("the stored answer %s differs from the retry's %s", again.Body, retry.Body)
			}
			if c.made != nil {
				if n := c.made(t); n != 1 {
					t.Errorf("%d made under one key, want 1", n)
				}
			}
		})
	}
}

func wantIdempotent(t *testing.T, rec *httptest.ResponseRecorder, status int, idemStatus string) {
	t.Helper()
	if rec.Code != status || rec.Header().Get("Idempotency-Status") != idemStatus {
		t.Fatalf("%d, Idempotency-Status %q: %s; want %d, %q", rec.Code, rec.Header().Get("Idempotency-Status"), rec.Body, status, idemStatus)
	}
}

// heldUpdates holds the next Update once armed until let is closed: a
// request that reserved its key and then stalls before its transaction.
type heldUpdates struct {
	payment.Storage
	mu      sync.Mutex
	armed   bool
	waiting chan struct{}
	let     chan struct{}
}

func (h *heldUpdates) Update(ctx context.Context, fn func(payment.Tx) error) error {
	h.mu.Lock()
	hold := h.armed
	h.armed = false
	h.mu.Unlock()
	if hold {
		close(h.waiting)
		<-h.let
	}
	return h.Storage.Update(ctx, fn)
}

// TestIdempotentSlowOriginalMakesNothing: a request so slow that its
// reservation is taken over as abandoned before its transaction runs.
// The retry that took the key runs the request; the original, when it
// goes on, must not make a second charge: its transaction fails with 409
// IDEMPOTENCY_KEY_CONFLICT and rolls back.
func TestIdempotentSlowOriginalMakesNothing(t *testing.T) {
	held := &heldUpdates{waiting: make(chan struct{}), let: make(chan struct{})}
	f := newPayFixture(t, payOptions{idempotency: true, storage: func(db *sqlite.DB) payment.Storage {
		held.Storage = db
		return held
	}})
	tok := f.token(t, "4000020000000000", "type", "recurring")
	send := func() *httptest.ResponseRecorder {
		return f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 1000, "JPY"), header("Idempotency-Key", "slow-1"))
	}

	held.mu.Lock()
	held.armed = true
	held.mu.Unlock()
	slow := make(chan *httptest.ResponseRecorder, 1)
	go func() { slow <- send() }()
	<-held.waiting

	f.clock.Advance(payment.DefaultIdempotencyLockTimeout)
	retry := send()
	wantIdempotent(t, retry, http.StatusCreated, "successfully_stored")
	close(held.let)
	original := <-slow
	wantIdempotent(t, original, http.StatusConflict, "not_stored")
	wantError(t, original, http.StatusConflict, payment.CodeIdempotencyConflict)

	charges := listIDs(t, ok(t, f.do(t, "GET", "/charges?transaction_token_id="+tok, server(f.a1), nil), http.StatusOK))
	if id := jstr(body(t, retry), "id"); len(charges) != 1 || charges[0] != id {
		t.Fatalf("charges of the token %v, want only the retry's %s", charges, id)
	}
	again := send()
	wantIdempotent(t, again, http.StatusCreated, "retrieved_idempotent_response")
	if !bytes.Equal(again.Body.Bytes(), retry.Body.Bytes()) {
		t.Fatal("the key's answer is not the retry's")
	}
}
