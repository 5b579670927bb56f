package checkout

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
)

// formsFixture is a gateway's service over a real SQLite file, wired as
// server/gateway/serve.go wires it, with two merchants' stores:
//
//	store A ("Kessai Test Roasters"): token domains shop.example and
//	         *.shop-cdn.example
//	store B: token domain shop-b.example
type formsFixture struct {
	svc            *services.Set
	db             *sqlite.DB
	clock          *kessaitest.Clock // the service's, which the form reads too
	storeA, storeB uuid.UUID
	tokA, tokB     *payment.IssuedAppToken
}

var (
	testSessionKey = []byte("link-form-test-session-key-0123456789abcdef")
)

func newFormsFixture(t testing.TB, publicOrigin string) *formsFixture {
	t.Helper()
	ctx := context.Background()
	// Far from the wall clock, so that a rule reading the wall clock
	// instead of the service's would show.
	clock := kessaitest.NewClock(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	st := servicetest.New(t, servicetest.Options{Clock: clock, PublicOrigin: publicOrigin})
	db, svc := st.DB, st.Service
	f := &formsFixture{svc: svc, db: db, clock: clock}
	now := time.Now()
	mA := &payment.Merchant{ID: payment.NewID(), Name: "Merchant A", Email: "a@kessai.test", Verified: true, CreatedOn: now}
	mB := &payment.Merchant{ID: payment.NewID(), Name: "Merchant B", Email: "b@kessai.test", Verified: true, CreatedOn: now}
	sA := &payment.Store{ID: payment.NewID(), MerchantID: mA.ID, Name: "Kessai Test Roasters", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	sB := &payment.Store{ID: payment.NewID(), MerchantID: mB.ID, Name: "Store B", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	err := db.Update(ctx, func(tx payment.Tx) error {
		for _, step := range []func() error{
			func() error { return tx.CreateMerchant(ctx, mA) },
			func() error { return tx.CreateMerchant(ctx, mB) },
			func() error { return tx.CreateStore(ctx, sA) },
			func() error { return tx.CreateStore(ctx, sB) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.storeA, f.storeB = sA.ID, sB.ID
	if f.tokA, err = svc.Access.IssueStoreAppToken(ctx, sA.ID, payment.NewAppToken{Mode: payment.ModeTest,
		Domains: []string{"shop.example", "*.shop-cdn.example"}}); err != nil {
		t.Fatal(err)
	}
	if f.tokB, err = svc.Access.IssueStoreAppToken(ctx, sB.ID, payment.NewAppToken{Mode: payment.ModeTest,
		Domains: []string{"shop-b.example"}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// server is how a merchant's server acts for a token.
func (f *formsFixture) server(t testing.TB, tok *payment.IssuedAppToken) *payment.Caller {
	t.Helper()
	c, err := f.svc.Access.Authenticate(context.Background(), "Bearer "+tok.Secret+"."+tok.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pay makes a card token and a charge on it, as the widget would, and lets
// the sandbox acquirer answer.
func (f *formsFixture) pay(t testing.TB, tok *payment.IssuedAppToken, cardNumber string, amount int64, currency string, meta payment.Metadata) *payment.Charge {
	t.Helper()
	return servicetest.Pay(t, f.svc, f.server(t, tok), cardNumber, amount, currency, meta)
}

// gateway is the gateway's pages handler over the fixture.
func (f *formsFixture) gateway(t testing.TB, publicURL string) http.Handler {
	t.Helper()
	h, err := New(Config{Service: f.svc.Pages(), PublicURL: publicURL, Logger: slog.New(slog.DiscardHandler), SessionKey: testSessionKey})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const testGateway = "http://pay.kessai.test"

// formURL builds a link-form URL from parameters.
func formURL(id string, params map[string]string) string {
	q := url.Values{}
	for k, v := range params {
		q.Set(k, v)
	}
	return "/forms/" + id + "?" + q.Encode()
}

func get(t testing.TB, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// openedForm is a rendered form as the shopper's browser holds it.
type openedForm struct {
	id     string
	cookie *http.Cookie
	csrf   string
	nonce  string
	body   string
}

var (
	csrfField  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	nonceField = regexp.MustCompile(`name="form" value="([^"]+)"`)
)

func openForm(t testing.TB, h http.Handler, id string, params map[string]string) *openedForm {
	t.Helper()
	f := &openedForm{id: id}
	rec := f.send(h, httptest.NewRequest(http.MethodGet, formURL(id, params), nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET form: %d\n%s", rec.Code, rec.Body)
	}
	f.body = rec.Body.String()
	if f.cookie == nil {
		t.Fatal("no session cookie")
	}
	m := csrfField.FindStringSubmatch(f.body)
	n := nonceField.FindStringSubmatch(f.body)
	if m == nil || n == nil {
		t.Fatalf("no csrf/form fields in\n%s", f.body)
	}
	f.csrf, f.nonce = html.UnescapeString(m[1]), html.UnescapeString(n[1])
	return f
}

func (f *openedForm) complete(t testing.TB, h http.Handler, fields map[string]string, opts ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	v := url.Values{"csrf": {f.csrf}, "form": {f.nonce}}
	for k, x := range fields {
		v.Set(k, x)
	}
	req := httptest.NewRequest(http.MethodPost, "/forms/"+f.id+"/complete", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", testGateway)
	for _, o := range opts {
		o(req)
	}
	return f.send(h, req)
}

// send serves req as the shopper's browser sends it: with the form's
// session cookie, if it has one, keeping the one the gateway sets.
func (f *openedForm) send(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	if f.cookie != nil {
		req.AddCookie(f.cookie)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == linkformCookie {
			f.cookie = c
		}
	}
	return rec
}

func baseParams(f *formsFixture) map[string]string {
	return map[string]string{
		"appId": f.tokA.JWT, "amount": "1600", "currency": "JPY", "order_id": "WC-1001",
		"successRedirectUrl": "https://shop.example/checkout/done?order=1001&lang=en",
		"failureRedirectUrl": "https://shop.example/checkout/failed",
		"pendingRedirectUrl": "https://shop.example/checkout/pending",
		"autoRedirect":       "true",
	}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "\x00" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

func TestLinkformRefusesBadParameters(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	base := baseParams(f)
	cases := []struct {
		name   string
		params map[string]string
		want   string // a fragment of the explanation
	}{
		{"no appId", with(base, "appId", "\x00"), "appId is missing"},
		{"garbage appId", with(base, "appId", "not.a.jwt"), "appId is not a valid"},
		{"secret in appId", with(base, "appId", f.tokA.Secret+"."+f.tokA.JWT), "appId is not a valid"},
		{"checkout", with(base, "checkout", "qr-code"), "checkout must be"},
		{"token type", with(base, "tokenType", "forever"), "tokenType must be"},
		{"no amount", with(base, "amount", "\x00"), "amount is required"},
		{"zero amount", with(base, "amount", "0"), "positive whole number"},
		{"decimal amount", with(base, "amount", "16.00"), "positive whole number"},
		{"huge amount", with(base, "amount", "100000000"), "between ¥50 and ¥9,999,999"},
		{"unknown currency", with(base, "currency", "XYZ"), `currency "XYZ" is not supported`},
		{"store currency", with(base, "currency", "KRW", "amount", "5000"), "does not accept KRW"},
		{"auth", with(base, "auth", "yes"), "auth must be true or false"},
		{"autoRedirect", with(base, "autoRedirect", "1"), "autoRedirect must be true or false"},
		{"email", with(base, "emailAddress", "not-an-address"), "emailAddress is not"},
		{"locale", with(base, "locale", "fr"), "locale must be"},
		{"control chars", with(base, "order_id", "A\x01B"), "order_id is too long"},
		// Open redirects: every redirect URL must be http(s) on the token's domains.
		{"other host", with(base, "successRedirectUrl", "https://evil.example/steal"), "successRedirectUrl must be"},
		{"javascript", with(base, "failureRedirectUrl", "javascript:alert(1)"), "failureRedirectUrl must be"},
		{"scheme-relative", with(base, "pendingRedirectUrl", "//evil.example/x"), "pendingRedirectUrl must be"},
		{"relative", with(base, "successRedirectUrl", "/checkout/done"), "successRedirectUrl must be"},
		{"userinfo", with(base, "successRedirectUrl", "https://shop.example@evil.example/"), "successRedirectUrl must be"},
		{"suffix", with(base, "successRedirectUrl", "https://shop.example.evil.example/"), "successRedirectUrl must be"},
		{"backslash", with(base, "successRedirectUrl", `https://evil.example\@shop.example/`), "successRedirectUrl must be"},
		{"data", with(base, "successRedirectUrl", "data:text/html,hi"), "successRedirectUrl must be"},
		{"ftp", with(base, "successRedirectUrl", "ftp://shop.example/"), "successRedirectUrl must be"},
		{"other store's domain", with(base, "successRedirectUrl", "https://shop-b.example/done"), "successRedirectUrl must be"},
		{"gateway itself", with(base, "successRedirectUrl", testGateway+"/forms/x"), "successRedirectUrl must be"},
		{"very long URL", with(base, "successRedirectUrl", "https://shop.example/"+strings.Repeat("a", 1010)), "successRedirectUrl must be"},
		{"too much to keep", with(base,
			"successRedirectUrl", "https://shop.example/"+strings.Repeat("s", 1000),
			"failureRedirectUrl", "https://shop.example/"+strings.Repeat("f", 1000),
			"pendingRedirectUrl", "https://shop.example/"+strings.Repeat("p", 1000)), "too long to keep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, formURL("wc-checkout", tc.params))
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400\n%s", rec.Code, rec.Body)
			}
			body := html.UnescapeString(rec.Body.String())
			if !strings.Contains(body, tc.want) {
				t.Errorf("the page does not say %q:\n%s", tc.want, body)
			}
			if c := rec.Result().Cookies(); len(c) != 0 {
				t.Errorf("a refused form set cookies: %v", c)
			}
			if loc := rec.Header().Get("Location"); loc != "" {
				t.Errorf("a refused form redirects to %s", loc)
			}
		})
	}

	// Redirect URLs that are fine: a port, a wildcard domain, a query.
	for _, ok := range []string{"https://shop.example:8443/thanks", "http://shop.example/thanks?a=1&b=2", "https://img.shop-cdn.example/ok"} {
		if rec := get(t, h, formURL("wc-checkout", with(base, "successRedirectUrl", ok))); rec.Code != http.StatusOK {
			t.Errorf("%s refused: %d\n%s", ok, rec.Code, rec.Body)
		}
	}
	for _, id := range []string{"a b", ".hidden", strings.Repeat("x", 65), "-lead"} {
		if rec := get(t, h, "/forms/"+url.PathEscape(id)+"?appId="+f.tokA.JWT+"&amount=100"); rec.Code != http.StatusNotFound {
			t.Errorf("form id %q: %d, want 404", id, rec.Code)
		}
	}
}

var inlineScript = regexp.MustCompile(`<script(\s[^>]*)?>`)

func TestLinkformPage(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	params := with(baseParams(f), "emailAddress", "taro@example.com", "name", "Taro Yamada", "auth", "true")
	rec := get(t, h, formURL("wc-checkout", params), "Accept-Language", "en-GB,en;q=0.9")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		"Kessai Test Roasters", "¥1,600", "WC-1001", "Taro Yamada", "taro@example.com", "Pay ¥1,600",
		`data-app-id="` + f.tokA.JWT + `"`, `data-capture="false"`, `data-checkout="payment"`,
		"Test mode", `action="/forms/wc-checkout/complete"`, `lang="en"`,
	} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Metadata for the charge: the form's label and the order id.
	if !strings.Contains(html.UnescapeString(body), `data-metadata="{"order_id":"WC-1001","univapay-form-id":"wc-checkout"}"`) {
		t.Errorf("metadata attribute wrong:\n%s", body)
	}
	// Every script is a file on the gateway: the loader and the page's own.
	for _, m := range inlineScript.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], "src=") {
			t.Errorf("inline script: %s", m[0])
		}
	}
	for _, want := range []string{"/static/checkout.js", "/static/linkform.js"} {
		if !strings.Contains(body, `src="`+want) {
			t.Errorf("the page does not load %s", want)
		}
	}
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self';", "frame-ancestors 'none'", "form-action 'self' https://shop.example", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	c := rec.Result().Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/forms/" || c.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/forms/, not Secure on http", c)
	}

	// Japanese from Accept-Language, and from locale= over it.
	ja := get(t, h, formURL("wc-checkout", baseParams(f)), "Accept-Language", "ja,en;q=0.5").Body.String()
	if !strings.Contains(ja, `lang="ja"`) || !strings.Contains(ja, "お支払い金額") {
		t.Errorf("Accept-Language ja did not give a Japanese page")
	}
	en := get(t, h, formURL("wc-checkout", with(baseParams(f), "locale", "en")), "Accept-Language", "ja").Body.String()
	if !strings.Contains(en, `lang="en"`) {
		t.Errorf("locale=en did not win over Accept-Language")
	}

	// On an https gateway the cookie is Secure.
	fs := newFormsFixture(t, "https://pay.kessai.test")
	hs := fs.gateway(t, "https://pay.kessai.test")
	if c := get(t, hs, formURL("wc-checkout", baseParams(fs))).Result().Cookies()[0]; !c.Secure {
		t.Errorf("cookie not Secure on an https gateway")
	}

	// A token checkout needs no amount.
	tok := get(t, h, formURL("save-card", map[string]string{"appId": f.tokA.JWT, "checkout": "token", "tokenType": "recurring"}))
	if tok.Code != http.StatusOK || !strings.Contains(tok.Body.String(), "Save card") {
		t.Errorf("token checkout: %d\n%s", tok.Code, tok.Body)
	}
}

func redirectTo(t testing.TB, rec *httptest.ResponseRecorder) *url.URL {
	t.Helper()
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303\n%s", rec.Code, rec.Body)
	}
	u, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLinkformCompletionRedirects(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}

	t.Run("successful", func(t *testing.T) {
		form := openForm(t, h, "wc-checkout", baseParams(f))
		ch := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
		if ch.Status != payment.ChargeSuccessful {
			t.Fatalf("charge %s", ch.Status)
		}
		u := redirectTo(t, form.complete(t, h, map[string]string{"chargeId": ch.ID.String()}))
		q := u.Query()
		if u.Host != "shop.example" || u.Path != "/checkout/done" {
			t.Errorf("redirected to %s", u)
		}
		if q.Get("univapayChargeId") != ch.ID.String() || q.Get("univapayTokenId") != ch.TokenID.String() {
			t.Errorf("ids missing: %s", u)
		}
		if q.Get("order") != "1001" || q.Get("lang") != "en" {
			t.Errorf("the merchant's own query was lost: %s", u)
		}
		// Completing again with the same charge answers the same; another
		// charge is refused.
		if again := redirectTo(t, form.complete(t, h, map[string]string{"chargeId": ch.ID.String()})); again.String() != u.String() {
			t.Errorf("second completion went to %s", again)
		}
		other := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
		if rec := form.complete(t, h, map[string]string{"chargeId": other.ID.String()}); rec.Code != http.StatusConflict {
			t.Errorf("a second charge for a completed form: %d", rec.Code)
		}
	})

	t.Run("declined", func(t *testing.T) {
		form := openForm(t, h, "wc-checkout", baseParams(f))
		ch := f.pay(t, f.tokA, "4111111111111111", 1600, "JPY", meta)
		if ch.Status != payment.ChargeFailed {
			t.Fatalf("charge %s", ch.Status)
		}
		u := redirectTo(t, form.complete(t, h, map[string]string{"chargeId": ch.ID.String()}))
		if u.Path != "/checkout/failed" || u.Query().Get("univapayChargeId") != ch.ID.String() {
			t.Errorf("redirected to %s", u)
		}
		// A declined card does not use the form up.
		ok := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
		if u := redirectTo(t, form.complete(t, h, map[string]string{"chargeId": ok.ID.String()})); u.Path != "/checkout/done" {
			t.Errorf("after a decline, success went to %s", u)
		}
		// Once paid, the form cannot be canceled.
		if rec := form.complete(t, h, map[string]string{"outcome": "cancel"}); rec.Code != http.StatusConflict {
			t.Errorf("cancel after payment: %d", rec.Code)
		}
	})

	t.Run("authorised only", func(t *testing.T) {
		form := openForm(t, h, "wc-checkout", with(baseParams(f), "auth", "true"))
		ctx := context.Background()
		c := f.server(t, f.tokA)
		tt, err := f.svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime,
			Email: "a@example.com", Card: &payment.CardInput{Cardholder: "A B", Number: "4000020000000000", ExpMonth: 1, ExpYear: 2039, CVV: "123"}})
		if err != nil {
			t.Fatal(err)
		}
		no := false
		ch, err := f.svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tt.ID, Amount: 1600, Currency: "JPY", Capture: &no, Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		// Still pending: completion waits a little, then calls it pending.
		done := make(chan *httptest.ResponseRecorder)
		go func() { done <- form.complete(t, h, map[string]string{"chargeId": ch.ID.String()}) }()
		time.Sleep(50 * time.Millisecond)
		if _, err := f.svc.Work.ProcessPending(ctx, 10); err != nil {
			t.Fatal(err)
		}
		u := redirectTo(t, <-done)
		if u.Path != "/checkout/done" {
			t.Errorf("an authorised charge went to %s", u)
		}
	})

	t.Run("result page", func(t *testing.T) {
		// Without autoRedirect the shopper sees the outcome and a button.
		form := openForm(t, h, "wc-checkout", with(baseParams(f), "autoRedirect", "\x00"))
		ch := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
		rec := form.complete(t, h, map[string]string{"chargeId": ch.ID.String()})
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusOK || !strings.Contains(body, "Payment successful") ||
			!strings.Contains(body, `href="https://shop.example/checkout/done?lang=en&order=1001&univapayChargeId=`+ch.ID.String()) {
			t.Errorf("result page %d:\n%s", rec.Code, body)
		}
		// Without redirect URLs there is nowhere to go back to.
		bare := openForm(t, h, "wc-checkout", map[string]string{"appId": f.tokA.JWT, "amount": "1600", "order_id": "WC-1001"})
		ch2 := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
		rec = bare.complete(t, h, map[string]string{"chargeId": ch2.ID.String()})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "You can close this page") {
			t.Errorf("bare result page %d:\n%s", rec.Code, rec.Body)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		form := openForm(t, h, "wc-checkout", baseParams(f))
		u := redirectTo(t, form.complete(t, h, map[string]string{"outcome": "cancel"}))
		if u.String() != "https://shop.example/checkout/failed" {
			t.Errorf("cancel went to %s", u)
		}
	})

	t.Run("token checkout", func(t *testing.T) {
		form := openForm(t, h, "save-card", map[string]string{"appId": f.tokA.JWT, "checkout": "token",
			"successRedirectUrl": "https://shop.example/cards", "autoRedirect": "true"})
		tt, err := f.svc.Tokens.CreateToken(context.Background(), f.server(t, f.tokA), payment.NewToken{PaymentType: payment.PaymentTypeCard,
			Type: payment.OneTime, Email: "a@example.com", Card: &payment.CardInput{Cardholder: "A B", Number: "4000020000000000", ExpMonth: 1, ExpYear: 2039, CVV: "123"}})
		if err != nil {
			t.Fatal(err)
		}
		u := redirectTo(t, form.complete(t, h, map[string]string{"tokenId": tt.ID.String()}))
		if u.Query().Get("univapayTokenId") != tt.ID.String() || u.Query().Has("univapayChargeId") {
			t.Errorf("redirected to %s", u)
		}
	})
}

func TestLinkformRefusesChargesItDidNotTake(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	cases := map[string]func() string{
		"another amount":   func() string { return f.pay(t, f.tokA, "4000020000000000", 100, "JPY", meta).ID.String() },
		"another currency": func() string { return f.pay(t, f.tokA, "4000020000000000", 1600, "USD", meta).ID.String() },
		"another order": func() string {
			return f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-9"}).ID.String()
		},
		"another form": func() string {
			return f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", payment.Metadata{"univapay-form-id": "x", "order_id": "WC-1001"}).ID.String()
		},
		"another store":     func() string { return f.pay(t, f.tokB, "4000020000000000", 1600, "JPY", meta).ID.String() },
		"no such charge":    func() string { return uuid.NewString() },
		"not an id":         func() string { return "../../stores" },
		"a token as charge": func() string { return f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta).TokenID.String() },
	}
	for name, id := range cases {
		t.Run(name, func(t *testing.T) {
			form := openForm(t, h, "wc-checkout", baseParams(f))
			rec := form.complete(t, h, map[string]string{"chargeId": id()})
			if rec.Code != http.StatusBadRequest || rec.Header().Get("Location") != "" {
				t.Errorf("status %d, Location %q; want 400 and no redirect", rec.Code, rec.Header().Get("Location"))
			}
		})
	}
}

func TestLinkformCSRF(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	ch := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
	fields := map[string]string{"chargeId": ch.ID.String()}
	form := openForm(t, h, "wc-checkout", baseParams(f))

	forbidden := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		if rec.Code != http.StatusForbidden || rec.Header().Get("Location") != "" {
			t.Errorf("status %d, Location %q; want 403", rec.Code, rec.Header().Get("Location"))
		}
	}
	t.Run("no token", func(t *testing.T) {
		bad := *form
		bad.csrf = ""
		forbidden(t, bad.complete(t, h, fields))
	})
	t.Run("wrong token", func(t *testing.T) {
		bad := *form
		bad.csrf = form.csrf[:len(form.csrf)-2] + "xx"
		forbidden(t, bad.complete(t, h, fields))
	})
	t.Run("no session", func(t *testing.T) {
		bad := *form
		bad.cookie = nil
		forbidden(t, bad.complete(t, h, fields))
	})
	t.Run("another site", func(t *testing.T) {
		forbidden(t, form.complete(t, h, fields, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }))
	})
	t.Run("another session's token", func(t *testing.T) {
		other := openForm(t, h, "wc-checkout", baseParams(f))
		bad := *form
		bad.csrf = other.csrf
		forbidden(t, bad.complete(t, h, fields))
	})
	t.Run("another form's nonce", func(t *testing.T) {
		bad := *form
		bad.nonce = "AAAAAAAAAAAAAAAAAAAAAA"
		forbidden(t, bad.complete(t, h, fields))
	})
	t.Run("the nonce on another form id", func(t *testing.T) {
		bad := *form
		bad.id = "another-form"
		forbidden(t, bad.complete(t, h, fields))
	})
	// And the genuine request still works.
	if u := redirectTo(t, form.complete(t, h, fields)); u.Host != "shop.example" {
		t.Errorf("redirected to %s", u)
	}
}

func TestLinkformSessionTampering(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	ch := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
	fields := map[string]string{"chargeId": ch.ID.String()}
	form := openForm(t, h, "wc-checkout", baseParams(f))

	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	for _, i := range []int{0, len(form.cookie.Value) / 2, len(form.cookie.Value) - 1} {
		bad := *form
		c := *form.cookie
		c.Value = flip(c.Value, i)
		bad.cookie = &c
		if rec := bad.complete(t, h, fields); rec.Code != http.StatusForbidden {
			t.Errorf("cookie altered at %d: status %d, want 403", i, rec.Code)
		}
	}

	// A session made with another key (another gateway, a forger) is not
	// accepted either, even with its own matching CSRF token.
	other, err := New(Config{Service: f.svc.Pages(), PublicURL: testGateway, Logger: slog.New(slog.DiscardHandler),
		SessionKey: []byte("a-different-session-key-0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	forged := openForm(t, other, "wc-checkout", baseParams(f))
	if rec := forged.complete(t, h, fields); rec.Code != http.StatusForbidden {
		t.Errorf("a session of another key: status %d, want 403", rec.Code)
	}

	// A session cookie does not carry its parameters in the clear.
	raw, _ := url.QueryUnescape(form.cookie.Value)
	if strings.Contains(raw, "shop.example") || strings.Contains(raw, "WC-1001") {
		t.Errorf("the session cookie shows the form's parameters")
	}
	// The untouched session still completes.
	if u := redirectTo(t, form.complete(t, h, fields)); u.Host != "shop.example" {
		t.Errorf("redirected to %s", u)
	}
}

func TestLinkformRevokedToken(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	form := openForm(t, h, "wc-checkout", baseParams(f))
	ch := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta)
	c := f.server(t, f.tokA)
	if err := f.svc.Access.RevokeAppToken(context.Background(), c, f.storeA, f.tokA.ID); err != nil {
		t.Fatalf("revoking the form's app token: %v", err)
	}
	if rec := form.complete(t, h, map[string]string{"chargeId": ch.ID.String()}); rec.Code != http.StatusForbidden {
		t.Errorf("status %d after revocation, want 403", rec.Code)
	}
}

func TestWithIDs(t *testing.T) {
	if got := withIDs("https://shop.example/a?x=1#frag", "t", "c"); got != "https://shop.example/a?univapayChargeId=c&univapayTokenId=t&x=1#frag" {
		t.Errorf("withIDs = %s", got)
	}
}
