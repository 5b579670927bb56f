package charging

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// A token made with cvv_authorize enabled is checked before it may be
// charged: the worker authorises a small amount on the card with its CVC
// and voids the authorisation at once. The token's status moves from
// pending to current (the acquirer accepted the card and its CVC) or
// failed (it refused them, with its payment error), and charging it
// before it is current is refused (CVV_AUTHORIZATION_NOT_COMPLETED). The
// CVC is erased after the check, as after a charge's first authorisation:
// later charges of a recurring token go without it.

// cvvAuthID is the id of a token's check at the acquirer: derived from the
// token, so that a retried check is the same operation (the processor is
// idempotent per id), and a UUID of its own, never a charge's.
func cvvAuthID(tokenID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(tokenID, []byte("cvv_authorize"))
}

// cvvAuthAmount is the amount a check authorises: the smallest charge the
// currency allows.
func cvvAuthAmount(currency string, st payment.StoreSettings) (int64, string) {
	cur, ok := payment.LookupCurrency(currency)
	if !ok && len(st.Currencies) > 0 {
		cur, ok = payment.LookupCurrency(st.Currencies[0])
	}
	if !ok {
		cur, _ = payment.LookupCurrency("JPY")
	}
	return cur.MinAmount, cur.Code
}

func (s *Tokens) cvvAuthorize(ctx context.Context, w payment.Work) error {
	var tok *payment.TransactionToken
	var st *payment.Store
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		if tok, err = tx.Token(ctx, w.ID); err != nil {
			return err
		}
		st, err = tx.Store(ctx, tok.StoreID)
		return err
	}); err != nil {
		return err
	}
	if tok.CVVAuthorize.Status != payment.CVVAuthPending {
		return s.work.Complete(ctx, w)
	}
	card, err := s.openCard(tok)
	if err != nil {
		return err
	}
	id := cvvAuthID(tok.ID)
	amount, currency := cvvAuthAmount(tok.CVVAuthorize.Currency, st.Settings)
	res, err := s.processor.Authorize(ctx, payment.AuthorizeRequest{
		ChargeID: id, Mode: tok.Mode, Card: card, Email: tok.Email, Amount: amount, Currency: currency,
	})
	if err != nil {
		return err
	}
	if res.Error == nil {
		// A void that fails is retried with the whole item; the
		// authorisation above is then answered again, not made twice.
		void, err := s.processor.Void(ctx, id, card)
		if err != nil {
			return err
		}
		if void.Error != nil {
			return fmt.Errorf("the void of CVV authorization %s was refused: %d %s", id, void.Error.Code, void.Error.Message)
		}
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		tok, err := tx.Token(ctx, w.ID)
		if err != nil || tok.CVVAuthorize.Status != payment.CVVAuthPending {
			return err
		}
		if res.Error == nil {
			tok.CVVAuthorize.Status, tok.CVVAuthorize.AuthorizationID = payment.CVVAuthCurrent, id
		} else {
			tok.CVVAuthorize.Status, tok.CVVAuthorize.Error = payment.CVVAuthFailed, res.Error
		}
		tok.UpdatedOn = s.clock.Now()
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		if err := tx.Announce(ctx, payment.EventTokenCVVAuthUpdated, tok); err != nil {
			return err
		}
		return tx.EraseTokenCVC(ctx, tok.ID)
	})
	if err == nil {
		s.db.Changed(w.ID)
	}
	return err
}
