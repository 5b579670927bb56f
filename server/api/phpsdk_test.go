package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// What PHP's SDK (univapay/univapay-php-sdk 6.7.6 with moneyphp/money 3 and
// WordPress/Requests 2) sends and needs, over HTTP through the real router:
// amounts as strings, phone country codes as strings, tokens without a
// type, [] for an empty body or empty metadata, the configuration objects
// its parsers require, GET /me/{id}. The suite in server/conformance/php
// drives the SDK itself where PHP and the SDK are installed; these tests
// keep the wire format guarded where they are not.

// hostileIntegers are JSON values that are not an integer, nor a string
// holding exactly one: each must be a VALIDATION_ERROR naming its field.
var hostileIntegers = []string{
	`"1e3"`, `"1E3"`, `" 100"`, `"100 "`, `"+1"`, `"0x10"`, `"９９"`, `"01000"`, `"1_000"`, `"1000.0"`, `"1,000"`,
	`""`, `"-"`, `"--1"`, `"1000\u0000"`, `"9223372036854775808"`, `"-9223372036854775809"`,
	`"` + strings.Repeat("9", 400) + `"`, `"` + strings.Repeat("1", 900_000) + `"`,
	`1e3`, `1000.5`, `1000.0`, `9223372036854775808`, strings.Repeat("9", 400), `true`,
	`[1000]`, `[[1000]]`, `["1000"]`, `{"value":1000}`, `{}`, `[]`,
}

func TestPHPAmountsAsStrings(t *testing.T) {
	f := newPayFixture(t, payOptions{})

	t.Run("Charge", func(t *testing.T) {
		rec := f.do(t, "POST", "/charges", server(f.a1),
			`{"transaction_token_id":"`+f.token(t, "4000020000000000")+`","amount":"1000","currency":"JPY"}`)
		ch := ok(t, rec, http.StatusCreated)
		if !strings.Contains(rec.Body.String(), `"requested_amount":1000,`) || jstr(ch, "requested_currency") != "JPY" {
			t.Errorf("charge of \"1000\": %s", rec.Body)
		}
		f.process(t)
		if got := f.getCharge(t, jstr(ch, "id")); jstr(got, "status") != "successful" || jnum(got, "charged_amount") != 1000 {
			t.Errorf("charge of \"1000\" ended %v with %v", got["status"], got["charged_amount"])
		}
	})

	t.Run("Refund", func(t *testing.T) {
		id := f.paidCharge(t, "4000020000000000", 1000, true)
		rec := f.do(t, "POST", f.chargePath(id)+"/refunds", server(f.a1), `{"amount":"400","currency":"JPY","reason":"fraud"}`)
		if rf := ok(t, rec, http.StatusCreated); jnum(rf, "amount") != 400 || !strings.Contains(rec.Body.String(), `"amount":400,`) {
			t.Errorf("refund of \"400\": %s", rec.Body)
		}
		// What is left is 600: the string amount was counted as 400.
		wantError(t, f.do(t, "POST", f.chargePath(id)+"/refunds", server(f.a1), `{"amount":"601","currency":"JPY"}`),
			http.StatusBadRequest, payment.CodeRefundExceedsCharge)
		ok(t, f.do(t, "POST", f.chargePath(id)+"/refunds", server(f.a1), `{"amount":"600","currency":"JPY"}`), http.StatusCreated)
	})

	t.Run("PartialCapture", func(t *testing.T) {
		id := f.paidCharge(t, "4000020000000000", 1000, false)
		rec := f.capture(t, id, `{"amount":"500","currency":"JPY"}`)
		if rec.Code != http.StatusCreated || rec.Body.Len() != 0 {
			t.Fatalf("capture of \"500\": %d %s", rec.Code, rec.Body)
		}
		f.process(t)
		if got := f.getCharge(t, id); jstr(got, "status") != "successful" || jnum(got, "charged_amount") != 500 {
			t.Errorf("capture of \"500\" left %v with %v", got["status"], got["charged_amount"])
		}
	})

	t.Run("NullCaptureAmountIsEverything", func(t *testing.T) {
		id := f.paidCharge(t, "4000020000000000", 1000, false)
		if rec := f.capture(t, id, `{"amount":"300","amount":null,"currency":"JPY"}`); rec.Code != http.StatusCreated {
			t.Fatalf("capture: %d %s", rec.Code, rec.Body)
		}
		f.process(t)
		if got := f.getCharge(t, id); jnum(got, "charged_amount") != 1000 {
			t.Errorf("a null after \"300\" captured %v, want all 1000", got["charged_amount"])
		}
	})

	t.Run("NegativeString", func(t *testing.T) {
		errs := wantError(t, f.do(t, "POST", "/charges", server(f.a1),
			`{"transaction_token_id":"`+f.token(t, "4000020000000000")+`","amount":"-1000","currency":"JPY"}`),
			http.StatusBadRequest, payment.CodeValidation, "amount")
		if len(errs) != 1 || errs[0].Reason != "INVALID_AMOUNT" {
			t.Errorf("errors %+v, want amount INVALID_AMOUNT", errs)
		}
	})

	t.Run("Hostile", func(t *testing.T) {
		tok := f.token(t, "4000020000000000", "type", "recurring")
		paid := f.paidCharge(t, "4000020000000000", 1000, true)
		authorised := f.paidCharge(t, "4000020000000000", 1000, false)
		for _, raw := range hostileIntegers {
			name := raw
			if len(name) > 40 {
				name = fmt.Sprintf("%s…(%d bytes)", name[:20], len(raw))
			}
			for _, c := range []struct{ what, path, body string }{
				{"charge", "/charges", `{"transaction_token_id":"` + tok + `","currency":"JPY","amount":` + raw + `}`},
				{"refund", f.chargePath(paid) + "/refunds", `{"currency":"JPY","amount":` + raw + `}`},
				{"capture", f.chargePath(authorised) + "/capture", `{"currency":"JPY","amount":` + raw + `}`},
			} {
				errs := wantError(t, f.do(t, "POST", c.path, server(f.a1), c.body), http.StatusBadRequest, payment.CodeValidation, "amount")
				if t.Failed() {
					t.Fatalf("%s with amount %s: %+v", c.what, name, errs)
				}
			}
		}
		// Nothing was created or changed by the refused requests.
		if ch := f.getCharge(t, authorised); jstr(ch, "status") != "authorized" {
			t.Errorf("authorised charge is now %v", ch["status"])
		}
		m := ok(t, f.do(t, "GET", f.chargePath(paid)+"/refunds", server(f.a1), nil), http.StatusOK)
		if n := len(listIDs(t, m)); n != 0 {
			t.Errorf("%d refunds after refused requests", n)
		}
		m = ok(t, f.do(t, "GET", "/charges?transaction_token_id="+tok, server(f.a1), nil), http.StatusOK)
		if n := len(listIDs(t, m)); n != 0 {
			t.Errorf("%d charges on the token after refused requests", n)
		}
	})
}

