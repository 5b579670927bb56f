package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Handler tests of konbini payments and bank transfers: their tokens as
// the SDKs send them, the routes of the payment deadline, the ledger and
// the sandbox's test helpers (who may call them, and with what), the
// issuer token of a bank transfer, the long poll and checkout_info.

// nearlyMB is the length of the hostile strings: as much as a request
// body of the default 1 MiB leaves room for.
const nearlyMB = 1<<20 - 4096

func konbiniEdgeBody(kv ...any) map[string]any {
	return withData(map[string]any{
		"payment_type": "konbini", "type": "one_time",
		"data": map[string]any{
			"customer_name": "山田 太郎", "convenience_store": "seven_eleven",
			"phone_number": map[string]any{"country_code": 81, "local_number": "090-1234-5678"},
		},
	}, kv...)
}

func transferEdgeBody(kv ...any) map[string]any {
	return withData(map[string]any{
		"payment_type": "bank_transfer", "type": "one_time", "data": map[string]any{"brand": "aozora_bank"},
	}, kv...)
}

// awaitingSlipCharge makes a token of store A1 from b and a charge of 1000 yen on
// it, runs the worker and returns the charge's id, awaiting its shopper.
func (f *payFixture) awaitingSlipCharge(t *testing.T, b map[string]any) string {
	t.Helper()
	id := f.charge(t, jstr(f.tokenAt(t, server(f.a1), b), "id"), 1000, "JPY")
	f.process(t)
	if st := jstr(f.getCharge(t, id), "status"); st != "awaiting" {
		t.Fatalf("the %s charge is %s, want awaiting", b["payment_type"], st)
	}
	return id
}

// wantReason checks that errs name field with reason.
func wantReason(t *testing.T, errs []fieldError, field, reason string) {
	t.Helper()
	for _, e := range errs {
		if e.Field == field && e.Reason == reason {
			return
		}
	}
	t.Errorf("errors %+v, want %s %s", errs, field, reason)
}

