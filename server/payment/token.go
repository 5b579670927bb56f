package payment

import (
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
)

// TokenType is how a transaction token may be used.
type TokenType string

// The token types of UnivaPay's API.
const (
	OneTime           TokenType = "one_time"
	SubscriptionToken TokenType = "subscription"
	Recurring         TokenType = "recurring"
)

func (t TokenType) Valid() bool { return t == OneTime || t == SubscriptionToken || t == Recurring }

// Billing is the cardholder's billing address and phone.
type Billing struct {
	Line1       string `json:"line1,omitempty"`
	Line2       string `json:"line2,omitempty"`
	State       string `json:"state,omitempty"`
	City        string `json:"city,omitempty"`
	Country     string `json:"country,omitempty"`
	Zip         string `json:"zip,omitempty"`
	PhoneNumber *Phone `json:"phone_number,omitempty"`
}

// Phone is a phone number split as the wire format splits it.
type Phone struct {
	CountryCode int    `json:"country_code"`
	LocalNumber string `json:"local_number"`
}

// TokenCard is what Kessai keeps about a card in the clear: never more than
// the BIN and the last four digits of the number.
type TokenCard struct {
	Cardholder string
	ExpMonth   int
	ExpYear    int
	BIN        string
	LastFour   string
	Brand      string
	Billing    Billing
	// Number and CVC are sealed by the CardVault; the CVC is erased after
	// the first authorisation (SealedCVC.Data == nil).
	SealedNumber Sealed
	SealedCVC    Sealed
}

// ThreeDSSettings are a token's or charge's 3-D Secure wishes and where
// its authentication is (threeds.go).
type ThreeDSSettings struct {
	Enabled          bool   `json:"enabled,omitempty"`
	Mode             string `json:"mode,omitempty"`
	RedirectEndpoint string `json:"redirect_endpoint,omitempty"`
	RedirectID       string `json:"redirect_id,omitempty"`
	// Status is empty until 3-D Secure is under way.
	Status ThreeDSStatus `json:"status,omitempty"`
	// Error is why an authentication failed.
	Error *PaymentError `json:"error,omitempty"`
	// Exempted: no authentication was asked of the issuer (mode skip).
	Exempted bool `json:"exempted,omitempty"`
	// External is the merchant's own authentication (mode provided).
	External *ExternalThreeDS `json:"external,omitempty"`
}

// CVVAuthorize is a token's CVV authorisation: with Enabled, the card and
// its CVC are checked by an authorisation that is voided at once, before
// the token may be charged (cvvauth.go).
type CVVAuthorize struct {
	Enabled  bool   `json:"enabled"`
	Currency string `json:"currency,omitempty"`
	// Status is CVVAuthPending until the worker has asked the acquirer,
	// then CVVAuthCurrent or CVVAuthFailed; empty when not Enabled.
	Status CVVAuthStatus `json:"status,omitempty"`
	// AuthorizationID is the id of the check's authorisation at the
	// acquirer, once it was made (the wire's charge_id).
	AuthorizationID uuid.UUID `json:"authorization_id,omitzero"`
	// Error is the acquirer's refusal of a failed check.
	Error *PaymentError `json:"error,omitempty"`
}

// CVVAuthStatus is where a CVV authorisation is (UnivaPay's wire format).
type CVVAuthStatus string

// The CVV authorisation statuses Kessai uses.
const (
	CVVAuthPending CVVAuthStatus = "pending"
	CVVAuthCurrent CVVAuthStatus = "current"
	CVVAuthFailed  CVVAuthStatus = "failed"
)

// TransactionToken is a tokenised payment method (UnivaPay's wire format).
type TransactionToken struct {
	ID           uuid.UUID
	StoreID      uuid.UUID
	MerchantID   uuid.UUID
	Mode         Mode
	PaymentType  string
	Type         TokenType
	UsageLimit   string
	Email        string
	Active       bool
	Metadata     Metadata
	IPAddress    string
	Card         TokenCard
	CVVAuthorize CVVAuthorize
	ThreeDS      ThreeDSSettings
	// Data is what a token of a method other than card holds.
	Data TokenData
	// FromBrowser is set when a browser (an app token without its secret)
	// made the token: only then may a browser charge it, once, at once.
	FromBrowser bool
	// Used is set once the token has been charged.
	Used       bool
	LastUsedOn *time.Time
	CreatedOn  time.Time
	UpdatedOn  time.Time
}

