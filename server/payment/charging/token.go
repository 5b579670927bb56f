package charging

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
	"github.com/kessai/kessai/wasm/card"
)

// usageLimits are the recurring token usage limits.
var usageLimits = map[string]bool{"daily": true, "weekly": true, "monthly": true, "annually": true}

// fromGatewayPage reports whether a request came from one of the gateway's
// own pages (the widget frame, the link form): a browser request without a
// secret whose origin is the gateway itself.
func (s *core) fromGatewayPage(c *payment.Caller) bool {
	return c.Console() || !c.WithSecret() && c.Origin() != "" && s.publicOrigin != "" &&
		strings.EqualFold(strings.TrimRight(c.Origin(), "/"), s.publicOrigin)
}

func (s *Tokens) checkNewToken(p *payment.NewToken, c *payment.Caller, now time.Time) error {
	var v payment.Validation
	p.Email = strings.TrimSpace(p.Email)
	m, known := lookupMethod(p.PaymentType)
	switch {
	case p.PaymentType == "":
		v.Add("payment_type", payment.ReasonRequired)
	case !known:
		v.Add("payment_type", "PAYMENT_TYPE_NOT_SUPPORTED")
	}
	// A request that names no type asks for a one-time token, the kind
	// that needs no further setting (PHP's SDK leaves type out unless it
	// is given one).
	if p.Type == "" {
		p.Type = payment.OneTime
	}
	if !p.Type.Valid() {
		v.Add("type", payment.ReasonInvalidFormat)
	}
	if p.UsageLimit != "" {
		if p.Type != payment.Recurring {
			v.Add("usage_limit", "USAGE_LIMIT_NOT_APPLICABLE")
		} else if !usageLimits[p.UsageLimit] {
			v.Add("usage_limit", payment.ReasonInvalidFormat)
		}
	}
	switch {
	case p.Email == "" && (!known || m.traits().email):
		// A wallet knows its shopper: only the methods that need an
		// address to reach them ask for one.
		v.Add("email", payment.ReasonRequired)
	default:
		payment.CheckEmail(&v, "email", p.Email)
	}
	if known {
		m.checkToken(&v, p, now)
	}
	if p.ThreeDS != nil {
		if p.ThreeDS.Mode != "" && !tokenThreeDSModes[p.ThreeDS.Mode] {
			v.Add("three_ds.mode", payment.ReasonInvalidFormat)
		}
		payment.CheckRedirect(&v, c, s.publicOrigin, "three_ds.redirect_endpoint", p.ThreeDS.RedirectEndpoint)
		payment.CheckText(&v, "three_ds.redirect_id", p.ThreeDS.RedirectID, payment.MaxRedirectIDLen)
	}
	if p.Card != nil {
		p.Card.Billing.Check(&v, "")
		payment.CheckRedirect(&v, c, s.publicOrigin, "three_ds.redirect_endpoint", p.Card.ThreeDS.RedirectEndpoint)
	}
	payment.CheckIP(&v, "ip_address", p.IPAddress)
	if err := v.Err(); err != nil {
		return err
	}
	return p.Metadata.Check("metadata")
}

// tokenThreeDSModes are the 3-D Secure modes a token may ask for.
var tokenThreeDSModes = map[string]bool{"normal": true, "force": true, "skip": true, "if_available": true}

