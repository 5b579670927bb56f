package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
)

// Handler tests of konbini payments and bank transfers (issue 27): their
// tokens as the SDKs write them, charges awaiting their shopper, issuer
// tokens, the payment deadline and its extension, a bank transfer's
// ledger, the sandbox's test helpers, checkout_info and the store's
// configuration, and the bank_transfer_status_updated webhook.

// konbiniBody is a konbini token request as PHP's SDK sends it: the
// country code a string.
func konbiniBody(store string, kv ...any) map[string]any {
	b := map[string]any{
		"payment_type": "konbini", "type": "one_time", "email": "buyer@example.com",
		"data": map[string]any{
			"customer_name": "Taro Yamada", "convenience_store": store,
			"phone_number": map[string]any{"country_code": "81", "local_number": "08012345678"},
		},
	}
	return withData(b, kv...)
}

// bankBody is a bank-transfer token request.
func bankBody(brand string, kv ...any) map[string]any {
	b := map[string]any{
		"payment_type": "bank_transfer", "type": "one_time", "email": "buyer@example.com",
		"data": map[string]any{"brand": brand},
	}
	return withData(b, kv...)
}

// slipCharge makes a token of body with auth and a charge of amount yen
// on it, and processes the charge to awaiting; it returns the token's and
// the charge's answers.
func (f *payFixture) slipCharge(t testing.TB, auth string, body map[string]any, amount int, kv ...any) (tok, ch map[string]any) {
	t.Helper()
	f.clock.Advance(time.Minute) // out of the duplicate-charge window
	tok = f.tokenAt(t, auth, body)
	id := jstr(f.chargeAt(t, auth, chargeBody(jstr(tok, "id"), amount, "JPY", kv...)), "id")
	f.process(t)
	ch = ok(t, f.do(t, "GET", "/charges/"+id, auth, nil), http.StatusOK)
	if st := jstr(ch, "status"); st != "awaiting" {
		t.Fatalf("%s charge is %s, want awaiting: %v", jstr(tok, "payment_type"), st, ch)
	}
	return tok, ch
}

// slipPath is the path of a route under a charge of store A1.
func (f *payFixture) slipPath(ch map[string]any, rest string) string {
	return f.chargePath(jstr(ch, "id")) + rest
}

// rawJSON is the exact JSON text of one value of an answer, to tell 81
// from "81" and 1000 from 1000.0.
func rawJSON(t testing.TB, body []byte, path ...string) string {
	t.Helper()
	raw := json.RawMessage(body)
	for _, k := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s is not an object at %q: %v", body, k, err)
		}
		raw = m[k]
	}
	return string(raw)
}

