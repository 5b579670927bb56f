package payment

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Caller is who a request acts for: an app token, and whether its secret
// came along (a merchant's server) or not (a browser, from Origin). It is
// made only by the rules that check a credential — Authenticate for API
// requests, BrowserCaller for the gateway's own pages, ConsoleCaller for a
// signed-in merchant — through the constructors below; everything else
// reads it through its methods, so that what a caller may do cannot be
// changed after it was decided.
type Caller struct {
	token      *AppToken
	withSecret bool
	origin     string
	// console is a merchant in the gateway's own console (ConsoleCaller).
	console bool
}

// NewCaller is the caller of a checked app token: withSecret when the
// request proved the token's secret, origin the browser's origin ("" for
// none).
func NewCaller(tok *AppToken, withSecret bool, origin string) *Caller {
	return &Caller{token: tok, withSecret: withSecret, origin: origin}
}

// NewConsoleCaller is a signed-in merchant acting through the console on
// the gateway's own origin, with a store's app token and its secret's rights.
func NewConsoleCaller(tok *AppToken, origin string) *Caller {
	return &Caller{token: tok, withSecret: true, origin: origin, console: true}
}

// Token returns a copy of the caller's app token: changing it changes
// nothing the caller may do.
func (c *Caller) Token() *AppToken {
	t := *c.token
	t.Domains = slices.Clone(t.Domains)
	t.SecretHash = slices.Clone(t.SecretHash)
	if t.RevokedOn != nil {
		r := *t.RevokedOn
		t.RevokedOn = &r
	}
	return &t
}

// WithSecret reports whether the request carried the token's secret: a
// merchant's server rather than a browser.
func (c *Caller) WithSecret() bool { return c.withSecret }

// Console reports whether the caller is the merchant console.
func (c *Caller) Console() bool { return c.console }

// Origin is the browser origin the request came from, "" for none.
func (c *Caller) Origin() string { return c.origin }

// Mode is the mode of the caller's app token: a test token acts on test
// data, a live token on live data.
func (c *Caller) Mode() Mode { return c.token.Mode }

// StoreID is the store of a store token (uuid.Nil for a merchant token).
func (c *Caller) StoreID() uuid.UUID { return c.token.StoreID }

// TokenID is the id of the caller's app token.
func (c *Caller) TokenID() uuid.UUID { return c.token.ID }

// IsMerchantToken reports whether the caller holds a merchant-level token,
// which acts on every store of its merchant.
func (c *Caller) IsMerchantToken() bool { return c.token.IsMerchantToken() }

// Domains is a copy of the domains the caller's token may be used from.
func (c *Caller) Domains() []string { return slices.Clone(c.token.Domains) }

// MerchantID is the merchant the caller acts for.
func (c *Caller) MerchantID() uuid.UUID { return c.token.MerchantID }

// InMerchant checks a merchant named in a request's path
// (/merchants/{merchantId}/stores/…): only the caller's own merchant may be
// named; any other id is NOT_FOUND, as another tenant's objects are.
func (c *Caller) InMerchant(id uuid.UUID) error {
	if id != c.token.MerchantID {
		return NotFound("merchant")
	}
	return nil
}

// CanSeeStore reports whether the caller may act on the store: a store
// token on its own store, a merchant token on all its merchant's.
func (c *Caller) CanSeeStore(st *Store) bool {
	if st.MerchantID != c.token.MerchantID {
		return false
	}
	return c.token.IsMerchantToken() || c.token.StoreID == st.ID
}

// RequireSecret refuses browser use of operations that only a merchant's
// server may perform.
func (c *Caller) RequireSecret() error {
	if !c.withSecret {
		return Errorf(CodeInvalidPermissions, "this operation requires the app token's secret")
	}
	return nil
}

// redirectAllowed reports whether the gateway may send the caller's
// shopper to raw, a URL CheckURL accepts: a merchant's server anywhere; a
// browser only to its app token's domains, by the link form's rule
// (RedirectAllowed), or to the gateway's own pages (gateway, its public
// origin), where the link form's challenge comes back.
func (c *Caller) redirectAllowed(raw, gateway string) bool {
	if c.withSecret {
		return true
	}
	if _, ok := RedirectAllowed(raw, maxURLLen, c.token.Domains); ok {
		return true
	}
	u, ok := ParseWebURL(raw, maxURLLen)
	return ok && gateway != "" && strings.EqualFold(u.Scheme+"://"+u.Host, gateway)
}

