package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/wasm/widget/field"
	"github.com/kessai/kessai/web/message"
)

// slipConfig is the part of the frame's configuration about konbini
// payments and bank transfers.
type slipConfig struct {
	Card    bool     `json:"card"`
	Methods []string `json:"methods"`
	Stores  []struct {
		Brand string `json:"brand"`
		Name  string `json:"name"`
	} `json:"stores"`
	Banks []struct {
		Brand string `json:"brand"`
		Name  string `json:"name"`
	} `json:"banks"`
	PayLabels map[string]string `json:"payLabels"`
	Slip      map[string]string `json:"slip"`
}

func readSlipConfig(t *testing.T, body string) slipConfig {
	t.Helper()
	m := configBlock.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no configuration in\n%s", body)
	}
	var cfg slipConfig
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (c slipConfig) stores() []string {
	var out []string
	for _, s := range c.Stores {
		out = append(out, s.Brand)
	}
	return out
}

func (c slipConfig) banks() []string {
	var out []string
	for _, b := range c.Banks {
		out = append(out, b.Brand)
	}
	return out
}

// TestWidgetFrameSlips: konbini payments and bank transfers are offered
// where the API takes them (one payment in yen, captured when paid; a
// one-time token alone), each as a form of the method switch, the stores
// and banks a shop names in the API's order; never where the charge or
// token would be refused.
func TestWidgetFrameSlips(t *testing.T) {
	f := newWidgetFixture(t)
	all, banks := payment.ConvenienceStores, payment.BankTransferBrands
	for _, tt := range []struct {
		name    string
		kv      []string
		methods []string
		stores  []string
		banks   []string
	}{
		{"both", []string{"paymentTypes", "konbini,bank_transfer"}, []string{"konbini", "bank_transfer"}, all, banks},
		{"with the card", []string{"paymentTypes", "bank_transfer,card,konbini"}, []string{"card", "konbini", "bank_transfer"}, all, banks},
		{"stores named", []string{"paymentTypes", "lawson,seven_eleven"}, []string{"konbini"}, []string{"seven_eleven", "lawson"}, nil},
		{"UnivaPay's paymentType", []string{"paymentType", "", "paymentTypes", "konbini"}, []string{"konbini"}, all, nil},
		{"a token alone, no currency", []string{"paymentTypes", "card,konbini", "checkout", "token", "amount", "", "currency", ""},
			[]string{"card", "konbini"}, all, nil},
		{"a token alone in yen", []string{"paymentTypes", "bank_transfer", "checkout", "token", "amount", "", "currency", "JPY"},
			[]string{"bank_transfer"}, nil, banks},
		// Refused by the API: the card form is left, as when nothing the
		// shop asked for can be offered.
		{"dollars", []string{"paymentTypes", "card,konbini,bank_transfer", "currency", "USD"}, []string{"card"}, nil, nil},
		{"a token alone in dollars", []string{"paymentTypes", "konbini", "checkout", "token", "amount", "", "currency", "USD"},
			[]string{"card"}, nil, nil},
		{"authorised only", []string{"paymentTypes", "konbini", "capture", "false"}, []string{"card"}, nil, nil},
		{"recurring", []string{"paymentTypes", "konbini", "checkout", "token", "tokenType", "recurring", "amount", "", "currency", ""},
			[]string{"card"}, nil, nil},
		{"subscription", []string{"paymentTypes", "konbini,bank_transfer", "tokenType", "subscription", "subscriptionPeriod", "monthly"},
			[]string{"card"}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec, body := f.frame(t, nil, tt.kv...)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d\n%s", rec.Code, body)
			}
			checkNoInline(t, body)
			cfg := readSlipConfig(t, body)
			if !slices.Equal(cfg.Methods, tt.methods) || !slices.Equal(cfg.stores(), tt.stores) || !slices.Equal(cfg.banks(), tt.banks) {
				t.Errorf("methods %v, stores %v, banks %v; want %v, %v, %v", cfg.Methods, cfg.stores(), cfg.banks(), tt.methods, tt.stores, tt.banks)
			}
			// The page has the forms, and the switch when there are several.
			for _, m := range []struct{ id, method string }{{`id="kw-panel-konbini"`, "konbini"}, {`id="kw-panel-bank"`, "bank_transfer"}} {
				if strings.Contains(body, m.id) != slices.Contains(tt.methods, m.method) {
					t.Errorf("%s on the page: %v", m.id, strings.Contains(body, m.id))
				}
			}
			if strings.Contains(body, `id="kw-switch"`) != (len(tt.methods) > 1) {
				t.Errorf("the method switch with %d methods: %v", len(tt.methods), strings.Contains(body, `id="kw-switch"`))
			}
			if strings.Contains(body, `id="kw-slip"`) != (len(tt.stores)+len(tt.banks) > 0) {
				t.Error("the instructions' step is there without konbini or bank transfers, or missing with them")
			}
			for _, s := range tt.stores {
				if !strings.Contains(body, `<option value="`+s+`">`) {
					t.Errorf("no option for %s", s)
				}
			}
		})
	}
}

