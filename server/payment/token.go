package payment

import (
	"context"
	"net/mail"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/wasm/card"
)

// TokenType is how a transaction token may be used.
type TokenType string

// The token types of UnivaPay's API.
const (
	OneTime           TokenType = "one_time"
	SubscriptionToken TokenType = "subscription"
	Recurring         TokenType = "recurring"
)

func (t TokenType) valid() bool { return t == OneTime || t == SubscriptionToken || t == Recurring }

// usageLimits are the recurring token usage limits.
var usageLimits = map[string]bool{"daily": true, "weekly": true, "monthly": true, "annually": true}

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
	// Wallet is an online or QR-merchant token's wallet.
	Wallet WalletData
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
	// Wallet is the data of an online or QR-merchant token.
	Wallet  *WalletInput
	ThreeDS *ThreeDSSettings
}

// fromGatewayPage reports whether a request came from one of the gateway's
// own pages (the widget frame, the link form): a browser request without a
// secret whose origin is the gateway itself.
func (s *Service) fromGatewayPage(c *Caller) bool {
	return c.console || !c.withSecret && c.origin != "" && s.publicOrigin != "" &&
		strings.EqualFold(strings.TrimRight(c.origin, "/"), s.publicOrigin)
}

// storeCaller returns the store a store token acts for; merchant tokens
// cannot create payments (UnivaPay's wire format).
func storeCaller(c *Caller) (uuid.UUID, error) {
	if c.token.IsMerchantToken() {
		return uuid.Nil, Errorf(CodeInvalidPermissions, "this operation needs a store app token")
	}
	return c.token.StoreID, nil
}

// checkEmail records what is wrong with an e-mail address that is to be
// stored: not an address, or an address made of a card number, which
// would then be stored and shown in the clear.
func checkEmail(v *Validation, field, s string) {
	switch {
	case s == "":
	case !validEmail(s):
		v.Add(field, "INVALID_FORMAT_EMAIL")
	case ContainsCardNumber(s):
		v.Add(field, ReasonCardNumber)
	}
}

func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

func (s *Service) checkNewToken(p *NewToken, c *Caller, now time.Time) error {
	var v Validation
	p.Email = strings.TrimSpace(p.Email)
	m, known := lookupMethod(p.PaymentType)
	switch {
	case p.PaymentType == "":
		v.Add("payment_type", ReasonRequired)
	case !known:
		v.Add("payment_type", "PAYMENT_TYPE_NOT_SUPPORTED")
	}
	// A request that names no type asks for a one-time token, the kind
	// that needs no further setting (PHP's SDK leaves type out unless it
	// is given one).
	if p.Type == "" {
		p.Type = OneTime
	}
	if !p.Type.valid() {
		v.Add("type", ReasonInvalidFormat)
	}
	if p.UsageLimit != "" {
		if p.Type != Recurring {
			v.Add("usage_limit", "USAGE_LIMIT_NOT_APPLICABLE")
		} else if !usageLimits[p.UsageLimit] {
			v.Add("usage_limit", ReasonInvalidFormat)
		}
	}
	switch {
	case p.Email == "" && (!known || m.traits().email):
		// A wallet knows its shopper: only the methods that need an
		// address to reach them ask for one.
		v.Add("email", ReasonRequired)
	default:
		checkEmail(&v, "email", p.Email)
	}
	if known {
		m.checkToken(&v, p, now)
	}
	if p.ThreeDS != nil {
		if p.ThreeDS.Mode != "" && !tokenThreeDSModes[p.ThreeDS.Mode] {
			v.Add("three_ds.mode", ReasonInvalidFormat)
		}
		checkRedirect(&v, c, s.publicOrigin, "three_ds.redirect_endpoint", p.ThreeDS.RedirectEndpoint)
		checkText(&v, "three_ds.redirect_id", p.ThreeDS.RedirectID, maxRedirectIDLen)
	}
	if p.Card != nil {
		p.Card.Billing.check(&v, "")
		checkRedirect(&v, c, s.publicOrigin, "three_ds.redirect_endpoint", p.Card.ThreeDS.RedirectEndpoint)
	}
	checkIP(&v, "ip_address", p.IPAddress)
	if err := v.Err(); err != nil {
		return err
	}
	return p.Metadata.check("metadata")
}

// tokenThreeDSModes are the 3-D Secure modes a token may ask for.
var tokenThreeDSModes = map[string]bool{"normal": true, "force": true, "skip": true, "if_available": true}

