package sandboxpages

import (
	"context"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/web/message"
)

// slipDeadline is the deadline of the fixtures' konbini and bank-transfer
// charges: 23:59:59 in Tokyo on Thursday 9 January 2031, seven days and
// some hours after the fixture's clock (12:04:05 in Tokyo on the 2nd).
var slipDeadline = time.Date(2031, 1, 9, 14, 59, 59, 0, time.UTC)

// The deadline as each language's page writes it.
var slipDeadlineText = map[message.Locale]string{
	message.English:  "Thu 9 Jan 2031, 23:59 Japan time (UTC+9)",
	message.Japanese: "2031年1月9日（木）23:59（日本時間）",
}

func konbiniToken(store string) payment.NewToken {
	return payment.NewToken{PaymentType: payment.PaymentTypeKonbini, Type: payment.OneTime, Email: "shopper@example.com",
		Data: &payment.TokenData{CustomerName: "山田 太郎", ConvenienceStore: store,
			PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "090-1234-5678"}}}
}

func transferToken() payment.NewToken {
	return payment.NewToken{PaymentType: payment.PaymentTypeBankTransfer, Type: payment.OneTime, Email: "shopper@example.com",
		Data: &payment.TokenData{Brand: "aozora_bank"}}
}

// slipCharge makes a token as c and a charge of amount yen on it, due at
// slipDeadline, runs it to awaiting, and returns its id and its issuer
// token.
func (f *sandboxFixture) slipChargeAs(t testing.TB, c *payment.Caller, nt payment.NewToken, amount int64, redirect string) (uuid.UUID, *payment.IssuerToken) {
	t.Helper()
	ctx := context.Background()
	tok, err := f.svc.Tokens.CreateToken(ctx, c, nt)
	if err != nil {
		t.Fatalf("%s token: %v", nt.PaymentType, err)
	}
	deadline := slipDeadline
	ch, err := f.svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tok.ID, Amount: amount, Currency: "JPY",
		CaptureAt: &deadline, RedirectEndpoint: redirect})
	if err != nil {
		t.Fatal(err)
	}
	got := servicetest.AwaitCharge(t, f.svc, c, f.demo.StoreID, ch.ID, "the charge to leave pending",
		func(ch *payment.Charge) bool { return ch.Status != payment.ChargePending })
	if got.Status != payment.ChargeAwaiting {
		t.Fatalf("%s charge is %s, want awaiting", nt.PaymentType, got.Status)
	}
	it, err := f.svc.Charging.ChargeIssuerToken(ctx, c, f.demo.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ch.ID, it
}

// slipCharge is slipChargeAs the demo store's test-mode server; it
// returns the charge's id and the key of its instructions page.
func (f *sandboxFixture) slipCharge(t testing.TB, nt payment.NewToken, amount int64, redirect string) (uuid.UUID, string) {
	t.Helper()
	id, it := f.slipChargeAs(t, f.demo.Caller, nt, amount, redirect)
	if !strings.HasPrefix(it.IssuerToken, testGateway+payment.SlipPagePath) || it.CallMethod != "http_get" {
		t.Fatalf("issuer token %q (%s), want the instructions page", it.IssuerToken, it.CallMethod)
	}
	return id, keyOf(t, it.IssuerToken)
}

func slipPage(key string) string { return payment.SlipPagePath + key }

// slipCSRF is the CSRF token the gateway gives the page of an approval.
func slipCSRF(kind payment.ApprovalKind, key string) string {
	sp := &sandboxPages{csrfKey: sandboxCSRFKey(testSessionKey)}
	return sp.csrfToken(kind, key)
}

// pressSlip opens the page (with its query) and posts one of its forms as
// the browser does, with the page's hidden fields and more.
func (f *sandboxFixture) pressSlip(t testing.TB, page, action string, more ...string) *httptest.ResponseRecorder {
	t.Helper()
	rec, csrf := f.open(t, page)
	if rec.Code != http.StatusOK || csrf == "" {
		t.Fatalf("GET %s: %d, csrf %q\n%s", page, rec.Code, csrf, rec.Body)
	}
	fields := url.Values{"csrf": {csrf}, "action": {action}, "locale": {hiddenField(rec, localeField)}}
	for i := 0; i+1 < len(more); i += 2 {
		fields.Set(more[i], more[i+1])
	}
	path, _, _ := strings.Cut(page, "?")
	return f.act(t, path, fields)
}

// follow asserts a POST-redirect-GET answer back to the page and GETs
// where it points.
func (f *sandboxFixture) follow(t testing.TB, rec *httptest.ResponseRecorder, page string) *httptest.ResponseRecorder {
	t.Helper()
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("status %d, want 303 back to the page\n%s", rec.Code, rec.Body)
	}
	if loc := rec.Header().Get("Location"); loc != page {
		t.Fatalf("redirect to %q, want %q", loc, page)
	}
	got, _ := f.open(t, page)
	if got.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", page, got.Code)
	}
	return got
}

func (f *sandboxFixture) approval(t testing.TB, key string) *payment.ApprovalPage {
	t.Helper()
	page, err := f.svc.Charging.Approval(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func slipText(l message.Locale, key string) string {
	s := message.Slip.Get(key, l)
	if s == "" {
		panic("no instructions text " + key)
	}
	return s
}

var tag = regexp.MustCompile(`<[^>]*>`)

// wantText fails unless the page's text, its markup left out, has each
// of wants: what a shopper reads across elements (a date and its zone).
func wantText(t testing.TB, rec *httptest.ResponseRecorder, wants ...string) {
	t.Helper()
	text := strings.Join(strings.Fields(html.UnescapeString(tag.ReplaceAllString(rec.Body.String(), ""))), " ")
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("the page's text lacks %q:\n%s", w, text)
		}
	}
}

func lacks(t testing.TB, rec *httptest.ResponseRecorder, unwanted ...string) {
	t.Helper()
	body := rec.Body.String()
	for _, u := range unwanted {
		if strings.Contains(body, u) {
			t.Errorf("the page has %q", u)
		}
	}
}

