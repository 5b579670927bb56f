package charging

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// TokenReceipt answers, to one of the gateway's own pages (a browser
// caller from the gateway's origin, as BrowserCaller makes it), whether a
// token exists in the caller's store and mode, and of which type and age.
// The link form asks it before it sends the shopper back to the shop with
// the token's id; reading the token itself needs the secret, which the
// form never has.
func (s *Tokens) TokenReceipt(ctx context.Context, c *payment.Caller, id uuid.UUID) (*payment.TokenReceipt, error) {
	if !s.fromGatewayPage(c) {
		return nil, payment.Errorf(payment.CodeInvalidPermissions, "only the gateway's own pages may ask for a token receipt")
	}
	storeID, err := payment.CallerStore(c)
	if err != nil {
		return nil, err
	}
	var r *payment.TokenReceipt
	err = s.db.View(ctx, func(tx payment.Tx) error {
		tok, err := s.visibleToken(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		r = &payment.TokenReceipt{ID: tok.ID, StoreID: tok.StoreID, Type: tok.Type, CreatedOn: tok.CreatedOn}
		return nil
	})
	return r, err
}
