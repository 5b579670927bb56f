package demo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// hookedShop is the storefront with its webhook's receiver on its own
// server, reachable by the gateway of f.
type hookedShop struct {
	*shopFixture
	d *shop
}

// newHookedShop makes a storefront over dataDir ("" a new one) whose
// webhook URL is its own receiver; it does not register it.
func newHookedShop(t *testing.T, f *gatewayFixture, dataDir string) *hookedShop {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	d, err := newShop(Config{GatewayURL: f.srv.URL, JWT: f.tokA.JWT, Secret: f.tokA.Secret,
		StoreID: f.storeA.ID.String(), DataDir: dataDir, Logger: slog.New(slog.DiscardHandler),
		WebhookURL: base + WebhookPath})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = d.routes()
	srv.Start()
	t.Cleanup(srv.Close)
	return &hookedShop{shopFixture: &shopFixture{gatewayFixture: f, shop: srv, dataDir: dataDir}, d: d}
}

// caller is store A's secret-bearing caller, for the tests' own look at
// the gateway.
func (f *gatewayFixture) caller(t *testing.T) *payment.Caller {
	t.Helper()
	c, err := f.svc.Access.Authenticate(context.Background(), "Bearer "+f.tokA.Secret+"."+f.tokA.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// webhooks are store A's webhooks on the gateway.
func (f *gatewayFixture) webhooks(t *testing.T) []*payment.Webhook {
	t.Helper()
	page, err := f.svc.Notify.Webhooks(context.Background(), f.caller(t), f.storeA.ID, payment.ListParams{Limit: 100, Direction: payment.Desc})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func savedWebhook(t *testing.T, dir string) webhookState {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, WebhookFile))
	if err != nil {
		t.Fatal(err)
	}
	var st webhookState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDemoWebhookRegistration: the storefront registers one webhook at its
// receiver for charge_finished and charge_updated, a bank transfer's
// deposits (bank_transfer_status_updated), and its subscriptions'
// payments, failures and cancellations, with an Authorization
// of its own, and keeps its signing secret in its data file; starting
// again reuses it (putting right its triggers, Authorization and state), and
// when the secret is lost it replaces the webhook, never adding a second.
func TestDemoWebhookRegistration(t *testing.T) {
	ctx := context.Background()
	f := newGatewayFixture(t)
	h := newHookedShop(t, f, "")
	want := h.shop.URL + WebhookPath

	st, err := h.d.registerWebhook(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hooks := f.webhooks(t)
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks, want 1", len(hooks))
	}
	w := hooks[0]
	if w.URL != want || !w.Active || w.AuthToken != st.AuthToken || !strings.HasPrefix(st.AuthToken, "Bearer ") ||
		!slices.Equal(w.Triggers, []string{"charge_finished", "charge_updated", "bank_transfer_status_updated", "subscription_payment", "subscription_failure", "subscription_canceled"}) ||
		w.ID.String() != st.ID {
		t.Errorf("webhook %+v, state %+v", w, st)
	}
	secret, err := f.svc.Notify.SigningSecret(w)
	if err != nil || secret != st.Secret {
		t.Errorf("the shop kept the secret %q, the webhook's is %q (%v)", st.Secret, secret, err)
	}
	if saved := savedWebhook(t, h.dataDir); saved != *st {
		t.Errorf("saved %+v, registered %+v", saved, *st)
	}
	if fi, err := os.Stat(filepath.Join(h.dataDir, WebhookFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the webhook file is not private: %v %v", fi.Mode(), err)
	}
	if h.d.hook.Load() == nil || *h.d.hook.Load() != *st {
		t.Error("the receiver does not have the registered webhook")
	}

	// Again: the same webhook, changed in nothing.
	again, err := h.d.registerWebhook(ctx)
	if err != nil || *again != *st {
		t.Fatalf("registered again: %+v, %v", again, err)
	}
	if hooks := f.webhooks(t); len(hooks) != 1 || !hooks[0].UpdatedOn.Equal(w.UpdatedOn) {
		t.Errorf("registering again changed the webhooks: %d", len(hooks))
	}

	// Deactivated, with other triggers and Authorization: put right.
	off, other := false, "Bearer someone-else"
	if _, err := f.svc.Notify.UpdateWebhook(ctx, f.caller(t), f.storeA.ID, w.ID, payment.WebhookInput{
		Triggers: []string{"refund_finished"}, Active: &off, AuthToken: &other}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.d.registerWebhook(ctx); err != nil {
		t.Fatal(err)
	}
	w = f.webhooks(t)[0]
	if !w.Active || w.AuthToken != st.AuthToken || !slices.Contains(w.Triggers, "charge_finished") || !slices.Contains(w.Triggers, "charge_updated") {
		t.Errorf("not put right: %+v", w)
	}

	// A restart over the same data: the receiver has the webhook before it
	// is checked, and it is the same one.
	d3, err := newShop(h.d.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := d3.hook.Load(); got == nil || *got != *st {
		t.Errorf("restarted shop's webhook %+v, want %+v", got, st)
	}
	if got, err := d3.registerWebhook(ctx); err != nil || *got != *st {
		t.Errorf("restarted: %+v, %v", got, err)
	}
	if n := len(f.webhooks(t)); n != 1 {
		t.Errorf("%d webhooks after a restart", n)
	}

	// The secret lost: the webhook at the URL is replaced.
	if err := os.Remove(filepath.Join(h.dataDir, WebhookFile)); err != nil {
		t.Fatal(err)
	}
	d4, err := newShop(h.d.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d4.hook.Load() != nil {
		t.Error("a webhook without its file")
	}
	fresh, err := d4.registerWebhook(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hooks = f.webhooks(t)
	if len(hooks) != 1 || hooks[0].ID.String() != fresh.ID || fresh.ID == st.ID || fresh.Secret == st.Secret {
		t.Errorf("after the secret was lost: %d webhooks, %+v", len(hooks), fresh)
	}
	if secret, _ := f.svc.Notify.SigningSecret(hooks[0]); secret != fresh.Secret {
		t.Error("the new webhook's secret is not the one kept")
	}

	// The shop moved to another address: its webhook there, the one at
	// the old address removed.
	moved := newHookedShop(t, f, h.dataDir)
	if got := moved.d.hook.Load(); got != nil {
		t.Errorf("a shop at another URL took the saved webhook: %+v", got)
	}
	there, err := moved.d.registerWebhook(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hooks = f.webhooks(t)
	if len(hooks) != 1 || hooks[0].URL != moved.shop.URL+WebhookPath || hooks[0].ID.String() != there.ID {
		t.Errorf("after moving: %d webhooks, the first at %s", len(hooks), hooks[0].URL)
	}
}

// TestDemoWebhookRegisteredInBackground: New starts the registration on the
// runner it is given, which keeps trying while the gateway is away and
// stops when its context ends.
func TestDemoWebhookRegisteredInBackground(t *testing.T) {
	f := newGatewayFixture(t)
	var jobs []func(context.Context)
	dir := t.TempDir()
	cfg := Config{GatewayURL: f.srv.URL, JWT: f.tokA.JWT, Secret: f.tokA.Secret, StoreID: f.storeA.ID.String(),
		DataDir: dir, Logger: slog.New(slog.DiscardHandler), WebhookURL: "http://127.0.0.1:9/webhooks/kessai",
		Background: func(job func(context.Context)) { jobs = append(jobs, job) }}
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%d background jobs, want the registration", len(jobs))
	}
	jobs[0](context.Background())
	if hooks := f.webhooks(t); len(hooks) != 1 || hooks[0].URL != cfg.WebhookURL {
		t.Fatalf("webhooks %v", hooks)
	}

	// Without the gateway it keeps trying until stopped.
	cfg.GatewayURL = "http://127.0.0.1:9"
	cfg.DataDir = t.TempDir()
	jobs = nil
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	jobs[0](ctx)
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("gave up after %v", time.Since(start))
	}

	// Without a webhook URL, nothing is registered.
	jobs = nil
	cfg.WebhookURL = ""
	if _, err := New(cfg); err != nil || len(jobs) != 0 {
		t.Errorf("%d jobs without a webhook URL (%v)", len(jobs), err)
	}
}

// delivery is a webhook delivery as the gateway makes it, which a case
// may spoil.
type delivery struct {
	event     string
	data      json.RawMessage
	id        string
	timestamp time.Time
	secret    string
	auth      string
	// body replaces the signed body on the wire, headerID the signed id
	// in webhook-id (the signature is the original's).
	body     []byte
	headerID string
}

func (h *hookedShop) delivery(t *testing.T, event string, resource any) *delivery {
	t.Helper()
	data, err := univapay.EncodeEvent(resource)
	if err != nil {
		t.Fatal(err)
	}
	st := h.d.hook.Load()
	return &delivery{event: event, data: data, id: payment.NewID().String(), timestamp: time.Now(), secret: st.Secret, auth: st.AuthToken}
}

// post sends the delivery to the shop's receiver and answers its status.
func (h *hookedShop) post(t *testing.T, dl *delivery) int {
	t.Helper()
	id, _ := uuid.Parse(dl.id)
	body, err := payment.WebhookBody(&payment.Event{ID: id, Name: dl.event, Data: dl.data, CreatedOn: dl.timestamp})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := payment.SignWebhook(dl.secret, dl.id, dl.timestamp.Unix(), body)
	if err != nil {
		t.Fatal(err)
	}
	if dl.body != nil {
		body = dl.body
	}
	req, _ := http.NewRequest(http.MethodPost, h.shop.URL+WebhookPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if dl.auth != "" {
		req.Header.Set("Authorization", dl.auth)
	}
	req.Header.Set("webhook-id", cmp.Or(dl.headerID, dl.id))
	req.Header.Set("webhook-timestamp", strconv.FormatInt(dl.timestamp.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestDemoWebhookReceiver: a delivery pays the order of its charge only
// with the webhook's Authorization, a valid signature and a recent
// timestamp, only for charge_finished of a successful charge of the
// checkout's amount, and only once however often it comes.
func TestDemoWebhookReceiver(t *testing.T) {
	f := newGatewayFixture(t)
	h := newHookedShop(t, f, "")

	// Before the webhook is known, deliveries are put off.
	dl := &delivery{event: "charge_finished", data: json.RawMessage(`{}`), id: payment.NewID().String(), timestamp: time.Now(),
		secret: "whsec_" + strings.Repeat("A", 32), auth: "Bearer x"}
	if got := h.post(t, dl); got != http.StatusServiceUnavailable {
		t.Errorf("before registering: %d, want 503", got)
	}
	st, err := h.d.registerWebhook(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The gateway's own deliveries are another test's: here the test
	// makes each delivery, and the webhook rests.
	off := false
	if _, err := f.svc.Notify.UpdateWebhook(context.Background(), f.caller(t), f.storeA.ID, uuid.MustParse(st.ID), payment.WebhookInput{Active: &off}); err != nil {
		t.Fatal(err)
	}

	s := h.shopper(t)
	ref, total := s.fillCart("kyoto-dark", "drip-bags")
	meta := payment.Metadata{"order_id": ref}
	good := f.pay(t, f.tokA, "4000020000000000", total, "JPY", meta)
	paid := func() bool {
		_, ok := h.d.orders.get(ref)
		return ok
	}

	for _, tc := range []struct {
		name   string
		spoil  func(*delivery)
		charge func() *payment.Charge
		status int
	}{
		{"wrong Authorization", func(dl *delivery) { dl.auth = "Bearer guessed" }, nil, http.StatusUnauthorized},
		{"no Authorization", func(dl *delivery) { dl.auth = "" }, nil, http.StatusUnauthorized},
		{"signed with another secret", func(dl *delivery) { dl.secret = "whsec_" + strings.Repeat("B", 32) }, nil, http.StatusUnauthorized},
		{"another body under the signature", func(dl *delivery) {
			dl.body, _ = payment.WebhookBody(&payment.Event{ID: uuid.MustParse(dl.id), Name: "charge_finished", Data: dl.data, CreatedOn: dl.timestamp.Add(time.Second)})
		}, nil, http.StatusUnauthorized},
		{"another webhook-id under the signature", func(dl *delivery) { dl.headerID = payment.NewID().String() }, nil, http.StatusUnauthorized},
		{"stale timestamp", func(dl *delivery) { dl.timestamp = time.Now().Add(-6 * time.Minute) }, nil, http.StatusUnauthorized},
		{"timestamp ahead", func(dl *delivery) { dl.timestamp = time.Now().Add(6 * time.Minute) }, nil, http.StatusUnauthorized},
		{"a failed charge", nil, func() *payment.Charge {
			return f.pay(t, f.tokA, "4111111111111111", total, "JPY", meta)
		}, http.StatusNoContent},
		{"less than the order", nil, func() *payment.Charge {
			return f.pay(t, f.tokA, "4000020000000000", total-100, "JPY", meta)
		}, http.StatusNoContent},
		{"another currency", nil, func() *payment.Charge {
			return f.pay(t, f.tokA, "4000020000000000", total, "USD", meta)
		}, http.StatusNoContent},
		{"another store's charge", nil, func() *payment.Charge {
			return f.pay(t, f.tokB, "4000020000000000", total, "JPY", meta)
		}, http.StatusNoContent},
		{"charge_updated of a good charge", func(dl *delivery) { dl.event = "charge_updated" }, nil, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := good
			if tc.charge != nil {
				ch = tc.charge()
			}
			dl := h.delivery(t, "charge_finished", ch)
			if tc.spoil != nil {
				tc.spoil(dl)
			}
			if got := h.post(t, dl); got != tc.status {
				t.Errorf("status %d, want %d", got, tc.status)
			}
			if paid() {
				t.Fatal("the order was paid")
			}
		})
	}

	// The real one pays the order, once, however often it comes.
	dl = h.delivery(t, "charge_finished", good)
	for i := range 3 {
		if got := h.post(t, dl); got != http.StatusNoContent {
			t.Fatalf("delivery %d: %d", i+1, got)
		}
	}
	o, ok := h.d.orders.get(ref)
	if !ok || o.ChargeID != good.ID.String() || o.Amount != total || o.Method != methodNotified || len(o.Items) != 2 || o.Status != "successful" {
		t.Fatalf("order %+v", o)
	}
	if n := len(ordersFromDir(t, h.dataDir).list()); n != 1 {
		t.Errorf("%d orders recorded", n)
	}
	if _, ok := h.d.checkouts.get(ref); ok {
		t.Error("the paid checkout is still kept")
	}
	// Another successful charge for the paid order does not replace it.
	second := f.pay(t, f.tokA, "4000020000000000", total, "JPY", meta)
	if got := h.post(t, h.delivery(t, "charge_finished", second)); got != http.StatusNoContent {
		t.Errorf("second charge: %d", got)
	}
	if o, _ := h.d.orders.get(ref); o.ChargeID != good.ID.String() {
		t.Errorf("the order's charge became %s", o.ChargeID)
	}

	// The shopper, back: the checkout is done and thanks them; the
	// widget's post of the charge shows the order.
	res, _ := s.get("/checkout")
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/orders/"+ref+"?thanks=1" {
		t.Errorf("checkout after the notification: %d %s", res.StatusCode, loc)
	}
	if _, body := s.get("/cart"); !strings.Contains(body, "Your cart is empty") {
		t.Error("the cart was not emptied")
	}
	if res, _ := s.post("/orders", url.Values{"order": {ref}, "chargeId": {good.ID.String()}}); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/orders/"+ref {
		t.Errorf("posting the charge: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, body := s.get("/orders/" + ref + "?thanks=1")
	for _, want := range []string{"Thank you for your order", "Confirmed by the gateway&#39;s notification", good.ID.String()} {
		if !strings.Contains(body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	s.get("/lang/ja")
	if _, body := s.get("/orders"); !strings.Contains(body, "ゲートウェイからの通知で確認") {
		t.Error("no Japanese for the notified order")
	}
}

// TestDemoOrderPaidElsewhere: an order paid with PayPay in another tab is
// paid by the gateway's own delivery to the storefront's webhook, without
// the shopper coming back; a refused one is not.
func TestDemoOrderPaidElsewhere(t *testing.T) {
	f := newGatewayFixture(t)
	h := newHookedShop(t, f, "")
	if _, err := h.d.registerWebhook(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		act  string
		paid bool
	}{{"fail", false}, {"pay", true}} {
		t.Run(tc.act, func(t *testing.T) {
			s := h.shopper(t)
			ref, total := s.fillCart("hasami-mug")
			ch := f.approved(t, "", total, payment.Metadata{"order_id": ref}, tc.act)
			// The delivery is the worker's: the charge's end and its
			// delivery are done by the time the log shows it delivered.
			kessaitest.WaitFor(t, 5*time.Second, "the charge_finished delivery", func() bool {
				if _, err := f.svc.Work.ProcessPending(ctx, 50); err != nil {
					t.Fatal(err)
				}
				log, err := f.svc.Notify.WebhookDeliveries(ctx, f.caller(t), f.storeA.ID, uuid.MustParse(h.d.hook.Load().ID),
					payment.ListParams{Limit: 100, Direction: payment.Desc})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range log.Items {
					var data struct {
						ID string `json:"id"`
					}
					_ = json.Unmarshal(e.Event.Data, &data)
					if e.Event.Name == "charge_finished" && data.ID == ch.ID.String() {
						if e.Delivery.Status == payment.DeliveryFailed || e.Delivery.LastError != "" {
							t.Fatalf("delivery failed: %d %s", e.Delivery.LastStatus, e.Delivery.LastError)
						}
						return e.Delivery.Status == payment.DeliverySuccessful
					}
				}
				return false
			})
			o, ok := h.d.orders.get(ref)
			if ok != tc.paid {
				t.Fatalf("paid %v, want %v (charge %s)", ok, tc.paid, ch.Status)
			}
			if tc.paid && (o.ChargeID != ch.ID.String() || o.Method != methodNotified) {
				t.Errorf("order %+v", o)
			}
		})
	}
}