// OwnMode narrows a list's mode filter to the caller's mode: a token sees
// only objects of its own mode, as Stripe's test and live keys do. ok is
// false when the filter asks for the other mode, whose answer is empty.
func (c *Caller) OwnMode(requested Mode) (mode Mode, ok bool) {
	if requested != "" && requested != c.token.Mode {
		return "", false
	}
	return c.token.Mode, true
}

// VisibleStore reads the store a request names: NOT_FOUND when it is not
// one the caller may act on (CanSeeStore), exactly as when it does not
// exist, so that an id never tells one tenant of another's stores.
func VisibleStore(ctx context.Context, tx Tx, c *Caller, id uuid.UUID) (*Store, error) {
	st, err := tx.Store(ctx, id)
	if err != nil {
		return nil, err
	}
	if !c.CanSeeStore(st) {
		return nil, NotFound("store")
	}
	return st, nil
}

// CallerStore returns the store a store token acts for; merchant tokens
// cannot create payments (UnivaPay's wire format).
func CallerStore(c *Caller) (uuid.UUID, error) {
	if c.IsMerchantToken() {
		return uuid.Nil, Errorf(CodeInvalidPermissions, "this operation needs a store app token")
	}
	return c.StoreID(), nil
}

// ListScope is whose objects a list shows: one store, or for a merchant
// token without a store in the path, all of the merchant's.
func ListScope(ctx context.Context, tx Tx, c *Caller, storeID uuid.UUID) (AppTokenFilter, error) {
	if storeID == uuid.Nil {
		if c.IsMerchantToken() {
			return AppTokenFilter{MerchantID: c.MerchantID()}, nil
		}
		return AppTokenFilter{MerchantID: c.MerchantID(), StoreID: c.StoreID()}, nil
	}
	st, err := VisibleStore(ctx, tx, c, storeID)
	if err != nil {
		return AppTokenFilter{}, err
	}
	return AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, nil
}

// BrowserThreeDS is checkThreeDSMode in the caller's transaction for a
// store that is not at hand: only a browser's request needs it read.
func BrowserThreeDS(ctx context.Context, tx Tx, c *Caller, storeID uuid.UUID, field, mode string) error {
	if c.WithSecret() {
		return nil
	}
	st, err := tx.Store(ctx, storeID)
	if err != nil {
		return err
	}
	return c.CheckThreeDSMode(field, mode, st)
}

// BrowserChargeWindow is how long after making a token a browser may
// charge it: the widget and the link form charge at once.
const BrowserChargeWindow = 5 * time.Minute

// BrowserMayCharge reports whether a browser (an app token without its
// secret) may charge tok now. Only the first charge of a token a browser
// of the same store made moments ago, as the widget does: every other
// charge of a stored card needs the secret, as Stripe needs its secret key
// to charge a saved card. Otherwise anyone who reads a page's public app
// token could charge every saved card of the store.
func BrowserMayCharge(tok *TransactionToken, now time.Time) bool {
	return !tok.Used && MadeByBrowserJustNow(tok, now)
}

// MadeByBrowserJustNow reports whether a browser made tok within the
// browser window before now: the widget working on the token it has just
// made (its first charge, its 3-D Secure).
func MadeByBrowserJustNow(tok *TransactionToken, now time.Time) bool {
	age := now.Sub(tok.CreatedOn)
	return tok.FromBrowser && age >= 0 && age <= BrowserChargeWindow
}

// ChargeMadeByBrowserJustNow reports whether a browser made ch within the
// browser window before now: the widget following the charge it has just
// made to its shopper's challenge or wallet page.
func ChargeMadeByBrowserJustNow(ch *Charge, now time.Time) bool {
	age := now.Sub(ch.CreatedOn)
	return ch.FromBrowser && age >= 0 && age <= BrowserChargeWindow
}
