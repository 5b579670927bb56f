package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/univapay"
)

// Handler tests of the card-payment routes (issue 3): tokens, charges,
// captures, refunds, cancels and the transaction history, through the real
// router over a real SQLite file, a real JWT codec, the AES-GCM vault and
// the sandbox acquirer. Processing is driven by hand (ProcessPending), or by
// the real worker where the timing of long polls is under test.

// payEpoch is when a payment fixture starts: March 2026, so that 02/2026
// is a past expiry and 03/2026 a current one.
var payEpoch = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

const (
	payShopOrigin = "https://shop.example"
	npShopOrigin  = "https://np-shop.example"
)

// payFixture is a gateway with two merchants:
//
//	merchant A: stores A1 (PCI DSS compliant; test token a1 for shop.example
//	            and live token a1Live), A2 (compliant; token a2) and NP (not
//	            compliant; token np for np-shop.example); merchant token merchA
//	merchant B: store B1 (compliant; token b1 for shop-b.example)
type payFixture struct {
	dir   string
	db    *sqlite.DB
	clock *kessaitest.Clock
	svc   *services.Set
	srv   *api.Server

	merchantA, merchantB               uuid.UUID
	storeA1, storeA2, storeNP, storeB1 uuid.UUID
	a1, a1Live, a2, np, b1, merchA     *payment.IssuedAppToken

	mu     sync.Mutex
	record bool
	// seen holds every response header and body while record is set.
	seen []string
}

type payOptions struct {
	pollWait    time.Duration
	latency     time.Duration
	logger      *slog.Logger
	idempotency bool
	record      bool
	// events records events (univapay.EncodeEvent), sent by webhookSender.
	events        bool
	webhookSender payment.WebhookSender
	// idemStore, if set, turns idempotency on over the keys' store it
	// returns (to lose answers as a crash would).
	idemStore func(payment.IdempotencyStore) payment.IdempotencyStore
	// storage, if set, wraps the database before the service gets it.
	storage func(*sqlite.DB) payment.Storage
}

