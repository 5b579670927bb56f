package payment

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// WebhookRequest is one delivery attempt as it goes out: a POST of Body to
// URL with Headers. Live says whether the receiver must be a public
// address (live mode refuses loopback, private and link-local ones).
type WebhookRequest struct {
	URL     string
	Headers map[string]string
	Body    []byte
	Live    bool
}

// WebhookSender sends one delivery attempt and returns the receiver's
// HTTP status, or an error when no answer came (refused address, timeout,
// connection reset). The HTTP implementation is package webhookhttp.
type WebhookSender interface {
	Send(ctx context.Context, req WebhookRequest) (status int, err error)
	// CheckURL says, when a webhook is registered or its URL changed,
	// whether deliveries of its mode could go there: an error that is
	// ErrWebhookAddress when the URL's host is, or now resolves to, an
	// address they may never reach. A name that does not resolve now is
	// no error: the sender checks the address again at every connection,
	// which is what keeps a name re-bound later (DNS rebinding) out.
	CheckURL(ctx context.Context, rawURL string, live bool) error
}

// ErrWebhookAddress is the error (errors.Is) of a webhook URL or a
// delivery attempt refused for the address it names or reaches.
var ErrWebhookAddress = errors.New("an address webhooks may not reach")

// ErrWebhookTimeout is the error (errors.Is) of a delivery attempt that
// got no answer in time.
var ErrWebhookTimeout = errors.New("no answer in time")

// The failures of an attempt the gateway decides itself, which the
// delivery log tells as they are.
var (
	errWebhookGone     = errors.New("the webhook was deleted")
	errWebhookInactive = errors.New("the webhook is inactive")
)

// attemptError is what the merchant is shown of a failed attempt (the
// delivery log, the console's test delivery): "status N", "timed out",
// "failed: address not allowed" or "failed", never the connection's own
// error. A test-mode webhook may name any host and port; if its log told
// "connection refused" from "no route to host", a reset or a TLS alert, it
// would scan the gateway's network for whoever registers one. The detail
// goes to the server log (logAttempt).
func attemptError(status int, err error) string {
	switch {
	case status != 0:
		return "status " + strconv.Itoa(status)
	case errors.Is(err, errWebhookGone), errors.Is(err, errWebhookInactive):
		return err.Error()
	case errors.Is(err, ErrWebhookTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, ErrWebhookAddress):
		return "failed: address not allowed"
	}
	return "failed"
}

// logAttempt puts a failed attempt's detail in the server log, for the
// operator: what the merchant is shown says only attemptError's words.
func (s *Service) logAttempt(ctx context.Context, hook *Webhook, eventID uuid.UUID, status int, err error) {
	s.logger.WarnContext(ctx, "webhook attempt failed", "webhook", hook.ID, "event", eventID, "status", status, "error", err)
}

// checkWebhookURL refuses, as VALIDATION_ERROR naming url, a webhook URL
// whose host is, or resolves to, an address deliveries of the mode may
// not reach (ReasonAddressNotAllowed). It runs before any transaction: it
// may wait on a name's resolution.
func (s *Service) checkWebhookURL(ctx context.Context, rawURL string, mode Mode) error {
	if s.webhookSender == nil {
		return nil
	}
	err := s.webhookSender.CheckURL(ctx, rawURL, mode == ModeLive)
	switch {
	case errors.Is(err, ErrWebhookAddress):
		return Invalid("url", ReasonAddressNotAllowed)
	case err != nil:
		return err
	}
	return nil
}

// deliverySchedule is how long a delivery waits after its n-th failed
// attempt (n = 1…): about three days in all, then it is given up.
var deliverySchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour,
}

// deliveryBackoff is deliverySchedule with ±10 % jitter, so that the
// retries of many deliveries that failed together (a receiver's outage)
// do not all come back at once.
func deliveryBackoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := deliverySchedule[min(n, len(deliverySchedule))-1]
	jitter := time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
	return d + jitter
}

// deliveryTimeout is how long a receiver has to answer (2xx within it is
// success).
const deliveryTimeout = 15 * time.Second

