package payment

import (
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

// Stage is where the charge is, for a long poll to see a change.
func (ch *Charge) Stage() string {
	return string(ch.Status) + "/" + string(ch.CaptureState) + "/" + string(ch.ThreeDS.Status)
}

// InFlight reports whether the charge is waiting for the worker, or for a
// shopper who is on a page now (a challenge, a wallet). A konbini payment
// or a bank transfer awaits its shopper for days: a long poll of it
// answers at once, as it would of an ended charge.
func (ch *Charge) InFlight() bool {
	shopperNow := ch.Status == ChargeAwaiting && ch.PaymentType != PaymentTypeKonbini && ch.PaymentType != PaymentTypeBankTransfer
	return ch.Status == ChargePending || shopperNow || ch.CaptureState == CaptureRequested
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

// Check validates the descriptive fields of a new charge; gateway is the
// gateway's public origin, where a browser's redirects may also lead.
func (p *NewCharge) Check(c *Caller, gateway string) error {
	var v Validation
	if p.ThreeDS != nil {
		if p.ThreeDS.Mode != "" && !chargeThreeDSModes[p.ThreeDS.Mode] {
			v.Add("three_ds.mode", ReasonInvalidFormat)
		}
		CheckRedirect(&v, c, gateway, "three_ds.redirect_endpoint", p.ThreeDS.RedirectEndpoint)
		CheckText(&v, "three_ds.redirect_id", p.ThreeDS.RedirectID, MaxRedirectIDLen)
	}
	if e := p.ExternalThreeDS; e != nil && !e.Empty() {
		// The merchant authenticated the shopper itself: the mode is
		// provided, whatever else it said.
		if p.ThreeDS != nil && p.ThreeDS.Mode != "" && p.ThreeDS.Mode != "provided" {
			v.Add("three_ds.mode", "FORBIDDEN_PARAMETER")
		}
		e.check(&v)
	} else if p.ThreeDS != nil && p.ThreeDS.Mode == "provided" {
		v.Add("three_ds.authentication_value", ReasonRequired)
	}
	CheckText(&v, "merchant_transaction_id", p.MerchantTransactionID, maxMerchantTxnLen)
	if len(p.Descriptor) > 4*maxDescriptorLen || utf8.RuneCountInString(p.Descriptor) > maxDescriptorLen {
		v.Add("descriptor", "INVALID_CARD_DESCRIPTOR")
	} else {
		CheckText(&v, "descriptor", p.Descriptor, maxDescriptorLen)
	}
	CheckRedirect(&v, c, gateway, "redirect.endpoint", p.RedirectEndpoint)
	CheckIP(&v, "ip_address", p.IPAddress)
	if err := v.Err(); err != nil {
		return err
	}
	return p.Metadata.Check("metadata")
}

// ThreeDSMode is the 3-D Secure mode the charge asks for: provided when it
// carries the merchant's own authentication (whatever mode it names, as
// sealExternalThreeDS records it), else its three_ds.mode, "" for none.
func (p *NewCharge) ThreeDSMode() string {
	if e := p.ExternalThreeDS; e != nil && !e.Empty() {
		return "provided"
	}
	if p.ThreeDS != nil {
		return p.ThreeDS.Mode
	}
	return ""
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

// ChargeQR is the code a merchant shows for a QR-merchant charge: Ready
// once the wallet's payment is open, with the address of its PNG.
type ChargeQR struct {
	Ready    bool
	ImageURL string
}
