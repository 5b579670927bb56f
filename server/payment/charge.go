package payment

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// ChargeStatus is where a charge is in its life.
//
//	pending → authorized | successful | failed | error   (the acquirer's answer)
//	authorized → successful (captured) | canceled (voided) | failed (capture refused)
//
// awaiting (3-D Secure, wallets) sits between pending and the rest once
// those flows exist.
type ChargeStatus string

// The charge statuses of UnivaPay's API.
const (
	ChargePending    ChargeStatus = "pending"
	ChargeAwaiting   ChargeStatus = "awaiting"
	ChargeAuthorized ChargeStatus = "authorized"
	ChargeSuccessful ChargeStatus = "successful"
	ChargeFailed     ChargeStatus = "failed"
	ChargeError      ChargeStatus = "error"
	ChargeCanceled   ChargeStatus = "canceled"
)

// Final reports whether nothing more will happen to a charge by itself.
func (st ChargeStatus) Final() bool {
	return st == ChargeSuccessful || st == ChargeFailed || st == ChargeError || st == ChargeCanceled
}

// CaptureState tracks a capture of an authorised charge.
type CaptureState string

// Capture states: none asked, asked and not yet done by the acquirer, done.
const (
	CaptureNone      CaptureState = ""
	CaptureRequested CaptureState = "requested"
	CaptureDone      CaptureState = "done"
)

// Charge is a payment on a transaction token (UnivaPay's wire format).
type Charge struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	MerchantID     uuid.UUID
	TokenID        uuid.UUID
	TokenType      TokenType
	SubscriptionID uuid.UUID
	// PaymentID is the subscription's scheduled payment the charge pays.
	PaymentID       uuid.UUID
	Mode            Mode
	RequestedAmount int64
	Currency        string
	ChargedAmount   *int64
	Capture         bool
	CaptureAt       *time.Time
	CaptureState    CaptureState
	// OnlyDirectCurrency is the merchant's wish that the charge be taken
	// in its own currency, never converted. Kessai never converts, so
	// every charge meets it; it is kept to be shown as asked.
	OnlyDirectCurrency    bool
	CaptureAmount         int64
	Descriptor            string
	Status                ChargeStatus
	Error                 *PaymentError
	Metadata              Metadata
	ThreeDS               ThreeDSSettings
	RedirectEndpoint      string
	MerchantTransactionID string
	IPAddress             string
	// PaymentType is the token's (card when empty: charges from before
	// wallets).
	PaymentType string
	// CardLastFour and Email are copied from the token so that lists can
	// filter on them.
	CardLastFour string
	Email        string
	// FromBrowser is set when a browser (an app token without its secret)
	// made the charge: only then may a browser follow its shopper's
	// approval (the issuer token, the QR code), and only for a few
	// minutes.
	FromBrowser bool
	CreatedOn   time.Time
	UpdatedOn   time.Time
}

// stage is where the charge is, for a long poll to see a change.
func (ch *Charge) stage() string {
	return string(ch.Status) + "/" + string(ch.CaptureState) + "/" + string(ch.ThreeDS.Status)
}

// inFlight reports whether the charge is waiting for the worker.
func (ch *Charge) inFlight() bool {
	return ch.Status == ChargePending || ch.Status == ChargeAwaiting || ch.CaptureState == CaptureRequested
}

// NewCharge asks for a charge.
type NewCharge struct {
	TokenID            uuid.UUID
	Amount             int64
	Currency           string
	Capture            *bool
	CaptureAt          *time.Time
	OnlyDirectCurrency bool
	Descriptor         string
	Metadata           Metadata
	ThreeDS            *ThreeDSSettings
	// ExternalThreeDS is the merchant's own 3-D Secure result (three_ds
	// mode provided).
	ExternalThreeDS       *ExternalThreeDSInput
	RedirectEndpoint      string
	MerchantTransactionID string
	IPAddress             string
	// Idempotency is the reservation of the Idempotency-Key the request
	// runs under (nil: none): the charge is recorded on it in the
	// charge's own transaction, which fails if the reservation was taken
	// over meanwhile. A subscription's first charge is not: its
	// subscription is (NewSubscription.Idempotency).
	Idempotency *IdempotencyRef
}

// chargeThreeDSModes are the 3-D Secure modes a charge may ask for.
var chargeThreeDSModes = map[string]bool{
	"normal": true, "force": true, "skip": true, "if_available": true, "require": true, "provided": true,
}

