package charging

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// SealExternalThreeDS records a merchant's own 3-D Secure result on a
// charge, its authentication value sealed.
func (s *Service) SealExternalThreeDS(ch *payment.Charge, e *payment.ExternalThreeDSInput) error {
	ch.ThreeDS.Mode = "provided"
	ext := &payment.ExternalThreeDS{
		ECI: e.ECI, DSTransactionID: e.DSTransactionID, ServerTransactionID: e.ServerTransactionID,
		MessageVersion: e.MessageVersion, TransactionStatus: e.TransactionStatus,
	}
	var err error
	if ext.AuthenticationValue, err = s.vault.Seal([]byte(e.AuthenticationValue), authValueAssociated(ch.ID)); err != nil {
		return err
	}
	ch.ThreeDS.External = ext
	return nil
}

// authValueAssociated binds a sealed 3-D Secure authentication value to
// its charge.
func authValueAssociated(id uuid.UUID) []byte { return append([]byte("cavv:"), id[:]...) }

// tokenThreeDSMode is the mode a token's 3-D Secure runs in (tokenThreeDS):
// its own, or normal without one.
func tokenThreeDSMode(mode string) string {
	if mode == "" {
		return "normal"
	}
	return mode
}

// threeDSStep is what 3-D Secure does for one card payment.
type threeDSStep int

const (
	threeDSNone         threeDSStep = iota // no 3-D Secure
	threeDSFrictionless                    // authenticated without the shopper
	threeDSChallenge                       // the shopper must answer a challenge
	threeDSNotEnrolled                     // required, and the card cannot do it: 356
)

// threeDSDecision is the README's 3-D Secure rule. mode is the charge's
// (or the token's) three_ds.mode, "" when it sent none; storeRequires is
// the store's three_ds_required setting; authenticated says the card was
// authenticated when its recurring token was made.
//
//   - skip (secret only) and provided (external MPI) do nothing here;
//   - without a mode, only a store that requires 3-D Secure (as require)
//     or a card whose issuer requires it (a challenge) bring it in;
//   - a card that is not enrolled fails under require, and goes on without
//     3-D Secure otherwise;
//   - force and require challenge every enrolled card; normal and
//     if_available only the cards whose issuer challenges;
//   - a token authenticated before needs no new challenge unless forced.
func threeDSDecision(mode string, storeRequires, authenticated bool, p payment.ThreeDSProfile) threeDSStep {
	switch mode {
	case "skip", "provided":
		return threeDSNone
	case "":
		switch {
		case storeRequires:
			mode = "require"
		case p.Mandatory && p.Enrolled && !authenticated:
			return threeDSChallenge
		default:
			return threeDSNone
		}
	}
	switch {
	case !p.Enrolled && mode == "require":
		return threeDSNotEnrolled
	case !p.Enrolled:
		return threeDSNone
	case authenticated && mode != "force":
		return threeDSFrictionless
	case mode == "force" || mode == "require" || p.Challenge:
		return threeDSChallenge
	}
	return threeDSFrictionless
}

const threeDSContentType = "application/x-www-form-urlencoded; charset=UTF-8"

func (s *core) threeDSIssuerToken(ap *payment.Approval) *payment.IssuerToken {
	return &payment.IssuerToken{
		IssuerToken: s.publicOrigin + payment.ThreeDSPagePath + ap.Key,
		CallMethod:  "http_post",
		ContentType: threeDSContentType,
		Payload:     map[string]string{"resource_id": ap.ResourceID.String(), "resource_type": ap.ResourceType},
		PaymentType: payment.PaymentTypeCard,
	}
}

// ChargeThreeDSIssuerToken returns where the shopper answers a charge's
// 3-D Secure challenge, once the charge is awaiting it.
func (s *Service) ChargeThreeDSIssuerToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.IssuerToken, error) {
	var it *payment.IssuerToken
	err := s.db.View(ctx, func(tx payment.Tx) error {
		ch, _, err := s.awaitedCharge(ctx, tx, c, storeID, id, awaitsChallenge, "ONLY_FOR_CARD_PAYMENT")
		if err != nil {
			return err
		}
		switch ch.Status {
		case payment.ChargePending:
			return payment.Invalid("status", "ISSUER_TOKEN_EMPTY")
		case payment.ChargeAwaiting:
			if ch.ThreeDS.Status != payment.ThreeDSAwaiting {
				return payment.Invalid("status", "INVALID_CHARGE_STATUS")
			}
		}
		ap, err := awaitingApproval(ctx, tx, ch.ID, ch.Status == payment.ChargeAwaiting)
		if err != nil {
			return err
		}
		it = s.threeDSIssuerToken(ap)
		return nil
	})
	return it, err
}

