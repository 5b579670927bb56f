package checkout

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
)

// TestParseSubscription: the subscription terms a frame or a link form
// may ask for, and the clear problem of each that is not one.
func TestParseSubscription(t *testing.T) {
	jpy, _ := payment.LookupCurrency("JPY")
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC) // 12:04 in Tokyo
	for _, tt := range []struct {
		name    string
		q       map[string]string
		want    *subscriptionTerms
		problem string
	}{
		{"monthly", map[string]string{"subscriptionPeriod": "monthly"}, &subscriptionTerms{Period: "monthly"}, ""},
		{"any case", map[string]string{"subscriptionPeriod": " Annually "}, &subscriptionTerms{Period: "annually"}, ""},
		{"cyclical", map[string]string{"subscriptionCyclicalPeriod": "p2w"}, &subscriptionTerms{CyclicalPeriod: "P2W"}, ""},
		{"everything", map[string]string{"subscriptionPeriod": "monthly", "subscriptionInitialAmount": "0",
			"subscriptionStart": "2031-02-01", "subscriptionZoneId": "America/New_York", "subscriptionPlan": "fixed_cycles",
			"subscriptionQty": "12"},
			&subscriptionTerms{Period: "monthly", InitialAmount: new(int64), StartOn: "2031-02-01", ZoneID: "America/New_York", Cycles: 12}, ""},
		{"quantity alone is fixed cycles", map[string]string{"subscriptionPeriod": "weekly", "subscriptionQty": "4"},
			&subscriptionTerms{Period: "weekly", Cycles: 4}, ""},
		{"today is not past", map[string]string{"subscriptionPeriod": "daily", "subscriptionStart": "2031-01-02"},
			&subscriptionTerms{Period: "daily", StartOn: "2031-01-02"}, ""},

		{"no period", map[string]string{}, nil, "p_sub_period"},
		{"unknown period", map[string]string{"subscriptionPeriod": "fortnightly"}, nil, "p_sub_period"},
		{"both periods", map[string]string{"subscriptionPeriod": "monthly", "subscriptionCyclicalPeriod": "P1M"}, nil, "p_sub_period"},
		{"hours", map[string]string{"subscriptionCyclicalPeriod": "PT5H"}, nil, "p_sub_period"},
		{"zero cycle", map[string]string{"subscriptionCyclicalPeriod": "P0D"}, nil, "p_sub_period"},
		{"megabyte period", map[string]string{"subscriptionPeriod": strings.Repeat("monthly", 150_000)}, nil, "p_sub_period"},
		{"negative initial", map[string]string{"subscriptionPeriod": "monthly", "subscriptionInitialAmount": "-500"}, nil, "p_sub_initial"},
		{"initial too high", map[string]string{"subscriptionPeriod": "monthly", "subscriptionInitialAmount": "100000000000"}, nil, "p_sub_initial"},
		{"initial not a number", map[string]string{"subscriptionPeriod": "monthly", "subscriptionInitialAmount": "1e3"}, nil, "p_sub_initial"},
		{"megabyte initial", map[string]string{"subscriptionPeriod": "monthly", "subscriptionInitialAmount": strings.Repeat("9", 1<<20)}, nil, "p_sub_initial"},
		{"start in the past", map[string]string{"subscriptionPeriod": "monthly", "subscriptionStart": "2031-01-01"}, nil, "p_sub_start"},
		{"start not a day", map[string]string{"subscriptionPeriod": "monthly", "subscriptionStart": "2031-02-30"}, nil, "p_sub_start"},
		{"start not a date", map[string]string{"subscriptionPeriod": "monthly", "subscriptionStart": "next monday"}, nil, "p_sub_start"},
		{"unknown zone", map[string]string{"subscriptionPeriod": "monthly", "subscriptionZoneId": "Mars/Olympus_Mons"}, nil, "p_sub_zone"},
		{"machine's zone", map[string]string{"subscriptionPeriod": "monthly", "subscriptionZoneId": "Local"}, nil, "p_sub_zone"},
		{"path as zone", map[string]string{"subscriptionPeriod": "monthly", "subscriptionZoneId": "../../etc/passwd"}, nil, "p_sub_zone"},
		{"other plan", map[string]string{"subscriptionPeriod": "monthly", "subscriptionPlan": "fixed_cycle_amount", "subscriptionQty": "3"}, nil, "p_sub_plan"},
		{"plan without quantity", map[string]string{"subscriptionPeriod": "monthly", "subscriptionPlan": "fixed_cycles"}, nil, "p_sub_plan"},
		{"one payment", map[string]string{"subscriptionPeriod": "monthly", "subscriptionQty": "1"}, nil, "p_sub_plan"},
		{"too many payments", map[string]string{"subscriptionPeriod": "monthly", "subscriptionQty": "1201"}, nil, "p_sub_plan"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{}
			for k, v := range tt.q {
				q.Set(k, v)
			}
			got, problems := parseSubscription(q, jpy, now)
			if tt.problem != "" {
				if got != nil || !slices.Equal(problems, []string{tt.problem}) {
					t.Fatalf("terms %+v, problems %v; want only %s", got, problems, tt.problem)
				}
				if message.LinkForm.Get(tt.problem, message.English) == "" {
					t.Errorf("the link form has no text for %s", tt.problem)
				}
				return
			}
			if len(problems) > 0 || got == nil {
				t.Fatalf("problems %v", problems)
			}
			if got.Period != tt.want.Period || got.CyclicalPeriod != tt.want.CyclicalPeriod || got.StartOn != tt.want.StartOn ||
				got.ZoneID != tt.want.ZoneID || got.Cycles != tt.want.Cycles ||
				(got.InitialAmount == nil) != (tt.want.InitialAmount == nil) ||
				got.InitialAmount != nil && *got.InitialAmount != *tt.want.InitialAmount {
				t.Errorf("terms %+v, want %+v", got, tt.want)
			}
		})
	}
	// Every problem is told, each once.
	q := url.Values{"subscriptionPeriod": {"hourly"}, "subscriptionCyclicalPeriod": {"P1M"}, "subscriptionInitialAmount": {"-1"},
		"subscriptionStart": {"yesterday"}, "subscriptionZoneId": {"Nowhere"}, "subscriptionQty": {"0"}}
	if _, problems := parseSubscription(q, jpy, now); !slices.Equal(problems, []string{"p_sub_period", "p_sub_initial", "p_sub_zone", "p_sub_start", "p_sub_plan"}) {
		t.Errorf("problems %v", problems)
	}
}