// TestWidgetFrameSlipTexts: the forms and their buttons in both languages,
// the stores and banks by the names their shoppers know, the shop's
// Japanese phone number in the konbini form as typed.
func TestWidgetFrameSlipTexts(t *testing.T) {
	f := newWidgetFixture(t)
	for _, tt := range []struct {
		locale                            string
		konbini, bank, store, bankName, w string
	}{
		{"en", "Pay ¥1,000 at a store", "Pay ¥1,000 by bank transfer", "7-Eleven", "GMO Aozora Net Bank", "Konbini"},
		{"ja", "¥1,000 をコンビニで支払う", "¥1,000 を銀行振込で支払う", "セブン-イレブン", "GMOあおぞらネット銀行", "コンビニ"},
	} {
		_, body := f.frame(t, nil, "paymentTypes", "card,konbini,bank_transfer", "locale", tt.locale, "phoneNumber", "+81 90-1234-5678")
		cfg := readSlipConfig(t, body)
		if cfg.PayLabels["konbini"] != tt.konbini || cfg.PayLabels["bank_transfer"] != tt.bank {
			t.Errorf("%s: pay labels %v", tt.locale, cfg.PayLabels)
		}
		if cfg.Stores[0].Name != tt.store || cfg.Banks[0].Name != tt.bankName {
			t.Errorf("%s: %v, %v", tt.locale, cfg.Stores[0], cfg.Banks[0])
		}
		if cfg.Slip["deadline_format"] != message.CheckoutSlip.Get("deadline_format", message.Locale(tt.locale)) {
			t.Errorf("%s: the instructions' texts are not the page's language", tt.locale)
		}
		for _, want := range []string{
			`<span class="kw-switch-label">` + tt.w + `</span>`, `<option value="seven_eleven">` + tt.store + `</option>`,
			`id="kw-phone" name="data.phoneNumber" type="tel" inputmode="tel" autocomplete="tel-national"`,
			`value="09012345678"`, `aria-describedby="kw-phone-hint kw-phone-err"`, `<label class="kw-label" for="kw-cname">`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %s", tt.locale, want)
			}
		}
	}
	// A number the konbini form would refuse is left for the shopper to
	// type.
	for _, phone := range []string{"+44 20 7946 0958", "03-1234"} {
		if _, body := f.frame(t, nil, "paymentTypes", "konbini", "phoneNumber", phone); strings.Contains(body, `id="kw-phone"`) &&
			strings.Contains(body[strings.Index(body, `id="kw-phone"`):], `value="`+phone) {
			t.Errorf("%q was put in the konbini form", phone)
		}
	}
}