// TestSlipTokenWire: konbini and bank-transfer tokens as the SDKs write
// them (PHP's string country code and enum names, Node's time shift) and
// as every SDK reads them back (periods in hours, the country code a
// number, the virtual account), and each refusal naming its field.
func TestSlipTokenWire(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)

	t.Run("KonbiniAsPHPSendsIt", func(t *testing.T) {
		rec := f.do(t, "POST", "/tokens", a1, konbiniBody("SEVEN_ELEVEN", "expiration_period", "P7D",
			"phone_number", map[string]any{"country_code": "81", "local_number": "080-1234 5678"}))
		m := ok(t, rec, http.StatusCreated)
		if jstr(m, "payment_type") != "konbini" || jstr(m, "type") != "one_time" || jstr(m, "mode") != "test" {
			t.Errorf("token = %v", m)
		}
		want := `{"customer_name":"Taro Yamada","convenience_store":"seven_eleven","expiration_period":"PT168H",` +
			`"expiration_time_shift":null,"phone_number":{"country_code":81,"local_number":"08012345678"}}`
		if got := rawJSON(t, rec.Body.Bytes(), "data"); got != want {
			t.Errorf("data = %s\nwant   %s", got, want)
		}
		// The token read again is the same.
		again := f.do(t, "GET", storePath(f.storeA1, "/tokens/"+jstr(m, "id")), a1, nil)
		if got := rawJSON(t, again.Body.Bytes(), "data"); got != want {
			t.Errorf("GET data = %s", got)
		}
	})

	t.Run("Defaults", func(t *testing.T) {
		m := f.tokenAt(t, a1, konbiniBody("lawson", "phone_number", map[string]any{"country_code": 81, "local_number": "0312345678"}))
		if jstr(m, "data.expiration_period") != "PT720H" || jnum(m, "data.phone_number.country_code") != 81 {
			t.Errorf("konbini default: %v", m["data"])
		}
		m = f.tokenAt(t, a1, bankBody("aozora_bank"))
		if jstr(m, "data.expiration_period") != "PT168H" || !jhasNull(m, "data.expiration_time_shift") {
			t.Errorf("bank default: %v", m["data"])
		}
	})

	t.Run("PeriodsAndShifts", func(t *testing.T) {
		for _, c := range []struct {
			body        map[string]any
			period, arg string
			shift       string
		}{
			{konbiniBody("family_mart"), "PT720H", "P30D", ""},
			{konbiniBody("family_mart"), "PT336H", "P2W", ""},
			{konbiniBody("family_mart"), "PT200H", "PT200H", ""},
			{konbiniBody("family_mart"), "PT170H", "P7DT2H", ""},
			{bankBody("bank_test_brand"), "PT24H", "P1D", ""},
			{bankBody("bank_test_brand"), "PT720H", "P30D", "23:59:59+09:00"},
			{bankBody("bank_test_brand"), "PT72H", "PT72H", "09:00:00.000+09:00"},
			{konbiniBody("mini_stop"), "PT168H", "P7D", "12:30Z"},
		} {
			b := withData(c.body, "expiration_period", c.arg)
			if c.shift != "" {
				b = withData(b, "expiration_time_shift", c.shift)
			}
			m := f.tokenAt(t, a1, b)
			if got := jstr(m, "data.expiration_period"); got != c.period {
				t.Errorf("%s: expiration_period %q, want %q", c.arg, got, c.period)
			}
			wantShift := map[string]string{"": "", "23:59:59+09:00": "23:59:59+09:00", "09:00:00.000+09:00": "09:00:00+09:00", "12:30Z": "12:30:00+00:00"}[c.shift]
			if got := jstr(m, "data.expiration_time_shift"); got != wantShift {
				t.Errorf("shift %q answered %q, want %q", c.shift, got, wantShift)
			}
		}
	})

	t.Run("BankAccount", func(t *testing.T) {
		for _, brand := range []string{"aozora_bank", "BANK_TEST_BRAND"} {
			m := f.tokenAt(t, a1, bankBody(brand))
			d, _ := m["data"].(map[string]any)
			if got, want := keysOf(d), []string{"account_holder_name", "account_id", "account_number", "bank_code", "bank_name",
				"branch_code", "branch_name", "brand", "expiration_period", "expiration_time_shift"}; !slices.Equal(got, want) {
				t.Errorf("data keys %v, want %v", got, want)
			}
			if jstr(m, "data.brand") != strings.ToLower(brand) || !regexp.MustCompile(`^[0-9]{4}$`).MatchString(jstr(m, "data.bank_code")) ||
				jstr(m, "data.bank_name") == "" || !regexp.MustCompile(`^[0-9]{3}$`).MatchString(jstr(m, "data.branch_code")) ||
				jstr(m, "data.branch_name") == "" || !regexp.MustCompile(`^[0-9]{7}$`).MatchString(jstr(m, "data.account_number")) ||
				jstr(m, "data.account_holder_name") != "A1" {
				t.Errorf("%s account: %v", brand, d)
			}
			if _, err := uuid.Parse(jstr(m, "data.account_id")); err != nil {
				t.Errorf("account_id %q: %v", jstr(m, "data.account_id"), err)
			}
		}
		// Each token has an account of its own.
		one, two := f.tokenAt(t, a1, bankBody("aozora_bank")), f.tokenAt(t, a1, bankBody("aozora_bank"))
		if jstr(one, "data.account_id") == jstr(two, "data.account_id") {
			t.Errorf("two tokens share the account %s", jstr(one, "data.account_id"))
		}
	})

	t.Run("Refused", func(t *testing.T) {
		huge := strings.Repeat("名", 300<<10/3) // 300 KiB, well inside a body
		cases := []struct {
			name   string
			body   map[string]any
			field  string
			reason string
		}{
			{"period not a duration", konbiniBody("lawson", "expiration_period", "seven days"), "expiration_period", payment.ReasonInvalidFormat},
			{"period in months", konbiniBody("lawson", "expiration_period", "P1M"), "expiration_period", payment.ReasonInvalidFormat},
			{"period of nothing", konbiniBody("lawson", "expiration_period", "P0D"), "expiration_period", payment.ReasonExpirationOutOfBounds},
			{"bank period of nothing", bankBody("aozora_bank", "expiration_period", "PT0H"), "expiration_period", payment.ReasonExpirationOutOfBounds},
			{"konbini period too short", konbiniBody("lawson", "expiration_period", "P6D"), "expiration_period", payment.ReasonExpirationOutOfBounds},
			{"konbini period too long", konbiniBody("lawson", "expiration_period", "P31D"), "expiration_period", payment.ReasonExpirationOutOfBounds},
			{"bank period too short", bankBody("aozora_bank", "expiration_period", "PT23H"), "expiration_period", payment.ReasonExpirationOutOfBounds},
			{"period of overflowing weeks", konbiniBody("lawson", "expiration_period", "P30500WT264H"), "expiration_period", payment.ReasonExpirationOutOfBounds},
			{"period a number", konbiniBody("lawson", "expiration_period", 7), "data.expiration_period", payment.ReasonInvalidFormat},
			{"bad time shift", bankBody("aozora_bank", "expiration_time_shift", "25:00+09:00"), "expiration_time_shift", payment.ReasonInvalidFormat},
			{"US phone", konbiniBody("lawson", "phone_number", map[string]any{"country_code": "1", "local_number": "2025550123"}), "phone_number", payment.ReasonOnlyJapanesePhone},
			{"US phone as a number", konbiniBody("lawson", "phone_number", map[string]any{"country_code": 1, "local_number": "2025550123"}), "phone_number", payment.ReasonOnlyJapanesePhone},
			{"country code a word", konbiniBody("lawson", "phone_number", map[string]any{"country_code": "JP", "local_number": "08012345678"}), "data.phone_number.country_code", payment.ReasonInvalidFormat},
			{"short local number", konbiniBody("lawson", "phone_number", map[string]any{"country_code": "81", "local_number": "0801234"}), "phone_number.local_number", payment.ReasonInvalidPhone},
			{"letters in the number", konbiniBody("lawson", "phone_number", map[string]any{"country_code": "81", "local_number": "080-CALL-NOW"}), "phone_number.local_number", payment.ReasonInvalidPhone},
			{"no phone", withData(konbiniBody("lawson"), "phone_number", nil), "phone_number", payment.ReasonRequired},
			{"no name", konbiniBody("lawson", "customer_name", "  "), "customer_name", payment.ReasonRequired},
			{"huge name", konbiniBody("lawson", "customer_name", huge), "customer_name", payment.ReasonInvalidLength},
			{"no store", konbiniBody(""), "convenience_store", payment.ReasonRequired},
			{"unknown store", konbiniBody("seven_twelve"), "convenience_store", payment.ReasonInvalidFormat},
			{"recurring konbini", with(konbiniBody("lawson"), "type", "recurring"), "type", "ONE_TIME_ONLY_ALLOWED"},
			{"subscription bank transfer", with(bankBody("aozora_bank"), "type", "subscription"), "type", "ONE_TIME_ONLY_ALLOWED"},
			{"no bank", bankBody(""), "brand", payment.ReasonRequired},
			{"unknown bank", bankBody("swiss_bank"), "brand", "BRAND_NOT_DEFINED"},
			{"card number in a konbini token", konbiniBody("lawson", "card_number", "4242424242424242"), "data.card_number", payment.ReasonForbiddenParameter},
			{"no data", map[string]any{"payment_type": "bank_transfer", "type": "one_time"}, "data", payment.ReasonRequired},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				rec := f.do(t, "POST", "/tokens", a1, c.body)
				errs := wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, c.field)
				if !slices.Contains(errs, fieldError{Field: c.field, Reason: c.reason}) {
					t.Errorf("errors %+v, want %s %s", errs, c.field, c.reason)
				}
				if strings.Contains(rec.Body.String(), "名名") || strings.Contains(rec.Body.String(), "4242") {
					t.Errorf("the refusal echoes the request: %.200s", rec.Body)
				}
			})
		}
		// A name of a megabyte is more than a body may be.
		wantError(t, f.do(t, "POST", "/tokens", a1, konbiniBody("lawson", "customer_name", strings.Repeat("x", 1<<20))),
			http.StatusRequestEntityTooLarge, payment.CodeBodyTooLarge)
		// Nothing was made.
		list := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens?payment_type=konbini&limit=100"), a1, nil), http.StatusOK)
		for _, it := range list["items"].([]any) {
			if name := jstr(it.(map[string]any), "data.customer_name"); name != "Taro Yamada" {
				t.Errorf("a refused token was made: %.100s", name)
			}
		}
	})

	t.Run("StoreTurnedThemOff", func(t *testing.T) {
		s := payment.DefaultStoreSettings()
		s.KonbiniOff, s.BankTransferOff = true, true
		_, tok := f.storeWith(t, s)
		wantError(t, f.do(t, "POST", "/tokens", server(tok), konbiniBody("lawson")), http.StatusBadRequest, payment.CodeConvenienceDisabled)
		wantError(t, f.do(t, "POST", "/tokens", server(tok), bankBody("aozora_bank")), http.StatusBadRequest, payment.CodePaymentTypeNotAllowed)
		ok(t, f.do(t, "POST", "/tokens", server(tok), cardBody("4000020000000000")), http.StatusCreated)
	})
}