func (s *Service) testChargeQuota() Quota {
	return Quota{Resource: "test_charge", Limit: s.limits.TestChargesPerDay, Daily: true}
}

// check validates the descriptive fields of a new charge; gateway is the
// gateway's public origin, where a browser's redirects may also lead.
func (p *NewCharge) check(c *Caller, gateway string) error {
	var v Validation
	if p.ThreeDS != nil {
		if p.ThreeDS.Mode != "" && !chargeThreeDSModes[p.ThreeDS.Mode] {
			v.Add("three_ds.mode", ReasonInvalidFormat)
		}
		checkRedirect(&v, c, gateway, "three_ds.redirect_endpoint", p.ThreeDS.RedirectEndpoint)
		checkText(&v, "three_ds.redirect_id", p.ThreeDS.RedirectID, maxRedirectIDLen)
	}
	if e := p.ExternalThreeDS; e != nil && !e.empty() {
		// The merchant authenticated the shopper itself: the mode is
		// provided, whatever else it said.
		if p.ThreeDS != nil && p.ThreeDS.Mode != "" && p.ThreeDS.Mode != "provided" {
			v.Add("three_ds.mode", "FORBIDDEN_PARAMETER")
		}
		e.check(&v)
	} else if p.ThreeDS != nil && p.ThreeDS.Mode == "provided" {
		v.Add("three_ds.authentication_value", ReasonRequired)
	}
	checkText(&v, "merchant_transaction_id", p.MerchantTransactionID, maxMerchantTxnLen)
	if len(p.Descriptor) > 4*maxDescriptorLen || utf8.RuneCountInString(p.Descriptor) > maxDescriptorLen {
		v.Add("descriptor", "INVALID_CARD_DESCRIPTOR")
	} else {
		checkText(&v, "descriptor", p.Descriptor, maxDescriptorLen)
	}
	checkRedirect(&v, c, gateway, "redirect.endpoint", p.RedirectEndpoint)
	checkIP(&v, "ip_address", p.IPAddress)
	if err := v.Err(); err != nil {
		return err
	}
	return p.Metadata.check("metadata")
}