// TestWidgetFrameSlipsStoreSettings: what the store turned off is not
// offered; asked only for that, the shopper gets the card form; the
// sandbox's bank only in test mode.
func TestWidgetFrameSlipsStoreSettings(t *testing.T) {
	for _, tt := range []struct {
		name    string
		mode    payment.Mode
		change  func(*payment.StoreSettings)
		types   string
		status  int
		methods []string
		banks   []string
	}{
		{"konbini off", payment.ModeTest, func(s *payment.StoreSettings) { s.KonbiniOff = true }, "konbini,bank_transfer",
			http.StatusOK, []string{"bank_transfer"}, payment.BankTransferBrands},
		{"bank transfers off", payment.ModeTest, func(s *payment.StoreSettings) { s.BankTransferOff = true }, "konbini,bank_transfer",
			http.StatusOK, []string{"konbini"}, nil},
		{"only what is off", payment.ModeTest, func(s *payment.StoreSettings) { s.KonbiniOff = true }, "konbini",
			http.StatusOK, []string{"card"}, nil},
		{"no cards, konbini", payment.ModeTest, func(s *payment.StoreSettings) { s.CardEnabled = false }, "card,konbini",
			http.StatusOK, []string{"konbini"}, nil},
		{"nothing left", payment.ModeTest, func(s *payment.StoreSettings) { s.CardEnabled, s.KonbiniOff = false, true }, "konbini",
			errNoCards.status, nil, nil},
		{"live", payment.ModeLive, func(*payment.StoreSettings) {}, "bank_transfer",
			http.StatusOK, []string{"bank_transfer"}, []string{"aozora_bank"}},
		{"live, the test bank alone", payment.ModeLive, func(*payment.StoreSettings) {}, "bank_test_brand",
			http.StatusOK, []string{"card"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := storeFixtureIn(t, tt.mode, tt.change)
			rec, body := f.frame(t, nil, "paymentTypes", tt.types)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d\n%s", rec.Code, tt.status, body)
			}
			if tt.status != http.StatusOK {
				return
			}
			cfg := readSlipConfig(t, body)
			if !slices.Equal(cfg.Methods, tt.methods) || !slices.Equal(cfg.banks(), tt.banks) {
				t.Errorf("methods %v, banks %v; want %v, %v", cfg.Methods, cfg.banks(), tt.methods, tt.banks)
			}
		})
	}
}

// phoneVectors are the phone numbers the field package's rule answers
// for, as it wrote them for the widget's scripts.
func phoneVectors(t *testing.T) []struct{ In, Local, State string } {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "wasm", "widget", "field", "testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Phone []struct{ In, Local, State string } `json:"phone"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Phone) < 100 {
		t.Fatalf("%d phone vectors", len(v.Phone))
	}
	return v.Phone
}

// TestKonbiniPhoneRuleIsTheAPIs holds the widget's phone rule (the field
// package's, which its WebAssembly and its plain-JavaScript port answer
// with, on the same vectors) to the API's: every number it takes, the API
// takes as it sends it; of what both can read (digits, hyphens, spaces),
// they take the same; a number of another country is refused by both with
// the same reason.
func TestKonbiniPhoneRuleIsTheAPIs(t *testing.T) {
	f := newWidgetFixture(t)
	ctx := context.Background()
	caller, err := f.svc.Access.BrowserCaller(ctx, f.demo.Token.JWT, "https://shop.example")
	if err != nil {
		t.Fatal(err)
	}
	api := func(code int, local string) (*payment.TransactionToken, error) {
		return f.svc.Tokens.CreateToken(ctx, caller, payment.NewToken{PaymentType: payment.PaymentTypeKonbini, Type: payment.OneTime,
			Data: &payment.TokenData{CustomerName: "Taro Yamada", ConvenienceStore: "lawson",
				PhoneNumber: &payment.Phone{CountryCode: code, LocalNumber: local}}})
	}
	reason := func(err error) string {
		if err == nil {
			return ""
		}
		var v *payment.Error
		if !errors.As(err, &v) || len(v.Fields) == 0 {
			t.Fatalf("not a field error: %v", err)
		}
		return v.Fields[0].Reason
	}
	both := 0
	for _, v := range phoneVectors(t) {
		if v.State == "" {
			tok, err := api(field.JapanCallingCode, v.Local)
			if err != nil {
				t.Errorf("%q: the widget sends %q, which the API refuses: %v", v.In, v.Local, err)
			} else if tok.Data.PhoneNumber.LocalNumber != v.Local {
				t.Errorf("%q: sent %q, the API keeps %q", v.In, v.Local, tok.Data.PhoneNumber.LocalNumber)
			}
		}
		if v.In == "" || strings.Trim(v.In, "0123456789- ") != "" {
			continue
		}
		both++
		_, err := api(field.JapanCallingCode, v.In)
		if (err == nil) != (v.State == "") {
			t.Errorf("%q: the widget says %q, the API %v", v.In, v.State, err)
		}
		if err != nil && reason(err) != field.ReasonInvalidPhone {
			t.Errorf("%q: the API's reason %q, the widget's %q", v.In, reason(err), v.State)
		}
	}
	if both < 40 {
		t.Errorf("only %d vectors both read", both)
	}
	_, err = api(44, "2079460958")
	if _, state := field.JapanesePhone("+44 20 7946 0958"); reason(err) != state || state != field.ReasonOnlyJapanesePhone {
		t.Errorf("another country: the API %q, the widget %q", reason(err), state)
	}
}

