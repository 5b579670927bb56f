package charging

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

func (s *Service) testChargeQuota() payment.Quota {
	return payment.Quota{Resource: "test_charge", Limit: s.limits.TestChargesPerDay, Daily: true}
}

// The window of capture_at, when an authorisation is to be captured: at
// least an hour after the charge is made and at most seven days, about as
// long as a card authorisation stays valid.
const (
	minCaptureAtAhead = time.Hour
	maxCaptureAtAhead = 7 * 24 * time.Hour
)

func captureAtAllowed(at, now time.Time) bool {
	return !at.Before(now.Add(minCaptureAtAhead)) && !at.After(now.Add(maxCaptureAtAhead))
}

// chargeApprovalCaller checks that c may send a charge's shopper on to the
// approval it awaits (its issuer token, its QR code): the page's key in
// them lets whoever holds it pay, fail or cancel the payment. A
// merchant's server may, and the browser that has just made the charge,
// as for its first charge; any other browser holding the public app token
// and a charge's id would reach another shopper's payment.
func (s *Service) chargeApprovalCaller(c *payment.Caller, ch *payment.Charge) error {
	if c.WithSecret() || payment.ChargeMadeByBrowserJustNow(ch, s.clock.Now()) {
		return nil
	}
	return payment.Errorf(payment.CodeInvalidPermissions, "this operation requires the app token's secret")
}

// CreateCharge records a charge as pending and hands it to the worker, which
// asks the acquirer; the answer arrives asynchronously (poll the charge).
func (s *Service) CreateCharge(ctx context.Context, c *payment.Caller, p payment.NewCharge) (*payment.Charge, error) {
	storeID, err := payment.CallerStore(c)
	if err != nil {
		return nil, err
	}
	if p.TokenID == uuid.Nil {
		return nil, payment.Invalid("transaction_token_id", payment.ReasonRequired)
	}
	if cur, ok := payment.LookupCurrency(p.Currency); ok && p.Amount > cur.MaxAmount {
		return nil, payment.Errorf(payment.CodeChargeAmountTooHigh, "amount is above the maximum for "+cur.Code)
	}
	cur, err := payment.CheckAmount(p.Amount, p.Currency, "amount")
	if err != nil {
		return nil, err
	}
	if p.Amount < cur.MinAmount {
		return nil, payment.Errorf(payment.CodeChargeAmountTooLow, "amount is below the minimum for "+cur.Code)
	}
	if err := p.Check(c, s.publicOrigin); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	ch := &payment.Charge{
		ID:                    payment.NewID(),
		StoreID:               storeID,
		MerchantID:            c.MerchantID(),
		TokenID:               p.TokenID,
		Mode:                  c.Mode(),
		RequestedAmount:       p.Amount,
		Currency:              cur.Code,
		Capture:               p.Capture == nil || *p.Capture,
		CaptureAt:             p.CaptureAt,
		OnlyDirectCurrency:    p.OnlyDirectCurrency,
		Descriptor:            p.Descriptor,
		Status:                payment.ChargePending,
		Metadata:              p.Metadata,
		RedirectEndpoint:      p.RedirectEndpoint,
		MerchantTransactionID: p.MerchantTransactionID,
		IPAddress:             p.IPAddress,
		CreatedOn:             now,
		UpdatedOn:             now,
	}
	if p.ThreeDS != nil {
		ch.ThreeDS = *p.ThreeDS
	}
	if e := p.ExternalThreeDS; e != nil && !e.Empty() {
		if err := s.SealExternalThreeDS(ch, e); err != nil {
			return nil, err
		}
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if err := payment.BrowserThreeDS(ctx, tx, c, storeID, "three_ds.mode", p.ThreeDSMode()); err != nil {
			return err
		}
		if err := s.PlaceCharge(ctx, tx, ChargeOrder{Charge: ch, Caller: c, request: &p}); err != nil {
			return err
		}
		return payment.RecordEffect(ctx, tx, p.Idempotency, payment.IdempotentEffect{Kind: payment.EffectCharge, StoreID: ch.StoreID, ID: ch.ID})
	})
	if err != nil {
		return nil, err
	}
	s.db.WakeWorker()
	return ch, nil
}

// ChargeOrder is a charge to place: asked for by a caller (POST /charges,
// the first charge of POST /subscriptions) or, with caller nil, by the
// gateway's own scheduler for a subscription's payment.
type ChargeOrder struct {
	// Charge is the charge as asked for, pending, its token's fields
	// still to be filled in.
	Charge *payment.Charge
	Caller *payment.Caller
	// request is the caller's request, for the checks of the token's
	// payment method (paymentMethod.checkCharge); nil for a
	// subscription's charges.
	request *payment.NewCharge
}

