package demo

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
)

// subscribe makes a subscription as the widget's subscription checkout
// does (a subscription token, the subscription with the order in its
// metadata) and lets the worker take its first charge to its end.
func (f *gatewayFixture) subscribe(t *testing.T, tok *payment.IssuedAppToken, card string, amount int64, period string, meta payment.Metadata) *payment.Subscription {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.Access.Authenticate(ctx, "Bearer "+tok.Secret+"."+tok.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := f.svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.SubscriptionToken,
		Email: "shopper@example.com", Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: card, ExpMonth: 12, ExpYear: 2039, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := f.svc.Subscriptions.CreateSubscription(ctx, c, payment.NewSubscription{TokenID: tt.ID, Amount: amount, Currency: "JPY",
		Period: period, Charge: payment.NewCharge{Metadata: meta}})
	if err != nil {
		t.Fatal(err)
	}
	kessaitest.WaitFor(t, 5*time.Second, "the subscription's first charge", func() bool {
		if _, err := f.svc.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
		if sub, err = f.svc.Subscriptions.Subscription(ctx, c, sub.StoreID, sub.ID, 0); err != nil {
			t.Fatal(err)
		}
		return sub.Status != payment.SubscriptionUnverified
	})
	return sub
}

var subscribeRef = regexp.MustCompile(`data-order="(KS-[^"]+)"`)

// openSubscribe opens the subscription page; it returns the order
// reference.
func (s *shopper) openSubscribe() string {
	s.t.Helper()
	res, body := s.get("/subscribe")
	if res.StatusCode != http.StatusOK {
		s.t.Fatalf("subscribe: %d\n%s", res.StatusCode, body)
	}
	m := subscribeRef.FindStringSubmatch(body)
	if m == nil {
		s.t.Fatalf("no order reference on the subscription page")
	}
	return m[1]
}

// TestDemoSubscriptionPage: the home page offers the subscription, and
// its page sets the widget up for a monthly subscription of the plan's
// price, loading only the gateway's loader.
func TestDemoSubscriptionPage(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	_, body := s.get("/")
	for _, want := range []string{"Coffee beans every month", "¥1,980 / month", `href="/subscribe"`} {
		if !strings.Contains(body, want) {
			t.Errorf("home page lacks %q", want)
		}
	}
	res, body := s.get("/subscribe")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("subscribe: %d", res.StatusCode)
	}
	for _, want := range []string{
		`<script src="` + f.srv.URL + `/static/checkout.js"></script>`, `data-app-id="` + f.tokA.JWT + `"`,
		`data-amount="1980"`, `data-period="monthly"`, `data-currency="jpy"`, "Subscribe for ¥1,980 / month",
		`name="subscriptionId"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("subscription page lacks %q", want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src "+f.srv.URL+";") {
		t.Errorf("subscription page CSP %q", csp)
	}
	for _, m := range inlineScript.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(m[1], "src=") {
			t.Errorf("inline script: %s", m[0])
		}
	}
	if strings.Contains(body, f.tokA.Secret) {
		t.Error("the page shows the secret")
	}
	// The same reference until it is paid; the cart's order is another.
	ref := s.openSubscribe()
	if again := s.openSubscribe(); again != ref {
		t.Errorf("reference %s, then %s", ref, again)
	}
	if cartRef, _ := s.fillCart("kyoto-dark"); cartRef == ref {
		t.Error("the cart and the subscription share a reference")
	}
	s.get("/lang/ja?back=/subscribe")
	if _, body := s.get("/subscribe"); !strings.Contains(body, "¥1,980 / 月") || !strings.Contains(body, "毎月届くコーヒー豆") {
		t.Error("no Japanese subscription page")
	}
}

// TestDemoSubscriptionOrder: the shop records a subscription only after
// reading it with its secret: the plan's amount, currency and period, its
// order, its first payment paid; the order page shows it and its payments
// as the gateway has them.
func TestDemoSubscriptionOrder(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	ref := s.openSubscribe()
	sub := f.subscribe(t, f.tokA, "4000020000000000", 1980, "monthly", payment.Metadata{"order_id": ref})
	if sub.Status != payment.SubscriptionCurrent {
		t.Fatalf("subscription %s", sub.Status)
	}
	before := f.apiCalls()
	res, body := s.post("/orders", url.Values{"order": {ref}, "subscriptionId": {sub.ID.String()}, "method": {"modal"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/orders/"+ref+"?thanks=1" {
		t.Fatalf("order: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
	if f.apiCalls() == before {
		t.Error("the shop did not ask the gateway")
	}
	_, body = s.get("/orders/" + ref + "?thanks=1")
	body = html.UnescapeString(body)
	for _, want := range []string{"Thank you for your order", sub.ID.String(), "Coffee beans every month", "¥1,980 / month",
		"Active", `id="sub-payments"`, "Paid", "Next payment", "Pop-up widget"} {
		if !strings.Contains(body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	_, body = s.get("/orders")
	if !strings.Contains(body, ref) || !strings.Contains(body, "¥1,980 / month") {
		t.Error("the order is not listed")
	}
	b, err := os.ReadFile(filepath.Join(f.dataDir, OrdersFile))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Orders []order `json:"orders"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Orders) != 1 || file.Orders[0].SubscriptionID != sub.ID.String() || file.Orders[0].Period != "monthly" ||
		file.Orders[0].Status != "current" || file.Orders[0].ChargeID == "" || file.Orders[0].Amount != 1980 {
		t.Errorf("orders file: %s", b)
	}

	// Posted again it shows the order; for another order it is refused.
	if res, _ := s.post("/orders", url.Values{"order": {ref}, "subscriptionId": {sub.ID.String()}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("repeat: %d", res.StatusCode)
	}
	ref2 := s.openSubscribe()
	if ref2 == ref {
		t.Fatal("the reference was reused after the order")
	}
	if res, _ := s.post("/orders", url.Values{"order": {ref2}, "subscriptionId": {sub.ID.String()}}); res.StatusCode != http.StatusConflict {
		t.Errorf("a subscription reused for another order: %d", res.StatusCode)
	}
	// Nor does the subscription's first charge pay a cart.
	cartRef, _ := s.fillCart("drip-bags")
	if res, _ := s.post("/orders", url.Values{"order": {cartRef}, "chargeId": {file.Orders[0].ChargeID}}); res.StatusCode == http.StatusSeeOther {
		t.Error("a subscription's charge paid a cart")
	}
}

// TestDemoSubscriptionRefused: a subscription that is not the plan's, not
// this order's, not this store's, or whose first payment failed places no
// order.
func TestDemoSubscriptionRefused(t *testing.T) {
	f := newShopFixture(t)
	s := f.shopper(t)
	ref := s.openSubscribe()
	meta := payment.Metadata{"order_id": ref}
	for _, tt := range []struct {
		name   string
		id     func() string
		status int
	}{
		{"malformed", func() string { return "nope" }, http.StatusBadRequest},
		{"unknown", func() string { return uuid.NewString() }, http.StatusBadRequest},
		{"other amount", func() string { return f.subscribe(t, f.tokA, "4000020000000000", 980, "monthly", meta).ID.String() }, http.StatusBadRequest},
		{"other period", func() string { return f.subscribe(t, f.tokA, "4000020000000000", 1980, "weekly", meta).ID.String() }, http.StatusBadRequest},
		{"other order", func() string {
			return f.subscribe(t, f.tokA, "4000020000000000", 1980, "monthly", payment.Metadata{"order_id": "KS-000000-OTHER"}).ID.String()
		}, http.StatusBadRequest},
		{"other store", func() string { return f.subscribe(t, f.tokB, "4000020000000000", 1980, "monthly", meta).ID.String() }, http.StatusBadRequest},
		{"declined", func() string { return f.subscribe(t, f.tokA, "4000000000000002", 1980, "monthly", meta).ID.String() }, http.StatusPaymentRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, body := s.post("/orders", url.Values{"order": {ref}, "subscriptionId": {tt.id()}})
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d\n%s", res.StatusCode, tt.status, body)
			}
		})
	}
	if len(ordersFromDir(t, f.dataDir).list()) != 0 {
		t.Error("an order was recorded")
	}
	// A subscription for a reference the session did not open is refused
	// too.
	other := f.shopper(t)
	sub := f.subscribe(t, f.tokA, "4000020000000000", 1980, "monthly", meta)
	other.get("/")
	if res, _ := other.post("/orders", url.Values{"order": {ref}, "subscriptionId": {sub.ID.String()}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("another session's subscription: %d", res.StatusCode)
	}
}