// CardInput is card data as a client sends it.
type CardInput struct {
	Cardholder   string
	Number       string
	ExpMonth     int
	ExpYear      int
	CVV          string
	Billing      Billing
	CVVAuthorize CVVAuthorize
	ThreeDS      ThreeDSSettings
}

// NewToken asks for a transaction token.
type NewToken struct {
	PaymentType string
	Type        TokenType
	UsageLimit  string
	Email       string
	Metadata    Metadata
	IPAddress   string
	Card        *CardInput
	// Data is the data of a token of a method other than card, as the
	// client sent it.
	Data    *TokenData
	ThreeDS *ThreeDSSettings
}

// Stage is where the token's checks are, for a long poll to see a change.
func (t *TransactionToken) Stage() string {
	return string(t.CVVAuthorize.Status) + "/" + string(t.ThreeDS.Status)
}

// InFlight reports whether something is under way for the token: its CVV
// check, or its 3-D Secure (waiting for the issuer or the shopper).
func (t *TransactionToken) InFlight() bool {
	return t.CVVAuthorize.Status == CVVAuthPending || t.ThreeDS.Status == ThreeDSPending || t.ThreeDS.Status == ThreeDSAwaiting
}

// TokenFilter narrows a token list.
type TokenFilter struct {
	MerchantID uuid.UUID
	StoreID    uuid.UUID // uuid.Nil: every store of the merchant
	Mode       Mode
	Type       TokenType
	// PaymentType keeps the tokens of one payment type.
	PaymentType string
	// CustomerID matches TransactionToken.CustomerID.
	CustomerID string
	Email      string
	// Active, when set, keeps the tokens whose Active is the same.
	Active *bool
	// Search keeps the tokens that MatchesSearch it.
	Search string
}

// customerIDKeys are the metadata keys that link a token to a customer
// UUID (POST /stores/{id}/create_customer_id): univapay-customer-id, and
// gopay-customer-id, the older name PHP's SDK still writes. The first one
// a token holds as a string counts.
var customerIDKeys = [...]string{"univapay-customer-id", "gopay-customer-id"}

// CustomerID is the customer UUID the token's metadata links it to, or "".
func (t *TransactionToken) CustomerID() string {
	for _, k := range customerIDKeys {
		if s, ok := t.Metadata[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// MatchesSearch reports whether a token list's search term q finds t: its
// e-mail or cardholder contains q, letters compared in any case (ASCII
// only, as the storage engines compare), or q is its card's last four
// digits.
func (t *TransactionToken) MatchesSearch(q string) bool {
	return q == t.Card.LastFour || containsFold(t.Email, q) || containsFold(t.Card.Cardholder, q)
}

// containsFold reports whether s contains sub, ASCII letters in any case.
func containsFold(s, sub string) bool {
	return strings.Contains(asciiLower(s), asciiLower(sub))
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// TokenUpdate changes a token: nil fields stay as they are.
type TokenUpdate struct {
	Email    *string
	Metadata Metadata
	CVV      *string
	ExpMonth *int
	ExpYear  *int
	Billing  *Billing
}

// PatchedFrom reports whether a PATCH changed the token from what it was
// before: what the merchant sees of it (its e-mail, metadata, expiry,
// billing address) or a CVC sealed anew under another key. A PATCH that
// changed none of it is not news (token.updated), and neither is a
// charge marking the token used.
func (t *TransactionToken) PatchedFrom(before *TransactionToken) bool {
	return t.Email != before.Email || !reflect.DeepEqual(t.Metadata, before.Metadata) ||
		t.Card.ExpMonth != before.Card.ExpMonth || t.Card.ExpYear != before.Card.ExpYear ||
		!reflect.DeepEqual(t.Card.Billing, before.Card.Billing) ||
		t.Card.SealedCVC.KeyID != before.Card.SealedCVC.KeyID && t.Card.SealedCVC.Data != nil
}

// TokenReceipt is what a gateway page may learn of a transaction token of
// its store: enough to tell the shopper that the card was saved, none of
// what the token holds about them (e-mail, name, card).
type TokenReceipt struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Type      TokenType
	CreatedOn time.Time
}
