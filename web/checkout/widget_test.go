package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/web/asset"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// widgetFixture is a gateway wired as server/gateway/serve.go wires it, on a fresh
// SQLite file, with the demo account seeded for a few domains.
type widgetFixture struct {
	svc     *services.Set
	demo    *payment.DemoAccount
	handler http.Handler
}

const widgetGateway = "https://pay.kessai.test"

func newWidgetFixture(t *testing.T) *widgetFixture {
	t.Helper()
	st := servicetest.New(t, servicetest.Options{PublicOrigin: widgetGateway})
	svc, demo := st.Service, st.SeedDemo(t, "shop.example", "*.cdn.example", "127.0.0.1:8081").DemoAccount
	h, err := New(Config{
		Service: svc.Pages(), PublicURL: widgetGateway, Logger: slog.New(slog.DiscardHandler),
		SessionKey: []byte("widget-test-session-key-0123456789abcdef"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &widgetFixture{svc: svc, demo: demo, handler: h}
}

// frame requests the widget frame with the usual query, changed by kv
// pairs ("" removes a parameter).
func (f *widgetFixture) frame(t *testing.T, header http.Header, kv ...string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	q := url.Values{
		"appId": {f.demo.Token.JWT}, "origin": {"https://shop.example"}, "instance": {"i123"},
		"checkout": {"payment"}, "amount": {"1000"}, "currency": {"jpy"}, "locale": {"en"},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			q.Del(kv[i])
		} else {
			q.Set(kv[i], kv[i+1])
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/widget/frame?"+q.Encode(), nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	return rec, rec.Body.String()
}

func frameAncestorsOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	csp := rec.Header().Get("Content-Security-Policy")
	for _, d := range strings.Split(csp, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, "frame-ancestors ") {
			return strings.TrimPrefix(d, "frame-ancestors ")
		}
	}
	t.Fatalf("no frame-ancestors in %q", csp)
	return ""
}

var (
	scriptTag  = regexp.MustCompile(`<script([^>]*)>`)
	styleAttr  = regexp.MustCompile(`\sstyle=`)
	inlineHook = regexp.MustCompile(`\son[a-z]+=`)
)

// checkNoInline fails on anything the frame's CSP would refuse: inline
// scripts, style attributes, event-handler attributes, <style> blocks.
func checkNoInline(t *testing.T, body string) {
	t.Helper()
	for _, m := range scriptTag.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], "src=") && !strings.Contains(m[1], `type="application/json"`) {
			t.Errorf("inline script: %s", m[0])
		}
	}
	if styleAttr.MatchString(body) || strings.Contains(body, "<style") || inlineHook.MatchString(body) {
		t.Error("inline style or event handler in the page")
	}
}

func TestWidgetFrameAllowedOrigin(t *testing.T) {
	f := newWidgetFixture(t)
	rec, body := f.frame(t, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", rec.Code, body)
	}
	h := rec.Header()
	fa := frameAncestorsOf(t, rec)
	for _, want := range []string{
		"http://shop.example:*", "https://shop.example:*", "https://*.cdn.example:*",
		"http://127.0.0.1:8081", "https://127.0.0.1:8081", "'self'",
	} {
		if !strings.Contains(" "+fa+" ", " "+want+" ") {
			t.Errorf("frame-ancestors %q lacks %s", fa, want)
		}
	}
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self' 'wasm-unsafe-eval';", "style-src 'self';", "connect-src 'self';", "base-uri 'none'", "default-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	for k, want := range map[string]string{
		"Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
		"Content-Type": "text/html; charset=utf-8",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, want := range []string{
		`autocomplete="cc-number"`, `autocomplete="cc-exp"`, `autocomplete="cc-csc"`, `autocomplete="cc-name"`,
		`autocomplete="email"`, `inputmode="numeric"`, `aria-describedby="kw-number-err"`, `<label class="kw-label" for="kw-number">`,
		`role="alert"`, "Pay ¥1,000", `lang="en"`, `"origin":"https://shop.example"`, `"instance":"i123"`,
		`"amount":1000`, `"currency":"JPY"`, `/static/widget.js?v=`, `/static/widget.css?v=`, `/widget/theme.css?c=`,
		`data-src-visa="/static/img/brands/visa.svg?v=`, "Test mode",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("frame lacks %s", want)
		}
	}
	checkNoInline(t, body)
}

