package access

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

func appTokenScope(merchantID, storeID uuid.UUID) string {
	if storeID == uuid.Nil {
		return "merchant:" + merchantID.String()
	}
	return "store:" + storeID.String()
}

func (s *Service) checkNewAppToken(p payment.NewAppToken) (payment.NewAppToken, error) {
	var v payment.Validation
	if p.Mode == "" {
		p.Mode = payment.ModeTest
	}
	if !p.Mode.Valid() {
		v.Add("mode", payment.ReasonInvalidFormat)
	}
	if len(p.Domains) > maxDomains {
		v.Add("domains", payment.ReasonInvalidLength)
	}
	domains := make([]string, 0, len(p.Domains))
	seen := map[string]bool{}
	for _, d := range p.Domains {
		n, ok := payment.NormalizeDomain(d)
		if !ok {
			v.Add("domains", payment.ReasonInvalidDomain)
			break
		}
		if !seen[n] {
			seen[n] = true
			domains = append(domains, n)
		}
	}
	p.Domains = domains
	return p, v.Err()
}

// createAppToken signs and stores a new token inside tx, counting it against
// the app-token quota of its store or merchant.
func (s *Service) createAppToken(ctx context.Context, tx payment.Tx, merchantID, storeID, creatorID uuid.UUID, p payment.NewAppToken) (*payment.IssuedAppToken, error) {
	now := s.clock.Now()
	if storeID == uuid.Nil {
		// Merchant tokens are never used from a browser, so domains would
		// only widen who may read the API's answers.
		p.Domains = nil
	}
	if err := s.appTokenQuota().Take(ctx, tx, appTokenScope(merchantID, storeID), now); err != nil {
		return nil, err
	}
	tok := &payment.AppToken{
		ID:         payment.NewID(),
		MerchantID: merchantID,
		StoreID:    storeID,
		CreatorID:  creatorID,
		Mode:       p.Mode,
		Domains:    p.Domains,
		CreatedOn:  now,
	}
	jwt, err := s.codec.Sign(payment.AppTokenClaims{
		ID: tok.ID, MerchantID: merchantID, StoreID: storeID, CreatorID: creatorID,
		Mode: p.Mode, Domains: p.Domains, IssuedAt: now,
	})
	if err != nil {
		return nil, err
	}
	tok.JWT = jwt
	secret := newSecret()
	tok.SecretHash = s.hashSecret(secret)
	if err := tx.CreateAppToken(ctx, tok); err != nil {
		return nil, err
	}
	return &payment.IssuedAppToken{AppToken: tok, Secret: secret}, nil
}

// appTokenOwner checks that the caller may manage the tokens of storeID
// (uuid.Nil: the merchant's own tokens) and returns the filter for them.
func (s *Service) appTokenOwner(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID uuid.UUID) (payment.AppTokenFilter, error) {
	if err := c.RequireSecret(); err != nil {
		return payment.AppTokenFilter{}, err
	}
	if storeID == uuid.Nil {
		if !c.IsMerchantToken() {
			return payment.AppTokenFilter{}, payment.Errorf(payment.CodeInvalidPermissions, "merchant app tokens need a merchant app token")
		}
		return payment.AppTokenFilter{MerchantID: c.MerchantID()}, nil
	}
	st, err := payment.VisibleStore(ctx, tx, c, storeID)
	if err != nil {
		return payment.AppTokenFilter{}, err
	}
	return payment.AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, nil
}

// CreateAppToken creates a token for a store, or for the merchant when
// storeID is uuid.Nil.
func (s *Service) CreateAppToken(ctx context.Context, c *payment.Caller, storeID uuid.UUID, p payment.NewAppToken) (*payment.IssuedAppToken, error) {
	p, err := s.checkNewAppToken(p)
	if err != nil {
		return nil, err
	}
	var issued *payment.IssuedAppToken
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		owner, err := s.appTokenOwner(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		if c.Mode() == payment.ModeTest && p.Mode == payment.ModeLive {
			// A test credential must not be a way to live credentials.
			return payment.Errorf(payment.CodeInvalidPermissions, "a test-mode app token cannot create live-mode tokens")
		}
		issued, err = s.createAppToken(ctx, tx, owner.MerchantID, owner.StoreID, c.TokenID(), p)
		return err
	})
	return issued, err
}

// AppTokens lists the active tokens of a store, or of the merchant.
func (s *Service) AppTokens(ctx context.Context, c *payment.Caller, storeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.AppToken], error) {
	var page payment.Page[*payment.AppToken]
	err := s.db.View(ctx, func(tx payment.Tx) error {
		owner, err := s.appTokenOwner(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		page, err = tx.ListAppTokens(ctx, owner, p)
		return err
	})
	return page, err
}

// RevokeAppToken revokes a token; it stops working at once on this
// instance and within the auth cache's lifetime on others.
func (s *Service) RevokeAppToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) error {
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		owner, err := s.appTokenOwner(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		tok, err := tx.AppToken(ctx, id)
		if err != nil {
			return err
		}
		// A test credential must not be a way to end live ones, as it is
		// none to make them (CreateAppToken): a test-mode caller (a test
		// token, the console in test mode) does not find live tokens.
		if tok.MerchantID != owner.MerchantID || tok.StoreID != owner.StoreID || !tok.Active() ||
			c.Mode() == payment.ModeTest && tok.Mode == payment.ModeLive {
			return payment.NotFound("app token")
		}
		now := s.clock.Now()
		if err := tx.RevokeAppToken(ctx, id, now); err != nil {
			return err
		}
		return s.appTokenQuota().Release(ctx, tx, appTokenScope(tok.MerchantID, tok.StoreID), now)
	})
	if err == nil {
		s.forgetAppToken(id)
	}
	return err
}

// IssueStoreAppToken creates a store token for an operator (the
// `kessai apptoken create` command and first-start seeding), without an
// API caller.
func (s *Service) IssueStoreAppToken(ctx context.Context, storeID uuid.UUID, p payment.NewAppToken) (*payment.IssuedAppToken, error) {
	p, err := s.checkNewAppToken(p)
	if err != nil {
		return nil, err
	}
	var issued *payment.IssuedAppToken
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		st, err := tx.Store(ctx, storeID)
		if err != nil {
			return err
		}
		issued, err = s.createAppToken(ctx, tx, st.MerchantID, st.ID, uuid.Nil, p)
		return err
	})
	return issued, err
}

// IssueMerchantAppToken creates a merchant token for an operator, without
// an API caller: the only way to a merchant's first merchant token, since
// through the API only a merchant token may create one.
func (s *Service) IssueMerchantAppToken(ctx context.Context, merchantID uuid.UUID, p payment.NewAppToken) (*payment.IssuedAppToken, error) {
	p, err := s.checkNewAppToken(p)
	if err != nil {
		return nil, err
	}
	var issued *payment.IssuedAppToken
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		if _, err := tx.Merchant(ctx, merchantID); err != nil {
			return err
		}
		issued, err = s.createAppToken(ctx, tx, merchantID, uuid.Nil, uuid.Nil, p)
		return err
	})
	return issued, err
}

// AllowedOrigins returns every domain of every active token, for answering
// CORS preflights, which carry no credentials.
func (s *Service) AllowedOrigins(ctx context.Context) ([]string, error) {
	var ds []string
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		ds, err = tx.ActiveDomains(ctx)
		return err
	})
	return ds, err
}