// TestSlipIssuerToken: an awaiting konbini or bank-transfer charge sends
// its shopper to the sandbox's instructions page, with what the page
// shows in the payload (and a bank transfer's account at the top level
// too); the charge's own rules (yen, captured, a deadline ahead).
func TestSlipIssuerToken(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	digits := func(n int) *regexp.Regexp { return regexp.MustCompile(`^[0-9]{` + strconv.Itoa(n) + `}$`) }
	accountFields := []string{"account_id", "bank_code", "bank_name", "branch_code", "branch_name", "account_type", "account_number", "account_holder_name"}

	t.Run("Konbini", func(t *testing.T) {
		for _, c := range []struct {
			store         string
			pay, confirm  int
			hasConfirmNum bool
		}{
			{"seven_eleven", 13, 0, false},
			{"family_mart", 12, 5, true},
			{"lawson", 11, 6, true},
		} {
			_, ch := f.slipCharge(t, a1, konbiniBody(c.store, "customer_name", "山田 太郎"), 1500)
			rec := f.do(t, "GET", f.slipPath(ch, "/issuer_token"), a1, nil)
			it := ok(t, rec, http.StatusOK)
			if jstr(it, "call_method") != "http_get" || jstr(it, "payment_type") != "konbini" ||
				!strings.HasPrefix(jstr(it, "issuer_token"), publicOrigin+payment.SlipPagePath) || len(approvalKey(t, jstr(it, "issuer_token"))) < 16 {
				t.Errorf("%s issuer token: %v", c.store, it)
			}
			p := it["payload"].(map[string]any)
			want := []string{"amount", "convenience_store", "currency", "customer_name", "expiration_date", "payment_number", "resource_id", "resource_type"}
			if c.hasConfirmNum {
				want = []string{"amount", "confirmation_number", "convenience_store", "currency", "customer_name", "expiration_date", "payment_number", "resource_id", "resource_type"}
			}
			if got := keysOf(p); !slices.Equal(got, want) {
				t.Errorf("%s payload keys %v, want %v", c.store, got, want)
			}
			if jstr(p, "resource_id") != jstr(ch, "id") || jstr(p, "resource_type") != "charge" || jstr(p, "amount") != "1500" ||
				jstr(p, "currency") != "JPY" || jstr(p, "convenience_store") != c.store || jstr(p, "customer_name") != "山田 太郎" ||
				!digits(c.pay).MatchString(jstr(p, "payment_number")) {
				t.Errorf("%s payload: %v", c.store, p)
			}
			if c.hasConfirmNum && !digits(c.confirm).MatchString(jstr(p, "confirmation_number")) {
				t.Errorf("%s confirmation number %q", c.store, jstr(p, "confirmation_number"))
			}
			deadline, err := time.Parse(time.RFC3339, jstr(p, "expiration_date"))
			captureAt, err2 := time.Parse(time.RFC3339, jstr(ch, "capture_at"))
			if err != nil || err2 != nil || !deadline.Equal(captureAt.Truncate(time.Second)) ||
				!deadline.Equal(f.clock.Now().Add(payment.DefaultKonbiniPeriod).Truncate(time.Second)) {
				t.Errorf("expiration_date %q, capture_at %q, now %s (%v %v)", jstr(p, "expiration_date"), jstr(ch, "capture_at"), f.clock.Now(), err, err2)
			}
			for _, k := range accountFields {
				if _, has := it[k]; has {
					t.Errorf("a konbini issuer token has %s: %v", k, it)
				}
			}
		}
	})

	t.Run("BankTransfer", func(t *testing.T) {
		tok, ch := f.slipCharge(t, a1, bankBody("aozora_bank"), 12000)
		it := ok(t, f.do(t, "GET", f.slipPath(ch, "/issuer_token"), a1, nil), http.StatusOK)
		// PHP's spelling of the path answers the same.
		if php := ok(t, f.do(t, "GET", f.slipPath(ch, "/issuerToken"), a1, nil), http.StatusOK); !sameJSON(php, it) {
			t.Errorf("issuerToken %v, issuer_token %v", php, it)
		}
		p := it["payload"].(map[string]any)
		if jstr(it, "payment_type") != "bank_transfer" || jstr(it, "call_method") != "http_get" || jstr(p, "amount") != "12000" ||
			jstr(p, "resource_id") != jstr(ch, "id") || jstr(p, "account_type") != "ordinary" || jstr(it, "account_type") != "ordinary" {
			t.Errorf("bank issuer token: %v", it)
		}
		for _, k := range accountFields {
			if k == "account_type" {
				continue
			}
			want := jstr(tok, "data."+k)
			if want == "" || jstr(it, k) != want || jstr(p, k) != want {
				t.Errorf("%s: top level %q, payload %q, token %q", k, jstr(it, k), jstr(p, k), want)
			}
		}
		for _, k := range []string{"convenience_store", "payment_number", "confirmation_number", "customer_name"} {
			if _, has := p[k]; has {
				t.Errorf("a bank issuer token's payload has %s", k)
			}
		}
	})

	t.Run("Browsers", func(t *testing.T) {
		// As for wallets: a browser sends on the shopper of a charge it
		// has just made, not of any charge whose id it knows.
		_, ch := f.slipCharge(t, a1, konbiniBody("lawson"), 1000)
		js, fromShop := browser(f.a1), origin(payShopOrigin)
		wantError(t, f.do(t, "GET", f.slipPath(ch, "/issuer_token"), js, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
		f.clock.Advance(time.Minute)
		tok := jstr(f.tokenAt(t, js, konbiniBody("lawson"), fromShop), "id")
		mine := jstr(f.chargeAt(t, js, chargeBody(tok, 1000, "JPY"), fromShop), "id")
		f.process(t)
		ok(t, f.do(t, "GET", f.chargePath(mine)+"/issuer_token", js, nil, fromShop), http.StatusOK)
		f.clock.Advance(payment.BrowserChargeWindow + time.Second)
		wantError(t, f.do(t, "GET", f.chargePath(mine)+"/issuer_token", js, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
	})

	t.Run("ChargeRules", func(t *testing.T) {
		f.clock.Advance(time.Minute)
		tok := jstr(f.tokenAt(t, a1, bankBody("aozora_bank")), "id")
		wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(tok, 1000, "USD")), http.StatusBadRequest, payment.CodeCurrencyNotSupported)
		wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(tok, 1000, "JPY", "capture", false)), http.StatusBadRequest, payment.CodeValidation, "capture")
		wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(tok, 1000, "JPY", "capture_at", f.clock.Now().Add(30*time.Minute).Format(time.RFC3339))),
			http.StatusBadRequest, payment.CodeValidation, "capture_at")
		wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(tok, 1000, "JPY", "capture_at", f.clock.Now().Add(61*24*time.Hour).Format(time.RFC3339))),
			http.StatusBadRequest, payment.CodeValidation, "capture_at")
		// capture_at is the deadline.
		at := f.clock.Now().Add(48 * time.Hour).Truncate(time.Second)
		id := f.charge(t, tok, 1000, "JPY", "capture_at", at.Format(time.RFC3339))
		f.process(t)
		exp := ok(t, f.do(t, "GET", f.chargePath(id)+"/expiry/latest", a1, nil), http.StatusOK)
		if got, _ := time.Parse(time.RFC3339, jstr(exp, "expiration_date")); !got.Equal(at) {
			t.Errorf("expiration_date %s, want capture_at %s", jstr(exp, "expiration_date"), at)
		}
	})
}

