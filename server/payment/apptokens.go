package payment

import (
	"context"

	"github.com/google/uuid"
)

// IssuedAppToken is a freshly created token with its secret, which is shown
// this once and never again.
type IssuedAppToken struct {
	*AppToken
	Secret string
}

func appTokenScope(merchantID, storeID uuid.UUID) string {
	if storeID == uuid.Nil {
		return "merchant:" + merchantID.String()
	}
	return "store:" + storeID.String()
}

func (s *Service) checkNewAppToken(p NewAppToken) (NewAppToken, error) {
	var v Validation
	if p.Mode == "" {
		p.Mode = ModeTest
	}
	if !p.Mode.Valid() {
		v.Add("mode", ReasonInvalidFormat)
	}
	if len(p.Domains) > maxDomains {
		v.Add("domains", ReasonInvalidLength)
	}
	domains := make([]string, 0, len(p.Domains))
	seen := map[string]bool{}
	for _, d := range p.Domains {
		n, ok := NormalizeDomain(d)
		if !ok {
			v.Add("domains", ReasonInvalidDomain)
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
func (s *Service) createAppToken(ctx context.Context, tx Tx, merchantID, storeID, creatorID uuid.UUID, p NewAppToken) (*IssuedAppToken, error) {
	now := s.clock.Now()
	if storeID == uuid.Nil {
		// Merchant tokens are never used from a browser, so domains would
		// only widen who may read the API's answers.
		p.Domains = nil
	}
	if err := s.appTokenQuota().take(ctx, tx, appTokenScope(merchantID, storeID), now); err != nil {
		return nil, err
	}
	tok := &AppToken{
		ID:         NewID(),
		MerchantID: merchantID,
		StoreID:    storeID,
		CreatorID:  creatorID,
		Mode:       p.Mode,
		Domains:    p.Domains,
		CreatedOn:  now,
	}
	jwt, err := s.codec.Sign(AppTokenClaims{
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
	return &IssuedAppToken{AppToken: tok, Secret: secret}, nil
}

// appTokenOwner checks that the caller may manage the tokens of storeID
// (uuid.Nil: the merchant's own tokens) and returns the filter for them.
func (s *Service) appTokenOwner(ctx context.Context, tx Tx, c *Caller, storeID uuid.UUID) (AppTokenFilter, error) {
	if err := c.requireSecret(); err != nil {
		return AppTokenFilter{}, err
	}
	if storeID == uuid.Nil {
		if !c.token.IsMerchantToken() {
			return AppTokenFilter{}, Errorf(CodeInvalidPermissions, "merchant app tokens need a merchant app token")
		}
		return AppTokenFilter{MerchantID: c.MerchantID()}, nil
	}
	st, err := s.visibleStore(ctx, tx, c, storeID)
	if err != nil {
		return AppTokenFilter{}, err
	}
	return AppTokenFilter{MerchantID: st.MerchantID, StoreID: st.ID}, nil
}

// CreateAppToken creates a token for a store, or for the merchant when
// storeID is uuid.Nil.
func (s *Service) CreateAppToken(ctx context.Context, c *Caller, storeID uuid.UUID, p NewAppToken) (*IssuedAppToken, error) {
	p, err := s.checkNewAppToken(p)
	if err != nil {
		return nil, err
	}
	var issued *IssuedAppToken
	err = s.update(ctx, func(tx *writeTx) error {
		owner, err := s.appTokenOwner(ctx, tx, c, storeID)
		if err != nil {
			return err
		}
		if c.token.Mode == ModeTest && p.Mode == ModeLive {
			// A test credential must not be a way to live credentials.
			return Errorf(CodeInvalidPermissions, "a test-mode app token cannot create live-mode tokens")
		}
		issued, err = s.createAppToken(ctx, tx, owner.MerchantID, owner.StoreID, c.token.ID, p)
		return err
	})
	return issued, err
}

// AppTokens lists the active tokens of a store, or of the merchant.
func (s *Service) AppTokens(ctx context.Context, c *Caller, storeID uuid.UUID, p ListParams) (Page[*AppToken], error) {
	var page Page[*AppToken]
	err := s.view(ctx, func(tx Tx) error {
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
func (s *Service) RevokeAppToken(ctx context.Context, c *Caller, storeID, id uuid.UUID) error {
	err := s.update(ctx, func(tx *writeTx) error {
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
			c.token.Mode == ModeTest && tok.Mode == ModeLive {
			return NotFound("app token")
		}
		now := s.clock.Now()
		if err := tx.RevokeAppToken(ctx, id, now); err != nil {
			return err
		}
		return s.appTokenQuota().release(ctx, tx, appTokenScope(tok.MerchantID, tok.StoreID), now)
	})
	if err == nil {
		s.forgetAppToken(id)
	}
	return err
}

// IssueStoreAppToken creates a store token for an operator (the
// `kessai apptoken create` command and first-start seeding), without an
// API caller.
func (s *Service) IssueStoreAppToken(ctx context.Context, storeID uuid.UUID, p NewAppToken) (*IssuedAppToken, error) {
	p, err := s.checkNewAppToken(p)
	if err != nil {
		return nil, err
	}
	var issued *IssuedAppToken
	err = s.update(ctx, func(tx *writeTx) error {
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
func (s *Service) IssueMerchantAppToken(ctx context.Context, merchantID uuid.UUID, p NewAppToken) (*IssuedAppToken, error) {
	p, err := s.checkNewAppToken(p)
	if err != nil {
		return nil, err
	}
	var issued *IssuedAppToken
	err = s.update(ctx, func(tx *writeTx) error {
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
	err := s.view(ctx, func(tx Tx) error {
		var err error
		ds, err = tx.ActiveDomains(ctx)
		return err
	})
	return ds, err
}