func TestPHPTokenRequests(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	card := `"data":{"cardholder":"PHP test","card_number":"4000020000000000","exp_month":"02","exp_year":"2030","cvv":"123"`

	t.Run("TypeDefaultsToOneTime", func(t *testing.T) {
		for _, b := range []string{
			`{"email":"a@example.com","payment_type":"card",` + card + `}}`,
			`{"email":"a@example.com","payment_type":"card","type":null,` + card + `}}`,
		} {
			tok := ok(t, f.do(t, "POST", "/tokens", server(f.a1), b), http.StatusCreated)
			if jstr(tok, "type") != "one_time" {
				t.Errorf("%s: type %v, want one_time", b, tok["type"])
			}
			f.charge(t, jstr(tok, "id"), 1000, "JPY")
			wantError(t, f.do(t, "POST", "/charges", server(f.a1), chargeBody(jstr(tok, "id"), 1000, "JPY")),
				http.StatusBadRequest, payment.CodeTransactionAlreadyDone)
		}
		for _, typ := range []string{`""`, `5`, `"weekly"`, `["one_time"]`, `"ONE_TIME"`} {
			b := `{"email":"a@example.com","payment_type":"card","type":` + typ + `,` + card + `}}`
			wantError(t, f.do(t, "POST", "/tokens", server(f.a1), b), http.StatusBadRequest, payment.CodeValidation, "type")
		}
	})

	t.Run("CountryCodeAsString", func(t *testing.T) {
		// With or without the international prefix's plus, as merchants
		// write it and the Node SDK passes it on.
		for _, cc := range []string{`"81"`, `81`, `"1"`, `"356"`, `"+81"`, `"+1"`} {
			b := `{"email":"a@example.com","payment_type":"card",` + card +
				`,"phone_number":{"country_code":` + cc + `,"local_number":"12910298309128"}}}`
			rec := f.do(t, "POST", "/tokens", server(f.a1), b)
			tok := ok(t, rec, http.StatusCreated)
			want := strings.Trim(cc, `"+`)
			if !strings.Contains(rec.Body.String(), `"country_code":`+want+`,`) {
				t.Errorf("country_code %s answered as %v: %s", cc, jget(tok, "data.billing.phone_number"), rec.Body)
			}
		}
		for _, cc := range append([]string{`"++81"`, `"+ 81"`, `"+081"`, `"+"`, `" 81"`, `"８１"`, `"081"`, `"81.0"`, `"0x51"`},
			// "+1" is an amount's mistake but a country code.
			slices.DeleteFunc(slices.Clone(hostileIntegers), func(s string) bool { return s == `"+1"` })...) {
			b := `{"email":"a@example.com","payment_type":"card",` + card +
				`,"phone_number":{"country_code":` + cc + `,"local_number":"12910298309128"}}}`
			wantError(t, f.do(t, "POST", "/tokens", server(f.a1), b), http.StatusBadRequest, payment.CodeValidation,
				"data.phone_number.country_code")
			if t.Failed() {
				t.Fatalf("country_code %.40s", cc)
			}
		}
		// The domain's range still holds for a string.
		b := `{"email":"a@example.com","payment_type":"card",` + card + `,"phone_number":{"country_code":"1000","local_number":"1"}}}`
		wantError(t, f.do(t, "POST", "/tokens", server(f.a1), b), http.StatusBadRequest, payment.CodeValidation)
	})

	t.Run("CountryCodeAsStringOnPatch", func(t *testing.T) {
		id := f.token(t, "4000020000000000", "type", "recurring")
		path := storePath(f.storeA1, "/tokens/"+id)
		rec := f.do(t, "PATCH", path, server(f.a1), `{"data":{"phone_number":{"country_code":"44","local_number":"2071234567"}}}`)
		ok(t, rec, http.StatusOK)
		if !strings.Contains(rec.Body.String(), `"country_code":44,`) {
			t.Errorf("patched phone: %s", rec.Body)
		}
		rec = f.do(t, "PATCH", path, server(f.a1), `{"data":{"phone_number":{"country_code":"+44","local_number":"2071234567"}}}`)
		ok(t, rec, http.StatusOK)
		if !strings.Contains(rec.Body.String(), `"country_code":44,`) {
			t.Errorf("patched phone with a plus: %s", rec.Body)
		}
		wantError(t, f.do(t, "PATCH", path, server(f.a1), `{"data":{"phone_number":{"country_code":"++44","local_number":"1"}}}`),
			http.StatusBadRequest, payment.CodeValidation, "data.phone_number.country_code")
	})
}

// TestPHPWalletTokenNames: the PHP SDK's OnlinePayment and QrMerchantPayment
// write brand, call_method and os_type as their enums' names (getName():
// PAY_PAY_ONLINE, HTTP_GET, IOS), not their values; the token answers the
// values, which its parser reads back with fromValue.
func TestPHPWalletTokenNames(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	for _, c := range []struct {
		body string
		want map[string]string
	}{
		{`{"email":"a@example.com","payment_type":"online","data":{"brand":"PAY_PAY_ONLINE","call_method":"HTTP_GET"}}`,
			map[string]string{"brand": "pay_pay_online", "call_method": "http_get"}},
		{`{"email":"a@example.com","payment_type":"online","data":{"brand":"ALIPAY_PLUS_ONLINE","call_method":"SDK","os_type":"IOS","user_identifier":"OpenID-42"}}`,
			map[string]string{"brand": "alipay_plus_online", "call_method": "sdk", "os_type": "ios", "user_identifier": "OpenID-42"}},
		{`{"email":"a@example.com","payment_type":"online","data":{"brand":"D_BARAI_ONLINE"}}`,
			map[string]string{"brand": "d_barai_online", "call_method": "http_post"}},
		{`{"email":"a@example.com","payment_type":"qr_merchant","data":{"brand":"PAY_PAY_MERCHANT"}}`,
			map[string]string{"brand": "pay_pay_merchant"}},
	} {
		tok := ok(t, f.do(t, "POST", "/tokens", server(f.a1), c.body), http.StatusCreated)
		for k, v := range c.want {
			if got := jstr(tok, "data."+k); got != v {
				t.Errorf("%s: data.%s = %q, want %q", c.body, k, got, v)
			}
		}
		if jstr(tok, "type") != "one_time" {
			t.Errorf("%s: type %v", c.body, tok["type"])
		}
	}
	// A name that is no brand's is still refused.
	wantError(t, f.do(t, "POST", "/tokens", server(f.a1),
		`{"email":"a@example.com","payment_type":"online","data":{"brand":"PAY_PAY","call_method":"HTTP_GET"}}`),
		http.StatusBadRequest, payment.CodeValidation, "brand")
}

