package payment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
)

const pagesOrigin = "https://pay.kessai.test"

// pagesFixture is a service over a real SQLite file with the demo account,
// whose store token allows shop.example.
type pagesFixture struct {
	svc  *services.Set
	db   *sqlite.DB
	demo *payment.DemoAccount
	// server is the store token used with its secret.
	server *payment.Caller
}

func newPagesFixture(t *testing.T) *pagesFixture {
	t.Helper()
	st := servicetest.New(t, servicetest.Options{PublicOrigin: pagesOrigin})
	demo := st.SeedDemo(t, "shop.example")
	return &pagesFixture{svc: st.Service, db: st.DB, demo: demo.DemoAccount, server: demo.Caller}
}

func (f *pagesFixture) token(t *testing.T, c *payment.Caller) *payment.TransactionToken {
	t.Helper()
	tok, err := f.svc.Tokens.CreateToken(context.Background(), c, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.Recurring, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func wantCode(t *testing.T, what string, err error, code payment.Code) {
	t.Helper()
	var pe *payment.Error
	if !errors.As(err, &pe) || pe.Code != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// TestBrowserCaller: the gateway's pages act for an appId as a browser
// would, from the origin they name, and never with the secret.
func TestBrowserCaller(t *testing.T) {
	f := newPagesFixture(t)
	ctx := context.Background()
	jwt := f.demo.Token.JWT
	for _, origin := range []string{pagesOrigin, "https://shop.example", "http://shop.example:8080"} {
		c, err := f.svc.Access.BrowserCaller(ctx, jwt, origin)
		if err != nil {
			t.Fatalf("BrowserCaller from %s: %v", origin, err)
		}
		if c.WithSecret() || c.Origin() != origin || c.Token().ID != f.demo.Token.ID {
			t.Errorf("BrowserCaller from %s = secret %v, origin %q, token %v", origin, c.WithSecret(), c.Origin(), c.Token().ID)
		}
	}
	_, err := f.svc.Access.BrowserCaller(ctx, jwt, "https://evil.example")
	wantCode(t, "another origin", err, payment.CodeInvalidDomain)
	_, err = f.svc.Access.BrowserCaller(ctx, jwt, "")
	wantCode(t, "no origin", err, payment.CodeInvalidDomain)
	_, err = f.svc.Access.BrowserCaller(ctx, f.demo.Token.Secret+"."+jwt, pagesOrigin)
	wantCode(t, "secret in front of the JWT", err, payment.CodeInvalidAppToken)
	_, err = f.svc.Access.BrowserCaller(ctx, jwt+"x", pagesOrigin)
	wantCode(t, "bad signature", err, payment.CodeInvalidAppToken)

	merchant, err := f.svc.Access.IssueMerchantAppToken(ctx, f.demo.MerchantID, payment.NewAppToken{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Access.BrowserCaller(ctx, merchant.JWT, pagesOrigin)
	wantCode(t, "merchant token", err, payment.CodeInvalidAppToken)

	if err := f.svc.Access.RevokeAppToken(ctx, f.server, f.demo.StoreID, f.demo.Token.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Access.BrowserCaller(ctx, jwt, pagesOrigin)
	wantCode(t, "revoked token", err, payment.CodeInvalidAppToken)
}

// TestTokenReceipt: a gateway page learns a token's id, store, type and
// age, and only a gateway page of the token's own store does.
func TestTokenReceipt(t *testing.T) {
	f := newPagesFixture(t)
	ctx := context.Background()
	page, err := f.svc.Access.BrowserCaller(ctx, f.demo.Token.JWT, pagesOrigin)
	if err != nil {
		t.Fatal(err)
	}
	tok := f.token(t, f.server)
	r, err := f.svc.Tokens.TokenReceipt(ctx, page, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != tok.ID || r.StoreID != f.demo.StoreID || r.Type != payment.Recurring ||
		r.CreatedOn.Sub(tok.CreatedOn).Abs() > time.Millisecond { // stored to the microsecond
		t.Errorf("receipt %+v for token %v made %v", r, tok.ID, tok.CreatedOn)
	}

	// Reading the token itself still needs the secret.
	_, err = f.svc.Tokens.Token(ctx, page, f.demo.StoreID, tok.ID, 0)
	wantCode(t, "the token read by a page", err, payment.CodeInvalidPermissions)

	// A browser on the shop's own origin is not a gateway page, nor is the
	// merchant's server.
	shop, err := f.svc.Access.BrowserCaller(ctx, f.demo.Token.JWT, "https://shop.example")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Tokens.TokenReceipt(ctx, shop, tok.ID)
	wantCode(t, "a receipt for the shop's page", err, payment.CodeInvalidPermissions)
	_, err = f.svc.Tokens.TokenReceipt(ctx, f.server, tok.ID)
	wantCode(t, "a receipt for the merchant's server", err, payment.CodeInvalidPermissions)

	// Another merchant's token is not found.
	now := time.Now()
	m := &payment.Merchant{ID: payment.NewID(), Name: "Other", Email: "other@kessai.test", Verified: true, CreatedOn: now}
	st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "Other store", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	if err := f.db.Update(ctx, func(tx payment.Tx) error {
		if err := tx.CreateMerchant(ctx, m); err != nil {
			return err
		}
		return tx.CreateStore(ctx, st)
	}); err != nil {
		t.Fatal(err)
	}
	other, err := f.svc.Access.IssueStoreAppToken(ctx, st.ID, payment.NewAppToken{})
	if err != nil {
		t.Fatal(err)
	}
	otherServer, err := f.svc.Access.Authenticate(ctx, "Bearer "+other.Secret+"."+other.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	foreign := f.token(t, otherServer)
	if _, err := f.svc.Tokens.TokenReceipt(ctx, page, foreign.ID); !payment.IsNotFound(err) {
		t.Errorf("another store's token: %v, want NOT_FOUND", err)
	}
}

// TestCallerTokenIsACopy: what Token returns cannot change what the caller
// may do.
func TestCallerTokenIsACopy(t *testing.T) {
	f := newPagesFixture(t)
	ctx := context.Background()
	c, err := f.svc.Access.BrowserCaller(ctx, f.demo.Token.JWT, "https://shop.example")
	if err != nil {
		t.Fatal(err)
	}
	tok := c.Token()
	tok.Domains[0] = "evil.example"
	tok.Mode = payment.ModeLive
	now := time.Now()
	tok.RevokedOn = &now
	if got := c.Token(); got.Domains[0] != "shop.example" || got.Mode != payment.ModeTest || got.RevokedOn != nil {
		t.Errorf("the caller's token changed through a copy: %+v", got)
	}
	if !f.svc.Access.OriginAllowedFor(c, "https://shop.example") || f.svc.Access.OriginAllowedFor(c, "https://evil.example") {
		t.Error("the caller's origins changed through a copy")
	}
}
