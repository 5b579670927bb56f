package payment_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/webhookhttp"
)

// testHookFixture is a service whose webhooks go over HTTP to one
// receiver, the demo merchant's store with one webhook to it, and a
// second merchant.
type testHookFixture struct {
	st   *servicetest.Stack
	svc  *services.Set
	demo *servicetest.Demo
	hook *payment.CreatedWebhook

	mu     sync.Mutex
	got    []*http.Request
	bodies [][]byte
	status int
}

func newTestHookFixture(t *testing.T) *testHookFixture {
	t.Helper()
	f := &testHookFixture{status: http.StatusNoContent}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.got = append(f.got, r)
		f.bodies = append(f.bodies, body)
		status := f.status
		f.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	f.st = servicetest.New(t, servicetest.Options{WebhookSender: webhookhttp.New(webhookhttp.Config{TestModeLocal: true, Timeout: 5 * time.Second})})
	f.svc = f.st.Service
	f.demo = f.st.SeedDemo(t, "shop.example")
	url, auth := rc.URL+"/hook", "Bearer shop-secret"
	var err error
	f.hook, err = f.svc.Notify.CreateWebhook(context.Background(), f.demo.Caller, f.demo.StoreID, payment.WebhookInput{
		Triggers: []string{payment.EventChargeFinished}, URL: &url, AuthToken: &auth})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// server authenticates an issued token's server credential.
func (f *testHookFixture) server(t *testing.T, tok *payment.IssuedAppToken) *payment.Caller {
	t.Helper()
	c, err := f.svc.Access.Authenticate(context.Background(), "Bearer "+tok.Secret+"."+tok.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newStore adds a store to a merchant (a new merchant for uuid.Nil) and
// returns its id.
func (f *testHookFixture) newStore(t *testing.T, merchantID uuid.UUID) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	st := &payment.Store{ID: payment.NewID(), MerchantID: merchantID, Name: "Another store", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	if err := f.st.DB.Update(ctx, func(tx payment.Tx) error {
		if merchantID == uuid.Nil {
			m := &payment.Merchant{ID: payment.NewID(), Name: "Other", Email: "other@kessai.test", Verified: true, CreatedOn: now}
			st.MerchantID = m.ID
			if err := tx.CreateMerchant(ctx, m); err != nil {
				return err
			}
		}
		return tx.CreateStore(ctx, st)
	}); err != nil {
		t.Fatal(err)
	}
	return st.ID
}

// TestPingWebhookSendsASignedTestEvent: the test event arrives once,
// signed with the webhook's secret and with its headers, and leaves no
// event or delivery behind.
func TestPingWebhookSendsASignedTestEvent(t *testing.T) {
	f := newTestHookFixture(t)
	ctx := context.Background()
	res, err := f.svc.Notify.PingWebhook(ctx, f.demo.Caller, f.demo.StoreID, f.hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Status != http.StatusNoContent || res.Error != "" {
		t.Fatalf("result %+v, want 204 and no error", res)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(f.got))
	}
	r, body := f.got[0], f.bodies[0]
	if r.Method != http.MethodPost || r.URL.Path != "/hook" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	if r.Header.Get("Authorization") != "Bearer shop-secret" {
		t.Errorf("Authorization %q, want the webhook's auth token", r.Header.Get("Authorization"))
	}
	id := r.Header.Get("webhook-id")
	if id != res.EventID.String() || r.Header.Get("Idempotency-Key") != id {
		t.Errorf("webhook-id %q, Idempotency-Key %q, want the test event's id %s", id, r.Header.Get("Idempotency-Key"), res.EventID)
	}
	if err := signaturetest.Verify(f.hook.Secret, id, r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"),
		body, time.Now(), time.Minute); err != nil {
		t.Errorf("the signature does not verify with the webhook's secret: %v", err)
	}
	var env struct {
		ID    string `json:"id"`
		Event string `json:"event"`
		Data  struct {
			WebhookID string `json:"webhook_id"`
			Mode      string `json:"mode"`
		} `json:"data"`
		CreatedOn string `json:"created_on"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if env.ID != id || env.Event != payment.EventWebhookTest || env.Data.WebhookID != f.hook.ID.String() ||
		env.Data.Mode != "test" || env.CreatedOn == "" {
		t.Errorf("body %s", body)
	}
	// Not a real event: nothing to list, nothing in the delivery log.
	evs, err := f.svc.Notify.Events(ctx, f.demo.Caller, uuid.Nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.ID == res.EventID || ev.Name == payment.EventWebhookTest {
			t.Errorf("the test event was stored: %+v", ev)
		}
	}
	log, err := f.svc.Notify.WebhookDeliveries(ctx, f.demo.Caller, f.demo.StoreID, f.hook.ID, payment.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Items) != 0 {
		t.Errorf("the delivery log has %d lines after a test, want none", len(log.Items))
	}
}

// TestPingWebhookReportsFailures: a receiver's error status, or no
// answer at all, is the result, not an error of the call; why no answer
// came is not told beyond "failed".
func TestPingWebhookReportsFailures(t *testing.T) {
	f := newTestHookFixture(t)
	ctx := context.Background()
	f.mu.Lock()
	f.status = http.StatusInternalServerError
	f.mu.Unlock()
	res, err := f.svc.Notify.PingWebhook(ctx, f.demo.Caller, f.demo.StoreID, f.hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.Status != http.StatusInternalServerError || res.Error == "" {
		t.Errorf("a 500: %+v, want a failure with status 500", res)
	}

	// A receiver that is not there.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/gone"
	dead.Close()
	gone, err := f.svc.Notify.CreateWebhook(ctx, f.demo.Caller, f.demo.StoreID, payment.WebhookInput{
		Triggers: []string{payment.EventChargeFinished}, URL: &deadURL})
	if err != nil {
		t.Fatal(err)
	}
	res, err = f.svc.Notify.PingWebhook(ctx, f.demo.Caller, f.demo.StoreID, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	// As coarse as the delivery log (the answer comes at once, a port
	// scanner's dream otherwise): a closed port says "failed", no more.
	if res.OK() || res.Status != 0 || res.Error != "failed" {
		t.Errorf("no receiver: %+v, want status 0 and the error \"failed\"", res)
	}
}

// TestPingWebhookVisibility: the webhook is found only as Webhook finds
// it; anyone else gets NOT_FOUND and the receiver hears nothing.
func TestPingWebhookVisibility(t *testing.T) {
	f := newTestHookFixture(t)
	ctx := context.Background()

	otherStore := f.newStore(t, uuid.Nil)
	otherTok, err := f.svc.Access.IssueStoreAppToken(ctx, otherStore, payment.NewAppToken{})
	if err != nil {
		t.Fatal(err)
	}
	sibling := f.newStore(t, f.demo.MerchantID)
	siblingTok, err := f.svc.Access.IssueStoreAppToken(ctx, sibling, payment.NewAppToken{})
	if err != nil {
		t.Fatal(err)
	}
	liveTok, err := f.svc.Access.IssueStoreAppToken(ctx, f.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	merchantTok, err := f.svc.Access.IssueMerchantAppToken(ctx, f.demo.MerchantID, payment.NewAppToken{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		caller  *payment.Caller
		storeID uuid.UUID
		id      uuid.UUID
	}{
		{"another merchant's token, its own store", f.server(t, otherTok), otherStore, f.hook.ID},
		{"another merchant's token, the webhook's store", f.server(t, otherTok), f.demo.StoreID, f.hook.ID},
		{"the merchant's other store", f.server(t, siblingTok), sibling, f.hook.ID},
		{"a live-mode token of the store", f.server(t, liveTok), f.demo.StoreID, f.hook.ID},
		{"the merchant's token, through the other store", f.server(t, merchantTok), sibling, f.hook.ID},
		{"an id that is no webhook", f.demo.Caller, f.demo.StoreID, payment.NewID()},
	} {
		if _, err := f.svc.Notify.PingWebhook(ctx, tc.caller, tc.storeID, tc.id); !payment.IsNotFound(err) {
			t.Errorf("%s: %v, want NOT_FOUND", tc.name, err)
		}
	}
	browser, err := f.svc.Access.BrowserCaller(ctx, f.demo.Token.JWT, "https://shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Notify.PingWebhook(ctx, browser, f.demo.StoreID, f.hook.ID); payment.ErrorCode(err) != payment.CodeInvalidPermissions {
		t.Errorf("a browser: %v, want INVALID_PERMISSIONS", err)
	}
	f.mu.Lock()
	n := len(f.got)
	f.mu.Unlock()
	if n != 0 {
		t.Errorf("the receiver got %d requests from callers that may not see the webhook", n)
	}
	// The merchant's own token through the right store sees it.
	if res, err := f.svc.Notify.PingWebhook(ctx, f.server(t, merchantTok), f.demo.StoreID, f.hook.ID); err != nil || !res.OK() {
		t.Errorf("the merchant's token through the webhook's store: %+v, %v", res, err)
	}
}

// TestPingWebhookWithoutSender: a gateway that sends no webhooks says so.
func TestPingWebhookWithoutSender(t *testing.T) {
	st := servicetest.New(t, servicetest.Options{})
	demo := st.SeedDemo(t)
	ctx := context.Background()
	url := "https://shop.example/hook"
	hook, err := st.Service.Notify.CreateWebhook(ctx, demo.Caller, demo.StoreID, payment.WebhookInput{
		Triggers: []string{payment.EventChargeFinished}, URL: &url})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Service.Notify.PingWebhook(ctx, demo.Caller, demo.StoreID, hook.ID)
	if err != nil || res.OK() || res.Error == "" {
		t.Errorf("without a sender: %+v, %v; want a failure saying why", res, err)
	}
}