// TestSlipKonbiniPage: every store's instructions in both languages: the
// store's name, its numbers under the names its counter or terminal uses
// (no confirmation number where the store has none), the amount, the
// deadline in Japan time, the shopper's name, the shop, the steps of the
// store's kind, and the sandbox's buttons.
func TestSlipKonbiniPage(t *testing.T) {
	f := newSandboxFixture(t)
	stores := []struct {
		store, en, ja  string
		pay, conf      string // num_ keys; conf "" when the store has none
		steps          string
		titleEN, title string
		simPay         string // the panel's Pay button
	}{
		{"seven_eleven", "7-Eleven", "セブン-イレブン", "num_slip", "", "seven", "Pay at 7-Eleven", "セブン-イレブンでのお支払い", "sim_pay"},
		{"family_mart", "FamilyMart", "ファミリーマート", "num_order", "num_company", "famima", "Pay at FamilyMart", "ファミリーマートでのお支払い", "sim_pay"},
		{"lawson", "Lawson", "ローソン", "num_customer", "num_confirmation", "loppi", "Pay at Lawson", "ローソンでのお支払い", "sim_pay"},
		{"mini_stop", "Ministop", "ミニストップ", "num_customer", "num_confirmation", "loppi", "Pay at Ministop", "ミニストップでのお支払い", "sim_pay"},
		{"seico_mart", "Seicomart", "セイコーマート", "num_receipt", "num_confirmation", "counter", "Pay at Seicomart", "セイコーマートでのお支払い", "sim_pay"},
		{"pay_easy", "Pay-easy", "Pay-easy（ペイジー）", "num_customer", "num_confirmation", "payeasy", "Pay with Pay-easy", "Pay-easy（ペイジー）でのお支払い", "sim_pay_pay_easy"},
		{"circle_k", "Circle K", "サークルK", "num_order", "num_company", "famima", "Pay at Circle K", "サークルKでのお支払い", "sim_pay"},
		{"sunkus", "Sunkus", "サンクス", "num_order", "num_company", "famima", "Pay at Sunkus", "サンクスでのお支払い", "sim_pay"},
		{"daily_yamazaki", "Daily Yamazaki", "デイリーヤマザキ", "num_receipt", "num_confirmation", "counter", "Pay at Daily Yamazaki", "デイリーヤマザキでのお支払い", "sim_pay"},
		{"yamazaki_daily_store", "Yamazaki Daily Store", "ヤマザキデイリーストアー", "num_receipt", "num_confirmation", "counter", "Pay at Yamazaki Daily Store", "ヤマザキデイリーストアーでのお支払い", "sim_pay"},
	}
	if len(stores) != len(payment.ConvenienceStores) {
		t.Fatalf("%d stores here, the domain has %d", len(stores), len(payment.ConvenienceStores))
	}
	for _, st := range stores {
		t.Run(st.store, func(t *testing.T) {
			_, key := f.slipCharge(t, konbiniToken(st.store), 1200, "")
			ap := f.approval(t, key)
			if ap.Kind != payment.ApprovalKonbini || ap.Slip.PaymentNumber == "" || (st.conf == "") != (ap.Slip.ConfirmationNumber == "") {
				t.Fatalf("approval %+v", ap.Approval)
			}
			for _, l := range message.Locales() {
				rec, csrf := f.open(t, slipPage(key)+"?locale="+string(l))
				if rec.Code != http.StatusOK || csrf == "" {
					t.Fatalf("%s: %d, csrf %q\n%s", l, rec.Code, csrf, rec.Body)
				}
				name, title := st.en, st.titleEN
				if l == message.Japanese {
					name, title = st.ja, st.title
				}
				wants := []string{`<html lang="` + string(l) + `">`, title, name, "¥1,200", "山田 太郎",
					"Kessai Demo Store", ap.Slip.PaymentNumber, slipText(l, st.pay), slipText(l, "step_"+st.steps+"_1"),
					slipText(l, "step_"+st.steps+"_4"), fmt.Sprintf(slipText(l, "left_days"), 7), `value="pay"`, `value="expire"`,
					slipText(l, st.simPay), slipText(l, "sim_badge"), sandboxText(l, "sandbox"), `data-status="awaiting"`,
					`action="` + slipPage(key) + `/act"`, `data-copy="sb-payment-number"`, `name="locale" value="` + string(l) + `"`}
				if st.conf != "" {
					wants = append(wants, ap.Slip.ConfirmationNumber, slipText(l, st.conf))
				}
				wantBody(t, rec, wants...)
				wantText(t, rec, slipDeadlineText[l])
				if st.conf == "" {
					lacks(t, rec, slipText(l, "num_confirmation"), "sb-confirmation-number")
				}
				checkNoInline(t, rec.Body.String())
			}
			if f.approval(t, key).Status != payment.ApprovalAwaiting {
				t.Error("showing the page changed the approval")
			}
		})
	}
	// FamilyMart's terminal asks for the company code first.
	_, key := f.slipCharge(t, konbiniToken("family_mart"), 500, "")
	rec, _ := f.open(t, slipPage(key))
	body := rec.Body.String()
	if strings.Index(body, "sb-confirmation-number") > strings.Index(body, "sb-payment-number") {
		t.Error("FamilyMart's company code is not first")
	}
}