func TestPHPEmptyArrays(t *testing.T) {
	f := newPayFixture(t, payOptions{})

	t.Run("CancelWithEmptyArrayBody", func(t *testing.T) {
		for _, b := range []string{`[]`, ` [ ] `, "[\n]"} {
			id := f.paidCharge(t, "4000020000000000", 1000, false)
			cn := ok(t, f.do(t, "POST", f.chargePath(id)+"/cancels", server(f.a1), b), http.StatusCreated)
			if md := object(t, cn, "metadata"); len(md) != 0 {
				t.Errorf("cancel with body %q has metadata %v", b, md)
			}
			f.process(t)
			if ch := f.getCharge(t, id); jstr(ch, "status") != "canceled" {
				t.Errorf("charge after a cancel with body %q is %v", b, ch["status"])
			}
		}
	})

	t.Run("PatchWithEmptyArrayBody", func(t *testing.T) {
		id := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY", "metadata", map[string]any{"order": "1"})
		got := ok(t, f.do(t, "PATCH", f.chargePath(id), server(f.a1), `[]`), http.StatusOK)
		if fmt.Sprint(got["metadata"]) != "map[order:1]" {
			t.Errorf("metadata after an empty PATCH = %v", got["metadata"])
		}
	})

	t.Run("EmptyArrayMetadata", func(t *testing.T) {
		tok := ok(t, f.do(t, "POST", "/tokens", server(f.a1), with(cardBody("4000020000000000"), "metadata", []any{})), http.StatusCreated)
		if md := object(t, tok, "metadata"); len(md) != 0 {
			t.Errorf("token metadata = %v", md)
		}
		ch := f.chargeAt(t, server(f.a1), chargeBody(jstr(tok, "id"), 1000, "JPY", "metadata", []any{}))
		if md := object(t, ch, "metadata"); len(md) != 0 {
			t.Errorf("charge metadata = %v", md)
		}
		f.process(t)
		id := jstr(ch, "id")
		ok(t, f.do(t, "PATCH", f.chargePath(id), server(f.a1), map[string]any{"metadata": map[string]any{"k": "v"}}), http.StatusOK)
		got := ok(t, f.do(t, "PATCH", f.chargePath(id), server(f.a1), `{"metadata":[]}`), http.StatusOK)
		if fmt.Sprint(got["metadata"]) != "map[k:v]" {
			t.Errorf("metadata after a PATCH of [] = %v", got["metadata"])
		}
		rf := ok(t, f.do(t, "POST", f.chargePath(id)+"/refunds", server(f.a1), `{"amount":1,"currency":"JPY","metadata":[ ]}`), http.StatusCreated)
		if md := object(t, rf, "metadata"); len(md) != 0 {
			t.Errorf("refund metadata = %v", md)
		}
		auth := f.paidCharge(t, "4000020000000000", 1000, false)
		cn := ok(t, f.do(t, "POST", f.chargePath(auth)+"/cancels", server(f.a1), `{"metadata":[]}`), http.StatusCreated)
		if md := object(t, cn, "metadata"); len(md) != 0 {
			t.Errorf("cancel metadata = %v", md)
		}
	})

	t.Run("NonEmptyArraysRefused", func(t *testing.T) {
		id := f.paidCharge(t, "4000020000000000", 1000, false)
		for _, b := range []string{`[1]`, `[{}]`, `[[]]`, `[null]`, `["metadata"]`} {
			wantError(t, f.do(t, "POST", f.chargePath(id)+"/cancels", server(f.a1), b), http.StatusBadRequest, payment.CodeValidation, "body")
		}
		for _, md := range []string{`[1]`, `[[]]`, `[{}]`, `["a"]`, `"[]x"`} {
			wantError(t, f.do(t, "POST", f.chargePath(id)+"/cancels", server(f.a1), `{"metadata":`+md+`}`),
				http.StatusBadRequest, payment.CodeValidation, "metadata")
		}
		if ch := f.getCharge(t, id); jstr(ch, "status") != "authorized" {
			t.Errorf("charge is %v after refused cancels", ch["status"])
		}
	})
}