// TestChargeExpiry: GET …/expiry/latest and POST …/expiry, every error
// code of an extension, and the deadline the charge then shows.
func TestChargeExpiry(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	_, ch := f.slipCharge(t, a1, konbiniBody("lawson"), 2000)
	latest, extend := f.slipPath(ch, "/expiry/latest"), f.slipPath(ch, "/expiry")

	first := ok(t, f.do(t, "GET", latest, a1, nil), http.StatusOK)
	if got, want := keysOf(first), []string{"charge_id", "created_on", "expiration_date", "extension_count", "id", "store_id", "updated_on"}; !slices.Equal(got, want) {
		t.Errorf("expiry keys %v, want %v", got, want)
	}
	if jstr(first, "charge_id") != jstr(ch, "id") || jstr(first, "store_id") != f.storeA1.String() || jnum(first, "extension_count") != 0 ||
		jstr(first, "expiration_date") != jstr(ch, "capture_at") || jstr(first, "id") == jstr(ch, "id") {
		t.Errorf("expiry %v of charge %v", first, ch)
	}
	deadline, _ := time.Parse(time.RFC3339Nano, jstr(first, "expiration_date"))
	// A browser reads it as it reads the charge; only a server moves it.
	ok(t, f.do(t, "GET", latest, browser(f.a1), nil, origin(payShopOrigin)), http.StatusOK)
	wantError(t, f.do(t, "POST", extend, browser(f.a1), map[string]any{"expiration_period": "P1D"}, origin(payShopOrigin)),
		http.StatusForbidden, payment.CodeInvalidPermissions)

	refusals := []struct {
		name  string
		body  any
		code  payment.Code
		field string
	}{
		{"both", map[string]any{"expiration_period": "P1D", "expiration_date": deadline.Add(24 * time.Hour).Format(time.RFC3339)}, payment.CodeEitherPeriodOrDate, ""},
		{"neither", map[string]any{}, payment.CodeEitherPeriodOrDate, ""},
		{"no body", nil, payment.CodeEitherPeriodOrDate, ""},
		{"nulls", map[string]any{"expiration_period": nil, "expiration_date": nil}, payment.CodeEitherPeriodOrDate, ""},
		{"period of nothing", map[string]any{"expiration_period": "P0D"}, payment.CodePositiveExtensionRequired, ""},
		{"the same date", map[string]any{"expiration_date": deadline.Format(time.RFC3339Nano)}, payment.CodePositiveExtensionRequired, ""},
		{"a past date", map[string]any{"expiration_date": "2020-01-01T00:00:00Z"}, payment.CodePositiveExtensionRequired, ""},
		{"more than 30 days", map[string]any{"expiration_period": "P31D"}, payment.CodeMaxExpiryExtensionExceeded, ""},
		{"a date more than 30 days later", map[string]any{"expiration_date": deadline.Add(30*24*time.Hour + time.Second).Format(time.RFC3339)}, payment.CodeMaxExpiryExtensionExceeded, ""},
		{"period not a duration", map[string]any{"expiration_period": "three days"}, payment.CodeValidation, "expiration_period"},
		{"period in months", map[string]any{"expiration_period": "P1M"}, payment.CodeValidation, "expiration_period"},
		{"period a number", map[string]any{"expiration_period": 3}, payment.CodeValidation, "expiration_period"},
		{"date not a date", map[string]any{"expiration_date": "next tuesday"}, payment.CodeValidation, "expiration_date"},
		{"date a number", map[string]any{"expiration_date": 1767225600000}, payment.CodeValidation, "expiration_date"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			var fields []string
			if c.field != "" {
				fields = append(fields, c.field)
			}
			wantError(t, f.do(t, "POST", extend, a1, c.body), http.StatusBadRequest, c.code, fields...)
		})
	}
	if again := ok(t, f.do(t, "GET", latest, a1, nil), http.StatusOK); !sameJSON(again, first) {
		t.Fatalf("refused extensions changed the expiry: %v", again)
	}

	// Three extensions, each a new expiry; the charge shows the deadline.
	seen := map[string]bool{jstr(first, "id"): true}
	want := deadline
	for n, body := range []map[string]any{
		{"expiration_period": "P3D"},
		{"expiration_period": "PT12H"},
		{"expiration_date": deadline.Add(5 * 24 * time.Hour).Format(time.RFC3339)},
	} {
		f.clock.Advance(time.Hour)
		if p, has := body["expiration_period"]; has {
			d := map[string]time.Duration{"P3D": 72 * time.Hour, "PT12H": 12 * time.Hour}[p.(string)]
			want = want.Add(d)
		} else {
			want = deadline.Add(5 * 24 * time.Hour)
		}
		e := ok(t, f.do(t, "POST", extend, a1, body), http.StatusOK)
		got, _ := time.Parse(time.RFC3339Nano, jstr(e, "expiration_date"))
		if !got.Equal(want) || int(jnum(e, "extension_count")) != n+1 || seen[jstr(e, "id")] || jstr(e, "charge_id") != jstr(ch, "id") {
			t.Errorf("extension %d (%v): %v, want the deadline %s", n+1, body, e, want)
		}
		seen[jstr(e, "id")] = true
		if l := ok(t, f.do(t, "GET", latest, a1, nil), http.StatusOK); !sameJSON(l, e) {
			t.Errorf("latest %v after extension %v", l, e)
		}
		if c := f.getCharge(t, jstr(ch, "id")); jstr(c, "capture_at") != jstr(e, "expiration_date") || jstr(c, "status") != "awaiting" {
			t.Errorf("charge after extension %d: capture_at %s, status %s", n+1, jstr(c, "capture_at"), jstr(c, "status"))
		}
	}
	wantError(t, f.do(t, "POST", extend, a1, map[string]any{"expiration_period": "P1D"}), http.StatusBadRequest, payment.CodeMaximumExtensionsReached)

	// The worker ends the charge at the new deadline, not the old one.
	f.clock.Set(deadline.Add(time.Hour))
	f.process(t)
	if st := jstr(f.getCharge(t, jstr(ch, "id")), "status"); st != "awaiting" {
		t.Errorf("past its first deadline the extended charge is %s", st)
	}
	f.clock.Set(want.Add(time.Second))
	f.process(t)
	wantChargeEnd(t, f.getCharge(t, jstr(ch, "id")), "failed", 327)
	// An ended charge's deadline is read, not moved.
	ok(t, f.do(t, "GET", latest, a1, nil), http.StatusOK)
	wantError(t, f.do(t, "POST", extend, a1, map[string]any{"expiration_period": "P1D"}), http.StatusBadRequest, payment.CodeValidation, "status")

	t.Run("SixtyDaysAfterTheCharge", func(t *testing.T) {
		_, ch := f.slipCharge(t, a1, bankBody("aozora_bank", "expiration_period", "P30D"), 1000)
		made, _ := time.Parse(time.RFC3339Nano, jstr(ch, "created_on"))
		extend := f.slipPath(ch, "/expiry")
		wantError(t, f.do(t, "POST", extend, a1, map[string]any{"expiration_date": made.Add(payment.MaxPaymentWindow + time.Second).Format(time.RFC3339)}),
			http.StatusBadRequest, payment.CodeMaxExpiryExtensionExceeded)
		ok(t, f.do(t, "POST", extend, a1, map[string]any{"expiration_period": "P30D"}), http.StatusOK)
		wantError(t, f.do(t, "POST", extend, a1, map[string]any{"expiration_period": "PT1H"}), http.StatusBadRequest, payment.CodeMaxExpiryExtensionExceeded)
	})

	t.Run("NoDeadline", func(t *testing.T) {
		// A card charge, and a konbini charge the worker has not opened.
		f.clock.Advance(time.Minute)
		card := f.paidCharge(t, "4000020000000000", 1000, true)
		wantError(t, f.do(t, "GET", f.chargePath(card)+"/expiry/latest", a1, nil), http.StatusNotFound, payment.CodeNotFound)
		wantError(t, f.do(t, "POST", f.chargePath(card)+"/expiry", a1, map[string]any{"expiration_period": "P1D"}), http.StatusNotFound, payment.CodeNotFound)
		f.clock.Advance(time.Minute)
		tok := jstr(f.tokenAt(t, a1, konbiniBody("lawson")), "id")
		pending := f.charge(t, tok, 1000, "JPY")
		wantError(t, f.do(t, "GET", f.chargePath(pending)+"/expiry/latest", a1, nil), http.StatusNotFound, payment.CodeNotFound)
		f.process(t)
		ok(t, f.do(t, "GET", f.chargePath(pending)+"/expiry/latest", a1, nil), http.StatusOK)
	})
}

