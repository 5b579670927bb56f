package console

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/webhookhttp"
)

// keysFixture is the console (as consoleFixture serves it) over a service
// that records events and sends webhooks over HTTP to one receiver, and
// the API over the same service, to check that what the console does
// is what the API sees.
type keysFixture struct {
	*consoleFixture
	svc *services.Set
	api http.Handler
	b   *browser
	// csrf is the signed-in browser's form token.
	csrf string

	mu       sync.Mutex
	received []*http.Request
	bodies   [][]byte
	receiver *httptest.Server
}

// newKeysFixture builds the fixture; configure, if given, changes the
// service's configuration (its limits) before the service is made.
func newKeysFixture(t *testing.T, configure ...func(*payment.Config)) *keysFixture {
	t.Helper()
	k := &keysFixture{}
	k.receiver = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		k.mu.Lock()
		k.received = append(k.received, r)
		k.bodies = append(k.bodies, body)
		k.mu.Unlock()
	}))
	t.Cleanup(k.receiver.Close)
	k.consoleFixture = newBareConsole(t, servicetest.Options{
		WebhookSender: webhookhttp.New(webhookhttp.Config{TestModeLocal: true, Timeout: 5 * time.Second,
			// The receiver is an IP literal; no name is looked up for real.
			LookupHost: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }}),
		Configure: func(cfg *payment.Config) {
			for _, c := range configure {
				c(cfg)
			}
		}})
	f := k.consoleFixture
	origin := f.srv.URL
	k.svc = f.stack.Service
	k.api = api.New(api.Config{Service: k.svc, PublicOrigin: origin, Logger: slog.New(slog.DiscardHandler)})
	k.b = f.browser(t)
	k.b.signIn(t)
	k.csrf = k.b.csrf(t, "/console/stores")
	return k
}

// post sends a signed-in form with its token.
func (k *keysFixture) post(t *testing.T, path string, form url.Values) page {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", k.csrf)
	return k.b.do(t, http.MethodPost, path, form)
}

