package payment_test

import (
	"context"
	"path"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// TestEventsOfEachChange: the events (and what the Meter is told) of the
// changes TestWebhookEveryEvent does not make. A wallet token's creation
// is told of; a PATCH of a token that changes nothing, a charge's, a
// refund's or a cancel's metadata, and the deletion of a one-time token
// are not; a rejected duplicate finishes as it is made; a cancel of a
// charge awaiting its shopper finishes the cancel, then the charge; a void
// finishes the charge, then the cancel; a token's 3-D Secure challenge is
// told of when it awaits the shopper and when the shopper passes it.
func TestEventsOfEachChange(t *testing.T) {
	ctx := context.Background()
	meter := &fakeMeter{}
	st := servicetest.New(t, servicetest.Options{
		EncodeEvent: univapay.EncodeEvent, PublicOrigin: "http://gateway.test",
		Configure: func(c *payment.Config) { c.Meter = meter },
	})
	demo := st.SeedDemo(t)
	svc, c, store := st.Service, demo.Caller, demo.StoreID
	var after uuid.UUID
	// news wants the events recorded since the last call, in order, as
	// "name id".
	news := func(t *testing.T, want ...string) {
		t.Helper()
		evs, err := svc.Notify.Events(ctx, c, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, e := range evs {
			got = append(got, e.Name+" "+e.ResourceID.String())
			after = e.ID
		}
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("events %q, want %q", got, want)
		}
	}
	drain := func(t *testing.T) {
		t.Helper()
		if _, err := svc.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
	}
	card := func(t *testing.T, typ payment.TokenType, number string) *payment.TransactionToken {
		t.Helper()
		tok, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
			PaymentType: payment.PaymentTypeCard, Type: typ, Email: "shopper@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: number, ExpMonth: 12, ExpYear: 2039, CVV: "123"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	// A wallet token is told of as a card token is.
	wallet, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
		PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime, Email: "shopper@example.com",
		Data: &payment.TokenData{Brand: "pay_pay_online"},
	})
	if err != nil {
		t.Fatal(err)
	}
	news(t, payment.EventTokenCreated+" "+wallet.ID.String())

	// A PATCH that changes nothing, and a one-time token's deletion, are
	// no news.
	oneTime := card(t, payment.OneTime, "4000020000000000")
	drain(t)
	news(t, payment.EventTokenCreated+" "+oneTime.ID.String())
	same := oneTime.Email
	if _, err := svc.Tokens.UpdateToken(ctx, c, store, oneTime.ID, payment.TokenUpdate{Email: &same}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Tokens.DeleteToken(ctx, c, store, oneTime.ID); err != nil {
		t.Fatal(err)
	}
	news(t)

	// A recurring token charged the same amount twice within the window:
	// the second charge is failed as it is made (311), and finishes then.
	rec := card(t, payment.Recurring, "4000020000000000")
	first, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: rec.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	dup, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: rec.ID, Amount: 1000, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	if dup.Status != payment.ChargeFailed {
		t.Fatalf("the duplicate is %s, want failed", dup.Status)
	}
	news(t, payment.EventTokenCreated+" "+rec.ID.String(), payment.EventChargeFinished+" "+dup.ID.String())
	drain(t)
	news(t, payment.EventChargeFinished+" "+first.ID.String())

	// Metadata is no news, on a charge, a refund or a cancel.
	if _, err := svc.Charging.UpdateCharge(ctx, c, store, first.ID, payment.Metadata{"order": "1"}); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Refunds.CreateRefund(ctx, c, store, first.ID, payment.NewRefund{Amount: 100, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	news(t)
	drain(t)
	news(t, payment.EventRefundFinished+" "+r.ID.String())
	if _, err := svc.Refunds.UpdateRefund(ctx, c, store, first.ID, r.ID, payment.RefundUpdate{Metadata: payment.Metadata{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	news(t)

	// A wallet charge awaits its shopper (updated); cancelled by the
	// merchant, the cancel finishes first, then the charge (canceled).
	ch, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: wallet.ID, Amount: 500, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	servicetest.AwaitCharge(t, svc, c, store, ch.ID, "the wallet charge to await its shopper", servicetest.Awaiting)
	news(t, payment.EventChargeUpdated+" "+ch.ID.String())
	cn, err := svc.Refunds.CreateCancel(ctx, c, store, ch.ID, payment.NewCancel{})
	if err != nil {
		t.Fatal(err)
	}
	news(t, payment.EventCancelFinished+" "+cn.ID.String(), payment.EventChargeFinished+" "+ch.ID.String())
	if _, err := svc.Refunds.UpdateCancel(ctx, c, store, ch.ID, cn.ID, payment.Metadata{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	news(t)

	// An authorisation voided: the charge finishes (canceled), then the
	// cancel.
	auth := card(t, payment.OneTime, "4000020000000000")
	capture := false
	authorized, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: auth.ID, Amount: 700, Currency: "JPY", Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	drain(t)
	news(t, payment.EventTokenCreated+" "+auth.ID.String(), payment.EventChargeUpdated+" "+authorized.ID.String())
	void, err := svc.Refunds.CreateCancel(ctx, c, store, authorized.ID, payment.NewCancel{})
	if err != nil {
		t.Fatal(err)
	}
	news(t)
	drain(t)
	news(t, payment.EventChargeFinished+" "+authorized.ID.String(), payment.EventCancelFinished+" "+void.ID.String())

	// A token's challenge: told of when it awaits the shopper, and when
	// the shopper passes it.
	challenged := card(t, payment.OneTime, "4000002760003184")
	if _, err := svc.Tokens.EnableTokenThreeDS(ctx, c, store, challenged.ID, payment.TokenThreeDSRequest{}); err != nil {
		t.Fatal(err)
	}
	news(t, payment.EventTokenCreated+" "+challenged.ID.String())
	drain(t)
	news(t, payment.EventTokenThreeDSUpdated+" "+challenged.ID.String())
	it, err := svc.Tokens.TokenThreeDSIssuerToken(ctx, c, store, challenged.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Charging.ActOnApproval(ctx, path.Base(it.IssuerToken), payment.ActionAnswer, payment.ChallengeCode); err != nil {
		t.Fatal(err)
	}
	news(t, payment.EventTokenThreeDSUpdated+" "+challenged.ID.String())

	want := []string{
		"charge/failed/TOO_MANY_CHARGE_REQUESTS", "charge/successful/", "refund/successful/",
		"charge/awaiting/", "cancel/successful/", "charge/canceled/",
		"charge/authorized/", "charge/canceled/", "cancel/successful/",
	}
	if got := meter.settledNow(); !slices.Equal(got, want) {
		t.Errorf("the Meter was told %q, want %q", got, want)
	}
}