// TestSlipRoutesTenancy: another tenant's charge, or the other mode's, is
// NOT_FOUND on every route of this issue, with nothing of it in the
// answer and nothing done to it.
func TestSlipRoutesTenancy(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	_, ch := f.slipCharge(t, server(f.a1), bankBody("aozora_bank"), 1000)
	id := jstr(ch, "id")
	routes := []struct {
		method, rest string
		body         any
	}{
		{"GET", "/expiry/latest", nil},
		{"POST", "/expiry", map[string]any{"expiration_period": "P1D"}},
		{"GET", "/bank_transfer_ledgers", nil},
		{"POST", "/test_helpers/pay", nil},
		{"POST", "/test_helpers/deposit", map[string]any{"amount": 1000}},
		{"POST", "/test_helpers/expire", nil},
		{"GET", "/issuer_token", nil},
	}
	callers := map[string]struct{ path, auth string }{
		"another merchant's store":                {storePath(f.storeB1, "/charges/"+id), server(f.b1)},
		"another merchant, the charge's own path": {f.chargePath(id), server(f.b1)},
		"another store of the merchant":           {storePath(f.storeA2, "/charges/"+id), server(f.a2)},
		"the charge's store in the path only":     {f.chargePath(id), server(f.a2)},
		"the right token, another store's path":   {storePath(f.storeA2, "/charges/"+id), server(f.a1)},
		"an unknown charge":                       {f.chargePath(payment.NewID().String()), server(f.a1)},
		"not an id":                               {f.chargePath(url.PathEscape("'; DROP TABLE charges; --")), server(f.a1)},
	}
	for name, c := range callers {
		for _, r := range routes {
			rec := f.do(t, r.method, c.path+r.rest, c.auth, r.body)
			wantError(t, rec, http.StatusNotFound, payment.CodeNotFound)
			for _, secret := range []string{id, f.storeA1.String(), "aozora", "JPY"} {
				if strings.Contains(rec.Body.String(), secret) {
					t.Errorf("%s %s (%s) shows %s: %s", r.method, r.rest, name, secret, rec.Body)
				}
			}
		}
	}
	// The live token sees no test charge; a test helper tells it that it
	// is live before anything else.
	for _, r := range routes {
		rec := f.do(t, r.method, f.chargePath(id)+r.rest, server(f.a1Live), r.body)
		if strings.HasPrefix(r.rest, "/test_helpers/") {
			wantError(t, rec, http.StatusForbidden, payment.CodeTestModeOnly)
		} else {
			wantError(t, rec, http.StatusNotFound, payment.CodeNotFound)
		}
	}
	// Nothing happened to the charge.
	after := f.getCharge(t, id)
	if jstr(after, "status") != "awaiting" || jstr(after, "capture_at") != jstr(ch, "capture_at") {
		t.Errorf("charge after the refused requests: %v", after)
	}
	if l := ok(t, f.do(t, "GET", f.chargePath(id)+"/bank_transfer_ledgers", server(f.a1), nil), http.StatusOK); len(l["items"].([]any)) != 0 {
		t.Errorf("ledger after the refused requests: %v", l)
	}
	// The merchant's own token reaches its store's charge.
	ok(t, f.do(t, "GET", f.chargePath(id)+"/bank_transfer_ledgers", server(f.merchA), nil), http.StatusOK)
	ok(t, f.do(t, "GET", f.chargePath(id)+"/expiry/latest", server(f.merchA), nil), http.StatusOK)
}

