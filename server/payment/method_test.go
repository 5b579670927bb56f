package payment_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// TestMethodTraits: what the payment methods say of themselves holds where
// the shared code asks them. A card token needs the shopper's e-mail, a
// wallet's does not; subscriptions are simulated for cards only; a
// wallet charge has no 3-D Secure challenge to answer.
func TestMethodTraits(t *testing.T) {
	ctx := context.Background()
	st := servicetest.New(t, servicetest.Options{})
	demo := st.SeedDemo(t)
	svc, c := st.Service, demo.Caller
	wantField := func(t *testing.T, err error, field, reason string) {
		t.Helper()
		var e *payment.Error
		if !errors.As(err, &e) || e.Code != payment.CodeValidation || len(e.Fields) != 1 ||
			e.Fields[0].Field != field || e.Fields[0].Reason != reason {
			t.Errorf("error %v, want %s %s", err, field, reason)
		}
	}

	_, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime,
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	wantField(t, err, "email", payment.ReasonRequired)
	wallet, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
		PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime, Data: &payment.TokenData{Brand: "pay_pay_online"},
	})
	if err != nil {
		t.Fatalf("a wallet token without an e-mail: %v", err)
	}

	plan := payment.NewSubscription{Amount: 1000, Currency: "JPY", Period: "monthly"}
	if _, err := svc.Subscriptions.SimulatePlan(ctx, c, uuid.Nil, payment.PaymentTypeCard, plan); err != nil {
		t.Errorf("a card's plan: %v", err)
	}
	for _, pt := range []string{payment.PaymentTypeOnline, payment.PaymentTypeQRMerchant} {
		if _, err := svc.Subscriptions.SimulatePlan(ctx, c, uuid.Nil, pt, plan); payment.ErrorCode(err) != payment.CodeNonSubscriptionPayment {
			t.Errorf("a plan of %s: %v, want %s", pt, err, payment.CodeNonSubscriptionPayment)
		}
	}

	ch, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: wallet.ID, Amount: 500, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	servicetest.AwaitCharge(t, svc, c, demo.StoreID, ch.ID, "the wallet charge to await its shopper", servicetest.Awaiting)
	_, err = svc.Charging.ChargeThreeDSIssuerToken(ctx, c, demo.StoreID, ch.ID)
	wantField(t, err, "transaction_token_id", "ONLY_FOR_CARD_PAYMENT")
}
