package payment

import (
	"context"
	"crypto/rand"
	"encoding/base64"
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
)

// webhookTriggers are the triggers a webhook may name: the events above,
// and the spec's spelling of token 3-D Secure's, which the Node SDK
// spells otherwise (both are taken, and either hears the event).
var webhookTriggers = map[string]string{
	EventTokenCreated: EventTokenCreated, EventTokenUpdated: EventTokenUpdated,
	EventTokenCVVAuthUpdated: EventTokenCVVAuthUpdated, EventTokenThreeDSUpdated: EventTokenThreeDSUpdated,
	"token_three_d_s_updated": EventTokenThreeDSUpdated, EventRecurringTokenDelete: EventRecurringTokenDelete,
	EventChargeUpdated: EventChargeUpdated, EventChargeFinished: EventChargeFinished,
	EventRefundFinished: EventRefundFinished, EventCancelFinished: EventCancelFinished,
	EventSubscriptionCreated: EventSubscriptionCreated, EventSubscriptionPayment: EventSubscriptionPayment,
	EventSubscriptionFailure: EventSubscriptionFailure, EventSubscriptionCanceled: EventSubscriptionCanceled,
	EventSubscriptionSuspended: EventSubscriptionSuspended, EventSubscriptionCompleted: EventSubscriptionCompleted,
}

// WebhookEvents are the event names Kessai sends.
func WebhookEvents() []string {
	return []string{EventTokenCreated, EventTokenUpdated, EventTokenCVVAuthUpdated, EventTokenThreeDSUpdated,
		EventRecurringTokenDelete, EventChargeUpdated, EventChargeFinished, EventRefundFinished, EventCancelFinished,
		EventSubscriptionCreated, EventSubscriptionPayment, EventSubscriptionFailure, EventSubscriptionCanceled,
		EventSubscriptionSuspended, EventSubscriptionCompleted}
}