// TestBankTransferLedgers: each deposit and the payment out of them is a
// line, newest first, paged as every list; the merchant's only.
func TestBankTransferLedgers(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	// Deposits at 15:30 UTC, which is the next day in Japan.
	f.clock.Set(time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC))
	tok, ch := f.slipCharge(t, a1, bankBody("bank_test_brand"), 1000, "metadata", map[string]any{"order_id": "B-1"})
	ledgers := f.slipPath(ch, "/bank_transfer_ledgers")
	deposit := f.slipPath(ch, "/test_helpers/deposit")

	// The merchant's: a browser's app token has no secret.
	wantError(t, f.do(t, "GET", ledgers, browser(f.a1), nil, origin(payShopOrigin)), http.StatusForbidden, payment.CodeInvalidPermissions)
	empty := ok(t, f.do(t, "GET", ledgers, a1, nil), http.StatusOK)
	if items := empty["items"].([]any); len(items) != 0 || empty["has_more"] != false {
		t.Errorf("ledger before any deposit: %v", empty)
	}

	f.clock.Set(time.Date(2026, 3, 2, 15, 30, 0, 0, time.UTC))
	short := ok(t, f.do(t, "POST", deposit, a1, map[string]any{"amount": 300}), http.StatusOK)
	if jstr(short, "status") != "awaiting" || jstr(short, "id") != jstr(ch, "id") {
		t.Errorf("charge after a short deposit: %v", short)
	}
	f.clock.Advance(time.Minute)
	paid := ok(t, f.do(t, "POST", deposit, a1, map[string]any{"amount": "700"}), http.StatusOK)
	if jstr(paid, "status") != "successful" || jnum(paid, "charged_amount") != 1000 {
		t.Errorf("charge after the deposits reached its amount: %v", paid)
	}

	l := ok(t, f.do(t, "GET", ledgers, a1, nil), http.StatusOK)
	items := l["items"].([]any)
	if len(items) != 3 || l["has_more"] != false {
		t.Fatalf("ledger: %v", l)
	}
	type line struct {
		kind                       string
		amount, balance, deposited float64
		status                     string
	}
	want := []line{ // newest first
		{"payment", 1000, 0, 1000, "exact"},
		{"deposit", 700, 1000, 1000, "exact"},
		{"deposit", 300, 300, 300, "insufficient"},
	}
	for i, it := range items {
		m := it.(map[string]any)
		got := line{jstr(m, "bank_ledger_type"), jnum(m, "amount"), jnum(m, "balance"), jnum(m, "deposited"), jstr(m, "payment_status")}
		if got != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got, want[i])
		}
		if jstr(m, "charge_id") != jstr(ch, "id") || jnum(m, "amount_formatted") != want[i].amount || jstr(m, "currency") != "JPY" ||
			jstr(m, "virtual_bank_account_number") != jstr(tok, "data.account_number") ||
			jstr(m, "virtual_bank_account_holder_name") != "A1" || jstr(m, "virtual_account_id") != jstr(tok, "data.account_id") ||
			jstr(m, "transaction_date") != "2026-03-03" || jstr(m, "mode") != "test" || jstr(m, "transaction_timestamp") != jstr(m, "created_on") {
			t.Errorf("line %d: %v", i, m)
		}
	}
	// Oldest first, and a page at a time.
	asc := ok(t, f.do(t, "GET", ledgers+"?cursor_direction=asc", a1, nil), http.StatusOK)
	if got, ids := listIDs(t, asc), listIDs(t, l); !slices.Equal(got, []string{ids[2], ids[1], ids[0]}) {
		t.Errorf("ascending %v, descending %v", got, ids)
	}
	page := ok(t, f.do(t, "GET", ledgers+"?limit=1", a1, nil), http.StatusOK)
	next := ok(t, f.do(t, "GET", ledgers+"?limit=2&cursor="+listIDs(t, page)[0], a1, nil), http.StatusOK)
	if page["has_more"] != true || !slices.Equal(append(listIDs(t, page), listIDs(t, next)...), listIDs(t, l)) || next["has_more"] != false {
		t.Errorf("pages %v then %v, want %v", page, next, listIDs(t, l))
	}
	wantError(t, f.do(t, "GET", ledgers+"?limit=1000", a1, nil), http.StatusBadRequest, payment.CodeValidation, "limit")

	// A deposit after the charge ended is recorded, and changes nothing
	// of the charge.
	late := ok(t, f.do(t, "POST", deposit, a1, map[string]any{"amount": 50}), http.StatusOK)
	if jstr(late, "status") != "successful" || jnum(late, "charged_amount") != 1000 {
		t.Errorf("charge after a late deposit: %v", late)
	}
	l = ok(t, f.do(t, "GET", ledgers, a1, nil), http.StatusOK)
	top := l["items"].([]any)[0].(map[string]any)
	if len(l["items"].([]any)) != 4 || jstr(top, "bank_ledger_type") != "deposit" || jnum(top, "balance") != 50 ||
		jnum(top, "deposited") != 1050 || jstr(top, "payment_status") != "exceeded" {
		t.Errorf("ledger after a late deposit: %v", l)
	}

	// A card charge has no ledger lines.
	card := f.paidCharge(t, "4000020000000000", 1000, true)
	if l := ok(t, f.do(t, "GET", f.chargePath(card)+"/bank_transfer_ledgers", a1, nil), http.StatusOK); len(l["items"].([]any)) != 0 {
		t.Errorf("a card charge's ledger: %v", l)
	}
}