func TestWidgetFrameOrigins(t *testing.T) {
	f := newWidgetFixture(t)
	for _, origin := range []string{"https://shop.example", "http://shop.example:3000", "https://img.cdn.example", "http://127.0.0.1:8081", widgetGateway} {
		if rec, body := f.frame(t, nil, "origin", origin); rec.Code != http.StatusOK {
			t.Errorf("origin %s: status %d\n%s", origin, rec.Code, body)
		}
	}
	for _, origin := range []string{
		"https://evil.example", "https://shop.example.evil.example", "http://127.0.0.1:8082", "null", "",
		"https://shop.example/path", "file://shop.example", "https://user@shop.example", "javascript:alert(1)",
	} {
		rec, body := f.frame(t, nil, "origin", origin)
		if rec.Code != http.StatusForbidden {
			t.Errorf("origin %q: status %d, want 403", origin, rec.Code)
		}
		if fa := frameAncestorsOf(t, rec); fa != "'self'" {
			t.Errorf("origin %q: frame-ancestors %q, want only 'self'", origin, fa)
		}
		if strings.Contains(rec.Header().Get("Content-Security-Policy"), "*") {
			t.Errorf("origin %q: wildcard in CSP", origin)
		}
		if strings.Contains(body, "kw-number") || strings.Contains(body, f.demo.Token.JWT) {
			t.Errorf("origin %q: the error page shows the form or the token", origin)
		}
		if !strings.Contains(body, "not allowed to show") {
			t.Errorf("origin %q: no explanation:\n%s", origin, body)
		}
		checkNoInline(t, body)
	}
}

func TestWidgetFrameBadToken(t *testing.T) {
	f := newWidgetFixture(t)
	ctx := context.Background()
	other, err := f.svc.Access.IssueStoreAppToken(ctx, f.demo.StoreID, payment.NewAppToken{Mode: payment.ModeTest, Domains: []string{"shop.example"}})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := f.svc.Access.Authenticate(ctx, "Bearer "+f.demo.Token.Secret+"."+f.demo.Token.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Access.RevokeAppToken(ctx, caller, f.demo.StoreID, other.ID); err != nil {
		t.Fatal(err)
	}
	forged := f.demo.Token.JWT[:len(f.demo.Token.JWT)-4] + "AAAA"
	for name, appID := range map[string]string{
		"garbage": "garbage", "forged": forged, "revoked": other.JWT, "missing": "", "withSecret": f.demo.Token.Secret + "." + f.demo.Token.JWT,
	} {
		rec, body := f.frame(t, nil, "appId", appID)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, rec.Code)
		}
		if fa := frameAncestorsOf(t, rec); fa != "'self'" {
			t.Errorf("%s: frame-ancestors %q", name, fa)
		}
		if strings.Contains(body, "kw-number") || !strings.Contains(body, "app token") {
			t.Errorf("%s: not the error page:\n%s", name, body)
		}
	}
}

