package charging

import (
	"context"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/wasm/card"
)

// cardMethod is the card (payment_type card). A token holds the card, its
// number and CVC sealed in the vault (the CVC until the first
// authorisation), and may be one-time, recurring or a subscription's; the
// store's card rules (PCI DSS, brands, recurring tokens, 3-D Secure)
// decide whether it is made. A charge is authorised by the acquirer, after
// 3-D Secure where the card, the charge or the store asks for it
// (threeds.go), and may be an authorisation alone, captured later. While
// it awaits its shopper, the shopper answers a 3-D Secure challenge.
type cardMethod struct{}

func (cardMethod) paymentType() string { return payment.PaymentTypeCard }

func (cardMethod) traits() methodTraits {
	return methodTraits{email: true, subscriptions: true, duplicates: true, awaits: awaitsChallenge}
}

func (cardMethod) checkToken(v *payment.Validation, p *payment.NewToken, now time.Time) {
	if p.Card == nil {
		v.Add("data", payment.ReasonRequired)
		return
	}
	for _, pr := range card.Validate(card.Input{
		Number: p.Card.Number, ExpMonth: p.Card.ExpMonth, ExpYear: p.Card.ExpYear,
		CVV: p.Card.CVV, Cardholder: p.Card.Cardholder,
	}, now) {
		v.Add(pr.Field, pr.Reason)
	}
	if p.Card.CVVAuthorize.Currency != "" {
		if _, ok := payment.LookupCurrency(p.Card.CVVAuthorize.Currency); !ok {
			v.Add("cvv_authorize.currency", "INVALID_CURRENCY")
		}
	}
}

func (cardMethod) newToken(s *core, c *payment.Caller, p *payment.NewToken, tok *payment.TransactionToken) error {
	number := card.Digits(p.Card.Number)
	if c.Mode() == payment.ModeLive && s.processor.IsTestCard(number) {
		return payment.Errorf(payment.CodeNoTestCardInLiveMode, "test cards cannot be used in live mode")
	}
	tok.Card = payment.TokenCard{
		Cardholder: strings.TrimSpace(p.Card.Cardholder),
		ExpMonth:   p.Card.ExpMonth,
		ExpYear:    card.NormalizeYear(p.Card.ExpYear),
		BIN:        card.BIN(number),
		LastFour:   card.LastFour(number),
		Brand:      string(card.DetectBrand(number)),
		Billing:    p.Card.Billing,
	}
	tok.CVVAuthorize = payment.CVVAuthorize{Enabled: p.Card.CVVAuthorize.Enabled, Currency: p.Card.CVVAuthorize.Currency}
	tok.ThreeDS = p.Card.ThreeDS
	if p.ThreeDS != nil {
		// The Node SDK sends three_ds at the top of the request, the
		// Java SDK inside data: either turns it on.
		tok.ThreeDS.Enabled = tok.ThreeDS.Enabled || p.ThreeDS.Enabled
		tok.ThreeDS.Mode = p.ThreeDS.Mode
		if p.ThreeDS.RedirectEndpoint != "" {
			tok.ThreeDS.RedirectEndpoint = p.ThreeDS.RedirectEndpoint
		}
		tok.ThreeDS.RedirectID = p.ThreeDS.RedirectID
	}
	var err error
	if tok.Card.SealedNumber, err = s.vault.Seal([]byte(number), tok.ID[:]); err != nil {
		return err
	}
	if cvc := card.Digits(p.Card.CVV); cvc != "" {
		if tok.Card.SealedCVC, err = s.vault.Seal([]byte(cvc), cvcAssociated(tok.ID)); err != nil {
			return err
		}
	}
	return nil
}

func (cardMethod) admitToken(ctx context.Context, s *core, tx *outbox.Tx, c *payment.Caller, st *payment.Store, tok *payment.TransactionToken) error {
	// The product's PCI DSS rule: card data may pass through a merchant's own site or
	// server only when the store complies with PCI DSS; otherwise it
	// must come through Kessai's own widget frame or link form.
	if !st.PCICompliant && !s.fromGatewayPage(c) {
		return payment.Errorf(payment.CodeDirectCardTokenDisabled, "this store must collect card data through Kessai's widget or link form")
	}
	if err := storeAllowsToken(st.Settings, tok); err != nil {
		return err
	}
	// A token's 3-D Secure counts for its charges (a charge on an
	// authenticated token goes frictionless unless forced): what it
	// asks for is held to the store's as a charge's is. A mode alone,
	// without enabled, does nothing yet, and is held all the same.
	if tok.ThreeDS.Enabled || tok.ThreeDS.Mode != "" {
		if err := c.CheckThreeDSMode("three_ds.mode", tokenThreeDSMode(tok.ThreeDS.Mode), st); err != nil {
			return err
		}
	}
	if tok.CVVAuthorize.Enabled {
		tok.CVVAuthorize.Status = payment.CVVAuthPending
	}
	if tok.ThreeDS.Enabled {
		tok.ThreeDS.Status = payment.ThreeDSPending
	}
	return nil
}