// TestSubscriptionAmountText: what the shopper is told they agree to pay,
// in both languages.
func TestSubscriptionAmountText(t *testing.T) {
	initial := int64(500)
	for _, tt := range []struct {
		terms  subscriptionTerms
		en, ja string
	}{
		{subscriptionTerms{Period: "monthly"}, "¥980 / month", "¥980 / 月"},
		{subscriptionTerms{Period: "daily"}, "¥980 / day", "¥980 / 日"},
		{subscriptionTerms{Period: "quarterly"}, "¥980 every 3 months", "¥980 / 3か月"},
		{subscriptionTerms{CyclicalPeriod: "P2W"}, "¥980 every 2 weeks", "¥980 / 2週間"},
		{subscriptionTerms{CyclicalPeriod: "P10D"}, "¥980 every 10 days", "¥980 / 10日"},
		{subscriptionTerms{CyclicalPeriod: "P1Y"}, "¥980 / year", "¥980 / 年"},
		{subscriptionTerms{CyclicalPeriod: "P18M"}, "¥980 every 18 months", "¥980 / 18か月"},
		{subscriptionTerms{CyclicalPeriod: "P1M15D"}, "¥980 every P1M15D", "¥980 / 期間 P1M15D"},
		{subscriptionTerms{Period: "monthly", InitialAmount: &initial}, "¥500 today, then ¥980 / month", "初回 ¥500、以降 ¥980 / 月"},
		{subscriptionTerms{Period: "monthly", StartOn: "2031-02-01"}, "¥980 / month from 2031-02-01", "¥980 / 月（2031-02-01 から）"},
		{subscriptionTerms{Period: "monthly", Cycles: 12}, "¥980 / month, 12 payments", "¥980 / 月（全12回）"},
	} {
		if got := tt.terms.amountText(message.English, 980, "JPY"); got != tt.en {
			t.Errorf("%+v: %q, want %q", tt.terms, got, tt.en)
		}
		if got := tt.terms.amountText(message.Japanese, 980, "JPY"); got != tt.ja {
			t.Errorf("%+v: %q, want %q", tt.terms, got, tt.ja)
		}
	}
}