func TestWidgetFrameBadParameters(t *testing.T) {
	f := newWidgetFixture(t)
	for name, kv := range map[string][]string{
		"noAmount":      {"amount", ""},
		"zeroAmount":    {"amount", "0"},
		"negative":      {"amount", "-5"},
		"noCurrency":    {"currency", ""},
		"badCurrency":   {"currency", "XXX"},
		"badCheckout":   {"checkout", "wire"},
		"badTokenType":  {"tokenType", "forever"},
		"badMetadata":   {"metadata", "[1,2]"},
		"badInstance":   {"instance", "<script>"},
		"subscription":  {"tokenType", "subscription"},
		"badCapture":    {"capture", "maybe"},
		"brokenJSON":    {"metadata", "{"},
		"tokenNoCurrIn": {"checkout", "token", "currency", ""},
	} {
		rec, body := f.frame(t, nil, kv...)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, rec.Code)
			continue
		}
		// The embedding page is allowed, so the error shows there and its
		// script tells the loader.
		if fa := frameAncestorsOf(t, rec); !strings.Contains(fa, "https://shop.example:*") {
			t.Errorf("%s: frame-ancestors %q", name, fa)
		}
		if !strings.Contains(body, `"origin":"https://shop.example"`) || !strings.Contains(body, `"fatal"`) && !strings.Contains(body, `"error"`) {
			t.Errorf("%s: the error page does not tell the loader:\n%s", name, body)
		}
		checkNoInline(t, body)
	}
	// Valid variations.
	for name, kv := range map[string][]string{
		"token":          {"checkout", "token", "amount", "", "currency", ""},
		"tokenRecurring": {"checkout", "token", "tokenType", "recurring", "amount", "", "currency", ""},
		"subscriptionTk": {"checkout", "token", "tokenType", "subscription"},
		"qr":             {"checkout", "qr"},
		"authOnly":       {"capture", "false"},
		"metadata":       {"metadata", `{"order_id":"123","n":5}`},
		"usd":            {"amount", "1250", "currency", "usd"},
		"inline":         {"inline", "true"},
		"email":          {"email", "buyer@example.com"},
	} {
		rec, body := f.frame(t, nil, kv...)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d\n%s", name, rec.Code, body)
		}
		switch name {
		case "token":
			if !strings.Contains(body, "Save card") {
				t.Errorf("token checkout without amount: no Save card label")
			}
		case "usd":
			if !strings.Contains(body, "Pay $12.50") {
				t.Errorf("USD amount not formatted")
			}
		case "metadata":
			if !strings.Contains(body, `"metadata":{"n":5,"order_id":"123"}`) {
				t.Errorf("metadata not passed on")
			}
		case "authOnly":
			if !strings.Contains(body, `"capture":false`) {
				t.Errorf("capture not passed on")
			}
		case "inline":
			if !strings.Contains(body, `class="kw-inline"`) || strings.Contains(body, `class="kw-head"`) {
				t.Errorf("inline frame has the modal's header")
			}
		case "email":
			if strings.Contains(body, `id="kw-email"`) {
				t.Errorf("asks for the e-mail it was given")
			}
		}
	}
}

func TestWidgetFrameJapanese(t *testing.T) {
	f := newWidgetFixture(t)
	check := func(name string, rec *httptest.ResponseRecorder, body string, ja bool) {
		t.Helper()
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d", name, rec.Code)
		}
		for _, s := range []string{`lang="ja"`, "カード番号", "有効期限", "セキュリティコード", "カード名義人", "¥1,000 を支払う", "テストモード", "カード番号を入力してください"} {
			if strings.Contains(body, s) != ja {
				t.Errorf("%s: contains %q = %v, want %v", name, s, !ja, ja)
			}
		}
	}
	rec, body := f.frame(t, nil, "locale", "ja")
	check("locale=ja", rec, body, true)
	rec, body = f.frame(t, nil, "locale", "ja-JP")
	check("locale=ja-JP", rec, body, true)
	rec, body = f.frame(t, http.Header{"Accept-Language": {"ja-JP,ja;q=0.9,en;q=0.8"}}, "locale", "auto")
	check("Accept-Language ja", rec, body, true)
	rec, body = f.frame(t, http.Header{"Accept-Language": {"en-US,en;q=0.9,ja;q=0.5"}}, "locale", "")
	check("Accept-Language en", rec, body, false)
	rec, body = f.frame(t, http.Header{"Accept-Language": {"ja-JP"}}, "locale", "en")
	check("locale=en beats the header", rec, body, false)
	// The error page speaks the language too.
	rec, body = f.frame(t, nil, "locale", "ja", "origin", "https://evil.example")
	if rec.Code != http.StatusForbidden || !strings.Contains(body, "決済フォームを表示できません") {
		t.Errorf("Japanese error page: %d\n%s", rec.Code, body)
	}
}

