package demo

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The storefront hears of its payments from the gateway too, as a shop
// that cannot count on its shopper coming back does: it registers a
// webhook to its own receiver when it starts, and an order whose charge
// the gateway reports finished and successful is paid, even if the
// shopper paid with a wallet in another tab and closed the window.

// WebhookPath is the storefront's receiver of the gateway's events.
const WebhookPath = "/webhooks/kessai"

// WebhookFile is where the storefront keeps its webhook, in DataDir: its
// id, URL, Authorization value and signing secret.
const WebhookFile = "demo-webhook.json"

// webhookTriggers are the events the storefront asks for: the end of a
// charge, which pays an order (or ends one awaiting a konbini payment or
// a bank transfer unpaid), and its updates (awaiting the shopper, a
// deadline moved), which place or follow an order awaiting payment; a
// bank transfer's deposits (slip.go); a subscription's payments, failures
// and cancellation, which its order follows (subscription.go).
var webhookTriggers = []string{"charge_finished", "charge_updated", "bank_transfer_status_updated",
	"subscription_payment", "subscription_failure", "subscription_canceled"}

// signatureTolerance is how far a delivery's timestamp may be from the
// shop's clock (Standard Webhooks' recommendation): an older delivery is
// refused, so that a captured one cannot be replayed later.
const signatureTolerance = 5 * time.Minute

// maxWebhookBody caps what the receiver reads of a delivery.
const maxWebhookBody = 1 << 20

// webhookState is the storefront's webhook as the gateway registered it.
//
// The signing secret is shown once, when the webhook is created, so the
// shop keeps it in its own data file, beside demo-credentials.json (which
// holds the app token's secret, and is as private). A restart then keeps
// the same webhook, its delivery log and its deliveries still due. When
// the file is lost, the webhook the gateway has at the shop's URL has a
// secret nobody knows: the shop deletes it and creates another.
type webhookState struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	AuthToken string `json:"auth_token"`
	Secret    string `json:"secret"`
}

func loadWebhookState(path string) (*webhookState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st webhookState
	if err := json.Unmarshal(b, &st); err != nil || st.ID == "" || st.Secret == "" {
		return nil, nil // registered afresh
	}
	return &st, nil
}

func (d *shop) webhookFile() string { return filepath.Join(d.cfg.DataDir, WebhookFile) }

// wireWebhook is the gateway's webhook resource, as far as the shop reads it.
type wireWebhook struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Triggers  []string `json:"triggers"`
	AuthToken *string  `json:"auth_token"`
	Active    bool     `json:"active"`
	Secret    string   `json:"secret"`
}

// gatewayError is an answer of the gateway's other than 2xx.
type gatewayError struct {
	Status int
	Code   string
}

func (e *gatewayError) Error() string {
	return fmt.Sprintf("the gateway answered %d %s", e.Status, e.Code)
}

// callGateway makes an API request with the secret-bearing token and
// decodes a JSON answer into out (nil: none is read).
func (d *shop) callGateway(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.cfg.GatewayURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.cfg.Secret+"."+d.cfg.JWT)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("the gateway could not be reached: %w", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return errors.New("the gateway's answer was cut short")
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(b, &e)
		return &gatewayError{Status: res.StatusCode, Code: e.Code}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the gateway's answer to %s %s is not what the shop expected: %w", method, path, err)
	}
	return nil
}

// webhooksPath is the store's webhooks on the gateway's API.
func (d *shop) webhooksPath() string { return "/stores/" + url.PathEscape(d.cfg.StoreID) + "/webhooks" }

// findWebhook is the store's webhook at u, or nil.
func (d *shop) findWebhook(ctx context.Context, u string) (*wireWebhook, error) {
	cursor := ""
	for range 100 {
		q := url.Values{"limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Items   []wireWebhook `json:"items"`
			HasMore bool          `json:"has_more"`
		}
		if err := d.callGateway(ctx, http.MethodGet, d.webhooksPath()+"?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		for i := range page.Items {
			if page.Items[i].URL == u {
				return &page.Items[i], nil
			}
		}
		if !page.HasMore || len(page.Items) == 0 {
			return nil, nil
		}
		cursor = page.Items[len(page.Items)-1].ID
	}
	return nil, errors.New("the gateway's webhook list does not end")
}

