package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// crashedCharge is store A1's charge of a recurring token under key whose
// answer the gateway lost (it died before storing it), with the clock
// past the lock timeout: the key is in flight, abandoned, with the charge
// as its effect.
type crashedCharge struct {
	f    *payFixture
	key  string
	tok  string
	id   string
	body map[string]any
}

func newCrashedCharge(t *testing.T) *crashedCharge {
	t.Helper()
	keys := &lostAnswers{}
	f := newPayFixture(t, payOptions{idemStore: func(db payment.IdempotencyStore) payment.IdempotencyStore {
		keys.IdempotencyStore = db
		return keys
	}})
	c := &crashedCharge{f: f, key: "5f1a2b3c4d5e6.87654321", tok: f.token(t, "4000020000000000", "type", "recurring")}
	c.body = chargeBody(c.tok, 1000, "JPY")
	keys.dead.Store(true)
	first := c.send(t, "/charges", server(f.a1), c.body)
	wantIdempotent(t, first, http.StatusCreated, "error")
	keys.dead.Store(false)
	c.id = jstr(body(t, first), "id")
	f.clock.Advance(payment.DefaultIdempotencyLockTimeout)
	return c
}

func (c *crashedCharge) send(t *testing.T, path, auth string, reqBody any, opts ...reqOpt) *httptest.ResponseRecorder {
	t.Helper()
	return c.f.do(t, "POST", path, auth, reqBody, append(opts, header("Idempotency-Key", c.key))...)
}

// charges are the ids of the token's charges.
func (c *crashedCharge) charges(t *testing.T) []string {
	t.Helper()
	return listIDs(t, ok(t, c.f.do(t, "GET", "/charges?transaction_token_id="+c.tok, server(c.f.a1), nil), http.StatusOK))
}

// wantOriginal: the retry is answered with the charge the crashed request
// made, and the token has that charge alone.
func (c *crashedCharge) wantOriginal(t *testing.T, retry *httptest.ResponseRecorder) {
	t.Helper()
	wantIdempotent(t, retry, http.StatusCreated, "retrieved_idempotent_response")
	if got := jstr(body(t, retry), "id"); got != c.id {
		t.Fatalf("the retry answered charge %s, want the first request's %s", got, c.id)
	}
	if ids := c.charges(t); len(ids) != 1 || ids[0] != c.id {
		t.Fatalf("charges of the token %v, want only %s", ids, c.id)
	}
}

// TestIdempotentRetryAfterCrashIsTheSameRequest: after a crash left a
// charge on a key, only the same request (method, path and query, body,
// secret or not) is answered with it. The key with another body, on
// another route, with another query, or from a browser (the app token
// without its secret) is IDEMPOTENCY_KEY_CONFLICT: never the charge made,
// never a run of its own; and the crashed request's retry still gets its
// charge afterwards.
func TestIdempotentRetryAfterCrashIsTheSameRequest(t *testing.T) {
	t.Parallel()
	c := newCrashedCharge(t)
	f := c.f
	others := []struct {
		name, path, auth string
		body             any
		opts             []reqOpt
	}{
		{"another amount", "/charges", server(f.a1), chargeBody(c.tok, 2000, "JPY"), nil},
		{"a body with another spelling", "/charges", server(f.a1), `{"transaction_token_id":"` + c.tok + `","amount":1000,"currency":"JPY" }`, nil},
		{"another route", "/subscriptions", server(f.a1), c.body, nil},
		{"the store's path", storePath(f.storeA1, "/charges"), server(f.a1), c.body, nil},
		{"a query", "/charges?polling=true", server(f.a1), c.body, nil},
		{"a browser", "/charges", browser(f.a1), c.body, []reqOpt{origin(payShopOrigin)}},
	}
	for _, o := range others {
		w := c.send(t, o.path, o.auth, o.body, o.opts...)
		if w.Code != http.StatusConflict || w.Header().Get("Idempotency-Status") != "conflicting_key" {
			t.Errorf("%s: %d %q %s; want 409 conflicting_key", o.name, w.Code, w.Header().Get("Idempotency-Status"), w.Body)
			continue
		}
		wantError(t, w, http.StatusConflict, payment.CodeIdempotencyConflict)
		if strings.Contains(w.Body.String(), c.id) {
			t.Errorf("%s: the conflict shows the charge made: %s", o.name, w.Body)
		}
	}
	c.wantOriginal(t, c.send(t, "/charges", server(f.a1), c.body))
}