// TestTestHelpers: pay, deposit and expire stand for the shopper, in test
// mode and with the secret only, on konbini and bank-transfer charges
// only; a deposit's amount is checked before anything is done.
func TestTestHelpers(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)

	t.Run("Konbini", func(t *testing.T) {
		_, paid := f.slipCharge(t, a1, konbiniBody("seven_eleven"), 1500)
		m := ok(t, f.do(t, "POST", f.slipPath(paid, "/test_helpers/pay"), a1, nil), http.StatusOK)
		wantChargeEnd(t, m, "successful", 0)
		if jnum(m, "charged_amount") != 1500 || jstr(m, "id") != jstr(paid, "id") {
			t.Errorf("paid konbini charge: %v", m)
		}
		wantError(t, f.do(t, "POST", f.slipPath(paid, "/test_helpers/pay"), a1, nil), http.StatusBadRequest, payment.CodeValidation, "status")
		wantError(t, f.do(t, "POST", f.slipPath(paid, "/test_helpers/expire"), a1, nil), http.StatusBadRequest, payment.CodeValidation, "status")
		// Paid, it is neither canceled nor refunded.
		wantError(t, f.cancel(t, jstr(paid, "id")), http.StatusBadRequest, payment.CodeCancelNotAllowed)
		wantError(t, f.refund(t, jstr(paid, "id"), 100, "JPY"), http.StatusBadRequest, payment.CodeRefundNotAllowed)

		_, expired := f.slipCharge(t, a1, konbiniBody("lawson"), 1500)
		wantChargeEnd(t, ok(t, f.do(t, "POST", f.slipPath(expired, "/test_helpers/expire"), a1, nil), http.StatusOK), "failed", 327)
		// A konbini payment takes no deposit.
		_, other := f.slipCharge(t, a1, konbiniBody("lawson"), 1500)
		wantError(t, f.do(t, "POST", f.slipPath(other, "/test_helpers/deposit"), a1, map[string]any{"amount": 1500}), http.StatusBadRequest, payment.CodeValidation, "action")
		if st := jstr(f.getCharge(t, jstr(other, "id")), "status"); st != "awaiting" {
			t.Errorf("after a refused deposit the konbini charge is %s", st)
		}
	})

	t.Run("BankTransfer", func(t *testing.T) {
		_, ch := f.slipCharge(t, a1, bankBody("aozora_bank"), 1000)
		deposit := f.slipPath(ch, "/test_helpers/deposit")
		// A bank transfer is not paid at a counter.
		wantError(t, f.do(t, "POST", f.slipPath(ch, "/test_helpers/pay"), a1, nil), http.StatusBadRequest, payment.CodeValidation, "action")
		amounts := []struct {
			name   string
			body   any
			reason string
		}{
			{"no body", nil, payment.ReasonRequired},
			{"no amount", map[string]any{}, payment.ReasonRequired},
			{"null", map[string]any{"amount": nil}, payment.ReasonRequired},
			{"PHP's empty body", "[]", payment.ReasonRequired},
			{"zero", map[string]any{"amount": 0}, "INVALID_AMOUNT"},
			{"negative", map[string]any{"amount": -500}, "INVALID_AMOUNT"},
			{"negative string", map[string]any{"amount": "-500"}, "INVALID_AMOUNT"},
			{"fraction", map[string]any{"amount": 12.5}, payment.ReasonInvalidFormat},
			{"word", map[string]any{"amount": "a thousand"}, payment.ReasonInvalidFormat},
			{"boolean", map[string]any{"amount": true}, payment.ReasonInvalidFormat},
			{"max int64", `{"amount":9223372036854775807}`, payment.ReasonNumberMax},
			{"max int64 string", `{"amount":"9223372036854775807"}`, payment.ReasonNumberMax},
			{"past int64", `{"amount":9223372036854775808}`, payment.ReasonInvalidFormat},
			{"min int64", `{"amount":-9223372036854775808}`, "INVALID_AMOUNT"},
			{"exponent", `{"amount":1e3}`, payment.ReasonInvalidFormat},
			{"a huge number", `{"amount":` + strings.Repeat("9", 100<<10) + `}`, payment.ReasonInvalidFormat},
			{"a huge string", `{"amount":"` + strings.Repeat("9", 100<<10) + `"}`, payment.ReasonInvalidFormat},
		}
		for _, c := range amounts {
			t.Run(c.name, func(t *testing.T) {
				rec := f.do(t, "POST", deposit, a1, c.body)
				errs := wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "amount")
				if !slices.Contains(errs, fieldError{Field: "amount", Reason: c.reason}) {
					t.Errorf("errors %+v, want amount %s", errs, c.reason)
				}
				if rec.Body.Len() > 200 {
					t.Errorf("a %d-byte refusal", rec.Body.Len())
				}
			})
		}
		l := ok(t, f.do(t, "GET", f.slipPath(ch, "/bank_transfer_ledgers"), a1, nil), http.StatusOK)
		if len(l["items"].([]any)) != 0 || jstr(f.getCharge(t, jstr(ch, "id")), "status") != "awaiting" {
			t.Fatalf("refused deposits changed the charge or its ledger: %v", l)
		}
		// The largest deposit a yen charge takes is taken.
		max := ok(t, f.do(t, "POST", deposit, a1, map[string]any{"amount": 9999999}), http.StatusOK)
		if jstr(max, "status") != "successful" || jnum(max, "charged_amount") != 9999999 {
			t.Errorf("after a deposit of the maximum: %v", max)
		}

		_, gone := f.slipCharge(t, a1, bankBody("aozora_bank"), 1000)
		wantChargeEnd(t, ok(t, f.do(t, "POST", f.slipPath(gone, "/test_helpers/expire"), a1, nil), http.StatusOK), "failed", 327)
		// Money that arrives after the end is recorded on the failed charge.
		late := ok(t, f.do(t, "POST", f.slipPath(gone, "/test_helpers/deposit"), a1, map[string]any{"amount": 1000}), http.StatusOK)
		wantChargeEnd(t, late, "failed", 327)
		if l := ok(t, f.do(t, "GET", f.slipPath(gone, "/bank_transfer_ledgers"), a1, nil), http.StatusOK); len(l["items"].([]any)) != 1 {
			t.Errorf("ledger of a late deposit: %v", l)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		_, ch := f.slipCharge(t, a1, bankBody("aozora_bank"), 1000)
		card := f.paidCharge(t, "4000020000000000", 1000, true)
		for _, action := range []string{"pay", "deposit", "expire"} {
			body := map[string]any{"amount": 1000}
			wantError(t, f.do(t, "POST", f.slipPath(ch, "/test_helpers/"+action), browser(f.a1), body, origin(payShopOrigin)),
				http.StatusForbidden, payment.CodeInvalidPermissions)
			wantError(t, f.do(t, "POST", f.slipPath(ch, "/test_helpers/"+action), server(f.a1Live), body), http.StatusForbidden, payment.CodeTestModeOnly)
			errs := wantError(t, f.do(t, "POST", f.chargePath(card)+"/test_helpers/"+action, a1, body), http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
			if len(errs) != 1 || errs[0].Reason != "NOT_KONBINI_OR_BANK_TRANSFER_CHARGE" {
				t.Errorf("%s on a card charge: %+v", action, errs)
			}
		}
		if st := jstr(f.getCharge(t, jstr(ch, "id")), "status"); st != "awaiting" {
			t.Errorf("after refused helpers the charge is %s", st)
		}
		if c := f.getCharge(t, card); jstr(c, "status") != "successful" {
			t.Errorf("after refused helpers the card charge is %v", c)
		}
	})

	t.Run("WaitsForTheWorker", func(t *testing.T) {
		// A helper called right after the charge waits for the worker to
		// open it.
		f.clock.Advance(time.Minute)
		tok := jstr(f.tokenAt(t, a1, konbiniBody("lawson")), "id")
		id := f.charge(t, tok, 1000, "JPY")
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(100 * time.Millisecond)
			if _, err := f.svc.Work.ProcessPending(context.Background(), 100); err != nil {
				t.Errorf("ProcessPending: %v", err)
			}
		}()
		start := time.Now()
		m := ok(t, f.do(t, "POST", f.chargePath(id)+"/test_helpers/pay", a1, nil), http.StatusOK)
		wg.Wait()
		wantChargeEnd(t, m, "successful", 0)
		if d := time.Since(start); d > 8*time.Second {
			t.Errorf("the helper took %s", d)
		}
	})
}

