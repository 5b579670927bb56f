package charging

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// The gateway's own pages (the widget frame, the hosted link form) are
// given a store's app token without its secret, as any browser is. What
// they may do with it is decided here: they act as a browser from the
// origin they serve, and where a page needs more than a browser may have,
// it gets a method that answers exactly that and nothing else.

// BrowserCaller is the caller a page acts as for a store app token it was
// given (the appId of the widget frame or the link form): the token's
// browser use, from origin. It checks the token as Authenticate checks a
// browser's (signature, not revoked, a store token: INVALID_APP_TOKEN) and
// the origin likewise (one of the token's domains or the gateway itself:
// INVALID_DOMAIN). A JWT with a secret in front is not a browser's
// credential and is refused.
func (s *Service) BrowserCaller(ctx context.Context, jwt, origin string) (*payment.Caller, error) {
	tok, err := s.browserAppToken(ctx, jwt)
	if err != nil {
		return nil, err
	}
	if !s.originAllowed(tok, origin) {
		return nil, payment.Errorf(payment.CodeInvalidDomain, "the origin is not one of the app token's domains")
	}
	return payment.NewCaller(tok, false, origin), nil
}

// TokenReceipt answers, to one of the gateway's own pages (a browser
// caller from the gateway's origin, as BrowserCaller makes it), whether a
// token exists in the caller's store and mode, and of which type and age.
// The link form asks it before it sends the shopper back to the shop with
// the token's id; reading the token itself needs the secret, which the
// form never has.
func (s *Service) TokenReceipt(ctx context.Context, c *payment.Caller, id uuid.UUID) (*payment.TokenReceipt, error) {
	if !s.fromGatewayPage(c) {
		return nil, payment.Errorf(payment.CodeInvalidPermissions, "only the gateway's own pages may ask for a token receipt")
	}
	storeID, err := storeCaller(c)
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