// TestSlipTokenWireEdges: a konbini or bank-transfer token as the SDKs send it:
// stores and banks in any case, periods in ISO 8601 within their bounds
// (P0D is out of them, not the default; one too long to count is never
// read as a short one), time shifts that are a time of day, and nothing
// of a megabyte echoed.
func TestSlipTokenWireEdges(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		want   map[string]string // data fields of the token made
		field  string            // or the field refused
		reason string            // with this reason ("" any)
	}{
		{"konbini", konbiniEdgeBody(), map[string]string{"data.convenience_store": "seven_eleven",
			"data.expiration_period": "PT720H", "data.phone_number.local_number": "09012345678"}, "", ""},
		{"store in capitals", konbiniEdgeBody("convenience_store", "SEVEN_ELEVEN"), map[string]string{"data.convenience_store": "seven_eleven"}, "", ""},
		{"bank in capitals", transferEdgeBody("brand", "AOZORA_BANK"), map[string]string{"data.brand": "aozora_bank",
			"data.bank_code": "0310", "data.expiration_period": "PT168H"}, "", ""},
		{"a week", konbiniEdgeBody("expiration_period", "P1W"), map[string]string{"data.expiration_period": "PT168H"}, "", ""},
		{"country code a string", konbiniEdgeBody("phone_number", map[string]any{"country_code": "81", "local_number": "0312345678"}),
			map[string]string{"data.phone_number.local_number": "0312345678"}, "", ""},
		{"shift at UTC written -00:00", konbiniEdgeBody("expiration_time_shift", "23:59:59-00:00"),
			map[string]string{"data.expiration_time_shift": "23:59:59+00:00"}, "", ""},
		{"P0D", konbiniEdgeBody("expiration_period", "P0D"), nil, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"PT0H on a transfer", transferEdgeBody("expiration_period", "PT0H"), nil, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"an hour short of 7 days", konbiniEdgeBody("expiration_period", "PT167H"), nil, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"months", konbiniEdgeBody("expiration_period", "P1M"), nil, "expiration_period", payment.ReasonInvalidFormat},
		{"not ISO 8601", konbiniEdgeBody("expiration_period", "30 days"), nil, "expiration_period", payment.ReasonInvalidFormat},
		{"P99999999D", konbiniEdgeBody("expiration_period", "P99999999D"), nil, "expiration_period", ""},
		{"P30502W", konbiniEdgeBody("expiration_period", "P30502W"), nil, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"P30502W on a transfer", transferEdgeBody("expiration_period", "P30502W"), nil, "expiration_period", payment.ReasonExpirationOutOfBounds},
		{"a leap second", konbiniEdgeBody("expiration_time_shift", "23:59:60+09:00"), nil, "expiration_time_shift", payment.ReasonInvalidFormat},
		{"an offset alone", konbiniEdgeBody("expiration_time_shift", "-00:00"), nil, "expiration_time_shift", payment.ReasonInvalidFormat},
		{"phone abroad", konbiniEdgeBody("phone_number", map[string]any{"country_code": 1, "local_number": "2025550123"}),
			nil, "phone_number", payment.ReasonOnlyJapanesePhone},
		{"recurring", with(konbiniEdgeBody(), "type", "recurring"), nil, "type", "ONE_TIME_ONLY_ALLOWED"},
		{"a card number besides", konbiniEdgeBody("card_number", "4242424242424242"), nil, "data.card_number", payment.ReasonForbiddenParameter},
		{"a megabyte of name", konbiniEdgeBody("customer_name", strings.Repeat("山", nearlyMB/3)), nil, "customer_name", payment.ReasonInvalidLength},
		{"a megabyte of store", konbiniEdgeBody("convenience_store", strings.Repeat("a", nearlyMB)), nil, "convenience_store", ""},
		{"a megabyte of period", konbiniEdgeBody("expiration_period", "P"+strings.Repeat("1", nearlyMB)+"D"), nil, "expiration_period", ""},
		{"a megabyte of shift", konbiniEdgeBody("expiration_time_shift", strings.Repeat("1", nearlyMB)), nil, "expiration_time_shift", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, "POST", "/tokens", a1, tc.body)
			if tc.field == "" {
				m := ok(t, rec, http.StatusCreated)
				for k, v := range tc.want {
					if got := jstr(m, k); got != v {
						t.Errorf("%s = %q, want %q", k, got, v)
					}
				}
				return
			}
			errs := wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, tc.field)
			if tc.reason != "" {
				wantReason(t, errs, tc.field, tc.reason)
			}
			if rec.Body.Len() > 4096 {
				t.Errorf("an answer of %d bytes: %.200s", rec.Body.Len(), rec.Body)
			}
		})
	}
	rec := f.do(t, "POST", "/tokens", a1, konbiniEdgeBody("customer_name", strings.Repeat("a", 1<<20)))
	wantError(t, rec, http.StatusRequestEntityTooLarge, payment.CodeBodyTooLarge)

	// The tokens made above are listed by their payment type.
	for _, pt := range []string{"konbini", "bank_transfer"} {
		l := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens?payment_type="+pt), a1, nil), http.StatusOK)
		items, _ := l["items"].([]any)
		if len(items) == 0 {
			t.Errorf("no %s tokens listed", pt)
		}
		for _, it := range items {
			if got := jstr(it.(map[string]any), "payment_type"); got != pt {
				t.Errorf("a %s token in the list of %s", got, pt)
			}
		}
	}
}

