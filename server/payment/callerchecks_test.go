package payment_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// callerWorld is the demo merchant with a second store of its own, and
// another merchant with a store, each with a paid charge; its callers are
// made from app tokens directly (payment.NewCaller), as Authenticate makes
// them once a credential checked out.
type callerWorld struct {
	*servicetest.Stack
	demo *servicetest.Demo
	// sibling is the demo merchant's second store; other is another
	// merchant's store.
	sibling, other             *payment.Store
	demoCharge, siblingCharge  *payment.Charge
	otherCharge                *payment.Charge
	merchantCaller, browser    *payment.Caller
	siblingCaller, otherCaller *payment.Caller
}

func newCallerWorld(t *testing.T) *callerWorld {
	t.Helper()
	ctx := context.Background()
	w := &callerWorld{Stack: servicetest.New(t, servicetest.Options{})}
	w.demo = w.SeedDemo(t)
	now := time.Now()
	otherMerchant := &payment.Merchant{ID: payment.NewID(), Name: "Other", Email: "other@example.com", CreatedOn: now}
	w.sibling = &payment.Store{ID: payment.NewID(), MerchantID: w.demo.MerchantID, Name: "Sibling", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	w.other = &payment.Store{ID: payment.NewID(), MerchantID: otherMerchant.ID, Name: "Other's", PCICompliant: true,
		Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	err := w.DB.Update(ctx, func(tx payment.Tx) error {
		if err := tx.CreateMerchant(ctx, otherMerchant); err != nil {
			return err
		}
		if err := tx.CreateStore(ctx, w.sibling); err != nil {
			return err
		}
		return tx.CreateStore(ctx, w.other)
	})
	if err != nil {
		t.Fatal(err)
	}
	token := func(merchantID, storeID uuid.UUID) *payment.AppToken {
		return &payment.AppToken{ID: payment.NewID(), MerchantID: merchantID, StoreID: storeID, Mode: payment.ModeTest, CreatedOn: now}
	}
	w.merchantCaller = payment.NewCaller(token(w.demo.MerchantID, uuid.Nil), true, "")
	w.browser = payment.NewCaller(token(w.demo.MerchantID, w.demo.StoreID), false, "https://shop.example")
	w.siblingCaller = payment.NewCaller(token(w.demo.MerchantID, w.sibling.ID), true, "")
	w.otherCaller = payment.NewCaller(token(otherMerchant.ID, w.other.ID), true, "")
	w.demoCharge = servicetest.Pay(t, w.Service, w.demo.Caller, "4000020000000000", 1000, "JPY", nil)
	w.siblingCharge = servicetest.Pay(t, w.Service, w.siblingCaller, "4000020000000000", 1000, "JPY", nil)
	w.otherCharge = servicetest.Pay(t, w.Service, w.otherCaller, "4000020000000000", 1000, "JPY", nil)
	return w
}

// TestCallerChecksOnEveryFace: the rules about who may do what, which moved
// to the domain's root when the charges, tokens and refunds became three
// faces over one core, still hold on each face: a merchant token makes no
// payments (CallerStore), a store token's lists without a store are its
// store's only (ListScope), a charge's refunds and cancels are listed only
// for a charge the caller may see, and a browser reads no charge's events.
func TestCallerChecksOnEveryFace(t *testing.T) {
	ctx := context.Background()
	w := newCallerWorld(t)
	card := payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"}}
	all := payment.ListParams{Limit: 100}
	cases := []struct {
		name string
		call func() error
		want payment.Code
	}{
		{"MerchantTokenMakesNoToken", func() error {
			_, err := w.Service.Tokens.CreateToken(ctx, w.merchantCaller, card)
			return err
		}, payment.CodeInvalidPermissions},
		{"MerchantTokenMakesNoCharge", func() error {
			tok, err := w.Service.Tokens.CreateToken(ctx, w.demo.Caller, card)
			if err != nil {
				return err
			}
			_, err = w.Service.Charging.CreateCharge(ctx, w.merchantCaller, payment.NewCharge{TokenID: tok.ID, Amount: 100, Currency: "JPY"})
			return err
		}, payment.CodeInvalidPermissions},
		{"StoreTokenListsItsStoresCharges", func() error {
			page, err := w.Service.Charging.Charges(ctx, w.demo.Caller, uuid.Nil, payment.ChargeFilter{}, all)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(page.Items, func(ch *payment.Charge) bool { return ch.ID == w.demoCharge.ID }) ||
				slices.ContainsFunc(page.Items, func(ch *payment.Charge) bool { return ch.StoreID != w.demo.StoreID }) {
				return fmt.Errorf("the store token's charges: %d, its own among them or not, or others'", len(page.Items))
			}
			return nil
		}, ""},
		{"StoreTokenListsItsStoresTokens", func() error {
			page, err := w.Service.Tokens.Tokens(ctx, w.demo.Caller, uuid.Nil, payment.TokenFilter{}, all)
			if err != nil {
				return err
			}
			if len(page.Items) == 0 || slices.ContainsFunc(page.Items, func(tok *payment.TransactionToken) bool { return tok.StoreID != w.demo.StoreID }) {
				return fmt.Errorf("the store token's tokens include another store's")
			}
			return nil
		}, ""},
		{"MerchantTokenListsEveryStore", func() error {
			page, err := w.Service.Charging.Charges(ctx, w.merchantCaller, uuid.Nil, payment.ChargeFilter{}, all)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(page.Items, func(ch *payment.Charge) bool { return ch.ID == w.siblingCharge.ID }) {
				return fmt.Errorf("the merchant token's charges miss its second store's")
			}
			return nil
		}, ""},
		{"RefundsOfAnotherMerchantsCharge", func() error {
			_, err := w.Service.Refunds.Refunds(ctx, w.demo.Caller, w.other.ID, w.otherCharge.ID, all)
			return err
		}, payment.CodeNotFound},
		{"RefundsOfASiblingStoresCharge", func() error {
			_, err := w.Service.Refunds.Refunds(ctx, w.demo.Caller, w.sibling.ID, w.siblingCharge.ID, all)
			return err
		}, payment.CodeNotFound},
		{"CancelsOfAnotherMerchantsCharge", func() error {
			_, err := w.Service.Refunds.Cancels(ctx, w.demo.Caller, w.other.ID, w.otherCharge.ID, all)
			return err
		}, payment.CodeNotFound},
		{"CancelsOfASiblingStoresCharge", func() error {
			_, err := w.Service.Refunds.Cancels(ctx, w.demo.Caller, w.sibling.ID, w.siblingCharge.ID, all)
			return err
		}, payment.CodeNotFound},
		{"BrowserReadsNoChargeEvents", func() error {
			_, err := w.Service.Charging.ChargeEvents(ctx, w.browser, w.demo.StoreID, w.demoCharge.ID, 10)
			return err
		}, payment.CodeInvalidPermissions},
		{"ServerReadsItsChargeEvents", func() error {
			_, err := w.Service.Charging.ChargeEvents(ctx, w.demo.Caller, w.demo.StoreID, w.demoCharge.ID, 10)
			return err
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.want != "" && payment.ErrorCode(err) != tc.want:
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
}
