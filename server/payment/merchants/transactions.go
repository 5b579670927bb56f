package merchants

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Transactions lists the transaction history of one store or of all the
// caller's stores.
func (s *Service) Transactions(ctx context.Context, c *payment.Caller, storeID uuid.UUID, f payment.LedgerFilter, p payment.ListParams) (payment.Page[*payment.LedgerEntry], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.LedgerEntry]{}, err
	}
	if f.Type != "" && f.Type != payment.LedgerCharge && f.Type != payment.LedgerRefund {
		return payment.Page[*payment.LedgerEntry]{}, payment.Invalid("type", payment.ReasonInvalidFormat)
	}
	if f.Mode != "" && !f.Mode.Valid() {
		return payment.Page[*payment.LedgerEntry]{}, payment.Invalid("mode", payment.ReasonInvalidFormat)
	}
	var ok bool
	if f.Mode, ok = c.OwnMode(f.Mode); !ok {
		return payment.EmptyPage[*payment.LedgerEntry](p), nil
	}
	var page payment.Page[*payment.LedgerEntry]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		scope, err := payment.ListScope(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		f.MerchantID, f.StoreID = scope.MerchantID, scope.StoreID
		page, err = tx.ListLedger(ctx, f, p)
		return err
	})
	return page, err
}