// TestSlipBankPage: a bank transfer's account in both languages: the bank
// and branch with their codes, the account type, number and holder (the
// store's name), the amount, the deadline, nothing deposited yet, and the
// deposit form holding the whole amount.
func TestSlipBankPage(t *testing.T) {
	f := newSandboxFixture(t)
	_, it := f.slipChargeAs(t, f.demo.Caller, transferToken(), 12345, "")
	key := keyOf(t, it.IssuerToken)
	va := it.Account
	if va == nil || va.AccountNumber == "" || va.BankCode != "0310" {
		t.Fatalf("issuer token's account %+v", va)
	}
	for _, l := range message.Locales() {
		rec, _ := f.open(t, slipPage(key)+"?locale="+string(l))
		if rec.Code != http.StatusOK {
			t.Fatalf("%d\n%s", rec.Code, rec.Body)
		}
		wantBody(t, rec, `<html lang="`+string(l)+`">`, slipText(l, "title_bank"), "GMOあおぞらネット銀行",
			fmt.Sprintf(slipText(l, "bank_code"), "0310"), "法人営業部", fmt.Sprintf(slipText(l, "branch_code"), "101"),
			slipText(l, "acct_ordinary"), va.AccountNumber, "Kessai Demo Store", "¥12,345",
			slipText(l, "pay_unpaid"), slipText(l, "step_bank_1"), `name="amount"`, `value="deposit"`,
			`value="expire"`, `data-deposited="0"`, `data-copy="sb-account-number"`, slipText(l, "sim_deposit"))
		wantText(t, rec, slipDeadlineText[l])
		lacks(t, rec, slipText(l, "deposited"), slipText(l, "pay_exceeded_note"))
		if got := depositValue(t, rec); got != "12345" {
			t.Errorf("the form holds %q, want the amount", got)
		}
		checkNoInline(t, rec.Body.String())
	}
}

// TestSlipDeposits: deposits through the page's form move the payment
// status (unpaid → insufficient → exact) and the amount still due, and
// under the store's rule pay the charge; an overpayment is said, while
// the charge waits (the exact rule) and once paid.
func TestSlipDeposits(t *testing.T) {
	f := newSandboxFixture(t)
	t.Run("short then the rest", func(t *testing.T) {
		id, key := f.slipCharge(t, transferToken(), 1200, "")
		page := f.follow(t, f.pressSlip(t, slipPage(key)+"?locale=ja", "deposit", "amount", "500"), slipPage(key)+"?locale=ja")
		wantBody(t, page, fmt.Sprintf(slipText(message.Japanese, "pay_insufficient"), "¥700"), slipText(message.Japanese, "deposited"),
			"¥500", slipText(message.Japanese, "due"), `data-deposited="500"`, slipText(message.Japanese, "st_awaiting"))
		if got := depositValue(t, page); got != "700" {
			t.Errorf("the form holds %q, want what is due, 700", got)
		}
		wantCharge(t, f.charge(t, id), payment.ChargeAwaiting, 0)
		en, _ := f.open(t, slipPage(key)+"?locale=en")
		wantBody(t, en, "Part paid: ¥700 still due", "Received so far")
		// The big figure is now what is left to transfer, of the whole.
		wantText(t, en, "Still due ¥700", "of ¥1,200")

		page = f.follow(t, f.pressSlip(t, slipPage(key), "deposit", "amount", "700"), slipPage(key))
		wantBody(t, page, slipText(message.English, "r_successful_title"), "Your transfer of ¥1,200 has been received",
			slipText(message.English, "pay_exact"), slipText(message.English, "st_successful"), `data-status="successful"`,
			slipText(message.English, "paid_on"))
		lacks(t, page, `name="amount"`, `value="expire"`, accountNumber(f, t, key))
		wantCharge(t, f.charge(t, id), payment.ChargeSuccessful, 0)
		if got := f.approval(t, key).Slip.Deposited; got != 1200 {
			t.Errorf("deposited %d, want 1200", got)
		}
	})
	t.Run("short, then the deadline", func(t *testing.T) {
		id, key := f.slipCharge(t, transferToken(), 2000, "")
		f.follow(t, f.pressSlip(t, slipPage(key), "deposit", "amount", "500"), slipPage(key))
		f.follow(t, f.pressSlip(t, slipPage(key), "expire"), slipPage(key))
		for _, l := range message.Locales() {
			page, _ := f.open(t, slipPage(key)+"?locale="+string(l))
			// Nothing is due once it has ended: what was short is said so.
			wantBody(t, page, slipText(l, "r_expired_title"), fmt.Sprintf(slipText(l, "pay_short"), "¥1,500"), "¥500")
			lacks(t, page, slipText(l, "due"), fmt.Sprintf(slipText(l, "pay_insufficient"), "¥1,500"))
		}
		wantCharge(t, f.charge(t, id), payment.ChargeFailed, 327)
	})
	t.Run("over, paid", func(t *testing.T) {
		id, key := f.slipCharge(t, transferToken(), 1000, "")
		page := f.follow(t, f.pressSlip(t, slipPage(key), "deposit", "amount", "1300"), slipPage(key))
		wantBody(t, page, slipText(message.English, "r_successful_title"), "Overpaid by ¥300", "¥1,300")
		ch := f.charge(t, id)
		wantCharge(t, ch, payment.ChargeSuccessful, 0)
		if ch.ChargedAmount == nil || *ch.ChargedAmount != 1300 {
			t.Errorf("charged %v, want the deposits' 1300", ch.ChargedAmount)
		}
	})
	t.Run("over, the exact rule", func(t *testing.T) {
		exact := payment.MatchExact
		if _, err := f.svc.Merchants.UpdateStore(context.Background(), f.demo.Caller, f.demo.StoreID, payment.StoreUpdate{MatchAmount: &exact}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			minimum := payment.MatchMinimum
			if _, err := f.svc.Merchants.UpdateStore(context.Background(), f.demo.Caller, f.demo.StoreID, payment.StoreUpdate{MatchAmount: &minimum}); err != nil {
				t.Fatal(err)
			}
		}()
		id, key := f.slipCharge(t, transferToken(), 1000, "")
		page := f.follow(t, f.pressSlip(t, slipPage(key)+"?locale=ja", "deposit", "amount", "1500"), slipPage(key)+"?locale=ja")
		wantBody(t, page, fmt.Sprintf(slipText(message.Japanese, "pay_exceeded"), "¥500"), slipText(message.Japanese, "pay_exceeded_note"),
			slipText(message.Japanese, "st_awaiting"))
		if got := depositValue(t, page); got != "" {
			t.Errorf("nothing is due, yet the form holds %q", got)
		}
		wantCharge(t, f.charge(t, id), payment.ChargeAwaiting, 0)
	})
}

