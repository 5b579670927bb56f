package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

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
	case errors.Is(err, payment.ErrWebhookTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, payment.ErrWebhookAddress):
		return "failed: address not allowed"
	}
	return "failed"
}

// logAttempt puts a failed attempt's detail in the server log, for the
// operator: what the merchant is shown says only attemptError's words.
func (s *Service) logAttempt(ctx context.Context, hook *payment.Webhook, eventID uuid.UUID, status int, err error) {
	s.logger.WarnContext(ctx, "webhook attempt failed", "webhook", hook.ID, "event", eventID, "status", status, "error", err)
}

// checkWebhookURL refuses, as VALIDATION_ERROR naming url, a webhook URL
// whose host is, or resolves to, an address deliveries of the mode may
// not reach (ReasonAddressNotAllowed). It runs before any transaction: it
// may wait on a name's resolution.
func (s *Service) checkWebhookURL(ctx context.Context, rawURL string, mode payment.Mode) error {
	if s.webhookSender == nil {
		return nil
	}
	err := s.webhookSender.CheckURL(ctx, rawURL, mode == payment.ModeLive)
	switch {
	case errors.Is(err, payment.ErrWebhookAddress):
		return payment.Invalid("url", payment.ReasonAddressNotAllowed)
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

// webhookRequest is the POST of ev to hook at now: the event's body,
// signed with the webhook's secret, and the headers every delivery has.
func (s *Service) webhookRequest(hook *payment.Webhook, ev *payment.Event, now time.Time) (payment.WebhookRequest, error) {
	secret, err := s.SigningSecret(hook)
	if err != nil {
		return payment.WebhookRequest{}, err
	}
	body, err := payment.WebhookBody(ev)
	if err != nil {
		return payment.WebhookRequest{}, err
	}
	sig, err := payment.SignWebhook(secret, ev.ID.String(), now.Unix(), body)
	if err != nil {
		return payment.WebhookRequest{}, err
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
	return payment.WebhookRequest{URL: hook.URL, Headers: headers, Body: body, Live: hook.Mode == payment.ModeLive}, nil
}

// errDeliveryFailed is an attempt the receiver did not accept; the item is
// retried on the delivery schedule.
var errDeliveryFailed = errors.New("webhook delivery failed")

// deliver makes one attempt at a delivery: it signs and posts the event,
// records the outcome on the delivery, and on a failure leaves the item to
// be retried on the schedule, or after the last attempt gives up. The
// record and the item's completion are one transaction.
func (s *Service) deliver(ctx context.Context, w payment.Work) error {
	var d *payment.Delivery
	var ev *payment.Event
	var hook *payment.Webhook
	gone := false
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		if d, err = tx.Delivery(ctx, w.ID); err != nil {
			return err
		}
		if ev, err = tx.Event(ctx, d.EventID); err != nil {
			return err
		}
		hook, err = tx.Webhook(ctx, d.WebhookID)
		if payment.IsNotFound(err) {
			gone, err = true, nil
		}
		return err
	})
	if payment.IsNotFound(err) {
		return s.work.Complete(ctx, w) // its webhook was deleted with its log
	}
	if err != nil {
		return err
	}
	if d.Status != payment.DeliveryPending {
		return s.work.Complete(ctx, w)
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
func (s *Service) recordAttempt(ctx context.Context, w payment.Work, status int, sendErr error, final bool) error {
	retry := false
	var result payment.DeliveryStatus
	var lag time.Duration
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		result = ""
		d, err := tx.Delivery(ctx, w.ID)
		if err != nil || d.Status != payment.DeliveryPending {
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
			d.Status, d.LastError, d.DeliveredOn = payment.DeliverySuccessful, "", &now
		case final || d.Attempts > len(deliverySchedule):
			d.Status, d.LastError = payment.DeliveryFailed, attemptError(status, sendErr)
		default:
			d.LastError = attemptError(status, sendErr)
			retry = true
		}
		result, lag = d.Status, now.Sub(d.CreatedOn)
		if retry {
			result = payment.DeliveryRetrying
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
	case payment.DeliverySuccessful:
		s.meter.WebhookAttempted(result, lag)
	default:
		s.meter.WebhookAttempted(result, 0)
	}
	if retry {
		return fmt.Errorf("%w: %v", errDeliveryFailed, sendErr)
	}
	return nil
}

// WebhookDeliveries is a webhook's delivery log. Its cursor is an event's
// id, the id of the log's line.
func (s *Service) WebhookDeliveries(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ListParams) (payment.Page[payment.DeliveryLogEntry], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[payment.DeliveryLogEntry]{}, err
	}
	var out payment.Page[payment.DeliveryLogEntry]
	err := s.db.View(ctx, func(tx payment.Tx) error {
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
			case !payment.IsNotFound(err):
				return err
			}
		}
		page, err := tx.ListDeliveries(ctx, id, p)
		if err != nil {
			return err
		}
		out = payment.Page[payment.DeliveryLogEntry]{HasMore: page.HasMore, TotalHits: page.TotalHits, Items: make([]payment.DeliveryLogEntry, 0, len(page.Items))}
		for _, d := range page.Items {
			ev, err := tx.Event(ctx, d.EventID)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, payment.DeliveryLogEntry{Delivery: d, Event: ev})
		}
		return nil
	})
	return out, err
}

// RedeliverEvent sends an event to a webhook again, as a new series of
// attempts: after the receiver fixed what made it fail, or to replay one it
// already took (at-least-once receivers handle that).
func (s *Service) RedeliverEvent(ctx context.Context, c *payment.Caller, storeID, webhookID, eventID uuid.UUID) (payment.DeliveryLogEntry, error) {
	if err := c.RequireSecret(); err != nil {
		return payment.DeliveryLogEntry{}, err
	}
	var out payment.DeliveryLogEntry
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
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
		d.Status, d.Attempts, d.LastError, d.LastStatus, d.DeliveredOn, d.UpdatedOn = payment.DeliveryPending, 0, "", 0, nil, now
		if err := tx.UpdateDelivery(ctx, d); err != nil {
			return err
		}
		out = payment.DeliveryLogEntry{Delivery: d, Event: ev}
		// An item still queued for it (a retry not yet due) stays: the
		// delivery is pending again, and it comes due now or at its time.
		return tx.EnqueueWork(ctx, payment.WorkWebhookDelivery, d.ID, now)
	})
	return out, err
}

// Events returns, oldest first, up to limit test- or live-mode events of
// the caller's store (or a merchant token's merchant) after the event
// after: the feed of `kessai listen`. It needs the secret.
func (s *Service) Events(ctx context.Context, c *payment.Caller, after uuid.UUID, limit int) ([]*payment.Event, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	f := payment.EventFilter{MerchantID: c.MerchantID(), Mode: c.Mode(), After: after}
	if !c.IsMerchantToken() {
		f.StoreID = c.StoreID()
	}
	var evs []*payment.Event
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		evs, err = tx.ListEvents(ctx, f, limit)
		return err
	})
	return evs, err
}

// EventsBell returns a channel closed when this instance next commits
// events.
func (s *Service) EventsBell() <-chan struct{} { return s.db.EventsBell() }