// PlaceCharge checks a charge against its token and records it with the
// work that authorises it, in the caller's transaction: POST /charges and
// subscriptions share it, so a subscription's charges are charges like any
// other. The gateway's own scheduled charges are not the caller's: the
// browser rule, the test-charge quota and the duplicate rule, which guard
// against what callers send, do not apply to them.
func (s *Service) PlaceCharge(ctx context.Context, tx *outbox.Tx, o ChargeOrder) error {
	ch, c, now := o.Charge, o.Caller, o.Charge.CreatedOn
	tok, err := tx.Token(ctx, ch.TokenID)
	if err != nil {
		return err
	}
	if tok.MerchantID != ch.MerchantID {
		return payment.NotFound("transaction token")
	}
	forSubscription := ch.SubscriptionID != uuid.Nil
	switch {
	case tok.StoreID != ch.StoreID:
		return payment.Errorf(payment.CodeTokenForWrongStore, "the transaction token belongs to another store")
	case tok.Mode != ch.Mode:
		return payment.Errorf(payment.CodeProcessingModeMismatch, "the transaction token was made in another mode")
	case !tok.Active:
		return payment.Errorf(payment.CodeTokenExpired, "the transaction token was deleted")
	case tok.Type == payment.SubscriptionToken && !forSubscription:
		return payment.Errorf(payment.CodeNotOneTimeToken, "subscription tokens are charged through subscriptions")
	case tok.Type == payment.OneTime && tok.Used:
		return payment.Errorf(payment.CodeTransactionAlreadyDone, "this one-time token has already been charged")
	case tok.CVVAuthorize.Enabled && tok.CVVAuthorize.Status != payment.CVVAuthCurrent:
		return payment.Errorf(payment.CodeCVVAuthorizationNotCompleted, "the token's CVV authorization has not succeeded")
	case c != nil && !c.WithSecret() && !payment.BrowserMayCharge(tok, now):
		return payment.Errorf(payment.CodeInvalidPermissions, "charging a stored token requires the app token's secret")
	}
	if ch.Mode == payment.ModeLive && !s.processor.SupportsLive() {
		return payment.Errorf(payment.CodeNoGatewaysAvailable, "no live acquirer is configured")
	}
	if ch.Mode == payment.ModeTest && c != nil {
		if err := s.testChargeQuota().Take(ctx, tx, "store:"+ch.StoreID.String(), now); err != nil {
			return err
		}
	}
	m, err := methodOf(tok.PaymentType)
	if err != nil {
		return err
	}
	if o.request == nil && !m.traits().subscriptions {
		return payment.Errorf(payment.CodeNotSubscriptionToken, "subscriptions are charged to cards")
	}
	if err := m.checkCharge(tok, o.request, now); err != nil {
		return err
	}
	ch.TokenType, ch.PaymentType, ch.CardLastFour, ch.Email = tok.Type, tok.PaymentType, tok.Card.LastFour, tok.Email
	ch.FromBrowser = c != nil && !c.WithSecret()
	if c != nil {
		if err := s.rejectDuplicate(ctx, tx, tok, ch, now); err != nil {
			return err
		}
	}
	// Marking the token used is no change the merchant made: no event.
	tok.Used, tok.LastUsedOn, tok.UpdatedOn = true, &now, now
	if err := tx.UpdateToken(ctx, tok); err != nil {
		return err
	}
	if err := tx.CreateCharge(ctx, ch); err != nil {
		return err
	}
	if ch.Status == payment.ChargePending {
		if err := tx.EnqueueWork(ctx, payment.WorkAuthorize, ch.ID, now); err != nil {
			return err
		}
	} else {
		// A rejected duplicate ends as it is made.
		tx.NoteSettled(payment.SettledCharge, string(ch.Status), ch.Error)
		if err := tx.Announce(ctx, payment.EventChargeFinished, ch); err != nil {
			return err
		}
	}
	return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
}