// threeDSMode is the 3-D Secure mode the charge asks for: provided when it
// carries the merchant's own authentication (whatever mode it names, as
// sealExternalThreeDS records it), else its three_ds.mode, "" for none.
func (p *NewCharge) threeDSMode() string {
	if e := p.ExternalThreeDS; e != nil && !e.empty() {
		return "provided"
	}
	if p.ThreeDS != nil {
		return p.ThreeDS.Mode
	}
	return ""
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

// browserChargeWindow is how long after making a token a browser may
// charge it: the widget and the link form charge at once.
const browserChargeWindow = 5 * time.Minute

// browserMayCharge reports whether a browser (an app token without its
// secret) may charge tok now. Only the first charge of a token a browser
// of the same store made moments ago, as the widget does: every other
// charge of a stored card needs the secret, as Stripe needs its secret key
// to charge a saved card. Otherwise anyone who reads a page's public app
// token could charge every saved card of the store.
func browserMayCharge(tok *TransactionToken, now time.Time) bool {
	return !tok.Used && madeByBrowserJustNow(tok, now)
}

// madeByBrowserJustNow reports whether a browser made tok within the
// browser window before now: the widget working on the token it has just
// made (its first charge, its 3-D Secure).
func madeByBrowserJustNow(tok *TransactionToken, now time.Time) bool {
	age := now.Sub(tok.CreatedOn)
	return tok.FromBrowser && age >= 0 && age <= browserChargeWindow
}

// chargeMadeByBrowserJustNow reports whether a browser made ch within the
// browser window before now: the widget following the charge it has just
// made to its shopper's challenge or wallet page.
func chargeMadeByBrowserJustNow(ch *Charge, now time.Time) bool {
	age := now.Sub(ch.CreatedOn)
	return ch.FromBrowser && age >= 0 && age <= browserChargeWindow
}

// chargeApprovalCaller checks that c may send a charge's shopper on to the
// approval it awaits (its issuer token, its QR code): the page's key in
// them lets whoever holds it pay, fail or cancel the payment. A
// merchant's server may, and the browser that has just made the charge,
// as for its first charge; any other browser holding the public app token
// and a charge's id would reach another shopper's payment.
func (s *Service) chargeApprovalCaller(c *Caller, ch *Charge) error {
	if c.withSecret || chargeMadeByBrowserJustNow(ch, s.clock.Now()) {
		return nil
	}
	return Errorf(CodeInvalidPermissions, "this operation requires the app token's secret")
}

// CreateCharge records a charge as pending and hands it to the worker, which
// asks the acquirer; the answer arrives asynchronously (poll the charge).
func (s *Service) CreateCharge(ctx context.Context, c *Caller, p NewCharge) (*Charge, error) {
	storeID, err := storeCaller(c)
	if err != nil {
		return nil, err
	}
	if p.TokenID == uuid.Nil {
		return nil, Invalid("transaction_token_id", ReasonRequired)
	}
	if cur, ok := LookupCurrency(p.Currency); ok && p.Amount > cur.MaxAmount {
		return nil, Errorf(CodeChargeAmountTooHigh, "amount is above the maximum for "+cur.Code)
	}
	cur, err := checkAmount(p.Amount, p.Currency, "amount")
	if err != nil {
		return nil, err
	}
	if p.Amount < cur.MinAmount {
		return nil, Errorf(CodeChargeAmountTooLow, "amount is below the minimum for "+cur.Code)
	}
	if err := p.check(c, s.publicOrigin); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if p.CaptureAt != nil && !captureAtAllowed(*p.CaptureAt, now) {
		return nil, Invalid("capture_at", "INVALID_SCHEDULED_CAPTURE_DATE")
	}
	ch := &Charge{
		ID:                    NewID(),
		StoreID:               storeID,
		MerchantID:            c.MerchantID(),
		TokenID:               p.TokenID,
		Mode:                  c.token.Mode,
		RequestedAmount:       p.Amount,
		Currency:              cur.Code,
		Capture:               p.Capture == nil || *p.Capture,
		CaptureAt:             p.CaptureAt,
		OnlyDirectCurrency:    p.OnlyDirectCurrency,
		Descriptor:            p.Descriptor,
		Status:                ChargePending,
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
	if e := p.ExternalThreeDS; e != nil && !e.empty() {
		if err := s.sealExternalThreeDS(ch, e); err != nil {
			return nil, err
		}
	}
	err = s.update(ctx, func(tx *writeTx) error {
		if err := browserThreeDS(ctx, tx, c, storeID, "three_ds.mode", p.threeDSMode()); err != nil {
			return err
		}
		if err := s.placeCharge(ctx, tx, chargeOrder{charge: ch, caller: c, request: &p}); err != nil {
			return err
		}
		return recordEffect(ctx, tx, p.Idempotency, IdempotentEffect{Kind: EffectCharge, StoreID: ch.StoreID, ID: ch.ID})
	})
	if err != nil {
		return nil, err
	}
	s.wakeWorker()
	return ch, nil
}

// chargeOrder is a charge to place: asked for by a caller (POST /charges,
// the first charge of POST /subscriptions) or, with caller nil, by the
// gateway's own scheduler for a subscription's payment.
type chargeOrder struct {
	// charge is the charge as asked for, pending, its token's fields
	// still to be filled in.
	charge *Charge
	caller *Caller
	// request is the caller's request, for the checks of the token's
	// payment method (paymentMethod.checkCharge); nil for a
	// subscription's charges.
	request *NewCharge
}

// placeCharge checks a charge against its token and records it with the
// work that authorises it, in the caller's transaction: POST /charges and
// subscriptions share it, so a subscription's charges are charges like any
// other. The gateway's own scheduled charges are not the caller's: the
// browser rule, the test-charge quota and the duplicate rule, which guard
// against what callers send, do not apply to them.
func (s *Service) placeCharge(ctx context.Context, tx *writeTx, o chargeOrder) error {
	ch, c, now := o.charge, o.caller, o.charge.CreatedOn
	tok, err := tx.Token(ctx, ch.TokenID)
	if err != nil {
		return err
	}
	if tok.MerchantID != ch.MerchantID {
		return NotFound("transaction token")
	}
	forSubscription := ch.SubscriptionID != uuid.Nil
	switch {
	case tok.StoreID != ch.StoreID:
		return Errorf(CodeTokenForWrongStore, "the transaction token belongs to another store")
	case tok.Mode != ch.Mode:
		return Errorf(CodeProcessingModeMismatch, "the transaction token was made in another mode")
	case !tok.Active:
		return Errorf(CodeTokenExpired, "the transaction token was deleted")
	case tok.Type == SubscriptionToken && !forSubscription:
		return Errorf(CodeNotOneTimeToken, "subscription tokens are charged through subscriptions")
	case tok.Type == OneTime && tok.Used:
		return Errorf(CodeTransactionAlreadyDone, "this one-time token has already been charged")
	case tok.CVVAuthorize.Enabled && tok.CVVAuthorize.Status != CVVAuthCurrent:
		return Errorf(CodeCVVAuthorizationNotCompleted, "the token's CVV authorization has not succeeded")
	case c != nil && !c.withSecret && !browserMayCharge(tok, now):
		return Errorf(CodeInvalidPermissions, "charging a stored token requires the app token's secret")
	}
	if ch.Mode == ModeLive && !s.processor.SupportsLive() {
		return Errorf(CodeNoGatewaysAvailable, "no live acquirer is configured")
	}
	if ch.Mode == ModeTest && c != nil {
		if err := s.testChargeQuota().take(ctx, tx, "store:"+ch.StoreID.String(), now); err != nil {
			return err
		}
	}
	m, err := methodOf(tok.PaymentType)
	if err != nil {
		return err
	}
	if o.request == nil && !m.traits().subscriptions {
		return Errorf(CodeNotSubscriptionToken, "subscriptions are charged to cards")
	}
	if err := m.checkCharge(tok, o.request); err != nil {
		return err
	}
	ch.TokenType, ch.PaymentType, ch.CardLastFour, ch.Email = tok.Type, tok.PaymentType, tok.Card.LastFour, tok.Email
	ch.FromBrowser = c != nil && !c.withSecret
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
	if ch.Status == ChargePending {
		if err := tx.enqueueWork(ctx, WorkAuthorize, ch.ID, now); err != nil {
			return err
		}
	} else {
		// A rejected duplicate ends as it is made.
		tx.noteSettled(SettledCharge, string(ch.Status), ch.Error)
		if err := tx.announce(ctx, EventChargeFinished, ch); err != nil {
			return err
		}
	}
	return tx.PutLedgerEntry(ctx, chargeLedgerEntry(ch))
}

// moveCharge writes ch, whose status was from, and when the status
// changed, in the same transaction: tells the Meter (once committed) that
// the charge settled; records its event, charge.updated when it awaits
// its shopper or is authorised, charge.finished when it ends; and carries
// its subscription's payment on (subscriptionChargeEnded) when it is a
// subscription's charge that was authorised or ended. Every path that
// moves a charge (the acquirer's answer, 3-D Secure, a wallet, an
// expiry, a cancel) goes through it, so that each of them has every one
// of these effects.
func (s *Service) moveCharge(ctx context.Context, tx *writeTx, ch *Charge, from ChargeStatus) error {
	if err := tx.UpdateCharge(ctx, ch); err != nil {
		return err
	}
	if ch.Status == from {
		return nil
	}
	tx.noteSettled(SettledCharge, string(ch.Status), ch.Error)
	if name := chargeEvent(ch.Status); name != "" {
		if err := tx.announce(ctx, name, ch); err != nil {
			return err
		}
	}
	if ch.PaymentID != uuid.Nil && (ch.Status.Final() || ch.Status == ChargeAuthorized) {
		return s.subscriptionChargeEnded(ctx, tx, ch)
	}
	return nil
}

// chargeEvent is the event of a charge reaching status, if any: awaiting
// its shopper and authorised are updates, every end is a finish.
func chargeEvent(st ChargeStatus) string {
	switch {
	case st.Final():
		return EventChargeFinished
	case st == ChargeAuthorized || st == ChargeAwaiting:
		return EventChargeUpdated
	}
	return ""
}

// rejectDuplicate applies the duplicate-charge rule (README, duplicate charges):
// a recurring card token charged the same amount and currency within the
// window of a charge that was accepted is recorded as failed with payment
// error 311, and never reaches the acquirer. Running inside the creating
// transaction makes the check and the recording one atomic step: of N
// identical concurrent requests exactly one is accepted.
func (s *Service) rejectDuplicate(ctx context.Context, tx Tx, tok *TransactionToken, ch *Charge, now time.Time) error {
	m, err := methodOf(tok.PaymentType)
	if err != nil || tok.Type != Recurring || !m.traits().duplicates || s.limits.DuplicateWindow <= 0 {
		return err
	}
	dup, err := tx.RecentCharge(ctx, tok.ID, ch.RequestedAmount, ch.Currency, now.Add(-s.limits.DuplicateWindow))
	if err != nil || !dup {
		return err
	}
	ch.Status = ChargeFailed
	ch.Error = NewPaymentError(ErrTooManyCharges,
		"the same recurring token was charged the same amount within "+s.limits.DuplicateWindow.String())
	return nil
}

// visibleCharge returns a charge of storeID the caller may see.
func (s *Service) visibleCharge(ctx context.Context, tx Tx, c *Caller, storeID, id uuid.UUID) (*Charge, error) {
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
	if ch.StoreID != storeID || ch.Mode != c.token.Mode || !c.canSeeStore(&Store{ID: ch.StoreID, MerchantID: ch.MerchantID}) {
		return nil, NotFound("charge")
	}
	return ch, nil
}

// Charge returns a charge. With wait > 0 it is a long poll: while the charge
// is still being processed, it waits up to wait for it to change. A cancel
// or refund of the charge still waiting for the worker counts as
// processing: the shop plugins cancel, then poll the charge until it is
// canceled (PHP's awaitResult), and a refunded charge's poll answers once
// the refund is done.
func (s *Service) Charge(ctx context.Context, c *Caller, storeID, id uuid.UUID, wait time.Duration) (*Charge, error) {
	var ch *Charge
	var operating bool
	read := func() error {
		// visibleCharge is one read: the charge's row decides who sees it.
		err := s.viewOne(ctx, func(tx Tx) error {
			var err error
			ch, err = s.visibleCharge(ctx, tx, c, storeID, id)
			return err
		})
		operating = false
		if err != nil || wait <= 0 || (ch.Status != ChargeAuthorized && ch.Status != ChargeSuccessful) {
			return err
		}
		// Only a long poll of a charge that a cancel or refund can
		// still change asks more. The charge is read again with the
		// question, in one snapshot: an operation seen finished with the
		// charge as it was before would answer a stale status.
		return s.view(ctx, func(tx Tx) error {
			var err error
			if ch, err = s.visibleCharge(ctx, tx, c, storeID, id); err != nil {
				return err
			}
			operating, err = operationUnderWay(ctx, tx, ch)
			return err
		})
	}
	err := s.longPoll(ctx, id, wait, read, func() (string, bool) { return ch.stage(), ch.inFlight() || operating })
	return ch, err
}

// operationUnderWay reports whether a cancel (of an authorisation) or a
// refund (of a successful charge) is waiting for the worker.
func operationUnderWay(ctx context.Context, tx Tx, ch *Charge) (bool, error) {
	switch ch.Status {
	case ChargeAuthorized:
		return tx.PendingCancelFor(ctx, ch.ID)
	case ChargeSuccessful:
		return tx.PendingRefundFor(ctx, ch.ID)
	}
	return false, nil
}

// ChargeFilter narrows a charge list (UnivaPay's wire format).
type ChargeFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID
	Mode       Mode
	Status     ChargeStatus
	Currency   string
	From, To   *time.Time
	AmountFrom *int64
	AmountTo   *int64
	TokenID    uuid.UUID
	// SubscriptionID and PaymentID select a subscription's charges, or
	// one of its payments'.
	SubscriptionID uuid.UUID
	PaymentID      uuid.UUID
	LastFour       string
	// Cardholder, ExpMonth, ExpYear, CardBIN and Phone are read from the
	// charge's token as it is now (MatchesToken).
	Cardholder string
	ExpMonth   *int
	ExpYear    *int
	CardBIN    string
	// Phone is digits: the token's phone number matches when its local
	// number, or its country code followed by it, has these digits.
	Phone string
	Email string
	// MetadataKey/Value match one metadata entry (`metadata=order_id: 123`).
	MetadataKey   string
	MetadataValue string
}

// MatchesToken reports whether the charge's token tok meets the filter's
// card and phone conditions: the cardholder's name in any case (ASCII
// letters), the expiry, the BIN, the phone's digits.
func (f ChargeFilter) MatchesToken(tok *TransactionToken) bool {
	switch {
	case f.Cardholder != "" && asciiLower(f.Cardholder) != asciiLower(tok.Card.Cardholder),
		f.ExpMonth != nil && *f.ExpMonth != tok.Card.ExpMonth,
		f.ExpYear != nil && *f.ExpYear != tok.Card.ExpYear,
		f.CardBIN != "" && f.CardBIN != tok.Card.BIN:
		return false
	}
	if f.Phone == "" {
		return true
	}
	p := tok.Card.Billing.PhoneNumber
	if p == nil {
		return false
	}
	local := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -()+", r) {
			return -1
		}
		return r
	}, p.LocalNumber)
	return f.Phone == local || f.Phone == strconv.Itoa(p.CountryCode)+local
}

