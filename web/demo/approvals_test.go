package demo

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// approved makes a charge the shopper approves away from the widget, as
// the widget does: a PayPay payment (card "") or a card charge with a
// 3-D Secure challenge. act is what the shopper does on the approval's
// page: pay, fail, cancel or expire for the wallet, one-time codes for the
// challenge; "" leaves the charge awaiting.
func (f *gatewayFixture) approved(t testing.TB, card string, amount int64, meta payment.Metadata, act ...string) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.Access.Authenticate(ctx, "Bearer "+f.tokA.Secret+"."+f.tokA.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	nt := payment.NewToken{PaymentType: payment.PaymentTypeOnline, Type: payment.OneTime,
		Data: &payment.TokenData{Brand: "pay_pay_online", CallMethod: "web"}}
	nc := payment.NewCharge{Amount: amount, Currency: "JPY", Metadata: meta}
	if card != "" {
		nt = payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
			Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: card, ExpMonth: 12, ExpYear: 2039, CVV: "123"}}
		nc.ThreeDS = &payment.ThreeDSSettings{Mode: "normal"}
	}
	tt, err := f.svc.Tokens.CreateToken(ctx, c, nt)
	if err != nil {
		t.Fatal(err)
	}
	nc.TokenID = tt.ID
	ch, err := f.svc.Charging.CreateCharge(ctx, c, nc)
	if err != nil {
		t.Fatal(err)
	}
	awaiting := servicetest.AwaitCharge(t, f.svc, c, ch.StoreID, ch.ID, "the charge to await the shopper", servicetest.Awaiting)
	if len(act) == 0 {
		return awaiting
	}
	var it *payment.IssuerToken
	if card != "" {
		it, err = f.svc.Charging.ChargeThreeDSIssuerToken(ctx, c, ch.StoreID, ch.ID)
	} else {
		it, err = f.svc.Charging.ChargeIssuerToken(ctx, c, ch.StoreID, ch.ID)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range act {
		action, code := payment.ApprovalAction(a), ""
		if card != "" {
			action, code = payment.ActionAnswer, a
		}
		if _, err := f.svc.Charging.ActOnApproval(ctx, path.Base(it.IssuerToken), action, code); err != nil {
			t.Fatal(err)
		}
	}
	return servicetest.AwaitCharge(t, f.svc, c, ch.StoreID, ch.ID, "the charge to end", servicetest.Settled)
}

// TestDemoVerifiesApprovedCharges: a charge paid with PayPay or after a
// 3-D Secure challenge marks the order paid as a card's does, only once it
// is successful, for the cart's amount; anything else does not.
func TestDemoVerifiesApprovedCharges(t *testing.T) {
	f := newShopFixture(t)
	const challenge = "4000002760003184"
	for _, tt := range []struct {
		name   string
		card   string // "" for PayPay
		act    []string
		less   int64 // charged this much less than the cart
		status int
		shown  string
	}{
		{"PayPay paid", "", []string{"pay"}, 0, http.StatusSeeOther, ""},
		{"PayPay refused", "", []string{"fail"}, 0, http.StatusPaymentRequired, "failed"},
		{"PayPay canceled", "", []string{"cancel"}, 0, http.StatusPaymentRequired, "canceled"},
		{"PayPay expired", "", []string{"expire"}, 0, http.StatusPaymentRequired, "failed"},
		{"PayPay not paid yet", "", nil, 0, http.StatusAccepted, ""},
		{"PayPay for less", "", []string{"pay"}, 100, http.StatusBadRequest, ""},
		{"challenge passed", challenge, []string{"123456"}, 0, http.StatusSeeOther, ""},
		{"challenge failed", challenge, []string{"1", "2", "3"}, 0, http.StatusPaymentRequired, "failed"},
		{"challenge not answered", challenge, nil, 0, http.StatusAccepted, ""},
		{"declined after the challenge", "4000008400001629", []string{"123456"}, 0, http.StatusPaymentRequired, "failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := f.shopper(t)
			ref, total := s.fillCart("kyoto-dark")
			ch := f.approved(t, tt.card, total-tt.less, payment.Metadata{"order_id": ref}, tt.act...)
			res, body := s.post("/orders", url.Values{"order": {ref}, "chargeId": {ch.ID.String()}, "method": {"modal"}})
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (charge %s)\n%s", res.StatusCode, tt.status, ch.Status, body)
			}
			if tt.shown != "" && !strings.Contains(body, "charge status: "+tt.shown) {
				t.Errorf("the page does not say the charge is %s:\n%s", tt.shown, body)
			}
			_, orders := s.get("/orders")
			if listed := strings.Contains(orders, ch.ID.String()); listed != (tt.status == http.StatusSeeOther) {
				t.Errorf("the order is listed: %v", listed)
			}
			if tt.status == http.StatusSeeOther {
				if _, page := s.get(res.Header.Get("Location")); !strings.Contains(page, "Paid") {
					t.Errorf("the order page does not say paid:\n%s", page)
				}
			}
		})
	}
}
