package checkout

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// TestLinkformRefusesWhatPredatesTheForm: a form completes only with a
// charge (or, for a token checkout, a token) made while it was open. A
// charge from an earlier visit with the same form label, order and amount,
// or a token saved earlier, is refused; the same made after the form was
// opened is accepted.
func TestLinkformRefusesWhatPredatesTheForm(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	const earlier = -2 * time.Minute

	charge := func(t *testing.T) string {
		return f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", meta).ID.String()
	}
	token := func(t *testing.T) string {
		tt, err := f.svc.Tokens.CreateToken(context.Background(), f.server(t, f.tokA), payment.NewToken{PaymentType: payment.PaymentTypeCard,
			Type: payment.OneTime, Email: "a@example.com", Card: &payment.CardInput{Cardholder: "A B", Number: "4000020000000000",
				ExpMonth: 1, ExpYear: 2039, CVV: "123"}})
		if err != nil {
			t.Fatal(err)
		}
		return tt.ID.String()
	}
	paymentForm := func(t *testing.T) *openedForm { return openForm(t, h, "wc-checkout", baseParams(f)) }
	tokenForm := func(t *testing.T) *openedForm {
		return openForm(t, h, "save-card", map[string]string{"appId": f.tokA.JWT, "checkout": "token",
			"successRedirectUrl": "https://shop.example/cards", "autoRedirect": "true"})
	}
	cases := []struct {
		name   string
		open   func(t *testing.T) *openedForm
		field  string
		make   func(t *testing.T) string
		before bool // made before the form was opened
	}{
		{"charge made before the form was opened", paymentForm, "chargeId", charge, true},
		{"charge made while it was open", paymentForm, "chargeId", charge, false},
		{"token made before the form was opened", tokenForm, "tokenId", token, true},
		{"token made while it was open", tokenForm, "tokenId", token, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var id string
			var form *openedForm
			if tc.before {
				f.clock.Advance(earlier)
				id = tc.make(t)
				f.clock.Advance(-earlier)
				form = tc.open(t)
			} else {
				form = tc.open(t)
				id = tc.make(t)
			}
			rec := form.complete(t, h, map[string]string{tc.field: id})
			switch {
			case tc.before && (rec.Code != http.StatusBadRequest || rec.Header().Get("Location") != ""):
				t.Errorf("status %d, Location %q; want 400 and no redirect", rec.Code, rec.Header().Get("Location"))
			case !tc.before && rec.Code != http.StatusSeeOther:
				t.Errorf("status %d, want 303 to the success URL\n%s", rec.Code, rec.Body)
			}
		})
	}
}