// tokenThreeDSCaller checks that c may work with a token's 3-D Secure: a
// merchant's server (with the secret), or the browser that has just made
// the token, as for its first charge.
func (s *Tokens) tokenThreeDSCaller(c *payment.Caller, tok *payment.TransactionToken) error {
	if c.WithSecret() || payment.MadeByBrowserJustNow(tok, s.clock.Now()) {
		return nil
	}
	return payment.Errorf(payment.CodeInvalidPermissions, "this operation requires the app token's secret")
}

// TokenThreeDSIssuerToken returns where the shopper answers a token's
// 3-D Secure challenge, once it is awaiting it.
func (s *Tokens) TokenThreeDSIssuerToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.IssuerToken, error) {
	var it *payment.IssuerToken
	err := s.db.View(ctx, func(tx payment.Tx) error {
		tok, err := s.visibleToken(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if err := s.tokenThreeDSCaller(c, tok); err != nil {
			return err
		}
		if tok.PaymentType != payment.PaymentTypeCard || !tok.ThreeDS.Enabled {
			return payment.Invalid("three_ds", "ONLY_FOR_CARD_PAYMENT")
		}
		if tok.ThreeDS.Status == payment.ThreeDSPending {
			return payment.Invalid("status", "ISSUER_TOKEN_EMPTY")
		}
		ap, err := awaitingApproval(ctx, tx, tok.ID, tok.ThreeDS.Status == payment.ThreeDSAwaiting)
		if err != nil {
			return err
		}
		it = s.threeDSIssuerToken(ap)
		return nil
	})
	return it, err
}

// EnableTokenThreeDS asks for 3-D Secure on a card token (POST
// …/tokens/{id}/three_ds): its data.three_ds.status goes pending, then
// awaiting (the shopper answers a challenge), then successful or failed;
// a later charge on a token authenticated so needs no challenge of its
// own. Asking again while it is under way or done changes nothing; after
// a failure it starts over.
func (s *Tokens) EnableTokenThreeDS(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, r payment.TokenThreeDSRequest) (*payment.TransactionToken, error) {
	var v payment.Validation
	if r.Mode != "" && !tokenThreeDSModes[r.Mode] {
		v.Add("mode", payment.ReasonInvalidFormat)
	}
	payment.CheckRedirect(&v, c, s.publicOrigin, "redirect_endpoint", r.RedirectEndpoint)
	payment.CheckText(&v, "redirect_id", r.RedirectID, payment.MaxRedirectIDLen)
	if err := v.Err(); err != nil {
		return nil, err
	}
	var tok *payment.TransactionToken
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if tok, err = s.visibleToken(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if err := s.tokenThreeDSCaller(c, tok); err != nil {
			return err
		}
		if err := payment.BrowserThreeDS(ctx, tx, c, storeID, "mode", tokenThreeDSMode(r.Mode)); err != nil {
			return err
		}
		switch {
		case tok.PaymentType != payment.PaymentTypeCard:
			return payment.Invalid("three_ds", "ONLY_FOR_CARD_PAYMENT")
		case !tok.Active:
			return payment.Errorf(payment.CodeTokenExpired, "the transaction token was deleted")
		case tok.ThreeDS.Enabled && tok.ThreeDS.Status != payment.ThreeDSFailed && tok.ThreeDS.Status != "":
			return nil
		}
		now := s.clock.Now()
		// Pending is no news: the token's event comes when it settles or
		// awaits its shopper.
		tok.ThreeDS = payment.ThreeDSSettings{
			Enabled: true, Mode: r.Mode, RedirectEndpoint: r.RedirectEndpoint, RedirectID: r.RedirectID,
			Status: payment.ThreeDSPending,
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		return tx.EnqueueWork(ctx, payment.WorkTokenThreeDS, tok.ID, now)
	})
	if err != nil {
		return nil, err
	}
	return tok, nil
}

// DisableTokenThreeDS turns a token's 3-D Secure off (DELETE
// …/tokens/{id}/three_ds). A challenge still open is left to run out: its
// outcome no longer changes the token.
func (s *Tokens) DisableTokenThreeDS(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) error {
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		tok, err := s.visibleToken(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if err := c.RequireSecret(); err != nil {
			return err
		}
		if !tok.ThreeDS.Enabled && tok.ThreeDS.Status == "" {
			return nil
		}
		// Turned off, the token's 3-D Secure has no status to tell of.
		tok.ThreeDS = payment.ThreeDSSettings{Mode: tok.ThreeDS.Mode}
		tok.UpdatedOn = s.clock.Now()
		return tx.UpdateToken(ctx, tok)
	})
}