// registerWebhook makes sure the gateway has the storefront's webhook, and
// that the shop knows its secret: the one it kept is reused (brought back
// to the triggers and Authorization it needs); one the gateway has at the
// shop's URL with a secret the shop lost is deleted; then one is created.
// It is idempotent: run at every start, it changes nothing that is right.
func (d *shop) registerWebhook(ctx context.Context) (*webhookState, error) {
	u := d.cfg.WebhookURL
	saved, err := loadWebhookState(d.webhookFile())
	if err != nil {
		return nil, err
	}
	found, err := d.findWebhook(ctx, u)
	if err != nil {
		return nil, err
	}
	if found != nil && saved != nil && found.ID == saved.ID && saved.URL == u {
		current := found.Active && found.AuthToken != nil && *found.AuthToken == saved.AuthToken
		for _, t := range webhookTriggers {
			current = current && slices.Contains(found.Triggers, t)
		}
		if !current {
			patch := map[string]any{"triggers": webhookTriggers, "auth_token": saved.AuthToken, "active": true}
			if err := d.callGateway(ctx, http.MethodPatch, d.webhooksPath()+"/"+url.PathEscape(found.ID), patch, nil); err != nil {
				return nil, err
			}
		}
		d.hook.Store(saved)
		return saved, nil
	}
	if found != nil {
		d.log.Info("demo: replacing the webhook whose signing secret the shop does not have", "webhook", found.ID)
		if err := d.deleteWebhook(ctx, found.ID); err != nil {
			return nil, err
		}
	}
	// The shop's webhook at the URL it had before (its address changed)
	// would send its deliveries nowhere.
	if saved != nil && saved.URL != u && (found == nil || found.ID != saved.ID) {
		d.log.Info("demo: removing the webhook at the shop's former URL", "webhook", saved.ID, "url", saved.URL)
		if err := d.deleteWebhook(ctx, saved.ID); err != nil {
			return nil, err
		}
	}
	st := &webhookState{URL: u, AuthToken: "Bearer " + randomString(24)}
	var created wireWebhook
	in := map[string]any{"triggers": webhookTriggers, "url": u, "auth_token": st.AuthToken}
	if err := d.callGateway(ctx, http.MethodPost, d.webhooksPath(), in, &created); err != nil {
		return nil, err
	}
	if created.ID == "" || !strings.HasPrefix(created.Secret, "whsec_") {
		return nil, errors.New("the gateway's new webhook has no id or signing secret")
	}
	st.ID, st.Secret = created.ID, created.Secret
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	// Receive with it at once; should the file not be written, the next
	// start replaces the webhook.
	d.hook.Store(st)
	if err := writeFileAtomic(d.webhookFile(), append(b, '\n')); err != nil {
		return nil, err
	}
	d.log.Info("demo: webhook registered", "webhook", st.ID, "url", u)
	return st, nil
}

// deleteWebhook removes one of the store's webhooks; one already gone is
// no error.
func (d *shop) deleteWebhook(ctx context.Context, id string) error {
	err := d.callGateway(ctx, http.MethodDelete, d.webhooksPath()+"/"+url.PathEscape(id), nil, nil)
	var ge *gatewayError
	if errors.As(err, &ge) && ge.Status == http.StatusNotFound {
		return nil
	}
	return err
}