func newPayFixture(tb testing.TB, opts payOptions) *payFixture {
	tb.Helper()
	ctx := context.Background()
	f := &payFixture{dir: tb.TempDir(), clock: kessaitest.NewClock(payEpoch), record: opts.record}
	so := servicetest.Options{
		Path: filepath.Join(f.dir, sqlite.FileName), Clock: f.clock, PublicOrigin: publicOrigin,
		Processor: sandbox.Processor{Latency: opts.latency}, Config: payment.Config{SecretKey: secretKey},
	}
	if opts.events {
		so.EncodeEvent, so.WebhookSender = univapay.EncodeEvent, opts.webhookSender
	}
	so.Storage = opts.storage
	st := servicetest.New(tb, so)
	db := st.DB
	f.db, f.svc = db, st.Service
	var idem *payment.Idempotency
	if opts.idempotency || opts.idemStore != nil {
		var keys payment.IdempotencyStore = db
		if opts.idemStore != nil {
			keys = opts.idemStore(db)
		}
		idem = payment.NewIdempotency(keys, f.clock, payment.IdempotencyConfig{FingerprintKey: []byte("payments-test-fp")})
	}
	logger := opts.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f.srv = api.New(api.Config{
		Service: f.svc, Logger: logger, PublicOrigin: publicOrigin,
		PollWait: opts.pollWait, Idempotency: idem,
	})

	now := f.clock.Now()
	mA := &payment.Merchant{ID: payment.NewID(), Name: "Merchant A", Email: "a@pay.kessai.test", Verified: true, CreatedOn: now}
	mB := &payment.Merchant{ID: payment.NewID(), Name: "Merchant B", Email: "b@pay.kessai.test", Verified: true, CreatedOn: now}
	store := func(m uuid.UUID, name string, pci bool) *payment.Store {
		return &payment.Store{ID: payment.NewID(), MerchantID: m, Name: name, PCICompliant: pci,
			Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	}
	a1, a2, np, b1 := store(mA.ID, "A1", true), store(mA.ID, "A2", true), store(mA.ID, "NP", false), store(mB.ID, "B1", true)
	err := db.Update(ctx, func(tx payment.Tx) error {
		for _, m := range []*payment.Merchant{mA, mB} {
			if err := tx.CreateMerchant(ctx, m); err != nil {
				return err
			}
		}
		for _, st := range []*payment.Store{a1, a2, np, b1} {
			if err := tx.CreateStore(ctx, st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	f.merchantA, f.merchantB = mA.ID, mB.ID
	f.storeA1, f.storeA2, f.storeNP, f.storeB1 = a1.ID, a2.ID, np.ID, b1.ID
	issue := func(storeID uuid.UUID, mode payment.Mode, domains ...string) *payment.IssuedAppToken {
		tok, err := f.svc.Access.IssueStoreAppToken(ctx, storeID, payment.NewAppToken{Mode: mode, Domains: domains})
		if err != nil {
			tb.Fatal(err)
		}
		return tok
	}
	f.a1 = issue(a1.ID, payment.ModeTest, "shop.example")
	f.a1Live = issue(a1.ID, payment.ModeLive, "shop.example")
	f.a2 = issue(a2.ID, payment.ModeTest)
	f.np = issue(np.ID, payment.ModeTest, "np-shop.example")
	f.b1 = issue(b1.ID, payment.ModeTest, "shop-b.example")
	if f.merchA, err = f.svc.Access.IssueMerchantAppToken(ctx, mA.ID, payment.NewAppToken{}); err != nil {
		tb.Fatal(err)
	}
	return f
}

// do sends one request. reqBody is nil (no body), a string (sent as is) or
// anything else (sent as JSON). It only reports with Errorf, so goroutines
// may call it.
func (f *payFixture) do(t testing.TB, method, path, auth string, reqBody any, opts ...reqOpt) *httptest.ResponseRecorder {
	t.Helper()
	var rb io.Reader
	if raw := requestBody(t, reqBody); raw != nil {
		rb = bytes.NewReader(raw)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, apiRequest(method, path, auth, rb, opts...))
	for _, name := range []string{"Authorization", "X-Refresh-Authorization", "X-Amzn-Remapped-Authorization"} {
		if rec.Header().Get(name) != "" {
			t.Errorf("%s %s: response carries %s", method, path, name)
		}
	}
	f.mu.Lock()
	if f.record {
		var sb strings.Builder
		for k, vs := range rec.Header() {
			sb.WriteString(k + ": " + strings.Join(vs, ", ") + "\n")
		}
		f.seen = append(f.seen, sb.String(), rec.Body.String())
	}
	f.mu.Unlock()
	return rec
}

// requestBody encodes a test request's body: nil for none, a string as
// is, anything else as JSON. It only reports with Errorf, so goroutines
// may call it.
func requestBody(t testing.TB, body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return append([]byte{}, b...)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Errorf("marshal request: %v", err)
		}
		return append([]byte{}, raw...)
	}
}

// process runs the worker's pending operations until none is left.
func (f *payFixture) process(t testing.TB) {
	t.Helper()
	for range 10 {
		n, err := f.svc.Work.ProcessPending(context.Background(), 100)
		if err != nil {
			t.Fatalf("ProcessPending: %v", err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("ProcessPending still finds work after 10 rounds")
}

// ---- request bodies

// cvcFor is a CVC of the right length for a card's brand.
func cvcFor(pan string) string {
	if strings.HasPrefix(pan, "34") || strings.HasPrefix(pan, "37") {
		return "7373"
	}
	return "737"
}

// cardBody is a one-time card token request.
func cardBody(pan string) map[string]any {
	return map[string]any{
		"payment_type": "card", "type": "one_time", "email": "buyer@example.com",
		"data": map[string]any{
			"cardholder": "Taro Yamada", "card_number": pan, "exp_month": 12, "exp_year": 2030, "cvv": cvcFor(pan),
		},
	}
}

// with returns a copy of a body with top-level fields changed.
func with(b map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(b))
	for k, v := range b {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// withData returns a copy of a token body with fields of data changed.
func withData(b map[string]any, kv ...any) map[string]any {
	d := with(b["data"].(map[string]any), kv...)
	return with(b, "data", d)
}

func chargeBody(tokenID string, amount any, currency string, kv ...any) map[string]any {
	return with(map[string]any{"transaction_token_id": tokenID, "amount": amount, "currency": currency}, kv...)
}

// ---- JSON access

func jget(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, isObject := v.(map[string]any)
		if !isObject {
			return nil
		}
		v = o[k]
	}
	return v
}

func jstr(m map[string]any, path string) string {
	s, _ := jget(m, path).(string)
	return s
}

func jnum(m map[string]any, path string) float64 {
	n, _ := jget(m, path).(float64)
	return n
}

// jhasNull reports whether path is present and null.
func jhasNull(m map[string]any, path string) bool {
	i := strings.LastIndex(path, ".")
	parent := m
	if i >= 0 {
		p, isObject := jget(m, path[:i]).(map[string]any)
		if !isObject {
			return false
		}
		parent = p
	}
	v, has := parent[path[i+1:]]
	return has && v == nil
}

func listIDs(t testing.TB, m map[string]any) []string {
	t.Helper()
	items, isList := m["items"].([]any)
	if !isList {
		t.Fatalf("items = %v, want an array", m["items"])
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, fmt.Sprint(it.(map[string]any)["id"]))
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ---- flows

func (f *payFixture) tokenAt(t testing.TB, auth string, b map[string]any, opts ...reqOpt) map[string]any {
	t.Helper()
	return ok(t, f.do(t, "POST", "/tokens", auth, b, opts...), http.StatusCreated)
}

// token creates a card token for store A1 and returns its id.
func (f *payFixture) token(t testing.TB, pan string, kv ...any) string {
	t.Helper()
	return jstr(f.tokenAt(t, server(f.a1), with(cardBody(pan), kv...)), "id")
}

func (f *payFixture) chargeAt(t testing.TB, auth string, b map[string]any, opts ...reqOpt) map[string]any {
	t.Helper()
	m := ok(t, f.do(t, "POST", "/charges", auth, b, opts...), http.StatusCreated)
	if jstr(m, "status") != "pending" {
		t.Errorf("new charge status %q, want pending", jstr(m, "status"))
	}
	return m
}

// charge charges a token of store A1 and returns its id.
func (f *payFixture) charge(t testing.TB, tokenID string, amount int, currency string, kv ...any) string {
	t.Helper()
	return jstr(f.chargeAt(t, server(f.a1), chargeBody(tokenID, amount, currency, kv...)), "id")
}

func (f *payFixture) chargePath(id string) string { return storePath(f.storeA1, "/charges/"+id) }

func (f *payFixture) getCharge(t testing.TB, id string) map[string]any {
	t.Helper()
	return ok(t, f.do(t, "GET", f.chargePath(id), server(f.a1), nil), http.StatusOK)
}

// paidCharge is a processed card charge of store A1.
func (f *payFixture) paidCharge(t testing.TB, pan string, amount int, capture bool) string {
	t.Helper()
	id := f.charge(t, f.token(t, pan), amount, "JPY", "capture", capture)
	f.process(t)
	want := "successful"
	if !capture {
		want = "authorized"
	}
	if st := jstr(f.getCharge(t, id), "status"); st != want {
		t.Fatalf("charge on %s is %s, want %s", pan, st, want)
	}
	return id
}

func (f *payFixture) refund(t testing.TB, chargeID string, amount int, currency string) *httptest.ResponseRecorder {
	t.Helper()
	return f.do(t, "POST", f.chargePath(chargeID)+"/refunds", server(f.a1), map[string]any{"amount": amount, "currency": currency})
}

func (f *payFixture) capture(t testing.TB, chargeID string, reqBody any) *httptest.ResponseRecorder {
	t.Helper()
	return f.do(t, "POST", f.chargePath(chargeID)+"/capture", server(f.a1), reqBody)
}

func (f *payFixture) cancel(t testing.TB, chargeID string) *httptest.ResponseRecorder {
	t.Helper()
	return f.do(t, "POST", f.chargePath(chargeID)+"/cancels", server(f.a1), map[string]any{})
}

func checkPaymentError(t testing.TB, m map[string]any, code int, message string) {
	t.Helper()
	if code == 0 {
		if !jhasNull(m, "error") {
			t.Errorf("error = %v, want null", m["error"])
		}
		return
	}
	if got := jnum(m, "error.code"); int(got) != code {
		t.Errorf("error.code = %v, want %d (error %v)", jget(m, "error.code"), code, m["error"])
	}
	if message != "" && jstr(m, "error.message") != message {
		t.Errorf("error.message = %q, want %q", jstr(m, "error.message"), message)
	}
}

// ---------------------------------------------------------------------------
// 1. Sandbox test cards

func TestSandboxTestCards(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	for _, c := range []struct {
		name, pan, email, brand, status string
		code                            int
		message, detail                 string
	}{
		{"UnivaPaySuccess", "4000020000000000", "", "visa", "successful", 0, "", ""},
		{"Visa4242", "4242424242424242", "", "visa", "successful", 0, "", ""},
		{"UnivaPayReject", "4111111111111111", "", "visa", "failed", 306, "CARD_REJECTED", ""},
		{"Mastercard", "5555555555554444", "", "mastercard", "successful", 0, "", ""},
		{"JCB", "3530111333300000", "", "jcb", "successful", 0, "", ""},
		{"Amex", "378282246310005", "", "american_express", "successful", 0, "", ""},
		{"Diners", "30569309025904", "", "diners_club", "successful", 0, "", ""},
		{"GenericDecline", "4000000000000002", "", "visa", "failed", 306, "CARD_REJECTED", ""},
		{"InsufficientFunds", "4000000000009995", "", "visa", "failed", 306, "", "insufficient_funds"},
		{"Expired", "4000000000000069", "", "visa", "failed", 304, "CARD_EXPIRED", ""},
		{"CVCInvalid", "4000000000000127", "", "visa", "failed", 305, "CARD_CVV_INVALID", ""},
		{"ProcessingError", "4000000000000119", "", "visa", "error", 309, "PROCESSING_ERROR", ""},
		{"LostCard", "4000000000009987", "", "visa", "failed", 314, "SEIZE_CARD", ""},
		{"StolenCard", "4000000000009979", "", "visa", "failed", 314, "SEIZE_CARD", ""},
		{"Fraud", "4100000000000019", "", "visa", "failed", 319, "FRAUD_SUSPECTED", ""},
		{"OtherValidNumber", "4012888888881881", "", "visa", "successful", 0, "", ""},
		{"ForcedFailure306", "4000020000000000", "test+charge-failure-306@example.com", "visa", "failed", 306, "CARD_REJECTED", ""},
		{"ForcedFailure315", "5555555555554444", "test+charge-failure-315@shop.example", "mastercard", "failed", 315, "CONTACT_BANK", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := cardBody(c.pan)
			if c.email != "" {
				b = with(b, "email", c.email)
			}
			tok := f.tokenAt(t, server(f.a1), b)
			if got := jstr(tok, "data.card.brand"); got != c.brand {
				t.Errorf("data.card.brand = %q, want %q", got, c.brand)
			}
			if jstr(tok, "data.card.last_four") != c.pan[len(c.pan)-4:] || jstr(tok, "data.card.card_bin") != c.pan[:6] {
				t.Errorf("data.card = %v", jget(tok, "data.card"))
			}
			id := f.charge(t, jstr(tok, "id"), 1000, "JPY")
			f.process(t)
			ch := f.getCharge(t, id)
			if st := jstr(ch, "status"); st != c.status {
				t.Fatalf("status %q, want %q (error %v)", st, c.status, ch["error"])
			}
			checkPaymentError(t, ch, c.code, c.message)
			if c.detail != "" {
				// sandbox.md: "306 CARD_REJECTED, message insufficient_funds";
				// the reason may be in message or detail.
				msg, detail := jstr(ch, "error.message"), jstr(ch, "error.detail")
				if msg != c.detail && !strings.Contains(detail, c.detail) {
					t.Errorf("error %v does not say %s", ch["error"], c.detail)
				}
				if msg != "CARD_REJECTED" && msg != c.detail {
					t.Errorf("error.message = %q", msg)
				}
			}
			if c.status == "successful" {
				if jnum(ch, "charged_amount") != 1000 || jstr(ch, "charged_currency") != "JPY" {
					t.Errorf("charged %v %v, want 1000 JPY", ch["charged_amount"], ch["charged_currency"])
				}
			} else if !jhasNull(ch, "charged_amount") {
				t.Errorf("charged_amount = %v on a %s charge, want null", ch["charged_amount"], c.status)
			}
		})
	}

	t.Run("Visa4242RefundFails329", func(t *testing.T) {
		id := f.paidCharge(t, "4242424242424242", 1000, true)
		rf := ok(t, f.refund(t, id, 500, "JPY"), http.StatusCreated)
		if jstr(rf, "status") != "pending" {
			t.Errorf("new refund status %q", jstr(rf, "status"))
		}
		f.process(t)
		got := ok(t, f.do(t, "GET", f.chargePath(id)+"/refunds/"+jstr(rf, "id"), server(f.a1), nil), http.StatusOK)
		if jstr(got, "status") != "failed" {
			t.Errorf("refund status %q, want failed", jstr(got, "status"))
		}
		checkPaymentError(t, got, 329, "REFUND_FAILED")
		if st := jstr(f.getCharge(t, id), "status"); st != "successful" {
			t.Errorf("charge status %q after a failed refund", st)
		}
	})

	t.Run("Card0341CaptureFails313", func(t *testing.T) {
		id := f.paidCharge(t, "4000000000000341", 1000, false)
		if rec := f.capture(t, id, "null"); rec.Code != http.StatusCreated {
			t.Fatalf("capture: %d %s", rec.Code, rec.Body)
		}
		f.process(t)
		ch := f.getCharge(t, id)
		if jstr(ch, "status") != "failed" {
			t.Errorf("status %q, want failed", jstr(ch, "status"))
		}
		checkPaymentError(t, ch, 313, "CHARGE_EXPIRED")
	})
}

// ---------------------------------------------------------------------------
// Card validation at token creation

func TestTokenCardValidation(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	t.Run("Refused", func(t *testing.T) {
		for _, c := range []struct {
			name          string
			data          []any
			field, reason string
		}{
			{"LuhnFailure", []any{"card_number", "4242424242424241"}, "card_number", "INVALID_CARD_NUMBER"},
			{"TooShortForVisa", []any{"card_number", "42424242424242"}, "card_number", "INVALID_CARD_NUMBER"},
			{"TooLongForMastercard", []any{"card_number", "55555555555544440"}, "card_number", "INVALID_CARD_NUMBER"},
			{"Letters", []any{"card_number", "4242-4242-abcd-4242"}, "card_number", "INVALID_CARD_NUMBER"},
			{"NoNumber", []any{"card_number", ""}, "card_number", "REQUIRED_VALUE"},
			{"ExpiredYearsAgo", []any{"exp_month", 1, "exp_year", 2020}, "exp_year", "INVALID_CARD_EXPIRATION"},
			{"ExpiredLastMonth", []any{"exp_month", 2, "exp_year", 2026}, "exp_year", "INVALID_CARD_EXPIRATION"},
			{"ExpiredTwoDigitYear", []any{"exp_month", "12", "exp_year", "25"}, "exp_year", "INVALID_CARD_EXPIRATION"},
			{"Month13", []any{"exp_month", 13}, "exp_month", "INVALID_CARD_EXPIRATION"},
			{"MonthNotANumber", []any{"exp_month", "dec"}, "exp_month", "INVALID_FORMAT"},
			{"CVVTooShort", []any{"cvv", "73"}, "cvv", "INVALID_CVV"},
			{"CVVTooLongForVisa", []any{"cvv", "7373"}, "cvv", "INVALID_CVV"},
			{"CVVLetters", []any{"cvv", "7a3"}, "cvv", "INVALID_CVV"},
			{"AmexNeedsFourDigitCVV", []any{"card_number", "378282246310005", "cvv", "737"}, "cvv", "INVALID_CVV"},
		} {
			t.Run(c.name, func(t *testing.T) {
				b := withData(cardBody("4242424242424242"), c.data...)
				errs := wantError(t, f.do(t, "POST", "/tokens", server(f.a1), b), http.StatusBadRequest, payment.CodeValidation, c.field)
				if !slices.Contains(errs, fieldError{Field: c.field, Reason: c.reason}) {
					t.Errorf("errors %+v, want {%s %s}", errs, c.field, c.reason)
				}
			})
		}
	})

	t.Run("NothingStored", func(t *testing.T) {
		m := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens"), server(f.a1), nil), http.StatusOK)
		if got := listIDs(t, m); len(got) != 0 {
			t.Errorf("refused tokens were stored: %v", got)
		}
	})

	t.Run("ExpiryAsStringsAndNumbers", func(t *testing.T) {
		for _, c := range []struct {
			name                string
			month, year         any
			wantMonth, wantYear int
		}{
			{"Ints", 12, 2030, 12, 2030},
			{"Strings", "12", "2030", 12, 2030},
			{"LeadingZero", "09", "2031", 9, 2031},
			{"TwoDigitYearString", "3", "30", 3, 2030},
			{"TwoDigitYearInt", 7, 29, 7, 2029},
			{"CurrentMonth", 3, 2026, 3, 2026},
		} {
			t.Run(c.name, func(t *testing.T) {
				tok := f.tokenAt(t, server(f.a1), withData(cardBody("4242424242424242"), "exp_month", c.month, "exp_year", c.year))
				// Numbers, not strings, on the way out.
				if m, isNum := jget(tok, "data.card.exp_month").(float64); !isNum || int(m) != c.wantMonth {
					t.Errorf("exp_month = %#v, want %d", jget(tok, "data.card.exp_month"), c.wantMonth)
				}
				if y, isNum := jget(tok, "data.card.exp_year").(float64); !isNum || int(y) != c.wantYear {
					t.Errorf("exp_year = %#v, want %d", jget(tok, "data.card.exp_year"), c.wantYear)
				}
			})
		}
	})
}

// ---------------------------------------------------------------------------
// 2. Status transitions

func TestChargeStatusTransitions(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	const pan = "4000020000000000"

	t.Run("PendingToSuccessful", func(t *testing.T) {
		m := f.chargeAt(t, server(f.a1), chargeBody(f.token(t, pan), 1000, "JPY"))
		id := jstr(m, "id")
		for _, k := range []string{"charged_amount", "charged_currency", "charged_amount_formatted", "error"} {
			if !jhasNull(m, k) {
				t.Errorf("pending charge %s = %v, want null", k, m[k])
			}
		}
		f.process(t)
		ch := f.getCharge(t, id)
		if jstr(ch, "status") != "successful" || jnum(ch, "charged_amount") != 1000 || jstr(ch, "charged_currency") != "JPY" {
			t.Errorf("charge %v %v %v", ch["status"], ch["charged_amount"], ch["charged_currency"])
		}
		if jstr(ch, "capture_status") != "captured" {
			t.Errorf("capture_status %v", ch["capture_status"])
		}
	})

	t.Run("PendingToAuthorized", func(t *testing.T) {
		id := f.charge(t, f.token(t, pan), 1000, "JPY", "capture", false)
		f.process(t)
		ch := f.getCharge(t, id)
		if jstr(ch, "status") != "authorized" || jstr(ch, "capture_status") != "authorized" {
			t.Errorf("status %v capture_status %v, want authorized", ch["status"], ch["capture_status"])
		}
	})

	for _, c := range []struct {
		name    string
		body    any
		charged float64
	}{
		{"FullWithNullBody", "null", 1000},
		{"FullWithoutBody", nil, 1000},
		{"FullWithAmount", map[string]any{"amount": 1000, "currency": "JPY"}, 1000},
		{"Partial", map[string]any{"amount": 600, "currency": "JPY"}, 600},
		{"PartialLowerCaseCurrency", map[string]any{"amount": 250, "currency": "jpy"}, 250},
	} {
		t.Run("AuthorizedToSuccessful/"+c.name, func(t *testing.T) {
			id := f.paidCharge(t, pan, 1000, false)
			rec := f.capture(t, id, c.body)
			if rec.Code != http.StatusCreated || rec.Body.Len() != 0 {
				t.Fatalf("capture answered %d %q, want an empty 201", rec.Code, rec.Body)
			}
			f.process(t)
			ch := f.getCharge(t, id)
			if jstr(ch, "status") != "successful" || jnum(ch, "charged_amount") != c.charged {
				t.Errorf("after capture: status %v charged_amount %v, want successful %v", ch["status"], ch["charged_amount"], c.charged)
			}
			if jnum(ch, "requested_amount") != 1000 {
				t.Errorf("requested_amount %v", ch["requested_amount"])
			}
			if jnum(ch, "charged_amount_formatted") != c.charged {
				t.Errorf("charged_amount_formatted %v", ch["charged_amount_formatted"])
			}
			// Refunds are bounded by what was captured.
			wantError(t, f.refund(t, id, int(c.charged)+1, "JPY"), http.StatusBadRequest, payment.CodeRefundExceedsCharge)
			ok(t, f.refund(t, id, int(c.charged), "JPY"), http.StatusCreated)
		})
	}

	t.Run("AuthorizedToCanceled", func(t *testing.T) {
		id := f.paidCharge(t, pan, 1000, false)
		cn := ok(t, f.cancel(t, id), http.StatusCreated)
		if jstr(cn, "status") != "pending" || jstr(cn, "charge_id") != id {
			t.Errorf("new cancel %v", cn)
		}
		wantError(t, f.cancel(t, id), http.StatusBadRequest, payment.CodeCancelNotAllowed)
		f.process(t)
		got := ok(t, f.do(t, "GET", f.chargePath(id)+"/cancels/"+jstr(cn, "id"), server(f.a1), nil), http.StatusOK)
		if jstr(got, "status") != "successful" {
			t.Errorf("cancel status %q, want successful", jstr(got, "status"))
		}
		if st := jstr(f.getCharge(t, id), "status"); st != "canceled" {
			t.Errorf("charge status %q, want canceled", st)
		}
		// A canceled charge is neither capturable, refundable nor cancelable.
		if rec := f.capture(t, id, "null"); rec.Code != http.StatusBadRequest {
			t.Errorf("capture of a canceled charge: %d %s", rec.Code, rec.Body)
		}
		wantError(t, f.refund(t, id, 100, "JPY"), http.StatusBadRequest, payment.CodeCannotRefundUnsuccessful)
		wantError(t, f.cancel(t, id), http.StatusBadRequest, payment.CodeCancelNotAllowed)
	})

	t.Run("Errors", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			run    func(t *testing.T) *httptest.ResponseRecorder
			status int
			code   payment.Code
		}{
			{"SecondCaptureWhileRequested", func(t *testing.T) *httptest.ResponseRecorder {
				id := f.paidCharge(t, pan, 1000, false)
				if rec := f.capture(t, id, "null"); rec.Code != http.StatusCreated {
					t.Fatalf("first capture %d", rec.Code)
				}
				return f.capture(t, id, "null")
			}, 400, payment.CodeAlreadyCaptured},
			{"SecondCaptureAfterProcessing", func(t *testing.T) *httptest.ResponseRecorder {
				id := f.paidCharge(t, pan, 1000, false)
				f.capture(t, id, "null")
				f.process(t)
				return f.capture(t, id, map[string]any{"amount": 100, "currency": "JPY"})
			}, 400, payment.CodeAlreadyCaptured},
			{"CaptureOfSuccessfulCharge", func(t *testing.T) *httptest.ResponseRecorder {
				return f.capture(t, f.paidCharge(t, pan, 1000, true), "null")
			}, 400, payment.CodeAlreadyCaptured},
			{"CaptureTooLarge", func(t *testing.T) *httptest.ResponseRecorder {
				return f.capture(t, f.paidCharge(t, pan, 1000, false), map[string]any{"amount": 1001, "currency": "JPY"})
			}, 400, payment.CodeCaptureAmountTooLarge},
			{"CaptureOtherCurrency", func(t *testing.T) *httptest.ResponseRecorder {
				return f.capture(t, f.paidCharge(t, pan, 1000, false), map[string]any{"amount": 500, "currency": "USD"})
			}, 400, payment.CodeCurrencyMustMatchCharge},
			{"CancelOfSuccessfulCharge", func(t *testing.T) *httptest.ResponseRecorder {
				return f.cancel(t, f.paidCharge(t, pan, 1000, true))
			}, 400, payment.CodeCancelNotAllowed},
			{"CancelWhileCaptureRequested", func(t *testing.T) *httptest.ResponseRecorder {
				id := f.paidCharge(t, pan, 1000, false)
				f.capture(t, id, "null")
				return f.cancel(t, id)
			}, 400, payment.CodeCancelNotAllowed},
			{"CancelOfFailedCharge", func(t *testing.T) *httptest.ResponseRecorder {
				id := f.charge(t, f.token(t, "4111111111111111"), 1000, "JPY", "capture", false)
				f.process(t)
				return f.cancel(t, id)
			}, 400, payment.CodeCancelNotAllowed},
			{"RefundOfFailedCharge", func(t *testing.T) *httptest.ResponseRecorder {
				id := f.charge(t, f.token(t, "4111111111111111"), 1000, "JPY")
				f.process(t)
				return f.refund(t, id, 100, "JPY")
			}, 400, payment.CodeCannotRefundUnsuccessful},
			{"RefundOfErrorCharge", func(t *testing.T) *httptest.ResponseRecorder {
				id := f.charge(t, f.token(t, "4000000000000119"), 1000, "JPY")
				f.process(t)
				return f.refund(t, id, 100, "JPY")
			}, 400, payment.CodeCannotRefundUnsuccessful},
			{"RefundOfAuthorizedCharge", func(t *testing.T) *httptest.ResponseRecorder {
				return f.refund(t, f.paidCharge(t, pan, 1000, false), 100, "JPY")
			}, 400, payment.CodeCannotRefundUnsuccessful},
			{"RefundOfPendingCharge", func(t *testing.T) *httptest.ResponseRecorder {
				return f.refund(t, f.charge(t, f.token(t, pan), 1000, "JPY"), 100, "JPY")
			}, 400, payment.CodeCannotRefundUnsuccessful},
			{"RefundOtherCurrency", func(t *testing.T) *httptest.ResponseRecorder {
				return f.refund(t, f.paidCharge(t, pan, 1000, true), 100, "USD")
			}, 400, payment.CodeCurrencyMustMatchCharge},
			{"RefundZero", func(t *testing.T) *httptest.ResponseRecorder {
				return f.refund(t, f.paidCharge(t, pan, 1000, true), 0, "JPY")
			}, 400, payment.CodeValidation},
			{"RefundMoreThanCharged", func(t *testing.T) *httptest.ResponseRecorder {
				return f.refund(t, f.paidCharge(t, pan, 1000, true), 1001, "JPY")
			}, 400, payment.CodeRefundExceedsCharge},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantError(t, c.run(t), c.status, c.code)
			})
		}
	})

	t.Run("PartialRefunds", func(t *testing.T) {
		id := f.paidCharge(t, pan, 1000, true)
		ok(t, f.refund(t, id, 300, "JPY"), http.StatusCreated)
		ok(t, f.refund(t, id, 300, "jpy"), http.StatusCreated)
		// Pending refunds count: 600 promised, 500 more is too much.
		wantError(t, f.refund(t, id, 500, "JPY"), http.StatusBadRequest, payment.CodeRefundExceedsCharge)
		f.process(t)
		wantError(t, f.refund(t, id, 500, "JPY"), http.StatusBadRequest, payment.CodeRefundExceedsCharge)
		ok(t, f.refund(t, id, 400, "JPY"), http.StatusCreated)
		wantError(t, f.refund(t, id, 1, "JPY"), http.StatusBadRequest, payment.CodeRefundExceedsCharge)
		f.process(t)
		list := ok(t, f.do(t, "GET", f.chargePath(id)+"/refunds", server(f.a1), nil), http.StatusOK)
		items := list["items"].([]any)
		if len(items) != 3 {
			t.Fatalf("%d refunds, want 3", len(items))
		}
		var sum float64
		for _, it := range items {
			rf := it.(map[string]any)
			if jstr(rf, "status") != "successful" {
				t.Errorf("refund %v is %v", rf["id"], rf["status"])
			}
			sum += jnum(rf, "amount")
		}
		if sum != 1000 {
			t.Errorf("refunded %v, want 1000", sum)
		}
		if st := jstr(f.getCharge(t, id), "status"); st != "successful" {
			t.Errorf("fully refunded charge status %q", st)
		}
	})

	t.Run("FailedRefundsDoNotCount", func(t *testing.T) {
		id := f.paidCharge(t, "4242424242424242", 1000, true)
		ok(t, f.refund(t, id, 1000, "JPY"), http.StatusCreated)
		f.process(t) // refunds of 4242 fail with 329
		rf := ok(t, f.refund(t, id, 1000, "JPY"), http.StatusCreated)
		f.process(t)
		got := ok(t, f.do(t, "GET", f.chargePath(id)+"/refunds/"+jstr(rf, "id"), server(f.a1), nil), http.StatusOK)
		if jstr(got, "status") != "failed" {
			t.Errorf("refund of 4242 is %v", got["status"])
		}
	})
}

// ---------------------------------------------------------------------------
// Charge creation errors

func TestChargeCreationErrors(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	const pan = "4000020000000000"
	for _, c := range []struct {
		name   string
		setup  func(t *testing.T) (auth string, reqBody any)
		status int
		code   payment.Code
		field  string
	}{
		{"OneTimeTokenReused", func(t *testing.T) (string, any) {
			tok := f.token(t, pan)
			f.charge(t, tok, 1000, "JPY")
			return server(f.a1), chargeBody(tok, 1000, "JPY")
		}, 400, payment.CodeTransactionAlreadyDone, ""},
		{"OneTimeTokenReusedAfterFailure", func(t *testing.T) (string, any) {
			tok := f.token(t, "4111111111111111")
			f.charge(t, tok, 1000, "JPY")
			f.process(t)
			return server(f.a1), chargeBody(tok, 1000, "JPY")
		}, 400, payment.CodeTransactionAlreadyDone, ""},
		{"SubscriptionToken", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan, "type", "subscription"), 1000, "JPY")
		}, 400, payment.CodeNotOneTimeToken, ""},
		{"TokenOfAnotherStore", func(t *testing.T) (string, any) {
			return server(f.a2), chargeBody(f.token(t, pan), 1000, "JPY")
		}, 400, payment.CodeTokenForWrongStore, ""},
		{"TestTokenLiveAppToken", func(t *testing.T) (string, any) {
			return server(f.a1Live), chargeBody(f.token(t, pan), 1000, "JPY")
		}, 400, payment.CodeProcessingModeMismatch, ""},
		{"LiveTokenTestAppToken", func(t *testing.T) (string, any) {
			tok := f.tokenAt(t, server(f.a1Live), cardBody("4012888888881881"))
			return server(f.a1), chargeBody(jstr(tok, "id"), 1000, "JPY")
		}, 400, payment.CodeProcessingModeMismatch, ""},
		{"LiveChargeWithoutLiveAcquirer", func(t *testing.T) (string, any) {
			tok := f.tokenAt(t, server(f.a1Live), cardBody("4012888888881881"))
			return server(f.a1Live), chargeBody(jstr(tok, "id"), 1000, "JPY")
		}, 400, payment.CodeNoGatewaysAvailable, ""},
		{"DeletedToken", func(t *testing.T) (string, any) {
			tok := f.token(t, pan, "type", "recurring")
			rec := f.do(t, "DELETE", storePath(f.storeA1, "/tokens/"+tok), server(f.a1), nil)
			if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
				t.Fatalf("DELETE answered %d %q, want an empty 204", rec.Code, rec.Body)
			}
			got := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens/"+tok), server(f.a1), nil), http.StatusOK)
			if got["active"] != false {
				t.Errorf("deleted token active = %v", got["active"])
			}
			return server(f.a1), chargeBody(tok, 1000, "JPY")
		}, 400, payment.CodeTokenExpired, ""},
		{"UnknownToken", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(payment.NewID().String(), 1000, "JPY")
		}, 404, payment.CodeNotFound, ""},
		{"TokenIDNotAUUID", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody("tok_123", 1000, "JPY")
		}, 400, payment.CodeValidation, "transaction_token_id"},
		{"NoTokenID", func(t *testing.T) (string, any) {
			return server(f.a1), map[string]any{"amount": 1000, "currency": "JPY"}
		}, 400, payment.CodeValidation, "transaction_token_id"},
		{"AmountTooLowJPY", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), 49, "JPY")
		}, 400, payment.CodeChargeAmountTooLow, ""},
		{"AmountTooLowUSD", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), 49, "USD")
		}, 400, payment.CodeChargeAmountTooLow, ""},
		{"AmountTooHighJPY", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), 10_000_000, "JPY")
		}, 400, payment.CodeChargeAmountTooHigh, ""},
		{"UnknownCurrency", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), 1000, "XXX")
		}, 400, payment.CodeValidation, "currency"},
		{"NoCurrency", func(t *testing.T) (string, any) {
			return server(f.a1), map[string]any{"transaction_token_id": f.token(t, pan), "amount": 1000}
		}, 400, payment.CodeValidation, "currency"},
		{"AmountAsExponentString", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), "1e3", "JPY")
		}, 400, payment.CodeValidation, "amount"},
		{"AmountAsFloat", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), 1000.5, "JPY")
		}, 400, payment.CodeValidation, "amount"},
		{"AmountZero", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), 0, "JPY")
		}, 400, payment.CodeValidation, "amount"},
		{"AmountNegative", func(t *testing.T) (string, any) {
			return server(f.a1), chargeBody(f.token(t, pan), -1000, "JPY")
		}, 400, payment.CodeValidation, "amount"},
		{"MerchantToken", func(t *testing.T) (string, any) {
			return server(f.merchA), chargeBody(f.token(t, pan), 1000, "JPY")
		}, 403, payment.CodeInvalidPermissions, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			auth, b := c.setup(t)
			var fields []string
			if c.field != "" {
				fields = append(fields, c.field)
			}
			wantError(t, f.do(t, "POST", "/charges", auth, b), c.status, c.code, fields...)
		})
	}

	t.Run("NoTestCardInLiveMode", func(t *testing.T) {
		for _, pan := range []string{"4242424242424242", "4111111111111111", "4000020000000000", "378282246310005"} {
			wantError(t, f.do(t, "POST", "/tokens", server(f.a1Live), cardBody(pan)), http.StatusBadRequest, payment.CodeNoTestCardInLiveMode)
		}
	})

	t.Run("DuplicateRecurringCharge", func(t *testing.T) {
		// The duplicate-charge rule: the same recurring token, amount and currency
		// within 30 s is recorded as failed with 311, never authorised.
		tok := f.token(t, pan, "type", "recurring")
		first := f.charge(t, tok, 1000, "JPY")
		dup := ok(t, f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 1000, "JPY")), http.StatusCreated)
		if jstr(dup, "status") != "failed" {
			t.Errorf("duplicate charge status %q, want failed", jstr(dup, "status"))
		}
		checkPaymentError(t, dup, 311, "TOO_MANY_CHARGE_REQUESTS")
		f.charge(t, tok, 1000, "USD")
		f.clock.Advance(31 * time.Second)
		later := f.charge(t, tok, 1000, "JPY")
		f.process(t)
		for _, id := range []string{first, later} {
			if st := jstr(f.getCharge(t, id), "status"); st != "successful" {
				t.Errorf("charge %s is %s", id, st)
			}
		}
		if got := f.getCharge(t, jstr(dup, "id")); jstr(got, "status") != "failed" {
			t.Errorf("duplicate after processing: %v", got["status"])
		}
	})

	t.Run("AmountBounds", func(t *testing.T) {
		for _, c := range []struct {
			amount   int
			currency string
		}{{50, "JPY"}, {9_999_999, "JPY"}, {50, "USD"}, {99_999_99, "USD"}} {
			f.chargeAt(t, server(f.a1), chargeBody(f.token(t, pan), c.amount, c.currency))
		}
	})

	t.Run("RecurringTokenChargedRepeatedly", func(t *testing.T) {
		tok := f.token(t, pan, "type", "recurring")
		var charges []string
		for i := range 3 {
			charges = append(charges, f.charge(t, tok, 1000+i, "JPY"))
			f.process(t)
		}
		for i, id := range charges {
			ch := f.getCharge(t, id)
			if jstr(ch, "status") != "successful" || jnum(ch, "charged_amount") != float64(1000+i) {
				t.Errorf("charge %d: %v %v", i, ch["status"], ch["charged_amount"])
			}
			if jstr(ch, "transaction_token_type") != "recurring" {
				t.Errorf("transaction_token_type %v", ch["transaction_token_type"])
			}
		}
		got := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens/"+tok), server(f.a1), nil), http.StatusOK)
		if got["last_used_on"] == nil || got["active"] != true {
			t.Errorf("recurring token after use: last_used_on %v active %v", got["last_used_on"], got["active"])
		}
	})
}

