package console

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
)

// slipCharge makes, as the demo store's server, a konbini charge at store
// ("" a bank transfer) of amount yen, and runs the worker until it awaits
// its customer.
func (pc *paymentsConsole) slipCharge(t *testing.T, store string, amount int64) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	svc, c := pc.stack.Service, pc.demo.Caller
	nt := payment.NewToken{PaymentType: payment.PaymentTypeBankTransfer, Type: payment.OneTime,
		Data: &payment.TokenData{Brand: "aozora_bank"}}
	if store != "" {
		nt = payment.NewToken{PaymentType: payment.PaymentTypeKonbini, Type: payment.OneTime, Data: &payment.TokenData{
			CustomerName: "山田 太郎", ConvenienceStore: store, PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "090-1234-5678"}}}
	}
	tok, err := svc.Tokens.CreateToken(ctx, c, nt)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tok.ID, Amount: amount, Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	return servicetest.AwaitCharge(t, svc, c, ch.StoreID, ch.ID, "the charge to await its customer", servicetest.Awaiting)
}

// read is a charge as the service has it now, once the worker is done.
func (pc *paymentsConsole) read(t *testing.T, ch *payment.Charge) *payment.Charge {
	t.Helper()
	return servicetest.AwaitCharge(t, pc.stack.Service, pc.demo.Caller, ch.StoreID, ch.ID, "the worker", func(*payment.Charge) bool { return true })
}