// CreateToken tokenises a card for the caller's store.
func (s *Service) CreateToken(ctx context.Context, c *Caller, p NewToken) (*TransactionToken, error) {
	storeID, err := storeCaller(c)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if err := s.checkNewToken(&p, c, now); err != nil {
		return nil, err
	}
	m, err := methodOf(p.PaymentType)
	if err != nil {
		return nil, err
	}
	tok := &TransactionToken{
		ID:          NewID(),
		StoreID:     storeID,
		MerchantID:  c.MerchantID(),
		Mode:        c.token.Mode,
		PaymentType: p.PaymentType,
		Type:        p.Type,
		UsageLimit:  p.UsageLimit,
		Email:       p.Email,
		Active:      true,
		Metadata:    p.Metadata,
		IPAddress:   p.IPAddress,
		FromBrowser: !c.withSecret,
		CreatedOn:   now,
		UpdatedOn:   now,
	}
	if err := m.newToken(s, c, &p, tok); err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx *writeTx) error {
		st, err := tx.Store(ctx, storeID)
		if err != nil {
			return err
		}
		if err := m.admitToken(ctx, s, tx, c, st, tok); err != nil {
			return err
		}
		if err := tx.CreateToken(ctx, tok); err != nil {
			return err
		}
		if err := tx.announce(ctx, EventTokenCreated, tok); err != nil {
			return err
		}
		return m.startToken(ctx, tx, tok, now)
	})
	if err != nil {
		return nil, err
	}
	return tok, nil
}

// cvcAssociated binds a sealed CVC to its token and keeps it from being
// swapped with the sealed number.
func cvcAssociated(id uuid.UUID) []byte { return append([]byte("cvc:"), id[:]...) }

// visibleToken returns a token the caller may see; a store token sees its
// store's, a merchant token its merchant's.
func (s *Service) visibleToken(ctx context.Context, tx Tx, c *Caller, storeID, id uuid.UUID) (*TransactionToken, error) {
	if _, err := s.visibleStore(ctx, tx, c, storeID); err != nil {
		return nil, err
	}
	tok, err := tx.Token(ctx, id)
	if err != nil {
		return nil, err
	}
	if tok.StoreID != storeID || tok.Mode != c.token.Mode {
		return nil, NotFound("transaction token")
	}
	return tok, nil
}

// Token returns one of a store's transaction tokens. It holds the
// shopper's e-mail, name and billing address: only a merchant's server
// (with the secret) may read it. With wait > 0 it is a long poll, as for
// charges: while the token's CVV check or 3-D Secure is under way it waits
// up to wait for it to change (the PHP SDK's awaitResult re-reads at once).
func (s *Service) Token(ctx context.Context, c *Caller, storeID, id uuid.UUID, wait time.Duration) (*TransactionToken, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var tok *TransactionToken
	read := func() error {
		return s.view(ctx, func(tx Tx) error {
			var err error
			tok, err = s.visibleToken(ctx, tx, c, storeID, id)
			return err
		})
	}
	err := s.longPoll(ctx, id, wait, read, func() (string, bool) { return tok.stage(), tok.inFlight() })
	return tok, err
}

// stage is where the token's checks are, for a long poll to see a change.
func (t *TransactionToken) stage() string {
	return string(t.CVVAuthorize.Status) + "/" + string(t.ThreeDS.Status)
}