func TestWidgetThemeCSS(t *testing.T) {
	f := newWidgetFixture(t)
	u := themeURL(payment.DefaultStoreSettings().Theme)
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
	body := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/css; charset=utf-8" || rec.Header().Get("Cache-Control") != asset.ImmutableCache {
		t.Fatalf("%s: %d %v", u, rec.Code, rec.Header())
	}
	if !strings.Contains(body, "--kw-accent:#1f5eff;") || !strings.Contains(body, "--kw-panel:#ffffff;") {
		t.Errorf("theme.css = %q", body)
	}
	rec = httptest.NewRecorder()
	f.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/widget/theme.css?c="+url.QueryEscape("red;}body{x:1-ffffff-url(x)"), nil))
	if body := rec.Body.String(); body != ":root{--kw-panel-2:#ffffff;}\n" {
		t.Errorf("theme.css with bad colours = %q", body)
	}
	if got := themeURL(payment.Theme{MainColor: "rgb(1,2,3)", MainBackground: "#ABC"}); got != "/widget/theme.css?c=abc-------" {
		t.Errorf("themeURL = %q", got)
	}
}

// ---- static files ----------------------------------------------------

func staticGet(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestStaticRoutes: the gateway serves static.FS under /static/ (how is
// web/asset's to test) and the loader under UnivaPay's path too.
func TestStaticRoutes(t *testing.T) {
	f := newWidgetFixture(t)
	h := f.handler
	js := staticGet(t, h, "/static/checkout.js")
	if js.Code != 200 || js.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("checkout.js: %d %q", js.Code, js.Header().Get("Content-Type"))
	}
	alias := staticGet(t, h, "/client/checkout.js")
	if !bytes.Equal(alias.Body.Bytes(), js.Body.Bytes()) || alias.Header().Get("ETag") != js.Header().Get("ETag") {
		t.Error("/client/checkout.js differs from /static/checkout.js")
	}
	u := site.StaticURL("checkout.js")
	if !regexp.MustCompile(`^/static/checkout\.js\?v=[0-9a-f]{8}$`).MatchString(u) {
		t.Fatalf("staticURL = %q", u)
	}
	if rec := staticGet(t, h, u); rec.Header().Get("Cache-Control") != asset.ImmutableCache {
		t.Errorf("%s: Cache-Control %q", u, rec.Header().Get("Cache-Control"))
	}
	if rec := staticGet(t, h, "/static/img/brands/visa.svg"); rec.Code != 200 || rec.Header().Get("Content-Type") != "image/svg+xml" {
		t.Errorf("visa.svg: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, p := range []string{"/static/nope.js", "/static/build/README.md", "/static/static.go", "/static/../go.mod", "/static/", "/client/widget.js"} {
		if rec := staticGet(t, h, p); rec.Code == 200 {
			t.Errorf("%s: 200", p)
		}
	}
}

// TestFrameGivesScriptsTheCatalogue: the frame's configuration carries the
// whole FrameScript table in the page's language, which is all widget.js
// and the WebAssembly have to say.
func TestFrameGivesScriptsTheCatalogue(t *testing.T) {
	f := newWidgetFixture(t)
	config := regexp.MustCompile(`<script type="application/json" id="kw-config">([^<]*)</script>`)
	for _, l := range message.Locales() {
		rec, body := f.frame(t, nil, "locale", string(l))
		m := config.FindStringSubmatch(body)
		if rec.Code != http.StatusOK || m == nil {
			t.Fatalf("%s: %d, config %v", l, rec.Code, m)
		}
		var cfg struct {
			Locale   message.Locale    `json:"locale"`
			Messages map[string]string `json:"messages"`
		}
		if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Locale != l || !maps.Equal(cfg.Messages, message.FrameScript.In(l)) {
			t.Errorf("%s: the frame gives its scripts %s %v, not the catalogue's FrameScript", l, cfg.Locale, cfg.Messages)
		}
		if !strings.Contains(body, `lang="`+string(l)+`"`) || !strings.Contains(body, html.EscapeString(message.Frame.Get("number", l))) {
			t.Errorf("%s: the page is not in its language", l)
		}
	}
}