func (cardMethod) startToken(ctx context.Context, tx *outbox.Tx, tok *payment.TransactionToken, now time.Time) error {
	if tok.CVVAuthorize.Enabled {
		if err := tx.EnqueueWork(ctx, payment.WorkCVVAuthorize, tok.ID, now); err != nil {
			return err
		}
	}
	if tok.ThreeDS.Enabled {
		return tx.EnqueueWork(ctx, payment.WorkTokenThreeDS, tok.ID, now)
	}
	return nil
}

// storeAllowsToken applies the store's own settings to a new token: the
// card brands it refuses and the recurring tokens it may make.
func storeAllowsToken(st payment.StoreSettings, tok *payment.TransactionToken) error {
	if st.ForbidsBrand(tok.Card.Brand) {
		return payment.Errorf(payment.CodeCardBrandNotSupported, "this store does not take cards of this brand")
	}
	if tok.Type != payment.Recurring {
		return nil
	}
	switch st.Recurring() {
	case payment.RecurringNone:
		return payment.Errorf(payment.CodeRecurringTokenDisabled, "this store does not make recurring tokens")
	case payment.RecurringBounded:
		if tok.UsageLimit == "" {
			return payment.Errorf(payment.CodeRecurringUsageLimit, "this store's recurring tokens need a usage_limit")
		}
	}
	return nil
}

// checkCharge: a card takes every charge the shared rules take, with a
// capture_at (when its authorisation is captured) within the window an
// authorisation lasts.
func (cardMethod) checkCharge(_ *payment.TransactionToken, p *payment.NewCharge, now time.Time) error {
	if p != nil && p.CaptureAt != nil && !captureAtAllowed(*p.CaptureAt, now) {
		return payment.Invalid("capture_at", "INVALID_SCHEDULED_CAPTURE_DATE")
	}
	return nil
}

func (cardMethod) instrument(s *core, tok *payment.TransactionToken) (payment.CardDetails, error) {
	return s.openCard(tok)
}

// openCard decrypts a card token's card for one acquirer call.
func (s *core) openCard(tok *payment.TransactionToken) (payment.CardDetails, error) {
	number, err := s.vault.Open(tok.Card.SealedNumber, tok.ID[:])
	if err != nil {
		return payment.CardDetails{}, err
	}
	d := payment.CardDetails{Number: string(number), ExpMonth: tok.Card.ExpMonth, ExpYear: tok.Card.ExpYear, Cardholder: tok.Card.Cardholder}
	if tok.Card.SealedCVC.Data != nil {
		cvc, err := s.vault.Open(tok.Card.SealedCVC, cvcAssociated(tok.ID))
		if err != nil {
			return payment.CardDetails{}, err
		}
		d.CVC = string(cvc)
	}
	return d, nil
}

// authorize carries a card charge to the acquirer's answer. It may first
// need 3-D Secure (threeDSDecision): a challenge puts it in wait of the
// shopper, and the item is queued again once they have passed it.
func (cardMethod) authorize(ctx context.Context, s *core, w payment.Work, ch *payment.Charge, tok *payment.TransactionToken, card payment.CardDetails) error {
	id := w.ID
	step := threeDSNone
	if ch.Status == payment.ChargePending {
		var st *payment.Store
		if err := s.db.View(ctx, func(tx payment.Tx) error {
			var err error
			st, err = tx.Store(ctx, ch.StoreID)
			return err
		}); err != nil {
			return err
		}
		step = threeDSDecision(ch.ThreeDS.Mode, st.Settings.ThreeDSRequired,
			tok.ThreeDS.Status == payment.ThreeDSSuccessful, s.processor.ThreeDS(card))
		if step == threeDSChallenge || step == threeDSNotEnrolled {
			return s.beforeAuthorization(ctx, w, step)
		}
	}
	req := payment.AuthorizeRequest{
		ChargeID: ch.ID, Mode: ch.Mode, Card: card, Email: tok.Email,
		Amount: ch.RequestedAmount, Currency: ch.Currency, Capture: ch.Capture,
	}
	switch {
	case ch.ThreeDS.External != nil:
		req.ThreeDS = ch.ThreeDS.External.TransactionStatus
	case step == threeDSFrictionless, ch.ThreeDS.Status == payment.ThreeDSSuccessful:
		req.ThreeDS = "Y"
	}
	res, err := s.processor.Authorize(ctx, req)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, id)
		if err != nil || !ch.ReadyToAuthorize() {
			return err
		}
		from, now := ch.Status, s.clock.Now()
		if step == threeDSFrictionless {
			ch.ThreeDS.Status = payment.ThreeDSSuccessful
		}
		switch {
		case res.Error == nil && ch.Capture:
			amount := ch.RequestedAmount
			ch.Status, ch.ChargedAmount, ch.CaptureState = payment.ChargeSuccessful, &amount, payment.CaptureDone
		case res.Error == nil:
			amount := ch.RequestedAmount
			ch.Status, ch.ChargedAmount = payment.ChargeAuthorized, &amount
		case res.Error.Code == payment.ErrProcessingError:
			ch.Status, ch.Error = payment.ChargeError, res.Error
		default:
			ch.Status, ch.Error = payment.ChargeFailed, res.Error
		}
		ch.UpdatedOn = now
		if err := s.moveCharge(ctx, tx, ch, from); err != nil {
			return err
		}
		if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
			return err
		}
		if ch.Status == payment.ChargeAuthorized && ch.CaptureAt != nil {
			// Queued with the authorisation, so that no authorised charge
			// with a capture_at is ever without its capture.
			if err := tx.EnqueueWork(ctx, payment.WorkScheduledCapture, ch.ID, *ch.CaptureAt); err != nil {
				return err
			}
		}
		// The CVC is kept only until the first authorisation.
		return tx.EraseTokenCVC(ctx, ch.TokenID)
	})
	if err == nil {
		s.db.Changed(id)
	}
	return err
}