// storeWith adds a PCI DSS compliant store of merchant A with the given
// settings and a test app token for it.
func (f *payFixture) storeWith(t *testing.T, settings payment.StoreSettings) (uuid.UUID, *payment.IssuedAppToken) {
	t.Helper()
	ctx := context.Background()
	st := &payment.Store{ID: payment.NewID(), MerchantID: f.merchantA, Name: "Settings", PCICompliant: true,
		Settings: settings, CreatedOn: f.clock.Now()}
	if err := f.db.Update(ctx, func(tx payment.Tx) error { return tx.CreateStore(ctx, st) }); err != nil {
		t.Fatal(err)
	}
	tok, err := f.svc.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{Mode: payment.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	return st.ID, tok
}

func TestStoreCardSettings(t *testing.T) {
	f := newPayFixture(t, payOptions{})

	t.Run("ForbiddenBrand", func(t *testing.T) {
		s := payment.DefaultStoreSettings()
		s.ForbiddenCardBrands = []string{"jcb", "american_express"}
		id, tok := f.storeWith(t, s)
		wantError(t, f.do(t, "POST", "/tokens", server(tok), cardBody("3530111333300000")), http.StatusBadRequest, payment.CodeCardBrandNotSupported)
		wantError(t, f.do(t, "POST", "/tokens", server(tok), cardBody("378282246310005")), http.StatusBadRequest, payment.CodeCardBrandNotSupported)
		ok(t, f.do(t, "POST", "/tokens", server(tok), cardBody("4000020000000000")), http.StatusCreated)
		ok(t, f.do(t, "POST", "/tokens", server(f.a1), cardBody("3530111333300000")), http.StatusCreated)

		st := ok(t, f.do(t, "GET", storePath(id, ""), server(tok), nil), http.StatusOK)
		if got := fmt.Sprint(jget(st, "configuration.card_configuration.forbidden_card_brands")); got != "[jcb american_express]" {
			t.Errorf("forbidden_card_brands = %s", got)
		}
		info := ok(t, f.do(t, "GET", "/checkout_info", server(tok), nil), http.StatusOK)
		for _, b := range info["supported_brands"].([]any) {
			if br := jstr(b.(map[string]any), "brand"); br == "jcb" || br == "american_express" {
				t.Errorf("checkout_info offers %s", br)
			}
		}
		cards := 0
		for _, b := range info["supported_brands"].([]any) {
			if jstr(b.(map[string]any), "payment_type") == "card" {
				cards++
			}
		}
		if cards != 6 {
			t.Errorf("checkout_info offers %d card brands, want 6", cards)
		}
	})

	t.Run("RecurringType", func(t *testing.T) {
		for _, c := range []struct {
			privilege payment.RecurringPrivilege
			noLimit   payment.Code // "" is allowed
			withLimit payment.Code
		}{
			{payment.RecurringNone, payment.CodeRecurringTokenDisabled, payment.CodeRecurringTokenDisabled},
			{payment.RecurringBounded, payment.CodeRecurringUsageLimit, ""},
			{payment.RecurringInfinite, "", ""},
			{"", "", ""},
		} {
			s := payment.DefaultStoreSettings()
			s.RecurringType = c.privilege
			id, tok := f.storeWith(t, s)
			for _, limit := range []string{"", "monthly"} {
				want := c.noLimit
				b := with(cardBody("4000020000000000"), "type", "recurring")
				if limit != "" {
					want, b = c.withLimit, with(b, "usage_limit", limit)
				}
				rec := f.do(t, "POST", "/tokens", server(tok), b)
				if want == "" {
					ok(t, rec, http.StatusCreated)
				} else {
					wantError(t, rec, http.StatusBadRequest, want)
				}
			}
			// One-time and subscription tokens are not recurring ones.
			ok(t, f.do(t, "POST", "/tokens", server(tok), cardBody("4000020000000000")), http.StatusCreated)
			ok(t, f.do(t, "POST", "/tokens", server(tok), with(cardBody("4000020000000000"), "type", "subscription")), http.StatusCreated)

			want := string(c.privilege)
			if want == "" {
				want = "infinite"
			}
			st := ok(t, f.do(t, "GET", storePath(id, ""), server(tok), nil), http.StatusOK)
			if got := jstr(st, "configuration.recurring_token_configuration.recurring_type"); got != want {
				t.Errorf("%q: recurring_type %q", c.privilege, got)
			}
			info := ok(t, f.do(t, "GET", "/checkout_info", server(tok), nil), http.StatusOK)
			if got := jstr(info, "recurring_token_privilege"); got != want {
				t.Errorf("%q: recurring_token_privilege %q", c.privilege, got)
			}
		}
	})
}

func TestMeByID(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	for _, auth := range []string{server(f.a1), server(f.merchA)} {
		me := f.do(t, "GET", "/me", auth, nil)
		ok(t, me, http.StatusOK)
		byID := f.do(t, "GET", "/me/"+f.merchantA.String(), auth, nil)
		ok(t, byID, http.StatusOK)
		if me.Body.String() != byID.Body.String() {
			t.Errorf("GET /me and GET /me/{id} differ:\n%s\n%s", me.Body, byID.Body)
		}
		for _, other := range []string{f.merchantB.String(), payment.NewID().String(), "me", "0"} {
			wantError(t, f.do(t, "GET", "/me/"+other, auth, nil), http.StatusNotFound, payment.CodeNotFound)
		}
	}
	if m := ok(t, f.do(t, "GET", "/me/"+f.merchantB.String(), server(f.b1), nil), http.StatusOK); jstr(m, "id") != f.merchantB.String() {
		t.Errorf("merchant B reads %v", m["id"])
	}
	wantError(t, f.do(t, "GET", "/me/"+f.merchantA.String(), "", nil), http.StatusUnauthorized, payment.CodeAuthHeaderMissing)
}

// ---------------------------------------------------------------------------
// What PHP's parsers require of each resource, written down as data: the
// facts of the SDK's Resources/*::initSchema() (which paths are required and
// how each value is read), not its code. A required path must be present
// and not null (the SDK throws at the first one missing); an enum path,
// when present and not null, must hold one of the SDK's enum values (an
// unknown value throws); a money path must be an integer (moneyphp refuses
// anything else); a currency path a string; a time path an ISO-8601 time.

type phpSchema struct {
	required []string
	enums    map[string][]string
	money    []string
	currency []string
	times    []string
	// objects must be JSON objects when present and not null (the SDK
	// parses them with a nested schema).
	objects []string
}

// The SDK's enums (Enums/*.php): each value is its function name in lower
// case.
var (
	phpMode         = []string{"test", "live"}
	phpTokenType    = []string{"one_time", "recurring", "subscription"}
	phpPaymentType  = []string{"card", "qr_scan", "qr_merchant", "konbini", "apple_pay", "paidy", "online", "bank_transfer"}
	phpChargeStatus = []string{"pending", "authorized", "successful", "failed", "error", "canceled", "awaiting"}
	phpOpStatus     = []string{"pending", "successful", "failed", "error"}
	phpRefundReason = []string{"duplicate", "fraud", "customer_request", "chargeback"}
	phpCVVStatus    = []string{"pending", "current", "failed", "inactive"}
	phpThreeDSState = []string{"pending", "awaiting", "successful", "failed", "error"}
	phpThreeDSMode  = []string{"force", "if_available", "normal", "provided", "require", "skip"}
	phpUsageLimit   = []string{"daily", "weekly", "monthly", "annually"}
	phpCardBrand    = []string{"american_express", "diners_club", "discover", "jcb", "maestro", "mastercard", "private_label", "unionpay", "unknown", "visa"}
	phpPrivilege    = []string{"none", "bounded", "infinite"}
	phpTxType       = []string{"charge", "refund"}
)

// phpConfiguration is Configuration::initSchema: nine required objects,
// and RecurringConfiguration's required card_charge_cvv_confirmation.
var phpConfiguration = []string{
	"user_transactions_configuration", "card_configuration", "qr_scan_configuration", "convenience_configuration",
	"paidy_configuration", "recurring_token_configuration", "recurring_token_configuration.card_charge_cvv_confirmation",
	"security_configuration", "installments_configuration", "card_brand_percent_fees",
}

func prefixed(prefix string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = prefix + p
	}
	return out
}