func TestFormatDeadline(t *testing.T) {
	for _, tt := range []struct {
		at     string
		l      message.Locale
		want   string
		reason string
	}{
		{"2026-12-28T08:23:53Z", message.English, "Mon 28 Dec 2026, 17:23 (Japan time)", ""},
		{"2026-12-28T08:23:53Z", message.Japanese, "2026年12月28日（月）17:23（日本時間）", ""},
		{"2026-12-31T15:30:00Z", message.English, "Fri 1 Jan 2027, 00:30 (Japan time)", "a new year in Japan"},
		{"2024-02-28T14:59:59Z", message.Japanese, "2024年2月28日（水）23:59（日本時間）", "the last second of a day"},
		{"2024-02-28T15:00:00+00:00", message.Japanese, "2024年2月29日（木）00:00（日本時間）", "a leap day"},
		{"2025-07-01T09:00:00-05:00", message.English, "Tue 1 Jul 2025, 23:00 (Japan time)", "another zone"},
	} {
		at, err := time.Parse(time.RFC3339, tt.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatDeadline(at, tt.l); got != tt.want {
			t.Errorf("formatDeadline(%s, %s) = %q, want %q (%s)", tt.at, tt.l, got, tt.want, tt.reason)
		}
	}
}

// TestSlipOf: the link form's instructions from an issuer token, as the
// frame's script writes them.
func TestSlipOf(t *testing.T) {
	konbini := &payment.IssuerToken{IssuerToken: "https://pay.kessai.test/sandbox/pay/KEY", PaymentType: payment.PaymentTypeKonbini,
		Payload: map[string]string{"amount": "12000", "currency": "JPY", "convenience_store": "pay_easy",
			"payment_number": "12345678901", "confirmation_number": "123456", "expiration_date": "2026-12-28T08:23:53Z"}}
	v := slipOf(konbini, message.English)
	want := []slipRow{{Label: "Pay at", Value: "Pay-easy (ATM, online banking)"}, {Label: "Customer number", Value: "12345678901", Number: true},
		{Label: "Confirmation number", Value: "123456", Number: true}, {Label: "Amount", Value: "¥12,000"},
		{Label: "Pay by", Value: "Mon 28 Dec 2026, 17:23 (Japan time)"}}
	if v == nil || v.Title != "Pay with Pay-easy" || !slices.Equal(v.Rows, want) || v.URL != konbini.IssuerToken {
		t.Errorf("pay_easy: %+v", v)
	}
	bank := &payment.IssuerToken{IssuerToken: "javascript:alert(1)", PaymentType: payment.PaymentTypeBankTransfer,
		Payload: map[string]string{"amount": "5400", "currency": "JPY", "bank_name": "テスト銀行", "bank_code": "9999",
			"branch_name": "本店", "branch_code": "001", "account_type": "ordinary", "account_number": "1234567",
			"account_holder_name": "Roasters", "expiration_date": "2026-12-05T08:00:00Z"}}
	v = slipOf(bank, message.Japanese)
	want = []slipRow{{Label: "銀行名", Value: "テスト銀行", Sub: "コード 9999"}, {Label: "支店名", Value: "本店", Sub: "コード 001"},
		{Label: "口座種別", Value: "普通"}, {Label: "口座番号", Value: "1234567", Number: true}, {Label: "口座名義", Value: "Roasters"},
		{Label: "お支払い金額", Value: "¥5,400"}, {Label: "お支払い期限", Value: "2026年12月5日（土）17:00（日本時間）"}}
	if v == nil || v.Title != "¥5,400 をお振込みください" || !slices.Equal(v.Rows, want) {
		t.Errorf("bank: %+v", v)
	}
	if v.URL != "" {
		t.Errorf("a link that is not the web's: %q", v.URL)
	}
	if slipOf(&payment.IssuerToken{PaymentType: payment.PaymentTypeOnline}, message.English) != nil || slipOf(nil, message.English) != nil {
		t.Error("instructions for a wallet's issuer token")
	}
}

// slipCharge makes a konbini or bank-transfer token and its charge as the
// link form's widget does (in the shopper's browser, on the gateway's
// origin, with the form's labels) and waits for it to await its shopper.
func (f *formsFixture) slipCharge(t testing.TB, tok *payment.IssuedAppToken, data payment.TokenData, typ string, amount int64, meta payment.Metadata) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	c, err := f.svc.Access.BrowserCaller(ctx, tok.JWT, testGateway)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := f.svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: typ, Type: payment.OneTime, Data: &data})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := f.svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tt.ID, Amount: amount, Currency: "JPY", Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	return servicetest.AwaitCharge(t, f.svc, f.server(t, tok), ch.StoreID, ch.ID, "the shopper awaited", servicetest.Awaiting)
}