// moveCharge writes ch, whose status was from, and when the status
// changed, in the same transaction: tells the Meter (once committed) that
// the charge settled; records its event, charge.updated when it awaits
// its shopper or is authorised, charge.finished when it ends; and carries
// its subscription's payment on (the chargeEnded follower) when it is a
// subscription's charge that was authorised or ended. Every path that
// moves a charge (the acquirer's answer, 3-D Secure, a wallet, an
// expiry, a cancel) goes through it, so that each of them has every one
// of these effects.
func (s *core) moveCharge(ctx context.Context, tx *outbox.Tx, ch *payment.Charge, from payment.ChargeStatus) error {
	if err := tx.UpdateCharge(ctx, ch); err != nil {
		return err
	}
	if ch.Status == from {
		return nil
	}
	tx.NoteSettled(payment.SettledCharge, string(ch.Status), ch.Error)
	if name := chargeEvent(ch.Status); name != "" {
		if err := tx.Announce(ctx, name, ch); err != nil {
			return err
		}
	}
	if ch.PaymentID != uuid.Nil && (ch.Status.Final() || ch.Status == payment.ChargeAuthorized) && s.chargeEnded != nil {
		return s.chargeEnded(ctx, tx, ch)
	}
	return nil
}

// chargeEvent is the event of a charge reaching status, if any: awaiting
// its shopper and authorised are updates, every end is a finish.
func chargeEvent(st payment.ChargeStatus) string {
	switch {
	case st.Final():
		return payment.EventChargeFinished
	case st == payment.ChargeAuthorized || st == payment.ChargeAwaiting:
		return payment.EventChargeUpdated
	}
	return ""
}

// rejectDuplicate applies the duplicate-charge rule (README, duplicate charges):
// a recurring card token charged the same amount and currency within the
// window of a charge that was accepted is recorded as failed with payment
// error 311, and never reaches the acquirer. Running inside the creating
// transaction makes the check and the recording one atomic step: of N
// identical concurrent requests exactly one is accepted.
func (s *Service) rejectDuplicate(ctx context.Context, tx payment.Tx, tok *payment.TransactionToken, ch *payment.Charge, now time.Time) error {
	m, err := methodOf(tok.PaymentType)
	if err != nil || tok.Type != payment.Recurring || !m.traits().duplicates || s.limits.DuplicateWindow <= 0 {
		return err
	}
	dup, err := tx.RecentCharge(ctx, tok.ID, ch.RequestedAmount, ch.Currency, now.Add(-s.limits.DuplicateWindow))
	if err != nil || !dup {
		return err
	}
	ch.Status = payment.ChargeFailed
	ch.Error = payment.NewPaymentError(payment.ErrTooManyCharges,
		"the same recurring token was charged the same amount within "+s.limits.DuplicateWindow.String())
	return nil
}

// visibleCharge returns a charge of storeID the caller may see.
func (s *core) visibleCharge(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID) (*payment.Charge, error) {
	ch, err := tx.Charge(ctx, id)
	if err != nil {
		return nil, err
	}
	if storeID == uuid.Nil {
		// GET /charges/{id}: the seed's path, resolved against the
		// caller's own stores.
		storeID = ch.StoreID
	}
	// A charge carries its store's id and merchant (the store's own,
	// written when the charge was made; a store never changes merchant),
	// so whether the caller may see its store is read from the charge
	// rather than from the store's row: one read instead of two (or three
	// on GET /charges/{id}) for every charge an API call touches.
	if ch.StoreID != storeID || ch.Mode != c.Mode() || !c.CanSeeStore(&payment.Store{ID: ch.StoreID, MerchantID: ch.MerchantID}) {
		return nil, payment.NotFound("charge")
	}
	return ch, nil
}

// Charge returns a charge. With wait > 0 it is a long poll: while the charge
// is still being processed, it waits up to wait for it to change. A cancel
// or refund of the charge still waiting for the worker counts as
// processing: the shop plugins cancel, then poll the charge until it is
// canceled (PHP's awaitResult), and a refunded charge's poll answers once
// the refund is done.
func (s *Service) Charge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.Charge, error) {
	var ch *payment.Charge
	var operating bool
	read := func() error {
		// visibleCharge is one read: the charge's row decides who sees it.
		err := s.db.ViewOne(ctx, func(tx payment.Tx) error {
			var err error
			ch, err = s.visibleCharge(ctx, tx, c, storeID, id)
			return err
		})
		operating = false
		if err != nil || wait <= 0 || (ch.Status != payment.ChargeAuthorized && ch.Status != payment.ChargeSuccessful) {
			return err
		}
		// Only a long poll of a charge that a cancel or refund can
		// still change asks more. The charge is read again with the
		// question, in one snapshot: an operation seen finished with the
		// charge as it was before would answer a stale status.
		return s.db.View(ctx, func(tx payment.Tx) error {
			var err error
			if ch, err = s.visibleCharge(ctx, tx, c, storeID, id); err != nil {
				return err
			}
			operating, err = operationUnderWay(ctx, tx, ch)
			return err
		})
	}
	err := s.db.LongPoll(ctx, id, wait, read, func() (string, bool) { return ch.Stage(), ch.InFlight() || operating })
	return ch, err
}