// TestSlipDepositWire: the deposit helper needs an amount, a positive one
// that a yen charge may have; a konbini payment takes no deposit.
func TestSlipDepositWire(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	bank := f.awaitingSlipCharge(t, transferEdgeBody())
	konbini := f.awaitingSlipCharge(t, konbiniEdgeBody())
	deposit := func(id string, b any) *httptest.ResponseRecorder {
		return f.do(t, "POST", f.chargePath(id)+"/test_helpers/deposit", a1, b)
	}
	for _, tc := range []struct {
		name, body, reason string
	}{
		{"no amount", `{}`, payment.ReasonRequired},
		{"no body", ``, payment.ReasonRequired},
		{"null", `{"amount": null}`, payment.ReasonRequired},
		{"zero", `{"amount": 0}`, "INVALID_AMOUNT"},
		{"negative", `{"amount": -1}`, "INVALID_AMOUNT"},
		{"the largest int64", `{"amount": 9223372036854775807}`, payment.ReasonNumberMax},
		{"past int64", `{"amount": 9223372036854775808}`, ""},
		{"the smallest int64", `{"amount": -9223372036854775808}`, "INVALID_AMOUNT"},
		{"a fraction", `{"amount": 10.5}`, ""},
		{"a megabyte of digits", `{"amount": ` + strings.Repeat("9", nearlyMB) + `}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := deposit(bank, tc.body)
			errs := wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "amount")
			if tc.reason != "" {
				wantReason(t, errs, "amount", tc.reason)
			}
		})
	}
	wantError(t, deposit(konbini, `{"amount": 1000}`), http.StatusBadRequest, payment.CodeValidation, "action")
	l := ok(t, f.do(t, "GET", f.chargePath(bank)+"/bank_transfer_ledgers", a1, nil), http.StatusOK)
	if jnum(l, "total_hits") != 0 {
		t.Fatalf("the refused deposits left a ledger: %v", l)
	}
	ch := ok(t, deposit(bank, `{"amount": 9999999}`), http.StatusOK)
	if jstr(ch, "status") != "successful" || jnum(ch, "charged_amount") != 9999999 {
		t.Errorf("after the largest deposit: %v charged %v", ch["status"], ch["charged_amount"])
	}
}

// TestSlipExpiryWire: the deadline's routes as the SDKs call them, and
// periods that are no extension.
func TestSlipExpiryWire(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	id := f.awaitingSlipCharge(t, konbiniEdgeBody())
	path := f.chargePath(id) + "/expiry"
	e := ok(t, f.do(t, "GET", path+"/latest", a1, nil), http.StatusOK)
	requireKeys(t, "expiry", e, "id", "charge_id", "store_id", "expiration_date", "extension_count", "created_on", "updated_on")
	before := jstr(e, "expiration_date")
	for _, tc := range []struct {
		name  string
		body  string
		code  payment.Code
		field string
	}{
		{"nothing", `{}`, payment.CodeEitherPeriodOrDate, ""},
		{"both", `{"expiration_period": "P1D", "expiration_date": "2026-04-01T00:00:00Z"}`, payment.CodeEitherPeriodOrDate, ""},
		{"months", `{"expiration_period": "P1M"}`, payment.CodeValidation, "expiration_period"},
		{"P99999999D", `{"expiration_period": "P99999999D"}`, payment.CodeValidation, "expiration_period"},
		{"a megabyte of period", `{"expiration_period": "P` + strings.Repeat("1", nearlyMB) + `D"}`, payment.CodeValidation, "expiration_period"},
		{"not a date", `{"expiration_date": "2026-13-01T00:00:00Z"}`, payment.CodeValidation, ""},
		{"no extension", `{"expiration_period": "P0D"}`, payment.CodePositiveExtensionRequired, ""},
		{"31 days", `{"expiration_period": "P31D"}`, payment.CodeMaxExpiryExtensionExceeded, ""},
		{"P30502W", `{"expiration_period": "P30502W"}`, payment.CodeMaxExpiryExtensionExceeded, ""},
		{"P100000W100000DT100000H", `{"expiration_period": "P100000W100000DT100000H"}`, payment.CodeMaxExpiryExtensionExceeded, ""},
		{"the far future", `{"expiration_date": "9999-12-31T23:59:59Z"}`, payment.CodeMaxExpiryExtensionExceeded, ""},
		{"the distant past", `{"expiration_date": "0001-01-01T00:00:00Z"}`, payment.CodePositiveExtensionRequired, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, "POST", path, a1, tc.body)
			if rec.Code == http.StatusOK {
				t.Fatalf("extended: %s", rec.Body)
			}
			if tc.code != "" {
				var fields []string
				if tc.field != "" {
					fields = append(fields, tc.field)
				}
				wantError(t, rec, http.StatusBadRequest, tc.code, fields...)
			}
		})
	}
	e = ok(t, f.do(t, "GET", path+"/latest", a1, nil), http.StatusOK)
	if jstr(e, "expiration_date") != before || jnum(e, "extension_count") != 0 {
		t.Fatalf("after the refused extensions: %v", e)
	}
	e = ok(t, f.do(t, "POST", path, a1, `{"expiration_period": "P3D"}`), http.StatusOK)
	if jnum(e, "extension_count") != 1 || jstr(e, "expiration_date") == before {
		t.Errorf("a 3-day extension: %v", e)
	}
}

// TestSlipRoutesScope: every route of a konbini or bank-transfer charge
// answers NOT_FOUND to another merchant, another store and the other
// mode (the test helpers: TEST_MODE_ONLY), and INVALID_PERMISSIONS to a
// browser where the secret is needed; what they asked for did not happen.
func TestSlipRoutesScope(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	id := f.awaitingSlipCharge(t, transferEdgeBody())
	type route struct{ method, rest, body string }
	routes := []route{
		{"GET", "/expiry/latest", ""},
		{"POST", "/expiry", `{"expiration_period": "P1D"}`},
		{"GET", "/bank_transfer_ledgers", ""},
		{"GET", "/issuer_token", ""},
		{"POST", "/test_helpers/pay", ""},
		{"POST", "/test_helpers/deposit", `{"amount": 1000}`},
		{"POST", "/test_helpers/expire", ""},
	}
	helper := func(r route) bool { return strings.HasPrefix(r.rest, "/test_helpers/") }
	for _, tc := range []struct {
		name  string
		auth  string
		store string
		opts  []reqOpt
		want  func(route) int
	}{
		{"another merchant", server(f.b1), f.storeA1.String(), nil, func(route) int { return http.StatusNotFound }},
		{"another merchant on its own store", server(f.b1), f.storeB1.String(), nil, func(route) int { return http.StatusNotFound }},
		{"another store of the merchant", server(f.a2), f.storeA1.String(), nil, func(route) int { return http.StatusNotFound }},
		{"the other store's path", server(f.a2), f.storeA2.String(), nil, func(route) int { return http.StatusNotFound }},
		{"the live mode", server(f.a1Live), f.storeA1.String(), nil, func(r route) int {
			if helper(r) {
				return http.StatusForbidden
			}
			return http.StatusNotFound
		}},
		{"a browser", browser(f.a1), f.storeA1.String(), []reqOpt{origin(payShopOrigin)}, func(r route) int {
			if r.rest == "/expiry/latest" {
				return http.StatusOK
			}
			return http.StatusForbidden
		}},
	} {
		for _, r := range routes {
			var b any
			if r.body != "" {
				b = r.body
			}
			rec := f.do(t, r.method, "/stores/"+tc.store+"/charges/"+id+r.rest, tc.auth, b, tc.opts...)
			if want := tc.want(r); rec.Code != want {
				t.Errorf("%s: %s %s answered %d, want %d: %s", tc.name, r.method, r.rest, rec.Code, want, rec.Body)
			}
		}
	}
	a1 := server(f.a1)
	for _, r := range routes {
		var b any
		if r.body != "" {
			b = r.body
		}
		rec := f.do(t, r.method, f.chargePath(payment.NewID().String())+r.rest, a1, b)
		wantError(t, rec, http.StatusNotFound, payment.CodeNotFound)
	}
	ch := f.getCharge(t, id)
	l := ok(t, f.do(t, "GET", f.chargePath(id)+"/bank_transfer_ledgers", a1, nil), http.StatusOK)
	e := ok(t, f.do(t, "GET", f.chargePath(id)+"/expiry/latest", a1, nil), http.StatusOK)
	if jstr(ch, "status") != "awaiting" || jnum(l, "total_hits") != 0 || jnum(e, "extension_count") != 0 {
		t.Fatalf("after the refused calls: %v, %v lines, %v extensions", ch["status"], l["total_hits"], e["extension_count"])
	}
}

// TestSlipIssuerTokenWire: a bank transfer's issuer token names its
// account in the payload and at the top level; a konbini's has the
// store's numbers and no account.
func TestSlipIssuerTokenWire(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	tok := f.tokenAt(t, a1, transferEdgeBody())
	id := f.charge(t, jstr(tok, "id"), 1000, "JPY")
	f.process(t)
	it := ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", a1, nil), http.StatusOK)
	if jstr(it, "call_method") != "http_get" || jstr(it, "payment_type") != "bank_transfer" ||
		!strings.HasPrefix(jstr(it, "issuer_token"), publicOrigin+payment.SlipPagePath) {
		t.Errorf("issuer token %v", it)
	}
	for _, k := range []string{"bank_code", "bank_name", "branch_code", "branch_name", "account_number", "account_holder_name", "account_id"} {
		want := jstr(tok, "data."+k)
		if want == "" || jstr(it, k) != want || jstr(it, "payload."+k) != want {
			t.Errorf("%s: top level %q, payload %q, want the token's %q", k, jstr(it, k), jstr(it, "payload."+k), want)
		}
	}
	if jstr(it, "account_type") != "ordinary" || jstr(it, "payload.amount") != "1000" || jstr(it, "payload.currency") != "JPY" {
		t.Errorf("issuer token %v", it)
	}

	k := f.awaitingSlipCharge(t, konbiniEdgeBody())
	it = ok(t, f.do(t, "GET", f.chargePath(k)+"/issuer_token", a1, nil), http.StatusOK)
	if len(jstr(it, "payload.payment_number")) != 13 || jget(it, "payload.confirmation_number") != nil || jget(it, "bank_code") != nil {
		t.Errorf("a Seven-Eleven payment's issuer token %v", it)
	}
}

// TestSlipLongPoll: a long poll of a konbini or bank-transfer charge that
// awaits its shopper answers at once: the shopper has days, not seconds.
func TestSlipLongPoll(t *testing.T) {
	f := newPayFixture(t, payOptions{pollWait: 20 * time.Second})
	for _, b := range []map[string]any{konbiniEdgeBody(), transferEdgeBody()} {
		id := f.awaitingSlipCharge(t, b)
		start := time.Now()
		ch := ok(t, f.do(t, "GET", f.chargePath(id)+"?polling=true", server(f.a1), nil), http.StatusOK)
		if took := time.Since(start); took > 10*time.Second || jstr(ch, "status") != "awaiting" {
			t.Errorf("a long poll of an awaiting %s charge took %v (%v)", b["payment_type"], took, ch["status"])
		}
	}
}

// TestCheckoutInfoSlips: checkout_info says whether the store takes
// konbini payments and bank transfers, lists their brands only then, and
// gives the transfer's match-amount rule and default periods.
func TestCheckoutInfoSlips(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	ctx := context.Background()
	c, err := f.svc.Access.Authenticate(ctx, server(f.a1), "")
	if err != nil {
		t.Fatal(err)
	}
	check := func(konbini, bank bool, match string) {
		t.Helper()
		m := ok(t, f.do(t, "GET", "/checkout_info", browser(f.a1), nil, origin(payShopOrigin)), http.StatusOK)
		if got := jget(m, "convenience_configuration.enabled"); got != konbini {
			t.Errorf("convenience_configuration.enabled %v, want %v", got, konbini)
		}
		if got := jget(m, "bank_transfer_configuration.enabled"); got != bank {
			t.Errorf("bank_transfer_configuration.enabled %v, want %v", got, bank)
		}
		if jstr(m, "convenience_configuration.expiration") != "PT720H" || jstr(m, "bank_transfer_configuration.expiration") != "PT168H" ||
			jstr(m, "bank_transfer_configuration.match_amount") != match ||
			jstr(m, "bank_transfer_configuration.maximum_extension_period") != "PT720H" {
			t.Errorf("convenience_configuration %v, bank_transfer_configuration %v", m["convenience_configuration"], m["bank_transfer_configuration"])
		}
		counts := map[string]int{}
		for _, b := range m["supported_brands"].([]any) {
			counts[jstr(b.(map[string]any), "payment_type")]++
		}
		want := map[bool]int{true: len(payment.ConvenienceStores), false: 0}[konbini]
		if counts["konbini"] != want {
			t.Errorf("%d konbini brands, want %d", counts["konbini"], want)
		}
		if want := map[bool]int{true: len(payment.BankTransferBrands), false: 0}[bank]; counts["bank_transfer"] != want {
			t.Errorf("%d bank brands, want %d", counts["bank_transfer"], want)
		}
	}
	check(true, true, "minimum")
	off, exact := false, payment.MatchExact
	if _, err := f.svc.Merchants.UpdateStore(ctx, c, f.storeA1, payment.StoreUpdate{KonbiniEnabled: &off, MatchAmount: &exact}); err != nil {
		t.Fatal(err)
	}
	check(false, true, "exact")
	if _, err := f.svc.Merchants.UpdateStore(ctx, c, f.storeA1, payment.StoreUpdate{BankTransferEnabled: &off}); err != nil {
		t.Fatal(err)
	}
	check(false, false, "exact")
	on := true
	if _, err := f.svc.Merchants.UpdateStore(ctx, c, f.storeA1, payment.StoreUpdate{KonbiniEnabled: &on}); err != nil {
		t.Fatal(err)
	}
	check(true, false, "exact")
}