// TestLinkformSlip: a form paid by konbini or bank transfer completes once
// its charge awaits the shopper, on a page with the instructions (read
// from the API as the form's browser may), the way back to the shop by the
// pending URL, and no redirect, autoRedirect or not: the shopper needs
// the numbers.
func TestLinkformSlip(t *testing.T) {
	f := newFormsFixture(t, testGateway)
	h := f.gateway(t, testGateway)
	ctx := context.Background()
	for _, tt := range []struct {
		name, typ, locale string
		data              payment.TokenData
		want              []string
	}{
		{"konbini", payment.PaymentTypeKonbini, "en",
			payment.TokenData{CustomerName: "Taro Yamada", ConvenienceStore: "family_mart", PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "09012345678"}},
			[]string{"<h1 class=\"lf-title\">Pay at FamilyMart</h1>", "<dt>Payment number</dt>", "<dt>Confirmation number</dt>"}},
		{"bank transfer", payment.PaymentTypeBankTransfer, "ja", payment.TokenData{Brand: "bank_test_brand"},
			[]string{"<h1 class=\"lf-title\">¥4,000 をお振込みください</h1>", "<dt>口座番号</dt>", "<dd>普通</dd>"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := baseParams(f)
			p["paymentTypes"], p["locale"], p["amount"], p["autoRedirect"] = "konbini,bank_transfer", tt.locale, "4000", "true"
			p["pendingRedirectUrl"] = "https://shop.example/pending"
			form := openForm(t, h, "slip-"+tt.typ, p)
			ch := f.slipCharge(t, f.tokA, tt.data, tt.typ, 4000, payment.Metadata{metaFormID: "slip-" + tt.typ, metaOrderID: p["order_id"]})
			rec := form.complete(t, h, map[string]string{"chargeId": ch.ID.String()})
			body := rec.Body.String()
			if rec.Code != http.StatusOK || refreshTo(body) != "" {
				t.Fatalf("status %d, refresh %q: the page must stay\n%s", rec.Code, refreshTo(body), body)
			}
			it, err := f.svc.Charging.ChargeIssuerToken(ctx, f.server(t, f.tokA), ch.StoreID, ch.ID)
			if err != nil {
				t.Fatal(err)
			}
			deadline, _ := time.Parse(time.RFC3339, it.Payload["expiration_date"])
			want := append(tt.want, `href="`+it.IssuerToken+`"`, formatDeadline(deadline, message.Locale(tt.locale)),
				`lf-result-slip"`, `href="https://shop.example/pending?univapayChargeId=`+ch.ID.String())
			number := it.Payload["payment_number"]
			if tt.typ == payment.PaymentTypeBankTransfer {
				number = it.Payload["account_number"]
			}
			want = append(want, "<dd>"+number+"</dd>")
			for _, w := range want {
				if !strings.Contains(html.UnescapeString(body), html.UnescapeString(w)) {
					t.Errorf("the page lacks %s", w)
				}
			}
			// Completed again with the same charge (a reload), it answers
			// the same.
			if again := form.complete(t, h, map[string]string{"chargeId": ch.ID.String()}); !strings.Contains(again.Body.String(), number) {
				t.Errorf("again: %d", again.Code)
			}
		})
	}
	// A card form is redirected as ever.
	p := baseParams(f)
	p["autoRedirect"] = "true"
	form := openForm(t, h, "card-after", p)
	ch := f.pay(t, f.tokA, "4000020000000000", 1600, "JPY", payment.Metadata{metaFormID: "card-after", metaOrderID: p["order_id"]})
	if rec := form.complete(t, h, map[string]string{"chargeId": ch.ID.String()}); rec.Code != http.StatusSeeOther {
		t.Errorf("a card payment with autoRedirect: %d", rec.Code)
	}
}