// inFlight reports whether something is under way for the token: its CVV
// check, or its 3-D Secure (waiting for the issuer or the shopper).
func (t *TransactionToken) inFlight() bool {
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

// Tokens lists transaction tokens of one store (storeID) or, for uuid.Nil,
// of every store the caller can see.
func (s *Service) Tokens(ctx context.Context, c *Caller, storeID uuid.UUID, f TokenFilter, p ListParams) (Page[*TransactionToken], error) {
	if err := c.requireSecret(); err != nil {
		return Page[*TransactionToken]{}, err
	}
	var ok bool
	if f.Mode, ok = c.ownMode(f.Mode); !ok {
		return emptyPage[*TransactionToken](p), nil
	}
	var page Page[*TransactionToken]
	err := s.view(ctx, func(tx Tx) error {
		scope, err := s.listScope(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		f.MerchantID, f.StoreID = scope.MerchantID, scope.StoreID
		page, err = tx.ListTokens(ctx, f, p)
		return err
	})
	return page, err
}

// listScope is whose objects a list shows: one store, or for a merchant
// token without a store in the path, all of the merchant's.
func (s *Service) listScope(ctx context.Context, tx Tx, c *Caller, storeID uuid.UUID) (AppTokenFilter, error) {
	if storeID == uuid.Nil {
		if c.token.IsMerchantToken() {
			return AppTokenFilter{MerchantID: c.MerchantID()}, nil
		}
		return AppTokenFilter{MerchantID: c.MerchantID(), StoreID: c.token.StoreID}, nil
	}
	st, err := s.visibleStore(ctx, tx, c, storeID)
	if err != nil {
		return AppTokenFilter{}, err
	}
	return AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, nil
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

// UpdateToken applies a PATCH to a token.
func (s *Service) UpdateToken(ctx context.Context, c *Caller, storeID, id uuid.UUID, u TokenUpdate) (*TransactionToken, error) {
	if err := c.requireSecret(); err != nil {
		return nil, err
	}
	var tok *TransactionToken
	err := s.update(ctx, func(tx *writeTx) error {
		var err error
		if tok, err = s.visibleToken(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		before := *tok
		now := s.clock.Now()
		var v Validation
		if u.Email != nil {
			tok.Email = strings.TrimSpace(*u.Email)
			if tok.Email == "" {
				v.Add("email", "INVALID_FORMAT_EMAIL")
			} else {
				checkEmail(&v, "email", tok.Email)
			}
		}
		month, year := tok.Card.ExpMonth, tok.Card.ExpYear
		if u.ExpMonth != nil {
			month = *u.ExpMonth
		}
		if u.ExpYear != nil {
			year = card.NormalizeYear(*u.ExpYear)
		}
		if u.ExpMonth != nil || u.ExpYear != nil {
			if month < 1 || month > 12 {
				v.Add(card.FieldExpMonth, card.ReasonInvalidExpiration)
			} else if !card.ValidExpiry(month, year, now) {
				v.Add(card.FieldExpYear, card.ReasonInvalidExpiration)
			}
			tok.Card.ExpMonth, tok.Card.ExpYear = month, year
		}
		if u.CVV != nil {
			cvc := card.Digits(*u.CVV)
			if card.CVVState(cvc, card.Brand(tok.Card.Brand)) != "" {
				v.Add(card.FieldCVV, card.ReasonInvalidCVV)
			} else if tok.Card.SealedCVC, err = s.vault.Seal([]byte(cvc), cvcAssociated(tok.ID)); err != nil {
				return err
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		if u.Billing != nil {
			u.Billing.check(&v, "")
			tok.Card.Billing = *u.Billing
		}
		if err := v.Err(); err != nil {
			return err
		}
		if u.Metadata != nil {
			if tok.Metadata, err = tok.Metadata.Merge(u.Metadata); err != nil {
				return err
			}
		}
		tok.UpdatedOn = now
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		if !tok.patchedFrom(&before) {
			return nil
		}
		return tx.announce(ctx, EventTokenUpdated, tok)
	})
	return tok, err
}

// patchedFrom reports whether a PATCH changed the token from what it was
// before: what the merchant sees of it (its e-mail, metadata, expiry,
// billing address) or a CVC sealed anew under another key. A PATCH that
// changed none of it is not news (token.updated), and neither is a
// charge marking the token used.
func (t *TransactionToken) patchedFrom(before *TransactionToken) bool {
	return t.Email != before.Email || !reflect.DeepEqual(t.Metadata, before.Metadata) ||
		t.Card.ExpMonth != before.Card.ExpMonth || t.Card.ExpYear != before.Card.ExpYear ||
		!reflect.DeepEqual(t.Card.Billing, before.Card.Billing) ||
		t.Card.SealedCVC.KeyID != before.Card.SealedCVC.KeyID && t.Card.SealedCVC.Data != nil
}

// DeleteToken deactivates a token: it can no longer be charged, but it and
// its charges stay readable.
func (s *Service) DeleteToken(ctx context.Context, c *Caller, storeID, id uuid.UUID) error {
	if err := c.requireSecret(); err != nil {
		return err
	}
	return s.update(ctx, func(tx *writeTx) error {
		tok, err := s.visibleToken(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if !tok.Active {
			return nil
		}
		tok.Active = false
		tok.UpdatedOn = s.clock.Now()
		if err := tx.UpdateToken(ctx, tok); err != nil {
			return err
		}
		if tok.Type != Recurring {
			return nil
		}
		return tx.announce(ctx, EventRecurringTokenDelete, tok)
	})
}
