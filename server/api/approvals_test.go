package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
)

// Handler tests of wallets and 3-D Secure (issue 11): online and
// merchant-QR tokens, charges that await their shopper, the issuer tokens
// and QR codes that send the shopper on, every end an approval can have
// (the shopper's action through the service, as the sandbox's pages call
// it; expiry with the injected clock), and 3-D Secure on tokens.

func onlineBody(brand, callMethod string, kv ...any) map[string]any {
	data := map[string]any{"brand": brand}
	if callMethod != "" {
		data["call_method"] = callMethod
	}
	return with(map[string]any{"payment_type": "online", "type": "one_time", "data": data}, kv...)
}

// onlineCharge makes an online token and a charge on it for store A1 and
// processes it to awaiting; it returns the charge id.
func (f *payFixture) onlineCharge(t testing.TB, brand, callMethod string, kv ...any) string {
	t.Helper()
	tok := jstr(f.tokenAt(t, server(f.a1), onlineBody(brand, callMethod)), "id")
	id := f.charge(t, tok, 1200, "JPY", kv...)
	f.process(t)
	if st := jstr(f.getCharge(t, id), "status"); st != "awaiting" {
		t.Fatalf("online charge is %s, want awaiting", st)
	}
	return id
}

// approvalKey is the key of the approval an issuer token sends the
// shopper to: the last segment of its page's URL, or the bare key.
func approvalKey(t testing.TB, issuerToken string) string {
	t.Helper()
	u, err := url.Parse(issuerToken)
	if err != nil {
		t.Fatalf("issuer token %q: %v", issuerToken, err)
	}
	return u.Path[strings.LastIndex(u.Path, "/")+1:]
}

func (f *payFixture) act(t testing.TB, key string, action payment.ApprovalAction, code string) *payment.ApprovalPage {
	t.Helper()
	page, err := f.svc.Charging.ActOnApproval(context.Background(), key, action, code)
	if err != nil {
		t.Fatalf("%s on %s: %v", action, key, err)
	}
	return page
}

func wantChargeEnd(t testing.TB, m map[string]any, status string, code int) {
	t.Helper()
	if got := jstr(m, "status"); got != status {
		t.Errorf("charge status %q, want %q", got, status)
	}
	if got := int(jnum(m, "error.code")); got != code {
		t.Errorf("charge error code %d, want %d (%v)", got, code, m["error"])
	}
}

func TestWalletTokenValidation(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	huge := strings.Repeat("x", 8<<10)
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"no data", map[string]any{"payment_type": "online", "type": "one_time"}, []string{"data"}},
		{"no brand", onlineBody("", "web"), []string{"brand"}},
		{"unknown brand", onlineBody("paypay_online", "web"), []string{"brand"}},
		{"QR brand as online", onlineBody("pay_pay_merchant", "web"), []string{"brand"}},
		{"unknown call method", onlineBody("pay_pay_online", "carrier_pigeon"), []string{"call_method"}},
		{"app without os", onlineBody("pay_pay_online", "app"), []string{"os_type"}},
		{"sdk without os", onlineBody("alipay_online", "sdk"), []string{"os_type"}},
		{"unknown os", withData(onlineBody("pay_pay_online", "app"), "os_type", "symbian"), []string{"os_type"}},
		{"recurring", with(onlineBody("pay_pay_online", "web"), "type", "recurring"), []string{"type"}},
		{"card number in a wallet", withData(onlineBody("pay_pay_online", "web"), "card_number", "4242424242424242"), []string{"data.card_number"}},
		{"WeChat in a browser without IP", onlineBody("we_chat_online", "web"), []string{"ip_address"}},
		{"huge user id", withData(onlineBody("pay_pay_online", "web"), "user_identifier", huge), []string{"user_identifier"}},
		{"3-D Secure on a wallet", with(onlineBody("pay_pay_online", "web"), "three_ds", map[string]any{"mode": "force"}), []string{"three_ds"}},
		{"QR merchant with a call method", map[string]any{"payment_type": "qr_merchant", "data": map[string]any{"brand": "pay_pay_merchant", "call_method": "web"}}, []string{"call_method"}},
		{"online brand as QR merchant", map[string]any{"payment_type": "qr_merchant", "data": map[string]any{"brand": "pay_pay_online"}}, []string{"brand"}},
		{"bad email", with(onlineBody("pay_pay_online", "web"), "email", "not an address"), []string{"email"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.do(t, "POST", "/tokens", server(f.a1), c.body), http.StatusBadRequest, payment.CodeValidation, c.fields...)
		})
	}

	t.Run("Shapes", func(t *testing.T) {
		m := f.tokenAt(t, server(f.a1), onlineBody("pay_pay_online", ""))
		if jstr(m, "payment_type") != "online" || jstr(m, "data.brand") != "pay_pay_online" ||
			jstr(m, "data.call_method") != "http_post" || !jhasNull(m, "data.os_type") || jget(m, "data.card") != nil {
			t.Errorf("online token = %v", m)
		}
		m = f.tokenAt(t, server(f.a1), withData(onlineBody("we_chat_online", "app"), "os_type", "ios", "user_identifier", "open-id-1"))
		if jstr(m, "data.os_type") != "ios" || jstr(m, "data.user_identifier") != "open-id-1" {
			t.Errorf("online token = %v", m)
		}
		m = f.tokenAt(t, server(f.a1), map[string]any{"payment_type": "qr_merchant", "data": map[string]any{"brand": "pay_pay_merchant"}})
		if jstr(m, "data.brand") != "pay_pay_merchant" || jstr(m, "type") != "one_time" {
			t.Errorf("QR token = %v", m)
		}
		// A store that must collect cards through the gateway's pages may
		// still make wallet tokens from its own server: they hold no card.
		f.tokenAt(t, server(f.np), onlineBody("pay_pay_online", "web"))
		// The list filters by payment type.
		list := ok(t, f.do(t, "GET", storePath(f.storeA1, "/tokens?payment_type=qr_merchant"), server(f.a1), nil), http.StatusOK)
		for _, it := range list["items"].([]any) {
			if pt := jstr(it.(map[string]any), "payment_type"); pt != "qr_merchant" {
				t.Errorf("payment_type=qr_merchant lists a %s token", pt)
			}
		}
		if len(list["items"].([]any)) != 1 {
			t.Errorf("payment_type=qr_merchant lists %d tokens, want 1", len(list["items"].([]any)))
		}
	})
}