// accountNumber is the account number of the approval with key.
func accountNumber(f *sandboxFixture, t testing.TB, key string) string {
	t.Helper()
	a := f.approval(t, key).Slip.VirtualAccount
	if a == nil {
		t.Fatal("no virtual account")
	}
	return a.AccountNumber
}

// TestSlipEnded: each way a payment ends, in both languages, and the page
// once it has: paid at the counter, the deadline let pass by the button
// or passed on the gateway's clock, canceled by the merchant. An ended
// page shows what became of the payment and no longer the numbers to pay
// with, nor any button.
func TestSlipEnded(t *testing.T) {
	f := newSandboxFixture(t)
	ctx := context.Background()
	type end struct {
		name   string
		nt     func() payment.NewToken
		do     func(t *testing.T, id uuid.UUID, key string)
		result payment.ApprovalStatus
		charge payment.ChargeStatus
		code   int
		texts  map[message.Locale][]string
	}
	press := func(action string) func(t *testing.T, id uuid.UUID, key string) {
		return func(t *testing.T, _ uuid.UUID, key string) {
			t.Helper()
			f.follow(t, f.pressSlip(t, slipPage(key), action), slipPage(key))
		}
	}
	cancel := func(t *testing.T, id uuid.UUID, _ string) {
		t.Helper()
		if _, err := f.svc.Refunds.CreateCancel(ctx, f.demo.Caller, f.demo.StoreID, id, payment.NewCancel{}); err != nil {
			t.Fatal(err)
		}
	}
	konbini := func() payment.NewToken { return konbiniToken("lawson") }
	for _, e := range []end{
		{"konbini paid", konbini, press("pay"), payment.ApprovalSuccessful, payment.ChargeSuccessful, 0, map[message.Locale][]string{
			message.English:  {"Payment received", "You paid ¥2,000 at Lawson. Thank you.", "Paid on"},
			message.Japanese: {"お支払いを確認しました", "¥2,000をローソンでお支払いいただきました。", "お支払い済み", "お支払い日時"},
		}},
		{"konbini let expire", konbini, press("expire"), payment.ApprovalExpired, payment.ChargeFailed, 327, map[message.Locale][]string{
			// Let pass before its time: the sandbox's button says when.
			message.English:  {"The payment deadline has passed", "This payment was not made by Thu 2 Jan 2031, 12:04 Japan time (UTC+9)", "Deadline passed"},
			message.Japanese: {"お支払い期限が過ぎました", "2031年1月2日（木）12:04（日本時間）までにお支払いがなかった", "期限切れ"},
		}},
		{"konbini canceled", konbini, cancel, payment.ApprovalCanceled, payment.ChargeCanceled, 0, map[message.Locale][]string{
			message.English:  {"This payment was canceled", "there is nothing to pay", "Canceled on"},
			message.Japanese: {"このお支払いはキャンセルされました", "お支払いの必要はありません", "キャンセル日時"},
		}},
		{"bank let expire", transferToken, press("expire"), payment.ApprovalExpired, payment.ChargeFailed, 327, map[message.Locale][]string{
			message.English:  {"The payment deadline has passed", "do not transfer to this account any more", "No transfer received yet"},
			message.Japanese: {"お支払い期限が過ぎました", "この口座へはお振り込みにならないでください", "未入金"},
		}},
		{"bank canceled", transferToken, cancel, payment.ApprovalCanceled, payment.ChargeCanceled, 0, map[message.Locale][]string{
			message.English:  {"This payment was canceled", "Do not transfer to this account."},
			message.Japanese: {"このお支払いはキャンセルされました", "キャンセル済み"},
		}},
	} {
		t.Run(e.name, func(t *testing.T) {
			id, key := f.slipCharge(t, e.nt(), 2000, "")
			ap := f.approval(t, key)
			e.do(t, id, key)
			if got := f.approval(t, key).Status; got != e.result {
				t.Fatalf("approval %s, want %s", got, e.result)
			}
			wantCharge(t, f.charge(t, id), e.charge, e.code)
			for l, texts := range e.texts {
				rec, csrf := f.open(t, slipPage(key)+"?locale="+string(l))
				if rec.Code != http.StatusOK {
					t.Fatalf("%d\n%s", rec.Code, rec.Body)
				}
				wantBody(t, rec, append(texts, `data-status="`+string(e.result)+`"`, "¥2,000", "Kessai Demo Store")...)
				if csrf != "" {
					t.Error("an ended page has a form")
				}
				number := ap.Slip.PaymentNumber
				if ap.Slip.VirtualAccount != nil {
					number = ap.Slip.VirtualAccount.AccountNumber
				}
				lacks(t, rec, number, `value="pay"`, `value="deposit"`, slipText(l, "howto"))
			}
		})
	}
	t.Run("deadline passed on the clock", func(t *testing.T) {
		for _, nt := range []payment.NewToken{konbiniToken("seven_eleven"), transferToken()} {
			id, key := f.slipCharge(t, nt, 2000, "")
			_, csrf := f.open(t, slipPage(key))
			f.clock.Set(slipDeadline)
			// Before the worker has ended it, the page says it has.
			rec, _ := f.open(t, slipPage(key)+"?locale=ja")
			wantBody(t, rec, "お支払い期限が過ぎました", `data-status="expired"`, "2031年1月9日（木）23:59（日本時間）までに")
			late := f.act(t, slipPage(key), url.Values{"csrf": {csrf}, "action": {"expire"}})
			if late.Code != http.StatusConflict {
				t.Errorf("a press after the deadline: %d, want 409", late.Code)
			}
			wantCharge(t, f.charge(t, id), payment.ChargeFailed, 327)
			f.clock.Set(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
		}
	})
}

// TestSlipRefusedOnEnded: the buttons of a page rendered before the
// payment ended do nothing afterwards, and say so (409): no second
// outcome, no deposit on an ended transfer.
func TestSlipRefusedOnEnded(t *testing.T) {
	f := newSandboxFixture(t)
	kID, kKey := f.slipCharge(t, konbiniToken("mini_stop"), 800, "")
	bID, bKey := f.slipCharge(t, transferToken(), 800, "")
	f.follow(t, f.pressSlip(t, slipPage(kKey), "pay"), slipPage(kKey))
	f.follow(t, f.pressSlip(t, slipPage(bKey), "expire"), slipPage(bKey))
	for _, tt := range []struct {
		key    string
		kind   payment.ApprovalKind
		fields url.Values
		status string
	}{
		{kKey, payment.ApprovalKonbini, url.Values{"action": {"expire"}}, "Paid"},
		{kKey, payment.ApprovalKonbini, url.Values{"action": {"pay"}, "locale": {"ja"}}, "お支払い済み"},
		{bKey, payment.ApprovalBankTransfer, url.Values{"action": {"deposit"}, "amount": {"800"}}, "Deadline passed"},
		{bKey, payment.ApprovalBankTransfer, url.Values{"action": {"expire"}}, "Deadline passed"},
	} {
		tt.fields.Set("csrf", slipCSRF(tt.kind, tt.key))
		rec := f.act(t, slipPage(tt.key), tt.fields)
		if rec.Code != http.StatusConflict {
			t.Errorf("%s %s: %d, want 409", tt.kind, tt.fields.Get("action"), rec.Code)
		}
		l := message.English
		if tt.fields.Get("locale") == "ja" {
			l = message.Japanese
		}
		wantBody(t, rec, fmt.Sprintf(slipText(l, "err_ended"), tt.status), `role="alert"`)
	}
	wantCharge(t, f.charge(t, kID), payment.ChargeSuccessful, 0)
	wantCharge(t, f.charge(t, bID), payment.ChargeFailed, 327)
	if got := f.approval(t, bKey).Slip.Deposited; got != 0 {
		t.Errorf("an ended transfer took a deposit: %d", got)
	}
}

// TestSlipDepositAmounts: what the deposit form refuses, each with its
// own message beside the field that keeps what was typed (400, nothing
// deposited), and the ways of writing an amount it takes.
func TestSlipDepositAmounts(t *testing.T) {
	f := newSandboxFixture(t)
	_, key := f.slipCharge(t, transferToken(), 5000, "")
	for _, tt := range []struct {
		amount, problem string
	}{
		{"", "err_amount_empty"},
		{"   ", "err_amount_empty"},
		{"0", "err_amount_min"},
		{"000", "err_amount_min"},
		{"-5", "err_amount_min"},
		{"-0", "err_amount_min"},
		{"abc", "err_amount_nan"},
		{"12.5", "err_amount_nan"},
		{"1e3", "err_amount_nan"},
		{"0x10", "err_amount_nan"},
		{"5-", "err_amount_nan"},
		{"--5", "err_amount_nan"},
		{"10000000", "err_amount_max"},
		{"99999999999999999999999999", "err_amount_max"},
		{"9223372036854775808", "err_amount_max"},
		{"<b>1</b>", "err_amount_nan"},
	} {
		for _, l := range message.Locales() {
			rec := f.act(t, slipPage(key), url.Values{"csrf": {slipCSRF(payment.ApprovalBankTransfer, key)}, "action": {"deposit"},
				"amount": {tt.amount}, "locale": {string(l)}})
			if rec.Code != http.StatusBadRequest {
				t.Errorf("amount %q: %d, want 400", tt.amount, rec.Code)
				continue
			}
			msg := slipText(l, tt.problem)
			if tt.problem == "err_amount_max" {
				msg = fmt.Sprintf(msg, "¥9,999,999")
			}
			wantBody(t, rec, msg, `id="sb-amount-error" role="alert"`, `aria-invalid="true"`, `<html lang="`+string(l)+`">`)
			if got := depositValue(t, rec); got != tt.amount {
				t.Errorf("the form holds %q, want what was typed, %q", got, tt.amount)
			}
			checkNoInline(t, rec.Body.String())
		}
	}
	if got := f.approval(t, key).Slip.Deposited; got != 0 {
		t.Fatalf("a refused amount was deposited: %d", got)
	}
	// Written as people write yen: full-width digits, separators, the
	// yen sign, 円.
	total := int64(0)
	for _, tt := range []struct {
		amount string
		want   int64
	}{{"１，０００", 1000}, {"¥1,000", 1000}, {" 1000円 ", 1000}, {"0100", 100}, {"9999999", 9_999_999}} {
		if got, problem := parseDeposit(tt.amount, "JPY"); got != tt.want || problem != "" {
			t.Errorf("parseDeposit(%q) = %d, %q; want %d", tt.amount, got, problem, tt.want)
		}
		if tt.want > 2000 {
			continue // it would pay the charge
		}
		f.follow(t, f.pressSlip(t, slipPage(key), "deposit", "amount", tt.amount), slipPage(key))
		total += tt.want
		if got := f.approval(t, key).Slip.Deposited; got != total {
			t.Errorf("after %q deposited %d, want %d", tt.amount, got, total)
		}
	}
}

// TestSlipCSRF: a button press without the page's token, with another
// page's, or from another site is refused and changes nothing; so is a
// JSON body, which carries no token.
func TestSlipCSRF(t *testing.T) {
	f := newSandboxFixture(t)
	id, key := f.slipCharge(t, konbiniToken("seven_eleven"), 1000, "")
	_, otherKey := f.slipCharge(t, konbiniToken("seven_eleven"), 1000, "")
	bankID, bankKey := f.slipCharge(t, transferToken(), 1000, "")
	good := slipCSRF(payment.ApprovalKonbini, key)
	for _, tt := range []struct {
		name   string
		key    string
		fields url.Values
		header []string
	}{
		{"no token", key, url.Values{"action": {"pay"}}, nil},
		{"empty token", key, url.Values{"action": {"pay"}, "csrf": {""}}, nil},
		{"another approval's token", key, url.Values{"action": {"pay"}, "csrf": {slipCSRF(payment.ApprovalKonbini, otherKey)}}, nil},
		{"the wallet page's token for the key", key, url.Values{"action": {"pay"}, "csrf": {slipCSRF(payment.ApprovalWallet, key)}}, nil},
		{"a bank transfer's token for the key", key, url.Values{"action": {"pay"}, "csrf": {slipCSRF(payment.ApprovalBankTransfer, key)}}, nil},
		{"a konbini token for a transfer", bankKey, url.Values{"action": {"deposit"}, "amount": {"1000"}, "csrf": {slipCSRF(payment.ApprovalKonbini, bankKey)}}, nil},
		{"a token with a changed letter", key, url.Values{"action": {"pay"}, "csrf": {flipLast(good)}}, nil},
		{"a foreign Origin", key, url.Values{"action": {"pay"}, "csrf": {good}}, []string{"Origin", "https://evil.example"}},
		{"the merchant's Origin", key, url.Values{"action": {"pay"}, "csrf": {good}}, []string{"Origin", "https://shop.example"}},
		{"a cross-site page", key, url.Values{"action": {"pay"}, "csrf": {good}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"a JSON body", key, nil, []string{"Content-Type", "application/json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rec *httptest.ResponseRecorder
			if tt.fields == nil {
				rec = f.request(t, http.MethodPost, slipPage(tt.key)+"/act", `{"action":"pay","csrf":"`+good+`"}`, tt.header...)
			} else {
				rec = f.act(t, slipPage(tt.key), tt.fields, tt.header...)
			}
			if rec.Code != http.StatusForbidden {
				t.Errorf("status %d, want 403\n%s", rec.Code, rec.Body)
			}
			wantBody(t, rec, sandboxText(message.English, "e_forbidden_title"))
		})
	}
	wantCharge(t, f.charge(t, id), payment.ChargeAwaiting, 0)
	wantCharge(t, f.charge(t, bankID), payment.ChargeAwaiting, 0)
	if f.approval(t, bankKey).Slip.Deposited != 0 {
		t.Error("a refused post deposited")
	}
	// The page's own post: Origin null, the gateway's, or none.
	for _, origin := range []string{"null", testGateway, ""} {
		_, k := f.slipCharge(t, konbiniToken("lawson"), 1000, "")
		rec := f.act(t, slipPage(k), url.Values{"csrf": {slipCSRF(payment.ApprovalKonbini, k)}, "action": {"pay"}}, "Origin", origin)
		if rec.Code != http.StatusSeeOther {
			t.Errorf("Origin %q: %d", origin, rec.Code)
		}
	}
}

// TestSlipWrongActions: an action the payment's page does not offer is
// refused (400) and changes nothing: a wallet's or a challenge's action,
// a deposit to a konbini payment, a payment at the counter of a transfer.
func TestSlipWrongActions(t *testing.T) {
	f := newSandboxFixture(t)
	kID, kKey := f.slipCharge(t, konbiniToken("lawson"), 1000, "")
	bID, bKey := f.slipCharge(t, transferToken(), 1000, "")
	for _, tt := range []struct {
		key    string
		kind   payment.ApprovalKind
		action string
	}{
		{kKey, payment.ApprovalKonbini, "deposit"}, {kKey, payment.ApprovalKonbini, "fail"}, {kKey, payment.ApprovalKonbini, "cancel"},
		{kKey, payment.ApprovalKonbini, "answer"}, {kKey, payment.ApprovalKonbini, ""}, {kKey, payment.ApprovalKonbini, "PAY"},
		{bKey, payment.ApprovalBankTransfer, "pay"}, {bKey, payment.ApprovalBankTransfer, "cancel"}, {bKey, payment.ApprovalBankTransfer, "fail"},
	} {
		rec := f.act(t, slipPage(tt.key), url.Values{"csrf": {slipCSRF(tt.kind, tt.key)}, "action": {tt.action}, "amount": {"1000"}})
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s %q: %d, want 400", tt.kind, tt.action, rec.Code)
		}
	}
	wantCharge(t, f.charge(t, kID), payment.ChargeAwaiting, 0)
	wantCharge(t, f.charge(t, bID), payment.ChargeAwaiting, 0)
	if f.approval(t, bKey).Slip.Deposited != 0 {
		t.Error("a refused action deposited")
	}
}

// TestSlipNotFound: an unknown key, another kind's key on the
// instructions' path and the instructions' key on another kind's path are
// not there, for the page, its buttons and its status.
func TestSlipNotFound(t *testing.T) {
	f := newSandboxFixture(t)
	_, slipKey := f.slipCharge(t, konbiniToken("lawson"), 1000, "")
	_, walletKey := f.walletCharge(t, "pay_pay_online", "web", "")
	unknown := "AAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, p := range []string{slipPage(unknown), slipPage(walletKey), walletPage(slipKey), challengePage(slipKey),
		slipPage(strings.ToLower(slipKey)), slipPage(slipKey + "A"), slipPage(slipKey) + "/other", "/sandbox/pay/"} {
		rec := f.request(t, http.MethodGet, p, "")
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
			continue
		}
		wantBody(t, rec, sandboxText(message.English, "e_not_found_title"))
	}
	for _, k := range []string{unknown, walletKey} {
		for _, kind := range []payment.ApprovalKind{payment.ApprovalKonbini, payment.ApprovalWallet} {
			rec := f.act(t, slipPage(k), url.Values{"csrf": {slipCSRF(kind, k)}, "action": {"pay"}})
			if rec.Code != http.StatusNotFound {
				t.Errorf("POST %s/act: %d, want 404", slipPage(k), rec.Code)
			}
		}
		if rec := f.request(t, http.MethodGet, slipPage(k)+"/status", ""); rec.Code != http.StatusNotFound ||
			strings.TrimSpace(rec.Body.String()) != `{"status":"error","code":"NOT_FOUND","errors":[]}` {
			t.Errorf("GET %s/status: %d %s", slipPage(k), rec.Code, rec.Body)
		}
	}
	if f.approvalStatus(t, walletKey) != payment.ApprovalAwaiting || f.approvalStatus(t, slipKey) != payment.ApprovalAwaiting {
		t.Error("a request to a wrong address changed an approval")
	}
}

