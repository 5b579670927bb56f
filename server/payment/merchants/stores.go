// Package merchants is what a merchant sees of its own account: its
// merchant and stores, each store's settings, the dashboard, the
// transactions ledger, and the limits the gateway sets it. It reads what
// the other capabilities write and writes only a store's settings.
package merchants

import (
	"context"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// Service is what a merchant sees of its own account: its merchant,
// its stores and their settings, its dashboard and transactions, and the
// limits the gateway sets it.
type Service struct {
	db     *outbox.DB
	clock  payment.Clock
	limits payment.ResourceLimits
}

// New returns the merchants' views over db.
func New(db *outbox.DB, clock payment.Clock, cfg payment.Config) *Service {
	if cfg.Limits == (payment.ResourceLimits{}) {
		cfg.Limits = payment.DefaultResourceLimits()
	}
	if cfg.Limits.Webhooks <= 0 {
		cfg.Limits.Webhooks = payment.DefaultWebhooks
	}
	return &Service{db: db, clock: clock, limits: cfg.Limits}
}

// Me returns the caller's merchant.
func (s *Service) Me(ctx context.Context, c *payment.Caller) (*payment.Merchant, error) {
	var m *payment.Merchant
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		m, err = tx.Merchant(ctx, c.MerchantID())
		return err
	})
	return m, err
}

// MeByID returns the caller's merchant when id is its id, and NOT_FOUND
// for any other: GET /me/{id} (what PHP's Merchant->fetch() asks for) is
// the caller's own merchant under another name, never a way to read
// someone else's.
func (s *Service) MeByID(ctx context.Context, c *payment.Caller, id uuid.UUID) (*payment.Merchant, error) {
	if id != c.MerchantID() {
		return nil, payment.NotFound("merchant")
	}
	return s.Me(ctx, c)
}

// Stores lists the stores the caller can act on: all of a merchant token's
// merchant, or a store token's own store.
func (s *Service) Stores(ctx context.Context, c *payment.Caller, p payment.ListParams) (payment.Page[*payment.Store], error) {
	if !c.IsMerchantToken() {
		st, err := s.Store(ctx, c, c.StoreID())
		if err != nil {
			return payment.Page[*payment.Store]{}, err
		}
		return payment.SinglePage(st, p), nil
	}
	var page payment.Page[*payment.Store]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		page, err = tx.ListStores(ctx, c.MerchantID(), p)
		return err
	})
	return page, err
}

// Store returns one store the caller may see; anything else is NOT_FOUND.
func (s *Service) Store(ctx context.Context, c *payment.Caller, id uuid.UUID) (*payment.Store, error) {
	var st *payment.Store
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		st, err = payment.VisibleStore(ctx, tx, c, id)
		return err
	})
	return st, err
}

// CheckoutInfo returns the payment settings of a store token's store.
// Merchant tokens have no single store and are refused.
func (s *Service) CheckoutInfo(ctx context.Context, c *payment.Caller) (*payment.CheckoutInfo, error) {
	if c.IsMerchantToken() {
		return nil, payment.Errorf(payment.CodeInvalidPermissions, "checkout info needs a store app token")
	}
	st, err := s.Store(ctx, c, c.StoreID())
	if err != nil {
		return nil, err
	}
	return &payment.CheckoutInfo{Store: st, Mode: c.Mode()}, nil
}

// CustomerID returns the customer UUID a store uses for one of its own
// customer ids (UnivaPay's wire format). It is derived, not stored: the same store
// and local id always give the same UUID, and different stores never share
// one.
func (s *Service) CustomerID(ctx context.Context, c *payment.Caller, storeID uuid.UUID, localID string) (uuid.UUID, error) {
	if localID == "" {
		return uuid.Nil, payment.Invalid("customer_id", payment.ReasonRequired)
	}
	if n := utf8.RuneCountInString(localID); n > 64 || !utf8.ValidString(localID) {
		return uuid.Nil, payment.Invalid("customer_id", payment.ReasonInvalidLength)
	}
	st, err := s.Store(ctx, c, storeID)
	if err != nil {
		return uuid.Nil, err
	}
	return uuid.NewSHA1(st.ID, []byte(localID)), nil
}