// ---------------------------------------------------------------------------
// 3. Response shapes

func TestPaymentShapes(t *testing.T) {
	f := newPayFixture(t, payOptions{})

	t.Run("Token", func(t *testing.T) {
		b := withData(cardBody("4242424242424242"),
			"exp_month", "09", "exp_year", 2031, "line1", "1-2-3 Shibuya", "city", "Tokyo", "country", "JP", "zip", "150-0002",
			"phone_number", map[string]any{"country_code": 81, "local_number": "0312345678"})
		b = with(b, "metadata", map[string]any{"order_id": 42, "note": "x"})
		rec := f.do(t, "POST", "/tokens", server(f.a1), b)
		tok := ok(t, rec, http.StatusCreated)
		checkSnakeCase(t, "token", tok)
		requireKeys(t, "token", tok, "id", "store_id", "merchant_id", "email", "payment_type", "active", "mode", "type",
			"usage_limit", "metadata", "created_on", "updated_on", "last_used_on", "data")
		if jstr(tok, "store_id") != f.storeA1.String() || jstr(tok, "payment_type") != "card" || jstr(tok, "type") != "one_time" ||
			jstr(tok, "mode") != "test" || tok["active"] != true || jstr(tok, "email") != "buyer@example.com" {
			t.Errorf("token %v", tok)
		}
		if !jhasNull(tok, "last_used_on") {
			t.Errorf("last_used_on = %v, want null", tok["last_used_on"])
		}
		if !wireTime.MatchString(jstr(tok, "created_on")) {
			t.Errorf("created_on %q", jstr(tok, "created_on"))
		}
		card := object(t, object(t, tok, "data"), "card")
		requireKeys(t, "data.card", card, "cardholder", "exp_month", "exp_year", "card_bin", "last_four", "brand",
			"card_type", "country", "category", "issuer", "sub_brand")
		if card["card_bin"] != "424242" || card["last_four"] != "4242" || card["brand"] != "visa" ||
			card["exp_month"] != 9.0 || card["exp_year"] != 2031.0 || card["cardholder"] != "Taro Yamada" {
			t.Errorf("data.card = %v", card)
		}
		for _, k := range []string{"card_number", "number", "cvv", "cvc"} {
			if _, has := card[k]; has {
				t.Errorf("data.card has %s", k)
			}
		}
		requireKeys(t, "data.cvv_authorize", object(t, object(t, tok, "data"), "cvv_authorize"), "enabled", "status", "currency")
		billing := object(t, object(t, tok, "data"), "billing")
		if billing["line1"] != "1-2-3 Shibuya" || billing["city"] != "Tokyo" || billing["zip"] != "150-0002" ||
			jnum(billing, "phone_number.country_code") != 81 || jstr(billing, "phone_number.local_number") != "0312345678" {
			t.Errorf("data.billing = %v", billing)
		}
		if !strings.Contains(rec.Body.String(), `"order_id":42`) {
			t.Errorf("metadata number not kept: %s", rec.Body)
		}
		got := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens/"+jstr(tok, "id")), server(f.a1), nil), http.StatusOK)
		if fmt.Sprint(got["data"]) != fmt.Sprint(tok["data"]) || got["id"] != tok["id"] {
			t.Errorf("GET token differs:\n%v\n%v", got, tok)
		}
	})

	t.Run("Charge", func(t *testing.T) {
		tok := f.token(t, "4000020000000000")
		rec := f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 1250, "usd", "metadata", map[string]any{"order_id": "A-1", "keep": 1}))
		ch := ok(t, rec, http.StatusCreated)
		checkSnakeCase(t, "charge", ch)
		requireKeys(t, "charge", ch, "id", "store_id", "merchant_id", "transaction_token_id", "transaction_token_type",
			"subscription_id", "requested_amount", "requested_currency", "requested_amount_formatted", "charged_amount",
			"charged_currency", "charged_amount_formatted", "status", "error", "metadata", "mode", "created_on", "updated_on")
		raw := rec.Body.String()
		for _, want := range []string{`"requested_amount_formatted":12.5`, `"requested_currency":"USD"`, `"charged_amount":null`,
			`"charged_currency":null`, `"charged_amount_formatted":null`, `"status":"pending"`, `"error":null`,
			`"transaction_token_type":"one_time"`, `"mode":"test"`} {
			if !strings.Contains(raw, want) {
				t.Errorf("charge lacks %s: %s", want, raw)
			}
		}
		id := jstr(ch, "id")
		f.process(t)
		byStore := f.do(t, "GET", f.chargePath(id), server(f.a1), nil)
		byID := f.do(t, "GET", "/charges/"+id, server(f.a1), nil)
		ok(t, byStore, http.StatusOK)
		if byStore.Body.String() != byID.Body.String() {
			t.Errorf("GET /charges/{id} and GET /stores/{storeId}/charges/{id} differ:\n%s\n%s", byID.Body, byStore.Body)
		}
		if !strings.Contains(byID.Body.String(), `"charged_amount_formatted":12.5`) {
			t.Errorf("charged_amount_formatted: %s", byID.Body)
		}

		patched := ok(t, f.do(t, "PATCH", f.chargePath(id), server(f.a1), map[string]any{"metadata": map[string]any{"order_id": "B-2", "new": true}}), http.StatusOK)
		md := object(t, patched, "metadata")
		if md["order_id"] != "B-2" || md["keep"] != 1.0 || md["new"] != true || len(md) != 3 {
			t.Errorf("merged metadata = %v", md)
		}
		if got := object(t, f.getCharge(t, id), "metadata"); fmt.Sprint(got) != fmt.Sprint(md) {
			t.Errorf("stored metadata = %v", got)
		}
	})

	t.Run("Formatted", func(t *testing.T) {
		for _, c := range []struct {
			amount   int
			currency string
			want     string
		}{{1000, "JPY", "1000"}, {1200, "USD", "12"}, {1205, "EUR", "12.05"}, {99_999_99, "USD", "99999.99"}} {
			rec := f.do(t, "POST", "/charges", server(f.a1), chargeBody(f.token(t, "4000020000000000"), c.amount, c.currency))
			if want := `"requested_amount_formatted":` + c.want + `,`; !strings.Contains(rec.Body.String(), want) {
				t.Errorf("%d %s: want %s in %s", c.amount, c.currency, want, rec.Body)
			}
		}
		f.process(t)
	})

	t.Run("RefundAndCancel", func(t *testing.T) {
		id := f.paidCharge(t, "4000020000000000", 1000, true)
		rec := f.do(t, "POST", f.chargePath(id)+"/refunds", server(f.a1),
			map[string]any{"amount": 400, "currency": "JPY", "reason": "customer_request", "message": "sorry", "metadata": map[string]any{"a": 1}})
		rf := ok(t, rec, http.StatusCreated)
		checkSnakeCase(t, "refund", rf)
		requireKeys(t, "refund", rf, "id", "store_id", "charge_id", "status", "amount", "currency", "amount_formatted",
			"reason", "message", "error", "metadata", "mode", "created_on", "updated_on")
		if jstr(rf, "status") != "pending" || jstr(rf, "charge_id") != id || jnum(rf, "amount") != 400 || jstr(rf, "currency") != "JPY" ||
			jstr(rf, "reason") != "customer_request" || jstr(rf, "message") != "sorry" || jstr(rf, "mode") != "test" || !jhasNull(rf, "error") {
			t.Errorf("refund %v", rf)
		}
		if !strings.Contains(rec.Body.String(), `"amount_formatted":400`) {
			t.Errorf("amount_formatted: %s", rec.Body)
		}
		wantError(t, f.do(t, "POST", f.chargePath(id)+"/refunds", server(f.a1), map[string]any{"amount": 1, "currency": "JPY", "reason": "chargeback"}),
			http.StatusBadRequest, payment.CodeValidation, "reason")
		f.process(t)
		rfPath := f.chargePath(id) + "/refunds/" + jstr(rf, "id")
		if got := ok(t, f.do(t, "GET", rfPath, server(f.a1), nil), http.StatusOK); jstr(got, "status") != "successful" {
			t.Errorf("refund status %v", got["status"])
		}
		patched := ok(t, f.do(t, "PATCH", rfPath, server(f.a1), map[string]any{"reason": "duplicate", "metadata": map[string]any{"b": "2"}}), http.StatusOK)
		if jstr(patched, "reason") != "duplicate" || jstr(patched, "message") != "sorry" || fmt.Sprint(patched["metadata"]) != "map[a:1 b:2]" {
			t.Errorf("patched refund %v", patched)
		}

		auth := f.paidCharge(t, "4000020000000000", 1000, false)
		cn := ok(t, f.do(t, "POST", f.chargePath(auth)+"/cancels", server(f.a1), map[string]any{"metadata": map[string]any{"why": "oos"}}), http.StatusCreated)
		checkSnakeCase(t, "cancel", cn)
		requireKeys(t, "cancel", cn, "id", "charge_id", "store_id", "status", "error", "metadata", "mode", "created_on", "updated_on")
		if jstr(cn, "status") != "pending" || jstr(cn, "charge_id") != auth || jstr(cn, "store_id") != f.storeA1.String() || jstr(cn, "metadata.why") != "oos" {
			t.Errorf("cancel %v", cn)
		}
		f.process(t)
		cnPath := f.chargePath(auth) + "/cancels/" + jstr(cn, "id")
		patchedCn := ok(t, f.do(t, "PATCH", cnPath, server(f.a1), map[string]any{"metadata": map[string]any{"by": "ops"}}), http.StatusOK)
		if jstr(patchedCn, "status") != "successful" || fmt.Sprint(patchedCn["metadata"]) != "map[by:ops why:oos]" {
			t.Errorf("patched cancel %v", patchedCn)
		}
	})

	t.Run("CaptureBodyNotJSON", func(t *testing.T) {
		// A plain-text body on capture is a validation error, not a 500.
		rec := f.capture(t, f.paidCharge(t, "4000020000000000", 1000, false), "amount=100")
		wantError(t, rec, http.StatusBadRequest, payment.CodeValidation)
	})
}

