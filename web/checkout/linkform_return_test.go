package checkout

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// challengeCharge makes a card charge as the link form's widget does on
// the gateway's own page: 3-D Secure normal, the form's return address as
// its redirect endpoint. The worker takes it to the challenge, the shopper
// gives codes on the issuer's page (none: Cancel), and the worker finishes
// it.
func (f *formsFixture) challengeCharge(t testing.TB, tok *payment.IssuedAppToken, card string, amount int64, meta payment.Metadata, codes ...string) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	c := f.server(t, tok)
	tt, err := f.svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime,
		Email: "shopper@example.com", Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: card, ExpMonth: 12, ExpYear: 2039, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := f.svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tt.ID, Amount: amount, Currency: "JPY", Metadata: meta,
		ThreeDS: &payment.ThreeDSSettings{Mode: "normal", RedirectEndpoint: testGateway + "/forms/wc-checkout/return"}})
	if err != nil {
		t.Fatal(err)
	}
	servicetest.AwaitCharge(t, f.svc, c, ch.StoreID, ch.ID, "the challenge", servicetest.Awaiting)
	it, err := f.svc.Charging.ChargeThreeDSIssuerToken(ctx, c, ch.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	key := path.Base(it.IssuerToken)
	if len(codes) == 0 {
		if _, err := f.svc.Charging.ActOnApproval(ctx, key, payment.ActionCancel, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, code := range codes {
		if _, err := f.svc.Charging.ActOnApproval(ctx, key, payment.ActionAnswer, code); err != nil {
			t.Fatal(err)
		}
	}
	return servicetest.AwaitCharge(t, f.svc, c, ch.StoreID, ch.ID, "the charge to end", servicetest.Settled)
}

// back is the shopper's tab coming back from the issuer's page.
func (o *openedForm) back(t testing.TB, h http.Handler, query string) *httptest.ResponseRecorder {
	t.Helper()
	return o.send(h, httptest.NewRequest(http.MethodGet, "/forms/"+o.id+"/return?"+query, nil))
}

func returnQuery(id string) string {
	return url.Values{"resource_id": {id}, "resource_type": {"charge"}}.Encode()
}

// refreshTo is where a result page moves on to by itself, or "".
func refreshTo(body string) string {
	const mark = `<meta http-equiv="refresh" content="0; url=`
	i := strings.Index(body, mark)
	if i < 0 {
		return ""
	}
	rest := body[i+len(mark):]
	return html.UnescapeString(rest[:strings.Index(rest, `"`)])
}

// TestLinkformReturn: the tab that went to a 3-D Secure challenge comes
// back to /forms/{id}/return, which finishes the form as complete does:
// to the merchant's URL for the charge's outcome, with the ids.
func TestLinkformReturn(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	const (
		challenge = "4000002760003184"
		declined  = "4000008400001629"
	)
	for _, tt := range []struct {
		name   string
		card   string
		codes  []string
		status payment.ChargeStatus
		to     string // the merchant's path the page moves on to
	}{
		{"challenge passed", challenge, []string{"123456"}, payment.ChargeSuccessful, "/checkout/done"},
		{"passed at the third try", challenge, []string{"1", "2", "123456"}, payment.ChargeSuccessful, "/checkout/done"},
		{"three wrong codes", challenge, []string{"1", "2", "3"}, payment.ChargeFailed, "/checkout/failed"},
		{"canceled on the issuer's page", challenge, nil, payment.ChargeFailed, "/checkout/failed"},
		{"declined after the challenge", declined, []string{"123456"}, payment.ChargeFailed, "/checkout/failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			form := openForm(t, h, "wc-checkout", baseParams(f))
			ch := f.challengeCharge(t, f.tokA, tt.card, 1600, meta, tt.codes...)
			if ch.Status != tt.status {
				t.Fatalf("charge %s, want %s", ch.Status, tt.status)
			}
			rec := form.back(t, h, returnQuery(ch.ID.String()))
			// Not a redirect: the issuer page's form-action would stop one
			// to the merchant's origin. The page moves on by itself.
			if rec.Code != http.StatusOK || rec.Header().Get("Location") != "" {
				t.Fatalf("status %d, Location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			u, err := url.Parse(refreshTo(rec.Body.String()))
			if err != nil || u.Host != "shop.example" || u.Path != tt.to {
				t.Fatalf("moves on to %q, want %s\n%s", u, tt.to, rec.Body)
			}
			if u.Query().Get("univapayChargeId") != ch.ID.String() || u.Query().Get("univapayTokenId") != ch.TokenID.String() {
				t.Errorf("ids missing: %s", u)
			}
			if !strings.Contains(html.UnescapeString(rec.Body.String()), `href="`+u.String()+`"`) {
				t.Error("no link to the shop on the page")
			}
			// Coming back again (a reload) answers the same.
			if again := refreshTo(form.back(t, h, returnQuery(ch.ID.String())).Body.String()); again != u.String() {
				t.Errorf("a reload moves on to %q", again)
			}
		})
	}

	t.Run("result page", func(t *testing.T) {
		form := openForm(t, h, "wc-checkout", with(baseParams(f), "autoRedirect", "\x00"))
		ch := f.challengeCharge(t, f.tokA, challenge, 1600, meta, "123456")
		rec := form.back(t, h, returnQuery(ch.ID.String()))
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusOK || refreshTo(rec.Body.String()) != "" || !strings.Contains(body, "Payment successful") ||
			!strings.Contains(body, `href="https://shop.example/checkout/done?lang=en&order=1001&univapayChargeId=`+ch.ID.String()) {
			t.Errorf("result page %d:\n%s", rec.Code, body)
		}
	})

	t.Run("a failure leaves the form open", func(t *testing.T) {
		form := openForm(t, h, "wc-checkout", baseParams(f))
		failed := f.challengeCharge(t, f.tokA, challenge, 1600, meta, "1", "2", "3")
		form.back(t, h, returnQuery(failed.ID.String()))
		ok := f.challengeCharge(t, f.tokA, challenge, 1600, meta, "123456")
		if to := refreshTo(form.back(t, h, returnQuery(ok.ID.String())).Body.String()); !strings.Contains(to, "/checkout/done?") {
			t.Errorf("after a failed challenge, success moves on to %q", to)
		}
		// Paid: another charge does not finish the form again.
		other := f.challengeCharge(t, f.tokA, challenge, 1600, meta, "123456")
		if rec := form.back(t, h, returnQuery(other.ID.String())); rec.Code != http.StatusConflict {
			t.Errorf("a second charge for a paid form: %d", rec.Code)
		}
		// Nor does the complete endpoint.
		if rec := form.complete(t, h, map[string]string{"chargeId": other.ID.String()}); rec.Code != http.StatusConflict {
			t.Errorf("complete after return: %d", rec.Code)
		}
	})
}

// TestLinkformReturnRefuses: the return address only finishes a form of
// the shopper's session with the charge that form's widget took.
func TestLinkformReturnRefuses(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-1001"}
	good := f.challengeCharge(t, f.tokA, "4000002760003184", 1600, meta, "123456").ID.String()
	for _, tt := range []struct {
		name   string
		query  func() string
		form   string // the form's label in the address
		noForm bool   // a browser without the form's session
		status int
	}{
		{"another amount", func() string {
			return returnQuery(f.challengeCharge(t, f.tokA, "4000002760003184", 900, meta, "123456").ID.String())
		}, "wc-checkout", false, http.StatusBadRequest},
		{"another order", func() string {
			return returnQuery(f.challengeCharge(t, f.tokA, "4000002760003184", 1600,
				payment.Metadata{"univapay-form-id": "wc-checkout", "order_id": "WC-9"}, "123456").ID.String())
		}, "wc-checkout", false, http.StatusBadRequest},
		{"another store", func() string {
			return returnQuery(f.challengeCharge(t, f.tokB, "4000002760003184", 1600, meta, "123456").ID.String())
		}, "wc-checkout", false, http.StatusBadRequest},
		{"no such charge", func() string { return returnQuery(uuid.NewString()) }, "wc-checkout", false, http.StatusBadRequest},
		{"not an id", func() string { return "resource_id=../stores&resource_type=charge" }, "wc-checkout", false, http.StatusBadRequest},
		{"no id", func() string { return "" }, "wc-checkout", false, http.StatusBadRequest},
		{"a token", func() string {
			return url.Values{"resource_id": {good}, "resource_type": {"transaction_token"}}.Encode()
		}, "wc-checkout", false, http.StatusBadRequest},
		{"another form's address", func() string { return returnQuery(good) }, "other-form", false, http.StatusForbidden},
		{"bad label", func() string { return returnQuery(good) }, "a!b", false, http.StatusBadRequest},
		{"no session", func() string { return returnQuery(good) }, "wc-checkout", true, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			form := openForm(t, h, "wc-checkout", baseParams(f))
			if tt.noForm {
				form.cookie = nil
			}
			form.id = tt.form
			rec := form.back(t, h, tt.query())
			if rec.Code != tt.status || rec.Header().Get("Location") != "" || refreshTo(rec.Body.String()) != "" {
				t.Errorf("status %d, Location %q, refresh %q; want %d and nowhere to go", rec.Code,
					rec.Header().Get("Location"), refreshTo(rec.Body.String()), tt.status)
			}
		})
	}
	// A form that has been open too long is over.
	form := openForm(t, h, "wc-checkout", baseParams(f))
	ch := f.challengeCharge(t, f.tokA, "4000002760003184", 1600, meta, "123456")
	f.clock.Advance(linkformMaxAge + time.Minute)
	if rec := form.back(t, h, returnQuery(ch.ID.String())); rec.Code != http.StatusForbidden {
		t.Errorf("an expired form: %d", rec.Code)
	}
}

// TestLinkformPaymentTypes: the link form passes what it may be paid with
// on to its widget, and refuses a list no merchant means.
func TestLinkformPaymentTypes(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	form := openForm(t, h, "wc-checkout", with(baseParams(f), "paymentTypes", "card, PAY_PAY_ONLINE"))
	if !strings.Contains(form.body, `data-payment-types="card,pay_pay_online"`) || !strings.Contains(form.body, "How would you like to pay?") {
		t.Errorf("the form does not offer the wallet:\n%s", form.body)
	}
	plain := openForm(t, h, "wc-checkout", baseParams(f))
	if !strings.Contains(plain.body, `data-payment-types=""`) || !strings.Contains(plain.body, "Card details") {
		t.Errorf("a card form changed:\n%s", plain.body)
	}
	if rec := get(t, h, formURL("wc-checkout", with(baseParams(f), "paymentTypes", "card;pay"))); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), "paymentTypes") {
		t.Errorf("a malformed paymentTypes: %d\n%s", rec.Code, rec.Body)
	}
}
