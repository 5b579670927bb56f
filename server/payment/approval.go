package payment

import (
	"time"

	"github.com/google/uuid"
)

// ApprovalKind is what a shopper approves away from the merchant's page.
type ApprovalKind string

// The kinds of approval: a 3-D Secure challenge at the card issuer's
// access control server, a payment in a wallet's app or page, a payment at
// a konbini's counter, and a bank transfer to a virtual account.
const (
	ApprovalThreeDS      ApprovalKind = "three_ds"
	ApprovalWallet       ApprovalKind = "wallet"
	ApprovalKonbini      ApprovalKind = "konbini"
	ApprovalBankTransfer ApprovalKind = "bank_transfer"
)

// ApprovalStatus is where an approval is.
type ApprovalStatus string

// The approval statuses: waiting for the shopper, then one outcome.
const (
	ApprovalAwaiting   ApprovalStatus = "awaiting"
	ApprovalSuccessful ApprovalStatus = "successful"
	ApprovalFailed     ApprovalStatus = "failed"
	ApprovalCanceled   ApprovalStatus = "canceled"
	ApprovalExpired    ApprovalStatus = "expired"
)

// The resources an approval is for, as the issuer tokens' payload names
// them (resource_type).
const (
	ResourceCharge = "charge"
	ResourceToken  = "transaction_token"
)

// Approval is a step a shopper takes on a page that is not the merchant's:
// a 3-D Secure challenge, or paying in a wallet. Its Key is the secret
// part of that page's address: whoever holds it (the shopper's browser,
// the phone that scanned the page's QR code) may act on it, and nobody
// else can guess it. The page is the sandbox's; with a real acquirer it is
// the issuer's or the wallet's.
//
// An approval ends once, by the shopper (pay, fail, cancel, answer the
// challenge) or by the gateway at ExpiresOn: a page left open cannot keep
// a charge waiting for ever.
type Approval struct {
	Key          string
	Kind         ApprovalKind
	ResourceType string
	ResourceID   uuid.UUID
	StoreID      uuid.UUID
	MerchantID   uuid.UUID
	Mode         Mode
	// Brand and CallMethod are the wallet's (ApprovalWallet).
	Brand      string
	CallMethod string
	// Amount and Currency are what the page shows (zero for a token's
	// 3-D Secure); LastFour is the card's, for a challenge.
	Amount   int64
	Currency string
	LastFour string
	// Tries counts the wrong one-time codes given to a challenge.
	Tries int
	// Slip is what a konbini or bank-transfer shopper is told to pay
	// with.
	Slip      PaymentSlip
	Status    ApprovalStatus
	ExpiresOn time.Time
	CreatedOn time.Time
	UpdatedOn time.Time
}

// PaymentSlip is what the shopper of a konbini payment or a bank transfer
// pays with, away from any page: the numbers the store's counter asks
// for, or the account to wire the money to. It also keeps what changed
// since the charge began to await them: the deadline's extensions and the
// deposits so far.
type PaymentSlip struct {
	// ConvenienceStore, PaymentNumber and ConfirmationNumber are a
	// konbini's (the store's own numbers: some stores have no
	// confirmation number).
	ConvenienceStore   string `json:"convenience_store,omitempty"`
	PaymentNumber      string `json:"payment_number,omitempty"`
	ConfirmationNumber string `json:"confirmation_number,omitempty"`
	CustomerName       string `json:"customer_name,omitempty"`
	// VirtualAccount is a bank transfer's.
	VirtualAccount *VirtualAccount `json:"virtual_account,omitempty"`
	// Extensions counts the times the deadline (ExpiresOn) was moved
	// later; ExtendedOn is when it last was.
	Extensions int        `json:"extensions,omitempty"`
	ExtendedOn *time.Time `json:"extended_on,omitempty"`
	// Deposited is the bank transfer's deposits so far.
	Deposited int64 `json:"deposited,omitempty"`
}

// Expired reports whether the approval has run out of time at now.
func (a *Approval) Expired(now time.Time) bool { return !now.Before(a.ExpiresOn) }

// TriesLeft is how many more one-time codes a challenge takes before a
// wrong one fails it, for its page to say.
func (a *Approval) TriesLeft() int { return max(0, MaxChallengeTries-a.Tries) }

// Sandbox approval rules (the README's Sandbox section).
const (
	// ChallengeCode is the one-time code that passes a sandbox challenge.
	ChallengeCode = "123456"
	// MaxChallengeTries wrong codes fail the authentication.
	MaxChallengeTries = 3
	// ChallengeExpiry is how long a challenge stays open.
	ChallengeExpiry = 10 * time.Minute
	// DefaultWalletExpiry is how long a wallet payment waits for the
	// shopper unless Config.WalletExpiry says otherwise.
	DefaultWalletExpiry = 5 * time.Minute
)

// WorkApprovalExpiry ends an approval the shopper left unfinished, at its
// ExpiresOn; the item's object is the approval's resource.
const WorkApprovalExpiry WorkKind = "approval_expiry"

// ApprovalAction is what a shopper does on an approval's page.
type ApprovalAction string

// The actions: a wallet's Pay, Fail, Cancel and "Let it expire"; a
// challenge's answer (with its code) and Cancel.
const (
	ActionPay    ApprovalAction = "pay"
	ActionFail   ApprovalAction = "fail"
	ActionCancel ApprovalAction = "cancel"
	ActionExpire ApprovalAction = "expire"
	ActionAnswer ApprovalAction = "answer"
	// ActionDeposit is money arriving on a bank transfer's account (the
	// sandbox's page and test helper stand for the bank).
	ActionDeposit ApprovalAction = "deposit"
)

// ApprovalPage is what the page of an approval shows: the approval, the
// store's name, and where the shopper goes once it has ended.
type ApprovalPage struct {
	Approval
	StoreName string
	// RedirectEndpoint and RedirectID are the merchant's return address
	// for the shopper (the charge's redirect or 3-D Secure endpoint).
	RedirectEndpoint string
	RedirectID       string
	// FrameDomains are the domains of the store's app tokens of the
	// approval's mode: the merchant's pages that may show the approval's
	// page in a frame (besides the gateway's own widget).
	FrameDomains []string
}