// ---------------------------------------------------------------------------
// Long polling

func TestChargeLongPoll(t *testing.T) {
	t.Run("WorkerStopped", func(t *testing.T) {
		const wait = 300 * time.Millisecond
		f := newPayFixture(t, payOptions{pollWait: wait})
		id := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY")
		start := time.Now()
		ch := ok(t, f.do(t, "GET", f.chargePath(id)+"?polling=true", server(f.a1), nil), http.StatusOK)
		elapsed := time.Since(start)
		if jstr(ch, "status") != "pending" {
			t.Errorf("status %q, want pending", jstr(ch, "status"))
		}
		if elapsed < wait-20*time.Millisecond || elapsed > wait+2*time.Second {
			t.Errorf("long poll answered after %v, want about %v", elapsed, wait)
		}
		// A final charge answers at once.
		f.process(t)
		start = time.Now()
		ch = ok(t, f.do(t, "GET", "/charges/"+id+"?polling=true", server(f.a1), nil), http.StatusOK)
		if jstr(ch, "status") != "successful" || time.Since(start) >= wait {
			t.Errorf("poll of a final charge: %v after %v", ch["status"], time.Since(start))
		}
	})

	t.Run("WorkerRunning", func(t *testing.T) {
		kessaitest.CheckGoroutines(t)
		const wait = 5 * time.Second
		f := newPayFixture(t, payOptions{pollWait: wait, latency: 150 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.svc.Work.RunWorker(ctx, 50*time.Millisecond, slog.New(slog.DiscardHandler))
		}()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		poll := func(t *testing.T, path, want string) map[string]any {
			t.Helper()
			start := time.Now()
			m := ok(t, f.do(t, "GET", path+"?polling=true", server(f.a1), nil), http.StatusOK)
			if elapsed := time.Since(start); elapsed > wait/2 {
				t.Errorf("long poll of %s took %v", path, elapsed)
			}
			if jstr(m, "status") != want {
				t.Errorf("%s: status %q, want %q", path, jstr(m, "status"), want)
			}
			return m
		}
		id := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY")
		poll(t, f.chargePath(id), "successful")

		rf := ok(t, f.refund(t, id, 100, "JPY"), http.StatusCreated)
		poll(t, f.chargePath(id)+"/refunds/"+jstr(rf, "id"), "successful")

		auth := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY", "capture", false)
		poll(t, "/charges/"+auth, "authorized")
		cn := ok(t, f.cancel(t, auth), http.StatusCreated)
		poll(t, f.chargePath(auth)+"/cancels/"+jstr(cn, "id"), "successful")
		poll(t, f.chargePath(auth), "canceled")

		capt := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY", "capture", false)
		poll(t, f.chargePath(capt), "authorized")
		if rec := f.capture(t, capt, "null"); rec.Code != http.StatusCreated {
			t.Fatalf("capture %d", rec.Code)
		}
		// An authorised charge with a capture under way is still being
		// processed: the poll waits for the capture.
		poll(t, f.chargePath(capt), "successful")
	})

	// The shop plugins call $charge->cancel(); $charge->awaitResult(5)
	// and expect canceled: a charge with a cancel or a refund under way is
	// still being processed, and its poll waits for the operation, woken
	// when the worker finishes it. No worker runs here: the acquirer
	// answers only when the test runs the pass.
	t.Run("OperationUnderWay", func(t *testing.T) {
		const wait = 5 * time.Second
		for _, tc := range []struct {
			name    string
			capture bool
			// start asks for the operation and returns its path.
			start      func(t *testing.T, f *payFixture, id string) string
			wantCharge string
		}{
			{"Cancel", false, func(t *testing.T, f *payFixture, id string) string {
				return f.chargePath(id) + "/cancels/" + jstr(ok(t, f.cancel(t, id), http.StatusCreated), "id")
			}, "canceled"},
			{"Refund", true, func(t *testing.T, f *payFixture, id string) string {
				return f.chargePath(id) + "/refunds/" + jstr(ok(t, f.refund(t, id, 400, "JPY"), http.StatusCreated), "id")
			}, "successful"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newPayFixture(t, payOptions{pollWait: wait})
				id := f.paidCharge(t, "4000020000000000", 1000, tc.capture)
				op := tc.start(t, f, id)
				var worked atomic.Bool
				type answer struct {
					charge  map[string]any
					worked  bool
					elapsed time.Duration
				}
				answered := make(chan answer, 1)
				go func() {
					start := time.Now()
					rec := f.do(t, "GET", f.chargePath(id)+"?polling=true", server(f.a1), nil)
					var m map[string]any
					_ = json.Unmarshal(rec.Body.Bytes(), &m)
					answered <- answer{m, worked.Load(), time.Since(start)}
				}()
				select {
				case a := <-answered:
					t.Fatalf("the poll answered %q at once, while the %s was pending", jstr(a.charge, "status"), tc.name)
				case <-time.After(150 * time.Millisecond):
				}
				worked.Store(true)
				f.process(t)
				a := <-answered
				if got := jstr(a.charge, "status"); got != tc.wantCharge || !a.worked || a.elapsed > wait/2 {
					t.Errorf("the poll answered %q after %v (worker run: %v), want %q as soon as the worker finished the %s",
						got, a.elapsed.Round(time.Millisecond), a.worked, tc.wantCharge, tc.name)
				}
				if st := jstr(ok(t, f.do(t, "GET", op, server(f.a1), nil), http.StatusOK), "status"); st != "successful" {
					t.Errorf("the %s ended %s", tc.name, st)
				}
			})
		}
	})
}

