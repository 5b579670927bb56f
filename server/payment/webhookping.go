package payment

import (
	"github.com/google/uuid"
)

// EventWebhookTest is the name of the event PingWebhook sends. It is no
// trigger a webhook can name: only a merchant asking for a test gets it.
const EventWebhookTest = "webhook_test"

// WebhookPingResult is what a ping got: the receiver's HTTP
// status (0 when no answer came) and, when it was no 2xx, why, in words
// that hold no secret.
type WebhookPingResult struct {
	EventID uuid.UUID
	Status  int
	Error   string
}

// OK reports whether the receiver accepted the test event.
func (r WebhookPingResult) OK() bool { return r.Error == "" && r.Status >= 200 && r.Status <= 299 }