// TestIdempotentRetryAfterCrashIsPerAccount: the same key value in
// another account (a live token of the store, another store of the
// merchant, the merchant's own token, another merchant's store) is a key
// of its own, even with the very same request: it runs as that account's
// request and is stored, never answered with the charge the crash left on
// store A1's test key, which A1's retry still gets.
func TestIdempotentRetryAfterCrashIsPerAccount(t *testing.T) {
	t.Parallel()
	c := newCrashedCharge(t)
	f := c.f
	for _, o := range []struct {
		name string
		tok  *payment.IssuedAppToken
		code payment.Code
	}{
		{"a live token of the store", f.a1Live, payment.CodeProcessingModeMismatch},
		{"another store", f.a2, payment.CodeTokenForWrongStore},
		{"the merchant's token", f.merchA, payment.CodeInvalidPermissions},
		{"another merchant", f.b1, payment.CodeNotFound},
	} {
		w := c.send(t, "/charges", server(o.tok), c.body)
		if got := w.Header().Get("Idempotency-Status"); got != "successfully_stored" || w.Code < 400 || w.Code >= 500 {
			t.Errorf("%s: %d %q %s; want its own refusal, stored", o.name, w.Code, got, w.Body)
		}
		wantError(t, w, w.Code, o.code)
		if strings.Contains(w.Body.String(), c.id) {
			t.Errorf("%s: answered with store A1's charge: %s", o.name, w.Body)
		}
	}
	c.wantOriginal(t, c.send(t, "/charges", server(f.a1), c.body))
}

// TestIdempotentConcurrentTakeovers: retries sent at once after the lock
// timeout find one abandoned reservation with a charge on it. One takes it
// over and is answered with the charge; the others are refused while it
// answers or replay what it stored, never run: one charge, and every 201
// the same answer, which a later retry gets too.
func TestIdempotentConcurrentTakeovers(t *testing.T) {
	t.Parallel()
	c := newCrashedCharge(t)
	f := c.f
	const n = 20
	answers := make([]*httptest.ResponseRecorder, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i] = c.send(t, "/charges", server(f.a1), c.body)
		})
	}
	close(start)
	wg.Wait()
	var created []byte
	counts := map[string]int{}
	for i, w := range answers {
		status := w.Header().Get("Idempotency-Status")
		counts[status]++
		switch {
		case w.Code == http.StatusCreated && status == "retrieved_idempotent_response":
			if created == nil {
				created = w.Body.Bytes()
			} else if !bytes.Equal(created, w.Body.Bytes()) {
				t.Errorf("answer %d differs from another 201:\n%s\n%s", i, w.Body, created)
			}
		case w.Code == http.StatusConflict && status == "conflicting_key":
		default:
			t.Errorf("answer %d: %d %q %s", i, w.Code, status, w.Body)
		}
	}
	if created == nil {
		t.Fatalf("no retry was answered with the charge: %v", counts)
	}
	t.Logf("answers by Idempotency-Status: %v", counts)
	again := c.send(t, "/charges", server(f.a1), c.body)
	c.wantOriginal(t, again)
	if !bytes.Equal(again.Body.Bytes(), created) {
		t.Errorf("the key's answer %s differs from the takeover's %s", again.Body, created)
	}
}

// TestIdempotentBrowserRetryAfterCrash: the widget charges with the app
// token alone. After a crash, its retry is answered with its charge, read
// as the browser may read it; the store's server sending the same request
// with the secret is another request (the fingerprint tells them apart)
// and is refused, not answered with the browser's charge.
func TestIdempotentBrowserRetryAfterCrash(t *testing.T) {
	t.Parallel()
	keys := &lostAnswers{}
	f := newPayFixture(t, payOptions{idemStore: func(db payment.IdempotencyStore) payment.IdempotencyStore {
		keys.IdempotencyStore = db
		return keys
	}})
	tok := jstr(f.tokenAt(t, browser(f.a1), cardBody("4000020000000000"), origin(payShopOrigin)), "id")
	send := func(auth string) *httptest.ResponseRecorder {
		t.Helper()
		return f.do(t, "POST", "/charges", auth, chargeBody(tok, 1000, "JPY"), origin(payShopOrigin), header("Idempotency-Key", "widget-1"))
	}
	keys.dead.Store(true)
	first := send(browser(f.a1))
	keys.dead.Store(false)
	wantIdempotent(t, first, http.StatusCreated, "error")
	id := jstr(body(t, first), "id")
	f.clock.Advance(payment.DefaultIdempotencyLockTimeout)

	w := send(server(f.a1))
	wantIdempotent(t, w, http.StatusConflict, "conflicting_key")
	retry := send(browser(f.a1))
	wantIdempotent(t, retry, http.StatusCreated, "retrieved_idempotent_response")
	if got := jstr(body(t, retry), "id"); got != id {
		t.Fatalf("the browser's retry answered charge %s, want %s", got, id)
	}
	if ids := listIDs(t, ok(t, f.do(t, "GET", "/charges?transaction_token_id="+tok, server(f.a1), nil), http.StatusOK)); len(ids) != 1 {
		t.Fatalf("charges of the token %v, want only %s", ids, id)
	}
}