// TestIssuerTokenBeforeAwaiting: an online charge the worker has not yet
// taken to its shopper has no issuer token: 400 VALIDATION_ERROR on
// status, ISSUER_TOKEN_EMPTY, which the SDKs parse (the Node conformance
// suite sees it only when it wins the race with the worker; here the
// worker has not run). Once it awaits, the issuer token answers. (A
// merchant QR's route answers ready false instead: TestWalletCharges.)
func TestIssuerTokenBeforeAwaiting(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	tok := jstr(f.tokenAt(t, server(f.a1), onlineBody("pay_pay_online", "http_get")), "id")
	id := f.charge(t, tok, 1200, "JPY")
	if st := jstr(f.getCharge(t, id), "status"); st != "pending" {
		t.Fatalf("charge is %s before the worker ran, want pending", st)
	}
	errs := wantError(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil),
		http.StatusBadRequest, payment.CodeValidation, "status")
	if len(errs) != 1 || errs[0].Reason != "ISSUER_TOKEN_EMPTY" {
		t.Errorf("errors = %+v, want status ISSUER_TOKEN_EMPTY", errs)
	}
	f.process(t)
	ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK)
}

func TestWalletCharges(t *testing.T) {
	f := newPayFixture(t, payOptions{})

	t.Run("Outcomes", func(t *testing.T) {
		for _, c := range []struct {
			action payment.ApprovalAction
			status string
			code   int
		}{
			{payment.ActionPay, "successful", 0},
			{payment.ActionFail, "failed", 340},
			{payment.ActionCancel, "canceled", 345},
			{payment.ActionExpire, "failed", 327},
		} {
			t.Run(string(c.action), func(t *testing.T) {
				id := f.onlineCharge(t, "pay_pay_online", "web")
				it := ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK)
				key := approvalKey(t, jstr(it, "issuer_token"))
				f.act(t, key, c.action, "")
				m := f.getCharge(t, id)
				wantChargeEnd(t, m, c.status, c.code)
				if c.status == "successful" && jnum(m, "charged_amount") != 1200 {
					t.Errorf("charged_amount = %v", m["charged_amount"])
				}
				// The approval has ended: acting again changes nothing.
				if page := f.act(t, key, payment.ActionPay, ""); c.action != payment.ActionPay && page.Status == payment.ApprovalSuccessful {
					t.Errorf("a second action changed the ended approval to %s", page.Status)
				}
				wantChargeEnd(t, f.getCharge(t, id), c.status, c.code)
				wantError(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil),
					http.StatusBadRequest, payment.CodeValidation, "status")
			})
		}
	})

	t.Run("ExpiresByItself", func(t *testing.T) {
		id := f.onlineCharge(t, "alipay_online", "http_get")
		key := approvalKey(t, jstr(ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK), "issuer_token"))
		f.clock.Advance(5*time.Minute - time.Second)
		f.process(t)
		if st := jstr(f.getCharge(t, id), "status"); st != "awaiting" {
			t.Fatalf("a second before its expiry the charge is %s", st)
		}
		f.clock.Advance(time.Second)
		// Nobody acted and nobody reads the page: the gateway's worker
		// ends it.
		f.process(t)
		wantChargeEnd(t, f.getCharge(t, id), "failed", 327)
		// The shopper who pays now is too late.
		if page := f.act(t, key, payment.ActionPay, ""); page.Status != payment.ApprovalExpired {
			t.Errorf("paying after the expiry: %s", page.Status)
		}
		wantChargeEnd(t, f.getCharge(t, id), "failed", 327)
	})

	t.Run("ExpiredBeforeTheWorkerRan", func(t *testing.T) {
		id := f.onlineCharge(t, "d_barai_online", "web")
		key := approvalKey(t, jstr(ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK), "issuer_token"))
		f.clock.Advance(6 * time.Minute)
		page, err := f.svc.Charging.Approval(context.Background(), key)
		if err != nil || page.Status != payment.ApprovalExpired {
			t.Fatalf("page of an approval past its time: %v, %v", page, err)
		}
		if page := f.act(t, key, payment.ActionPay, ""); page.Status != payment.ApprovalExpired {
			t.Errorf("paying past the time (worker not yet run): %s", page.Status)
		}
		wantChargeEnd(t, f.getCharge(t, id), "failed", 327)
		f.process(t)
		wantChargeEnd(t, f.getCharge(t, id), "failed", 327)
	})

	t.Run("IssuerTokens", func(t *testing.T) {
		for _, c := range []struct {
			callMethod string
			os         string
			payload    bool
			bareKey    bool
		}{
			{"web", "", false, false},
			{"http_get", "", false, false},
			{"http_get_mobile", "android", false, false},
			{"http_post", "", true, false},
			{"sdk", "ios", false, true},
			{"app", "android", false, true},
		} {
			t.Run(c.callMethod, func(t *testing.T) {
				b := onlineBody("alipay_plus_online", c.callMethod)
				if c.os != "" {
					b = withData(b, "os_type", c.os)
				}
				tok := jstr(f.tokenAt(t, server(f.a1), b), "id")
				id := f.charge(t, tok, 500, "JPY")
				wantError(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil),
					http.StatusBadRequest, payment.CodeValidation, "status")
				f.process(t)
				it := ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK)
				same := ok(t, f.do(t, "GET", f.chargePath(id)+"/issuerToken", server(f.a1), nil), http.StatusOK)
				if jstr(it, "issuer_token") != jstr(same, "issuer_token") {
					t.Errorf("/issuerToken answers %v, /issuer_token %v", same, it)
				}
				if jstr(it, "call_method") != c.callMethod || jstr(it, "payment_type") != "online" {
					t.Errorf("issuer token = %v", it)
				}
				if _, has := it["content_type"]; has {
					t.Errorf("online issuer token has a content_type: %v", it)
				}
				issuer := jstr(it, "issuer_token")
				switch {
				case c.bareKey:
					if strings.Contains(issuer, "/") || len(issuer) != 26 {
						t.Errorf("%s issuer token %q, want a bare key", c.callMethod, issuer)
					}
				case !strings.HasPrefix(issuer, publicOrigin+payment.WalletPagePath):
					t.Errorf("issuer token %q, want the wallet page", issuer)
				}
				payload, _ := it["payload"].(map[string]any)
				if c.payload != (len(payload) > 0) {
					t.Errorf("payload = %v", it["payload"])
				}
				if c.payload && (payload["resource_id"] != id || payload["resource_type"] != "charge") {
					t.Errorf("payload = %v", payload)
				}
				// Every spelling of the key leads to the same approval.
				if page, err := f.svc.Charging.Approval(context.Background(), approvalKey(t, issuer)); err != nil || page.ResourceID.String() != id {
					t.Errorf("approval of %q: %v, %v", issuer, page, err)
				}
			})
		}
	})

	t.Run("Refused", func(t *testing.T) {
		tok := jstr(f.tokenAt(t, server(f.a1), onlineBody("pay_pay_online", "web")), "id")
		wantError(t, f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 100, "JPY", "capture", false)),
			http.StatusBadRequest, payment.CodeValidation, "capture")
		wantError(t, f.do(t, "POST", "/charges", server(f.a1), chargeBody(tok, 100, "JPY", "three_ds", map[string]any{"mode": "normal"})),
			http.StatusBadRequest, payment.CodeValidation, "three_ds")
		card := f.paidCharge(t, "4242424242424242", 100, true)
		wantError(t, f.do(t, "GET", f.chargePath(card)+"/issuer_token", server(f.a1), nil),
			http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
		wantError(t, f.do(t, "GET", f.chargePath(card)+"/qr", server(f.a1), nil),
			http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
		// Another merchant's charge, or an unknown one, does not exist.
		id := f.onlineCharge(t, "pay_pay_online", "web")
		wantError(t, f.do(t, "GET", storePath(f.storeB1, "/charges/"+id+"/issuer_token"), server(f.b1), nil),
			http.StatusNotFound, payment.CodeNotFound)
		wantError(t, f.do(t, "GET", f.chargePath(uuid.NewString())+"/issuer_token", server(f.a1), nil),
			http.StatusNotFound, payment.CodeNotFound)
		// A live-mode wallet charge has no acquirer.
		live := jstr(f.tokenAt(t, server(f.a1Live), onlineBody("pay_pay_online", "web")), "id")
		wantError(t, f.do(t, "POST", "/charges", server(f.a1Live), chargeBody(live, 100, "JPY")),
			http.StatusBadRequest, payment.CodeNoGatewaysAvailable)
	})

	t.Run("Browser", func(t *testing.T) {
		// The widget makes the token and the charge, then reads the
		// issuer token, with the app token alone.
		tok := jstr(f.tokenAt(t, browser(f.a1), onlineBody("pay_pay_online", "web"), origin(payShopOrigin)), "id")
		id := jstr(f.chargeAt(t, browser(f.a1), chargeBody(tok, 700, "JPY"), origin(payShopOrigin)), "id")
		f.process(t)
		it := ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", browser(f.a1), nil, origin(payShopOrigin)), http.StatusOK)
		f.act(t, approvalKey(t, jstr(it, "issuer_token")), payment.ActionPay, "")
		wantChargeEnd(t, f.getCharge(t, id), "successful", 0)
	})

	t.Run("MerchantCancelsWhileAwaiting", func(t *testing.T) {
		id := f.onlineCharge(t, "we_chat_online", "http_post")
		key := approvalKey(t, jstr(ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK), "issuer_token"))
		cn := ok(t, f.do(t, "POST", f.chargePath(id)+"/cancels", server(f.a1), map[string]any{}), http.StatusCreated)
		if jstr(cn, "status") != "successful" {
			t.Errorf("cancel of an awaiting charge = %v", cn)
		}
		wantChargeEnd(t, f.getCharge(t, id), "canceled", 0)
		if page := f.act(t, key, payment.ActionPay, ""); page.Status != payment.ApprovalCanceled {
			t.Errorf("the shopper paid a withdrawn payment: %s", page.Status)
		}
		wantChargeEnd(t, f.getCharge(t, id), "canceled", 0)
	})

	t.Run("Refund", func(t *testing.T) {
		id := f.onlineCharge(t, "pay_pay_online", "web")
		f.act(t, approvalKey(t, jstr(ok(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusOK), "issuer_token")), payment.ActionPay, "")
		r := ok(t, f.refund(t, id, 200, "JPY"), http.StatusCreated)
		f.process(t)
		got := ok(t, f.do(t, "GET", f.chargePath(id)+"/refunds/"+jstr(r, "id"), server(f.a1), nil), http.StatusOK)
		if jstr(got, "status") != "successful" {
			t.Errorf("refund of a wallet charge = %v", got)
		}
	})
}

