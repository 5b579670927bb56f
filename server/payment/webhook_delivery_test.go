package payment_test

// Webhook delivery end to end: the service as the gateway builds it (events
// rendered by univapay.EncodeEvent, sent by webhookhttp) posting to real HTTP
// receivers (httptest), driven by the work queue on a fake clock.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/univapay"
	"github.com/kessai/kessai/server/webhookhttp"
)

// hookReceiver is a merchant's webhook endpoint: every path is a receiver
// of its own, and each answers with the status set for it (200 by
// default).
type hookReceiver struct {
	*httptest.Server
	clk *kessaitest.Clock

	mu       sync.Mutex
	got      []hookRequest
	statuses map[string]int
}

// hookRequest is one delivery attempt as a receiver saw it.
type hookRequest struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time // the gateway's (fake) clock when it arrived
}

// envelope is a delivery's body.
type envelope struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	CreatedOn string          `json:"created_on"`
}

func (h hookRequest) envelope(t *testing.T) envelope {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(h.body, &keys); err != nil {
		t.Fatalf("delivery body %s: %v", h.body, err)
	}
	if len(keys) != 4 {
		t.Errorf("delivery body has keys %v, want id, event, data, created_on", slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}))
	}
	var e envelope
	if err := json.Unmarshal(h.body, &e); err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || e.Event == "" || len(e.Data) == 0 || e.CreatedOn == "" {
		t.Errorf("delivery body %s lacks a field", h.body)
	}
	return e
}

// dataID is the id of the resource a delivery carries.
func (e envelope) dataID(t *testing.T) string {
	t.Helper()
	var d struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func newHookReceiver(t *testing.T, clk *kessaitest.Clock) *hookReceiver {
	rc := &hookReceiver{clk: clk, statuses: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, hookRequest{path: r.URL.Path, header: r.Header.Clone(), body: body, at: clk.Now()})
		status := rc.statuses[r.URL.Path]
		rc.mu.Unlock()
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) answer(path string, status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.statuses[path] = status
}

// at returns what the receiver at path got, in order.
func (rc *hookReceiver) at(path string) []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []hookRequest
	for _, h := range rc.got {
		if h.path == path {
			out = append(out, h)
		}
	}
	return out
}

func (rc *hookReceiver) total() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// hookFixture is a service with the demo account, the API over it (for the
// GETs that event data is compared with) and a receiver.
type hookFixture struct {
	t    *testing.T
	st   *servicetest.Stack
	svc  *services.Set
	clk  *kessaitest.Clock
	demo *servicetest.Demo
	api  http.Handler
	rc   *hookReceiver
}

type hookOptions struct {
	storage func(*sqlite.DB) payment.Storage
}

func newHookFixture(t *testing.T, o hookOptions) *hookFixture {
	t.Helper()
	clk := kessaitest.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	f := &hookFixture{t: t, clk: clk}
	f.st = servicetest.New(t, servicetest.Options{
		Clock: clk, Storage: o.storage,
		EncodeEvent: univapay.EncodeEvent,
		WebhookSender: webhookhttp.New(webhookhttp.Config{TestModeLocal: true, Timeout: 5 * time.Second,
			// The receivers are IP literals; no name is looked up for real.
			LookupHost: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }}),
	})
	f.svc = f.st.Service
	f.demo = f.st.SeedDemo(t)
	f.api = api.New(api.Config{Service: f.svc, Logger: slog.New(slog.DiscardHandler)})
	f.rc = newHookReceiver(t, clk)
	return f
}

