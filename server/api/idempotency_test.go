package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
)

// idemFixture is a gateway on a fresh database with the demo account.
type idemFixture struct {
	db    *sqlite.DB
	srv   *Server
	svc   *services.Set
	idem  *payment.Idempotency
	clock *kessaitest.Clock
	demo  *payment.DemoAccount
	auth  string // "Bearer {secret}.{jwt}"
}

type fixtureOptions struct {
	disabled     bool
	maxBodyBytes int64
	// keys, if set, wraps the keys' store (to lose answers as a crash
	// would).
	keys func(payment.IdempotencyStore) payment.IdempotencyStore
}

func newIdemFixture(t *testing.T, opts fixtureOptions) *idemFixture {
	t.Helper()
	clock := kessaitest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := servicetest.New(t, servicetest.Options{Clock: clock})
	db, svc := st.DB, st.Service
	demo := st.SeedDemo(t)
	f := &idemFixture{db: db, svc: svc, clock: clock, demo: demo.DemoAccount, auth: demo.Auth}
	if !opts.disabled {
		var keys payment.IdempotencyStore = db
		if opts.keys != nil {
			keys = opts.keys(db)
		}
		f.idem = payment.NewIdempotency(keys, clock, payment.IdempotencyConfig{
			LockTimeout: time.Minute, FingerprintKey: []byte("fp-key"),
		})
	}
	f.srv = New(Config{
		Service:      svc,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxBodyBytes: opts.maxBodyBytes,
		Idempotency:  f.idem,
	})
	return f
}

func (f *idemFixture) tokensPath() string { return "/stores/" + f.demo.StoreID.String() + "/app_jwts" }

// do sends one request through the whole API; key "" sends no
// Idempotency-Key, auth "" no Authorization.
func (f *idemFixture) do(t *testing.T, method, path, key, auth, body string) *httptest.ResponseRecorder {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rb)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	return w
}

