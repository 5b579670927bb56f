package access

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

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
func (s *Console) SeedDemo(ctx context.Context, domains []string) (*payment.DemoAccount, error) {
	p, password, hash, err := s.demoCredentials(domains)
	if err != nil {
		return nil, err
	}
	var demo *payment.DemoAccount
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err != nil || n > 0 {
			return err
		}
		now := s.clock.Now()
		m := &payment.Merchant{ID: payment.NewID(), Name: "Kessai Demo Merchant", Email: payment.DemoEmail, Verified: true, CreatedOn: now}
		if err := tx.CreateMerchant(ctx, m); err != nil {
			return err
		}
		u := &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: payment.DemoEmail, PasswordHash: hash, CreatedOn: now}
		if err := tx.CreateUser(ctx, u); err != nil {
			return err
		}
		st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Kessai Demo Store", PCICompliant: true,
			Settings: payment.DefaultStoreSettings(), CreatedOn: now}
		if err := tx.CreateStore(ctx, st); err != nil {
			return err
		}
		tok, err := s.keys.createAppToken(ctx, tx, m.ID, st.ID, u.ID, p)
		if err != nil {
			return err
		}
		demo = &payment.DemoAccount{MerchantID: m.ID, StoreID: st.ID, ConsoleEmail: payment.DemoEmail,
			ConsolePassword: password, Token: tok}
		return nil
	})
	return demo, err
}

// RenewDemo gives the demo merchant a fresh console password and a fresh
// test token, for when the saved credentials were lost or revoked: the
// secret and password exist nowhere else, so they cannot be recovered.
func (s *Console) RenewDemo(ctx context.Context, domains []string) (*payment.DemoAccount, error) {
	p, password, hash, err := s.demoCredentials(domains)
	if err != nil {
		return nil, err
	}
	var demo *payment.DemoAccount
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		u, err := tx.UserByEmail(ctx, payment.DemoEmail)
		if err != nil {
			return err
		}
		if err := tx.SetUserPassword(ctx, u.ID, hash); err != nil {
			return err
		}
		stores, err := tx.ListStores(ctx, u.MerchantID, payment.ListParams{Limit: 1, Direction: payment.Asc})
		if err != nil {
			return err
		}
		if len(stores.Items) == 0 {
			return payment.NotFound("demo store")
		}
		st := stores.Items[0]
		tok, err := s.keys.createAppToken(ctx, tx, u.MerchantID, st.ID, u.ID, p)
		if err != nil {
			return err
		}
		demo = &payment.DemoAccount{MerchantID: u.MerchantID, StoreID: st.ID, ConsoleEmail: payment.DemoEmail,
			ConsolePassword: password, Token: tok}
		return nil
	})
	return demo, err
}

// demoCredentials are what SeedDemo and RenewDemo hand out afresh: the
// checked request of a test-mode token for domains, and a new console
// password with its hash, made before the transaction that stores them.
func (s *Console) demoCredentials(domains []string) (p payment.NewAppToken, password string, hash []byte, err error) {
	if p, err = s.keys.checkNewAppToken(payment.NewAppToken{Mode: payment.ModeTest, Domains: domains}); err != nil {
		return p, "", nil, err
	}
	password = newPassword()
	hash, err = s.hashPassword(password)
	return p, password, hash, err
}
