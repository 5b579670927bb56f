package merchants

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// UpdateStore changes a store's name and settings: what GET /stores/{id}
// shows as its configuration and GET /checkout_info gives the widget. It
// needs the secret (a server or the console); another merchant's store is
// NOT_FOUND.
func (s *Service) UpdateStore(ctx context.Context, c *payment.Caller, storeID uuid.UUID, u payment.StoreUpdate) (*payment.Store, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if err := u.Check(); err != nil {
		return nil, err
	}
	var st *payment.Store
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if st, err = payment.VisibleStore(ctx, tx, c, storeID); err != nil {
			return err
		}
		if u.Name != nil {
			st.Name = *u.Name
		}
		if u.PCICompliant != nil {
			st.PCICompliant = *u.PCICompliant
		}
		if u.CardEnabled != nil {
			st.Settings.CardEnabled = *u.CardEnabled
		}
		if u.ThreeDSRequired != nil {
			st.Settings.ThreeDSRequired = *u.ThreeDSRequired
		}
		if u.ForbiddenCardBrands != nil {
			st.Settings.ForbiddenCardBrands = *u.ForbiddenCardBrands
		}
		if u.RecurringType != nil {
			st.Settings.RecurringType = *u.RecurringType
		}
		if u.Theme != nil {
			st.Settings.Theme = *u.Theme
		}
		if u.KonbiniEnabled != nil {
			st.Settings.KonbiniOff = !*u.KonbiniEnabled
		}
		if u.BankTransferEnabled != nil {
			st.Settings.BankTransferOff = !*u.BankTransferEnabled
		}
		if u.MatchAmount != nil {
			st.Settings.MatchAmount = *u.MatchAmount
		}
		return tx.UpdateStore(ctx, st)
	})
	return st, err
}