// countTokens counts the demo store's app tokens.
func (f *idemFixture) countTokens(t *testing.T) int {
	t.Helper()
	w := f.do(t, http.MethodGet, f.tokensPath()+"?limit=100", "", f.auth, "")
	if w.Code != http.StatusOK {
		t.Fatalf("list tokens: %d %s", w.Code, w.Body)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

func wantAnswer(t *testing.T, w *httptest.ResponseRecorder, status int, idemStatus string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status = %d, want %d; body %s", w.Code, status, w.Body)
	}
	if got := w.Header().Get("Idempotency-Status"); got != idemStatus {
		t.Fatalf("Idempotency-Status = %q, want %q", got, idemStatus)
	}
}

func wantErrorCode(t *testing.T, w *httptest.ResponseRecorder, code payment.Code, field string) {
	t.Helper()
	var e struct {
		Code   payment.Code `json:"code"`
		Errors []struct {
			Field string `json:"field"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	if e.Code != code {
		t.Fatalf("code = %s, want %s", e.Code, code)
	}
	if field != "" && (len(e.Errors) != 1 || e.Errors[0].Field != field) {
		t.Fatalf("errors = %+v, want one on %s", e.Errors, field)
	}
}

const newTokenBody = `{"mode":"test","domains":["shop.example"]}`

func TestIdempotencyStoresAndReplays(t *testing.T) {
	t.Parallel()
	keys := []struct{ name, key string }{
		{"php uniqid", "5f1a2b3c4d5e6.12345678"},
		{"uuid", "0b6f9c2e-8a0b-4b1e-9a43-3c5f7e2d1a90"},
		{"255 characters", strings.Repeat("k", 255)},
	}
	f := newIdemFixture(t, fixtureOptions{})
	for _, tt := range keys {
		t.Run(tt.name, func(t *testing.T) {
			before := f.countTokens(t)

			first := f.do(t, http.MethodPost, f.tokensPath(), tt.key, f.auth, newTokenBody)
			wantAnswer(t, first, http.StatusCreated, "successfully_stored")
			if !strings.Contains(first.Body.String(), `"secret"`) {
				t.Fatalf("first answer has no secret: %s", first.Body)
			}

			for range 2 {
				retry := f.do(t, http.MethodPost, f.tokensPath(), tt.key, f.auth, newTokenBody)
				wantAnswer(t, retry, http.StatusCreated, "retrieved_idempotent_response")
				if !bytes.Equal(retry.Body.Bytes(), first.Body.Bytes()) {
					t.Fatalf("replayed body differs:\n%s\n%s", retry.Body, first.Body)
				}
				if got, want := retry.Header().Get("Content-Type"), first.Header().Get("Content-Type"); got != want {
					t.Fatalf("replayed Content-Type %q, want %q", got, want)
				}
				if retry.Header().Get(RequestIDHeader) == first.Header().Get(RequestIDHeader) {
					t.Fatal("replay carries the first request's request id")
				}
			}
			if got := f.countTokens(t); got != before+1 {
				t.Fatalf("%d tokens after a request and its retries, want %d", got, before+1)
			}
		})
	}
}

func TestIdempotencyConflicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, body string
	}{
		{"different body", http.MethodPost, "", `{"mode":"test","domains":["other.example"]}`},
		{"same body, different whitespace", http.MethodPost, "", newTokenBody + " "},
		{"different query", http.MethodPost, "?x=1", newTokenBody},
		{"different path", http.MethodPost, "/extra", newTokenBody},
		{"different method", http.MethodPatch, "", newTokenBody},
	}
	f := newIdemFixture(t, fixtureOptions{})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("5f1a2b3c4d5e6.1234567%d", i)
			wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "successfully_stored")
			n := f.countTokens(t)

			w := f.do(t, tt.method, f.tokensPath()+tt.path, key, f.auth, tt.body)
			wantAnswer(t, w, http.StatusConflict, "conflicting_key")
			wantErrorCode(t, w, payment.CodeIdempotencyConflict, "")
			if got := f.countTokens(t); got != n {
				t.Fatalf("%d tokens after a conflict, want %d", got, n)
			}
			// The conflict stored nothing: the first request still replays.
			wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "retrieved_idempotent_response")
		})
	}
}

func TestIdempotencyScopes(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	const key = "shared-key"
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "successfully_stored")

	// Another test token of the same store shares the scope (merchant,
	// store and mode): its retry is replayed.
	other, err := f.svc.Console.RenewDemo(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sameScope := "Bearer " + other.Token.Secret + "." + other.Token.JWT
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, sameScope, newTokenBody), http.StatusCreated, "retrieved_idempotent_response")
	// That a live token of the store, or another store, is another account
	// is TestIdempotencyScopeSeparatesAccounts in server/payment.
}

func TestIdempotencyKeyTooLong(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	n := f.countTokens(t)
	w := f.do(t, http.MethodPost, f.tokensPath(), strings.Repeat("k", 256), f.auth, newTokenBody)
	wantAnswer(t, w, http.StatusBadRequest, "not_stored")
	wantErrorCode(t, w, payment.CodeValidation, "idempotency_key")
	if got := f.countTokens(t); got != n {
		t.Fatalf("%d tokens after a refused key, want %d", got, n)
	}
}

// TestIdempotencyKeyNotUTF8: keys are stored as text, and PostgreSQL
// refuses a string that is not UTF-8 (SQLSTATE 22021), so such a key
// reached the gateway's store and came back as a 500, or on SQLite was
// stored as given. HTTP lets a header carry any byte above 0x7F: the key
// is bad input, refused like a key too long, before it reserves anything.
func TestIdempotencyKeyNotUTF8(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	n := f.countTokens(t)
	for _, key := range []string{"\xff", "5f1a2b3c4d5e6.\xc3\x28", "key-\xed\xa0\x80"} {
		w := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody)
		wantAnswer(t, w, http.StatusBadRequest, "not_stored")
		wantErrorCode(t, w, payment.CodeValidation, "idempotency_key")
	}
	if got := f.countTokens(t); got != n {
		t.Fatalf("%d tokens after refused keys, want %d", got, n)
	}
	// Any UTF-8 is a key, up to 255 characters of it.
	wide := strings.Repeat("鍵", payment.MaxIdempotencyKeyLength)
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), wide, f.auth, newTokenBody), http.StatusCreated, "successfully_stored")
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), wide, f.auth, newTokenBody), http.StatusCreated, "retrieved_idempotent_response")
	w := f.do(t, http.MethodPost, f.tokensPath(), wide+"鍵", f.auth, newTokenBody)
	wantAnswer(t, w, http.StatusBadRequest, "not_stored")
	wantErrorCode(t, w, payment.CodeValidation, "idempotency_key")
}

func TestIdempotencyConcurrentRequestsRunOnce(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	n := f.countTokens(t)
	const requests = 50
	type answer struct {
		code   int
		status string
		body   []byte
	}
	answers := make(chan answer, requests)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			<-start
			r := httptest.NewRequest(http.MethodPost, f.tokensPath(), strings.NewReader(newTokenBody))
			r.Header.Set("Authorization", f.auth)
			r.Header.Set("Idempotency-Key", "5f1a2b3c4d5e6.12345678")
			w := httptest.NewRecorder()
			f.srv.ServeHTTP(w, r)
			answers <- answer{w.Code, w.Header().Get("Idempotency-Status"), w.Body.Bytes()}
		})
	}
	close(start)
	wg.Wait()
	close(answers)

	var stored []byte
	counts := map[string]int{}
	var replays [][]byte
	for a := range answers {
		counts[a.status]++
		switch {
		case a.code == http.StatusCreated && a.status == "successfully_stored":
			stored = a.body
		case a.code == http.StatusCreated && a.status == "retrieved_idempotent_response":
			replays = append(replays, a.body)
		case a.code == http.StatusConflict && a.status == "conflicting_key":
		default:
			t.Errorf("unexpected answer %d %q: %s", a.code, a.status, a.body)
		}
	}
	if counts["successfully_stored"] != 1 {
		t.Fatalf("answers by Idempotency-Status: %v; want exactly one successfully_stored", counts)
	}
	for _, b := range replays {
		if !bytes.Equal(b, stored) {
			t.Fatalf("a replay differs from the stored answer")
		}
	}
	if got := f.countTokens(t); got != n+1 {
		t.Fatalf("%d tokens after %d concurrent requests with one key, want %d", got, requests, n+1)
	}
	t.Logf("answers: %v", counts)
}

func TestIdempotencyAbandonedReservationIsTakenOver(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	const key = "5f1a2b3c4d5e6.12345678"
	caller, err := f.svc.Access.Authenticate(t.Context(), f.auth, "")
	if err != nil {
		t.Fatal(err)
	}
	// A request that reserved the key and never finished: the gateway
	// crashed mid-request.
	crashed, replay, err := f.idem.Begin(t.Context(), payment.IdempotentRequest{
		Scope: payment.IdempotencyScope(caller), Key: key, Method: http.MethodPost,
		Target: f.tokensPath(), WithSecret: true, Body: []byte(newTokenBody),
	})
	if err != nil || crashed == nil || replay != nil {
		t.Fatalf("Begin = %v, %v, %v", crashed, replay, err)
	}
	n := f.countTokens(t)

	w := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody)
	wantAnswer(t, w, http.StatusConflict, "conflicting_key")
	wantErrorCode(t, w, payment.CodeIdempotencyConflict, "")

	f.clock.Advance(59 * time.Second)
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusConflict, "conflicting_key")

	f.clock.Advance(time.Second)
	// Past the lock timeout a different request with the key still conflicts...
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, `{"mode":"test"}`), http.StatusConflict, "conflicting_key")
	// ...and the same request takes the reservation over and runs.
	first := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody)
	wantAnswer(t, first, http.StatusCreated, "successfully_stored")
	if got := f.countTokens(t); got != n+1 {
		t.Fatalf("%d tokens after the takeover, want %d", got, n+1)
	}
	if err := crashed.Complete(t.Context(), &payment.IdempotentResponse{Status: 500}); !errors.Is(err, payment.ErrIdempotencyLockLost) {
		t.Fatalf("the abandoned reservation completed: %v", err)
	}
	retry := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody)
	wantAnswer(t, retry, http.StatusCreated, "retrieved_idempotent_response")
	if !bytes.Equal(retry.Body.Bytes(), first.Body.Bytes()) {
		t.Fatal("replay differs from the takeover's answer")
	}
}

func TestIdempotencyKeyExpires(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	const key = "5f1a2b3c4d5e6.12345678"
	n := f.countTokens(t)
	first := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody)
	wantAnswer(t, first, http.StatusCreated, "successfully_stored")

	f.clock.Advance(24*time.Hour - time.Second)
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "retrieved_idempotent_response")

	f.clock.Advance(time.Second)
	second := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody)
	wantAnswer(t, second, http.StatusCreated, "successfully_stored")
	if bytes.Equal(second.Body.Bytes(), first.Body.Bytes()) {
		t.Fatal("an expired key was replayed")
	}
	if got := f.countTokens(t); got != n+2 {
		t.Fatalf("%d tokens, want %d", got, n+2)
	}

	// Swept keys are free too, for any request.
	f.clock.Advance(24 * time.Hour)
	if swept, err := f.idem.Sweep(t.Context()); err != nil || swept != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", swept, err)
	}
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, `{"mode":"test"}`), http.StatusCreated, "successfully_stored")
}

func TestIdempotencyAuthFailureKeepsKey(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	const key = "5f1a2b3c4d5e6.12345678"
	for _, auth := range []string{"", "Bearer nonsense", "Bearer wrongsecret." + f.demo.Token.JWT} {
		w := f.do(t, http.MethodPost, f.tokensPath(), key, auth, newTokenBody)
		wantAnswer(t, w, http.StatusUnauthorized, "not_stored")
	}
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "successfully_stored")
}

func TestIdempotencyOtherMethods(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	const key = "5f1a2b3c4d5e6.12345678"
	for range 2 {
		w := f.do(t, http.MethodGet, f.tokensPath(), key, f.auth, "")
		wantAnswer(t, w, http.StatusOK, "not_stored")
	}
	w := f.do(t, http.MethodDelete, f.tokensPath()+"/"+payment.NewID().String(), key, f.auth, "")
	wantAnswer(t, w, http.StatusNotFound, "not_stored")
	// None of that used the key.
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "successfully_stored")
	// Requests without a key say nothing about idempotency.
	if got := f.do(t, http.MethodPost, f.tokensPath(), "", f.auth, newTokenBody).Header().Get("Idempotency-Status"); got != "" {
		t.Fatalf("Idempotency-Status without a key = %q", got)
	}
}

func TestIdempotencyDisabled(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{disabled: true})
	n := f.countTokens(t)
	for range 2 {
		wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), "k", f.auth, newTokenBody), http.StatusCreated, "disabled")
	}
	if got := f.countTokens(t); got != n+2 {
		t.Fatalf("%d tokens, want %d", got, n+2)
	}
}

func TestIdempotencyBodyTooLarge(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{maxBodyBytes: 64})
	const key = "5f1a2b3c4d5e6.12345678"
	big := `{"mode":"test","domains":["` + strings.Repeat("a", 100) + `.example"]}`
	w := f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, big)
	wantAnswer(t, w, http.StatusRequestEntityTooLarge, "not_stored")
	wantErrorCode(t, w, payment.CodeBodyTooLarge, "")
	// The refused body reserved nothing.
	wantAnswer(t, f.do(t, http.MethodPost, f.tokensPath(), key, f.auth, newTokenBody), http.StatusCreated, "successfully_stored")
}

// TestIdempotencyWhatIsStored drives the middleware with handlers of its
// own, for the answers no route gives on demand.
func TestIdempotencyWhatIsStored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int
		first      string // Idempotency-Status of the first answer
		retry      string // and of the retry
	}{
		{
			name: "created with Location",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", "/things/1")
				w.Header().Set("X-Per-Request", "x")
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, "made\x00it")
			},
			wantStatus: http.StatusCreated, first: "successfully_stored", retry: "retrieved_idempotent_response",
		},
		{
			name:       "no content",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
			wantStatus: http.StatusNoContent, first: "successfully_stored", retry: "retrieved_idempotent_response",
		},
		{
			name: "client error is stored",
			handler: func(w http.ResponseWriter, r *http.Request) {
				(&Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}).writeError(w, r, payment.Invalid("amount", payment.ReasonRequired))
			},
			wantStatus: http.StatusBadRequest, first: "successfully_stored", retry: "retrieved_idempotent_response",
		},
		{
			name:       "internal error is not stored",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			wantStatus: http.StatusInternalServerError, first: "not_stored", retry: "not_stored",
		},
		{
			name:       "unavailable is not stored",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) },
			wantStatus: http.StatusServiceUnavailable, first: "not_stored", retry: "not_stored",
		},
		{
			name:       "rate limited is not stored",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) },
			wantStatus: http.StatusTooManyRequests, first: "not_stored", retry: "not_stored",
		},
		{
			name:       "panic is not stored",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated); panic("boom") },
			wantStatus: http.StatusInternalServerError, first: "not_stored", retry: "not_stored",
		},
	}
	f := newIdemFixture(t, fixtureOptions{})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprint("key-", i)
			runs := 0
			var mu sync.Mutex
			s := f.srv
			h := s.withRecovery(s.withAuthentication(s.withIdempotency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				runs++
				mu.Unlock()
				tt.handler(w, r)
			}))))
			send := func() *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(`{"a":1}`))
				r.Header.Set("Authorization", f.auth)
				r.Header.Set("Idempotency-Key", key)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			first := send()
			wantAnswer(t, first, tt.wantStatus, tt.first)
			retry := send()
			wantAnswer(t, retry, tt.wantStatus, tt.retry)
			wantRuns := 1
			if tt.retry != "retrieved_idempotent_response" {
				wantRuns = 2
			}
			if runs != wantRuns {
				t.Fatalf("handler ran %d times, want %d", runs, wantRuns)
			}
			if tt.retry == "retrieved_idempotent_response" {
				if !bytes.Equal(retry.Body.Bytes(), first.Body.Bytes()) {
					t.Fatalf("replayed body %q, want %q", retry.Body, first.Body)
				}
				for _, h := range []string{"Content-Type", "Location"} {
					if retry.Header().Get(h) != first.Header().Get(h) {
						t.Fatalf("replayed %s %q, want %q", h, retry.Header().Get(h), first.Header().Get(h))
					}
				}
				if first.Header().Get("X-Per-Request") != "" && retry.Header().Get("X-Per-Request") != "" {
					t.Fatal("a per-request header was replayed")
				}
			}
		})
	}
}

// TestIdempotencyAnswerFailsAfterCommit: a request whose charge committed
// and whose answer then failed (500) must not free its key for a retry to
// charge again: the charge it made is its answer, sent and stored.
func TestIdempotencyAnswerFailsAfterCommit(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	ctx := t.Context()
	caller, err := f.svc.Access.Authenticate(ctx, f.auth, "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.svc.Tokens.CreateToken(ctx, caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.Recurring, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	var made string
	s := f.srv
	h := s.withRecovery(s.withAuthentication(s.withIdempotency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		ch, err := f.svc.Charging.CreateCharge(r.Context(), caller, payment.NewCharge{
			TokenID: tok.ID, Amount: 1000, Currency: "JPY", Idempotency: idempotencyRef(r),
		})
		if err != nil {
			t.Error(err)
			return
		}
		made = ch.ID.String()
		w.WriteHeader(http.StatusInternalServerError)
	}))))
	send := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/charges", strings.NewReader(`{"a":1}`))
		r.Header.Set("Authorization", f.auth)
		r.Header.Set("Idempotency-Key", "5f1a2b3c4d5e6.12345678")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	first := send()
	wantAnswer(t, first, http.StatusCreated, "successfully_stored")
	var answered struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(first.Body.Bytes(), &answered); err != nil || answered.ID != made || answered.Status != "pending" {
		t.Fatalf("answer %s (%v), want the charge %s made", first.Body, err, made)
	}
	f.clock.Advance(time.Hour)
	retry := send()
	wantAnswer(t, retry, http.StatusCreated, "retrieved_idempotent_response")
	if !bytes.Equal(retry.Body.Bytes(), first.Body.Bytes()) || runs.Load() != 1 {
		t.Fatalf("retry %s after %d runs, want the first answer after 1", retry.Body, runs.Load())
	}
}

// TestIdempotencyEffectNotShownIsNotStored: a takeover finds that the
// abandoned run made a charge it cannot show (here one that is not there;
// in life, one the caller may no longer see). The read's error is the
// answer, but not the key's: each retry past the lock timeout is answered
// afresh, and none runs the request, which would charge the token.
func TestIdempotencyEffectNotShownIsNotStored(t *testing.T) {
	t.Parallel()
	f := newIdemFixture(t, fixtureOptions{})
	ctx := t.Context()
	caller, err := f.svc.Access.Authenticate(ctx, f.auth, "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.svc.Tokens.CreateToken(ctx, caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.Recurring, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	const key = "5f1a2b3c4d5e6.12345678"
	body := fmt.Sprintf(`{"transaction_token_id":%q,"amount":1000,"currency":"JPY"}`, tok.ID)
	crashed, _, err := f.idem.Begin(ctx, payment.IdempotentRequest{
		Scope: payment.IdempotencyScope(caller), Key: key, Method: http.MethodPost,
		Target: "/charges", WithSecret: true, Body: []byte(body),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = f.db.Update(ctx, func(tx payment.Tx) error {
		held, err := tx.RecordIdempotentEffect(ctx, *crashed.Ref(),
			payment.IdempotentEffect{Kind: payment.EffectCharge, StoreID: f.demo.StoreID, ID: payment.NewID()})
		if err == nil && !held {
			err = errors.New("the effect did not hold")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	for range 2 {
		w := f.do(t, http.MethodPost, "/charges", key, f.auth, body)
		wantAnswer(t, w, http.StatusNotFound, "not_stored")
		f.clock.Advance(time.Minute)
	}
	page, err := f.svc.Charging.Charges(ctx, caller, f.demo.StoreID, payment.ChargeFilter{TokenID: tok.ID}, payment.ListParams{Limit: 10})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("charges of the token: %d, %v; want none", len(page.Items), err)
	}
}

// answersLost is a keys' store whose Complete stores nothing while dead
// is set: the gateway died after the request's transaction committed and
// before its answer was stored.
type answersLost struct {
	payment.IdempotencyStore
	dead atomic.Bool
}

func (a *answersLost) Complete(ctx context.Context, scope, key, lock string, resp *payment.IdempotentResponse, expiresOn time.Time) (bool, error) {
	if a.dead.Load() {
		return false, errors.New("the gateway died before storing the answer")
	}
	return a.IdempotencyStore.Complete(ctx, scope, key, lock, resp, expiresOn)
}

// createRoutes are the kinds of POST routes that make a payment object,
// by the last segment of their template: each must record what it made
// on the request's key, whatever prefix (store, merchant) its form has.
var createRoutes = map[string]string{
	"charges": "charge", "refunds": "refund", "cancels": "cancel", "capture": "capture", "subscriptions": "subscription",
}

// TestIdempotentRetryAfterCrashOnEveryCreateRoute walks the router: every
// POST route that makes a charge, refund, cancel, capture or subscription,
// in every form the router serves it (a store-prefixed or
// merchant-prefixed form added beside the first one included), must be
// answered after a crash with what its first run made, not run again. A
// form whose handler forgot to hand the key's reservation to the service
// fails here: its retry runs and is stored anew.
func TestIdempotentRetryAfterCrashOnEveryCreateRoute(t *testing.T) {
	t.Parallel()
	lost := &answersLost{}
	f := newIdemFixture(t, fixtureOptions{keys: func(db payment.IdempotencyStore) payment.IdempotencyStore {
		lost.IdempotencyStore = db
		return lost
	}})
	ctx := t.Context()
	caller, err := f.svc.Access.Authenticate(ctx, f.auth, "")
	if err != nil {
		t.Fatal(err)
	}
	token := func(t *testing.T, typ payment.TokenType) string {
		t.Helper()
		tok, err := f.svc.Tokens.CreateToken(ctx, caller, payment.NewToken{
			PaymentType: payment.PaymentTypeCard, Type: typ, Email: "shopper@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID.String()
	}
	// charge is a processed charge of a new token: successful, or only
	// authorised.
	charge := func(t *testing.T, capture bool) string {
		t.Helper()
		tok, err := uuid.Parse(token(t, payment.OneTime))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := f.svc.Charging.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok, Amount: 1000, Currency: "JPY", Capture: &capture})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Work.ProcessPending(ctx, 100); err != nil {
			t.Fatal(err)
		}
		return ch.ID.String()
	}
	// setup makes what a kind of request needs: the charge its path
	// names ("" for none) and its body.
	setup := map[string]func(t *testing.T) (string, string){
		"charge": func(t *testing.T) (string, string) {
			return "", fmt.Sprintf(`{"transaction_token_id":%q,"amount":1000,"currency":"JPY"}`, token(t, payment.Recurring))
		},
		"refund":  func(t *testing.T) (string, string) { return charge(t, true), `{"amount":300,"currency":"JPY"}` },
		"cancel":  func(t *testing.T) (string, string) { return charge(t, false), `{}` },
		"capture": func(t *testing.T) (string, string) { return charge(t, false), `{}` },
		"subscription": func(t *testing.T) (string, string) {
			return "", fmt.Sprintf(`{"transaction_token_id":%q,"amount":1000,"currency":"JPY","period":"monthly"}`, token(t, payment.SubscriptionToken))
		},
	}
	found := map[string]int{}
	for i, rc := range mustRouteCases(t, f.srv, 20) {
		last := rc.tpl[strings.LastIndex(rc.tpl, "/")+1:]
		kind, ok := createRoutes[last]
		if !ok || !slices.Contains(rc.methods, http.MethodPost) {
			continue
		}
		found[kind]++
		t.Run(rc.tpl, func(t *testing.T) {
			chargeID, reqBody := setup[kind](t)
			path := routeVariable.ReplaceAllStringFunc(rc.tpl, func(v string) string {
				switch v {
				case "{storeId}":
					return f.demo.StoreID.String()
				case "{merchantId}":
					return f.demo.MerchantID.String()
				case "{chargeId}", "{id}":
					if chargeID != "" {
						return chargeID
					}
				}
				t.Fatalf("%s: no value for %s", rc.tpl, v)
				return ""
			})
			key := fmt.Sprint("5f1a2b3c4d5e6.", i)
			lost.dead.Store(true)
			first := f.do(t, http.MethodPost, path, key, f.auth, reqBody)
			lost.dead.Store(false)
			wantAnswer(t, first, http.StatusCreated, "error")
			f.clock.Advance(time.Minute)
			retry := f.do(t, http.MethodPost, path, key, f.auth, reqBody)
			wantAnswer(t, retry, http.StatusCreated, "retrieved_idempotent_response")
			var made, answered struct {
				ID string `json:"id"`
			}
			if kind != "capture" {
				if err := json.Unmarshal(first.Body.Bytes(), &made); err != nil || made.ID == "" {
					t.Fatalf("first answer %s: %v", first.Body, err)
				}
				if err := json.Unmarshal(retry.Body.Bytes(), &answered); err != nil || answered.ID != made.ID {
					t.Fatalf("the retry answered %s, want the %s %s made", retry.Body, kind, made.ID)
				}
			}
		})
	}
	for kind := range setup {
		if found[kind] == 0 {
			t.Errorf("no POST route makes a %s: the walk found %v", kind, found)
		}
	}
}