// ---------------------------------------------------------------------------
// 4. Lists

func TestPaymentLists(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	step := func() time.Time {
		f.clock.Advance(time.Hour)
		return f.clock.Now()
	}
	// Mastercard: its refunds succeed (4242's fail).
	recurring := f.token(t, "5555555555554444", "type", "recurring")
	var created []time.Time
	c1 := f.charge(t, recurring, 1000, "JPY", "metadata", map[string]any{"order_id": 123})
	created = append(created, f.clock.Now())
	step()
	c2 := f.charge(t, recurring, 2000, "JPY", "metadata", map[string]any{"order_id": "123"})
	created = append(created, f.clock.Now())
	step()
	c3 := f.charge(t, recurring, 1250, "USD")
	created = append(created, f.clock.Now())
	step()
	c4 := f.charge(t, recurring, 3000, "JPY", "capture", false)
	created = append(created, f.clock.Now())
	step()
	failedTok := f.token(t, "4111111111111111")
	c5 := f.charge(t, failedTok, 1500, "JPY", "metadata", map[string]any{"order_id": 124})
	created = append(created, f.clock.Now())
	step()
	a2Tok := f.tokenAt(t, server(f.a2), cardBody("5555555555554444"))
	c6 := jstr(f.chargeAt(t, server(f.a2), chargeBody(jstr(a2Tok, "id"), 1000, "JPY")), "id")
	f.process(t)
	step()
	rf := jstr(ok(t, f.refund(t, c2, 500, "JPY"), http.StatusCreated), "id")
	cn := jstr(ok(t, f.cancel(t, c4), http.StatusCreated), "id")
	f.process(t)
	all := []string{c1, c2, c3, c4, c5}

	list := func(t *testing.T, path, auth string) []string {
		t.Helper()
		return listIDs(t, ok(t, f.do(t, "GET", path, auth, nil), http.StatusOK))
	}
	ts := func(i int) string { return url.QueryEscape(created[i].Format(time.RFC3339Nano)) }

	t.Run("ChargeFilters", func(t *testing.T) {
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"", all},
			{"status=successful", []string{c1, c2, c3}},
			{"status=failed", []string{c5}},
			{"status=canceled", []string{c4}},
			{"status=authorized", nil},
			{"mode=test", all},
			{"mode=live", nil},
			{"currency=USD", []string{c3}},
			{"currency=jpy", []string{c1, c2, c4, c5}},
			{"from=" + ts(1) + "&to=" + ts(3), []string{c2, c3, c4}},
			{"from=" + ts(3), []string{c4, c5}},
			{"to=" + ts(0), []string{c1}},
			{"amount_from=1500&amount_to=2000", []string{c2, c5}},
			{"amount_from=2500", []string{c4}},
			{"transaction_token_id=" + recurring, []string{c1, c2, c3, c4}},
			{"transaction_token_id=" + failedTok, []string{c5}},
			{"last_four=1111", []string{c5}},
			{"last_four=4444", []string{c1, c2, c3, c4}},
			{"metadata=" + url.QueryEscape("order_id: 123"), []string{c1, c2}},
			{"metadata=" + url.QueryEscape("order_id:124"), []string{c5}},
			{"status=successful&currency=JPY&metadata=" + url.QueryEscape("order_id: 123"), []string{c1, c2}},
		} {
			for _, prefix := range []string{"/charges", storePath(f.storeA1, "/charges")} {
				path := prefix + "?limit=100"
				if c.query != "" {
					path += "&" + c.query
				}
				if got := list(t, path, a1); !sameSet(got, c.want) {
					t.Errorf("GET %s = %v, want %v", path, got, c.want)
				}
			}
		}
		for _, q := range []string{"status=done", "mode=sandbox", "from=yesterday", "amount_from=ten", "transaction_token_id=x", "metadata=nocolon"} {
			wantError(t, f.do(t, "GET", "/charges?"+q, a1, nil), http.StatusBadRequest, payment.CodeValidation, strings.Split(q, "=")[0])
		}
	})

	t.Run("ChargeScopes", func(t *testing.T) {
		if got := list(t, "/charges?limit=100", server(f.merchA)); !sameSet(got, append(slices.Clone(all), c6)) {
			t.Errorf("merchant token /charges = %v", got)
		}
		if got := list(t, storePath(f.storeA2, "/charges"), server(f.merchA)); !sameSet(got, []string{c6}) {
			t.Errorf("merchant token /stores/A2/charges = %v", got)
		}
		if got := list(t, "/charges", server(f.a2)); !sameSet(got, []string{c6}) {
			t.Errorf("A2 /charges = %v", got)
		}
		wantError(t, f.do(t, "GET", storePath(f.storeA2, "/charges"), a1, nil), http.StatusNotFound, payment.CodeNotFound)
		// Lists need the secret.
		if rec := f.do(t, "GET", "/charges", browser(f.a1), nil, origin(payShopOrigin)); rec.Code != http.StatusForbidden {
			t.Errorf("browser list of charges: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("Tokens", func(t *testing.T) {
		want := []string{recurring, failedTok}
		for _, path := range []string{"/tokens", storePath(f.storeA1, "/tokens")} {
			if got := list(t, path, a1); !sameSet(got, want) {
				t.Errorf("GET %s = %v, want %v", path, got, want)
			}
		}
		if got := list(t, "/tokens?type=recurring", a1); !sameSet(got, []string{recurring}) {
			t.Errorf("type=recurring: %v", got)
		}
		if got := list(t, "/tokens?type=one_time", a1); !sameSet(got, []string{failedTok}) {
			t.Errorf("type=one_time: %v", got)
		}
		if got := list(t, "/tokens?mode=live", a1); len(got) != 0 {
			t.Errorf("mode=live: %v", got)
		}
		if got := list(t, "/tokens", server(f.merchA)); !sameSet(got, append(slices.Clone(want), jstr(a2Tok, "id"))) {
			t.Errorf("merchant /tokens = %v", got)
		}
		if got := list(t, storePath(f.storeA2, "/tokens"), server(f.merchA)); !sameSet(got, []string{jstr(a2Tok, "id")}) {
			t.Errorf("merchant /stores/A2/tokens = %v", got)
		}
	})

	t.Run("RefundsAndCancels", func(t *testing.T) {
		if got := list(t, f.chargePath(c2)+"/refunds", a1); !sameSet(got, []string{rf}) {
			t.Errorf("refunds of c2 = %v", got)
		}
		if got := list(t, f.chargePath(c1)+"/refunds", a1); len(got) != 0 {
			t.Errorf("refunds of c1 = %v", got)
		}
		if got := list(t, f.chargePath(c4)+"/cancels", a1); !sameSet(got, []string{cn}) {
			t.Errorf("cancels of c4 = %v", got)
		}
		if got := list(t, f.chargePath(c2)+"/cancels", a1); len(got) != 0 {
			t.Errorf("cancels of c2 = %v", got)
		}
		// Paginated like every list.
		var rfs []string
		for range 3 {
			rfs = append(rfs, jstr(ok(t, f.refund(t, c1, 100, "JPY"), http.StatusCreated), "id"))
		}
		page1 := ok(t, f.do(t, "GET", f.chargePath(c1)+"/refunds?limit=2", a1, nil), http.StatusOK)
		got1 := listIDs(t, page1)
		if !slices.Equal(got1, []string{rfs[2], rfs[1]}) || page1["has_more"] != true {
			t.Errorf("refunds page 1 = %v has_more %v", got1, page1["has_more"])
		}
		page2 := ok(t, f.do(t, "GET", f.chargePath(c1)+"/refunds?limit=2&cursor="+got1[1], a1, nil), http.StatusOK)
		if got := listIDs(t, page2); !slices.Equal(got, []string{rfs[0]}) || page2["has_more"] != false {
			t.Errorf("refunds page 2 = %v has_more %v", got, page2["has_more"])
		}
		f.process(t)
	})

	t.Run("TransactionHistory", func(t *testing.T) {
		type line struct{ typ, status string }
		history := func(t *testing.T, path, auth string) map[string]line {
			t.Helper()
			m := ok(t, f.do(t, "GET", path, auth, nil), http.StatusOK)
			out := map[string]line{}
			for _, it := range m["items"].([]any) {
				e := it.(map[string]any)
				id := jstr(e, "id")
				if _, dup := out[id]; dup {
					t.Errorf("%s: %s appears twice", path, id)
				}
				out[id] = line{jstr(e, "type"), jstr(e, "status")}
				requireKeys(t, "transaction", e, "id", "store_id", "charge_id", "type", "status", "amount", "currency",
					"amount_formatted", "mode", "created_on")
			}
			return out
		}
		refunds := list(t, f.chargePath(c1)+"/refunds", a1)
		want := map[string]line{
			c1: {"charge", "successful"}, c2: {"charge", "successful"}, c3: {"charge", "successful"},
			c4: {"charge", "canceled"}, c5: {"charge", "failed"}, rf: {"refund", "successful"},
		}
		for _, id := range refunds {
			want[id] = line{"refund", "successful"}
		}
		for _, path := range []string{"/transaction_history?limit=100", storePath(f.storeA1, "/transaction_history?limit=100")} {
			if got := history(t, path, a1); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("GET %s =\n%v, want\n%v", path, got, want)
			}
		}
		merchant := history(t, "/transaction_history?limit=100", server(f.merchA))
		if len(merchant) != len(want)+1 || merchant[c6] != (line{"charge", "successful"}) {
			t.Errorf("merchant history = %v", merchant)
		}
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"type=refund", append([]string{rf}, refunds...)},
			{"type=charge", all},
			{"status=failed", []string{c5}},
			{"status=canceled&type=charge", []string{c4}},
			{"mode=live", nil},
			{"mode=test&type=charge&status=successful", []string{c1, c2, c3}},
			{"from=" + ts(1) + "&to=" + ts(3), []string{c2, c3, c4}},
			{"from=" + url.QueryEscape(created[4].Add(time.Minute).Format(time.RFC3339)) + "&type=refund", append([]string{rf}, refunds...)},
		} {
			for _, prefix := range []string{"/transaction_history", storePath(f.storeA1, "/transaction_history")} {
				path := prefix + "?limit=100&" + c.query
				if got := list(t, path, a1); !sameSet(got, c.want) {
					t.Errorf("GET %s = %v, want %v", path, got, c.want)
				}
			}
		}
		wantError(t, f.do(t, "GET", "/transaction_history?type=cancel", a1, nil), http.StatusBadRequest, payment.CodeValidation, "type")
	})
}