// TestWidgetFrameSubscription: a subscription checkout's frame says what
// is paid every period and gives its script the terms; bad terms, or terms
// for any other checkout, show the error page, which tells the loader.
func TestWidgetFrameSubscription(t *testing.T) {
	f := newWidgetFixture(t)
	rec, body := f.frame(t, nil, "tokenType", "subscription", "subscriptionPeriod", "monthly", "amount", "980")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", rec.Code, body)
	}
	for _, want := range []string{"¥980 / month", "Subscribe: ¥980 / month", `"tokenType":"subscription"`,
		`"subscription":{"period":"monthly"}`, `kw-amount--sub`} {
		if !strings.Contains(body, want) {
			t.Errorf("frame lacks %s", want)
		}
	}
	checkNoInline(t, body)

	rec, body = f.frame(t, nil, "tokenType", "subscription", "subscriptionCyclicalPeriod", "P2W", "amount", "980",
		"subscriptionInitialAmount", "300", "subscriptionQty", "6", "subscriptionZoneId", "Asia/Tokyo", "locale", "ja")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", rec.Code, body)
	}
	for _, want := range []string{"初回 ¥300、以降 ¥980 / 2週間（全6回）", "で申し込む",
		`"subscription":{"cyclical_period":"P2W","initial_amount":300,"schedule_settings":{"zone_id":"Asia/Tokyo"},"subscription_plan":{"fixed_cycles":6,"plan_type":"fixed_cycles"}}`} {
		if !strings.Contains(body, want) {
			t.Errorf("frame lacks %s", want)
		}
	}

	for name, kv := range map[string][]string{
		"no period":          {"tokenType", "subscription"},
		"unknown period":     {"tokenType", "subscription", "subscriptionPeriod", "hourly"},
		"negative initial":   {"tokenType", "subscription", "subscriptionPeriod", "monthly", "subscriptionInitialAmount", "-1"},
		"megabyte zone":      {"tokenType", "subscription", "subscriptionPeriod", "monthly", "subscriptionZoneId", strings.Repeat("Asia/Tokyo", 1000)},
		"not a subscription": {"subscriptionPeriod", "monthly"},
		"only a token":       {"checkout", "token", "tokenType", "subscription", "subscriptionPeriod", "monthly"},
	} {
		rec, body := f.frame(t, nil, kv...)
		if rec.Code != http.StatusBadRequest || strings.Contains(body, "kw-number") {
			t.Errorf("%s: status %d, want the error page", name, rec.Code)
			continue
		}
		if !strings.Contains(body, `"origin":"https://shop.example"`) || !strings.Contains(body, "INVALID_PARAMETERS") {
			t.Errorf("%s: the error page does not tell the loader:\n%s", name, body)
		}
		checkNoInline(t, body)
	}
}

// subFormParams are a link form's for a monthly subscription.
func subFormParams(f *formsFixture) map[string]string {
	return with(baseParams(f), "tokenType", "subscription", "subscriptionPeriod", "monthly", "amount", "1980")
}