func TestMerchantQR(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	tok := jstr(f.tokenAt(t, server(f.a1), map[string]any{"payment_type": "qr_merchant", "data": map[string]any{"brand": "pay_pay_merchant"}}), "id")
	id := f.charge(t, tok, 980, "JPY")
	qr := ok(t, f.do(t, "GET", f.chargePath(id)+"/qr", server(f.a1), nil), http.StatusOK)
	if qr["ready"] != false || !jhasNull(qr, "qr_image_url") {
		t.Errorf("QR before the payment is open = %v", qr)
	}
	f.process(t)
	qr = ok(t, f.do(t, "GET", f.chargePath(id)+"/qr", server(f.a1), nil), http.StatusOK)
	img := jstr(qr, "qr_image_url")
	if qr["ready"] != true || !strings.HasPrefix(img, publicOrigin+payment.WalletPagePath) || !strings.HasSuffix(img, payment.WalletQRSuffix) {
		t.Errorf("QR = %v", qr)
	}
	key := strings.TrimSuffix(strings.TrimPrefix(img, publicOrigin+payment.WalletPagePath), payment.WalletQRSuffix)
	f.act(t, key, payment.ActionPay, "")
	wantChargeEnd(t, f.getCharge(t, id), "successful", 0)
	wantError(t, f.do(t, "GET", f.chargePath(id)+"/qr", server(f.a1), nil), http.StatusBadRequest, payment.CodeValidation, "status")
	// An online charge has an issuer token, not a merchant QR code.
	online := f.onlineCharge(t, "pay_pay_online", "web")
	wantError(t, f.do(t, "GET", f.chargePath(online)+"/qr", server(f.a1), nil), http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
	wantError(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil), http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
}

// threeDSCharge charges a card of store a1's token with three_ds (nil:
// none) and processes it.
func (f *payFixture) threeDSCharge(t testing.TB, auth string, pan string, threeDS map[string]any) (id string, m map[string]any) {
	t.Helper()
	tok := jstr(f.tokenAt(t, auth, cardBody(pan)), "id")
	var kv []any
	if threeDS != nil {
		kv = []any{"three_ds", threeDS}
	}
	id = jstr(f.chargeAt(t, auth, chargeBody(tok, 3000, "JPY", kv...)), "id")
	f.process(t)
	return id, ok(t, f.do(t, "GET", "/charges/"+id, auth, nil), http.StatusOK)
}

func TestThreeDSDecisions(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	required := payment.DefaultStoreSettings()
	required.ThreeDSRequired = true
	_, strict := f.storeWith(t, required)
	const (
		challenge    = "4000002760003184"
		declined     = "4000008400001629"
		mandatory    = "4000000000003220"
		mandatory2   = "4000000000003063"
		frictionless = "4000000000003055"
		notEnrolled  = "4000000000003097"
		plain        = "4242424242424242"
	)
	cases := []struct {
		pan    string
		mode   string // "-": no three_ds
		strict bool   // the store requires 3-D Secure
		status string
		code   int
		ds     string // the charge's three_ds.status
	}{
		{plain, "-", false, "successful", 0, ""},
		{challenge, "-", false, "successful", 0, ""},
		{mandatory, "-", false, "awaiting", 0, "awaiting"},
		{mandatory2, "-", false, "awaiting", 0, "awaiting"},
		{notEnrolled, "-", false, "successful", 0, ""},
		{plain, "normal", false, "successful", 0, "successful"},
		{frictionless, "normal", false, "successful", 0, "successful"},
		{challenge, "normal", false, "awaiting", 0, "awaiting"},
		{declined, "if_available", false, "awaiting", 0, "awaiting"},
		{notEnrolled, "normal", false, "successful", 0, ""},
		{notEnrolled, "if_available", false, "successful", 0, ""},
		{notEnrolled, "require", false, "failed", 356, "failed"},
		{notEnrolled, "force", false, "successful", 0, ""},
		{plain, "force", false, "awaiting", 0, "awaiting"},
		{frictionless, "require", false, "awaiting", 0, "awaiting"},
		{mandatory, "skip", false, "successful", 0, ""},
		{plain, "-", true, "awaiting", 0, "awaiting"},
		{notEnrolled, "-", true, "failed", 356, "failed"},
		{plain, "skip", true, "successful", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.pan+"/"+c.mode+map[bool]string{true: "/strict"}[c.strict], func(t *testing.T) {
			auth := server(f.a1)
			if c.strict {
				auth = server(strict)
			}
			var ds map[string]any
			if c.mode != "-" {
				ds = map[string]any{"mode": c.mode}
			}
			_, m := f.threeDSCharge(t, auth, c.pan, ds)
			wantChargeEnd(t, m, c.status, c.code)
			if got := jstr(m, "three_ds.status"); got != c.ds {
				t.Errorf("three_ds.status = %q, want %q", got, c.ds)
			}
		})
	}
}

func TestThreeDSChallenges(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	const challenge = "4000002760003184"
	ds := map[string]any{"mode": "normal", "redirect_endpoint": "https://shop.example/3ds/done", "redirect_id": "order-7"}

	t.Run("IssuerToken", func(t *testing.T) {
		tok := f.token(t, challenge)
		id := f.charge(t, tok, 3000, "JPY", "three_ds", ds)
		wantError(t, f.do(t, "GET", f.chargePath(id)+"/three_ds/issuer_token", server(f.a1), nil),
			http.StatusBadRequest, payment.CodeValidation, "status")
		f.process(t)
		m := f.getCharge(t, id)
		if jstr(m, "three_ds.mode") != "normal" || jstr(m, "three_ds.redirect_endpoint") != ds["redirect_endpoint"] ||
			jstr(m, "three_ds.redirect_id") != "order-7" {
			t.Errorf("charge three_ds = %v", m["three_ds"])
		}
		// Another shopper's charge, which the merchant's server made, is
		// not a browser's to follow (TestBrowserReadsOnlyItsOwnChallenge).
		wantError(t, f.do(t, "GET", f.chargePath(id)+"/three_ds/issuer_token", browser(f.a1), nil, origin(payShopOrigin)),
			http.StatusForbidden, payment.CodeInvalidPermissions)
		it := ok(t, f.do(t, "GET", f.chargePath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
		want := map[string]any{
			"call_method": "http_post", "content_type": "application/x-www-form-urlencoded; charset=UTF-8",
			"payment_type": "card", "payload": map[string]any{"resource_id": id, "resource_type": "charge"},
		}
		for k, v := range want {
			if got := jget(it, k); !sameJSON(got, v) {
				t.Errorf("%s = %v, want %v", k, got, v)
			}
		}
		if len(it) != 5 || !strings.HasPrefix(jstr(it, "issuer_token"), publicOrigin+payment.ThreeDSPagePath) {
			t.Errorf("issuer token = %v", it)
		}
		page, err := f.svc.Charging.Approval(context.Background(), approvalKey(t, jstr(it, "issuer_token")))
		if err != nil || page.LastFour != "3184" || page.Amount != 3000 || page.RedirectEndpoint != ds["redirect_endpoint"] || page.RedirectID != "order-7" {
			t.Errorf("challenge page = %+v, %v", page, err)
		}
		// A wallet's issuer token is not the way to a challenge.
		wantError(t, f.do(t, "GET", f.chargePath(id)+"/issuer_token", server(f.a1), nil),
			http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
	})

	cases := []struct {
		name   string
		pan    string
		answer func(t *testing.T, key string)
		status string
		code   int
	}{
		{"Passed", challenge, func(t *testing.T, key string) { f.act(t, key, payment.ActionAnswer, payment.ChallengeCode) }, "successful", 0},
		{"PassedThenDeclined", "4000008400001629", func(t *testing.T, key string) { f.act(t, key, payment.ActionAnswer, "123456") }, "failed", 359},
		{"SecondTry", challenge, func(t *testing.T, key string) {
			if p := f.act(t, key, payment.ActionAnswer, "000000"); p.Status != payment.ApprovalAwaiting || p.Tries != 1 {
				t.Errorf("after one wrong code: %s, %d tries", p.Status, p.Tries)
			}
			f.act(t, key, payment.ActionAnswer, "123456")
		}, "successful", 0},
		{"ThreeWrongCodes", challenge, func(t *testing.T, key string) {
			for i := range 3 {
				p := f.act(t, key, payment.ActionAnswer, "12345"+string(rune('7'+i)))
				if want := map[bool]payment.ApprovalStatus{true: payment.ApprovalFailed, false: payment.ApprovalAwaiting}[i == 2]; p.Status != want {
					t.Errorf("after %d wrong codes: %s", i+1, p.Status)
				}
			}
			// The right code after the third wrong one is too late.
			f.act(t, key, payment.ActionAnswer, "123456")
		}, "failed", 358},
		{"Canceled", challenge, func(t *testing.T, key string) { f.act(t, key, payment.ActionCancel, "") }, "failed", 358},
		{"Expired", challenge, func(t *testing.T, key string) {
			f.clock.Advance(10 * time.Minute)
			f.process(t)
		}, "failed", 358},
		{"AnsweredLate", challenge, func(t *testing.T, key string) {
			f.clock.Advance(10*time.Minute + time.Second)
			f.act(t, key, payment.ActionAnswer, "123456")
		}, "failed", 358},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := f.charge(t, f.token(t, c.pan), 3000, "JPY", "three_ds", ds)
			f.process(t)
			it := ok(t, f.do(t, "GET", f.chargePath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
			key := approvalKey(t, jstr(it, "issuer_token"))
			// A wallet's action is not a challenge's.
			if _, err := f.svc.Charging.ActOnApproval(context.Background(), key, payment.ActionPay, ""); err == nil {
				t.Error("Pay was accepted on a challenge")
			}
			c.answer(t, key)
			f.process(t)
			m := f.getCharge(t, id)
			wantChargeEnd(t, m, c.status, c.code)
			wantDS := map[bool]string{true: "successful", false: "failed"}[c.code != 358]
			if got := jstr(m, "three_ds.status"); got != wantDS {
				t.Errorf("three_ds.status = %q, want %q", got, wantDS)
			}
			wantError(t, f.do(t, "GET", f.chargePath(id)+"/three_ds/issuer_token", server(f.a1), nil),
				http.StatusBadRequest, payment.CodeValidation, "status")
		})
	}

	t.Run("SkipNeedsTheSecret", func(t *testing.T) {
		tok := jstr(f.tokenAt(t, browser(f.a1), cardBody(challenge), origin(payShopOrigin)), "id")
		wantError(t, f.do(t, "POST", "/charges", browser(f.a1), chargeBody(tok, 100, "JPY", "three_ds", map[string]any{"mode": "skip"}), origin(payShopOrigin)),
			http.StatusBadRequest, payment.CodeValidation, "three_ds.mode")
	})

	t.Run("MerchantCancelsAChallenge", func(t *testing.T) {
		id := f.charge(t, f.token(t, challenge), 3000, "JPY", "three_ds", ds)
		f.process(t)
		ok(t, f.do(t, "POST", f.chargePath(id)+"/cancels", server(f.a1), nil), http.StatusCreated)
		wantChargeEnd(t, f.getCharge(t, id), "canceled", 0)
	})
}

// TestChallengeComesBeforeAuthorization (issue 25): a charge awaiting its
// shopper's 3-D Secure challenge is authorised only once the challenge is
// passed. An authorisation item that runs while the challenge is open (a
// stray one: a retried or duplicated item) completes without calling the
// acquirer and leaves the charge awaiting; the passed challenge then
// authorises it.
func TestChallengeComesBeforeAuthorization(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	const challenge = "4000002760003184"
	id := f.charge(t, f.token(t, challenge), 3000, "JPY", "three_ds", map[string]any{"mode": "normal"})
	f.process(t)
	m := f.getCharge(t, id)
	if jstr(m, "status") != "awaiting" {
		t.Fatalf("charge on a challenge card is %q, want awaiting", jstr(m, "status"))
	}
	chargeID, err := uuid.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	stray := func() {
		t.Helper()
		ctx := context.Background()
		if err := f.db.Update(ctx, func(tx payment.Tx) error {
			return tx.InsertWork(ctx, payment.WorkAuthorize, chargeID, f.clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		f.process(t)
	}
	stray()
	m = f.getCharge(t, id)
	if jstr(m, "status") != "awaiting" || jget(m, "charged_amount") != nil {
		t.Fatalf("a stray authorisation before the challenge: charge %q, charged %v; want awaiting, nothing charged",
			jstr(m, "status"), m["charged_amount"])
	}

	it := ok(t, f.do(t, "GET", f.chargePath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
	f.act(t, approvalKey(t, jstr(it, "issuer_token")), payment.ActionAnswer, payment.ChallengeCode)
	f.process(t)
	m = f.getCharge(t, id)
	wantChargeEnd(t, m, "successful", 0)
	if got := jstr(m, "three_ds.status"); got != "successful" {
		t.Errorf("three_ds.status = %q, want successful", got)
	}
	// Once it ended, a stray item changes nothing, not even the time of
	// its last change.
	f.clock.Advance(time.Minute)
	stray()
	after := f.getCharge(t, id)
	wantChargeEnd(t, after, "successful", 0)
	if jstr(after, "updated_on") != jstr(m, "updated_on") {
		t.Errorf("a stray authorisation after the end changed the charge at %s", jstr(after, "updated_on"))
	}
}

func TestExternalThreeDS(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	mpi := map[string]any{
		"authentication_value": "AAABBEg0VhI0VniQEjRWAAAAAAA=", "eci": "05",
		"ds_transaction_id": "f25084f0-5b16-4c0a-ae5d-b24808a95e4b", "server_transaction_id": "8a880dc0-d2d2-4067-bcb1-b08d1690b26e",
		"message_version": "2.2.0", "transaction_status": "Y",
	}
	without := func(k string) map[string]any { m := with(mpi); delete(m, k); return m }

	id := f.charge(t, f.token(t, "4000002760003184"), 3000, "JPY", "three_ds", mpi)
	f.process(t)
	rec := f.do(t, "GET", f.chargePath(id), server(f.a1), nil)
	m := ok(t, rec, http.StatusOK)
	wantChargeEnd(t, m, "successful", 0)
	if jstr(m, "three_ds.mode") != "provided" {
		t.Errorf("three_ds = %v, want mode provided", m["three_ds"])
	}
	if strings.Contains(rec.Body.String(), "AAABBEg0VhI0VniQEjRWAAAAAAA") {
		t.Error("the charge shows the authentication value")
	}

	for _, c := range []struct {
		name  string
		ds    map[string]any
		field string
	}{
		{"five of six", without("eci"), "three_ds.eci"},
		{"no authentication value", without("authentication_value"), "three_ds.authentication_value"},
		{"not authenticated", with(mpi, "transaction_status", "N"), "three_ds.transaction_status"},
		{"bad ECI", with(mpi, "eci", "5"), "three_ds.eci"},
		{"bad DS id", with(mpi, "ds_transaction_id", "not-a-uuid"), "three_ds.ds_transaction_id"},
		{"bad version", with(mpi, "message_version", "1.0.2"), "three_ds.message_version"},
		{"huge value", with(mpi, "authentication_value", strings.Repeat("A", 8<<10)), "three_ds.authentication_value"},
		{"with another mode", with(mpi, "mode", "force"), "three_ds.mode"},
		{"provided without data", map[string]any{"mode": "provided"}, "three_ds.authentication_value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.do(t, "POST", "/charges", server(f.a1), chargeBody(f.token(t, "4242424242424242"), 100, "JPY", "three_ds", c.ds)),
				http.StatusBadRequest, payment.CodeValidation, c.field)
		})
	}
}

func TestTokenThreeDS(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	recurring := func(pan string, enabled bool) map[string]any {
		b := withData(with(cardBody(pan), "type", "recurring"), "three_ds", map[string]any{"enabled": enabled})
		return b
	}
	tokenPath := func(id string) string { return storePath(f.storeA1, "/tokens/"+id) }

	for _, c := range []struct {
		pan    string
		status string // after processing
		code   int
	}{
		{"4000002760003184", "awaiting", 0},
		{"4242424242424242", "successful", 0},
		{"4000000000003097", "failed", 356},
	} {
		t.Run(c.pan, func(t *testing.T) {
			m := f.tokenAt(t, server(f.a1), recurring(c.pan, true))
			id := jstr(m, "id")
			if jstr(m, "data.three_ds.status") != "pending" || jget(m, "data.three_ds.enabled") != true {
				t.Errorf("new token three_ds = %v", jget(m, "data.three_ds"))
			}
			wantError(t, f.do(t, "GET", tokenPath(id)+"/three_ds/issuer_token", server(f.a1), nil),
				http.StatusBadRequest, payment.CodeValidation, "status")
			f.process(t)
			m = ok(t, f.do(t, "GET", tokenPath(id), server(f.a1), nil), http.StatusOK)
			if got := jstr(m, "data.three_ds.status"); got != c.status {
				t.Fatalf("three_ds.status = %q, want %q", got, c.status)
			}
			if got := int(jnum(m, "data.three_ds.error.code")); got != c.code {
				t.Errorf("three_ds.error = %v", jget(m, "data.three_ds.error"))
			}
		})
	}

	t.Run("Challenge", func(t *testing.T) {
		id := jstr(f.tokenAt(t, server(f.a1), recurring("4000002760003184", false)), "id")
		m := ok(t, f.do(t, "POST", tokenPath(id)+"/three_ds", server(f.a1),
			map[string]any{"redirect_endpoint": "https://shop.example/cards/done", "redirect_id": "card-1"}), http.StatusOK)
		if jstr(m, "data.three_ds.status") != "pending" || jstr(m, "data.three_ds.redirect_id") != "card-1" {
			t.Errorf("after POST three_ds: %v", jget(m, "data.three_ds"))
		}
		f.process(t)
		it := ok(t, f.do(t, "GET", tokenPath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
		if !sameJSON(it["payload"], map[string]any{"resource_id": id, "resource_type": "transaction_token"}) ||
			jstr(it, "call_method") != "http_post" || jstr(it, "payment_type") != "card" {
			t.Errorf("token issuer token = %v", it)
		}
		// Asking again while the challenge is open changes nothing.
		ok(t, f.do(t, "POST", tokenPath(id)+"/three_ds", server(f.a1), nil), http.StatusOK)
		if again := ok(t, f.do(t, "GET", tokenPath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK); jstr(again, "issuer_token") != jstr(it, "issuer_token") {
			t.Errorf("a second POST started another challenge")
		}
		page := f.act(t, approvalKey(t, jstr(it, "issuer_token")), payment.ActionAnswer, "123456")
		if page.RedirectEndpoint != "https://shop.example/cards/done" || page.RedirectID != "card-1" {
			t.Errorf("page = %+v", page)
		}
		m = ok(t, f.do(t, "GET", tokenPath(id), server(f.a1), nil), http.StatusOK)
		if jstr(m, "data.three_ds.status") != "successful" {
			t.Fatalf("after the challenge: %v", jget(m, "data.three_ds"))
		}
		// A charge on the authenticated token needs no challenge of its
		// own, unless forced.
		ch := f.charge(t, id, 800, "JPY", "three_ds", map[string]any{"mode": "normal"})
		f.process(t)
		wantChargeEnd(t, f.getCharge(t, ch), "successful", 0)
		f.clock.Advance(time.Minute) // the duplicate-charge window
		ch = f.charge(t, id, 900, "JPY", "three_ds", map[string]any{"mode": "force"})
		f.process(t)
		wantChargeEnd(t, f.getCharge(t, ch), "awaiting", 0)

		// Off again.
		wantError(t, f.do(t, "DELETE", tokenPath(id)+"/three_ds", browser(f.a1), nil, origin(payShopOrigin)), http.StatusForbidden, payment.CodeInvalidPermissions)
		if m := ok(t, f.do(t, "GET", tokenPath(id), server(f.a1), nil), http.StatusOK); jget(m, "data.three_ds.enabled") != true {
			t.Errorf("a browser turned the token's 3-D Secure off: %v", jget(m, "data.three_ds"))
		}
		// DELETE answers the token: the PHP SDK's enableThreeDS(false)
		// parses the answer as one (and fails on an empty body), and
		// univapay-node's disableThreeDs resolves to it.
		m = ok(t, f.do(t, "DELETE", tokenPath(id)+"/three_ds", server(f.a1), nil), http.StatusOK)
		checkPHPSchema(t, "DELETE three_ds", m, "card_token")
		if jstr(m, "id") != id || jget(m, "data.three_ds.enabled") != false || !jhasNull(m, "data.three_ds.status") {
			t.Errorf("DELETE three_ds answered %v", jget(m, "data.three_ds"))
		}
		m = ok(t, f.do(t, "GET", tokenPath(id), server(f.a1), nil), http.StatusOK)
		if jget(m, "data.three_ds.enabled") != false || !jhasNull(m, "data.three_ds.status") {
			t.Errorf("after DELETE: %v", jget(m, "data.three_ds"))
		}
	})

	t.Run("FailedChallengeStartsOver", func(t *testing.T) {
		id := jstr(f.tokenAt(t, server(f.a1), recurring("4000002760003184", true)), "id")
		f.process(t)
		it := ok(t, f.do(t, "GET", tokenPath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
		f.act(t, approvalKey(t, jstr(it, "issuer_token")), payment.ActionCancel, "")
		m := ok(t, f.do(t, "GET", tokenPath(id), server(f.a1), nil), http.StatusOK)
		if jstr(m, "data.three_ds.status") != "failed" || int(jnum(m, "data.three_ds.error.code")) != 358 {
			t.Fatalf("after cancel: %v", jget(m, "data.three_ds"))
		}
		ok(t, f.do(t, "POST", tokenPath(id)+"/three_ds", server(f.a1), nil), http.StatusOK)
		f.process(t)
		again := ok(t, f.do(t, "GET", tokenPath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
		if jstr(again, "issuer_token") == jstr(it, "issuer_token") {
			t.Error("the new challenge has the old one's key")
		}
	})

	t.Run("Refused", func(t *testing.T) {
		online := jstr(f.tokenAt(t, server(f.a1), onlineBody("pay_pay_online", "web")), "id")
		wantError(t, f.do(t, "POST", tokenPath(online)+"/three_ds", server(f.a1), nil), http.StatusBadRequest, payment.CodeValidation, "three_ds")
		id := jstr(f.tokenAt(t, server(f.a1), recurring("4242424242424242", false)), "id")
		wantError(t, f.do(t, "POST", tokenPath(id)+"/three_ds", server(f.a1), map[string]any{"mode": "sometimes"}), http.StatusBadRequest, payment.CodeValidation, "mode")
		wantError(t, f.do(t, "POST", tokenPath(id)+"/three_ds", server(f.a1), map[string]any{"redirect_endpoint": "javascript:alert(1)"}), http.StatusBadRequest, payment.CodeValidation, "redirect_endpoint")
		// A browser may not start 3-D Secure on a token a server made.
		wantError(t, f.do(t, "POST", tokenPath(id)+"/three_ds", browser(f.a1), nil, origin(payShopOrigin)), http.StatusForbidden, payment.CodeInvalidPermissions)
		// Another store's token does not exist here.
		wantError(t, f.do(t, "POST", storePath(f.storeB1, "/tokens/"+id+"/three_ds"), server(f.b1), nil), http.StatusNotFound, payment.CodeNotFound)
		wantError(t, f.do(t, "GET", tokenPath(id)+"/three_ds/issuer_token", server(f.a1), nil), http.StatusBadRequest, payment.CodeValidation, "three_ds")
	})
}

// sameJSON reports whether two decoded JSON values are equal.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// TestTokenLongPoll: ?polling=true holds a token read while its 3-D Secure
// is under way, and answers as soon as the worker or the shopper moved it;
// a token with nothing under way answers at once.
func TestTokenLongPoll(t *testing.T) {
	kessaitest.CheckGoroutines(t)
	const wait = 5 * time.Second
	f := newPayFixture(t, payOptions{pollWait: wait})
	path := storePath(f.storeA1, "/tokens/")
	poll := func(t *testing.T, id string) (map[string]any, time.Duration) {
		t.Helper()
		start := time.Now()
		m := ok(t, f.do(t, "GET", path+id+"?polling=true", server(f.a1), nil), http.StatusOK)
		return m, time.Since(start)
	}
	id := jstr(f.tokenAt(t, server(f.a1), withData(with(cardBody("4000002760003184"), "type", "recurring"), "three_ds", map[string]any{"enabled": true})), "id")

	// Pending, then moved by the worker while the read is held.
	go func() {
		time.Sleep(100 * time.Millisecond)
		if _, err := f.svc.Work.ProcessPending(context.Background(), 10); err != nil {
			t.Errorf("ProcessPending: %v", err)
		}
	}()
	m, took := poll(t, id)
	if jstr(m, "data.three_ds.status") != "awaiting" || took > wait/2 {
		t.Errorf("held read answered %q after %v", jstr(m, "data.three_ds.status"), took)
	}

	// Awaiting the shopper, who answers while the read is held.
	it := ok(t, f.do(t, "GET", path+id+"/three_ds/issuer_token", server(f.a1), nil), http.StatusOK)
	go func() {
		time.Sleep(100 * time.Millisecond)
		if _, err := f.svc.Charging.ActOnApproval(context.Background(), approvalKey(t, jstr(it, "issuer_token")), payment.ActionAnswer, "123456"); err != nil {
			t.Errorf("answer: %v", err)
		}
	}()
	m, took = poll(t, id)
	if jstr(m, "data.three_ds.status") != "successful" || took > wait/2 {
		t.Errorf("held read answered %q after %v", jstr(m, "data.three_ds.status"), took)
	}

	// A charge's poll answers when it starts awaiting its shopper: the
	// poller's next step is the issuer token.
	tok := jstr(f.tokenAt(t, server(f.a1), onlineBody("pay_pay_online", "web")), "id")
	ch := f.charge(t, tok, 1000, "JPY")
	go func() {
		time.Sleep(100 * time.Millisecond)
		if _, err := f.svc.Work.ProcessPending(context.Background(), 10); err != nil {
			t.Errorf("ProcessPending: %v", err)
		}
	}()
	start := time.Now()
	m = ok(t, f.do(t, "GET", f.chargePath(ch)+"?polling=true", server(f.a1), nil), http.StatusOK)
	if jstr(m, "status") != "awaiting" || time.Since(start) > wait/2 {
		t.Errorf("held charge read answered %q after %v", jstr(m, "status"), time.Since(start))
	}

	// Nothing under way: at once.
	if _, took = poll(t, id); took > wait/2 {
		t.Errorf("a settled token's read was held %v", took)
	}
	// Without ?polling=true a token read is never held.
	other := jstr(f.tokenAt(t, server(f.a1), withData(with(cardBody("4000002760003184"), "type", "recurring"), "three_ds", map[string]any{"enabled": true})), "id")
	start = time.Now()
	m = ok(t, f.do(t, "GET", path+other, server(f.a1), nil), http.StatusOK)
	if jstr(m, "data.three_ds.status") != "pending" || time.Since(start) > wait/2 {
		t.Errorf("plain read of a pending token: %q after %v", jstr(m, "data.three_ds.status"), time.Since(start))
	}
}
