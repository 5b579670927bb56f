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

// Service holds the rules. Every API operation is one of its methods.
type Service struct {
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

// FollowSubscriptionCharges sets who carries a subscription on when one of
// its payments' charges is authorised or ends: f runs in the transaction
// that records it (moveCharge), so the charge and what follows from it
// commit together. The subscriptions set it when they are made.
func (s *Service) FollowSubscriptionCharges(f func(ctx context.Context, tx *outbox.Tx, ch *payment.Charge) error) {
	s.chargeEnded = f
}

// NewService returns the payment rules over db; it registers the kinds
// of work they queue with work.
func NewService(db *outbox.DB, work *workqueue.Queue, clock payment.Clock, cfg payment.Config) *Service {
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
	s := &Service{
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
	s.handleWork(work)
	return s
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