// TestSlipCheckoutInfo: konbini and bank transfers in checkout_info and in
// the store's configuration, on or off as the store says.
func TestSlipCheckoutInfo(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	off := payment.DefaultStoreSettings()
	off.KonbiniOff, off.BankTransferOff, off.MatchAmount = true, true, payment.MatchExact
	offID, offTok := f.storeWith(t, off)
	for _, c := range []struct {
		name    string
		storeID uuid.UUID
		auth    string
		on      bool
		match   string
		// banks are the banks offered: the sandbox's test bank in test
		// mode only.
		banks []string
	}{
		{"default", f.storeA1, server(f.a1), true, "minimum", payment.BankTransferBrands},
		{"live", f.storeA1, server(f.a1Live), true, "minimum", []string{"aozora_bank"}},
		{"turned off", offID, server(offTok), false, "exact", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := ok(t, f.do(t, "GET", "/checkout_info", c.auth, nil), http.StatusOK)
			st := ok(t, f.do(t, "GET", storePath(c.storeID, ""), c.auth, nil), http.StatusOK)
			for where, m := range map[string]map[string]any{"checkout_info": info, "store configuration": object(t, st, "configuration")} {
				conv := object(t, m, "convenience_configuration")
				if got := keysOf(conv); !slices.Equal(got, []string{"enabled", "expiration", "expiration_time_shift"}) {
					t.Errorf("%s convenience_configuration keys %v", where, got)
				}
				if conv["enabled"] != c.on || jstr(conv, "expiration") != "PT720H" || !sameJSON(conv["expiration_time_shift"], map[string]any{"enabled": false}) {
					t.Errorf("%s convenience_configuration %v", where, conv)
				}
				bank := object(t, m, "bank_transfer_configuration")
				if bank["enabled"] != c.on || jstr(bank, "match_amount") != c.match || jstr(bank, "expiration") != "PT168H" ||
					jstr(bank, "maximum_extension_period") != "PT720H" || !sameJSON(bank["expiration_time_shift"], map[string]any{"enabled": false}) {
					t.Errorf("%s bank_transfer_configuration %v", where, bank)
				}
			}
			var konbini, banks []string
			for _, it := range info["supported_brands"].([]any) {
				b := it.(map[string]any)
				switch jstr(b, "payment_type") {
				case "konbini":
					konbini = append(konbini, jstr(b, "brand"))
				case "bank_transfer":
					banks = append(banks, jstr(b, "brand"))
				default:
					continue
				}
				if !sameJSON(b["supported_currencies"], []string{"JPY"}) || !sameJSON(b["countries_allowed"], []string{"JP"}) ||
					b["support_auth_capture"] != false || b["requires_cvv"] != false {
					t.Errorf("row %v", b)
				}
				for _, k := range []string{"card_brand", "online_brand", "qr_brand"} {
					if _, has := b[k]; has {
						t.Errorf("a %s row has %s (PHP's enums would refuse it): %v", jstr(b, "payment_type"), k, b)
					}
				}
				if (jstr(b, "payment_type") == "konbini") != (b["requires_full_name"] == true) {
					t.Errorf("requires_full_name of %v", b)
				}
			}
			wantKonbini, wantBanks := payment.ConvenienceStores, c.banks
			if !c.on {
				wantKonbini = nil
			}
			if !slices.Equal(konbini, wantKonbini) || !slices.Equal(banks, wantBanks) {
				t.Errorf("konbini rows %v, bank rows %v; want %v, %v", konbini, banks, wantKonbini, wantBanks)
			}
		})
	}
}

// TestBankTransferStatusWebhook: each deposit is a bank_transfer_status_updated
// delivery with the fields UnivaPay's event has, to the webhooks that name
// it.
func TestBankTransferStatusWebhook(t *testing.T) {
	sender := &fakeSender{status: 204}
	f := newPayFixture(t, payOptions{events: true, webhookSender: sender})
	a1 := server(f.a1)
	hooks := f.hooksPath(f.storeA1.String())
	hook := f.createHook(t, hooks, a1, hookBody(hookURL, "triggers", []string{"bank_transfer_status_updated"}))
	f.createHook(t, hooks, a1, hookBody(hookURL+"/charges", "triggers", []string{"charge_finished"}))

	tok, ch := f.slipCharge(t, a1, with(bankBody("aozora_bank"), "metadata", map[string]any{"order_id": "12345"}), 1000,
		"metadata", map[string]any{"order_id": "order_12345"})
	f.drain(t)
	deposit := f.slipPath(ch, "/test_helpers/deposit")
	type step struct {
		amount                   int
		status                   string
		balance, deposited, diff float64
	}
	steps := []step{{400, "insufficient", 400, 400, -600}, {900, "exceeded", 0, 1300, 300}}
	var times []string
	for _, s := range steps {
		f.clock.Advance(time.Minute)
		times = append(times, f.clock.Now().UTC().Format("2006-01-02T15:04:05.000000Z"))
		ok(t, f.do(t, "POST", deposit, a1, map[string]any{"amount": s.amount}), http.StatusOK)
		f.drain(t)
	}

	var got []map[string]any
	for _, r := range sender.sent() {
		var b map[string]any
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatalf("delivery body %s: %v", r.Body, err)
		}
		if jstr(b, "event") != "bank_transfer_status_updated" {
			continue
		}
		if r.URL != hookURL {
			t.Errorf("bank_transfer_status_updated went to %s, which does not name it", r.URL)
		}
		if err := signaturetest.Verify(jstr(hook, "secret"), r.Headers["webhook-id"], r.Headers["webhook-timestamp"], r.Headers["webhook-signature"],
			r.Body, f.clock.Now(), 5*time.Minute); err != nil {
			t.Errorf("delivery does not verify: %v", err)
		}
		if got, want := keysOf(b), []string{"created_on", "data", "event", "id"}; !slices.Equal(got, want) || r.Headers["webhook-id"] != jstr(b, "id") {
			t.Errorf("envelope keys %v (webhook-id %s): %s", got, r.Headers["webhook-id"], r.Body)
		}
		got = append(got, b)
	}
	if len(got) != len(steps) {
		t.Fatalf("%d bank_transfer_status_updated deliveries, want %d", len(got), len(steps))
	}
	slices.SortFunc(got, func(a, b map[string]any) int {
		return strings.Compare(jstr(a, "data.latest_deposit_date"), jstr(b, "data.latest_deposit_date"))
	})
	for i, b := range got {
		d := b["data"].(map[string]any)
		if keys, want := keysOf(d), []string{"amount", "amount_difference", "balance", "charge_id", "charge_metadata", "created_on", "currency",
			"deposited", "id", "latest_deposit_amount", "latest_deposit_date", "mode", "payment_status", "store_id", "token_metadata", "updated_on"}; !slices.Equal(keys, want) {
			t.Errorf("data keys %v, want %v", keys, want)
		}
		s := steps[i]
		if jstr(d, "charge_id") != jstr(ch, "id") || jstr(d, "store_id") != f.storeA1.String() || jstr(d, "payment_status") != s.status ||
			jnum(d, "latest_deposit_amount") != float64(s.amount) || jnum(d, "balance") != s.balance || jnum(d, "deposited") != s.deposited ||
			jnum(d, "amount") != 1000 || jnum(d, "amount_difference") != s.diff || jstr(d, "currency") != "JPY" || jstr(d, "mode") != "test" ||
			jstr(d, "latest_deposit_date") != times[i] || jstr(d, "updated_on") != times[i] ||
			!sameJSON(d["token_metadata"], jget(tok, "metadata")) || !sameJSON(d["charge_metadata"], map[string]any{"order_id": "order_12345"}) ||
			!sameJSON(d["token_metadata"], map[string]any{"order_id": "12345"}) {
			t.Errorf("deposit %d: data %v", i+1, d)
		}
		// One status per charge: the same id, never the charge's.
		if _, err := uuid.Parse(jstr(d, "id")); err != nil || jstr(d, "id") == jstr(ch, "id") || jstr(d, "id") != jstr(got[0]["data"].(map[string]any), "id") ||
			jstr(d, "created_on") != jstr(got[0]["data"].(map[string]any), "created_on") {
			t.Errorf("deposit %d: id %s, created_on %s", i+1, jstr(d, "id"), jstr(d, "created_on"))
		}
	}
	// The delivery log shows the event with its data.
	log := ok(t, f.do(t, "GET", hooks+"/"+jstr(hook, "id")+"/events", a1, nil), http.StatusOK)
	if items := log["items"].([]any); len(items) != 2 || jstr(items[0].(map[string]any), "data.payment_status") != "exceeded" {
		t.Errorf("log %v", log)
	}
}