// liveSandbox is the sandbox acquirer taking live payments, so that a
// live konbini or bank-transfer charge can await its shopper here as it
// would with a live acquirer.
type liveSandbox struct{ sandbox.Processor }

func (liveSandbox) SupportsLive() bool { return true }

// TestSlipLive: a live payment's page gives the same instructions but no
// simulation (no panel, no buttons, no sandbox badge), and refuses a
// button's post even with the page's token.
func TestSlipLive(t *testing.T) {
	f := newSandboxFixtureOn(t, liveSandbox{})
	ctx := context.Background()
	live, err := f.svc.Access.IssueStoreAppToken(ctx, f.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive, Domains: []string{"shop.example"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Access.Authenticate(ctx, "Bearer "+live.Secret+"."+live.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		nt     payment.NewToken
		kind   payment.ApprovalKind
		action string
	}{
		{konbiniToken("family_mart"), payment.ApprovalKonbini, "pay"},
		{konbiniToken("family_mart"), payment.ApprovalKonbini, "expire"},
		{transferToken(), payment.ApprovalBankTransfer, "deposit"},
		{transferToken(), payment.ApprovalBankTransfer, "expire"},
	} {
		id, it := f.slipChargeAs(t, c, tt.nt, 3000, "")
		key := keyOf(t, it.IssuerToken)
		ap := f.approval(t, key)
		if ap.Mode != payment.ModeLive {
			t.Fatalf("the approval is %s", ap.Mode)
		}
		for _, l := range message.Locales() {
			rec, csrf := f.open(t, slipPage(key)+"?locale="+string(l))
			number := ap.Slip.PaymentNumber
			if va := ap.Slip.VirtualAccount; va != nil {
				number = va.AccountNumber
			}
			wantBody(t, rec, number, "¥3,000", slipText(l, "howto"), slipText(l, "footer_live"))
			wantText(t, rec, slipDeadlineText[l])
			lacks(t, rec, "sb-sim", `value="pay"`, `value="deposit"`, `value="expire"`, slipText(l, "sim_title"),
				sandboxText(l, "sandbox"), sandboxText(l, "powered"))
			if csrf != "" {
				t.Error("a live page has a form")
			}
			if got := frameAncestorsOf(t, rec); !strings.Contains(got, "https://shop.example:*") {
				t.Errorf("frame-ancestors %q lack the live token's domain", got)
			}
		}
		rec := f.act(t, slipPage(key), url.Values{"csrf": {slipCSRF(tt.kind, key)}, "action": {tt.action}, "amount": {"3000"}})
		if rec.Code != http.StatusForbidden {
			t.Errorf("live %s: %d, want 403", tt.action, rec.Code)
		}
		wantBody(t, rec, sandboxText(message.English, "e_live_title"))
		got, err := f.svc.Charging.Charge(ctx, c, f.demo.StoreID, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != payment.ChargeAwaiting || f.approval(t, key).Slip.Deposited != 0 {
			t.Errorf("a live %s changed the payment: %s", tt.action, got.Status)
		}
	}
}

// TestSlipStatus: the status the page's script polls, with a bank
// transfer's deposits.
func TestSlipStatus(t *testing.T) {
	f := newSandboxFixture(t)
	_, kKey := f.slipCharge(t, konbiniToken("lawson"), 1000, "")
	_, bKey := f.slipCharge(t, transferToken(), 1000, "")
	get := func(key string) string {
		t.Helper()
		rec := f.request(t, http.MethodGet, slipPage(key)+"/status", "")
		if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%d %v", rec.Code, rec.Header())
		}
		return strings.TrimSpace(rec.Body.String())
	}
	for _, tt := range []struct{ got, want string }{
		{get(kKey), `{"status":"awaiting"}`},
		{get(bKey), `{"deposited":0,"status":"awaiting"}`},
	} {
		if tt.got != tt.want {
			t.Errorf("status %s, want %s", tt.got, tt.want)
		}
	}
	f.follow(t, f.pressSlip(t, slipPage(bKey), "deposit", "amount", "400"), slipPage(bKey))
	if got := get(bKey); got != `{"deposited":400,"status":"awaiting"}` {
		t.Errorf("after a deposit: %s", got)
	}
	f.follow(t, f.pressSlip(t, slipPage(kKey), "pay"), slipPage(kKey))
	if got := get(kKey); got != `{"status":"successful"}` {
		t.Errorf("after Pay: %s", got)
	}
}

// TestSlipHeadersAndReturn: the page's security headers and frame
// ancestors as the other sandbox pages', no redirect once ended (the
// shopper reads the outcome there) but a link back to the shop, and a
// POST arrival that only shows the page.
func TestSlipHeadersAndReturn(t *testing.T) {
	f := newSandboxFixture(t)
	_, key := f.slipCharge(t, konbiniToken("seven_eleven"), 1000, "https://shop.example/orders/7?x=1")
	rec, _ := f.open(t, slipPage(key))
	h := rec.Header()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none';", "script-src 'self';", "style-src 'self';", "form-action 'self'", "base-uri 'none';"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if fa := frameAncestorsOf(t, rec); !strings.Contains(fa, "https://shop.example:*") || !strings.Contains(fa, "'self'") {
		t.Errorf("frame-ancestors %q", fa)
	}
	for k, want := range map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	back := attr(`href="https://shop.example/orders/7?resource_id=`)
	wantBody(t, rec, back, "Back to Kessai Demo Store", `<meta name="referrer" content="no-referrer">`, `name="viewport" content="width=device-width`,
		`<link rel="stylesheet" href="/static/sandbox.css`, `<script src="/static/sandbox.js`)
	posted := f.request(t, http.MethodPost, slipPage(key), "resource_id=x", "Content-Type", "application/x-www-form-urlencoded",
		"Origin", "https://shop.example", "Sec-Fetch-Site", "cross-site")
	if posted.Code != http.StatusOK || f.approvalStatus(t, key) != payment.ApprovalAwaiting {
		t.Errorf("POST arrival: %d", posted.Code)
	}
	paid := f.follow(t, f.pressSlip(t, slipPage(key), "pay"), slipPage(key))
	wantBody(t, paid, "Payment received", back)
}

var depositField = regexp.MustCompile(`id="sb-deposit-amount"[^>]*\svalue="([^"]*)"`)

// depositValue is the deposit form's amount; the test fails when the
// page has no such form.
func depositValue(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	m := depositField.FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no deposit form:\n%s", rec.Body)
	}
	return html.UnescapeString(m[1])
}