// keepRegistering registers the webhook, trying again with a growing pause
// while the gateway is not there yet (it starts listening after the
// storefront is made) or refuses, until it succeeds or ctx ends.
func (d *shop) keepRegistering(ctx context.Context) {
	wait := 200 * time.Millisecond
	for failures := 0; ; failures++ {
		_, err := d.registerWebhook(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		if failures%10 == 3 {
			d.log.Warn("demo: registering the storefront's webhook; trying again", "url", d.cfg.WebhookURL, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Minute)
	}
}

// verifySignature checks a delivery's Standard Webhooks headers: its
// timestamp is within tolerance of now, and one of the signatures in
// webhook-signature (space-separated "v1,<base64>") is the HMAC-SHA256,
// under the secret's key, of "<webhook-id>.<webhook-timestamp>.<body>".
func verifySignature(secret string, h http.Header, body []byte, now time.Time) error {
	id, stamp := h.Get("webhook-id"), h.Get("webhook-timestamp")
	ts, err := strconv.ParseInt(stamp, 10, 64)
	if id == "" || err != nil {
		return errors.New("no webhook-id or webhook-timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > signatureTolerance || d < -signatureTolerance {
		return errors.New("the delivery's timestamp is too far from now")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + stamp + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no valid signature")
}

// receiveWebhook is POST /webhooks/kessai: a delivery from the gateway.
// Only a delivery with the webhook's Authorization and a valid, recent
// signature is read (401 otherwise). It answers 2xx for every delivery it
// has dealt with, also those it ignores, and 5xx only when the gateway
// should try again: before the webhook is registered, or when the order
// could not be saved.
func (d *shop) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	hook := d.hook.Load()
	if hook == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(hook.AuthToken)) != 1 {
		d.log.Warn("demo: webhook delivery with a wrong Authorization")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if err := verifySignature(hook.Secret, r.Header, body, d.now()); err != nil {
		d.log.Warn("demo: webhook delivery refused", "error", err)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var ev struct {
		ID    string          `json:"id"`
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	switch ev.Event {
	case "charge_finished", "charge_updated":
		var ch gatewayCharge
		dec := json.NewDecoder(bytes.NewReader(ev.Data))
		dec.UseNumber()
		if err := dec.Decode(&ch); err != nil || ch.ID == "" {
			http.Error(w, "not a charge", http.StatusBadRequest)
			return
		}
		settle := d.settleNotified
		if ev.Event == "charge_updated" {
			settle = func(ch *gatewayCharge) error { return d.awaitingNotified(r.Context(), ch) }
		}
		if err := settle(&ch); err != nil {
			d.log.Error("demo: saving an order from a notification", "event", ev.Event, "charge", ch.ID, "error", err)
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
	case "bank_transfer_status_updated":
		if err := d.transferEvent(ev.Data); err != nil {
			if errors.Is(err, errNotATransfer) {
				http.Error(w, "not a bank transfer's status", http.StatusBadRequest)
				return
			}
			d.log.Error("demo: saving a transfer's deposits", "error", err)
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
	case "subscription_payment", "subscription_failure", "subscription_canceled":
		if err := d.subscriptionEvent(r.Context(), ev.Event, ev.Data); err != nil {
			if errors.Is(err, errNotASubscription) {
				http.Error(w, "not a subscription", http.StatusBadRequest)
				return
			}
			d.log.Error("demo: saving a subscription's order", "event", ev.Event, "error", err)
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
	default:
		d.log.Debug("demo: webhook event", "event", ev.Event, "id", ev.ID)
	}
	w.WriteHeader(http.StatusNoContent)
}

// settleNotified pays the order of a charge the gateway reports finished,
// with the same check as the shopper's return: a successful charge of this
// store, for the amount and currency the checkout asked, naming the order,
// and not a subscription's (whose own events record its order).
// A charge already recorded, or an order already paid, changes nothing
// (deliveries come at least once, and the shopper may be back first).
func (d *shop) settleNotified(ch *gatewayCharge) error {
	ref := metadataString(ch.Metadata, metaOrderID)
	if ref == "" {
		return nil // not one of the shop's orders
	}
	if o, ok := d.orders.byCharge(ch.ID); ok {
		// An order awaiting a konbini payment or a bank transfer ends:
		// paid, or not.
		if o.Status != orderAwaiting || o.Ref != ref {
			return nil
		}
		if problem := ch.mismatch(d.cfg.StoreID, o.Amount, o.Currency, ref); problem != "" {
			d.log.Warn("demo: a notified charge does not pay its order", "order", ref, "charge", ch.ID, "problem", problem)
			return nil
		}
		d.log.Info("demo: order awaiting payment ended", "order", ref, "charge", ch.ID, "status", ch.Status)
		return d.slipOrderNews(o, ch)
	}
	if o, ok := d.orders.get(ref); ok {
		d.log.Warn("demo: a second charge for a paid order", "order", ref, "charge", ch.ID, "paid_by", o.ChargeID)
		return nil
	}
	co, ok := d.checkouts.get(ref)
	if !ok {
		d.log.Warn("demo: a charge for an order the shop does not know", "order", ref, "charge", ch.ID)
		return nil
	}
	if problem := ch.mismatch(d.cfg.StoreID, co.Amount, co.Currency, ref); problem != "" {
		d.log.Warn("demo: a notified charge does not pay its order", "order", ref, "charge", ch.ID, "problem", problem)
		return nil
	}
	if ch.Status != "successful" {
		d.log.Info("demo: a notified charge did not succeed", "order", ref, "charge", ch.ID, "status", ch.Status)
		return nil
	}
	o := d.chargeOrder(ch, ref, methodNotified, co.Items)
	if err := d.orders.add(o); err != nil {
		if errors.Is(err, errDuplicateOrder) {
			return nil // the shopper's return, just now
		}
		return err
	}
	d.log.Info("demo: order paid", "order", ref, "charge", ch.ID, "method", methodNotified)
	if err := d.checkouts.remove(ref); err != nil {
		d.log.Warn("demo: forgetting a paid checkout", "order", ref, "error", err)
	}
	return nil
}
