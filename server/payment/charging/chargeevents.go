package charging

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ChargeEvents returns, oldest first, up to limit events of a charge and of
// its refunds and cancels (the first MaxLimit of each), for a page that
// tells a charge's story (the merchant console). The charge must be one
// the caller may see, as for Charge: another merchant's, another store's
// or another mode's is NOT_FOUND, and so are its events. It needs the
// secret, as the event feed does.
func (s *Service) ChargeEvents(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, limit int) ([]*payment.Event, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	limit = min(max(limit, 0), payment.MaxLimit)
	var evs []*payment.Event
	err := s.db.View(ctx, func(tx payment.Tx) error {
		evs = nil
		ch, err := s.visibleCharge(ctx, tx, c, storeID, chargeID)
		if err != nil {
			return err
		}
		ids := []uuid.UUID{ch.ID}
		p := payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc}
		refunds, err := tx.ListRefunds(ctx, ch.ID, p)
		if err != nil {
			return err
		}
		for _, r := range refunds.Items {
			ids = append(ids, r.ID)
		}
		cancels, err := tx.ListCancels(ctx, ch.ID, p)
		if err != nil {
			return err
		}
		for _, cn := range cancels.Items {
			ids = append(ids, cn.ID)
		}
		for _, id := range ids {
			// The charge's own scope: its merchant, store and mode, so
			// that an id of another tenant's resource finds nothing.
			found, err := tx.ListEvents(ctx, payment.EventFilter{
				MerchantID: ch.MerchantID, StoreID: ch.StoreID, Mode: ch.Mode, ResourceID: id,
			}, limit)
			if err != nil {
				return err
			}
			evs = append(evs, found...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Ids are time-ordered: ordering by id is ordering by creation.
	slices.SortFunc(evs, func(a, b *payment.Event) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	if len(evs) > limit {
		evs = evs[:limit]
	}
	return evs, nil
}