// Charges lists charges of one store, or of every store the caller sees.
func (s *Service) Charges(ctx context.Context, c *Caller, storeID uuid.UUID, f ChargeFilter, p ListParams) (Page[*Charge], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*Charge]{}, err
	}
	var ok bool
	if f.Mode, ok = c.ownMode(f.Mode); !ok {
		return emptyPage[*Charge](p), nil
	}
	var page Page[*Charge]
	err := s.view(ctx, func(tx Tx) error {
		scope, err := s.listScope(ctx, tx, c, storeID)
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
func (s *Service) UpdateCharge(ctx context.Context, c *Caller, storeID, id uuid.UUID, metadata Metadata) (*Charge, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var ch *Charge
	err := s.update(ctx, func(tx *writeTx) error {
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

// ChargeCapture asks for a capture.
type ChargeCapture struct {
	// Amount is how much to capture (nil: all that was authorised), in
	// Currency (empty: the charge's).
	Amount   *int64
	Currency string
	// Idempotency is the reservation of the request's Idempotency-Key
	// (nil: none), on which the capture is recorded in its transaction.
	Idempotency *IdempotencyRef
}

// CaptureCharge asks for the capture of an authorised charge: all of it
// or part of it. The worker asks the acquirer; the charge turns
// successful (or failed, if the authorisation had expired).
func (s *Service) CaptureCharge(ctx context.Context, c *Caller, storeID, id uuid.UUID, p ChargeCapture) error {
	amount, currency := p.Amount, p.Currency
	if err := c.requireSecret(); err != nil {
		return err
	}
	return s.update(ctx, func(tx *writeTx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		switch {
		case ch.Status == ChargeSuccessful || ch.CaptureState != CaptureNone:
			return Errorf(CodeAlreadyCaptured, "the charge has already been captured")
		case ch.Status != ChargeAuthorized:
			return Invalid("status", "INVALID_CHARGE_STATUS")
		}
		capture := *ch.ChargedAmount
		if currency != "" && !sameCurrency(currency, ch.Currency) {
			return Errorf(CodeCurrencyMustMatchCharge, "capture currency differs from the charge's")
		}
		if amount != nil {
			if *amount <= 0 {
				return Invalid("amount", "INVALID_AMOUNT")
			}
			if *amount > capture {
				return Errorf(CodeCaptureAmountTooLarge, "capture amount exceeds the authorised amount")
			}
			capture = *amount
		}
		if err := requestCapture(ctx, tx, ch, capture, s.clock.Now()); err != nil {
			return err
		}
		return recordEffect(ctx, tx, p.Idempotency, IdempotentEffect{Kind: EffectCapture, StoreID: ch.StoreID, ChargeID: ch.ID, ID: ch.ID})
	})
}

// requestCapture marks an authorised charge as being captured for amount
// and queues the acquirer call (waking the worker), in the caller's
// transaction; the charge stays authorised, so no event is due until the
// acquirer answers. The merchant's capture and the one scheduled by
// capture_at both go through it, so that they are retried, fail and end
// the charge alike.
func requestCapture(ctx context.Context, tx *writeTx, ch *Charge, amount int64, now time.Time) error {
	ch.CaptureState, ch.CaptureAmount, ch.UpdatedOn = CaptureRequested, amount, now
	if err := tx.UpdateCharge(ctx, ch); err != nil {
		return err
	}
	return tx.enqueueWork(ctx, WorkCapture, ch.ID, now)
}

func sameCurrency(a, b string) bool {
	ca, ok := LookupCurrency(a)
	return ok && ca.Code == b
}
