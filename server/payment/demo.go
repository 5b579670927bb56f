package payment

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"github.com/google/uuid"
)

// DemoEmail is the console login of the merchant created on first start.
const DemoEmail = "demo@kessai.test"

// DemoAccount is what first start hands to a new user: a merchant, its
// console login, a store and a test-mode token for it.
type DemoAccount struct {
	MerchantID      uuid.UUID
	StoreID         uuid.UUID
	ConsoleEmail    string
	ConsolePassword string
	Token           *IssuedAppToken
}

func newPassword() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// SeedDemo creates the demo merchant, its console user, one PCI DSS
// compliant store (so that server-side SDK flows work) and a test-mode token
// for the given domains. On a store that already has a merchant it creates
// nothing and returns nil.
func (s *Service) SeedDemo(ctx context.Context, domains []string) (*DemoAccount, error) {
	p, err := s.checkNewAppToken(NewAppToken{Mode: ModeTest, Domains: domains})
	if err != nil {
		return nil, err
	}
	password := newPassword()
	hash, err := s.hashPassword(password)
	if err != nil {
		return nil, err
	}
	var demo *DemoAccount
	err = s.update(ctx, func(tx *writeTx) error {
		n, err := tx.CountMerchants(ctx)
		if err != nil || n > 0 {
			return err
		}
		now := s.clock.Now()
		m := &Merchant{ID: NewID(), Name: "Kessai Demo Merchant", Email: DemoEmail, Verified: true, CreatedOn: now}
		if err := tx.CreateMerchant(ctx, m); err != nil {
			return err
		}
		u := &User{ID: NewID(), MerchantID: m.ID, Email: DemoEmail, PasswordHash: hash, CreatedOn: now}
		if err := tx.CreateUser(ctx, u); err != nil {
			return err
		}
		st := &Store{ID: NewID(), MerchantID: m.ID, Name: "Kessai Demo Store", PCICompliant: true,
			Settings: DefaultStoreSettings(), CreatedOn: now}
		if err := tx.CreateStore(ctx, st); err != nil {
			return err
		}
		tok, err := s.createAppToken(ctx, tx, m.ID, st.ID, u.ID, p)
		if err != nil {
			return err
		}
		demo = &DemoAccount{MerchantID: m.ID, StoreID: st.ID, ConsoleEmail: DemoEmail,
			ConsolePassword: password, Token: tok}
		return nil
	})
	return demo, err
}

// RenewDemo gives the demo merchant a fresh console password and a fresh
// test token, for when the saved credentials were lost or revoked: the
// secret and password exist nowhere else, so they cannot be recovered.
func (s *Service) RenewDemo(ctx context.Context, domains []string) (*DemoAccount, error) {
	p, err := s.checkNewAppToken(NewAppToken{Mode: ModeTest, Domains: domains})
	if err != nil {
		return nil, err
	}
	password := newPassword()
	hash, err := s.hashPassword(password)
	if err != nil {
		return nil, err
	}
	var demo *DemoAccount
	err = s.update(ctx, func(tx *writeTx) error {
		u, err := tx.UserByEmail(ctx, DemoEmail)
		if err != nil {
			return err
		}
		if err := tx.SetUserPassword(ctx, u.ID, hash); err != nil {
			return err
		}
		stores, err := tx.ListStores(ctx, u.MerchantID, ListParams{Limit: 1, Direction: Asc})
		if err != nil {
			return err
		}
		if len(stores.Items) == 0 {
			return NotFound("demo store")
		}
		st := stores.Items[0]
		tok, err := s.createAppToken(ctx, tx, u.MerchantID, st.ID, u.ID, p)
		if err != nil {
			return err
		}
		demo = &DemoAccount{MerchantID: u.MerchantID, StoreID: st.ID, ConsoleEmail: DemoEmail,
			ConsolePassword: password, Token: tok}
		return nil
	})
	return demo, err
}