func TestChargePagination(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	tok := f.token(t, "4000020000000000", "type", "recurring")
	var asc []string
	for i := range 25 {
		asc = append(asc, f.charge(t, tok, 100+i, "JPY"))
	}
	desc := slices.Clone(asc)
	slices.Reverse(desc)

	walk := func(t *testing.T, base, direction string) []string {
		t.Helper()
		var got []string
		cursor := ""
		for page := 0; ; page++ {
			path := base + "?limit=10&cursor_direction=" + direction
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			m := ok(t, f.do(t, "GET", path, a1, nil), http.StatusOK)
			ids := listIDs(t, m)
			got = append(got, ids...)
			more := m["has_more"] == true
			if wantMore := page < 2; more != wantMore || len(ids) != []int{10, 10, 5}[min(page, 2)] {
				t.Fatalf("%s page %d: %d items, has_more %v", path, page, len(ids), more)
			}
			if !more {
				return got
			}
			cursor = ids[len(ids)-1]
		}
	}
	for _, base := range []string{"/charges", storePath(f.storeA1, "/charges")} {
		if got := walk(t, base, "desc"); !slices.Equal(got, desc) {
			t.Errorf("%s desc = %v, want %v", base, got, desc)
		}
		if got := walk(t, base, "asc"); !slices.Equal(got, asc) {
			t.Errorf("%s asc = %v, want %v", base, got, asc)
		}
	}
	// Back and forth from the middle: after the second page (newest first),
	// asc from its first item gives the first page's items, oldest first.
	second := desc[10:20]
	back := listIDs(t, ok(t, f.do(t, "GET", "/charges?limit=10&cursor_direction=asc&cursor="+second[0], a1, nil), http.StatusOK))
	want := slices.Clone(desc[:10])
	slices.Reverse(want)
	if !slices.Equal(back, want) {
		t.Errorf("back from page 2 = %v, want %v", back, want)
	}
	first := ok(t, f.do(t, "GET", "/charges", a1, nil), http.StatusOK)
	if got := listIDs(t, first); !slices.Equal(got, desc[:10]) || first["has_more"] != true {
		t.Errorf("default page = %v has_more %v", got, first["has_more"])
	}
	for _, q := range []string{"limit=0", "limit=101", "cursor=nope", "cursor_direction=up"} {
		if rec := f.do(t, "GET", "/charges?"+q, a1, nil); rec.Code != http.StatusBadRequest {
			t.Errorf("?%s: %d", q, rec.Code)
		}
	}
	f.process(t)
	if got := listIDs(t, ok(t, f.do(t, "GET", "/transaction_history?limit=25&cursor_direction=asc", a1, nil), http.StatusOK)); !slices.Equal(got, asc) {
		t.Errorf("transaction_history asc = %v", got)
	}
}

// ---------------------------------------------------------------------------
// 5. The PCI DSS rule

func TestDirectCardTokenCreation(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	body := cardBody("4000020000000000")
	for _, c := range []struct {
		name, auth, origin string
		status             int
		code               payment.Code
	}{
		{"NonCompliantServer", server(f.np), "", 401, payment.CodeDirectCardTokenDisabled},
		{"NonCompliantServerClaimingGatewayOrigin", server(f.np), publicOrigin, 401, payment.CodeDirectCardTokenDisabled},
		{"NonCompliantMerchantPage", browser(f.np), npShopOrigin, 401, payment.CodeDirectCardTokenDisabled},
		{"NonCompliantFromElsewhere", browser(f.np), "https://evil.example", 401, payment.CodeInvalidDomain},
		{"MerchantTokenServer", server(f.merchA), "", 403, payment.CodeInvalidPermissions},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []reqOpt
			if c.origin != "" {
				opts = append(opts, origin(c.origin))
			}
			wantError(t, f.do(t, "POST", "/tokens", c.auth, body, opts...), c.status, c.code)
		})
	}
	t.Run("NothingStored", func(t *testing.T) {
		m := ok(t, f.do(t, "GET", storePath(f.storeNP, "/tokens"), server(f.np), nil), http.StatusOK)
		if got := listIDs(t, m); len(got) != 0 {
			t.Errorf("refused tokens were stored: %v", got)
		}
	})
	t.Run("NonCompliantThroughGatewayPage", func(t *testing.T) {
		tok := f.tokenAt(t, browser(f.np), body, origin(publicOrigin))
		if jstr(tok, "store_id") != f.storeNP.String() {
			t.Errorf("store_id %v", tok["store_id"])
		}
		// The widget frame charges it, the merchant's server reads it.
		ch := f.chargeAt(t, browser(f.np), chargeBody(jstr(tok, "id"), 1000, "JPY"), origin(publicOrigin))
		f.process(t)
		got := ok(t, f.do(t, "GET", storePath(f.storeNP, "/charges/"+jstr(ch, "id")), server(f.np), nil), http.StatusOK)
		if jstr(got, "status") != "successful" {
			t.Errorf("status %v", got["status"])
		}
		m := ok(t, f.do(t, "GET", storePath(f.storeNP, "/tokens"), server(f.np), nil), http.StatusOK)
		if got := listIDs(t, m); !slices.Equal(got, []string{jstr(tok, "id")}) {
			t.Errorf("tokens = %v", got)
		}
	})
	t.Run("CompliantStore", func(t *testing.T) {
		f.tokenAt(t, server(f.a1), body)
		f.tokenAt(t, browser(f.a1), body, origin(payShopOrigin))
		f.tokenAt(t, browser(f.a1), body, origin(publicOrigin))
	})
	t.Run("MerchantTokenCharge", func(t *testing.T) {
		wantError(t, f.do(t, "POST", "/charges", server(f.merchA), chargeBody(f.token(t, "4000020000000000"), 1000, "JPY")),
			http.StatusForbidden, payment.CodeInvalidPermissions)
	})
}