var phpSchemas = map[string]phpSchema{
	"merchant": {
		required: append([]string{"id", "configuration", "created_on"}, prefixed("configuration.", phpConfiguration)...),
		times:    []string{"created_on"},
		objects:  []string{"configuration.transfer_schedule"},
	},
	// Store::initSchema: configuration is optional, but when it is there
	// Configuration's own requirements apply.
	"store": {
		required: append([]string{"id", "created_on", "configuration"}, prefixed("configuration.", phpConfiguration)...),
		times:    []string{"created_on"},
		objects:  []string{"configuration.transfer_schedule"},
	},
	"checkout_info": {
		required: []string{"mode", "recurring_token_privilege", "subscription_configuration", "card_configuration",
			"qr_scan_configuration", "convenience_configuration", "online_configuration", "paidy_configuration",
			"supported_brands", "theme", "theme.colors"},
		enums: map[string][]string{"mode": phpMode, "recurring_token_privilege": phpPrivilege,
			"supported_brands[].card_brand": phpCardBrand},
		currency: []string{"supported_brands[].supported_currencies[]"},
	},
	"card_token": {
		required: []string{"id", "payment_type", "mode", "type", "created_on", "data.card", "data.cvv_authorize"},
		enums: map[string][]string{"payment_type": phpPaymentType, "mode": phpMode, "type": phpTokenType,
			"usage_limit": phpUsageLimit, "data.cvv_authorize.status": phpCVVStatus, "data.three_ds.status": phpThreeDSState},
		currency: []string{"data.cvv_authorize.currency"},
		times:    []string{"created_on", "last_used_on"},
		objects:  []string{"data.billing", "data.billing.phone_number", "data.three_ds"},
	},
	"charge": {
		required: []string{"id", "transaction_token_type", "requested_currency", "requested_amount", "status", "mode", "created_on"},
		enums: map[string][]string{"transaction_token_type": phpTokenType, "status": phpChargeStatus, "mode": phpMode,
			"three_ds.mode": phpThreeDSMode},
		money:    []string{"requested_amount", "charged_amount"},
		currency: []string{"requested_currency", "charged_currency"},
		times:    []string{"created_on", "capture_at"},
		objects:  []string{"redirect", "three_ds"},
	},
	"refund": {
		required: []string{"id", "status", "currency", "amount", "mode", "created_on"},
		enums:    map[string][]string{"status": phpOpStatus, "reason": phpRefundReason, "mode": phpMode},
		money:    []string{"amount"},
		currency: []string{"currency"},
		times:    []string{"created_on"},
	},
	"cancel": {
		required: []string{"id", "status", "mode", "created_on"},
		enums:    map[string][]string{"status": phpOpStatus, "mode": phpMode},
		times:    []string{"created_on"},
	},
	"transaction": {
		required: []string{"currency", "amount", "type", "status", "mode", "created_on"},
		enums:    map[string][]string{"type": phpTxType, "status": phpChargeStatus, "mode": phpMode},
		money:    []string{"amount"},
		currency: []string{"currency"},
		times:    []string{"created_on"},
	},
	// Paginated::fromResponse reads items and has_more.
	"list": {required: []string{"items", "has_more"}},
}

// jvalues returns every value at path: a dotted path where "name[]" steps
// into each element of an array. present is false where a step is missing.
func jvalues(v any, path string) (values []any, present []bool) {
	if path == "" {
		return []any{v}, []bool{true}
	}
	step, rest, _ := strings.Cut(path, ".")
	each := strings.HasSuffix(step, "[]")
	step = strings.TrimSuffix(step, "[]")
	o, isObject := v.(map[string]any)
	if !isObject {
		return []any{nil}, []bool{false}
	}
	next, has := o[step]
	if !has {
		return []any{nil}, []bool{false}
	}
	if !each {
		return jvalues(next, rest)
	}
	arr, isArray := next.([]any)
	if !isArray {
		return []any{nil}, []bool{false}
	}
	for _, el := range arr {
		vs, ps := jvalues(el, rest)
		values, present = append(values, vs...), append(present, ps...)
	}
	return values, present
}

// checkPHPSchema checks one resource as PHP's parser would read it.
func checkPHPSchema(t *testing.T, what string, m map[string]any, kind string) {
	t.Helper()
	for _, p := range phpProblems(m, kind) {
		t.Errorf("%s: %s", what, p)
	}
}

// phpProblems lists what PHP's parser of kind would refuse in m.
func phpProblems(m map[string]any, kind string) []string {
	s, known := phpSchemas[kind]
	if !known {
		return []string{"no PHP schema " + kind}
	}
	var problems []string
	for _, p := range s.required {
		vs, ps := jvalues(m, p)
		for i := range vs {
			if !ps[i] || vs[i] == nil {
				problems = append(problems, "PHP requires "+p)
			}
		}
	}
	present := func(p string, check func(v any) bool, want string) {
		vs, ps := jvalues(m, p)
		for i, v := range vs {
			if ps[i] && v != nil && !check(v) {
				problems = append(problems, fmt.Sprintf("%s = %v, want %s", p, v, want))
			}
		}
	}
	for p, values := range s.enums {
		present(p, func(v any) bool { s, isString := v.(string); return isString && slices.Contains(values, s) },
			"one of "+strings.Join(values, ", "))
	}
	for _, p := range s.money {
		present(p, func(v any) bool { n, isNumber := v.(float64); return isNumber && n == float64(int64(n)) }, "an integer")
	}
	for _, p := range s.currency {
		present(p, func(v any) bool { s, isString := v.(string); return isString && len(s) == 3 }, "a currency code")
	}
	for _, p := range s.times {
		present(p, func(v any) bool {
			s, isString := v.(string)
			_, err := time.Parse(time.RFC3339Nano, s)
			return isString && err == nil
		}, "an ISO-8601 time")
	}
	for _, p := range s.objects {
		present(p, func(v any) bool { _, isObject := v.(map[string]any); return isObject }, "an object")
	}
	return problems
}

// checkPHPList checks a list envelope and each of its items.
func checkPHPList(t *testing.T, what string, m map[string]any, kind string, atLeast int) {
	t.Helper()
	checkPHPSchema(t, what, m, "list")
	if _, isBool := m["has_more"].(bool); !isBool {
		t.Errorf("%s: has_more = %v, want a boolean", what, m["has_more"])
	}
	items, _ := m["items"].([]any)
	if len(items) < atLeast {
		t.Errorf("%s: %d items, want at least %d", what, len(items), atLeast)
	}
	for i, it := range items {
		checkPHPSchema(t, fmt.Sprintf("%s item %d", what, i), it.(map[string]any), kind)
	}
}