// operationUnderWay reports whether a cancel (of an authorisation) or a
// refund (of a successful charge) is waiting for the worker.
func operationUnderWay(ctx context.Context, tx payment.Tx, ch *payment.Charge) (bool, error) {
	switch ch.Status {
	case payment.ChargeAuthorized:
		return tx.PendingCancelFor(ctx, ch.ID)
	case payment.ChargeSuccessful:
		return tx.PendingRefundFor(ctx, ch.ID)
	}
	return false, nil
}

// Charges lists charges of one store, or of every store the caller sees.
func (s *Service) Charges(ctx context.Context, c *payment.Caller, storeID uuid.UUID, f payment.ChargeFilter, p payment.ListParams) (payment.Page[*payment.Charge], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.Charge]{}, err
	}
	var ok bool
	if f.Mode, ok = c.OwnMode(f.Mode); !ok {
		return payment.EmptyPage[*payment.Charge](p), nil
	}
	var page payment.Page[*payment.Charge]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		scope, err := payment.ListScope(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		f.MerchantID, f.StoreID = scope.MerchantID, scope.StoreID
		page, err = tx.ListCharges(ctx, f, p)
		return err
	})
	return page, err
}

// UpdateCharge merges metadata into a charge (plugins patch order ids in).
func (s *Service) UpdateCharge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, metadata payment.Metadata) (*payment.Charge, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var ch *payment.Charge
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if ch, err = s.visibleCharge(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		if ch.Metadata, err = ch.Metadata.Merge(metadata); err != nil {
			return err
		}
		// Metadata is no change of status: no event.
		ch.UpdatedOn = s.clock.Now()
		if err := tx.UpdateCharge(ctx, ch); err != nil {
			return err
		}
		return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
	})
	return ch, err
}

// CaptureCharge asks for the capture of an authorised charge: all of it
// or part of it. The worker asks the acquirer; the charge turns
// successful (or failed, if the authorisation had expired).
func (s *Service) CaptureCharge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ChargeCapture) error {
	amount, currency := p.Amount, p.Currency
	if err := c.RequireSecret(); err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		switch {
		case ch.Status == payment.ChargeSuccessful || ch.CaptureState != payment.CaptureNone:
			return payment.Errorf(payment.CodeAlreadyCaptured, "the charge has already been captured")
		case ch.Status != payment.ChargeAuthorized:
			return payment.Invalid("status", "INVALID_CHARGE_STATUS")
		}
		capture := *ch.ChargedAmount
		if currency != "" && !sameCurrency(currency, ch.Currency) {
			return payment.Errorf(payment.CodeCurrencyMustMatchCharge, "capture currency differs from the charge's")
		}
		if amount != nil {
			if *amount <= 0 {
				return payment.Invalid("amount", "INVALID_AMOUNT")
			}
			if *amount > capture {
				return payment.Errorf(payment.CodeCaptureAmountTooLarge, "capture amount exceeds the authorised amount")
			}
			capture = *amount
		}
		if err := requestCapture(ctx, tx, ch, capture, s.clock.Now()); err != nil {
			return err
		}
		return payment.RecordEffect(ctx, tx, p.Idempotency, payment.IdempotentEffect{Kind: payment.EffectCapture, StoreID: ch.StoreID, ChargeID: ch.ID, ID: ch.ID})
	})
}

// requestCapture marks an authorised charge as being captured for amount
// and queues the acquirer call (waking the worker), in the caller's
// transaction; the charge stays authorised, so no event is due until the
// acquirer answers. The merchant's capture and the one scheduled by
// capture_at both go through it, so that they are retried, fail and end
// the charge alike.
func requestCapture(ctx context.Context, tx *outbox.Tx, ch *payment.Charge, amount int64, now time.Time) error {
	ch.CaptureState, ch.CaptureAmount, ch.UpdatedOn = payment.CaptureRequested, amount, now
	if err := tx.UpdateCharge(ctx, ch); err != nil {
		return err
	}
	return tx.EnqueueWork(ctx, payment.WorkCapture, ch.ID, now)
}

func sameCurrency(a, b string) bool {
	ca, ok := payment.LookupCurrency(a)
	return ok && ca.Code == b
}