func (pc *paymentsConsole) expiry(t *testing.T, ch *payment.Charge) *payment.Expiry {
	t.Helper()
	e, err := pc.stack.Service.Charging.ChargeExpiry(context.Background(), pc.demo.Caller, ch.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func wantAll(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	body = html.UnescapeString(body)
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func wantNone(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	body = html.UnescapeString(body)
	for _, w := range unwanted {
		if strings.Contains(body, w) {
			t.Errorf("%s has %q", what, w)
		}
	}
}

// confirmed posts an action's form twice, as the browser does: once for
// the confirmation page, then confirmed; it returns both answers.
func (pc *paymentsConsole) confirmed(t *testing.T, path string, form url.Values) (consoleAnswer, consoleAnswer) {
	t.Helper()
	first := pc.send(t, http.MethodPost, path, form)
	again := url.Values{}
	for k, v := range form {
		again[k] = v
	}
	again.Set("confirm", "yes")
	return first, pc.send(t, http.MethodPost, path, again)
}

// TestConsoleKonbiniCharge: a konbini charge's page shows the store, the
// numbers the customer pays with and the deadline with its extensions;
// the deadline is extended behind the confirmation within the service's
// limits, whose refusals the page explains; paid at the counter in test
// mode, the charge is successful and the numbers are gone.
func TestConsoleKonbiniCharge(t *testing.T) {
	pc := newPaymentsConsole(t)
	ctx := context.Background()
	ch := pc.slipCharge(t, "family_mart", 1500)
	path := consolePathOf(ch)
	it, err := pc.stack.Service.Charging.ChargeIssuerToken(ctx, pc.demo.Caller, ch.StoreID, ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	e := pc.expiry(t, ch)
	body := pc.page(t, path+"?lang=en", http.StatusOK)
	wantAll(t, "the konbini charge's page", body, "Konbini (convenience store)", "FamilyMart", it.Payload["payment_number"],
		it.Payload["confirmation_number"], "山田 太郎", "+81 09012345678", e.ExpirationDate.UTC().Format("2006-01-02 15:04:05")+" UTC",
		"0 of 3", `href="`+it.IssuerToken+`"`, path+`/expiry"`, `value="pay"`, `value="expire"`, path+`/cancel"`,
		message.Console.Get("cancel_slip_hint", message.English))
	wantNone(t, "the konbini charge's page", body, `value="deposit"`, "Deposits")
	if list := pc.page(t, "/console/charges", http.StatusOK); !strings.Contains(list, "Konbini (convenience store)") {
		t.Error("the list does not say the payment type")
	}

	csrf := pc.csrf(t, path)
	extend := func(days string) (consoleAnswer, consoleAnswer) {
		return pc.confirmed(t, path+"/expiry?lang=en", url.Values{"csrf": {csrf}, "days": {days}})
	}
	for _, tc := range []struct{ days, want string }{
		{"0", "Days to add: not valid"}, {"31", "Days to add: not valid"}, {"x", "Days to add: not valid"},
	} {
		first, _ := extend(tc.days)
		if first.status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(first.body), tc.want) {
			t.Errorf("extend by %q: %d, want 400 with %q", tc.days, first.status, tc.want)
		}
	}
	if got := pc.expiry(t, ch); got.ExtensionCount != 0 || !got.ExpirationDate.Equal(e.ExpirationDate) {
		t.Fatalf("refused extensions moved the deadline: %+v", got)
	}

	confirm, done := extend("5")
	want := e.ExpirationDate.Add(5 * 24 * time.Hour)
	wantAll(t, "the extension's confirmation", confirm.body, "cs-confirm", "Extend the payment deadline?",
		e.ExpirationDate.UTC().Format("2006-01-02 15:04:05"), want.UTC().Format("2006-01-02 15:04:05"), "5 days later", "1 of 3")
	if done.status != http.StatusSeeOther || done.location != path {
		t.Fatalf("confirmed extension: %d to %s\n%s", done.status, done.location, done.body)
	}
	if got := pc.expiry(t, ch); got.ExtensionCount != 1 || !got.ExpirationDate.Equal(want) {
		t.Fatalf("after extending by 5 days: %+v, want %v", got, want)
	}
	if got := pc.read(t, ch); got.CaptureAt == nil || !got.CaptureAt.Equal(want) {
		t.Errorf("the charge's capture_at %v, want %v", got.CaptureAt, want)
	}
	wantAll(t, "the page after extending", pc.page(t, path, http.StatusOK), "The deadline is extended.", "1 of 3",
		want.UTC().Format("2006-01-02 15:04:05"))
	// 30 days of the konbini's default period, 5 more and 30 more would
	// end more than 60 days after the payment began: the confirmation
	// comes first, the service refuses then.
	if _, a := extend("30"); a.status != http.StatusBadRequest ||
		!strings.Contains(html.UnescapeString(a.body), message.Console.Get("code_MAXIMUM_EXPIRY_EXTENSION_EXCEEDED", message.English)) {
		t.Errorf("extend by 30 after 5: %d", a.status)
	}
	if got := pc.expiry(t, ch); got.ExtensionCount != 1 || !got.ExpirationDate.Equal(want) {
		t.Fatalf("a refused extension moved the deadline: %+v", got)
	}
	for range 2 {
		if _, done := extend("1"); done.status != http.StatusSeeOther {
			t.Fatalf("another extension: %d", done.status)
		}
	}
	body = pc.page(t, path, http.StatusOK)
	wantAll(t, "the page after three extensions", body, "3 of 3")
	wantNone(t, "the page after three extensions", body, path+`/expiry"`)
	if _, a := extend("1"); a.status != http.StatusBadRequest ||
		!strings.Contains(a.body, html.EscapeString(message.Console.Get("code_MAXIMUM_EXTENSIONS_REACHED", message.English))) {
		t.Errorf("a fourth extension: %d", a.status)
	}

	// Paid at the counter.
	confirm = pc.send(t, http.MethodPost, path+"/simulate", url.Values{"csrf": {csrf}, "action": {"pay"}})
	wantAll(t, "the payment's confirmation", confirm.body, "cs-confirm", "Simulate payment at the counter?")
	if pc.read(t, ch).Status != payment.ChargeAwaiting {
		t.Fatal("the confirmation paid the charge")
	}
	if done = pc.send(t, http.MethodPost, path+"/simulate", url.Values{"csrf": {csrf}, "action": {"pay"}, "confirm": {"yes"}}); done.status != http.StatusSeeOther {
		t.Fatalf("confirmed payment: %d\n%s", done.status, done.body)
	}
	if got := pc.read(t, ch); got.Status != payment.ChargeSuccessful {
		t.Fatalf("after paying: %s", got.Status)
	}
	body = pc.page(t, path, http.StatusOK)
	wantAll(t, "the paid konbini charge's page", body, "The payment at the counter is simulated.", "FamilyMart",
		message.Console.Get("slip_numbers_gone", message.English))
	wantNone(t, "the paid konbini charge's page", body, it.Payload["payment_number"], `value="pay"`, path+`/cancel"`)
	if a := pc.send(t, http.MethodPost, path+"/simulate", url.Values{"csrf": {csrf}, "action": {"expire"}, "confirm": {"yes"}}); a.status != http.StatusBadRequest {
		t.Errorf("letting a paid charge's deadline pass: %d", a.status)
	}
	if a := pc.send(t, http.MethodPost, path+"/simulate", url.Values{"csrf": {csrf}, "action": {"refund"}, "confirm": {"yes"}}); a.status != http.StatusBadRequest ||
		!strings.Contains(a.body, "Action: not valid") {
		t.Errorf("an unknown simulation: %d", a.status)
	}
}

// TestConsoleBankTransferCharge: a bank transfer's page shows the
// virtual account, the deposits against the amount and the store's
// match-amount rule; deposits simulated behind the confirmation move it
// from short to paid (the ledger's lines, a deposit and the payment),
// and one after the end shows the excess. Another transfer's deadline is
// let pass, a third is canceled before it is paid; a card charge has
// none of this.
func TestConsoleBankTransferCharge(t *testing.T) {
	pc := newPaymentsConsole(t)
	ctx := context.Background()
	ch := pc.slipCharge(t, "", 5000)
	path := consolePathOf(ch)
	l, err := pc.stack.Service.Charging.TransferLedger(ctx, pc.demo.Caller, ch.StoreID, ch.ID, payment.ListParams{Limit: 10})
	if err != nil || l.Account == nil {
		t.Fatalf("ledger %+v, %v", l, err)
	}
	va := l.Account
	body := pc.page(t, path, http.StatusOK)
	wantAll(t, "the bank transfer's page", body, "Bank transfer", va.BankName, va.BankCode, va.BranchName, va.AccountNumber,
		va.AccountHolderName, "Ordinary", "¥0 of ¥5,000 received", "Nothing received", "Minimum (default)", "No deposits yet.",
		`value="deposit"`, `value="expire"`, "0 of 3")
	wantNone(t, "the bank transfer's page", body, `value="pay"`)

	csrf := pc.csrf(t, path)
	deposit := func(amount string) (consoleAnswer, consoleAnswer) {
		return pc.confirmed(t, path+"/simulate?lang=en", url.Values{"csrf": {csrf}, "action": {"deposit"}, "amount": {amount}, "currency": {"JPY"}})
	}
	if a, _ := deposit("two thousand"); a.status != http.StatusBadRequest || !strings.Contains(a.body, "Amount: not valid") ||
		!strings.Contains(a.body, `value="two thousand"`) {
		t.Errorf("a deposit that is no amount: %d", a.status)
	}
	confirm, done := deposit("2,000")
	wantAll(t, "the deposit's confirmation", confirm.body, "Simulate a deposit?", "¥2,000")
	if done.status != http.StatusSeeOther {
		t.Fatalf("confirmed deposit: %d\n%s", done.status, done.body)
	}
	body = pc.page(t, path, http.StatusOK)
	wantAll(t, "the page after a short deposit", body, "The deposit is simulated.", "¥2,000 of ¥5,000 received", "Short",
		"¥3,000 is still to come.", "cs-ledger-deposit")
	if got := pc.read(t, ch); got.Status != payment.ChargeAwaiting {
		t.Fatalf("a short deposit paid the charge: %s", got.Status)
	}

	if _, done := deposit("3000"); done.status != http.StatusSeeOther {
		t.Fatalf("the rest: %d", done.status)
	}
	if got := pc.read(t, ch); got.Status != payment.ChargeSuccessful {
		t.Fatalf("after the rest: %s", got.Status)
	}
	body = pc.page(t, path, http.StatusOK)
	wantAll(t, "the paid transfer's page", body, "¥5,000 of ¥5,000 received", "Exact", "Payment of the charge", "cs-ledger-payment")
	if n := strings.Count(body, `class="cs-ledger-`); n != 3 {
		t.Errorf("%d ledger lines, want two deposits and the payment", n)
	}
	wantNone(t, "the paid transfer's page", body, `value="expire"`, path+`/expiry"`)
	// Money arriving after the end is still recorded: the excess shows.
	if _, done := deposit("500"); done.status != http.StatusSeeOther {
		t.Fatalf("a late deposit: %d", done.status)
	}
	wantAll(t, "the page after a late deposit", pc.page(t, path, http.StatusOK), "¥5,500 of ¥5,000 received", "Too much",
		"¥500 more than the amount was received")
	wantAll(t, "the Japanese page", pc.page(t, path+"?lang=ja", http.StatusOK), "銀行振込", "入金累計", "過入金", "下限（既定）")

	// The deadline passes now.
	other := pc.slipCharge(t, "", 1000)
	if _, done := pc.confirmed(t, consolePathOf(other)+"/simulate", url.Values{"csrf": {csrf}, "action": {"expire"}}); done.status != http.StatusSeeOther {
		t.Fatalf("expire: %d", done.status)
	}
	if got := pc.read(t, other); got.Status != payment.ChargeFailed || got.Error == nil || got.Error.Code != payment.ErrConfirmationExpired {
		t.Fatalf("after the deadline: %s %+v", got.Status, got.Error)
	}
	wantAll(t, "the expired transfer's page", pc.page(t, consolePathOf(other)+"?lang=en", http.StatusOK), "327", "Failed")

	// Canceled before it is paid.
	third := pc.slipCharge(t, "", 1000)
	confirm, done = pc.confirmed(t, consolePathOf(third)+"/cancel?lang=en", url.Values{"csrf": {csrf}})
	wantAll(t, "the cancel's confirmation", confirm.body, message.Console.Get("confirm_cancel_slip_lead", message.English))
	if done.status != http.StatusSeeOther {
		t.Fatalf("cancel: %d", done.status)
	}
	if got := pc.read(t, third); got.Status != payment.ChargeCanceled {
		t.Fatalf("after the cancel: %s", got.Status)
	}
	body = pc.page(t, consolePathOf(third)+"?lang=en", http.StatusOK)
	wantAll(t, "the canceled transfer's page", body, "¥0 of ¥1,000 received", message.Console.Get("deposit_late_hint", message.English))
	wantNone(t, "the canceled transfer's page", body, "still to come", consolePathOf(third)+`/cancel"`, `value="expire"`)

	// A card charge: none of it, and its actions say so.
	card := servicetest.Pay(t, pc.stack.Service, pc.demo.Caller, "4000020000000000", 1000, "JPY", nil)
	body = pc.page(t, consolePathOf(card), http.StatusOK)
	wantNone(t, "a card charge's page", body, `id="slip"`, `value="deposit"`, "/expiry\"")
	if _, a := pc.confirmed(t, consolePathOf(card)+"/simulate?lang=en", url.Values{"csrf": {csrf}, "action": {"deposit"}, "amount": {"100"}, "currency": {"JPY"}}); a.status != http.StatusBadRequest ||
		!strings.Contains(a.body, "not a konbini payment or a bank transfer") {
		t.Errorf("a deposit to a card charge: %d", a.status)
	}
	if a := pc.send(t, http.MethodPost, consolePathOf(card)+"/expiry", url.Values{"csrf": {csrf}, "days": {"3"}}); a.status != http.StatusNotFound {
		t.Errorf("extending a card charge: %d", a.status)
	}
}

// TestConsoleSlipSettings: the store settings turn konbini and bank
// transfers on and off and choose the match-amount rule, each rule with its
// explanation; what is saved is what the service then applies; a rule it
// does not know is named on the form and saves nothing.
func TestConsoleSlipSettings(t *testing.T) {
	k := newKeysFixture(t)
	path := storePath(k.demo.StoreID, "/settings")
	p := k.b.get(t, path+"?lang=en")
	wantAll(t, "the settings page", p.body, `name="konbini_enabled" value="yes" checked`, `name="bank_transfer_enabled" value="yes" checked`,
		`value="minimum" checked`, "paid once the deposits reach the amount", "Exact", "Maximum", "Any amount",
		"paid by the first deposit, whatever its amount.")

	bad := keysSettingsForm()
	bad.Set("match_amount", "most")
	if p := k.post(t, path, bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, "Match-amount rule: not valid") {
		t.Errorf("an unknown rule: %d", p.status)
	}
	if st := k.store(t); st.Settings.MatchAmount != "" || st.Settings.KonbiniOff {
		t.Fatalf("a refused form saved: %+v", st.Settings)
	}

	form := keysSettingsForm()
	form.Set("bank_transfer_enabled", "yes")
	form.Set("match_amount", "exact")
	keysRedirect(t, "save", k.post(t, path, form), path)
	st := k.store(t)
	if !st.Settings.KonbiniOff || st.Settings.BankTransferOff || st.Settings.TransferMatch() != payment.MatchExact {
		t.Fatalf("saved %+v", st.Settings)
	}
	p = k.b.get(t, path)
	wantAll(t, "the page after saving", p.body, `name="konbini_enabled" value="yes">`, `name="bank_transfer_enabled" value="yes" checked`,
		`value="exact" checked`)
	// The service applies it: konbini tokens are refused.
	_, err := k.svc.Tokens.CreateToken(context.Background(), k.demo.Caller, payment.NewToken{PaymentType: payment.PaymentTypeKonbini,
		Type: payment.OneTime, Data: &payment.TokenData{CustomerName: "山田 太郎", ConvenienceStore: "lawson",
			PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "09012345678"}}})
	if payment.ErrorCode(err) != "CONVENIENCE_PROCESSING_DISABLED" {
		t.Errorf("a konbini token with konbini off: %v", err)
	}
	// A form without a rule (a script's) leaves it.
	form.Del("match_amount")
	keysRedirect(t, "save without a rule", k.post(t, path, form), path)
	if st := k.store(t); st.Settings.TransferMatch() != payment.MatchExact {
		t.Errorf("a form without a rule changed it to %s", st.Settings.TransferMatch())
	}
	wantAll(t, "the Japanese settings page", k.b.get(t, path+"?lang=ja").body, "コンビニ決済を受け付ける", "入金額の照合ルール", "完全一致")
}