func TestPHPParserShapes(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	get := func(t *testing.T, path, auth string) map[string]any {
		t.Helper()
		return ok(t, f.do(t, "GET", path, auth, nil), http.StatusOK)
	}

	t.Run("Merchant", func(t *testing.T) {
		for _, auth := range []string{a1, server(f.merchA)} {
			me := get(t, "/me", auth)
			checkPHPSchema(t, "GET /me", me, "merchant")
			checkPHPSchema(t, "GET /me/{id}", get(t, "/me/"+f.merchantA.String(), auth), "merchant")
			// A merchant's configuration is what its new stores start with.
			for path, want := range map[string]string{
				"configuration.recurring_token_configuration.recurring_type": "infinite",
				"configuration.security_configuration.refund_percent_limit":  "100",
				"configuration.card_configuration.enabled":                   "true",
				"configuration.maximum_charge_amounts":                       "[map[amount:9.999999e+06 currency:JPY] map[amount:9.999999e+06 currency:USD] map[amount:9.999999e+06 currency:EUR]]",
			} {
				if got := fmt.Sprint(jget(me, path)); got != want {
					t.Errorf("GET /me %s = %s, want %s", path, got, want)
				}
			}
		}
	})

	t.Run("Store", func(t *testing.T) {
		checkPHPSchema(t, "GET /stores/{id}", get(t, storePath(f.storeA1, ""), a1), "store")
		checkPHPList(t, "GET /stores (store token)", get(t, "/stores", a1), "store", 1)
		checkPHPList(t, "GET /stores (merchant token)", get(t, "/stores", server(f.merchA)), "store", 3)
		st := get(t, storePath(f.storeA1, ""), a1)
		// The values say what Kessai does, not placeholders.
		for path, want := range map[string]string{
			"configuration.security_configuration.refund_percent_limit":                        "100",
			"configuration.recurring_token_configuration.recurring_type":                       "infinite",
			"configuration.card_configuration.enabled":                                         "true",
			"configuration.card_configuration.forbidden_card_brands":                           "[]",
			"configuration.card_configuration.only_direct_currency":                            "true",
			"configuration.card_brand_percent_fees.visa":                                       "0",
			"configuration.percent_fee":                                                        "0",
			"configuration.user_transactions_configuration.enabled":                            "false",
			"configuration.installments_configuration.enabled":                                 "false",
			"configuration.recurring_token_configuration.card_charge_cvv_confirmation.enabled": "false",
		} {
			if got := fmt.Sprint(jget(st, path)); got != want {
				t.Errorf("%s = %s, want %s", path, got, want)
			}
		}
		var maxJPY any
		for _, m := range jget(st, "configuration.maximum_charge_amounts").([]any) {
			if jstr(m.(map[string]any), "currency") == "JPY" {
				maxJPY = jget(m.(map[string]any), "amount")
			}
		}
		if maxJPY != 9_999_999.0 {
			t.Errorf("maximum_charge_amounts JPY = %v", maxJPY)
		}
	})

	t.Run("CheckoutInfo", func(t *testing.T) {
		checkPHPSchema(t, "GET /checkout_info", get(t, "/checkout_info", a1), "checkout_info")
	})

	var oneTime, recurring, subscription string
	t.Run("Tokens", func(t *testing.T) {
		phone := map[string]any{"country_code": "81", "local_number": "12910298309128"}
		for _, c := range []struct {
			typ string
			dst *string
			kv  []any
		}{
			{"one_time", &oneTime, nil},
			{"recurring", &recurring, []any{"usage_limit", "monthly"}},
			{"subscription", &subscription, nil},
		} {
			b := withData(with(cardBody("4000020000000000"), append([]any{"type", c.typ}, c.kv...)...),
				"phone_number", phone, "line1", "test line 1", "country", "jp", "cvv_authorize", map[string]any{"enabled": false})
			tok := ok(t, f.do(t, "POST", "/tokens", a1, b), http.StatusCreated)
			checkPHPSchema(t, "POST /tokens "+c.typ, tok, "card_token")
			*c.dst = jstr(tok, "id")
			checkPHPSchema(t, "GET token "+c.typ, get(t, storePath(f.storeA1, "/tokens/"+*c.dst), a1), "card_token")
		}
		checkPHPList(t, "GET /tokens", get(t, "/tokens", a1), "card_token", 3)
		checkPHPList(t, "GET /stores/{id}/tokens", get(t, storePath(f.storeA1, "/tokens"), a1), "card_token", 3)
	})

	t.Run("PaymentsAndLists", func(t *testing.T) {
		ch := f.chargeAt(t, a1, chargeBody(oneTime, "1000", "JPY"))
		checkPHPSchema(t, "POST /charges", ch, "charge")
		auth := f.chargeAt(t, a1, chargeBody(recurring, "2000", "JPY", "capture", false))
		f.process(t)
		id := jstr(ch, "id")
		checkPHPSchema(t, "GET charge", get(t, f.chargePath(id), a1), "charge")
		rf := ok(t, f.do(t, "POST", f.chargePath(id)+"/refunds", a1, `{"amount":"100","currency":"JPY","reason":"fraud","message":"test"}`), http.StatusCreated)
		checkPHPSchema(t, "POST refund", rf, "refund")
		cn := ok(t, f.do(t, "POST", f.chargePath(jstr(auth, "id"))+"/cancels", a1, `[]`), http.StatusCreated)
		checkPHPSchema(t, "POST cancel", cn, "cancel")
		f.process(t)
		checkPHPSchema(t, "GET refund", get(t, f.chargePath(id)+"/refunds/"+jstr(rf, "id"), a1), "refund")
		checkPHPSchema(t, "GET cancel", get(t, f.chargePath(jstr(auth, "id"))+"/cancels/"+jstr(cn, "id"), a1), "cancel")

		checkPHPList(t, "GET /charges", get(t, "/charges", a1), "charge", 2)
		checkPHPList(t, "GET store charges", get(t, storePath(f.storeA1, "/charges"), a1), "charge", 2)
		checkPHPList(t, "GET refunds", get(t, f.chargePath(id)+"/refunds", a1), "refund", 1)
		checkPHPList(t, "GET cancels", get(t, f.chargePath(jstr(auth, "id"))+"/cancels", a1), "cancel", 1)
		checkPHPList(t, "GET /transaction_history", get(t, "/transaction_history", a1), "transaction", 3)
		checkPHPList(t, "GET store transaction_history", get(t, storePath(f.storeA1, "/transaction_history"), a1), "transaction", 3)
	})

	t.Run("SchemaCheckCatchesAMissingObject", func(t *testing.T) {
		// The check itself fails on what PHP's parser refuses.
		st := get(t, storePath(f.storeA1, ""), a1)
		delete(st["configuration"].(map[string]any), "security_configuration")
		for _, c := range []struct {
			kind string
			m    map[string]any
		}{
			{"store", st},
			{"charge", map[string]any{"id": "x", "transaction_token_type": "one_time", "requested_currency": "JPY",
				"requested_amount": 10.5, "status": "pending", "mode": "test", "created_on": "2026-01-01T00:00:00.000000Z"}},
			{"refund", map[string]any{"id": "x", "status": "pending", "currency": "JPY", "amount": 1.0, "mode": "test",
				"created_on": "2026-01-01T00:00:00.000000Z", "reason": "chargeback_reverse"}},
		} {
			if len(phpProblems(c.m, c.kind)) == 0 {
				t.Errorf("a %s PHP cannot parse passes the check: %v", c.kind, c.m)
			}
		}
	})
}