// beforeAuthorization settles what 3-D Secure decided before any
// authorisation: a challenge for the shopper, or, for a card that cannot
// be authenticated where it must be, the charge's failure (356).
func (s *core) beforeAuthorization(ctx context.Context, w payment.Work, step threeDSStep) error {
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := tx.CompleteWork(ctx, w); err != nil {
			return err
		}
		ch, err := tx.Charge(ctx, w.ID)
		if err != nil || ch.Status != payment.ChargePending {
			return err
		}
		now := s.clock.Now()
		if step == threeDSChallenge {
			return s.startChallenge(ctx, tx, ch, now)
		}
		ch.Status, ch.ThreeDS.Status, ch.UpdatedOn = payment.ChargeFailed, payment.ThreeDSFailed, now
		ch.Error = payment.NewPaymentError(payment.ErrCardNotEnrolled, "the card is not enrolled in 3-D Secure")
		if err := s.moveCharge(ctx, tx, ch, payment.ChargePending); err != nil {
			return err
		}
		if err := tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch)); err != nil {
			return err
		}
		return tx.EraseTokenCVC(ctx, ch.TokenID)
	})
	if err == nil {
		s.db.Changed(w.ID)
	}
	return err
}

func (cardMethod) approvalKind() payment.ApprovalKind { return payment.ApprovalThreeDS }

// approvalOutcome: a challenge is answered with the one-time code
// (ChallengeCode passes; the third wrong one fails the authentication), or
// cancelled.
func (cardMethod) approvalOutcome(ap *payment.Approval, action payment.ApprovalAction, code string) (payment.ApprovalStatus, error) {
	switch action {
	case payment.ActionCancel:
		return payment.ApprovalCanceled, nil
	case payment.ActionAnswer:
		if code == payment.ChallengeCode {
			return payment.ApprovalSuccessful, nil
		}
		ap.Tries++
		if ap.Tries >= payment.MaxChallengeTries {
			return payment.ApprovalFailed, nil
		}
		return payment.ApprovalAwaiting, nil
	}
	return "", payment.Invalid("action", payment.ReasonInvalidFormat)
}

// settleCharge: a passed challenge sends the charge on to its
// authorisation; any other end (failed, cancelled, expired) fails it with
// 358.
func (cardMethod) settleCharge(ch *payment.Charge, ap *payment.Approval, outcome payment.ApprovalStatus) bool {
	if outcome == payment.ApprovalSuccessful {
		ch.ThreeDS.Status = payment.ThreeDSSuccessful
		return true
	}
	ch.ThreeDS.Status = payment.ThreeDSFailed
	ch.Status = payment.ChargeFailed
	ch.Error = payment.NewPaymentError(payment.ErrThreeDSNotCompleted, "the 3-D Secure authentication was "+string(outcome))
	return false
}

// issuerToken: a card's challenge has its own route
// (ChargeThreeDSIssuerToken).
func (cardMethod) issuerToken(string, *payment.Charge, *payment.Approval) *payment.IssuerToken {
	return nil
}

func (cardMethod) qrImage(string, *payment.Approval) string { return "" }

func (cardMethod) checkRefund(*payment.Charge, int64, int64) error { return nil }

func (cardMethod) checkCancel(*payment.Charge) error { return nil }