// caller authenticates an issued app token.
func (f *hookFixture) caller(tok *payment.IssuedAppToken) *payment.Caller {
	f.t.Helper()
	c, err := f.svc.Access.Authenticate(context.Background(), "Bearer "+tok.Secret+"."+tok.JWT, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// webhook creates a webhook as c (on storeID, or c's merchant with
// uuid.Nil) posting to the receiver's path.
func (f *hookFixture) webhook(c *payment.Caller, storeID uuid.UUID, path string, active bool, triggers ...string) *payment.CreatedWebhook {
	f.t.Helper()
	u, auth := f.rc.URL+path, "Bearer receiver-secret "+path
	w, err := f.svc.Notify.CreateWebhook(context.Background(), c, storeID, payment.WebhookInput{
		Triggers: triggers, URL: &u, AuthToken: &auth, Active: &active,
	})
	if err != nil {
		f.t.Fatalf("CreateWebhook %s: %v", path, err)
	}
	return w
}

// drain runs the worker until nothing is due; failed attempts (a receiver
// that refuses) are what some tests want, so their errors are returned.
func (f *hookFixture) drain() error {
	f.t.Helper()
	var errs []error
	for range 50 {
		n, err := f.svc.Work.ProcessPending(context.Background(), 100)
		if err != nil {
			errs = append(errs, err)
		}
		if n == 0 {
			return errors.Join(errs...)
		}
	}
	f.t.Fatal("the work queue does not drain")
	return nil
}

func (f *hookFixture) mustDrain() {
	f.t.Helper()
	if err := f.drain(); err != nil {
		f.t.Fatal(err)
	}
}

// get answers a GET of the API as the demo store's server.
func (f *hookFixture) get(path string) []byte {
	f.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", f.demo.Auth)
	rec := httptest.NewRecorder()
	f.api.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		f.t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// token makes a card token of typ on the demo store.
func (f *hookFixture) token(typ payment.TokenType, card string, cvvAuth bool) *payment.TransactionToken {
	f.t.Helper()
	tok, err := f.svc.Tokens.CreateToken(context.Background(), f.demo.Caller, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: typ, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: card, ExpMonth: 12, ExpYear: 2039, CVV: "123",
			CVVAuthorize: payment.CVVAuthorize{Enabled: cvvAuth}},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

func (f *hookFixture) charge(tok *payment.TransactionToken, capture bool, threeDS *payment.ThreeDSSettings) *payment.Charge {
	f.t.Helper()
	ch, err := f.svc.Charging.CreateCharge(context.Background(), f.demo.Caller, payment.NewCharge{
		TokenID: tok.ID, Amount: 1200, Currency: "JPY", Capture: &capture, ThreeDS: threeDS,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return ch
}

// expect checks that the receiver at path got, since it had seen, exactly
// the events want (in any order), each once, and returns them by name.
func (f *hookFixture) expect(path string, seen int, want ...string) (map[string]hookRequest, int) {
	f.t.Helper()
	got := f.rc.at(path)[seen:]
	byName := map[string]hookRequest{}
	var names []string
	for _, h := range got {
		e := h.envelope(f.t)
		names = append(names, e.Event)
		byName[e.Event] = h
	}
	slices.Sort(names)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		f.t.Errorf("%s got %v, want %v", path, names, want)
	}
	return byName, seen + len(got)
}

// checkDelivery checks a delivery's headers and signature, and that its
// data is what a GET of the resource answers now.
func (f *hookFixture) checkDelivery(h hookRequest, hook *payment.CreatedWebhook, event, getPath string) {
	f.t.Helper()
	e := h.envelope(f.t)
	if e.Event != event {
		f.t.Fatalf("delivery of %s, want %s", e.Event, event)
	}
	if got, want := h.header.Get("Authorization"), hook.AuthToken; got != want {
		f.t.Errorf("%s: Authorization %q, want the webhook's auth_token %q", event, got, want)
	}
	if ct := h.header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("%s: Content-Type %q", event, ct)
	}
	if id := h.header.Get("webhook-id"); id != e.ID || h.header.Get("Idempotency-Key") != e.ID {
		f.t.Errorf("%s: webhook-id %q, Idempotency-Key %q, want the event id %s", event, id, h.header.Get("Idempotency-Key"), e.ID)
	}
	if err := signaturetest.Verify(hook.Secret, h.header.Get("webhook-id"), h.header.Get("webhook-timestamp"),
		h.header.Get("webhook-signature"), h.body, f.clk.Now(), 5*time.Minute); err != nil {
		f.t.Errorf("%s: signature: %v (headers %v)", event, err, h.header)
	}
	if err := signaturetest.Verify(hook.Secret, h.header.Get("webhook-id"), h.header.Get("webhook-timestamp"),
		h.header.Get("webhook-signature"), append(slices.Clone(h.body), ' '), f.clk.Now(), 5*time.Minute); err == nil {
		f.t.Errorf("%s: the signature verifies a body it was not made for", event)
	}
	// As any Standard Webhooks library computes it, not only as Kessai's
	// own VerifyWebhook does.
	if want := standardSignature(f.t, hook.Secret, h.header.Get("webhook-id"), h.header.Get("webhook-timestamp"), h.body); !slices.Contains(strings.Fields(h.header.Get("webhook-signature")), want) {
		f.t.Errorf("%s: webhook-signature %q lacks the Standard Webhooks signature %q", event, h.header.Get("webhook-signature"), want)
	}
	if ts, err := strconv.ParseInt(h.header.Get("webhook-timestamp"), 10, 64); err != nil || ts != h.at.Unix() {
		f.t.Errorf("%s: webhook-timestamp %q, want the attempt's time %d", event, h.header.Get("webhook-timestamp"), h.at.Unix())
	}
	if _, err := time.Parse(time.RFC3339Nano, e.CreatedOn); err != nil {
		f.t.Errorf("%s: created_on %q: %v", event, e.CreatedOn, err)
	}
	if getPath != "" {
		var want, got bytes.Buffer
		if err := json.Compact(&want, f.get(getPath)); err != nil {
			f.t.Fatal(err)
		}
		if err := json.Compact(&got, e.Data); err != nil {
			f.t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			f.t.Errorf("%s: data\n%s\nis not what GET %s answers\n%s", event, got.Bytes(), getPath, want.Bytes())
		}
	}
}

// standardSignature is the Standard Webhooks v1 signature, written out:
// base64 of HMAC-SHA256, keyed with the secret's base64 after whsec_, of
// "{id}.{timestamp}.{body}".
func standardSignature(t *testing.T, secret, id, timestamp string, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") || len(key) < 24 {
		t.Fatalf("signing secret %q is not whsec_ and 24 or more bytes in base64", secret)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + timestamp + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestWebhookEveryEvent: every event Kessai sends today reaches the
// webhooks that hear it, signed, with the webhook's auth_token and the
// resource as a GET answers it; a webhook that does not hear an event, an
// inactive one, another store's and the other mode's get nothing, and a
// merchant-level webhook hears its stores' events.
func TestWebhookEveryEvent(t *testing.T) {
	f := newHookFixture(t, hookOptions{})
	ctx := context.Background()
	store := f.demo.StoreID
	all := payment.WebhookEvents()

	hookAll := f.webhook(f.demo.Caller, store, "/all", true, all...)
	hookFinished := f.webhook(f.demo.Caller, store, "/finished", true, payment.EventChargeFinished)
	f.webhook(f.demo.Caller, store, "/inactive", false, all...)
	// The spec's spelling of the token 3-D Secure trigger hears it too.
	hookSpelling := f.webhook(f.demo.Caller, store, "/spelling", true, "token_three_d_s_updated")

	// Another store of the same merchant, the same store in live mode, and
	// the merchant itself.
	other := &payment.Store{ID: payment.NewID(), MerchantID: f.demo.MerchantID, Name: "Other", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: f.clk.Now()}
	if err := f.st.DB.Update(ctx, func(tx payment.Tx) error { return tx.CreateStore(ctx, other) }); err != nil {
		t.Fatal(err)
	}
	otherTok, err := f.svc.Access.IssueStoreAppToken(ctx, other.ID, payment.NewAppToken{Mode: payment.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	f.webhook(f.caller(otherTok), other.ID, "/other-store", true, all...)
	liveTok, err := f.svc.Access.IssueStoreAppToken(ctx, store, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	// A live webhook may not name the loopback receiver: its URL is one
	// no delivery could reach, and its log must stay empty.
	liveURL := "https://live.invalid/live"
	hookLive, err := f.svc.Notify.CreateWebhook(ctx, f.caller(liveTok), store, payment.WebhookInput{Triggers: all, URL: &liveURL})
	if err != nil {
		t.Fatal(err)
	}
	merchTok, err := f.svc.Access.IssueMerchantAppToken(ctx, f.demo.MerchantID, payment.NewAppToken{Mode: payment.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	hookMerchant := f.webhook(f.caller(merchTok), uuid.Nil, "/merchant", true, all...)

	seenAll, seenFinished, seenSpelling := 0, 0, 0
	var got map[string]hookRequest
	tokensPath := "/stores/" + store.String() + "/tokens/"
	chargesPath := "/stores/" + store.String() + "/charges/"

	// token_created.
	tok := f.token(payment.OneTime, "4000020000000000", false)
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventTokenCreated)
	f.checkDelivery(got[payment.EventTokenCreated], hookAll, payment.EventTokenCreated, tokensPath+tok.ID.String())

	// token_updated: the merchant's PATCH.
	email := "changed@example.com"
	if _, err := f.svc.Tokens.UpdateToken(ctx, f.demo.Caller, store, tok.ID, payment.TokenUpdate{Email: &email}); err != nil {
		t.Fatal(err)
	}
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventTokenUpdated)
	f.checkDelivery(got[payment.EventTokenUpdated], hookAll, payment.EventTokenUpdated, tokensPath+tok.ID.String())

	// token_three_ds_updated: 3-D Secure on the token (frictionless).
	if _, err := f.svc.Tokens.EnableTokenThreeDS(ctx, f.demo.Caller, store, tok.ID, payment.TokenThreeDSRequest{}); err != nil {
		t.Fatal(err)
	}
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventTokenThreeDSUpdated)
	f.checkDelivery(got[payment.EventTokenThreeDSUpdated], hookAll, payment.EventTokenThreeDSUpdated, tokensPath+tok.ID.String())
	got, seenSpelling = f.expect("/spelling", seenSpelling, payment.EventTokenThreeDSUpdated)
	f.checkDelivery(got[payment.EventTokenThreeDSUpdated], hookSpelling, payment.EventTokenThreeDSUpdated, "")

	// token_cvv_auth_updated: a recurring token checked by a CVV
	// authorisation; recurring_token_deleted when it is deleted.
	rec := f.token(payment.Recurring, "4000020000000000", true)
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventTokenCreated, payment.EventTokenCVVAuthUpdated)
	f.checkDelivery(got[payment.EventTokenCVVAuthUpdated], hookAll, payment.EventTokenCVVAuthUpdated, tokensPath+rec.ID.String())
	if !strings.Contains(string(got[payment.EventTokenCreated].envelope(t).Data), `"pending"`) {
		t.Errorf("token_created of a token with a CVV check does not show it pending: %s", got[payment.EventTokenCreated].body)
	}
	if err := f.svc.Tokens.DeleteToken(ctx, f.demo.Caller, store, rec.ID); err != nil {
		t.Fatal(err)
	}
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventRecurringTokenDelete)
	f.checkDelivery(got[payment.EventRecurringTokenDelete], hookAll, payment.EventRecurringTokenDelete, tokensPath+rec.ID.String())

	// charge_updated (authorized), then cancel_finished and charge_finished
	// (canceled).
	ch := f.charge(tok, false, nil)
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventChargeUpdated)
	f.checkDelivery(got[payment.EventChargeUpdated], hookAll, payment.EventChargeUpdated, chargesPath+ch.ID.String())
	if !strings.Contains(string(got[payment.EventChargeUpdated].body), `"authorized"`) {
		t.Errorf("charge_updated of an authorisation: %s", got[payment.EventChargeUpdated].body)
	}
	cn, err := f.svc.Refunds.CreateCancel(ctx, f.demo.Caller, store, ch.ID, payment.NewCancel{})
	if err != nil {
		t.Fatal(err)
	}
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventCancelFinished, payment.EventChargeFinished)
	f.checkDelivery(got[payment.EventCancelFinished], hookAll, payment.EventCancelFinished,
		chargesPath+ch.ID.String()+"/cancels/"+cn.ID.String())
	f.checkDelivery(got[payment.EventChargeFinished], hookAll, payment.EventChargeFinished, chargesPath+ch.ID.String())
	got, seenFinished = f.expect("/finished", seenFinished, payment.EventChargeFinished)
	f.checkDelivery(got[payment.EventChargeFinished], hookFinished, payment.EventChargeFinished, chargesPath+ch.ID.String())

	// charge_updated (awaiting): a card whose issuer challenges.
	chTok := f.token(payment.OneTime, "4000002760003184", false)
	awaiting := f.charge(chTok, true, &payment.ThreeDSSettings{Mode: "normal"})
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventTokenCreated, payment.EventChargeUpdated)
	f.checkDelivery(got[payment.EventChargeUpdated], hookAll, payment.EventChargeUpdated, chargesPath+awaiting.ID.String())
	if !strings.Contains(string(got[payment.EventChargeUpdated].body), `"awaiting"`) {
		t.Errorf("charge_updated of a challenged charge: %s", got[payment.EventChargeUpdated].body)
	}

	// charge_finished (successful), then refund_finished.
	paidTok := f.token(payment.OneTime, "4000020000000000", false)
	paid := f.charge(paidTok, true, nil)
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventTokenCreated, payment.EventChargeFinished)
	f.checkDelivery(got[payment.EventChargeFinished], hookAll, payment.EventChargeFinished, chargesPath+paid.ID.String())
	_, seenFinished = f.expect("/finished", seenFinished, payment.EventChargeFinished)
	rf, err := f.svc.Refunds.CreateRefund(ctx, f.demo.Caller, store, paid.ID, payment.NewRefund{Amount: 200, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	f.mustDrain()
	got, seenAll = f.expect("/all", seenAll, payment.EventRefundFinished)
	f.checkDelivery(got[payment.EventRefundFinished], hookAll, payment.EventRefundFinished,
		chargesPath+paid.ID.String()+"/refunds/"+rf.ID.String())
	f.expect("/finished", seenFinished)
	f.expect("/spelling", seenSpelling)

	// The merchant-level webhook heard the store's events, the same ones.
	all1, allM := f.rc.at("/all"), f.rc.at("/merchant")
	if len(allM) != len(all1) {
		t.Errorf("the merchant's webhook got %d deliveries, the store's %d", len(allM), len(all1))
	}
	for _, h := range allM {
		f.checkDelivery(h, hookMerchant, h.envelope(t).Event, "")
	}
	// Each event was sent once to each webhook that hears it.
	ids := map[string]int{}
	for _, h := range all1 {
		ids[h.envelope(t).ID]++
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("event %s delivered %d times to one webhook", id, n)
		}
	}
	for _, path := range []string{"/inactive", "/other-store"} {
		if n := len(f.rc.at(path)); n != 0 {
			t.Errorf("%s got %d deliveries", path, n)
		}
	}
	if log, err := f.svc.Notify.WebhookDeliveries(ctx, f.caller(liveTok), store, hookLive.ID, payment.ListParams{Limit: 10}); err != nil || len(log.Items) != 0 {
		t.Errorf("the live webhook's log: %d lines, %v; want none", len(log.Items), err)
	}
	// The delivery log says they were delivered.
	page, err := f.svc.Notify.WebhookDeliveries(ctx, f.demo.Caller, store, hookAll.ID, payment.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != len(all1) {
		t.Errorf("the delivery log has %d entries, the receiver got %d", len(page.Items), len(all1))
	}
	for _, e := range page.Items {
		if d := e.Delivery; d.Status != payment.DeliverySuccessful || d.Attempts != 1 || d.LastStatus != http.StatusOK || d.DeliveredOn == nil {
			t.Errorf("delivery of %s: %+v", e.Event.Name, d)
		}
	}
}

// TestWebhookRetrySchedule: a receiver that keeps failing is tried again
// at +5 s, +5 min, +30 min, +2 h, +5 h, +10 h, +10 h, +14 h and +20 h
// after each failure (within the ±10 % jitter), not before; after the
// tenth failure the delivery is failed and no work is left for it. A
// receiver that recovers meanwhile gets it at its next attempt.
func TestWebhookRetrySchedule(t *testing.T) {
	f := newHookFixture(t, hookOptions{})
	ctx := context.Background()
	store := f.demo.StoreID
	hook := f.webhook(f.demo.Caller, store, "/failing", true, payment.EventTokenCreated)
	f.rc.answer("/failing", http.StatusInternalServerError)
	schedule := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour}

	f.token(payment.OneTime, "4000020000000000", false)
	if err := f.drain(); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("the first attempt: %v, want its failure with 500", err)
	}
	page, err := f.svc.Notify.WebhookDeliveries(ctx, f.demo.Caller, store, hook.ID, payment.ListParams{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("delivery log: %v, %+v", err, page)
	}
	id := page.Items[0].Delivery.ID
	delivery := func() *payment.Delivery {
		var d *payment.Delivery
		if err := f.st.DB.View(ctx, func(tx payment.Tx) error {
			var err error
			d, err = tx.Delivery(ctx, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	item := func() *payment.Work {
		var w *payment.Work
		err := f.st.DB.View(ctx, func(tx payment.Tx) error {
			var err error
			w, err = tx.Work(ctx, payment.WorkWebhookDelivery, id)
			return err
		})
		if payment.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	for n, d := range schedule {
		failedAt := f.rc.at("/failing")[n].at
		if got := delivery(); got.Status != payment.DeliveryPending || got.Attempts != n+1 || got.LastStatus != 500 ||
			got.LastError != "status 500" {
			t.Fatalf("after attempt %d: %+v", n+1, got)
		}
		w := item()
		if w == nil {
			t.Fatalf("no work left after the failed attempt %d", n+1)
		}
		wait := w.Due.Sub(failedAt)
		if lo, hi := d-d/10, d+d/10; wait < lo || wait > hi {
			t.Errorf("attempt %d comes %v after the failure %d, want %v ± 10 %%", n+2, wait, n+1, d)
		}
		// Not a moment before it is due.
		f.clk.Set(w.Due.Add(-time.Millisecond))
		_ = f.drain()
		if got := len(f.rc.at("/failing")); got != n+1 {
			t.Fatalf("attempt %d came %v early", n+2, time.Millisecond)
		}
		f.clk.Set(w.Due)
		_ = f.drain()
		if got := len(f.rc.at("/failing")); got != n+2 {
			t.Fatalf("attempt %d did not come when due: %d attempts", n+2, got)
		}
		if signed := f.rc.at("/failing")[n+1]; signed.header.Get("webhook-id") != f.rc.at("/failing")[0].header.Get("webhook-id") {
			t.Errorf("attempt %d has another webhook-id than the first", n+2)
		} else {
			f.checkDelivery(signed, hook, payment.EventTokenCreated, "")
		}
	}
	if got := delivery(); got.Status != payment.DeliveryFailed || got.Attempts != 10 || got.DeliveredOn != nil || got.LastError != "status 500" {
		t.Errorf("after the tenth failure: %+v, want failed (status 500) after 10 attempts", got)
	}
	if w := item(); w != nil {
		t.Errorf("work left after the delivery failed: %+v", w)
	}
	f.clk.Advance(30 * 24 * time.Hour)
	_ = f.drain()
	if got := len(f.rc.at("/failing")); got != 10 {
		t.Errorf("%d attempts in all, want 10", got)
	}

	// A receiver that recovers gets the next attempt and it counts.
	f.rc.answer("/failing", http.StatusOK)
	f.token(payment.OneTime, "4000020000000000", false)
	_ = f.drain()
	f.rc.answer("/failing", http.StatusFound) // a redirect is a failure
	f.token(payment.OneTime, "4000020000000000", false)
	if err := f.drain(); err == nil || !strings.Contains(err.Error(), "302") {
		t.Errorf("a 302: %v, want a failed attempt", err)
	}
	f.rc.answer("/failing", http.StatusOK)
	f.clk.Advance(6 * time.Second)
	f.mustDrain()
	page, err = f.svc.Notify.WebhookDeliveries(ctx, f.demo.Caller, store, hook.ID, payment.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[payment.DeliveryStatus]int{}
	for _, e := range page.Items {
		statuses[e.Delivery.Status]++
	}
	if statuses[payment.DeliverySuccessful] != 2 || statuses[payment.DeliveryFailed] != 1 || len(page.Items) != 3 {
		t.Errorf("delivery statuses %v, want 2 successful and the failed one", statuses)
	}
}

// failLedger is storage whose next ledger write fails when armed: the
// transaction that changed a charge rolls back after it wrote the event.
type failLedger struct {
	payment.Storage
	armed atomic.Bool
}

func (s *failLedger) Update(ctx context.Context, fn func(payment.Tx) error) error {
	return s.Storage.Update(ctx, func(tx payment.Tx) error { return fn(&failLedgerTx{Tx: tx, s: s}) })
}

type failLedgerTx struct {
	payment.Tx
	s *failLedger
}

func (tx *failLedgerTx) PutLedgerEntry(ctx context.Context, e *payment.LedgerEntry) error {
	if tx.s.armed.CompareAndSwap(true, false) {
		return errors.New("injected: the ledger write fails")
	}
	return tx.Tx.PutLedgerEntry(ctx, e)
}

// TestWebhookRolledBackChangeAnnouncesNothing: a charge's authorisation
// whose transaction rolls back after the charge was written (and with it
// its event) leaves no event, no delivery and sends nothing; when the
// retried authorisation commits, its event goes out once.
func TestWebhookRolledBackChangeAnnouncesNothing(t *testing.T) {
	var storage *failLedger
	f := newHookFixture(t, hookOptions{storage: func(db *sqlite.DB) payment.Storage {
		storage = &failLedger{Storage: db}
		return storage
	}})
	ctx := context.Background()
	hook := f.webhook(f.demo.Caller, f.demo.StoreID, "/hook", true, payment.EventChargeFinished, payment.EventChargeUpdated)
	tok := f.token(payment.OneTime, "4000020000000000", false)
	before, err := f.svc.Notify.Events(ctx, f.demo.Caller, uuid.Nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	ch := f.charge(tok, true, nil)
	storage.armed.Store(true)
	if err := f.drain(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("the authorisation: %v, want the injected failure", err)
	}
	after, err := f.svc.Notify.Events(ctx, f.demo.Caller, uuid.Nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the rolled-back authorisation left %d events", len(after)-len(before))
	}
	page, err := f.svc.Notify.WebhookDeliveries(ctx, f.demo.Caller, f.demo.StoreID, hook.ID, payment.ListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 || f.rc.total() != 0 {
		t.Errorf("the rolled-back authorisation left %d deliveries, sent %d", len(page.Items), f.rc.total())
	}
	// The retry commits, and announces it once.
	f.clk.Advance(2 * time.Second)
	f.mustDrain()
	got, _ := f.expect("/hook", 0, payment.EventChargeFinished)
	f.checkDelivery(got[payment.EventChargeFinished], hook, payment.EventChargeFinished,
		"/stores/"+f.demo.StoreID.String()+"/charges/"+ch.ID.String())
}

// TestWebhookDeactivatedBeforeDelivery: a webhook turned off after an event
// was queued for it does not get it: the delivery is given up at its
// attempt (failed, saying why), not sent and not retried.
func TestWebhookDeactivatedBeforeDelivery(t *testing.T) {
	f := newHookFixture(t, hookOptions{})
	ctx := context.Background()
	store := f.demo.StoreID
	hook := f.webhook(f.demo.Caller, store, "/off", true, payment.EventTokenCreated)
	f.token(payment.OneTime, "4000020000000000", false)
	off := false
	if _, err := f.svc.Notify.UpdateWebhook(ctx, f.demo.Caller, store, hook.ID, payment.WebhookInput{Active: &off}); err != nil {
		t.Fatal(err)
	}
	f.mustDrain()
	if n := len(f.rc.at("/off")); n != 0 {
		t.Errorf("an inactive webhook received %d deliveries", n)
	}
	page, err := f.svc.Notify.WebhookDeliveries(ctx, f.demo.Caller, store, hook.ID, payment.ListParams{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("delivery log: %v, %+v", err, page)
	}
	d := page.Items[0].Delivery
	if d.Status != payment.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, "inactive") {
		t.Errorf("delivery = %+v, want failed once, saying the webhook is inactive", d)
	}
}