// attr is s as a template writes it into an attribute.
func attr(s string) string { return strings.ReplaceAll(s, "&", "&amp;") }

// TestSlipTexts: every text the instructions page looks up is in the
// catalogue: the template's .S and .T keys, each store's name, numbers
// and steps, the bank's, each state's and outcome's.
func TestSlipTexts(t *testing.T) {
	src, err := fs.ReadFile(templates.FS, "sandbox_slip.html")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`\.S\.([A-Za-z0-9_]+)`).FindAllStringSubmatch(string(src), -1) {
		keys = append(keys, m[1])
	}
	if len(keys) < 20 {
		t.Fatalf("only %d texts found in sandbox_slip.html", len(keys))
	}
	for _, m := range regexp.MustCompile(`\.T\.([A-Za-z0-9_]+)`).FindAllStringSubmatch(string(src), -1) {
		if _, ok := message.Sandbox.Text(m[1]); !ok {
			t.Errorf("the catalogue's Sandbox has no %q", m[1])
		}
	}
	stores := append([]string{"unknown"}, payment.ConvenienceStores...)
	for _, st := range stores {
		k, name, _ := storeOf(st)
		keys = append(keys, name, k.payment)
		if k.confirmation != "" || st != "seven_eleven" {
			keys = append(keys, k.confirmation)
		}
		for i := 1; i <= slipSteps; i++ {
			keys = append(keys, fmt.Sprintf("step_%s_%d", k.steps, i))
		}
	}
	for i := 1; i <= slipSteps; i++ {
		keys = append(keys, fmt.Sprintf("step_bank_%d", i))
	}
	for _, k := range accountTypes {
		keys = append(keys, k)
	}
	for _, st := range []payment.TransferPaymentStatus{payment.TransferUnpaid, payment.TransferInsufficient, payment.TransferExact, payment.TransferExceeded} {
		keys = append(keys, "pay_"+string(st))
	}
	for _, st := range []string{"awaiting", "successful", "expired", "canceled", "failed"} {
		keys = append(keys, "st_"+st)
	}
	for _, r := range []string{"successful", "expired", "canceled", "failed"} {
		keys = append(keys, "r_"+r+"_title")
	}
	keys = append(keys, "r_successful_konbini", "r_successful_bank", "r_expired_konbini", "r_expired_bank", "r_canceled_konbini",
		"r_canceled_bank", "r_failed_text", "title_konbini", "title_pay_easy", "title_bank", "lead_konbini", "lead_pay_easy",
		"lead_bank", "deadline_at", "date", "weekdays", "left_days", "left_day", "left_hours", "left_hour", "left_minutes",
		"left_minute", "sim_lead_konbini", "sim_lead_pay_easy", "sim_pay", "sim_pay_pay_easy", "sim_pay_hint", "sim_pay_hint_pay_easy", "err_amount_empty", "err_amount_nan", "err_amount_min", "err_amount_max", "err_ended", "bank_code",
		"branch_code", "back", "paid_on", "canceled_on")
	for _, k := range keys {
		if _, ok := message.Slip.Text(k); !ok {
			t.Errorf("the catalogue's Slip has no %q", k)
		}
	}
	if _, ok := message.Sandbox.Text("e_live_title"); !ok {
		t.Error("no e_live_title")
	}
}