// hears reports whether the webhook is to receive an event.
func (w *Webhook) hears(event string) bool {
	for _, t := range w.Triggers {
		if webhookTriggers[t] == event {
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

func (s *Service) webhookQuota() Quota {
	return Quota{Resource: "webhook", Limit: s.limits.Webhooks}
}

// webhookScope is what the webhook quota counts per: a store, or a
// merchant for its merchant-level webhooks.
func webhookScope(merchantID, storeID uuid.UUID) string {
	if storeID == uuid.Nil {
		return "merchant:" + merchantID.String()
	}
	return "store:" + storeID.String()
}

// WebhookInput is a new webhook, or with nil fields left as they are, a
// change to one.
type WebhookInput struct {
	Triggers  []string
	URL       *string
	AuthToken *string
	Active    *bool
}

func (in *WebhookInput) check(creating bool) error {
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
				if _, ok := webhookTriggers[t]; !ok {
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
		checkURL(&v, "url", *in.URL)
	}
	if in.AuthToken != nil {
		checkText(&v, "auth_token", *in.AuthToken, maxWebhookAuthToken)
	}
	return v.Err()
}

// newSigningSecret is a webhook's signing secret as Standard Webhooks
// writes it: whsec_ and 24 random bytes in base64.
func newSigningSecret() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

func signingSecretAssociated(id uuid.UUID) []byte { return append([]byte("whsec:"), id[:]...) }

// SigningSecret opens a webhook's signing secret.
func (s *Service) SigningSecret(w *Webhook) (string, error) {
	b, err := s.vault.Open(w.SigningSecret, signingSecretAssociated(w.ID))
	return string(b), err
}

// CreatedWebhook is a new webhook with its signing secret, which is only
// ever shown this once.
type CreatedWebhook struct {
	*Webhook
	Secret string
}

// webhookOwner is the store (or, uuid.Nil for a merchant token without a
// store in the path, the merchant) a webhook request is for.
func (s *Service) webhookOwner(ctx context.Context, tx Tx, c *Caller, storeID uuid.UUID) (uuid.UUID, error) {
	if storeID == uuid.Nil {
		if c.token.IsMerchantToken() {
			return uuid.Nil, nil
		}
		storeID = c.token.StoreID
	}
	if _, err := s.visibleStore(ctx, tx, c, storeID); err != nil {
		return uuid.Nil, err
	}
	return storeID, nil
}

// CreateWebhook adds a webhook to a store (storeID), or for a merchant
// token without a store, to the merchant. A URL the owner already has is
// WEBHOOK_URL_EXISTS; an active webhook past the quota (20 per store, and
// 20 merchant-level per merchant) is RESOURCE_LIMIT_REACHED.
func (s *Service) CreateWebhook(ctx context.Context, c *Caller, storeID uuid.UUID, in WebhookInput) (*CreatedWebhook, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	if err := in.check(true); err != nil {
		return nil, err
	}
	if err := s.checkWebhookURL(ctx, *in.URL, c.token.Mode); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	w := &Webhook{
		ID: NewID(), MerchantID: c.MerchantID(), Mode: c.token.Mode, Triggers: in.Triggers, URL: *in.URL,
		Active: in.Active == nil || *in.Active, CreatedOn: now, UpdatedOn: now,
	}
	if in.AuthToken != nil {
		w.AuthToken = *in.AuthToken
	}
	secret := newSigningSecret()
	var err error
	if w.SigningSecret, err = s.vault.Seal([]byte(secret), signingSecretAssociated(w.ID)); err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx *writeTx) error {
		var err error
		if w.StoreID, err = s.webhookOwner(ctx, tx, c, storeID); err != nil {
			return err
		}
		if err := s.uniqueWebhookURL(ctx, tx, w); err != nil {
			return err
		}
		if w.Active {
			if err := s.webhookQuota().take(ctx, tx, webhookScope(w.MerchantID, w.StoreID), now); err != nil {
				return err
			}
		}
		return tx.CreateWebhook(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return &CreatedWebhook{Webhook: w, Secret: secret}, nil
}

// uniqueWebhookURL refuses a URL another webhook of the same owner and
// mode has (compared as the storage engine's WebhookURLTaken says).
func (s *Service) uniqueWebhookURL(ctx context.Context, tx Tx, w *Webhook) error {
	taken, err := tx.WebhookURLTaken(ctx, w)
	if err != nil {
		return err
	}
	if taken {
		return Errorf(CodeWebhookURLExists, "this owner already has a webhook with that URL")
	}
	return nil
}

// WebhookFilter narrows a webhook list: one owner's (OwnerOnly: the
// merchant-level ones when StoreID is uuid.Nil), or a merchant's all.
type WebhookFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	OwnerOnly  bool
	Mode       Mode
}

func (s *Service) visibleWebhook(ctx context.Context, tx Tx, c *Caller, storeID, id uuid.UUID) (*Webhook, error) {
	owner, err := s.webhookOwner(ctx, tx, c, storeID)
	if err != nil {
		return nil, err
	}
	w, err := tx.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	if w.MerchantID != c.MerchantID() || w.Mode != c.token.Mode || (storeID != uuid.Nil || !c.token.IsMerchantToken()) && w.StoreID != owner {
		return nil, NotFound("webhook")
	}
	return w, nil
}

// Webhook returns one webhook.
func (s *Service) Webhook(ctx context.Context, c *Caller, storeID, id uuid.UUID) (*Webhook, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var w *Webhook
	err := s.view(ctx, func(tx Tx) error {
		var err error
		w, err = s.visibleWebhook(ctx, tx, c, storeID, id)
		return err
	})
	return w, err
}

// Webhooks lists a store's webhooks, or a merchant token's own
// (merchant-level) ones.
func (s *Service) Webhooks(ctx context.Context, c *Caller, storeID uuid.UUID, p ListParams) (Page[*Webhook], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*Webhook]{}, err
	}
	var page Page[*Webhook]
	err := s.view(ctx, func(tx Tx) error {
		owner, err := s.webhookOwner(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		page, err = tx.ListWebhooks(ctx, WebhookFilter{MerchantID: c.MerchantID(), StoreID: owner, OwnerOnly: true, Mode: c.token.Mode}, p)
		return err
	})
	return page, err
}

// UpdateWebhook changes a webhook. Activating one counts against the
// quota again, deactivating frees its place.
func (s *Service) UpdateWebhook(ctx context.Context, c *Caller, storeID, id uuid.UUID, in WebhookInput) (*Webhook, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	if err := in.check(false); err != nil {
		return nil, err
	}
	// A webhook is of its caller's mode (visibleWebhook finds no other).
	if in.URL != nil {
		if err := s.checkWebhookURL(ctx, *in.URL, c.token.Mode); err != nil {
			return nil, err
		}
	}
	var w *Webhook
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		if w, err = s.visibleWebhook(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		now := s.clock.Now()
		wasActive := w.Active
		if in.Triggers != nil {
			w.Triggers = in.Triggers
		}
		if in.AuthToken != nil {
			w.AuthToken = *in.AuthToken
		}
		if in.Active != nil {
			w.Active = *in.Active
		}
		if in.URL != nil {
			w.URL = *in.URL
			if err := s.uniqueWebhookURL(ctx, tx, w); err != nil {
				return err
			}
		}
		scope := webhookScope(w.MerchantID, w.StoreID)
		switch {
		case w.Active && !wasActive:
			err = s.webhookQuota().take(ctx, tx, scope, now)
		case !w.Active && wasActive:
			err = s.webhookQuota().release(ctx, tx, scope, now)
		}
		if err != nil {
			return err
		}
		w.UpdatedOn = now
		return tx.UpdateWebhook(ctx, w)
	})
	return w, err
}

// DeleteWebhook removes a webhook; its deliveries not yet made are given
// up (they find it gone), its log goes with it.
func (s *Service) DeleteWebhook(ctx context.Context, c *Caller, storeID, id uuid.UUID) error {
	if err := c.requireSecret(); err != nil {
		return err
	}
	return s.update(ctx, func(tx *writeTx) error {
		w, err := s.visibleWebhook(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if w.Active {
			if err := s.webhookQuota().release(ctx, tx, webhookScope(w.MerchantID, w.StoreID), s.clock.Now()); err != nil {
				return err
			}
		}
		return tx.DeleteWebhook(ctx, w.ID)
	})
}