// CreateToken tokenises a card for the caller's store.
func (s *Tokens) CreateToken(ctx context.Context, c *payment.Caller, p payment.NewToken) (*payment.TransactionToken, error) {
	storeID, err := payment.CallerStore(c)
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
	tok := &payment.TransactionToken{
		ID:          payment.NewID(),
		StoreID:     storeID,
		MerchantID:  c.MerchantID(),
		Mode:        c.Mode(),
		PaymentType: p.PaymentType,
		Type:        p.Type,
		UsageLimit:  p.UsageLimit,
		Email:       p.Email,
		Active:      true,
		Metadata:    p.Metadata,
		IPAddress:   p.IPAddress,
		FromBrowser: !c.WithSecret(),
		CreatedOn:   now,
		UpdatedOn:   now,
	}
	if err := m.newToken(s.core, c, &p, tok); err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		st, err := tx.Store(ctx, storeID)
		if err != nil {
			return err
		}
		if err := m.admitToken(ctx, s.core, tx, c, st, tok); err != nil {
			return err
		}
		if err := tx.CreateToken(ctx, tok); err != nil {
			return err
		}
		if err := tx.Announce(ctx, payment.EventTokenCreated, tok); err != nil {
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
func (s *Tokens) visibleToken(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID) (*payment.TransactionToken, error) {
	if _, err := payment.VisibleStore(ctx, tx, c, storeID); err != nil {
		return nil, err
	}
	tok, err := tx.Token(ctx, id)
	if err != nil {
		return nil, err
	}
	if tok.StoreID != storeID || tok.Mode != c.Mode() {
		return nil, payment.NotFound("transaction token")
	}
	return tok, nil
}

// Token returns one of a store's transaction tokens. It holds the
// shopper's e-mail, name and billing address: only a merchant's server
// (with the secret) may read it. With wait > 0 it is a long poll, as for
// charges: while the token's CVV check or 3-D Secure is under way it waits
// up to wait for it to change (the PHP SDK's awaitResult re-reads at once).
func (s *Tokens) Token(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.TransactionToken, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var tok *payment.TransactionToken
	read := func() error {
		return s.db.View(ctx, func(tx payment.Tx) error {
			var err error
			tok, err = s.visibleToken(ctx, tx, c, storeID, id)
			return err
		})
	}
	err := s.db.LongPoll(ctx, id, wait, read, func() (string, bool) { return tok.Stage(), tok.InFlight() })
	return tok, err
}

// Tokens lists transaction tokens of one store (storeID) or, for uuid.Nil,
// of every store the caller can see.
func (s *Tokens) Tokens(ctx context.Context, c *payment.Caller, storeID uuid.UUID, f payment.TokenFilter, p payment.ListParams) (payment.Page[*payment.TransactionToken], error) {
	if err := c.RequireSecret(); err != nil {
		return payment.Page[*payment.TransactionToken]{}, err
	}
	var ok bool
	if f.Mode, ok = c.OwnMode(f.Mode); !ok {
		return payment.EmptyPage[*payment.TransactionToken](p), nil
	}
	var page payment.Page[*payment.TransactionToken]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		scope, err := payment.ListScope(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		f.MerchantID, f.StoreID = scope.MerchantID, scope.StoreID
		page, err = tx.ListTokens(ctx, f, p)
		return err
	})
	return page, err
}

// UpdateToken applies a PATCH to a token.
func (s *Tokens) UpdateToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, u payment.TokenUpdate) (*payment.TransactionToken, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var tok *payment.TransactionToken
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if tok, err = s.visibleToken(ctx, tx, c, storeID, id); err != nil {
			return err
		}
		before := *tok
		now := s.clock.Now()
		var v payment.Validation
		if u.Email != nil {
			tok.Email = strings.TrimSpace(*u.Email)
			if tok.Email == "" {
				v.Add("email", "INVALID_FORMAT_EMAIL")
			} else {
				payment.CheckEmail(&v, "email", tok.Email)
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
			u.Billing.Check(&v, "")
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
		if !tok.PatchedFrom(&before) {
			return nil
		}
		return tx.Announce(ctx, payment.EventTokenUpdated, tok)
	})
	return tok, err
}

// DeleteToken deactivates a token: it can no longer be charged, but it and
// its charges stay readable.
func (s *Tokens) DeleteToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) error {
	if err := c.RequireSecret(); err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *outbox.Tx) error {
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
		if tok.Type != payment.Recurring {
			return nil
		}
		return tx.Announce(ctx, payment.EventRecurringTokenDelete, tok)
	})
}
