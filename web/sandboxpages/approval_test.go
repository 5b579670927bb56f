package sandboxpages

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boombuler/barcode/qr"
	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/web/message"
)

// sandboxFixture is the gateway's pages over a service on a real SQLite
// file and the injected clock, with the demo account's store (named
// "Kessai Demo Store") and a test-mode token for shop.example and
// *.shop-cdn.example.
type sandboxFixture struct {
	svc   *services.Set
	db    *sqlite.DB
	clock *kessaitest.Clock
	demo  *servicetest.Demo
	h     http.Handler
}

func newSandboxFixture(t testing.TB) *sandboxFixture {
	t.Helper()
	return newSandboxFixtureOn(t, nil)
}

// newSandboxFixtureOn is newSandboxFixture with another acquirer than the
// sandbox's (nil is the sandbox's).
func newSandboxFixtureOn(t testing.TB, processor payment.Processor) *sandboxFixture {
	t.Helper()
	// Far from the wall clock: a page reading the wall clock instead of
	// the service's would show.
	clock := kessaitest.NewClock(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	st := servicetest.New(t, servicetest.Options{Clock: clock, PublicOrigin: testGateway, Processor: processor})
	demo := st.SeedDemo(t, "shop.example", "*.shop-cdn.example")
	h, err := New(Config{Service: st.Service.Pages(), PublicURL: testGateway, Logger: slog.New(slog.DiscardHandler), SessionKey: testSessionKey})
	if err != nil {
		t.Fatal(err)
	}
	return &sandboxFixture{svc: st.Service, db: st.DB, clock: clock, demo: demo, h: h}
}

// awaitCharge runs the worker until the charge leaves pending and returns
// it.
func (f *sandboxFixture) awaitCharge(t testing.TB, id uuid.UUID) *payment.Charge {
	t.Helper()
	return servicetest.AwaitCharge(t, f.svc, f.demo.Caller, f.demo.StoreID, id, "the charge to leave pending",
		func(ch *payment.Charge) bool { return ch.Status != payment.ChargePending })
}

// charge reads a charge as the merchant's server does, after the worker
// has done what is due.
func (f *sandboxFixture) charge(t testing.TB, id uuid.UUID) *payment.Charge {
	t.Helper()
	return f.awaitCharge(t, id)
}

// keyOf is the approval key of an issuer token or QR image URL: the
// segment after the page's path, or the bare key.
func keyOf(t testing.TB, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.TrimSuffix(u.Path, payment.WalletQRSuffix)
	return p[strings.LastIndex(p, "/")+1:]
}

// walletCharge makes an online (or, for a merchant-QR brand, a
// qr_merchant) token and a charge of ¥1,200 on it, runs it to awaiting,
// and returns the charge id and the key of its wallet page.
func (f *sandboxFixture) walletCharge(t testing.TB, brand, callMethod, redirect string) (uuid.UUID, string) {
	t.Helper()
	ctx := context.Background()
	nt := payment.NewToken{PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime, Email: "shopper@example.com",
		IPAddress: "203.0.113.7", Data: &payment.TokenData{Brand: brand, CallMethod: callMethod}}
	qrMerchant := strings.HasSuffix(brand, "_merchant") || brand == "alipay_merchant_qr" || brand == "we_chat_mpm"
	if qrMerchant {
		nt.PaymentType, nt.Data.CallMethod = payment.PaymentTypeQRMerchant, ""
	}
	tok, err := f.svc.Tokens.CreateToken(ctx, f.demo.Caller, nt)
	if err != nil {
		t.Fatalf("%s token: %v", brand, err)
	}
	ch, err := f.svc.Charging.CreateCharge(ctx, f.demo.Caller, payment.NewCharge{TokenID: tok.ID, Amount: 1200, Currency: "JPY", RedirectEndpoint: redirect})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.awaitCharge(t, ch.ID); got.Status != payment.ChargeAwaiting {
		t.Fatalf("%s charge is %s, want awaiting", brand, got.Status)
	}
	if qrMerchant {
		code, err := f.svc.Charging.ChargeQR(ctx, f.demo.Caller, f.demo.StoreID, ch.ID)
		if err != nil || !code.Ready {
			t.Fatalf("QR of the charge: %+v, %v", code, err)
		}
		return ch.ID, keyOf(t, code.ImageURL)
	}
	it, err := f.svc.Charging.ChargeIssuerToken(ctx, f.demo.Caller, f.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ch.ID, keyOf(t, it.IssuerToken)
}

// challengeCard is the sandbox's card that asks for a 3-D Secure
// challenge and is authorised after it.
const challengeCard = "4000002760003184"

// challengeCharge makes a ¥3,000 charge on the challenge card with 3-D
// Secure, runs it to awaiting, and returns it with its challenge's key.
func (f *sandboxFixture) challengeCharge(t testing.TB, redirect, redirectID string) (uuid.UUID, string) {
	t.Helper()
	ctx := context.Background()
	tok, err := f.svc.Tokens.CreateToken(ctx, f.demo.Caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: challengeCard, ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := f.svc.Charging.CreateCharge(ctx, f.demo.Caller, payment.NewCharge{TokenID: tok.ID, Amount: 3000, Currency: "JPY",
		ThreeDS: &payment.ThreeDSSettings{Mode: "normal", RedirectEndpoint: redirect, RedirectID: redirectID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.awaitCharge(t, ch.ID); got.Status != payment.ChargeAwaiting {
		t.Fatalf("challenge charge is %s, want awaiting", got.Status)
	}
	it, err := f.svc.Charging.ChargeThreeDSIssuerToken(ctx, f.demo.Caller, f.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ch.ID, keyOf(t, it.IssuerToken)
}

func walletPage(key string) string    { return payment.WalletPagePath + key }
func challengePage(key string) string { return payment.ThreeDSPagePath + key }

// request sends a request to the pages; header holds name, value pairs.
func (f *sandboxFixture) request(t testing.TB, method, target string, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// open GETs a page and returns it with its CSRF token ("" when it has
// none).
func (f *sandboxFixture) open(t testing.TB, page string, header ...string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	rec := f.request(t, http.MethodGet, page, "", header...)
	return rec, hiddenField(rec, csrfField)
}

var localeField = regexp.MustCompile(`name="locale" value="([^"]*)"`)

// hiddenField is the value of a hidden field of a page, or "".
func hiddenField(rec *httptest.ResponseRecorder, field *regexp.Regexp) string {
	if m := field.FindStringSubmatch(rec.Body.String()); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// pageHeaders are what a browser sends with a page's own form post:
// the pages' referrer policy makes its Origin "null".
var pageHeaders = []string{"Content-Type", "application/x-www-form-urlencoded", "Origin", "null", "Sec-Fetch-Site", "same-origin"}

// act posts the page's form with the given fields, as the page's
// browser does, header pairs changing the headers.
func (f *sandboxFixture) act(t testing.TB, page string, fields url.Values, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	return f.request(t, http.MethodPost, page+"/act", fields.Encode(), append(append([]string{}, pageHeaders...), header...)...)
}

// press opens the page (with its query) and presses one of its buttons,
// sending its hidden fields.
func (f *sandboxFixture) press(t testing.TB, page, action, code string) *httptest.ResponseRecorder {
	t.Helper()
	rec, csrf := f.open(t, page)
	if rec.Code != http.StatusOK || csrf == "" {
		t.Fatalf("GET %s: %d, csrf %q\n%s", page, rec.Code, csrf, rec.Body)
	}
	fields := url.Values{"csrf": {csrf}, "action": {action}, "locale": {hiddenField(rec, localeField)}}
	if code != "" {
		fields.Set("code", code)
	}
	path, _, _ := strings.Cut(page, "?")
	return f.act(t, path, fields)
}

// postAction posts an action with the page's CSRF token, as a page
// rendered earlier would (the page may show an outcome now, without a
// form).
func (f *sandboxFixture) postAction(t testing.TB, page, action string, more ...string) *httptest.ResponseRecorder {
	t.Helper()
	fields := url.Values{"csrf": {tokenFor(page)}, "action": {action}}
	for i := 0; i+1 < len(more); i += 2 {
		fields.Set(more[i], more[i+1])
	}
	return f.act(t, page, fields)
}

// tokenFor is the CSRF token the gateway gives the page at path.
func tokenFor(path string) string {
	kind := payment.ApprovalWallet
	if strings.HasPrefix(path, payment.ThreeDSPagePath) {
		kind = payment.ApprovalThreeDS
	}
	sp := &sandboxPages{csrfKey: sandboxCSRFKey(testSessionKey)}
	return sp.csrfToken(kind, path[strings.LastIndex(path, "/")+1:])
}

func (f *sandboxFixture) approvalStatus(t testing.TB, key string) payment.ApprovalStatus {
	t.Helper()
	page, err := f.svc.Charging.Approval(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return page.Status
}

func wantCharge(t testing.TB, ch *payment.Charge, status payment.ChargeStatus, code int) {
	t.Helper()
	got := 0
	if ch.Error != nil {
		got = ch.Error.Code
	}
	if ch.Status != status || got != code {
		t.Errorf("charge %s with error %d, want %s with %d", ch.Status, got, status, code)
	}
}

func wantBody(t testing.TB, rec *httptest.ResponseRecorder, wants ...string) {
	t.Helper()
	body := html.UnescapeString(rec.Body.String())
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %q:\n%s", w, body)
		}
	}
}

func sandboxText(l message.Locale, key string) string {
	s := message.Sandbox.Get(key, l)
	if s == "" {
		panic("no sandbox text " + key)
	}
	return s
}

// TestSandboxWalletActions: each button of the wallet page ends the
// payment as the sandbox promises, and the page shows the outcome.
func TestSandboxWalletActions(t *testing.T) {
	f := newSandboxFixture(t)
	for _, tt := range []struct {
		action   string
		approval payment.ApprovalStatus
		charge   payment.ChargeStatus
		code     int
	}{
		{"pay", payment.ApprovalSuccessful, payment.ChargeSuccessful, 0},
		{"fail", payment.ApprovalFailed, payment.ChargeFailed, 340},
		{"cancel", payment.ApprovalCanceled, payment.ChargeCanceled, 345},
		{"expire", payment.ApprovalExpired, payment.ChargeFailed, 327},
	} {
		t.Run(tt.action, func(t *testing.T) {
			id, key := f.walletCharge(t, "pay_pay_online", "web", "")
			rec := f.press(t, walletPage(key), tt.action, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d\n%s", tt.action, rec.Code, rec.Body)
			}
			title := sandboxText(message.English, "r_wallet_"+string(tt.approval)+"_title")
			wantBody(t, rec, title, `data-status="`+string(tt.approval)+`"`, "Kessai Demo Store", "¥1,200")
			if f.approvalStatus(t, key) != tt.approval {
				t.Errorf("approval %s, want %s", f.approvalStatus(t, key), tt.approval)
			}
			wantCharge(t, f.charge(t, id), tt.charge, tt.code)
			// The page now shows the outcome, and a second press changes
			// nothing.
			again, _ := f.open(t, walletPage(key))
			wantBody(t, again, title)
			if rec := f.postAction(t, walletPage(key), "pay"); rec.Code != http.StatusOK {
				t.Errorf("Pay after the end: %d", rec.Code)
			}
			wantCharge(t, f.charge(t, id), tt.charge, tt.code)
		})
	}
}

// TestSandboxWalletPage: the wallet page as the shopper sees it: the
// wallet's look and name, the store, the amount, the QR code of the page,
// the four buttons, the time left, in a form that posts to /act.
func TestSandboxWalletPage(t *testing.T) {
	f := newSandboxFixture(t)
	looks := map[string]struct{ class, name string }{
		"pay_pay_online": {"paypay", "PayPay"}, "alipay_online": {"alipay", "Alipay"},
		"alipay_plus_online": {"alipay-plus", "Alipay+"}, "we_chat_online": {"wechat", "WeChat Pay"},
		"d_barai_online": {"dbarai", "d Barai"}, "pay_pay_merchant": {"paypay", "PayPay"},
		"alipay_merchant_qr": {"alipay", "Alipay"}, "we_chat_mpm": {"wechat", "WeChat Pay"},
		"rakuten_pay_merchant": {"rakuten", "Rakuten Pay"}, "d_barai_merchant": {"dbarai", "d Barai"},
	}
	for _, brand := range append(append([]string{}, payment.OnlineBrands...), payment.QRMerchantBrands...) {
		t.Run(brand, func(t *testing.T) {
			look, ok := looks[brand]
			if !ok {
				t.Fatalf("the sandbox simulates %s, which has no look here", brand)
			}
			if lookOf(brand).class != look.class {
				t.Errorf("look %q, want %q", lookOf(brand).class, look.class)
			}
			_, key := f.walletCharge(t, brand, "http_post", "")
			// http_post: the merchant's page posts the payload; the page
			// shows and changes nothing.
			posted := f.request(t, http.MethodPost, walletPage(key), "resource_id=x&resource_type=charge",
				"Content-Type", "application/x-www-form-urlencoded", "Origin", "https://shop.example", "Sec-Fetch-Site", "cross-site")
			for _, rec := range []*httptest.ResponseRecorder{f.request(t, http.MethodGet, walletPage(key), ""), posted} {
				if rec.Code != http.StatusOK {
					t.Fatalf("%d\n%s", rec.Code, rec.Body)
				}
				wantBody(t, rec, "sb-look-"+look.class, "Pay with "+look.name, "Kessai Demo Store", "¥1,200",
					`<img class="sb-qr-img" src="`+walletPage(key)+`/qr.png"`, `action="`+walletPage(key)+`/act"`,
					`value="pay"`, `value="fail"`, `value="cancel"`, `value="expire"`, ">Let it expire<",
					`data-expires-in="300"`, ">5:00<", `data-status-url="`+walletPage(key)+`/status"`, `lang="en"`)
				checkNoInline(t, rec.Body.String())
			}
			if f.approvalStatus(t, key) != payment.ApprovalAwaiting {
				t.Error("showing the page changed the approval")
			}
		})
	}
	if l := lookOf("some_new_wallet"); l.class != "wallet" {
		t.Errorf("a brand without a look gets %q", l.class)
	}
}

// TestSandboxWalletSDKKey: for sdk and app the issuer token is the bare
// key, which opens the same page.
func TestSandboxWalletSDKKey(t *testing.T) {
	f := newSandboxFixture(t)
	ctx := context.Background()
	tok, err := f.svc.Tokens.CreateToken(ctx, f.demo.Caller, payment.NewToken{PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime,
		Data: &payment.TokenData{Brand: "alipay_plus_online", CallMethod: "sdk", OSType: "ios"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := f.svc.Charging.CreateCharge(ctx, f.demo.Caller, payment.NewCharge{TokenID: tok.ID, Amount: 500, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	f.awaitCharge(t, ch.ID)
	it, err := f.svc.Charging.ChargeIssuerToken(ctx, f.demo.Caller, f.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(it.IssuerToken, "/") {
		t.Fatalf("sdk issuer token %q is not a bare key", it.IssuerToken)
	}
	rec := f.press(t, walletPage(it.IssuerToken), "pay", "")
	wantBody(t, rec, sandboxText(message.English, "r_wallet_successful_title"))
	wantCharge(t, f.charge(t, ch.ID), payment.ChargeSuccessful, 0)
}

// TestSandboxExpiry: once the approval's time has passed (the injected
// clock), the page shows it expired before the worker has ended it, its
// status says so, and a late Pay ends it expired.
func TestSandboxExpiry(t *testing.T) {
	f := newSandboxFixture(t)
	t.Run("wallet", func(t *testing.T) {
		id, key := f.walletCharge(t, "we_chat_online", "web", "")
		_, csrf := f.open(t, walletPage(key))
		f.clock.Advance(4 * time.Minute)
		if rec, _ := f.open(t, walletPage(key)); !strings.Contains(rec.Body.String(), ">1:00<") {
			t.Errorf("a minute before the end the page does not say 1:00:\n%s", rec.Body)
		}
		f.clock.Advance(time.Minute)
		page, _ := f.open(t, walletPage(key))
		wantBody(t, page, sandboxText(message.English, "r_wallet_expired_title"), `data-status="expired"`)
		st := f.request(t, http.MethodGet, walletPage(key)+"/status", "")
		if got := st.Body.String(); got != `{"status":"expired"}`+"\n" {
			t.Errorf("status = %q", got)
		}
		late := f.act(t, walletPage(key), url.Values{"csrf": {csrf}, "action": {"pay"}})
		wantBody(t, late, sandboxText(message.English, "r_wallet_expired_title"))
		wantCharge(t, f.charge(t, id), payment.ChargeFailed, 327)
	})
	t.Run("challenge", func(t *testing.T) {
		id, key := f.challengeCharge(t, "", "")
		_, csrf := f.open(t, challengePage(key))
		f.clock.Advance(10 * time.Minute)
		page, _ := f.open(t, challengePage(key))
		wantBody(t, page, sandboxText(message.English, "r_3ds_expired_title"))
		late := f.act(t, challengePage(key), url.Values{"csrf": {csrf}, "action": {"answer"}, "code": {payment.ChallengeCode}})
		wantBody(t, late, sandboxText(message.English, "r_3ds_expired_title"))
		wantCharge(t, f.charge(t, id), payment.ChargeFailed, 358)
	})
}

// TestSandboxChallenge: the ACS page and its answers.
func TestSandboxChallenge(t *testing.T) {
	f := newSandboxFixture(t)
	t.Run("page", func(t *testing.T) {
		_, key := f.challengeCharge(t, "", "")
		rec, csrf := f.open(t, challengePage(key))
		if rec.Code != http.StatusOK || csrf == "" {
			t.Fatalf("%d\n%s", rec.Code, rec.Body)
		}
		wantBody(t, rec, "Kessai Demo Store", "¥3,000", "ending in 3184", `autocomplete="one-time-code"`, `inputmode="numeric"`,
			`name="code"`, `value="answer"`, `value="cancel"`, ">Submit<", ">Cancel<", "the code is 123456", `lang="en"`,
			`action="`+challengePage(key)+`/act"`)
		if strings.Contains(rec.Body.String(), "Tries left") {
			t.Error("tries left shown before any wrong code")
		}
		// No card data beyond the last four.
		for _, part := range []string{challengeCard, "400000", "27600", "TARO", "2039"} {
			if strings.Contains(rec.Body.String(), part) {
				t.Errorf("the page shows %q", part)
			}
		}
		checkNoInline(t, rec.Body.String())
		// POST is how the merchant's page sends the shopper: the same page.
		posted := f.request(t, http.MethodPost, challengePage(key), "resource_id=x&resource_type=charge",
			"Content-Type", "application/x-www-form-urlencoded", "Origin", "https://shop.example", "Sec-Fetch-Site", "cross-site")
		if posted.Code != http.StatusOK || posted.Body.String() != rec.Body.String() {
			t.Errorf("POST arrival: %d, a page other than GET's", posted.Code)
		}
	})

	wrong := func(t *testing.T, page string, left int) {
		t.Helper()
		rec := f.press(t, page, "answer", "654321")
		if rec.Code != http.StatusOK {
			t.Fatalf("%d\n%s", rec.Code, rec.Body)
		}
		if left > 0 {
			wantBody(t, rec, "That code is not right. Tries left: "+string(rune('0'+left))+".", `role="alert"`, `name="code"`)
		}
	}
	for _, tt := range []struct {
		name    string
		answer  func(t *testing.T, page string) *httptest.ResponseRecorder
		result  string
		charge  payment.ChargeStatus
		code    int
		threeDS payment.ThreeDSStatus
	}{
		{"right code", func(t *testing.T, page string) *httptest.ResponseRecorder {
			return f.press(t, page, "answer", payment.ChallengeCode)
		}, "successful", payment.ChargeSuccessful, 0, payment.ThreeDSSuccessful},
		{"right code after a wrong one", func(t *testing.T, page string) *httptest.ResponseRecorder {
			wrong(t, page, 2)
			// Pasted with spaces around it.
			return f.press(t, page, "answer", " "+payment.ChallengeCode+" ")
		}, "successful", payment.ChargeSuccessful, 0, payment.ThreeDSSuccessful},
		{"three wrong codes", func(t *testing.T, page string) *httptest.ResponseRecorder {
			wrong(t, page, 2)
			wrong(t, page, 1)
			return f.press(t, page, "answer", "000000")
		}, "failed", payment.ChargeFailed, 358, payment.ThreeDSFailed},
		{"cancel", func(t *testing.T, page string) *httptest.ResponseRecorder {
			return f.press(t, page, "cancel", "")
		}, "canceled", payment.ChargeFailed, 358, payment.ThreeDSFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, key := f.challengeCharge(t, "", "")
			rec := tt.answer(t, challengePage(key))
			wantBody(t, rec, sandboxText(message.English, "r_3ds_"+tt.result+"_title"))
			ch := f.charge(t, id)
			wantCharge(t, ch, tt.charge, tt.code)
			if ch.ThreeDS.Status != tt.threeDS {
				t.Errorf("three_ds.status %s, want %s", ch.ThreeDS.Status, tt.threeDS)
			}
		})
	}
}

// TestSandboxCSRF: an action without the page's token, with another
// page's, or from another site is refused and changes nothing.
func TestSandboxCSRF(t *testing.T) {
	f := newSandboxFixture(t)
	id, key := f.walletCharge(t, "pay_pay_online", "web", "")
	_, otherKey := f.walletCharge(t, "pay_pay_online", "web", "")
	_, challengeKey := f.challengeCharge(t, "", "")
	_, csrf := f.open(t, walletPage(key))
	_, otherCSRF := f.open(t, walletPage(otherKey))
	for _, tt := range []struct {
		name   string
		fields url.Values
		header []string
	}{
		{"no token", url.Values{"action": {"pay"}}, nil},
		{"empty token", url.Values{"action": {"pay"}, "csrf": {""}}, nil},
		{"another approval's token", url.Values{"action": {"pay"}, "csrf": {otherCSRF}}, nil},
		{"the token for the other kind of page", url.Values{"action": {"pay"}, "csrf": {tokenFor(challengePage(key))}}, nil},
		{"a challenge's token", url.Values{"action": {"pay"}, "csrf": {tokenFor(challengePage(challengeKey))}}, nil},
		{"a token with a changed letter", url.Values{"action": {"pay"}, "csrf": {flipLast(csrf)}}, nil},
		{"a foreign Origin", url.Values{"action": {"pay"}, "csrf": {csrf}}, []string{"Origin", "https://evil.example"}},
		{"the merchant's Origin", url.Values{"action": {"pay"}, "csrf": {csrf}}, []string{"Origin", "https://shop.example"}},
		{"the gateway on another port", url.Values{"action": {"pay"}, "csrf": {csrf}}, []string{"Origin", testGateway + ":8443"}},
		{"a cross-site page", url.Values{"action": {"pay"}, "csrf": {csrf}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"a same-site page", url.Values{"action": {"pay"}, "csrf": {csrf}}, []string{"Sec-Fetch-Site", "same-site"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.act(t, walletPage(key), tt.fields, tt.header...)
			if rec.Code != http.StatusForbidden {
				t.Errorf("status %d, want 403\n%s", rec.Code, rec.Body)
			}
			wantBody(t, rec, sandboxText(message.English, "e_forbidden_title"))
			if st := f.approvalStatus(t, key); st != payment.ApprovalAwaiting {
				t.Fatalf("the approval is %s", st)
			}
			wantCharge(t, f.charge(t, id), payment.ChargeAwaiting, 0)
		})
	}
	// The page's own post, as browsers send it: Origin null (the page's
	// referrer policy), or the gateway's origin, or none.
	for _, origin := range []string{testGateway, strings.ToUpper(testGateway), ""} {
		rec := f.act(t, walletPage(otherKey), url.Values{"csrf": {otherCSRF}, "action": {"fail"}}, "Origin", origin)
		if rec.Code != http.StatusOK {
			t.Errorf("Origin %q: %d", origin, rec.Code)
		}
	}
	if rec := f.act(t, walletPage(key), url.Values{"csrf": {csrf}, "action": {"pay"}}); rec.Code != http.StatusOK {
		t.Errorf("the page's own post: %d\n%s", rec.Code, rec.Body)
	}
	wantCharge(t, f.charge(t, id), payment.ChargeSuccessful, 0)
}

func flipLast(s string) string {
	if s == "" {
		return "x"
	}
	last := s[len(s)-1]
	if last == 'A' {
		return s[:len(s)-1] + "B"
	}
	return s[:len(s)-1] + "A"
}

// TestSandboxJSON: the endpoint for tests and scripts.
func TestSandboxJSON(t *testing.T) {
	f := newSandboxFixture(t)
	post := func(t *testing.T, path, body string, header ...string) (int, map[string]any) {
		t.Helper()
		rec := f.request(t, http.MethodPost, path, body, append([]string{"Content-Type", "application/json"}, header...)...)
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%d %q: %v", rec.Code, rec.Body, err)
		}
		return rec.Code, m
	}
	errorField := func(m map[string]any) string {
		errs, _ := m["errors"].([]any)
		if len(errs) != 1 {
			return ""
		}
		e, _ := errs[0].(map[string]any)
		s, _ := e["field"].(string)
		return s
	}

	t.Run("pay", func(t *testing.T) {
		id, key := f.walletCharge(t, "d_barai_online", "web", "")
		code, m := post(t, walletPage(key)+"/act", `{"action":"pay"}`, "Content-Type", "application/json; charset=utf-8")
		want := map[string]any{"status": "successful", "resource_id": id.String(), "resource_type": "charge"}
		if code != http.StatusOK || len(m) != len(want) || m["status"] != want["status"] || m["resource_id"] != want["resource_id"] || m["resource_type"] != want["resource_type"] {
			t.Errorf("%d %v, want %v", code, m, want)
		}
		wantCharge(t, f.charge(t, id), payment.ChargeSuccessful, 0)
		// Again: the outcome, unchanged.
		if code, m := post(t, walletPage(key)+"/act", `{"action":"fail"}`); code != http.StatusOK || m["status"] != "successful" {
			t.Errorf("again: %d %v", code, m)
		}
	})
	t.Run("challenge", func(t *testing.T) {
		id, key := f.challengeCharge(t, "", "")
		if code, m := post(t, challengePage(key)+"/act", `{"action":"answer","code":"111111"}`); code != http.StatusOK || m["status"] != "awaiting" {
			t.Errorf("wrong code: %d %v", code, m)
		}
		if code, m := post(t, challengePage(key)+"/act", `{"action":"answer","code":"123456","extra":[1,2]}`); code != http.StatusOK || m["status"] != "successful" {
			t.Errorf("right code: %d %v", code, m)
		}
		wantCharge(t, f.charge(t, id), payment.ChargeSuccessful, 0)
	})
	t.Run("refused", func(t *testing.T) {
		id, key := f.walletCharge(t, "alipay_online", "web", "")
		_, challengeKey := f.challengeCharge(t, "", "")
		for _, tt := range []struct {
			name, path, body string
			header           []string
			status           int
			code, field      string
		}{
			{"a challenge's action", walletPage(key) + "/act", `{"action":"answer","code":"123456"}`, nil, 400, "VALIDATION_ERROR", "action"},
			{"no action", walletPage(key) + "/act", `{}`, nil, 400, "VALIDATION_ERROR", "action"},
			{"an unknown action", walletPage(key) + "/act", `{"action":"PAY"}`, nil, 400, "VALIDATION_ERROR", "action"},
			{"a wallet's action on a challenge", challengePage(challengeKey) + "/act", `{"action":"pay"}`, nil, 400, "VALIDATION_ERROR", "action"},
			{"an action of the wrong type", walletPage(key) + "/act", `{"action":1}`, nil, 400, "VALIDATION_ERROR", "action"},
			{"not JSON", walletPage(key) + "/act", `{"action":`, nil, 400, "VALIDATION_ERROR", "body"},
			{"two JSON values", walletPage(key) + "/act", `{"action":"pay"} {"action":"pay"}`, nil, 400, "VALIDATION_ERROR", "body"},
			{"a megabyte", walletPage(key) + "/act", `{"action":"pay","x":"` + strings.Repeat("a", 1<<20) + `"}`, nil, 413, "REQUEST_BODY_TOO_LARGE", ""},
			{"a foreign Origin", walletPage(key) + "/act", `{"action":"pay"}`, []string{"Origin", "https://evil.example"}, 403, "INVALID_DOMAIN", ""},
			{"an unknown key", walletPage("AAAAAAAAAAAAAAAAAAAAAAAAAA") + "/act", `{"action":"pay"}`, nil, 404, "NOT_FOUND", ""},
			{"a wallet key on the challenge path", challengePage(key) + "/act", `{"action":"pay"}`, nil, 404, "NOT_FOUND", ""},
			{"a challenge key on the wallet path", walletPage(challengeKey) + "/act", `{"action":"cancel"}`, nil, 404, "NOT_FOUND", ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				code, m := post(t, tt.path, tt.body, tt.header...)
				if code != tt.status || m["status"] != "error" || m["code"] != tt.code || errorField(m) != tt.field {
					t.Errorf("%d %v, want %d %s %q", code, m, tt.status, tt.code, tt.field)
				}
			})
		}
		if f.approvalStatus(t, key) != payment.ApprovalAwaiting || f.approvalStatus(t, challengeKey) != payment.ApprovalAwaiting {
			t.Error("a refused request changed an approval")
		}
		wantCharge(t, f.charge(t, id), payment.ChargeAwaiting, 0)
	})
}

// TestSandboxStatus: the status the pages' script polls.
func TestSandboxStatus(t *testing.T) {
	f := newSandboxFixture(t)
	_, key := f.walletCharge(t, "pay_pay_online", "web", "")
	_, challengeKey := f.challengeCharge(t, "", "")
	get := func(path string) (int, string) {
		rec := f.request(t, http.MethodGet, path, "")
		if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: headers %v", path, rec.Header())
		}
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	for _, tt := range []struct {
		path   string
		status int
		body   string
	}{
		{walletPage(key) + "/status", 200, `{"status":"awaiting"}`},
		{challengePage(challengeKey) + "/status", 200, `{"status":"awaiting"}`},
		{challengePage(key) + "/status", 404, `{"status":"error","code":"NOT_FOUND","errors":[]}`},
		{walletPage("AAAAAAAAAAAAAAAAAAAAAAAAAA") + "/status", 404, `{"status":"error","code":"NOT_FOUND","errors":[]}`},
	} {
		if code, body := get(tt.path); code != tt.status || body != tt.body {
			t.Errorf("%s: %d %s, want %d %s", tt.path, code, body, tt.status, tt.body)
		}
	}
	f.press(t, walletPage(key), "pay", "")
	if _, body := get(walletPage(key) + "/status"); body != `{"status":"successful"}` {
		t.Errorf("after Pay: %s", body)
	}
}

// TestSandboxRedirect: an ended approval sends the shopper to the
// merchant's redirect endpoint with the resource's ids added to its own
// query, and the page's form-action allows that origin.
func TestSandboxRedirect(t *testing.T) {
	f := newSandboxFixture(t)
	t.Run("wallet", func(t *testing.T) {
		id, key := f.walletCharge(t, "pay_pay_online", "web", "https://shop.example:8443/back?order=7&resource_type=mine")
		page, _ := f.open(t, walletPage(key))
		if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://shop.example:8443;") {
			t.Errorf("CSP %q does not allow the redirect's origin", csp)
		}
		rec := f.press(t, walletPage(key), "pay", "")
		want := url.Values{"order": {"7"}, "resource_id": {id.String()}, "resource_type": {"charge"}}
		wantRedirect(t, rec, "https://shop.example:8443/back", want)
		// The page, opened again, sends the shopper on the same way.
		again, _ := f.open(t, walletPage(key))
		wantRedirect(t, again, "https://shop.example:8443/back", want)
	})
	t.Run("challenge", func(t *testing.T) {
		id, key := f.challengeCharge(t, "https://shop.example/3ds/done", "order-7 & more")
		rec := f.press(t, challengePage(key), "cancel", "")
		wantRedirect(t, rec, "https://shop.example/3ds/done",
			url.Values{"resource_id": {id.String()}, "resource_type": {"charge"}, "redirect_id": {"order-7 & more"}})
	})
	t.Run("wrong code stays", func(t *testing.T) {
		_, key := f.challengeCharge(t, "https://shop.example/3ds/done", "")
		if rec := f.press(t, challengePage(key), "answer", "1"); rec.Code != http.StatusOK {
			t.Errorf("a wrong code with tries left: %d, want the page again", rec.Code)
		}
	})
}

func wantRedirect(t *testing.T, rec *httptest.ResponseRecorder, base string, query url.Values) {
	t.Helper()
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303\n%s", rec.Code, rec.Body)
	}
	u, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != base {
		t.Errorf("redirect to %s, want %s", got, base)
	}
	if got := u.Query(); got.Encode() != query.Encode() {
		t.Errorf("redirect query %v, want %v", got, query)
	}
	if rec.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Error("the redirect may send the page's address on")
	}
}

// TestSandboxNotFound: unknown and odd keys, and a key of one kind on the
// other kind's path, are not there.
func TestSandboxNotFound(t *testing.T) {
	f := newSandboxFixture(t)
	_, walletKey := f.walletCharge(t, "pay_pay_online", "web", "")
	_, challengeKey := f.challengeCharge(t, "", "")
	paths := []string{
		walletPage("AAAAAAAAAAAAAAAAAAAAAAAAAA"), challengePage("AAAAAAAAAAAAAAAAAAAAAAAAAA"),
		challengePage(walletKey), walletPage(challengeKey),
		walletPage(strings.ToLower(walletKey)), walletPage(walletKey + "A"), walletPage(walletKey[1:]),
		walletPage("..%2F..%2Fx"), walletPage("%00"), walletPage(url.PathEscape("<script>")),
		walletPage(url.PathEscape(walletKey + "/")), walletPage(strings.Repeat("A", 4096)),
		"/sandbox/", "/sandbox/qr/" + walletKey, "/sandbox/wallet/", "/sandbox/3ds/" + challengeKey + "/qr.png",
		walletPage(walletKey) + "/other",
	}
	for _, p := range paths {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			rec := f.request(t, method, p, "", "Content-Type", "application/x-www-form-urlencoded")
			if rec.Code != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", method, p, rec.Code)
				continue
			}
			if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
				wantBody(t, rec, sandboxText(message.English, "e_not_found_title"))
				if rec.Header().Get("Content-Security-Policy") == "" || rec.Header().Get("X-Frame-Options") != "SAMEORIGIN" {
					t.Errorf("%s %s: the error page's headers %v", method, p, rec.Header())
				}
			}
		}
	}
	// With the token the gateway would give such a page, were there one.
	for _, p := range []string{challengePage(walletKey), walletPage(challengeKey), walletPage("AAAAAAAAAAAAAAAAAAAAAAAAAA")} {
		if rec := f.postAction(t, p, "cancel"); rec.Code != http.StatusNotFound {
			t.Errorf("POST %s/act: %d, want 404", p, rec.Code)
		}
	}
	// Dot segments are cleaned away before any page sees them.
	for _, p := range []string{"/sandbox/wallet/../../forms", "/sandbox/3ds/./" + challengeKey + "/../.."} {
		rec := f.request(t, http.MethodGet, p, "")
		if loc := rec.Header().Get("Location"); rec.Code/100 != 3 || strings.Contains(loc, challengeKey) {
			t.Errorf("GET %s: %d to %q", p, rec.Code, loc)
		}
	}
	for _, p := range []string{walletPage("AAAAAAAAAAAAAAAAAAAAAAAAAA") + payment.WalletQRSuffix, walletPage(challengeKey) + payment.WalletQRSuffix} {
		if rec := f.request(t, http.MethodGet, p, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
		}
	}
	if f.approvalStatus(t, walletKey) != payment.ApprovalAwaiting || f.approvalStatus(t, challengeKey) != payment.ApprovalAwaiting {
		t.Error("a request to a wrong address changed an approval")
	}
}

// TestSandboxHostileInputs: bodies too big, odd fields and actions.
func TestSandboxHostileInputs(t *testing.T) {
	f := newSandboxFixture(t)
	id, key := f.walletCharge(t, "pay_pay_online", "web", "")
	_, csrf := f.open(t, walletPage(key))
	big := url.Values{"csrf": {csrf}, "action": {"pay"}, "x": {strings.Repeat("a", 1<<20)}}
	if rec := f.act(t, walletPage(key), big); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a megabyte form: %d, want 413", rec.Code)
	}
	for _, action := range []string{"", "answer", "PAY", "pay\x00", strings.Repeat("p", 5000)} {
		rec := f.act(t, walletPage(key), url.Values{"csrf": {csrf}, "action": {action}})
		if rec.Code != http.StatusBadRequest {
			t.Errorf("action %.20q: %d, want 400", action, rec.Code)
		}
	}
	// A megabyte posted to the page itself only shows the page.
	if rec := f.request(t, http.MethodPost, walletPage(key), strings.Repeat("a=b&", 1<<18), "Content-Type", "application/x-www-form-urlencoded"); rec.Code != http.StatusOK {
		t.Errorf("a megabyte posted to the page: %d", rec.Code)
	}
	// A query that is not a locale is the browser's language.
	if rec, _ := f.open(t, walletPage(key)+"?locale=%3Cscript%3E"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `lang="en"`) ||
		strings.Contains(rec.Body.String(), "<script>") {
		t.Errorf("odd locale: %d", rec.Code)
	}
	wantCharge(t, f.charge(t, id), payment.ChargeAwaiting, 0)
}

// TestSandboxHeaders: the pages' security headers, and frame-ancestors
// naming the store's domains, only those that are host sources.
func TestSandboxHeaders(t *testing.T) {
	f := newSandboxFixture(t)
	// A token whose domains were stored without NormalizeDomain (an older
	// gateway, a hand-edited database): none may reach the header.
	ctx := context.Background()
	err := f.db.Update(ctx, func(tx payment.Tx) error {
		return tx.CreateAppToken(ctx, &payment.AppToken{
			ID: payment.NewID(), MerchantID: f.demo.MerchantID, StoreID: f.demo.StoreID, Mode: payment.ModeTest,
			Domains:    []string{"evil.example; script-src *", "a'b.example", "x y.example", "café.example", "ok-shop.example:8080", `q"x.example`},
			SecretHash: []byte("x"), JWT: "x", CreatedOn: f.clock.Now(),
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, walletKey := f.walletCharge(t, "pay_pay_online", "web", "")
	_, challengeKey := f.challengeCharge(t, "", "")
	for _, page := range []string{walletPage(walletKey), challengePage(challengeKey)} {
		rec, _ := f.open(t, page)
		h := rec.Header()
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none';", "script-src 'self';", "style-src 'self';", "img-src 'self' data:;",
			"connect-src 'self';", "form-action 'self';", "base-uri 'none';"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", page, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP allows unsafe code: %q", page, csp)
		}
		fa := frameAncestorsOf(t, rec)
		for _, want := range []string{"'self'", "https://shop.example:*", "https://*.shop-cdn.example:*", "https://ok-shop.example:8080"} {
			if !strings.Contains(" "+fa+" ", " "+want+" ") {
				t.Errorf("%s: frame-ancestors %q lacks %s", page, fa, want)
			}
		}
		for _, bad := range []string{"evil", "a'b", "x y", "caf", `q"x`, "*;"} {
			if strings.Contains(csp, bad) {
				t.Errorf("%s: CSP %q has %q from a domain", page, csp, bad)
			}
		}
		for k, want := range map[string]string{
			"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
			"Content-Type": "text/html; charset=utf-8", "X-Frame-Options": "",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", page, k, got, want)
			}
		}
		wantBody(t, rec, `<meta name="referrer" content="no-referrer">`, `<script src="/static/sandbox.js`,
			`<link rel="stylesheet" href="/static/sandbox.css`, `name="viewport" content="width=device-width`)
	}
}

// TestSandboxLanguages: both pages in Japanese and English, from the
// locale parameter or the browser's languages, and the language carried
// into the page's forms.
func TestSandboxLanguages(t *testing.T) {
	f := newSandboxFixture(t)
	_, walletKey := f.walletCharge(t, "d_barai_online", "web", "")
	_, challengeKey := f.challengeCharge(t, "", "")
	for _, tt := range []struct {
		name, query, accept string
		lang                message.Locale
		formLocale          string
	}{
		{"default", "", "", message.English, ""},
		{"Accept-Language", "", "ja-JP,ja;q=0.9,en;q=0.5", message.Japanese, ""},
		{"locale=ja", "?locale=ja", "en-US", message.Japanese, "ja"},
		{"locale=en", "?locale=en-GB", "ja", message.English, "en"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, page := range []struct{ path, title string }{
				{walletPage(walletKey), map[message.Locale]string{message.Japanese: "d払い で支払う", message.English: "Pay with d Barai"}[tt.lang]},
				{challengePage(challengeKey), sandboxText(tt.lang, "acs_title")},
			} {
				rec, _ := f.open(t, page.path+tt.query, "Accept-Language", tt.accept)
				wantBody(t, rec, `<html lang="`+string(tt.lang)+`">`, page.title, `name="locale" value="`+tt.formLocale+`"`,
					sandboxText(tt.lang, "sandbox"))
			}
		})
	}
	// The outcome in the language the page was in, whatever the browser's.
	paid := f.press(t, walletPage(walletKey)+"?locale=ja", "pay", "")
	wantBody(t, paid, `<html lang="ja">`, sandboxText(message.Japanese, "r_wallet_successful_title"),
		"¥1,200 を Kessai Demo Store にお支払いいただきました")
	wrong := f.press(t, challengePage(challengeKey)+"?locale=ja", "answer", "000000")
	wantBody(t, wrong, `<html lang="ja">`, "残り 2 回入力できます", "末尾 3184", `name="locale" value="ja"`)
	again := f.postAction(t, challengePage(challengeKey), "answer", "code", "1", "locale", "ja")
	wantBody(t, again, "残り 1 回入力できます")
}

// TestSandboxQRCode: the wallet page's QR code is a PNG of the page's
// absolute address: each module of the code the library makes of that
// address is a square of the image, inside a white quiet zone.
func TestSandboxQRCode(t *testing.T) {
	f := newSandboxFixture(t)
	_, key := f.walletCharge(t, "pay_pay_merchant", "", "")
	rec := f.request(t, http.MethodGet, walletPage(key)+payment.WalletQRSuffix, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	for k, want := range map[string]string{"Content-Type": "image/png", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if !bytes.HasPrefix(rec.Body.Bytes(), []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("not a PNG")
	}
	img, err := png.Decode(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := qr.Encode(testGateway+payment.WalletPagePath+key, qr.M, qr.Auto)
	if err != nil {
		t.Fatal(err)
	}
	n := want.Bounds().Dx()
	size := (n + 2*qrQuietModules) * qrModulePixels
	if b := img.Bounds(); b != image.Rect(0, 0, size, size) {
		t.Fatalf("image %v, want %dx%d for %d modules", b, size, size, n)
	}
	dark := func(c color.Color) bool { return color.GrayModel.Convert(c).(color.Gray).Y < 128 }
	module := func(x, y int) bool { // the centre of module x, y
		return dark(img.At((x+qrQuietModules)*qrModulePixels+qrModulePixels/2, (y+qrQuietModules)*qrModulePixels+qrModulePixels/2))
	}
	for y := -qrQuietModules; y < n+qrQuietModules; y++ {
		for x := -qrQuietModules; x < n+qrQuietModules; x++ {
			inside := x >= 0 && y >= 0 && x < n && y < n
			if got, wantDark := module(x, y), inside && dark(want.At(x, y)); got != wantDark {
				t.Fatalf("module %d,%d is dark=%v, want %v", x, y, got, wantDark)
			}
		}
	}
	// The finder pattern at the top left, whatever the library: a dark
	// 7×7 ring, a light ring, a dark 3×3 centre.
	for y := range 7 {
		for x := range 7 {
			ring := x == 0 || y == 0 || x == 6 || y == 6
			centre := x >= 2 && x <= 4 && y >= 2 && y <= 4
			if module(x, y) != (ring || centre) {
				t.Fatalf("finder pattern wrong at %d,%d", x, y)
			}
		}
	}
	// Another approval's code is another image.
	_, other := f.walletCharge(t, "pay_pay_online", "web", "")
	if rec2 := f.request(t, http.MethodGet, walletPage(other)+payment.WalletQRSuffix, ""); bytes.Equal(rec2.Body.Bytes(), rec.Body.Bytes()) {
		t.Error("two approvals have the same QR code")
	}
}

// TestSandboxTokenChallenge: a card token's 3-D Secure goes through the
// same page, which charges nothing and says so, and its outcome is the
// token's.
func TestSandboxTokenChallenge(t *testing.T) {
	f := newSandboxFixture(t)
	ctx := context.Background()
	tok, err := f.svc.Tokens.CreateToken(ctx, f.demo.Caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.Recurring, Email: "shopper@example.com",
		Card:    &payment.CardInput{Cardholder: "TARO YAMADA", Number: challengeCard, ExpMonth: 12, ExpYear: 2039, CVV: "123"},
		ThreeDS: &payment.ThreeDSSettings{Enabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	var it *payment.IssuerToken
	kessaitest.WaitFor(t, 5*time.Second, "the token's challenge", func() bool {
		if _, err := f.svc.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
		it, err = f.svc.Tokens.TokenThreeDSIssuerToken(ctx, f.demo.Caller, f.demo.StoreID, tok.ID)
		return err == nil
	})
	key := keyOf(t, it.IssuerToken)
	rec, _ := f.open(t, challengePage(key))
	wantBody(t, rec, "confirm this card for Kessai Demo Store", "ending in 3184")
	if strings.Contains(rec.Body.String(), "¥") {
		t.Error("a token's challenge shows an amount")
	}
	done := f.press(t, challengePage(key), "answer", payment.ChallengeCode)
	wantBody(t, done, sandboxText(message.English, "r_3ds_token_successful_title"))
	// The token as stored: its 3-D Secure status is what the page changed.
	var got *payment.TransactionToken
	if err := f.db.View(ctx, func(tx payment.Tx) error {
		var err error
		got, err = tx.Token(ctx, tok.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got.ThreeDS.Status != payment.ThreeDSSuccessful {
		t.Errorf("token three_ds.status %s", got.ThreeDS.Status)
	}
}

// TestSandboxTexts: every text the sandbox's templates and pages look up
// is in the catalogue (a missing one would render as nothing): the
// templates' .T.key, each outcome of each kind of page, each error page,
// each wallet's name.
func TestSandboxTexts(t *testing.T) {
	src, err := fs.ReadFile(templates.FS, "sandbox.html")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`\.T\.([A-Za-z0-9_]+)`).FindAllStringSubmatch(string(src), -1) {
		keys = append(keys, m[1])
	}
	if len(keys) < 20 {
		t.Fatalf("only %d texts found in sandbox.html", len(keys))
	}
	for _, kind := range []string{"wallet", "3ds", "3ds_token"} {
		for _, st := range []payment.ApprovalStatus{payment.ApprovalSuccessful, payment.ApprovalFailed, payment.ApprovalCanceled, payment.ApprovalExpired} {
			keys = append(keys, "r_"+kind+"_"+string(st)+"_title", "r_"+kind+"_"+string(st)+"_text")
		}
	}
	for _, e := range []string{"not_found", "forbidden", "invalid", "internal"} {
		keys = append(keys, "e_"+e+"_title", "e_"+e+"_text")
	}
	for _, l := range walletLooks {
		keys = append(keys, l.name)
	}
	keys = append(keys, lookOf("").name, "acs_title", "acs_lead", "acs_token_lead", "acs_sandbox_code", "acs_wrong", "wallet_title", "wallet_lead")
	for _, k := range keys {
		if _, ok := message.Sandbox.Text(k); !ok {
			t.Errorf("the catalogue's Sandbox has no %q", k)
		}
	}
}