// TestDemoSubscriptionNotified: the storefront hears of its subscriptions
// from the gateway: a subscription_payment records the order of a shopper
// who never came back, with the same checks; a failure and a cancellation
// change the order's status.
func TestDemoSubscriptionNotified(t *testing.T) {
	ctx := context.Background()
	f := newGatewayFixture(t)
	h := newHookedShop(t, f, "")
	if _, err := h.d.registerWebhook(ctx); err != nil {
		t.Fatal(err)
	}
	s := h.shopper(t)
	ref := s.openSubscribe()
	sub := f.subscribe(t, f.tokA, "4000020000000000", 1980, "monthly", payment.Metadata{"order_id": ref})
	// The gateway's own delivery of subscription_payment records it.
	var o *order
	kessaitest.WaitFor(t, 5*time.Second, "the order from subscription_payment", func() bool {
		if _, err := f.svc.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
		var ok bool
		o, ok = h.d.orders.bySubscription(sub.ID.String())
		return ok
	})
	if o.Ref != ref || o.Method != methodNotified || o.Status != "current" || o.Period != "monthly" || o.Amount != 1980 || o.ChargeID == "" {
		t.Errorf("order %+v", o)
	}
	// The shopper coming back finds it.
	if res, _ := s.post("/orders", url.Values{"order": {ref}, "subscriptionId": {sub.ID.String()}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the shopper's return: %d", res.StatusCode)
	}
	if _, body := s.get("/orders/" + ref); !strings.Contains(body, sub.ID.String()) || !strings.Contains(body, "Active") {
		t.Error("order page")
	}

	// Its later events change its status.
	sub.Status = payment.SubscriptionUnpaid
	if code := h.post(t, h.delivery(t, "subscription_failure", sub)); code != http.StatusNoContent {
		t.Fatalf("subscription_failure: %d", code)
	}
	if o, _ := h.d.orders.get(ref); o.Status != "unpaid" {
		t.Errorf("after subscription_failure: %s", o.Status)
	}
	sub.Status = payment.SubscriptionCanceled
	if code := h.post(t, h.delivery(t, "subscription_canceled", sub)); code != http.StatusNoContent {
		t.Fatalf("subscription_canceled: %d", code)
	}
	if o, _ := h.d.orders.get(ref); o.Status != "canceled" {
		t.Errorf("after subscription_canceled: %s", o.Status)
	}

	// A notified subscription that is not the plan's, or that has not
	// started, records nothing; neither does another event.
	s2 := h.shopper(t)
	ref2 := s2.openSubscribe()
	cheap := f.subscribe(t, f.tokA, "4000020000000000", 980, "monthly", payment.Metadata{"order_id": ref2})
	declined := f.subscribe(t, f.tokA, "4000000000000002", 1980, "monthly", payment.Metadata{"order_id": ref2})
	for _, dl := range []*delivery{
		h.delivery(t, "subscription_payment", cheap),
		h.delivery(t, "subscription_payment", declined),
		h.delivery(t, "subscription_failure", declined),
	} {
		if code := h.post(t, dl); code != http.StatusNoContent {
			t.Errorf("%s: %d", dl.event, code)
		}
	}
	if _, ok := h.d.orders.get(ref2); ok {
		t.Error("an order was recorded for a subscription that does not pay it")
	}
	// The first charge's charge_finished does not pay the subscription's
	// order as if it were a cart's: only subscription_payment records it.
	// (A storefront whose webhook the gateway does not know, so that only
	// these deliveries reach it.)
	quiet := newHookedShop(t, f, "")
	quiet.d.hook.Store(&webhookState{ID: "quiet", URL: "http://quiet.example" + WebhookPath, AuthToken: "Bearer quiet",
		Secret: h.d.hook.Load().Secret})
	s3 := quiet.shopper(t)
	ref3 := s3.openSubscribe()
	sub3 := f.subscribe(t, f.tokA, "4000020000000000", 1980, "monthly", payment.Metadata{"order_id": ref3})
	charges, err := f.svc.Subscriptions.SubscriptionCharges(ctx, f.caller(t), f.storeA.ID, sub3.ID, uuid.Nil, payment.ListParams{Limit: 10})
	if err != nil || len(charges.Items) != 1 {
		t.Fatalf("charges %v: %v", charges.Items, err)
	}
	if code := quiet.post(t, quiet.delivery(t, "charge_finished", charges.Items[0])); code != http.StatusNoContent {
		t.Fatalf("charge_finished: %d", code)
	}
	if o, ok := quiet.d.orders.get(ref3); ok {
		t.Fatalf("a subscription's charge paid its order as a cart's: %+v", o)
	}
	if code := quiet.post(t, quiet.delivery(t, "subscription_payment", sub3)); code != http.StatusNoContent {
		t.Fatalf("subscription_payment: %d", code)
	}
	if o, ok := quiet.d.orders.get(ref3); !ok || o.SubscriptionID != sub3.ID.String() {
		t.Errorf("subscription_payment did not record the order: %+v", o)
	}

	bad := h.delivery(t, "subscription_payment", sub)
	bad.data = json.RawMessage(`"not a subscription"`)
	if code := h.post(t, bad); code != http.StatusBadRequest {
		t.Errorf("not a subscription: %d", code)
	}
}
