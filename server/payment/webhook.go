package payment

import (
	"time"

	"github.com/google/uuid"
)

// Webhook is a merchant's receiver of events (UnivaPay's wire format): a
// store's, or with StoreID uuid.Nil the merchant's for all its stores. It
// gets the events of its Mode only: a test-mode app token's webhook never
// hears of live payments.
type Webhook struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Mode       Mode
	Triggers   []string
	URL        string
	// AuthToken is sent verbatim as each delivery's Authorization header
	// (UnivaPay's convention, which shop plugins check).
	AuthToken string
	Active    bool
	// SigningSecret signs every delivery (Standard Webhooks); it is sealed
	// at rest and shown once, when the webhook is created.
	SigningSecret Sealed
	CreatedOn     time.Time
	UpdatedOn     time.Time
}

// The events Kessai sends (UnivaPay's names); subscription.go has the
// subscriptions'.
const (
	EventTokenCreated         = "token_created"
	EventTokenUpdated         = "token_updated"
	EventTokenCVVAuthUpdated  = "token_cvv_auth_updated"
	EventTokenThreeDSUpdated  = "token_three_ds_updated"
	EventRecurringTokenDelete = "recurring_token_deleted"
	EventChargeUpdated        = "charge_updated"
	EventChargeFinished       = "charge_finished"
	EventRefundFinished       = "refund_finished"
	EventCancelFinished       = "cancel_finished"
	// EventBankTransferStatusUpdated tells of a deposit to a bank
	// transfer's virtual account (its data a TransferStatus).
	EventBankTransferStatusUpdated = "bank_transfer_status_updated"
)

// WebhookTriggers are the triggers a webhook may name: the events above,
// and the spec's spelling of token 3-D Secure's, which the Node SDK
// spells otherwise (both are taken, and either hears the event).
var WebhookTriggers = map[string]string{
	EventTokenCreated: EventTokenCreated, EventTokenUpdated: EventTokenUpdated,
	EventTokenCVVAuthUpdated: EventTokenCVVAuthUpdated, EventTokenThreeDSUpdated: EventTokenThreeDSUpdated,
	"token_three_d_s_updated": EventTokenThreeDSUpdated, EventRecurringTokenDelete: EventRecurringTokenDelete,
	EventChargeUpdated: EventChargeUpdated, EventChargeFinished: EventChargeFinished,
	EventRefundFinished: EventRefundFinished, EventCancelFinished: EventCancelFinished,
	EventSubscriptionCreated: EventSubscriptionCreated, EventSubscriptionPayment: EventSubscriptionPayment,
	EventSubscriptionFailure: EventSubscriptionFailure, EventSubscriptionCanceled: EventSubscriptionCanceled,
	EventSubscriptionSuspended: EventSubscriptionSuspended, EventSubscriptionCompleted: EventSubscriptionCompleted,
	EventBankTransferStatusUpdated: EventBankTransferStatusUpdated,
}

// WebhookEvents are the event names Kessai sends.
func WebhookEvents() []string {
	return []string{EventTokenCreated, EventTokenUpdated, EventTokenCVVAuthUpdated, EventTokenThreeDSUpdated,
		EventRecurringTokenDelete, EventChargeUpdated, EventChargeFinished, EventRefundFinished, EventCancelFinished,
		EventSubscriptionCreated, EventSubscriptionPayment, EventSubscriptionFailure, EventSubscriptionCanceled,
		EventSubscriptionSuspended, EventSubscriptionCompleted, EventBankTransferStatusUpdated}
}

// Hears reports whether the webhook is to receive an event.
func (w *Webhook) Hears(event string) bool {
	for _, t := range w.Triggers {
		if WebhookTriggers[t] == event {
			return true
		}
	}
	return false
}

// Bounds of a webhook's fields.
const (
	maxWebhookTriggers  = 32
	maxWebhookAuthToken = 1024
)

// WebhookInput is a new webhook, or with nil fields left as they are, a
// change to one.
type WebhookInput struct {
	Triggers  []string
	URL       *string
	AuthToken *string
	Active    *bool
}

func (in *WebhookInput) Check(creating bool) error {
	var v Validation
	if in.Triggers != nil || creating {
		switch {
		case len(in.Triggers) == 0:
			v.Add("triggers", "MUST_HAVE_AT_LEAST_ONE_ELEMENT")
		case len(in.Triggers) > maxWebhookTriggers:
			v.Add("triggers", ReasonInvalidLength)
		default:
			seen := map[string]bool{}
			for _, t := range in.Triggers {
				if _, ok := WebhookTriggers[t]; !ok {
					v.Add("triggers", "INVALID_EVENT_FOR_STORE")
					break
				}
				if seen[t] {
					v.Add("triggers", "MUST_CONTAIN_UNIQUE_ELEMENTS_ONLY")
					break
				}
				seen[t] = true
			}
		}
	}
	switch {
	case in.URL == nil && creating, in.URL != nil && *in.URL == "":
		v.Add("url", ReasonRequired)
	case in.URL != nil:
		CheckURL(&v, "url", *in.URL)
	}
	if in.AuthToken != nil {
		CheckText(&v, "auth_token", *in.AuthToken, maxWebhookAuthToken)
	}
	return v.Err()
}

// CreatedWebhook is a new webhook with its signing secret, which is only
// ever shown this once.
type CreatedWebhook struct {
	*Webhook
	Secret string
}

// WebhookFilter narrows a webhook list: one owner's (OwnerOnly: the
// merchant-level ones when StoreID is uuid.Nil), or a merchant's all.
type WebhookFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	OwnerOnly  bool
	Mode       Mode
}

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
