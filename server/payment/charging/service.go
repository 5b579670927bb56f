// Package charging holds the payment rules: transaction tokens, charges,
// their refunds and cancels, captures, 3-D Secure and the shopper's
// approvals (wallets, QR), and the work that carries them to the acquirer.
// Each payment method (card, online wallets, merchant QR) implements one
// seam, paymentMethod in method.go: what its tokens hold, how a charge on
// it proceeds and what awaiting its shopper means; the rules around it
// never ask which method they hold. Its three faces (Service for charges,
// Tokens, Refunds) share one core.
package charging

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/server/payment/workqueue"
)

// core is what the payment rules' three faces (Service, Tokens, Refunds)
// share: their parts, and the steps more than one of them takes (a
// charge's moves and visibility, a card opened from the vault, 3-D
// Secure's challenge).
type core struct {
	// db runs its transactions and carries out their effects.
	db    *outbox.DB
	clock payment.Clock
	// publicOrigin is the gateway's own origin, whose pages act with a
	// store's browser token (fromGatewayPage).
	publicOrigin string
	limits       payment.ResourceLimits
	vault        payment.CardVault
	processor    payment.Processor

	// work carries out the kinds of work the rules queue (handleWork).
	work *workqueue.Queue
	// walletExpiry is how long a wallet payment waits for its shopper.
	walletExpiry time.Duration
	logger       *slog.Logger
	// meter is told what was done, for the operators' metrics.
	meter payment.Meter
	// chargeEnded carries on what a subscription's charge was for, in the
	// transaction that authorises or ends it (FollowSubscriptionCharges).
	chargeEnded func(ctx context.Context, tx *outbox.Tx, ch *payment.Charge) error
}

// Service is the charges: made (on any payment method, through the
// seam in method.go), read and long-polled, captured, awaiting their
// shopper's approval or 3-D Secure, and carried on by the worker.
type Service struct{ *core }

// Tokens are the transaction tokens: made from a card or a wallet, read,
// changed and deleted, with their own 3-D Secure and CVV authorisation.
type Tokens struct{ *core }

// Refunds are the refunds and cancels (voids) of charges.
type Refunds struct{ *core }

// FollowSubscriptionCharges sets who carries a subscription on when one of
// its payments' charges is authorised or ends: f runs in the transaction
// that records it (moveCharge), so the charge and what follows from it
// commit together. The subscriptions set it when they are made.
func (s *Service) FollowSubscriptionCharges(f func(ctx context.Context, tx *outbox.Tx, ch *payment.Charge) error) {
	s.chargeEnded = f
}

// New returns the payment rules over db, their three faces over one core;
// it registers the kinds of work they queue with work.
func New(db *outbox.DB, work *workqueue.Queue, clock payment.Clock, cfg payment.Config) (*Service, *Tokens, *Refunds) {
	if cfg.Limits == (payment.ResourceLimits{}) {
		cfg.Limits = payment.DefaultResourceLimits()
	}
	if cfg.Limits.Webhooks <= 0 {
		cfg.Limits.Webhooks = payment.DefaultWebhooks
	}
	if cfg.WalletExpiry <= 0 {
		cfg.WalletExpiry = payment.DefaultWalletExpiry
	}
	if cfg.Meter == nil {
		cfg.Meter = payment.NoMeter{}
	}
	c := &core{
		db:           db,
		clock:        clock,
		publicOrigin: strings.TrimRight(cfg.PublicOrigin, "/"),
		limits:       cfg.Limits,
		vault:        cfg.Vault,
		processor:    cfg.Processor,
		work:         work,
		walletExpiry: cfg.WalletExpiry,
		logger:       cmp.Or(cfg.Logger, slog.Default()),
		meter:        cfg.Meter,
	}
	charges, tokens, refunds := &Service{c}, &Tokens{c}, &Refunds{c}
	handleWork(work, charges, tokens, refunds)
	return charges, tokens, refunds
}

// Ready reports whether storage answers a read: the readiness probe's
// question of the storage engine.
func (s *Service) Ready(ctx context.Context) error {
	return s.db.View(ctx, func(tx payment.Tx) error {
		_, err := tx.CountMerchants(ctx)
		return err
	})
}

// Clock returns the service's clock, for layers that must agree with it.
func (s *Service) Clock() payment.Clock { return s.clock }
