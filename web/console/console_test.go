package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/mail"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// consoleFixture is a gateway's pages on a real SQLite store with two
// merchants: the demo merchant, whose console user signs in, with objects
// of both modes, and another merchant with objects of its own.
type consoleFixture struct {
	stack   *servicetest.Stack
	demo    *servicetest.Demo
	srv     *httptest.Server
	console *console
	mailbox *fakeMailbox
	// own, otherTenant and otherMode fill a route's path parameters: the
	// demo merchant's test objects, the other merchant's, the demo
	// merchant's live ones.
	own, otherTenant, otherMode map[string]string
}

// csrfField is a form's CSRF token.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

type fakeMailbox struct{ messages []mail.Message }

func (m *fakeMailbox) Messages() []mail.Message { return m.messages }

// newBareConsole serves the console over a service made with opts (its
// public origin the server's own, events recorded as the gateway
// records them) holding only the demo account.
func newBareConsole(t *testing.T, opts servicetest.Options) *consoleFixture {
	t.Helper()
	f := &consoleFixture{mailbox: &fakeMailbox{}}
	f.srv = httptest.NewUnstartedServer(nil)
	origin := "http://" + f.srv.Listener.Addr().String()
	opts.PublicOrigin = origin
	if opts.EncodeEvent == nil {
		opts.EncodeEvent = univapay.EncodeEvent
	}
	f.stack = servicetest.New(t, opts)
	f.demo = f.stack.SeedDemo(t)
	c, err := newConsole(Config{Service: f.stack.Service.Pages(), PublicURL: origin, SessionKey: []byte(strings.Repeat("k", 32)), Mailbox: f.mailbox,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f.console = c
	f.srv.Config.Handler = c.handler
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func newConsoleFixture(t *testing.T) *consoleFixture {
	t.Helper()
	f := newBareConsole(t, servicetest.Options{})
	f.own = f.objects(t, f.demo.StoreID, f.demo.Caller)
	otherStore, otherCaller := addMerchant(t, f.stack)
	f.otherTenant = f.objects(t, otherStore, otherCaller)
	live, err := f.stack.Service.Access.IssueStoreAppToken(context.Background(), f.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	liveCaller, err := f.stack.Service.Access.Authenticate(context.Background(), "Bearer "+live.Secret+"."+live.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	f.otherMode = f.objects(t, f.demo.StoreID, liveCaller)
	return f
}

// objects makes, as c on storeID, one of everything a console path can
// name, and returns their ids by path parameter.
func (f *consoleFixture) objects(t *testing.T, storeID uuid.UUID, c *payment.Caller) map[string]string {
	t.Helper()
	ctx := context.Background()
	svc := f.stack.Service
	var ch *payment.Charge
	if c.Token().Mode == payment.ModeLive {
		ch = writeLiveCharge(t, f.stack, storeID, c, 1000)
	} else {
		ch = servicetest.Pay(t, svc, c, "4000020000000000", 1000, "JPY", nil)
	}
	tok, err := svc.Access.CreateAppToken(ctx, c, storeID, payment.NewAppToken{Mode: c.Token().Mode})
	if err != nil {
		t.Fatal(err)
	}
	hookURL := "https://hooks.example/" + uuid.NewString()
	active := true
	hook, err := svc.Notify.CreateWebhook(ctx, c, storeID, payment.WebhookInput{Triggers: []string{"charge_finished"}, URL: &hookURL, Active: &active})
	if err != nil {
		t.Fatal(err)
	}
	events, err := svc.Notify.Events(ctx, c, uuid.Nil, 1)
	if err != nil || len(events) == 0 {
		t.Fatalf("events: %v, %v", events, err)
	}
	return map[string]string{
		"store": storeID.String(), "charge": ch.ID.String(), "apptoken": tok.ID.String(),
		"webhook": hook.ID.String(), "event": events[0].ID.String(),
	}
}

// writeLiveCharge writes a successful live charge of amount yen straight
// into storage: the sandbox takes no live payments, and the console must
// still keep them apart from test ones.
func writeLiveCharge(t *testing.T, stack *servicetest.Stack, storeID uuid.UUID, c *payment.Caller, amount int64) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	tok, err := stack.Service.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime,
		Email: "live@kessai.test", Card: &payment.CardInput{Cardholder: "LIVE SHOPPER", Number: "4012888888881881", ExpMonth: 12, ExpYear: 2040, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ch := &payment.Charge{ID: payment.NewID(), StoreID: storeID, MerchantID: c.MerchantID(), TokenID: tok.ID, TokenType: payment.OneTime,
		Mode: payment.ModeLive, RequestedAmount: amount, ChargedAmount: &amount, Currency: "JPY", Capture: true,
		Status: payment.ChargeSuccessful, PaymentType: payment.PaymentTypeCard, CreatedOn: now, UpdatedOn: now}
	if err := stack.DB.Update(ctx, func(tx payment.Tx) error { return tx.CreateCharge(ctx, ch) }); err != nil {
		t.Fatal(err)
	}
	return ch
}

// addMerchant makes another merchant with a store and a server token.
func addMerchant(t *testing.T, stack *servicetest.Stack) (uuid.UUID, *payment.Caller) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	m := &payment.Merchant{ID: payment.NewID(), Name: "Other merchant", Email: "other@kessai.test", CreatedOn: now}
	st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Other store", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	err := stack.DB.Update(ctx, func(tx payment.Tx) error {
		if err := tx.CreateMerchant(ctx, m); err != nil {
			return err
		}
		return tx.CreateStore(ctx, st)
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := stack.Service.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{Mode: payment.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	c, err := stack.Service.Access.Authenticate(ctx, "Bearer "+tok.Secret+"."+tok.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	return st.ID, c
}

// browser is a client with its own cookie jar that does not follow
// redirects, so that tests see them.
type browser struct {
	f      *consoleFixture
	client *http.Client
}

func (f *consoleFixture) browser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{f: f, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(t *testing.T, method, path string, form url.Values, headers ...string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.f.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(t *testing.T, path string) page {
	t.Helper()
	return b.do(t, http.MethodGet, path, nil)
}

// csrf is the CSRF token of the forms of the page at path.
func (b *browser) csrf(t *testing.T, path string) string {
	t.Helper()
	p := b.get(t, path)
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("GET %s (%d): no csrf field", path, p.status)
	}
	return m[1]
}

// signIn signs the browser in as the demo merchant's user.
func (b *browser) signIn(t *testing.T) {
	t.Helper()
	token := b.csrf(t, "/console/signin")
	p := b.do(t, http.MethodPost, "/console/signin", url.Values{"csrf": {token}, "email": {payment.DemoEmail},
		"password": {b.f.demo.ConsolePassword}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/" {
		t.Fatalf("sign-in: %d to %q", p.status, p.header.Get("Location"))
	}
}

func (b *browser) cookie(t *testing.T) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(b.f.srv.URL + consoleRoot)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == consoleCookie {
			return c
		}
	}
	t.Fatal("no console cookie")
	return nil
}

// TestConsoleSessionFixation: the cookie a browser had before signing in
// (which an attacker could have planted) is worth nothing afterwards; the
// session is new, and so is the cookie.
func TestConsoleSessionFixation(t *testing.T) {
	f := newConsoleFixture(t)
	victim := f.browser(t)
	victim.csrf(t, "/console/signin")
	planted := victim.cookie(t)
	attacker := f.browser(t)
	u, _ := url.Parse(f.srv.URL + consoleRoot)
	attacker.client.Jar.SetCookies(u, []*http.Cookie{{Name: planted.Name, Value: planted.Value, Path: consoleRoot}})

	victim.signIn(t)
	if after := victim.cookie(t); after.Value == planted.Value {
		t.Fatal("the cookie did not change at sign-in")
	}
	if p := victim.get(t, "/console/"); p.status != http.StatusOK {
		t.Fatalf("the victim's dashboard: %d", p.status)
	}
	p := attacker.get(t, "/console/")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/console/signin") {
		t.Fatalf("the planted cookie's dashboard: %d %s, want a redirect to sign in", p.status, p.header.Get("Location"))
	}
	// Signing out ends the session even for a copy of the cookie.
	signedIn := victim.cookie(t)
	copycat := f.browser(t)
	copycat.client.Jar.SetCookies(u, []*http.Cookie{{Name: signedIn.Name, Value: signedIn.Value, Path: consoleRoot}})
	if p := copycat.get(t, "/console/"); p.status != http.StatusOK {
		t.Fatalf("a copy of the signed-in cookie: %d", p.status)
	}
	token := victim.csrf(t, "/console/")
	if p := victim.do(t, http.MethodPost, "/console/signout", url.Values{"csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", p.status)
	}
	if p := copycat.get(t, "/console/"); p.status != http.StatusSeeOther {
		t.Fatalf("a copy of the signed-out cookie: %d, want a redirect to sign in", p.status)
	}
}

// fill writes ids into a route's path; ok is false for a route whose path
// holds something ids cannot fill.
func fill(pattern string, ids map[string]string) (method, path string, params []string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.TrimSuffix(path, "{$}")
	for _, m := range regexp.MustCompile(`\{([a-z]+)\}`).FindAllStringSubmatch(path, -1) {
		params = append(params, m[1])
		path = strings.Replace(path, m[0], ids[m[1]], 1)
	}
	return method, path, params
}

// actionForm is what a console POST carries besides its token: enough
// for any form to reach its service call, confirmed.
func actionForm(csrf string) url.Values {
	return url.Values{"csrf": {csrf}, "confirm": {"yes"}, "amount": {"100"}, "currency": {"JPY"}, "reason": {"customer_request"},
		"mode": {"live"}, "name": {"Changed"}, "url": {"https://hooks.example/changed"}, "triggers": {"charge_finished"},
		"active": {"false"}, "domains": {"shop.example"}, "card": {"4000020000000000"}, "email": {payment.DemoEmail},
		"password": {"x"}, "current_password": {"x"}, "new_password": {"long-enough-password"}, "confirm_password": {"long-enough-password"}}
}

// TestConsoleCSRFOnEveryForm: every POST route refuses a form without
// its token, with another session's token and from another site, and
// changes nothing.
func TestConsoleCSRFOnEveryForm(t *testing.T) {
	f := newConsoleFixture(t)
	b := f.browser(t)
	b.signIn(t)
	other := f.browser(t)
	other.signIn(t)
	otherToken := other.csrf(t, "/console/")
	token := b.csrf(t, "/console/")
	anonymous := f.browser(t)
	anonToken := anonymous.csrf(t, "/console/signin")
	before := f.state(t)
	posts := 0
	for _, pattern := range f.console.routes {
		method, path, _ := fill(pattern, f.own)
		if method != http.MethodPost {
			continue
		}
		posts++
		client := b
		if strings.HasPrefix(path, "/console/signin") || strings.HasPrefix(path, "/console/reset") {
			client = anonymous
		}
		for name, form := range map[string]url.Values{
			"no token":              actionForm(""),
			"another session's":     actionForm(otherToken),
			"an anonymous form's":   actionForm(anonToken),
			"a signed-in form's":    actionForm(token),
			"a token with one more": actionForm(token + "A"),
		} {
			if client == anonymous && name == "an anonymous form's" || client == b && name == "a signed-in form's" {
				continue
			}
			form.Del("csrf")
			if name != "no token" {
				form.Set("csrf", map[string]string{"another session's": otherToken, "an anonymous form's": anonToken,
					"a signed-in form's": token, "a token with one more": token + "A"}[name])
			}
			if p := client.do(t, method, path, form); p.status != http.StatusForbidden {
				t.Errorf("%s with %s token: %d, want 403", pattern, name, p.status)
			}
		}
		right := token
		if client == anonymous {
			right = anonToken
		}
		if p := client.do(t, method, path, actionForm(right), "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); p.status != http.StatusForbidden {
			t.Errorf("%s from another site with the right token: %d, want 403", pattern, p.status)
		}
	}
	if posts < 4 {
		t.Fatalf("only %d POST routes", posts)
	}
	if after := f.state(t); after != before {
		t.Errorf("refused forms changed something:\nbefore %s\nafter  %s", before, after)
	}
	if p := b.get(t, "/console/"); p.status != http.StatusOK || !strings.Contains(p.body, "cs-badge-test") {
		t.Errorf("the session did not survive the refused forms in test mode: %d", p.status)
	}
}

// state sums up what a console form could change, to compare.
func (f *consoleFixture) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, ids := range []map[string]string{f.own, f.otherTenant, f.otherMode} {
		storeID := uuid.MustParse(ids["store"])
		err := f.stack.DB.View(ctx, func(tx payment.Tx) error {
			st, err := tx.Store(ctx, storeID)
			if err != nil {
				return err
			}
			ch, err := tx.Charge(ctx, uuid.MustParse(ids["charge"]))
			if err != nil {
				return err
			}
			refunded, err := tx.RefundedAmount(ctx, ch.ID)
			if err != nil {
				return err
			}
			cancel, err := tx.PendingCancelFor(ctx, ch.ID)
			if err != nil {
				return err
			}
			tok, err := tx.AppToken(ctx, uuid.MustParse(ids["apptoken"]))
			if err != nil {
				return err
			}
			hook, err := tx.Webhook(ctx, uuid.MustParse(ids["webhook"]))
			if err != nil {
				return err
			}
			toks, err := tx.ListAppTokens(ctx, payment.AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, payment.ListParams{Limit: 100})
			if err != nil {
				return err
			}
			charges, err := tx.ListCharges(ctx, payment.ChargeFilter{MerchantID: st.MerchantID}, payment.ListParams{Limit: 100})
			if err != nil {
				return err
			}
			fmt.Fprintln(&b, st.Name, st.PCICompliant, st.Settings, ch.Status, ch.CaptureState, refunded, cancel,
				tok.Active(), hook.URL, hook.Active, len(toks.Items), len(charges.Items))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestConsoleOtherTenantsAndModes: on every console route that names
// objects, another merchant's ids and, for objects that have a mode, the
// other mode's ids answer 404, for GETs and for confirmed forms alike,
// and change nothing.
func TestConsoleOtherTenantsAndModes(t *testing.T) {
	f := newConsoleFixture(t)
	b := f.browser(t)
	b.signIn(t)
	token := b.csrf(t, "/console/")
	before := f.state(t)
	walked := 0
	for _, pattern := range f.console.routes {
		_, ownPath, params := fill(pattern, f.own)
		if len(params) == 0 || params[0] == "reset" {
			continue
		}
		walked++
		for _, scenario := range []struct {
			name string
			ids  map[string]string
		}{{"another merchant's", f.otherTenant}, {"the other mode's", f.otherMode}} {
			method, path, _ := fill(pattern, scenario.ids)
			if path == ownPath {
				continue // only a store, which has no mode
			}
			var form url.Values
			if method == http.MethodPost {
				form = actionForm(token)
			}
			if p := b.do(t, method, path, form); p.status != http.StatusNotFound {
				t.Errorf("%s with %s ids (%s): %d, want 404", pattern, scenario.name, path, p.status)
			}
		}
		// A well-formed id that exists nowhere, and one that is not an id.
		for _, bogus := range []string{uuid.NewString(), "not-an-id", "..%2f..%2fadmin"} {
			ids := map[string]string{}
			for k, v := range f.own {
				ids[k] = v
			}
			ids[params[len(params)-1]] = bogus
			method, path, _ := fill(pattern, ids)
			var form url.Values
			if method == http.MethodPost {
				form = actionForm(token)
			}
			if p := b.do(t, method, path, form); p.status != http.StatusNotFound {
				t.Errorf("%s with %q: %d, want 404", pattern, bogus, p.status)
			}
		}
	}
	if after := f.state(t); after != before {
		t.Errorf("other tenants' and modes' ids changed something:\nbefore %s\nafter  %s", before, after)
	}
	t.Logf("%d routes with ids walked", walked)
}

// TestConsolePagesHeaders: every page the console serves forbids framing,
// caching, referrers and any script or style that is not a file of the
// gateway's own; none has inline script, event handler or style
// attribute for the policy to block.
func TestConsolePagesHeaders(t *testing.T) {
	f := newConsoleFixture(t)
	b := f.browser(t)
	anonymous := f.browser(t)
	b.signIn(t)
	inline := regexp.MustCompile(`(?i)\son[a-z]+\s*=|\sstyle\s*=|javascript:|<style`)
	scripts := regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script>`)
	pages := 0
	for _, pattern := range f.console.routes {
		method, path, params := fill(pattern, f.own)
		if method != http.MethodGet || len(params) > 0 && params[0] == "reset" {
			continue
		}
		for _, client := range []*browser{b, anonymous} {
			p := client.get(t, path)
			pages++
			h := p.header
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("GET %s: CSP %q lacks %q", path, csp, want)
				}
			}
			if h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Frame-Options") != "DENY" {
				t.Errorf("GET %s: headers %v", path, h)
			}
			if m := inline.FindString(p.body); m != "" {
				t.Errorf("GET %s: inline code %q", path, m)
			}
			for _, m := range scripts.FindAllStringSubmatch(p.body, -1) {
				if !strings.Contains(m[1], "src=") || strings.TrimSpace(m[2]) != "" {
					t.Errorf("GET %s: inline script %q", path, m[0])
				}
			}
		}
	}
	if pages < 6 {
		t.Fatalf("only %d pages", pages)
	}
}

// TestConsoleSignInRedirect: the sign-in page sends a browser back to
// the console page it came from, and never anywhere else.
func TestConsoleSignInRedirect(t *testing.T) {
	f := newConsoleFixture(t)
	for _, tc := range []struct{ next, want string }{
		{"/console/account", "/console/account"},
		{"/console/charges?status=successful", "/console/charges?status=successful"},
		{"https://evil.example/console/", "/console/"},
		{"//evil.example/console/", "/console/"},
		{"/\\evil.example", "/console/"},
		{"/console/../../evil", "/console/"},
		{"/elsewhere", "/console/"},
		{"", "/console/"},
	} {
		b := f.browser(t)
		p := b.get(t, "/console/signin?next="+url.QueryEscape(tc.next))
		token := csrfField.FindStringSubmatch(p.body)[1]
		p = b.do(t, http.MethodPost, "/console/signin", url.Values{"csrf": {token}, "email": {payment.DemoEmail},
			"password": {f.demo.ConsolePassword}, "next": {tc.next}})
		if got := p.header.Get("Location"); p.status != http.StatusSeeOther || got != tc.want {
			t.Errorf("next=%q: %d to %q, want %q", tc.next, p.status, got, tc.want)
		}
	}
	// A page that needs a session sends the browser to sign in, with the
	// way back.
	p := f.browser(t).get(t, "/console/account")
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/signin?next=%2Fconsole%2Faccount" {
		t.Errorf("signed out: %d to %q", p.status, p.header.Get("Location"))
	}
}

// TestConsoleMailbox: the local mailbox is shown to this machine only, not
// through a proxy, and not at all when mail goes out by SMTP.
func TestConsoleMailbox(t *testing.T) {
	f := newConsoleFixture(t)
	f.mailbox.messages = []mail.Message{{To: payment.DemoEmail, Subject: "Reset", Text: "https://pay.example/console/reset/SECRET", Sent: time.Now()}}
	b := f.browser(t)
	if p := b.get(t, "/console/mailbox"); p.status != http.StatusOK || !strings.Contains(p.body, "/console/reset/SECRET") {
		t.Fatalf("from this machine: %d", p.status)
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip", "Via", "True-Client-Ip", "Cf-Connecting-Ip"} {
		if p := b.do(t, http.MethodGet, "/console/mailbox", nil, h, "203.0.113.7"); p.status != http.StatusNotFound || strings.Contains(p.body, "SECRET") {
			t.Errorf("through a proxy (%s): %d", h, p.status)
		}
	}
	// A peer on another machine, though it names this one as Host.
	r := httptest.NewRequest(http.MethodGet, "/console/mailbox", nil)
	r.Host = "127.0.0.1:8080"
	r.RemoteAddr = "203.0.113.7:5555"
	rec := httptest.NewRecorder()
	f.srv.Config.Handler.ServeHTTP(rec, r)
	if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "SECRET") {
		t.Errorf("from another machine: %d", rec.Code)
	}
	if loopback(r) {
		t.Error("203.0.113.7 is loopback")
	}
	for _, a := range []string{"127.0.0.1:1", "[::1]:1", "[::ffff:127.0.0.1]:1"} {
		r.RemoteAddr = a
		if !loopback(r) {
			t.Errorf("%s is not loopback", a)
		}
	}
	for host, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "LocalHost.": true, "shop.localhost:1": true, "127.0.0.1": true,
		"127.8.9.10:80": true, "[::1]:8080": true, "[::1]": true, "[::ffff:127.0.0.1]:1": true,
		"": false, "pay.example.com": false, "localhost.example": false, "notlocalhost": false, "10.0.0.1:8080": false,
		"0.0.0.0:8080": false, "[::]:8080": false, "[fe80::1%25eth0]:1": false, "169.254.169.254": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
	f.console.mailbox = nil
	if p := b.get(t, "/console/mailbox"); p.status != http.StatusNotFound {
		t.Errorf("with SMTP: %d", p.status)
	}
}

// TestPathsCoverRoutes: every route the console serves is under Paths,
// which are all the gateway routes here: a path under none of them would
// never arrive.
func TestPathsCoverRoutes(t *testing.T) {
	f := newBareConsole(t, servicetest.Options{})
	r, ok := f.console.handler.(*mux.Router)
	if !ok {
		t.Fatalf("the handler is a %T, not a router", f.console.handler)
	}
	n := 0
	err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		n++
		for _, p := range Paths {
			if tpl == p || strings.HasSuffix(p, "/") && strings.HasPrefix(tpl, p) {
				return nil
			}
		}
		t.Errorf("route %s is under none of %v", tpl, Paths)
		return nil
	})
	if err != nil || n < len(f.console.routes) {
		t.Fatalf("%d routes walked, %d handled: %v", n, len(f.console.routes), err)
	}
}

// TestConsoleCookie: the console's cookie is HttpOnly, SameSite=Lax,
// scoped to /console/, and Secure when the gateway's public URL is https.
func TestConsoleCookie(t *testing.T) {
	stack := servicetest.New(t, servicetest.Options{})
	for _, tc := range []struct {
		publicURL string
		secure    bool
	}{{"http://127.0.0.1:8080", false}, {"https://pay.example", true}} {
		h, err := New(Config{Service: stack.Service.Pages(), PublicURL: tc.publicURL, SessionKey: []byte(strings.Repeat("k", 32)),
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console/signin", nil))
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v", tc.publicURL, cookies)
		}
		c := cookies[0]
		if c.Name != consoleCookie || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != consoleRoot || c.Secure != tc.secure {
			t.Errorf("%s: cookie %+v, want HttpOnly, Lax, path %s, Secure %v", tc.publicURL, c, consoleRoot, tc.secure)
		}
	}
}