// TestLinkformSubscriptionParameters: a link form for a subscription shows
// its terms and gives them to its widget; bad terms are each explained.
func TestLinkformSubscriptionParameters(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	form := openForm(t, h, "wc-sub", subFormParams(f))
	body := html.UnescapeString(form.body)
	for _, want := range []string{"Subscription", "¥1,980 / month", "Subscribe: ¥1,980 / month",
		`data-subscription="{"subscriptionPeriod":"monthly"}"`, `data-token-type="subscription"`, `name="subscriptionId"`} {
		if !strings.Contains(body, want) {
			t.Errorf("form lacks %s", want)
		}
	}
	ja := openForm(t, h, "wc-sub", with(subFormParams(f), "locale", "ja", "subscriptionInitialAmount", "500"))
	if !strings.Contains(ja.body, "初回 ¥500、以降 ¥1,980 / 月") || !strings.Contains(ja.body, "で申し込む") {
		t.Errorf("Japanese form:\n%s", ja.body)
	}

	for _, tt := range []struct {
		name string
		kv   []string
		says string
	}{
		{"no period", []string{"subscriptionPeriod", "\x00"}, "give either subscriptionPeriod"},
		{"unknown period", []string{"subscriptionPeriod", "hourly"}, "give either subscriptionPeriod"},
		{"megabyte period", []string{"subscriptionPeriod", strings.Repeat("x", 1<<20)}, "give either subscriptionPeriod"},
		{"negative initial", []string{"subscriptionInitialAmount", "-1980"}, "subscriptionInitialAmount must be"},
		{"start in the past", []string{"subscriptionStart", "2030-12-31"}, "subscriptionStart must be"},
		{"unknown zone", []string{"subscriptionZoneId", "Tokyo"}, "subscriptionZoneId must be"},
		{"bad plan", []string{"subscriptionPlan", "forever", "subscriptionQty", "2"}, "subscriptionPlan must be"},
		{"terms for a payment", []string{"tokenType", "\x00"}, "need checkout=payment and tokenType=subscription"},
		{"terms for a token", []string{"checkout", "token"}, "need checkout=payment and tokenType=subscription"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, h, formURL("wc-sub", with(subFormParams(f), tt.kv...)))
			body := html.UnescapeString(rec.Body.String())
			if rec.Code != http.StatusBadRequest || !strings.Contains(body, tt.says) || strings.Contains(body, "lf-checkout") {
				t.Errorf("status %d, want 400 saying %q:\n%.2000s", rec.Code, tt.says, body)
			}
		})
	}
}