func TestPHPTokenListFilters(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	customer := ok(t, f.do(t, "POST", storePath(f.storeA1, "/create_customer_id"), a1, `{"customer_id":"php-42"}`), http.StatusOK)
	cid := jstr(customer, "customer_id")
	tok := func(email, holder, pan string, md map[string]any) string {
		b := withData(with(cardBody(pan), "type", "recurring", "email", email, "metadata", md), "cardholder", holder)
		return jstr(ok(t, f.do(t, "POST", "/tokens", a1, b), http.StatusCreated), "id")
	}
	gopay := tok("Shopper.One@Example.com", "TARO YAMADA", "4000020000000000", map[string]any{"gopay-customer-id": cid})
	univapay := tok("two@example.com", "Hanako Sato", "5555555555554444", map[string]any{"univapay-customer-id": cid})
	other := tok("three@example.net", "JIRO SUZUKI", "3530111333300000", map[string]any{"gopay-customer-id": payment.NewID().String()})
	inactive := tok("four@example.net", "SABURO ITO", "378282246310005", nil)
	if rec := f.do(t, "DELETE", storePath(f.storeA1, "/tokens/"+inactive), a1, nil); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"customer_id=" + cid, []string{univapay, gopay}},
		{"active=active", []string{other, univapay, gopay}},
		{"active=true", []string{other, univapay, gopay}},
		{"active=inactive", []string{inactive}},
		{"active=false", []string{inactive}},
		{"active=all", []string{inactive, other, univapay, gopay}},
		{"search=shopper.one@example.com", []string{gopay}},
		{"search=EXAMPLE.NET", []string{inactive, other}},
		{"search=hanako", []string{univapay}},
		{"search=4444", []string{univapay}},
		{"search=nobody", nil},
		{"search=%25", nil},
		{"search=example&active=active&customer_id=" + cid, []string{univapay, gopay}},
	} {
		m := ok(t, f.do(t, "GET", "/tokens?type=recurring&"+c.query, a1, nil), http.StatusOK)
		if got := listIDs(t, m); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("GET /tokens?%s = %v, want %v", c.query, got, c.want)
		}
	}
	wantError(t, f.do(t, "GET", "/tokens?active=yes", a1, nil), http.StatusBadRequest, payment.CodeValidation, "active")
}

func TestPHPChargeListFilters(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	charge := func(holder, pan string, month int, phone map[string]any) string {
		b := withData(cardBody(pan), "cardholder", holder, "exp_month", month, "exp_year", 2031)
		if phone != nil {
			b = withData(b, "phone_number", phone)
		}
		id := jstr(ok(t, f.do(t, "POST", "/tokens", a1, b), http.StatusCreated), "id")
		return f.charge(t, id, 1000, "JPY")
	}
	taro := charge("TARO YAMADA", "4000020000000000", 3, map[string]any{"country_code": "81", "local_number": "090-1234-5678"})
	hanako := charge("Hanako Sato", "4242424242424242", 4, map[string]any{"country_code": 81, "local_number": "(03) 1234 5678"})
	jiro := charge("JIRO SUZUKI", "5555555555554444", 3, nil)
	f.process(t)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"name=taro%20yamada", []string{taro}},
		{"name=TARO", nil},
		{"exp_month=3", []string{jiro, taro}},
		{"exp_month=03&exp_year=2031", []string{jiro, taro}},
		{"exp_month=4&exp_year=2030", nil},
		{"card_number=4242424242424242", []string{hanako}},
		{"card_number=4242%204242%204242%204242", []string{hanako}},
		{"card_number=4000020000004242", nil},
		{"last_four=4242&card_number=4242424242424242", []string{hanako}},
		{"phone=09012345678", []string{taro}},
		{"phone=8109012345678", []string{taro}},
		{"phone=0312345678", []string{hanako}},
		{"phone=81-03-1234-5678", []string{hanako}},
		{"phone=1234", nil},
		{"name=jiro%20suzuki&exp_month=3", []string{jiro}},
	} {
		m := ok(t, f.do(t, "GET", "/charges?"+c.query, a1, nil), http.StatusOK)
		if got := listIDs(t, m); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("GET /charges?%s = %v, want %v", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ query, field string }{
		{"exp_month=x", "exp_month"}, {"exp_year=20x1", "exp_year"}, {"card_number=4242", "card_number"},
		{"card_number=abc", "card_number"}, {"last_four=1111&card_number=4242424242424242", "card_number"},
		{"phone=call-me", "phone"},
	} {
		rec := f.do(t, "GET", "/charges?"+c.query, a1, nil)
		wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, c.field)
		if strings.Contains(rec.Body.String(), "4242424242424242") {
			t.Errorf("GET /charges?%s echoes the card number: %s", c.query, rec.Body)
		}
	}
}

func TestPHPTransactionFilters(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	mk := func(email, pan string, md map[string]any) string {
		id := jstr(ok(t, f.do(t, "POST", "/tokens", a1, with(cardBody(pan), "email", email)), http.StatusCreated), "id")
		return f.charge(t, id, 1000, "JPY", "metadata", md)
	}
	one := mk("One@Example.com", "4000020000000000", map[string]any{"order_id": "A-1"})
	two := mk("two@example.net", "5555555555554444", map[string]any{"order_id": 42})
	f.process(t)
	rf := ok(t, f.do(t, "POST", f.chargePath(one)+"/refunds", a1, `{"amount":"100","currency":"JPY","metadata":{"order_id":"A-1-R"}}`), http.StatusCreated)
	f.process(t)
	lines := func(query string) []string {
		m := ok(t, f.do(t, "GET", "/transaction_history?"+query, a1, nil), http.StatusOK)
		var out []string
		for _, it := range m["items"].([]any) {
			out = append(out, jstr(it.(map[string]any), "type")+":"+jstr(it.(map[string]any), "resource_id"))
		}
		return out
	}
	refund := "refund:" + jstr(rf, "id")
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"search=one@example", []string{refund, "charge:" + one}},
		{"search=EXAMPLE.NET", []string{"charge:" + two}},
		{"search=4444", []string{"charge:" + two}},
		{"search=" + one, []string{refund, "charge:" + one}},
		{"search=" + jstr(rf, "id"), []string{refund}},
		{"search=nobody", nil},
		{"metadata=order_id:%20A-1", []string{"charge:" + one}},
		{"metadata=order_id:42", []string{"charge:" + two}},
		{"metadata=order_id:A-1-R&type=refund", []string{refund}},
		{"metadata=order_id:A-1&search=two", nil},
	} {
		if got := lines(c.query); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("GET /transaction_history?%s = %v, want %v", c.query, got, c.want)
		}
	}
	wantError(t, f.do(t, "GET", "/transaction_history?metadata=nokey", a1, nil), http.StatusBadRequest, payment.CodeValidation, "metadata")
}