// ---------------------------------------------------------------------------
// 6. Tenancy

func TestPaymentTenancy(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	tok := f.token(t, "4000020000000000", "type", "recurring", "metadata", map[string]any{"k": "v"})
	// Different amounts: the same one within 30 s would be a duplicate (311).
	paid := f.charge(t, tok, 1000, "JPY", "metadata", map[string]any{"k": "v"})
	auth := f.charge(t, tok, 1001, "JPY", "capture", false)
	f.process(t)
	rf := jstr(ok(t, f.refund(t, paid, 100, "JPY"), http.StatusCreated), "id")
	cn := jstr(ok(t, f.cancel(t, auth), http.StatusCreated), "id")
	auth2 := f.charge(t, tok, 1002, "JPY", "capture", false)
	oneTime := f.token(t, "4000020000000000")
	f.process(t)

	a := func(rest string) string { return storePath(f.storeA1, rest) }
	md := map[string]any{"metadata": map[string]any{"k": "stolen"}}
	money := map[string]any{"amount": 100, "currency": "JPY"}
	for _, other := range []struct {
		name    string
		tok     *payment.IssuedAppToken
		storeID uuid.UUID
	}{{"OtherMerchant", f.b1, f.storeB1}, {"OtherStoreSameMerchant", f.a2, f.storeA2}} {
		own := func(rest string) string { return storePath(other.storeID, rest) }
		t.Run(other.name, func(t *testing.T) {
			for _, r := range []struct {
				method, path string
				body         any
			}{
				{"GET", a("/tokens/" + tok), nil},
				{"PATCH", a("/tokens/" + tok), md},
				{"DELETE", a("/tokens/" + tok), nil},
				{"GET", own("/tokens/" + tok), nil},
				{"PATCH", own("/tokens/" + tok), md},
				{"DELETE", own("/tokens/" + tok), nil},
				{"GET", "/charges/" + paid, nil},
				{"GET", "/charges/" + paid + "?polling=true", nil},
				{"GET", a("/charges/" + paid), nil},
				{"GET", own("/charges/" + paid), nil},
				{"PATCH", a("/charges/" + paid), md},
				{"PATCH", own("/charges/" + paid), md},
				{"POST", a("/charges/" + auth2 + "/capture"), "null"},
				{"POST", own("/charges/" + auth2 + "/capture"), money},
				{"POST", a("/charges/" + paid + "/refunds"), money},
				{"POST", own("/charges/" + paid + "/refunds"), money},
				{"GET", a("/charges/" + paid + "/refunds"), nil},
				{"GET", own("/charges/" + paid + "/refunds"), nil},
				{"GET", a("/charges/" + paid + "/refunds/" + rf), nil},
				{"GET", own("/charges/" + paid + "/refunds/" + rf), nil},
				{"PATCH", a("/charges/" + paid + "/refunds/" + rf), md},
				{"POST", a("/charges/" + auth2 + "/cancels"), map[string]any{}},
				{"POST", own("/charges/" + auth2 + "/cancels"), map[string]any{}},
				{"GET", a("/charges/" + auth + "/cancels"), nil},
				{"GET", a("/charges/" + auth + "/cancels/" + cn), nil},
				{"GET", own("/charges/" + auth + "/cancels/" + cn), nil},
				{"PATCH", a("/charges/" + auth + "/cancels/" + cn), md},
				{"GET", a("/tokens"), nil},
				{"GET", a("/charges"), nil},
				{"GET", a("/transaction_history"), nil},
			} {
				t.Run(r.method+" "+r.path, func(t *testing.T) {
					wantError(t, f.do(t, r.method, r.path, server(other.tok), r.body), http.StatusNotFound, payment.CodeNotFound)
				})
			}
			// Charging another tenant's token: the other merchant does not
			// learn it exists; a sibling store is told it is the wrong store.
			rec := f.do(t, "POST", "/charges", server(other.tok), chargeBody(oneTime, 1000, "JPY"))
			if other.tok == f.b1 {
				wantError(t, rec, http.StatusNotFound, payment.CodeNotFound)
			} else {
				wantError(t, rec, http.StatusBadRequest, payment.CodeTokenForWrongStore)
			}
			// Their own lists hold nothing of store A1's.
			for _, path := range []string{"/tokens", "/charges", "/transaction_history", own("/charges"), own("/tokens")} {
				m := ok(t, f.do(t, "GET", path, server(other.tok), nil), http.StatusOK)
				for _, id := range listIDs(t, m) {
					if slices.Contains([]string{tok, paid, auth, auth2, oneTime, rf}, id) {
						t.Errorf("GET %s lists %s of store A1", path, id)
					}
				}
			}
		})
	}

	// Another merchant's merchant token, which sees every store of its
	// own merchant, sees nothing of this one's.
	t.Run("OtherMerchantsMerchantToken", func(t *testing.T) {
		mB, err := f.svc.Access.IssueMerchantAppToken(t.Context(), f.merchantB, payment.NewAppToken{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/charges/" + paid, nil},
			{"GET", a("/charges/" + paid), nil},
			{"PATCH", a("/charges/" + paid), md},
			{"POST", a("/charges/" + auth2 + "/capture"), "null"},
			{"POST", a("/charges/" + paid + "/refunds"), money},
			{"GET", a("/charges/" + paid + "/refunds/" + rf), nil},
			{"POST", a("/charges/" + auth2 + "/cancels"), map[string]any{}},
			{"GET", a("/tokens/" + tok), nil},
		} {
			wantError(t, f.do(t, r.method, r.path, server(mB), r.body), http.StatusNotFound, payment.CodeNotFound)
		}
	})

	t.Run("NothingChanged", func(t *testing.T) {
		got := ok(t, f.do(t, "GET", a("/tokens/"+tok), server(f.a1), nil), http.StatusOK)
		if got["active"] != true || jstr(got, "metadata.k") != "v" {
			t.Errorf("token %v", got)
		}
		ch := f.getCharge(t, paid)
		if jstr(ch, "metadata.k") != "v" {
			t.Errorf("charge metadata %v", ch["metadata"])
		}
		if got := listIDs(t, ok(t, f.do(t, "GET", a("/charges/"+paid+"/refunds"), server(f.a1), nil), http.StatusOK)); len(got) != 1 {
			t.Errorf("refunds %v", got)
		}
		if ch := f.getCharge(t, auth2); jstr(ch, "status") != "authorized" {
			t.Errorf("auth2 status %v", ch["status"])
		}
		if got := listIDs(t, ok(t, f.do(t, "GET", a("/charges/"+auth2+"/cancels"), server(f.a1), nil), http.StatusOK)); len(got) != 0 {
			t.Errorf("cancels %v", got)
		}
		f.chargeAt(t, server(f.a1), chargeBody(oneTime, 1000, "JPY"))
	})
}

// TestRefundAndCancelUnderMyCharge (issue 25): a refund or cancel is read
// under the charge in its path, and only that charge's: another
// merchant's refund (or another charge's of the same store) put under a
// charge of mine is NOT_FOUND, as is a cancel. Refund(id) loaded a refund
// of any merchant, and one comparison of charge ids was all that kept
// another merchant's refund unreadable.
func TestRefundAndCancelUnderMyCharge(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	money := map[string]any{"amount": 100, "currency": "JPY"}
	md := map[string]any{"metadata": map[string]any{"k": "stolen"}}
	mine := f.paidCharge(t, "4000020000000000", 1000, true)
	mineAuth := f.paidCharge(t, "4000020000000000", 1001, false)
	sibling := f.paidCharge(t, "4000020000000000", 1002, true)
	siblingAuth := f.paidCharge(t, "4000020000000000", 1003, false)
	siblingRefund := jstr(ok(t, f.refund(t, sibling, 100, "JPY"), http.StatusCreated), "id")
	siblingCancel := jstr(ok(t, f.cancel(t, siblingAuth), http.StatusCreated), "id")

	b := func(rest string) string { return storePath(f.storeB1, rest) }
	tokB := jstr(f.tokenAt(t, server(f.b1), with(cardBody("4000020000000000"), "type", "recurring")), "id")
	theirs := jstr(f.chargeAt(t, server(f.b1), chargeBody(tokB, 5000, "JPY")), "id")
	theirsAuth := jstr(f.chargeAt(t, server(f.b1), chargeBody(tokB, 5001, "JPY", "capture", false)), "id")
	f.process(t)
	theirRefund := jstr(ok(t, f.do(t, "POST", b("/charges/"+theirs+"/refunds"), server(f.b1), money), http.StatusCreated), "id")
	theirCancel := jstr(ok(t, f.do(t, "POST", b("/charges/"+theirsAuth+"/cancels"), server(f.b1), map[string]any{}), http.StatusCreated), "id")
	f.process(t)

	for _, r := range []struct{ name, method, path string }{
		{"another merchant's refund", "GET", f.chargePath(mine) + "/refunds/" + theirRefund},
		{"another merchant's refund, long poll", "GET", f.chargePath(mine) + "/refunds/" + theirRefund + "?polling=true"},
		{"another merchant's refund, PATCH", "PATCH", f.chargePath(mine) + "/refunds/" + theirRefund},
		{"another charge's refund", "GET", f.chargePath(mine) + "/refunds/" + siblingRefund},
		{"another charge's refund, PATCH", "PATCH", f.chargePath(mine) + "/refunds/" + siblingRefund},
		{"another merchant's cancel", "GET", f.chargePath(mineAuth) + "/cancels/" + theirCancel},
		{"another merchant's cancel, PATCH", "PATCH", f.chargePath(mineAuth) + "/cancels/" + theirCancel},
		{"another charge's cancel", "GET", f.chargePath(mineAuth) + "/cancels/" + siblingCancel},
		{"another charge's cancel, PATCH", "PATCH", f.chargePath(mineAuth) + "/cancels/" + siblingCancel},
	} {
		t.Run(r.name, func(t *testing.T) {
			var body any
			if r.method == "PATCH" {
				body = md
			}
			rec := f.do(t, r.method, r.path, server(f.a1), body)
			wantError(t, rec, http.StatusNotFound, payment.CodeNotFound)
			for _, id := range []string{theirRefund, theirCancel, siblingRefund, siblingCancel, theirs, sibling} {
				if strings.Contains(rec.Body.String(), id) {
					t.Errorf("the answer names %s: %s", id, rec.Body)
				}
			}
		})
	}
	// Where they belong, they are found, and unchanged.
	for _, p := range []struct{ path, auth string }{
		{b("/charges/" + theirs + "/refunds/" + theirRefund), server(f.b1)},
		{b("/charges/" + theirsAuth + "/cancels/" + theirCancel), server(f.b1)},
		{f.chargePath(sibling) + "/refunds/" + siblingRefund, server(f.a1)},
		{f.chargePath(siblingAuth) + "/cancels/" + siblingCancel, server(f.a1)},
	} {
		if m := ok(t, f.do(t, "GET", p.path, p.auth, nil), http.StatusOK); jget(m, "metadata.k") != nil {
			t.Errorf("GET %s: metadata %v", p.path, m["metadata"])
		}
	}
}

// ---------------------------------------------------------------------------
// 7. Card data never leaks

// sandboxPANs are every card number of the README's Sandbox table.
var sandboxPANs = []string{
	"4000 0200 0000 0000", "4242 4242 4242 4242", "4111 1111 1111 1111", "5555 5555 5555 4444",
	"3530 1113 3330 0000", "3782 822463 10005", "3056 9309 0259 04", "4000 0000 0000 0002",
	"4000 0000 0000 9995", "4000 0000 0000 0069", "4000 0000 0000 0127", "4000 0000 0000 0119",
	"4000 0000 0000 9987", "4000 0000 0000 9979", "4100 0000 0000 0019", "4000 0000 0000 0341",
	"4000 0027 6000 3184", "4000 0084 0000 1629", "4000 0000 0000 3220", "4000 0000 0000 3063",
	"4000 0000 0000 3055", "4000 0000 0000 3097",
}

// panForms are the ways a number could be written down.
func panForms(pan string) []string {
	digits := strings.ReplaceAll(pan, " ", "")
	forms := []string{digits, pan, strings.ReplaceAll(pan, " ", "-")}
	var four []string
	for i := 0; i < len(digits); i += 4 {
		four = append(four, digits[i:min(i+4, len(digits))])
	}
	return append(forms, strings.Join(four, " "), strings.Join(four, "-"))
}

func TestCardDataNeverLeaks(t *testing.T) {
	logs := &kessaitest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := newPayFixture(t, payOptions{logger: logger, idempotency: true, record: true, pollWait: 50 * time.Millisecond})
	a1 := server(f.a1)
	invalid := []string{"4242424242424241", "42424242424242", "55555555555544440", "4012888888881882"}
	var charged []string // tokens whose first authorisation has happened
	n := 0
	key := func() reqOpt {
		n++
		return header("Idempotency-Key", fmt.Sprintf("leak-test.%d", n))
	}

	for _, spelled := range sandboxPANs {
		pan := strings.ReplaceAll(spelled, " ", "")
		// The token, sent as the customer typed it, with an idempotency key
		// (whose stored answer must not hold the number either).
		b := withData(cardBody(spelled), "line1", "1-2-3", "phone_number", map[string]any{"country_code": 81, "local_number": "0312345678"})
		tok := jstr(f.tokenAt(t, a1, b, key()), "id")
		// A new CVC replaces the first; both must be gone after the charge.
		ok(t, f.do(t, "PATCH", storePath(f.storeA1, "/tokens/"+tok), a1, map[string]any{"data": map[string]any{"cvv": cvcFor(pan)}}, key()), http.StatusOK)
		ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens/"+tok), a1, nil), http.StatusOK)
		capture := pan != "4000000000000341"
		ch := jstr(f.chargeAt(t, a1, chargeBody(tok, 1000, "JPY", "capture", capture), key()), "id")
		charged = append(charged, tok)
		f.process(t)
		m := ok(t, f.do(t, "GET", "/charges/"+ch+"?polling=true", a1, nil), http.StatusOK)
		ok(t, f.do(t, "GET", f.chargePath(ch), a1, nil), http.StatusOK)
		switch jstr(m, "status") {
		case "successful":
			ok(t, f.do(t, "POST", f.chargePath(ch)+"/refunds", a1, map[string]any{"amount": 100, "currency": "JPY"}, key()), http.StatusCreated)
		case "authorized":
			if rec := f.do(t, "POST", f.chargePath(ch)+"/capture", a1, "null", key()); rec.Code != http.StatusCreated {
				t.Errorf("capture %d", rec.Code)
			}
		case "awaiting": // a card whose issuer requires 3-D Secure: abandoned
			ok(t, f.do(t, "POST", f.chargePath(ch)+"/cancels", a1, map[string]any{}, key()), http.StatusCreated)
		}
		f.process(t)
		ok(t, f.do(t, "GET", f.chargePath(ch)+"/refunds", a1, nil), http.StatusOK)

		// Errors that carry the number in their request.
		wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(tok, 1000, "JPY"), key()), http.StatusBadRequest, payment.CodeTransactionAlreadyDone)
		wantError(t, f.do(t, "POST", "/tokens", server(f.a1Live), cardBody(pan), key()), http.StatusBadRequest, payment.CodeNoTestCardInLiveMode)
		wantError(t, f.do(t, "POST", "/tokens", a1, withData(cardBody(pan), "exp_year", 2020), key()), http.StatusBadRequest, payment.CodeValidation)
		wantError(t, f.do(t, "POST", "/tokens", a1, withData(cardBody(pan), "exp_month", map[string]any{"m": pan}), key()), http.StatusBadRequest, payment.CodeValidation)
		wantError(t, f.do(t, "POST", "/tokens", a1, `{"payment_type":"card","data":{"card_number":"`+pan+`","cvv":"`+cvcFor(pan)+`"`, key()), http.StatusBadRequest, payment.CodeValidation)
		wantError(t, f.do(t, "POST", "/tokens", server(f.np), cardBody(pan), key()), http.StatusUnauthorized, payment.CodeDirectCardTokenDisabled)
		wantError(t, f.do(t, "POST", "/tokens", browser(f.a1), cardBody(pan), origin("https://evil.example")), http.StatusUnauthorized, payment.CodeInvalidDomain)
		wantError(t, f.do(t, "POST", "/tokens", "", cardBody(pan)), http.StatusUnauthorized, payment.CodeAuthHeaderMissing)
		wantError(t, f.do(t, "POST", "/charges", a1, map[string]any{"transaction_token_id": pan, "amount": 1000, "currency": "JPY"}), http.StatusBadRequest, payment.CodeValidation)
		wantError(t, f.do(t, "GET", "/charges?transaction_token_id="+pan, a1, nil), http.StatusBadRequest, payment.CodeValidation)
		ok(t, f.do(t, "GET", "/charges?last_four="+pan, a1, nil), http.StatusOK)
	}
	for _, pan := range invalid {
		wantError(t, f.do(t, "POST", "/tokens", a1, cardBody(pan), key()), http.StatusBadRequest, payment.CodeValidation)
	}
	for _, path := range []string{"/tokens?limit=100", "/charges?limit=100", "/transaction_history?limit=100", storePath(f.storeA1, "/tokens?limit=100")} {
		ok(t, f.do(t, "GET", path, a1, nil), http.StatusOK)
		ok(t, f.do(t, "GET", path, server(f.merchA), nil), http.StatusOK)
	}

	// The CVC is erased at the first authorisation.
	raw, err := sql.Open("sqlite", filepath.Join(f.dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, id := range charged {
		var erased bool
		var keyID string
		if err := raw.QueryRow(`SELECT cvc_sealed IS NULL, cvc_key_id FROM tokens WHERE id = ?`, id).Scan(&erased, &keyID); err != nil {
			t.Fatalf("token %s: %v", id, err)
		}
		if !erased {
			t.Errorf("token %s still holds a sealed CVC after its first authorisation", id)
		}
	}
	var rows int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM tokens`).Scan(&rows); err != nil || rows != len(charged) {
		t.Errorf("%d token rows (%v), want %d", rows, err, len(charged))
	}

	// Everything Kessai wrote or answered.
	sources := map[string]string{"log": logs.String()}
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	dbBytes := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(f.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dbBytes += len(data)
		sources["file "+e.Name()] = string(data)
	}
	f.mu.Lock()
	sources["responses"] = strings.Join(f.seen, "\n")
	f.mu.Unlock()

	// The scan sees real content: request lines in the log, the tokens in
	// the database, BINs and last fours in the responses.
	if c := strings.Count(sources["log"], "msg=request"); c < 15*len(sandboxPANs) {
		t.Errorf("only %d request log lines", c)
	}
	if dbBytes < 64<<10 || !strings.Contains(sources["file "+sqlite.FileName]+sources["file "+sqlite.FileName+"-wal"], charged[0]) {
		t.Errorf("the data dir (%d bytes) does not hold the tokens", dbBytes)
	}
	if !strings.Contains(sources["responses"], `"card_bin":"424242"`) || !strings.Contains(sources["responses"], `"last_four":"4242"`) {
		t.Error("the responses do not hold the tokens")
	}

	var needles []string
	for _, spelled := range sandboxPANs {
		needles = append(needles, panForms(spelled)...)
	}
	for _, pan := range invalid {
		needles = append(needles, panForms(pan)...)
	}
	// A CVC is 3 or 4 digits, which occur by chance in binary pages and
	// timestamps; what must never appear is a CVC as a value.
	for _, cvc := range []string{"737", "7373"} {
		needles = append(needles, `"`+cvc+`"`, "cvv="+cvc, "cvc="+cvc, `"cvv":`, `"cvc":`, "cvv=", "cvc=")
	}
	slices.Sort(needles)
	needles = slices.Compact(needles)
	for name, text := range sources {
		// Validation errors (and the stored answers of requests with an
		// Idempotency-Key) name the card_number field; the log may not.
		all := needles
		if name == "log" {
			all = append(slices.Clone(needles), "card_number")
		}
		for _, needle := range all {
			if i := strings.Index(text, needle); i >= 0 {
				t.Errorf("%s holds %q: …%q…", name, needle, text[max(0, i-80):min(len(text), i+len(needle)+80)])
			}
		}
	}
}

// ---------------------------------------------------------------------------
// 8. Concurrency

func TestConcurrentChargesOnOneTimeToken(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	tok := f.token(t, "4000020000000000")
	const n = 50
	codes := make([]int, n)
	bodies := make([]string, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			rec := f.do(t, "POST", "/charges", server(f.a1), fmt.Sprintf(`{"transaction_token_id":%q,"amount":1000,"currency":"JPY"}`, tok))
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range n {
		switch {
		case codes[i] == http.StatusCreated:
			created++
		case codes[i] == http.StatusBadRequest && strings.Contains(bodies[i], `"code":"TRANSACTION_ALREADY_PROCESSED"`):
		default:
			t.Errorf("request %d: %d %s", i, codes[i], bodies[i])
		}
	}
	if created != 1 {
		t.Errorf("%d charges created, want exactly 1", created)
	}
	m := ok(t, f.do(t, "GET", "/charges?transaction_token_id="+tok, server(f.a1), nil), http.StatusOK)
	if got := listIDs(t, m); len(got) != 1 {
		t.Errorf("charges of the token: %v", got)
	}
	f.process(t)
	if got := listIDs(t, ok(t, f.do(t, "GET", "/charges?status=successful", server(f.a1), nil), http.StatusOK)); len(got) != 1 {
		t.Errorf("successful charges: %v", got)
	}
}

func TestConcurrentIdempotentCharges(t *testing.T) {
	f := newPayFixture(t, payOptions{idempotency: true})
	tok := f.token(t, "4000020000000000", "type", "recurring")
	reqBody := fmt.Sprintf(`{"transaction_token_id":%q,"amount":1000,"currency":"JPY"}`, tok)
	const n = 50
	type answer struct {
		code        int
		body, idemp string
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			rec := f.do(t, "POST", "/charges", server(f.a1), reqBody, header("Idempotency-Key", "5f1a2b3c4d5e6.12345678"))
			answers[i] = answer{rec.Code, rec.Body.String(), rec.Header().Get("Idempotency-Status")}
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]int{}
	stored := 0
	for i, a := range answers {
		switch a.code {
		case http.StatusCreated:
			var m map[string]any
			if err := json.Unmarshal([]byte(a.body), &m); err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			ids[jstr(m, "id")]++
			switch a.idemp {
			case "successfully_stored":
				stored++
			case "retrieved_idempotent_response":
			default:
				t.Errorf("answer %d: Idempotency-Status %q", i, a.idemp)
			}
		case http.StatusConflict:
			if !strings.Contains(a.body, `"code":"IDEMPOTENCY_KEY_CONFLICT"`) || a.idemp != "conflicting_key" {
				t.Errorf("answer %d: %s, Idempotency-Status %q", i, a.body, a.idemp)
			}
		default:
			t.Errorf("answer %d: %d %s", i, a.code, a.body)
		}
	}
	if len(ids) != 1 || stored != 1 {
		t.Errorf("charge ids answered %v, %d stored; want one charge stored once", ids, stored)
	}
	list := listIDs(t, ok(t, f.do(t, "GET", "/charges?transaction_token_id="+tok, server(f.a1), nil), http.StatusOK))
	if len(list) != 1 || ids[list[0]] == 0 {
		t.Errorf("charges of the token: %v, answered %v", list, ids)
	}
	// Later retries replay; the same key with another body conflicts.
	rec := f.do(t, "POST", "/charges", server(f.a1), reqBody, header("Idempotency-Key", "5f1a2b3c4d5e6.12345678"))
	if m := ok(t, rec, http.StatusCreated); len(list) == 1 && jstr(m, "id") != list[0] {
		t.Errorf("replay answered charge %v, want %s", m["id"], list[0])
	}
	rec = f.do(t, "POST", "/charges", server(f.a1), strings.Replace(reqBody, "1000", "2000", 1), header("Idempotency-Key", "5f1a2b3c4d5e6.12345678"))
	wantError(t, rec, http.StatusConflict, payment.CodeIdempotencyConflict)
}