// browserSubscription makes a subscription as the link form's widget does
// on the gateway's own page: a subscription token and the subscription,
// with the app token alone, the form's labels in its metadata, 3-D Secure
// normal with the form's return address; the worker takes its first charge
// as far as it goes, answering a challenge with codes when there is one.
func (f *formsFixture) browserSubscription(t testing.TB, card string, amount int64, period string, meta payment.Metadata, codes ...string) (*payment.Subscription, *payment.Charge) {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.Access.BrowserCaller(ctx, f.tokA.JWT, testGateway)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := f.svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.SubscriptionToken,
		Email: "shopper@example.com", Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: card, ExpMonth: 12, ExpYear: 2039, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := f.svc.Subscriptions.CreateSubscription(ctx, c, payment.NewSubscription{TokenID: tt.ID, Amount: amount, Currency: "JPY", Period: period,
		Charge: payment.NewCharge{Metadata: meta, ThreeDS: &payment.ThreeDSSettings{Mode: "normal", RedirectEndpoint: testGateway + "/forms/wc-sub/return"}}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.svc.Subscriptions.SubscriptionCharges(ctx, c, f.storeA, sub.ID, uuid.Nil, payment.ListParams{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("the subscription's charges: %v, %v", page.Items, err)
	}
	ch := servicetest.AwaitCharge(t, f.svc, c, f.storeA, page.Items[0].ID, "the first charge to end or await",
		func(ch *payment.Charge) bool { return servicetest.Settled(ch) || servicetest.Awaiting(ch) })
	if ch.Status == payment.ChargeAwaiting {
		it, err := f.svc.Charging.ChargeThreeDSIssuerToken(ctx, c, f.storeA, ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, code := range codes {
			if _, err := f.svc.Charging.ActOnApproval(ctx, path.Base(it.IssuerToken), payment.ActionAnswer, code); err != nil {
				t.Fatal(err)
			}
		}
		ch = servicetest.AwaitCharge(t, f.svc, c, f.storeA, ch.ID, "the first charge to end", servicetest.Settled)
	}
	if sub, err = f.svc.Subscriptions.Subscription(ctx, c, f.storeA, sub.ID, 0); err != nil {
		t.Fatal(err)
	}
	return sub, ch
}

// TestLinkformSubscriptionCompletes: the form takes the subscription its
// widget made, on its terms, and sends the shopper back with its id, the
// token's and the first charge's; a declined first charge goes to the
// failure URL and leaves the form open; anything else is refused.
func TestLinkformSubscriptionCompletes(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-sub", "order_id": "WC-1001"}

	form := openForm(t, h, "wc-sub", subFormParams(f))
	declined, firstFailed := f.browserSubscription(t, "4000000000000002", 1980, "monthly", meta)
	if declined.Status != payment.SubscriptionUnpaid || firstFailed.Status != payment.ChargeFailed {
		t.Fatalf("declined card: subscription %s, charge %s", declined.Status, firstFailed.Status)
	}
	rec := form.complete(t, h, map[string]string{"subscriptionId": declined.ID.String()})
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "https://shop.example/checkout/failed?") {
		t.Fatalf("declined: %d %s", rec.Code, loc)
	}

	sub, ch := f.browserSubscription(t, "4000020000000000", 1980, "monthly", meta)
	if sub.Status != payment.SubscriptionCurrent {
		t.Fatalf("subscription %s", sub.Status)
	}
	// A one-time form of the same label does not take its charge.
	oneTime := openForm(t, h, "wc-sub", with(baseParams(f), "amount", "1980"))
	if rec := oneTime.complete(t, h, map[string]string{"chargeId": ch.ID.String()}); rec.Code != http.StatusBadRequest {
		t.Errorf("a subscription's charge completed a payment form: %d", rec.Code)
	}

	rec = form.complete(t, h, map[string]string{"subscriptionId": sub.ID.String(), "chargeId": ch.ID.String()})
	u, _ := url.Parse(rec.Header().Get("Location"))
	if rec.Code != http.StatusSeeOther || u == nil || u.Path != "/checkout/done" {
		t.Fatalf("complete: %d %s\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	q := u.Query()
	if q.Get("univapaySubscriptionId") != sub.ID.String() || q.Get("univapayTokenId") != sub.TokenID.String() ||
		q.Get("univapayChargeId") != ch.ID.String() || q.Get("order") != "1001" {
		t.Errorf("ids: %s", u)
	}
	// Again with the same subscription: the same answer; with another: refused.
	if again := form.complete(t, h, map[string]string{"subscriptionId": sub.ID.String()}); again.Header().Get("Location") != u.String() {
		t.Errorf("again: %d %s", again.Code, again.Header().Get("Location"))
	}
	other, _ := f.browserSubscription(t, "4000020000000000", 1980, "monthly", meta)
	if rec := form.complete(t, h, map[string]string{"subscriptionId": other.ID.String()}); rec.Code != http.StatusConflict {
		t.Errorf("a second subscription: %d", rec.Code)
	}

	// Subscriptions the form did not make are refused.
	for name, id := range map[string]func() string{
		"other period": func() string {
			s, _ := f.browserSubscription(t, "4000020000000000", 1980, "weekly", meta)
			return s.ID.String()
		},
		"other amount": func() string {
			s, _ := f.browserSubscription(t, "4000020000000000", 2980, "monthly", meta)
			return s.ID.String()
		},
		"other form": func() string {
			s, _ := f.browserSubscription(t, "4000020000000000", 1980, "monthly", payment.Metadata{"univapay-form-id": "x", "order_id": "WC-1001"})
			return s.ID.String()
		},
		"a charge's id": func() string { return ch.ID.String() },
		"garbage":       func() string { return "not-an-id" },
	} {
		t.Run(name, func(t *testing.T) {
			fresh := openForm(t, h, "wc-sub", subFormParams(f))
			if rec := fresh.complete(t, h, map[string]string{"subscriptionId": id()}); rec.Code != http.StatusBadRequest {
				t.Errorf("status %d, want 400", rec.Code)
			}
		})
	}

	// Result page (no autoRedirect): the subscription's id and terms.
	page := openForm(t, h, "wc-sub", with(subFormParams(f), "autoRedirect", "\x00"))
	s3, _ := f.browserSubscription(t, "4000020000000000", 1980, "monthly", meta)
	body := html.UnescapeString(page.complete(t, h, map[string]string{"subscriptionId": s3.ID.String()}).Body.String())
	for _, want := range []string{"Subscription started", s3.ID.String(), "¥1,980 / month", "univapaySubscriptionId=" + s3.ID.String()} {
		if !strings.Contains(body, want) {
			t.Errorf("result page lacks %s", want)
		}
	}
}

// TestLinkformSubscriptionReturn: the first charge's 3-D Secure challenge
// takes the whole tab, as a payment's does, and its return finishes the
// form with the subscription.
func TestLinkformSubscriptionReturn(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	meta := payment.Metadata{"univapay-form-id": "wc-sub", "order_id": "WC-1001"}

	form := openForm(t, h, "wc-sub", subFormParams(f))
	failed, failedCharge := f.browserSubscription(t, "4000002760003184", 1980, "monthly", meta, "1", "2", "3")
	if failed.Status != payment.SubscriptionUnpaid {
		t.Fatalf("three wrong codes: subscription %s", failed.Status)
	}
	if to := refreshTo(form.back(t, h, returnQuery(failedCharge.ID.String())).Body.String()); !strings.Contains(to, "/checkout/failed?") {
		t.Errorf("a failed challenge moves on to %q", to)
	}

	sub, ch := f.browserSubscription(t, "4000002760003184", 1980, "monthly", meta, "123456")
	if sub.Status != payment.SubscriptionCurrent || ch.ThreeDS.Status != "successful" {
		t.Fatalf("subscription %s, charge 3-D Secure %+v", sub.Status, ch.ThreeDS)
	}
	u, err := url.Parse(refreshTo(form.back(t, h, returnQuery(ch.ID.String())).Body.String()))
	if err != nil || u.Path != "/checkout/done" || u.Query().Get("univapaySubscriptionId") != sub.ID.String() ||
		u.Query().Get("univapayChargeId") != ch.ID.String() {
		t.Fatalf("moves on to %v", u)
	}
	// Nor is a subscription form by a subscription on other terms.
	weekly := openForm(t, h, "wc-sub", subFormParams(f))
	_, other := f.browserSubscription(t, "4000002760003184", 1980, "weekly", meta, "123456")
	if rec := weekly.back(t, h, returnQuery(other.ID.String())); rec.Code != http.StatusBadRequest {
		t.Errorf("a weekly subscription's charge returned to a monthly form: %d", rec.Code)
	}
	// A payment form of the same label is not finished by it.
	oneTime := openForm(t, h, "wc-sub", with(baseParams(f), "amount", "1980"))
	if rec := oneTime.back(t, h, returnQuery(ch.ID.String())); rec.Code != http.StatusBadRequest && rec.Code != http.StatusConflict {
		t.Errorf("a subscription's charge returned to a payment form: %d", rec.Code)
	}
}