func TestChargeCaptureAtAndDirectCurrency(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	now := f.clock.Now()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	for _, c := range []struct {
		name string
		at   string
		ok   bool
	}{
		{"InAnHour", at(time.Hour), true},
		{"NextDay", at(24 * time.Hour), true},
		{"InSevenDays", at(7 * 24 * time.Hour), true},
		{"InThirtyMinutes", at(30 * time.Minute), false},
		{"JustUnderAnHour", at(time.Hour - time.Second), false},
		{"JustOverSevenDays", at(7*24*time.Hour + time.Second), false},
		{"InFourteenDays", at(14 * 24 * time.Hour), false},
		{"InThePast", at(-time.Hour), false},
		{"OtherZone", now.Add(2 * time.Hour).In(time.FixedZone("JST", 9*3600)).Format(time.RFC3339), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := chargeBody(f.token(t, "4000020000000000"), 1000, "JPY", "capture", false, "capture_at", c.at)
			rec := f.do(t, "POST", "/charges", a1, b)
			if !c.ok {
				errs := wantError(t, rec, http.StatusBadRequest, payment.CodeValidation, "capture_at")
				if len(errs) != 1 || errs[0].Reason != "INVALID_SCHEDULED_CAPTURE_DATE" {
					t.Errorf("errors %+v", errs)
				}
				return
			}
			ch := ok(t, rec, http.StatusCreated)
			want, _ := time.Parse(time.RFC3339, c.at)
			if got, err := time.Parse(time.RFC3339Nano, jstr(ch, "capture_at")); err != nil || !got.Equal(want) {
				t.Errorf("capture_at %v, want %v", ch["capture_at"], c.at)
			}
		})
	}

	t.Run("CapturedAtCaptureAt", func(t *testing.T) {
		start := f.clock.Now()
		captureAt := start.Add(3 * time.Hour)
		id := jstr(f.chargeAt(t, a1, chargeBody(f.token(t, "4000020000000000"), 1000, "JPY", "capture", false,
			"capture_at", captureAt.Format(time.RFC3339))), "id")
		f.process(t)
		f.clock.Set(captureAt.Add(-time.Second))
		f.process(t)
		if ch := f.getCharge(t, id); jstr(ch, "status") != "authorized" {
			t.Fatalf("charge %s a second before capture_at, want authorized", jstr(ch, "status"))
		}
		f.clock.Set(captureAt)
		f.process(t)
		ch := f.getCharge(t, id)
		if jstr(ch, "status") != "successful" || jstr(ch, "capture_status") != "captured" || ch["charged_amount"] != 1000.0 {
			t.Errorf("charge at capture_at: status %v, capture_status %v, charged_amount %v; want successful, captured, 1000",
				ch["status"], ch["capture_status"], ch["charged_amount"])
		}
	})

	t.Run("OnlyDirectCurrency", func(t *testing.T) {
		for _, v := range []any{true, false, nil} {
			b := chargeBody(f.token(t, "4000020000000000"), 1000, "JPY")
			if v != nil {
				b = with(b, "only_direct_currency", v)
			}
			ch := f.chargeAt(t, a1, b)
			want := v == true
			if ch["only_direct_currency"] != want {
				t.Errorf("only_direct_currency %v answered %v", v, ch["only_direct_currency"])
			}
			f.process(t)
			if got := f.getCharge(t, jstr(ch, "id")); got["only_direct_currency"] != want {
				t.Errorf("only_direct_currency %v stored as %v", v, got["only_direct_currency"])
			}
			listed := ok(t, f.do(t, "GET", "/charges?limit=1", a1, nil), http.StatusOK)
			if it := listed["items"].([]any)[0].(map[string]any); it["only_direct_currency"] != want {
				t.Errorf("only_direct_currency %v listed as %v", v, it["only_direct_currency"])
			}
		}
		wantError(t, f.do(t, "POST", "/charges", a1, with(chargeBody(f.token(t, "4000020000000000"), 1000, "JPY"), "only_direct_currency", "yes")),
			http.StatusBadRequest, payment.CodeValidation, "only_direct_currency")
	})
}

func TestCVVAuthorization(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	recurring := func(pan string, cvv map[string]any) map[string]any {
		b := with(cardBody(pan), "type", "recurring")
		if cvv != nil {
			b = withData(b, "cvv_authorize", cvv)
		}
		return ok(t, f.do(t, "POST", "/tokens", a1, b), http.StatusCreated)
	}
	getToken := func(id string) map[string]any {
		return ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens/"+id), a1, nil), http.StatusOK)
	}

	t.Run("PendingThenCurrent", func(t *testing.T) {
		tok := recurring("4000020000000000", map[string]any{"enabled": true})
		id := jstr(tok, "id")
		if jstr(tok, "data.cvv_authorize.status") != "pending" || !jhasNull(tok, "data.cvv_authorize.charge_id") ||
			!jhasNull(tok, "data.cvv_authorize.currency") {
			t.Errorf("new token's cvv_authorize = %v", jget(tok, "data.cvv_authorize"))
		}
		wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(id, 1000, "JPY")), http.StatusBadRequest, payment.CodeCVVAuthorizationNotCompleted)
		f.process(t)
		got := getToken(id)
		if jstr(got, "data.cvv_authorize.status") != "current" {
			t.Fatalf("cvv_authorize after the worker = %v", jget(got, "data.cvv_authorize"))
		}
		if _, err := uuid.Parse(jstr(got, "data.cvv_authorize.charge_id")); err != nil {
			t.Errorf("charge_id %v", jget(got, "data.cvv_authorize.charge_id"))
		}
		// The CVC is not kept once the check has used it.
		ctx := context.Background()
		err := f.db.View(ctx, func(tx payment.Tx) error {
			stored, err := tx.Token(ctx, uuid.MustParse(id))
			if err == nil && stored.Card.SealedCVC.Data != nil {
				t.Errorf("the CVC is still stored after the check")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		ch := f.charge(t, id, 1000, "JPY")
		f.process(t)
		if st := jstr(f.getCharge(t, ch), "status"); st != "successful" {
			t.Errorf("charge of a checked token is %s", st)
		}
		// The check is done once: nothing is queued for the token again.
		if n, err := f.svc.Work.ProcessPending(context.Background(), 10); err != nil || n != 0 {
			t.Errorf("ProcessPending after the check: %d, %v", n, err)
		}
	})

	t.Run("Currency", func(t *testing.T) {
		tok := recurring("4000020000000000", map[string]any{"enabled": true, "currency": "USD"})
		f.process(t)
		got := getToken(jstr(tok, "id"))
		if jstr(got, "data.cvv_authorize.currency") != "USD" || jstr(got, "data.cvv_authorize.status") != "current" {
			t.Errorf("cvv_authorize = %v", jget(got, "data.cvv_authorize"))
		}
	})

	t.Run("Refused", func(t *testing.T) {
		for _, pan := range []string{"4111111111111111", "4000000000000127"} {
			tok := recurring(pan, map[string]any{"enabled": true})
			f.process(t)
			id := jstr(tok, "id")
			if got := getToken(id); jstr(got, "data.cvv_authorize.status") != "failed" {
				t.Errorf("%s: cvv_authorize = %v", pan, jget(got, "data.cvv_authorize"))
			}
			wantError(t, f.do(t, "POST", "/charges", a1, chargeBody(id, 1000, "JPY")), http.StatusBadRequest, payment.CodeCVVAuthorizationNotCompleted)
		}
	})

	t.Run("NotAsked", func(t *testing.T) {
		for _, cvv := range []map[string]any{nil, {"enabled": false}} {
			tok := recurring("4000020000000000", cvv)
			if !jhasNull(tok, "data.cvv_authorize.status") || tok["data"].(map[string]any)["cvv_authorize"].(map[string]any)["enabled"] != false {
				t.Errorf("cvv_authorize = %v", jget(tok, "data.cvv_authorize"))
			}
			f.charge(t, jstr(tok, "id"), 1000+len(cvv), "JPY")
		}
		f.process(t)
	})
}