// apiGet calls the API with an Authorization header.
func (k *keysFixture) apiGet(t *testing.T, path, auth string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", auth)
	rec := httptest.NewRecorder()
	k.api.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// store is the demo store as stored.
func (k *keysFixture) store(t *testing.T) *payment.Store {
	t.Helper()
	st, err := k.svc.Merchants.Store(context.Background(), k.demo.Caller, k.demo.StoreID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var keysSecretBlock = regexp.MustCompile(`<pre class="cs-secret cs-mono">([^<]*)</pre>`)

// keysSecrets are the cs-secret blocks of a page, unescaped.
func keysSecrets(body string) []string {
	var out []string
	for _, m := range keysSecretBlock.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func keysRedirect(t *testing.T, what string, p page, prefix string) string {
	t.Helper()
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) {
		t.Fatalf("%s: %d to %q, want a redirect to %s…\n%s", what, p.status, loc, prefix, p.body)
	}
	return loc
}

// TestConsoleKeysAppTokens: a token made in the console shows its secret
// once, works against the API, and stops working when revoked, after a
// confirmation step.
func TestConsoleKeysAppTokens(t *testing.T) {
	k := newKeysFixture(t)
	path := storePath(k.demo.StoreID, "/app_tokens")
	if p := k.b.get(t, "/console/stores"); p.status != http.StatusOK || !strings.Contains(p.body, path) {
		t.Fatalf("stores page: %d, no link to %s", p.status, path)
	}
	p := k.post(t, path, url.Values{"domains": {"shop.example\r\n\r\n *.cdn.shop.example \r\n"}})
	if p.status != http.StatusOK {
		t.Fatalf("create: %d\n%s", p.status, p.body)
	}
	s := keysSecrets(p.body)
	if len(s) != 3 || !strings.Contains(p.body, "shown only this once") {
		t.Fatalf("the created page shows %d secret blocks (want JWT, secret, header) and no warning", len(s))
	}
	jwt, secret := s[0], s[1]
	if s[2] != "Authorization: Bearer "+secret+"."+jwt {
		t.Errorf("header line %q", s[2])
	}
	if h := p.header.Get("Set-Cookie"); strings.Contains(h, secret) {
		t.Error("the secret is in a cookie")
	}
	auth := "Bearer " + secret + "." + jwt
	if code, body := k.apiGet(t, "/stores", auth); code != http.StatusOK {
		t.Fatalf("the new token against GET /stores: %d %v", code, body)
	}
	caller, err := k.svc.Access.Authenticate(context.Background(), auth, "")
	if err != nil {
		t.Fatal(err)
	}
	tok := caller.Token()
	if tok.Mode != payment.ModeTest || tok.StoreID != k.demo.StoreID || strings.Join(tok.Domains, ",") != "shop.example,*.cdn.shop.example" {
		t.Errorf("token %+v", tok)
	}
	list := k.b.get(t, path)
	if list.status != http.StatusOK || !strings.Contains(list.body, tok.ID.String()) || strings.Contains(list.body, secret) {
		t.Fatalf("the list: %d, has the token %v, has the secret %v", list.status, strings.Contains(list.body, tok.ID.String()), strings.Contains(list.body, secret))
	}

	revoke := path + "/" + tok.ID.String() + "/revoke"
	p = k.post(t, revoke, nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, `name="confirm" value="yes"`) || !strings.Contains(p.body, `action="`+revoke+`"`) {
		t.Fatalf("revoke without confirmation: %d, want the confirmation page\n%s", p.status, p.body)
	}
	if code, _ := k.apiGet(t, "/stores", auth); code != http.StatusOK {
		t.Fatalf("the token stopped working before the confirmation: %d", code)
	}
	loc := keysRedirect(t, "revoke", k.post(t, revoke, url.Values{"confirm": {"yes"}}), path)
	if p := k.b.get(t, loc); !strings.Contains(p.body, "The app token is revoked.") {
		t.Errorf("no notice after revoking:\n%s", p.body)
	}
	if code, _ := k.apiGet(t, "/stores", auth); code != http.StatusUnauthorized {
		t.Errorf("the revoked token against GET /stores: %d, want 401", code)
	}
	// Revoked twice: there is nothing to revoke.
	if p := k.post(t, revoke, url.Values{"confirm": {"yes"}}); p.status != http.StatusNotFound {
		t.Errorf("revoking again: %d, want 404", p.status)
	}
	// A bad domain is shown on the form, with what was typed.
	p = k.post(t, path, url.Values{"domains": {"not a domain"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Domains: not a valid domain") || !strings.Contains(p.body, "not a domain</textarea>") {
		t.Errorf("a bad domain: %d\n%s", p.status, p.body)
	}
}

// TestConsoleKeysAppTokenLimit: the 21st token of a store is refused with
// a message that names the limit.
func TestConsoleKeysAppTokenLimit(t *testing.T) {
	k := newKeysFixture(t)
	ctx := context.Background()
	path := storePath(k.demo.StoreID, "/app_tokens")
	// The demo token is the first; the console makes the rest.
	for i := 1; i < 20; i++ {
		if p := k.post(t, path, nil); p.status != http.StatusOK {
			t.Fatalf("token %d: %d", i+1, p.status)
		}
	}
	p := k.post(t, path, nil)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "the most active app tokens it may have (20, test and live together)") {
		t.Fatalf("the 21st token: %d\n%s", p.status, p.body)
	}
	if len(keysSecrets(p.body)) != 0 {
		t.Error("the refusal shows a secret")
	}
	page, err := k.svc.Access.AppTokens(ctx, k.demo.Caller, k.demo.StoreID, payment.ListParams{Limit: 100})
	if err != nil || len(page.Items) != 20 {
		t.Fatalf("%d tokens, %v; want 20", len(page.Items), err)
	}
	// A Japanese page says it too.
	if p := k.b.get(t, path+"?lang=ja"); p.status != http.StatusOK {
		t.Fatalf("GET ?lang=ja: %d", p.status)
	}
	p = k.post(t, path, nil)
	if !strings.Contains(p.body, "テストと本番を合わせて 20 個") {
		t.Errorf("the Japanese limit message is missing:\n%s", p.body)
	}
}

// TestConsoleKeysWebhooks: a webhook made in the console shows its signing
// secret once; its test event arrives signed with it; a charge's event is
// in its log and can be sent again; it can be deactivated and, after a
// confirmation, deleted.
func TestConsoleKeysWebhooks(t *testing.T) {
	k := newKeysFixture(t)
	ctx := context.Background()
	path := storePath(k.demo.StoreID, "/webhooks")
	if p := k.b.get(t, path); p.status != http.StatusOK || !strings.Contains(p.body, `value="charge_finished"`) {
		t.Fatalf("webhooks page: %d", p.status)
	}
	hookURL := k.receiver.URL + "/kessai"
	p := k.post(t, path, url.Values{"url": {hookURL}, "triggers": {"charge_finished", "charge_updated"}, "active": {"yes"}})
	if p.status != http.StatusOK {
		t.Fatalf("create: %d\n%s", p.status, p.body)
	}
	s := keysSecrets(p.body)
	if len(s) != 1 || !strings.HasPrefix(s[0], "whsec_") {
		t.Fatalf("the created page's secrets: %q", s)
	}
	secret := s[0]
	m := regexp.MustCompile(regexp.QuoteMeta(path) + `/([0-9a-f-]{36})"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatal("no link to the new webhook")
	}
	id := uuid.MustParse(m[1])
	hook, err := k.svc.Notify.Webhook(ctx, k.demo.Caller, k.demo.StoreID, id)
	if err != nil {
		t.Fatal(err)
	}
	if hook.URL != hookURL || !hook.Active || strings.Join(hook.Triggers, ",") != "charge_finished,charge_updated" || hook.Mode != payment.ModeTest {
		t.Errorf("webhook %+v", hook)
	}
	hookPath := path + "/" + id.String()
	if p := k.b.get(t, hookPath); p.status != http.StatusOK || strings.Contains(p.body, secret) {
		t.Fatalf("the webhook's page: %d, shows the secret again: %v", p.status, strings.Contains(p.body, secret))
	}
	// The same URL again is refused on the form.
	p = k.post(t, path, url.Values{"url": {hookURL}, "triggers": {"charge_finished"}, "active": {"yes"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "already has a webhook with this URL") {
		t.Errorf("the same URL again: %d", p.status)
	}
	// An address no webhook may reach is refused on the form, by name.
	p = k.post(t, path, url.Values{"url": {"http://169.254.169.254/latest/meta-data/"}, "triggers": {"charge_finished"}, "active": {"yes"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "URL: an address webhooks may not reach") {
		t.Errorf("the metadata address: %d\n%s", p.status, p.body)
	}
	// No trigger.
	p = k.post(t, path, url.Values{"url": {hookURL + "/2"}, "active": {"yes"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Events: choose at least one") {
		t.Errorf("no trigger: %d\n%s", p.status, p.body)
	}

	// The test event.
	p = k.post(t, hookPath+"/test", nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, "the receiver answered 200") {
		t.Fatalf("test: %d\n%s", p.status, p.body)
	}
	k.mu.Lock()
	if len(k.received) != 1 {
		k.mu.Unlock()
		t.Fatalf("the receiver got %d requests, want 1", len(k.received))
	}
	r, body := k.received[0], k.bodies[0]
	k.mu.Unlock()
	if err := signaturetest.Verify(secret, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"),
		body, time.Now(), time.Minute); err != nil {
		t.Errorf("the test event's signature: %v (headers %v)", err, r.Header)
	}
	if !strings.Contains(string(body), `"event":"webhook_test"`) {
		t.Errorf("test body %s", body)
	}

	// A test charge's events reach the log; one is sent again.
	loc := keysRedirect(t, "test charge", k.post(t, storePath(k.demo.StoreID, "/test_charge"),
		url.Values{"amount": {"1200"}, "currency": {"JPY"}, "card": {"success"}}), storePath(k.demo.StoreID, "/charges/"))
	chargeID := uuid.MustParse(strings.TrimPrefix(loc, storePath(k.demo.StoreID, "/charges/")))
	servicetest.AwaitCharge(t, k.svc, k.demo.Caller, k.demo.StoreID, chargeID, "the test charge", servicetest.Settled)
	var log payment.Page[payment.DeliveryLogEntry]
	for range 100 {
		if _, err := k.svc.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
		if log, err = k.svc.Notify.WebhookDeliveries(ctx, k.demo.Caller, k.demo.StoreID, id, payment.ListParams{Limit: 10}); err != nil {
			t.Fatal(err)
		}
		if len(log.Items) > 0 && log.Items[0].Delivery.Status == payment.DeliverySuccessful {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(log.Items) == 0 {
		t.Fatal("no delivery in the log")
	}
	ev := log.Items[0].Event
	p = k.b.get(t, hookPath)
	redeliver := hookPath + "/events/" + ev.ID.String() + "/redeliver"
	if !strings.Contains(p.body, ev.ID.String()) || !strings.Contains(p.body, `action="`+redeliver+`"`) {
		t.Fatalf("the log does not show the event %s with a redeliver button", ev.ID)
	}
	keysRedirect(t, "redeliver", k.post(t, redeliver, nil), hookPath)
	d, err := k.svc.Notify.WebhookDeliveries(ctx, k.demo.Caller, k.demo.StoreID, id, payment.ListParams{Limit: 10})
	if err != nil || d.Items[0].Delivery.Status != payment.DeliveryPending {
		t.Errorf("after redelivery: %+v, %v; want pending", d.Items, err)
	}

	// Deactivate, activate, deactivate.
	for _, active := range []string{"no", "yes", "no"} {
		keysRedirect(t, "active="+active, k.post(t, hookPath+"/active", url.Values{"active": {active}}), hookPath)
		hook, err := k.svc.Notify.Webhook(ctx, k.demo.Caller, k.demo.StoreID, id)
		if err != nil || hook.Active != (active == "yes") {
			t.Fatalf("after active=%s: %+v, %v", active, hook, err)
		}
	}

	// Delete: first the question, then the deed.
	p = k.post(t, hookPath+"/delete", nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, `name="confirm" value="yes"`) {
		t.Fatalf("delete without confirmation: %d", p.status)
	}
	if _, err := k.svc.Notify.Webhook(ctx, k.demo.Caller, k.demo.StoreID, id); err != nil {
		t.Fatalf("deleted before the confirmation: %v", err)
	}
	keysRedirect(t, "delete", k.post(t, hookPath+"/delete", url.Values{"confirm": {"yes"}}), path)
	if _, err := k.svc.Notify.Webhook(ctx, k.demo.Caller, k.demo.StoreID, id); !payment.IsNotFound(err) {
		t.Errorf("after delete: %v, want NOT_FOUND", err)
	}
	if p := k.b.get(t, hookPath); p.status != http.StatusNotFound {
		t.Errorf("the deleted webhook's page: %d", p.status)
	}
}

// TestConsoleKeysWebhookLimit: activating a webhook past the limit of
// active webhooks is refused with a message that names it.
func TestConsoleKeysWebhookLimit(t *testing.T) {
	k := newKeysFixture(t)
	ctx := context.Background()
	var inactive uuid.UUID
	for i := range 21 {
		u := "https://hooks.example/" + uuid.NewString()
		active := i < 20
		w, err := k.svc.Notify.CreateWebhook(ctx, k.demo.Caller, k.demo.StoreID, payment.WebhookInput{Triggers: []string{"charge_finished"}, URL: &u, Active: &active})
		if err != nil {
			t.Fatal(err)
		}
		inactive = w.ID
	}
	hookPath := storePath(k.demo.StoreID, "/webhooks/"+inactive.String())
	p := k.post(t, hookPath+"/active", url.Values{"active": {"yes"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "the most active webhooks it may have (20)") {
		t.Fatalf("the 21st active webhook: %d\n%s", p.status, p.body)
	}
}

// keysSettingsForm is a settings form with every field changed from the
// demo store's defaults.
func keysSettingsForm() url.Values {
	return url.Values{
		"name": {"Renamed Store"}, "pci_compliant": {"yes"}, "card_enabled": {"yes"}, "three_ds_required": {"yes"},
		"forbidden_card_brands": {"jcb", "american_express"}, "recurring_type": {"bounded"},
		"theme.main_background": {"#102030"}, "theme.secondary_background": {"#203040"}, "theme.main_color": {"#ff0066"},
		"theme.main_text": {"#111111"}, "theme.primary_text": {"#222222"}, "theme.secondary_text": {"#333333"},
		"theme.base_text": {"#444444"}, "theme.body_background": {"#fafafa"},
	}
}

// TestConsoleKeysSettings: the settings saved in the console are what the
// API's GET /checkout_info and GET /stores/{id} show; an invalid colour is
// named on the form and saves nothing.
func TestConsoleKeysSettings(t *testing.T) {
	k := newKeysFixture(t)
	path := storePath(k.demo.StoreID, "/settings")
	if p := k.b.get(t, path); p.status != http.StatusOK || !strings.Contains(p.body, `name="theme.main_color"`) {
		t.Fatalf("settings page: %d", p.status)
	}
	before := k.store(t)

	bad := keysSettingsForm()
	bad.Set("theme.main_color", "red")
	p := k.post(t, path, bad)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Main colour: not valid") || !strings.Contains(p.body, `value="Renamed Store"`) {
		t.Fatalf("an invalid colour: %d\n%s", p.status, p.body)
	}
	if after := k.store(t); after.Name != before.Name || after.Settings.Theme != before.Settings.Theme || after.Settings.ThreeDSRequired {
		t.Fatalf("an invalid form saved something: %+v", after)
	}
	bad = keysSettingsForm()
	bad.Set("forbidden_card_brands", "visa-ish")
	if p := k.post(t, path, bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Card brands to refuse: not a card brand Kessai knows") {
		t.Errorf("an unknown brand: %d", p.status)
	}

	keysRedirect(t, "save", k.post(t, path, keysSettingsForm()), path)
	if p := k.b.get(t, path); !strings.Contains(p.body, "The settings are saved.") || !strings.Contains(p.body, `value="#ff0066"`) {
		t.Errorf("the page after saving:\n%s", p.body)
	}

	code, info := k.apiGet(t, "/checkout_info", k.demo.Auth)
	if code != http.StatusOK {
		t.Fatalf("GET /checkout_info: %d %v", code, info)
	}
	cardConf := info["card_configuration"].(map[string]any)
	colors := info["theme"].(map[string]any)["colors"].(map[string]any)
	if info["name"] != "Renamed Store" || info["recurring_token_privilege"] != "bounded" || cardConf["three_ds_required"] != true ||
		cardConf["enabled"] != true || colors["main_color"] != "#ff0066" || colors["body_background"] != "#fafafa" ||
		colors["main_background"] != "#102030" {
		t.Errorf("checkout_info %v", info)
	}
	if fb, _ := json.Marshal(cardConf["forbidden_card_brands"]); string(fb) != `["american_express","jcb"]` {
		t.Errorf("forbidden_card_brands %s", fb)
	}
	for _, b := range info["supported_brands"].([]any) {
		if brand := b.(map[string]any)["card_brand"]; brand == "jcb" || brand == "american_express" {
			t.Errorf("checkout_info still offers %v", brand)
		}
	}
	code, st := k.apiGet(t, "/stores/"+k.demo.StoreID.String(), k.demo.Auth)
	if code != http.StatusOK {
		t.Fatalf("GET /stores/{id}: %d", code)
	}
	conf := st["configuration"].(map[string]any)
	if st["name"] != "Renamed Store" || conf["card_configuration"].(map[string]any)["three_ds_required"] != true ||
		conf["theme"].(map[string]any)["colors"].(map[string]any)["main_color"] != "#ff0066" {
		t.Errorf("GET /stores/{id}: %v", st)
	}

	// Unticked boxes turn settings off; #rgb is taken too.
	off := keysSettingsForm()
	off.Del("card_enabled")
	off.Del("three_ds_required")
	off.Del("forbidden_card_brands")
	off.Set("theme.main_color", "#F06")
	keysRedirect(t, "save off", k.post(t, path, off), path)
	if after := k.store(t); after.Settings.CardEnabled || after.Settings.ThreeDSRequired || len(after.Settings.ForbiddenCardBrands) != 0 ||
		after.Settings.Theme.MainColor != "#F06" {
		t.Errorf("after unticking: %+v", after.Settings)
	}
	if p := k.b.get(t, path); !strings.Contains(p.body, `value="#ff0066"`) {
		t.Error("a stored #rgb colour is not spelt out for the colour input")
	}
}

// TestConsoleKeysTestCharge: a test charge made in the console is a charge
// the service lists; the card number goes nowhere; in live mode the
// service refuses the test card.
func TestConsoleKeysTestCharge(t *testing.T) {
	k := newKeysFixture(t)
	ctx := context.Background()
	path := storePath(k.demo.StoreID, "/test_charge")
	if p := k.b.get(t, storePath(k.demo.StoreID, "/settings")); !strings.Contains(p.body, `action="`+path+`"`) {
		t.Fatal("the settings page has no test charge form")
	}
	p := k.post(t, path, url.Values{"amount": {"1500"}, "currency": {"JPY"}, "card": {"decline"}})
	loc := keysRedirect(t, "test charge", p, storePath(k.demo.StoreID, "/charges/"))
	if strings.Contains(loc, "4000") || strings.Contains(p.body, "4000000000000002") {
		t.Error("the card number is echoed")
	}
	id := uuid.MustParse(strings.TrimPrefix(loc, storePath(k.demo.StoreID, "/charges/")))
	ch := servicetest.AwaitCharge(t, k.svc, k.demo.Caller, k.demo.StoreID, id, "the declined test charge", servicetest.Settled)
	if ch.Status != payment.ChargeFailed || ch.RequestedAmount != 1500 || ch.Currency != "JPY" || ch.Mode != payment.ModeTest {
		t.Errorf("charge %+v", ch)
	}
	// Amounts are typed in the currency's usual unit, as refunds are.
	loc = keysRedirect(t, "test charge in dollars", k.post(t, path, url.Values{"amount": {"12.50"}, "currency": {"USD"}, "card": {"success"}}),
		storePath(k.demo.StoreID, "/charges/"))
	usd := servicetest.AwaitCharge(t, k.svc, k.demo.Caller, k.demo.StoreID, uuid.MustParse(strings.TrimPrefix(loc, storePath(k.demo.StoreID, "/charges/"))),
		"the dollar test charge", servicetest.Settled)
	if usd.RequestedAmount != 1250 || usd.Currency != "USD" {
		t.Errorf("12.50 USD: %d %s, want 1250 USD", usd.RequestedAmount, usd.Currency)
	}
	list, err := k.svc.Charging.Charges(ctx, k.demo.Caller, k.demo.StoreID, payment.ChargeFilter{}, payment.ListParams{Limit: 10})
	if err != nil || len(list.Items) != 2 || list.Items[1].ID != id {
		t.Fatalf("Charges: %d, %v", len(list.Items), err)
	}
	// Bad input is shown on the settings page.
	for _, form := range []url.Values{
		{"amount": {"ten"}, "currency": {"JPY"}, "card": {"success"}},
		{"amount": {"0"}, "currency": {"JPY"}, "card": {"success"}},
		{"amount": {"100"}, "currency": {"JPY"}, "card": {"4000020000000000"}},
		{"amount": {"12.5"}, "currency": {"JPY"}, "card": {"success"}},
		{"amount": {"99999999999999999999"}, "currency": {"JPY"}, "card": {"success"}},
		{"amount": {"100"}, "currency": {"XXX"}, "card": {"success"}},
	} {
		p := k.post(t, path, form)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Some of what you entered is not valid.") || strings.Contains(p.body, "4000020000000000") {
			t.Errorf("%v: %d", form, p.status)
		}
	}
	// In live mode the service refuses the test card.
	token := k.csrf
	keysRedirect(t, "mode", k.b.do(t, http.MethodPost, "/console/mode", url.Values{"csrf": {token}, "mode": {"live"}, "next": {"/console/stores"}}), "/console/stores")
	if p := k.b.get(t, storePath(k.demo.StoreID, "/settings")); strings.Contains(p.body, `action="`+path+`"`) {
		t.Error("the test charge form is shown in live mode")
	}
	p = k.post(t, path, url.Values{"amount": {"1500"}, "currency": {"JPY"}, "card": {"success"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Test cards cannot be used in live mode.") {
		t.Errorf("live mode: %d\n%s", p.status, p.body)
	}
	list, _ = k.svc.Charging.Charges(ctx, k.demo.Caller, k.demo.StoreID, payment.ChargeFilter{}, payment.ListParams{Limit: 10})
	if len(list.Items) != 2 {
		t.Errorf("%d charges after live mode's refusal, want the 2 before it", len(list.Items))
	}
}

// TestConsoleKeysTestChargeUnknownClient: behind a trusted proxy whose
// chain names no readable client, the console's test charge is still made,
// its token with no IP address rather than the word the limits use.
func TestConsoleKeysTestChargeUnknownClient(t *testing.T) {
	k := newKeysFixture(t)
	k.console.clientIP = func(*http.Request) string { return api.UnknownClient }
	path := storePath(k.demo.StoreID, "/test_charge")
	loc := keysRedirect(t, "test charge", k.post(t, path, url.Values{"amount": {"1500"}, "currency": {"JPY"}, "card": {"success"}}),
		storePath(k.demo.StoreID, "/charges/"))
	id := uuid.MustParse(strings.TrimPrefix(loc, storePath(k.demo.StoreID, "/charges/")))
	ch := servicetest.AwaitCharge(t, k.svc, k.demo.Caller, k.demo.StoreID, id, "the test charge", servicetest.Settled)
	tok, err := k.svc.Tokens.Token(context.Background(), k.demo.Caller, k.demo.StoreID, ch.TokenID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tok.IPAddress != "" {
		t.Errorf("the token's IP address %q, want none", tok.IPAddress)
	}
}

// TestConsoleKeysTestChargeQuota: the daily test charge quota is the
// service's and the page names it.
func TestConsoleKeysTestChargeQuota(t *testing.T) {
	// A small quota, set as configuration sets it, keeps the test short.
	k := newKeysFixture(t, func(cfg *payment.Config) {
		cfg.Limits = payment.DefaultResourceLimits()
		cfg.Limits.TestChargesPerDay = 3
	})
	ctx := context.Background()
	// Use up the quota but one through the service, then two through the
	// console.
	limit := k.svc.Merchants.Limits().TestChargesPerDay
	for range limit - 1 {
		tok, err := k.svc.Tokens.CreateToken(ctx, k.demo.Caller, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime,
			Email: "q@kessai.test", Card: &payment.CardInput{Cardholder: "Q", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2040, CVV: "123"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.svc.Charging.CreateCharge(ctx, k.demo.Caller, payment.NewCharge{TokenID: tok.ID, Amount: 100, Currency: "JPY"}); err != nil {
			t.Fatal(err)
		}
	}
	path := storePath(k.demo.StoreID, "/test_charge")
	form := url.Values{"amount": {"100"}, "currency": {"JPY"}, "card": {"success"}}
	keysRedirect(t, "the last test charge of the day", k.post(t, path, form), storePath(k.demo.StoreID, "/charges/"))
	p := k.post(t, path, url.Values{"amount": {"100"}, "currency": {"JPY"}, "card": {"success"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "the most test charges it may make today (3 a day)") {
		t.Errorf("past the quota: %d\n%s", p.status, p.body)
	}
}

// TestConsoleKeysLiveObjectsInTestMode: in test mode, the store's live
// token and live webhook are not found, and the token list offers no
// button to revoke the live token.
func TestConsoleKeysLiveObjectsInTestMode(t *testing.T) {
	k := newKeysFixture(t)
	ctx := context.Background()
	live, err := k.svc.Access.IssueStoreAppToken(ctx, k.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	liveCaller, err := k.svc.Access.Authenticate(ctx, "Bearer "+live.Secret+"."+live.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	u := "https://live.invalid/live" // a live webhook may not name the loopback receiver
	hook, err := k.svc.Notify.CreateWebhook(ctx, liveCaller, k.demo.StoreID, payment.WebhookInput{Triggers: []string{"charge_finished"}, URL: &u})
	if err != nil {
		t.Fatal(err)
	}
	tokens := storePath(k.demo.StoreID, "/app_tokens")
	if p := k.b.get(t, tokens); strings.Contains(p.body, tokens+"/"+live.ID.String()+"/revoke") {
		t.Error("the test-mode list offers to revoke the live token")
	}
	if p := k.post(t, tokens+"/"+live.ID.String()+"/revoke", url.Values{"confirm": {"yes"}}); p.status != http.StatusNotFound {
		t.Errorf("revoking the live token in test mode: %d, want 404", p.status)
	}
	if _, err := k.svc.Access.Authenticate(ctx, "Bearer "+live.Secret+"."+live.JWT, ""); err != nil {
		t.Errorf("the live token was revoked: %v", err)
	}
	hookPath := storePath(k.demo.StoreID, "/webhooks/"+hook.ID.String())
	if p := k.b.get(t, hookPath); p.status != http.StatusNotFound {
		t.Errorf("the live webhook's page in test mode: %d", p.status)
	}
	for _, action := range []string{"/test", "/active", "/delete"} {
		if p := k.post(t, hookPath+action, url.Values{"confirm": {"yes"}, "active": {"no"}}); p.status != http.StatusNotFound {
			t.Errorf("%s on the live webhook in test mode: %d", action, p.status)
		}
	}
	k.mu.Lock()
	n := len(k.received)
	k.mu.Unlock()
	if n != 0 {
		t.Errorf("the live webhook got %d requests", n)
	}
	if w, err := k.svc.Notify.Webhook(ctx, liveCaller, k.demo.StoreID, hook.ID); err != nil || !w.Active {
		t.Errorf("the live webhook changed: %+v, %v", w, err)
	}
}
