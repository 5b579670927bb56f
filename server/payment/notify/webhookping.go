package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// webhookPingTimeout is how long a ping waits for the receiver:
// someone is looking at the page that asked for it.
const webhookPingTimeout = 10 * time.Second

// PingWebhook sends a webhook one test event, once and now: a body shaped
// and signed as every delivery is (WebhookBody, SignWebhook, the same
// headers), through the same sender, so that a merchant sees whether the
// receiver answers and checks signatures. The event is not stored, counts
// as no delivery and appears in no log. The webhook is found as Webhook
// finds it (another merchant's, store's or mode's is NOT_FOUND), and it
// needs the secret. An inactive webhook may be tested too.
func (s *Service) PingWebhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (payment.WebhookPingResult, error) {
	hook, err := s.Webhook(ctx, c, storeID, id)
	if err != nil {
		return payment.WebhookPingResult{}, err
	}
	now := s.clock.Now()
	ev := &payment.Event{ID: payment.NewID(), MerchantID: hook.MerchantID, StoreID: hook.StoreID, Mode: hook.Mode,
		Name: payment.EventWebhookTest, CreatedOn: now}
	out := payment.WebhookPingResult{EventID: ev.ID}
	if ev.Data, err = json.Marshal(struct {
		WebhookID uuid.UUID    `json:"webhook_id"`
		StoreID   *uuid.UUID   `json:"store_id"`
		Mode      payment.Mode `json:"mode"`
		Message   string       `json:"message"`
	}{hook.ID, optionalID(hook.StoreID), hook.Mode, "A test event sent from the Kessai console. It is not a real event."}); err != nil {
		return out, err
	}
	if s.webhookSender == nil {
		out.Error = "this gateway sends no webhooks: no webhook sender is configured"
		return out, nil
	}
	req, err := s.webhookRequest(hook, ev, now)
	if err != nil {
		return out, err
	}
	sendCtx, cancel := context.WithTimeout(ctx, webhookPingTimeout)
	defer cancel()
	status, sendErr := s.webhookSender.Send(sendCtx, req)
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	out.Status = status
	switch {
	case sendErr != nil:
		// As coarse as the delivery log: the answer comes at once, which
		// would make a finer one a port scanner's.
		s.logAttempt(ctx, hook, ev.ID, status, sendErr)
		out.Error = attemptError(status, sendErr)
	case status < 200 || status > 299:
		out.Error = fmt.Sprintf("the receiver answered %d", status)
	}
	return out, nil
}

// optionalID is nil for uuid.Nil (a merchant-level webhook has no store).
func optionalID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
