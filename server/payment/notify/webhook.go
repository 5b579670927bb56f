// Package notify tells merchants what happened: their webhooks (made,
// listed, changed, pinged), the deliveries of the events every capability
// announces in its own transactions (outbox.Tx.Announce), with their
// retries, log and redeliveries, and the event stream (kessai listen).
package notify

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/server/payment/workqueue"
)

// Service tells merchants what happened: their webhooks, the deliveries
// of the events the other capabilities announce (outbox.Tx.Announce), the
// delivery log and redeliveries, test pings, and the event stream.
type Service struct {
	db    *outbox.DB
	work  *workqueue.Queue
	clock payment.Clock
	// vault seals webhooks' signing secrets at rest.
	vault  payment.CardVault
	limits payment.ResourceLimits
	// webhookSender delivers webhooks; nil leaves deliveries queued.
	webhookSender payment.WebhookSender
	logger        *slog.Logger
	meter         payment.Meter
}

// New returns the notifications over db; it registers the webhook
// deliveries with work.
func New(db *outbox.DB, work *workqueue.Queue, clock payment.Clock, cfg payment.Config) *Service {
	if cfg.Limits == (payment.ResourceLimits{}) {
		cfg.Limits = payment.DefaultResourceLimits()
	}
	if cfg.Limits.Webhooks <= 0 {
		cfg.Limits.Webhooks = payment.DefaultWebhooks
	}
	s := &Service{
		db:            db,
		work:          work,
		clock:         clock,
		vault:         cfg.Vault,
		limits:        cfg.Limits,
		webhookSender: cfg.WebhookSender,
		logger:        cmp.Or(cfg.Logger, slog.Default()),
		meter:         cmp.Or(cfg.Meter, payment.Meter(payment.NoMeter{})),
	}
	work.Handle(payment.WorkWebhookDelivery, workqueue.Handler{Run: s.deliver, Backoff: deliveryBackoff})
	return s
}

func (s *Service) webhookQuota() payment.Quota {
	return payment.Quota{Resource: "webhook", Limit: s.limits.Webhooks}
}

// webhookScope is what the webhook quota counts per: a store, or a
// merchant for its merchant-level webhooks.
func webhookScope(merchantID, storeID uuid.UUID) string {
	if storeID == uuid.Nil {
		return "merchant:" + merchantID.String()
	}
	return "store:" + storeID.String()
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
func (s *Service) SigningSecret(w *payment.Webhook) (string, error) {
	b, err := s.vault.Open(w.SigningSecret, signingSecretAssociated(w.ID))
	return string(b), err
}

// webhookOwner is the store (or, uuid.Nil for a merchant token without a
// store in the path, the merchant) a webhook request is for.
func (s *Service) webhookOwner(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID uuid.UUID) (uuid.UUID, error) {
	if storeID == uuid.Nil {
		if c.IsMerchantToken() {
			return uuid.Nil, nil
		}
		storeID = c.StoreID()
	}
	if _, err := payment.VisibleStore(ctx, tx, c, storeID); err != nil {
		return uuid.Nil, err
	}
	return storeID, nil
}

// CreateWebhook adds a webhook to a store (storeID), or for a merchant
// token without a store, to the merchant. A URL the owner already has is
// WEBHOOK_URL_EXISTS; an active webhook past the quota (20 per store, and
// 20 merchant-level per merchant) is RESOURCE_LIMIT_REACHED.
func (s *Service) CreateWebhook(ctx context.Context, c *payment.Caller, storeID uuid.UUID, in payment.WebhookInput) (*payment.CreatedWebhook, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if err := in.Check(true); err != nil {
		return nil, err
	}
	if err := s.checkWebhookURL(ctx, *in.URL, c.Mode()); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	w := &payment.Webhook{
		ID: payment.NewID(), MerchantID: c.MerchantID(), Mode: c.Mode(), Triggers: in.Triggers, URL: *in.URL,
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
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if w.StoreID, err = s.webhookOwner(ctx, tx, c, storeID); err != nil {
			return err
		}
		if err := s.uniqueWebhookURL(ctx, tx, w); err != nil {
			return err
		}
		if w.Active {
			if err := s.webhookQuota().Take(ctx, tx, webhookScope(w.MerchantID, w.StoreID), now); err != nil {
				return err
			}
		}
		return tx.CreateWebhook(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return &payment.CreatedWebhook{Webhook: w, Secret: secret}, nil
}

// uniqueWebhookURL refuses a URL another webhook of the same owner and
// mode has (compared as the storage engine's WebhookURLTaken says).
func (s *Service) uniqueWebhookURL(ctx context.Context, tx payment.Tx, w *payment.Webhook) error {
	taken, err := tx.WebhookURLTaken(ctx, w)
	if err != nil {
		return err
	}
	if taken {
		return payment.Errorf(payment.CodeWebhookURLExists, "this owner already has a webhook with that URL")
	}
	return nil
}

func (s *Service) visibleWebhook(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID) (*payment.Webhook, error) {
	owner, err := s.webhookOwner(ctx, tx, c, storeID)
	if err != nil {
		return nil, err
	}
	w, err := tx.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	if w.MerchantID != c.MerchantID() || w.Mode != c.Mode() || (storeID != uuid.Nil || !c.IsMerchantToken()) && w.StoreID != owner {
		return nil, payment.NotFound("webhook")
	}
	return w, nil
}

// Webhook returns one webhook.
func (s *Service) Webhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.Webhook, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var w *payment.Webhook
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		w, err = s.visibleWebhook(ctx, tx, c, storeID, id)
		return err
	})
	return w, err
}

// Webhooks lists a store's webhooks, or a merchant token's own
// (merchant-level) ones.
func (s *Service) Webhooks(ctx context.Context, c *payment.Caller, storeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Webhook], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.Webhook]{}, err
	}
	var page payment.Page[*payment.Webhook]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		owner, err := s.webhookOwner(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		page, err = tx.ListWebhooks(ctx, payment.WebhookFilter{MerchantID: c.MerchantID(), StoreID: owner, OwnerOnly: true, Mode: c.Mode()}, p)
		return err
	})
	return page, err
}

// UpdateWebhook changes a webhook. Activating one counts against the
// quota again, deactivating frees its place.
func (s *Service) UpdateWebhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, in payment.WebhookInput) (*payment.Webhook, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if err := in.Check(false); err != nil {
		return nil, err
	}
	// A webhook is of its caller's mode (visibleWebhook finds no other).
	if in.URL != nil {
		if err := s.checkWebhookURL(ctx, *in.URL, c.Mode()); err != nil {
			return nil, err
		}
	}
	var w *payment.Webhook
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
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
			err = s.webhookQuota().Take(ctx, tx, scope, now)
		case !w.Active && wasActive:
			err = s.webhookQuota().Release(ctx, tx, scope, now)
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
func (s *Service) DeleteWebhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) error {
	if err := c.RequireSecret(); err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		w, err := s.visibleWebhook(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if w.Active {
			if err := s.webhookQuota().Release(ctx, tx, webhookScope(w.MerchantID, w.StoreID), s.clock.Now()); err != nil {
				return err
			}
		}
		return tx.DeleteWebhook(ctx, w.ID)
	})
}