// WebhookBody is what a delivery posts: {"id","event","data","created_on"}.
func WebhookBody(ev *Event) ([]byte, error) {
	return json.Marshal(struct {
		ID        uuid.UUID       `json:"id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
		CreatedOn string          `json:"created_on"`
	}{ev.ID, ev.Name, ev.Data, ev.CreatedOn.UTC().Format(time.RFC3339Nano)})
}

// SignWebhook is the Standard Webhooks signature of a message: "v1," and
// the base64 HMAC-SHA256, under the secret's key (whsec_ and base64), of
// id.timestamp.body.
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("webhook signing secret: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// webhookRequest is the POST of ev to hook at now: the event's body,
// signed with the webhook's secret, and the headers every delivery has.
func (s *Service) webhookRequest(hook *Webhook, ev *Event, now time.Time) (WebhookRequest, error) {
	secret, err := s.SigningSecret(hook)
	if err != nil {
		return WebhookRequest{}, err
	}
	body, err := WebhookBody(ev)
	if err != nil {
		return WebhookRequest{}, err
	}
	sig, err := SignWebhook(secret, ev.ID.String(), now.Unix(), body)
	if err != nil {
		return WebhookRequest{}, err
	}
	headers := map[string]string{
		"Content-Type":      "application/json",
		"Idempotency-Key":   ev.ID.String(),
		"webhook-id":        ev.ID.String(),
		"webhook-timestamp": strconv.FormatInt(now.Unix(), 10),
		"webhook-signature": sig,
	}
	if hook.AuthToken != "" {
		headers["Authorization"] = hook.AuthToken
	}
	return WebhookRequest{URL: hook.URL, Headers: headers, Body: body, Live: hook.Mode == ModeLive}, nil
}

// VerifyWebhook checks a delivery's signature headers as a receiver should
// (the demo storefront does): one of the signatures in signatureHeader
// (space-separated) matches, and the timestamp is within tolerance of now,
// so that a captured delivery cannot be replayed later.
func VerifyWebhook(secret, id, timestampHeader, signatureHeader string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestampHeader, 10, 64)
	if err != nil {
		return errors.New("webhook: bad timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook: timestamp out of tolerance")
	}
	want, err := SignWebhook(secret, id, ts, body)
	if err != nil {
		return err
	}
	for _, sig := range strings.Fields(signatureHeader) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhook: no matching signature")
}

// errDeliveryFailed is an attempt the receiver did not accept; the item is
// retried on the delivery schedule.
var errDeliveryFailed = errors.New("webhook delivery failed")

// deliver makes one attempt at a delivery: it signs and posts the event,
// records the outcome on the delivery, and on a failure leaves the item to
// be retried on the schedule, or after the last attempt gives up. The
// record and the item's completion are one transaction.
func (s *Service) deliver(ctx context.Context, w Work) error {
	var d *Delivery
	var ev *Event
	var hook *Webhook
	gone := false
	err := s.view(ctx, func(tx Tx) error {
		var err error
		if d, err = tx.Delivery(ctx, w.ID); err != nil {
			return err
		}
		if ev, err = tx.Event(ctx, d.EventID); err != nil {
			return err
		}
		hook, err = tx.Webhook(ctx, d.WebhookID)
		if IsNotFound(err) {
			gone, err = true, nil
		}
		return err
	})
	if IsNotFound(err) {
		return s.completeWork(ctx, w) // its webhook was deleted with its log
	}
	if err != nil {
		return err
	}
	if d.Status != DeliveryPending {
		return s.completeWork(ctx, w)
	}
	switch {
	case s.webhookSender == nil:
		return errors.New("no webhook sender is configured")
	case gone:
		return s.recordAttempt(ctx, w, 0, errWebhookGone, true)
	case !hook.Active:
		return s.recordAttempt(ctx, w, 0, errWebhookInactive, true)
	}
	req, err := s.webhookRequest(hook, ev, s.clock.Now())
	if err != nil {
		return err
	}
	sendCtx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	status, sendErr := s.webhookSender.Send(sendCtx, req)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err() // stopping: the attempt is given back, not counted
	}
	if sendErr == nil && (status < 200 || status > 299) {
		sendErr = fmt.Errorf("the receiver answered %d", status)
	}
	if sendErr != nil {
		s.logAttempt(ctx, hook, ev.ID, status, sendErr)
	}
	return s.recordAttempt(ctx, w, status, sendErr, false)
}

// recordAttempt records an attempt's outcome on its delivery. A success
// completes the item; a failure is retried on the schedule (the returned
// error makes the worker do so) until the last attempt, or at once given
// up when final.
func (s *Service) recordAttempt(ctx context.Context, w Work, status int, sendErr error, final bool) error {
	retry := false
	var result DeliveryStatus
	var lag time.Duration
	err := s.update(ctx, func(tx *writeTx) error {
		result = ""
		d, err := tx.Delivery(ctx, w.ID)
		if err != nil || d.Status != DeliveryPending {
			if err == nil {
				err = tx.CompleteWork(ctx, w)
			}
			return err
		}
		now := s.clock.Now()
		d.Attempts++
		d.LastStatus, d.UpdatedOn = status, now
		retry = false
		switch {
		case sendErr == nil:
			d.Status, d.LastError, d.DeliveredOn = DeliverySuccessful, "", &now
		case final || d.Attempts > len(deliverySchedule):
			d.Status, d.LastError = DeliveryFailed, attemptError(status, sendErr)
		default:
			d.LastError = attemptError(status, sendErr)
			retry = true
		}
		result, lag = d.Status, now.Sub(d.CreatedOn)
		if retry {
			result = DeliveryRetrying
		}
		if err := tx.UpdateDelivery(ctx, d); err != nil {
			return err
		}
		if retry {
			return nil // the worker counts the attempt and reschedules it
		}
		return tx.CompleteWork(ctx, w)
	})
	if err != nil {
		return err
	}
	switch result {
	case "":
		// Settled meanwhile by another attempt: this one counts for nothing.
	case DeliverySuccessful:
		s.meter.WebhookAttempted(result, lag)
	default:
		s.meter.WebhookAttempted(result, 0)
	}
	if retry {
		return fmt.Errorf("%w: %v", errDeliveryFailed, sendErr)
	}
	return nil
}

// DeliveryLogEntry is one line of a webhook's delivery log.
type DeliveryLogEntry struct {
	Delivery *Delivery
	Event    *Event
}

// WebhookDeliveries is a webhook's delivery log. Its cursor is an event's
// id, the id of the log's line.
func (s *Service) WebhookDeliveries(ctx context.Context, c *Caller, storeID, id uuid.UUID, p ListParams) (Page[DeliveryLogEntry], error) {
	if err := c.requireSecret(); err != nil {
		return Page[DeliveryLogEntry]{}, err
	}
	var out Page[DeliveryLogEntry]
	err := s.view(ctx, func(tx Tx) error {
		if _, err := s.visibleWebhook(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		// The log's lines are named by their events' ids, which is what a
		// client pages with; the storage pages by delivery. Another id is
		// left as it is: ids are time-ordered, so it still places the page,
		// as an unknown cursor does in every list.
		if p.Cursor != uuid.Nil {
			d, err := tx.DeliveryFor(ctx, id, p.Cursor)
			switch {
			case err == nil:
				p.Cursor = d.ID
			case !IsNotFound(err):
				return err
			}
		}
		page, err := tx.ListDeliveries(ctx, id, p)
		if err != nil {
			return err
		}
		out = Page[DeliveryLogEntry]{HasMore: page.HasMore, TotalHits: page.TotalHits, Items: make([]DeliveryLogEntry, 0, len(page.Items))}
		for _, d := range page.Items {
			ev, err := tx.Event(ctx, d.EventID)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, DeliveryLogEntry{Delivery: d, Event: ev})
		}
		return nil
	})
	return out, err
}

// RedeliverEvent sends an event to a webhook again, as a new series of
// attempts: after the receiver fixed what made it fail, or to replay one it
// already took (at-least-once receivers handle that).
func (s *Service) RedeliverEvent(ctx context.Context, c *Caller, storeID, webhookID, eventID uuid.UUID) (DeliveryLogEntry, error) {
	if err := c.requireSecret(); err != nil {
		return DeliveryLogEntry{}, err
	}
	var out DeliveryLogEntry
	err := s.update(ctx, func(tx *writeTx) error {
		hook, err := s.visibleWebhook(ctx, tx, c, storeID, webhookID)
		if err != nil {
			return err
		}
		d, err := tx.DeliveryFor(ctx, hook.ID, eventID)
		if err != nil {
			return err
		}
		ev, err := tx.Event(ctx, eventID)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		d.Status, d.Attempts, d.LastError, d.LastStatus, d.DeliveredOn, d.UpdatedOn = DeliveryPending, 0, "", 0, nil, now
		if err := tx.UpdateDelivery(ctx, d); err != nil {
			return err
		}
		out = DeliveryLogEntry{Delivery: d, Event: ev}
		// An item still queued for it (a retry not yet due) stays: the
		// delivery is pending again, and it comes due now or at its time.
		return tx.enqueueWork(ctx, WorkWebhookDelivery, d.ID, now)
	})
	return out, err
}

// Events returns, oldest first, up to limit test- or live-mode events of
// the caller's store (or a merchant token's merchant) after the event
// after: the feed of `kessai listen`. It needs the secret.
func (s *Service) Events(ctx context.Context, c *Caller, after uuid.UUID, limit int) ([]*Event, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	f := EventFilter{MerchantID: c.MerchantID(), Mode: c.token.Mode, After: after}
	if !c.token.IsMerchantToken() {
		f.StoreID = c.token.StoreID
	}
	var evs []*Event
	err := s.view(ctx, func(tx Tx) error {
		var err error
		evs, err = tx.ListEvents(ctx, f, limit)
		return err
	})
	return evs, err
}

// EventsBell returns a channel closed when this instance next commits
// events.
func (s *Service) EventsBell() <-chan struct{} { return s.events.wait() }