// tokenThreeDS asks the issuer (the acquirer's profile of the card) what
// a token's authentication takes, and starts the challenge, or settles it
// at once when it needs none.
func (s *Tokens) tokenThreeDS(ctx context.Context, w payment.Work) error {
	var tok *payment.TransactionToken
	if err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		tok, err = tx.Token(ctx, w.ID)
		return err
	}); err != nil {
		return err
	}
	if tok.ThreeDS.Status != payment.ThreeDSPending {
		return s.work.Complete(ctx, w)
	}
	card, err := s.openCard(tok)
	if err != nil {
		return err
	}
	profile := s.processor.ThreeDS(card)
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		tok, err := tx.Token(ctx, w.ID)
		if err != nil || tok.ThreeDS.Status != payment.ThreeDSPending {
			return err
		}
		now := s.clock.Now()
		switch threeDSDecision(tokenThreeDSMode(tok.ThreeDS.Mode), false, false, profile) {
		case threeDSChallenge:
			tok.ThreeDS.Status = payment.ThreeDSAwaiting
			ap := &payment.Approval{
				Kind: payment.ApprovalThreeDS, ResourceType: payment.ResourceToken, ResourceID: tok.ID, StoreID: tok.StoreID,
				MerchantID: tok.MerchantID, Mode: tok.Mode, LastFour: tok.Card.LastFour,
			}
			if err := startApproval(ctx, tx, ap, payment.ChallengeExpiry, now); err != nil {
				return err
			}
		case threeDSNone:
			if profile.Enrolled { // skip: nothing was asked of the issuer
				tok.ThreeDS.Status, tok.ThreeDS.Exempted = payment.ThreeDSSuccessful, true
				break
			}
			fallthrough
		case threeDSNotEnrolled:
			tok.ThreeDS.Status = payment.ThreeDSFailed
			tok.ThreeDS.Error = payment.NewPaymentError(payment.ErrCardNotEnrolled, "the card is not enrolled in 3-D Secure")
		case threeDSFrictionless:
			tok.ThreeDS.Status = payment.ThreeDSSuccessful
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		if tok.ThreeDS.Status == payment.ThreeDSPending {
			return nil
		}
		// Awaiting its shopper, or settled: news either way.
		return tx.Announce(ctx, payment.EventTokenThreeDSUpdated, tok)
	})
	if err == nil {
		s.db.Changed(w.ID)
	}
	return err
}

// startChallenge puts a charge in wait of its 3-D Secure challenge, in the
// worker's transaction.
func (s *core) startChallenge(ctx context.Context, tx *outbox.Tx, ch *payment.Charge, now time.Time) error {
	ch.Status, ch.ThreeDS.Status, ch.UpdatedOn = payment.ChargeAwaiting, payment.ThreeDSAwaiting, now
	if err := s.moveCharge(ctx, tx, ch, payment.ChargePending); err != nil {
		return err
	}
	ap := &payment.Approval{
		Kind: payment.ApprovalThreeDS, ResourceType: payment.ResourceCharge, ResourceID: ch.ID, StoreID: ch.StoreID,
		MerchantID: ch.MerchantID, Mode: ch.Mode, Amount: ch.RequestedAmount, Currency: ch.Currency,
		LastFour: ch.CardLastFour,
	}
	if err := startApproval(ctx, tx, ap, payment.ChallengeExpiry, now); err != nil {
		return err
	}
	return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
}