// TestSlipTimes: the deadline in Japan time whatever zone it is given in,
// and how long is left, in each language.
func TestSlipTimes(t *testing.T) {
	en, ja := message.Slip.In(message.English), message.Slip.In(message.Japanese)
	at := time.Date(2031, 3, 1, 15, 30, 0, 0, time.UTC) // Sunday 2 March, 00:30 in Tokyo
	if got := deadlineText(at.In(time.FixedZone("X", -5*3600)), en); got != "Sun 2 Mar 2031, 00:30 Japan time (UTC+9)" {
		t.Errorf("English: %q", got)
	}
	if got := deadlineText(at, ja); got != "2031年3月2日（日）00:30（日本時間）" {
		t.Errorf("Japanese: %q", got)
	}
	for _, tt := range []struct {
		d      time.Duration
		en, ja string
	}{
		{30 * 24 * time.Hour, "30 days left", "残り30日"},
		{47 * time.Hour, "1 day left", "残り1日"},
		{23*time.Hour + 59*time.Minute, "23 hours left", "残り23時間"},
		{time.Hour, "1 hour left", "残り1時間"},
		{59 * time.Minute, "59 minutes left", "残り59分"},
		{90 * time.Second, "1 minute left", "残り1分"},
		{10 * time.Second, "1 minute left", "残り1分"},
	} {
		if got := timeLeft(tt.d, en); got != tt.en {
			t.Errorf("%v: %q, want %q", tt.d, got, tt.en)
		}
		if got := timeLeft(tt.d, ja); got != tt.ja {
			t.Errorf("%v: %q, want %q", tt.d, got, tt.ja)
		}
	}
}
