package console

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// paymentsConsole is the console's handler on a real SQLite store, with
// the demo merchant's console user signed in through the sign-in form.
type paymentsConsole struct {
	*consoleFixture
	// client keeps the session's cookie and does not follow redirects.
	client *http.Client
}

func newPaymentsConsole(t *testing.T) *paymentsConsole {
	t.Helper()
	pc := &paymentsConsole{consoleFixture: newBareConsole(t, servicetest.Options{})}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	pc.client = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrf := pc.csrf(t, "/console/signin")
	resp := pc.send(t, http.MethodPost, "/console/signin", url.Values{"csrf": {csrf}, "email": {payment.DemoEmail},
		"password": {pc.demo.ConsolePassword}})
	if resp.status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d\n%s", resp.status, resp.body)
	}
	return pc
}

// consoleAnswer is an answer of the console.
type consoleAnswer struct {
	status   int
	location string
	body     string
}

func (pc *paymentsConsole) send(t *testing.T, method, path string, form url.Values) consoleAnswer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, pc.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := pc.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return consoleAnswer{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(raw)}
}

// page GETs a page and fails the test unless it answers want.
func (pc *paymentsConsole) page(t *testing.T, path string, want int) string {
	t.Helper()
	a := pc.send(t, http.MethodGet, path, nil)
	if a.status != want {
		t.Fatalf("GET %s: %d, want %d\n%s", path, a.status, want, a.body)
	}
	return a.body
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the forms of the page at path.
func (pc *paymentsConsole) csrf(t *testing.T, path string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(pc.page(t, path, http.StatusOK))
	if m == nil {
		t.Fatalf("GET %s: no csrf field", path)
	}
	return html.UnescapeString(m[1])
}

// authorized makes a charge that is only authorised (capture=false).
func (pc *paymentsConsole) authorized(t *testing.T, amount int64) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	svc, c := pc.stack.Service, pc.demo.Caller
	tok, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{PaymentType: payment.PaymentTypeCard, Type: payment.OneTime,
		Email: "auth@example.com", Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4000020000000000", ExpMonth: 12,
			ExpYear: 2039, CVV: "123"}})
	if err != nil {
		t.Fatal(err)
	}
	capture := false
	ch, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tok.ID, Amount: amount, Currency: "JPY", Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	ch = servicetest.AwaitCharge(t, svc, c, ch.StoreID, ch.ID, "the authorisation", servicetest.Settled)
	if ch.Status != payment.ChargeAuthorized {
		t.Fatalf("charge %s, want authorized", ch.Status)
	}
	return ch
}

// otherMerchantCharge makes a second merchant with a store and a
// successful test charge of its own.
func (pc *paymentsConsole) otherMerchantCharge(t *testing.T) *payment.Charge {
	t.Helper()
	_, c := addMerchant(t, pc.stack)
	return servicetest.Pay(t, pc.stack.Service, c, "4000020000000000", 1200, "JPY", nil)
}

// liveCharge writes a successful live charge of the demo store straight
// into storage (the sandbox takes no live payments).
func (pc *paymentsConsole) liveCharge(t *testing.T) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	issued, err := pc.stack.Service.Access.IssueStoreAppToken(ctx, pc.demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pc.stack.Service.Access.Authenticate(ctx, "Bearer "+issued.Secret+"."+issued.JWT, "")
	if err != nil {
		t.Fatal(err)
	}
	return writeLiveCharge(t, pc.stack, pc.demo.StoreID, c, 1500)
}

func (pc *paymentsConsole) refunds(t *testing.T, ch *payment.Charge) []*payment.Refund {
	t.Helper()
	var out []*payment.Refund
	err := pc.stack.DB.View(context.Background(), func(tx payment.Tx) error {
		page, err := tx.ListRefunds(context.Background(), ch.ID, payment.ListParams{Limit: 100, Direction: payment.Asc})
		out = page.Items
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stored is a charge as storage has it, with what was asked of it.
func (pc *paymentsConsole) stored(t *testing.T, ch *payment.Charge) string {
	t.Helper()
	var s string
	err := pc.stack.DB.View(context.Background(), func(tx payment.Tx) error {
		got, err := tx.Charge(context.Background(), ch.ID)
		if err != nil {
			return err
		}
		refunded, err := tx.RefundedAmount(context.Background(), ch.ID)
		if err != nil {
			return err
		}
		cancels, err := tx.ListCancels(context.Background(), ch.ID, payment.ListParams{Limit: 100})
		s = fmt.Sprintf("%s %s %d %d %d", got.Status, got.CaptureState, got.CaptureAmount, refunded, len(cancels.Items))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func consolePathOf(ch *payment.Charge) string {
	return "/console/stores/" + ch.StoreID.String() + "/charges/" + ch.ID.String()
}

var chargeLink = regexp.MustCompile(`/console/stores/[0-9a-f-]{36}/charges/([0-9a-f-]{36})"`)

// chargeIDs are the charges a page links to, in order.
func chargeIDs(body string) []string {
	var out []string
	for _, m := range chargeLink.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func statCount(t *testing.T, body string, status payment.ChargeStatus) string {
	t.Helper()
	m := regexp.MustCompile(`cs-stat-` + string(status) + `"><b>(\d+)</b>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no card for %s", status)
	}
	return m[1]
}

// TestConsoleDashboard: today's charges of the session's mode by status,
// the volume of the successful ones, the latest charges; ?store= narrows
// to one of the merchant's stores and 404s anyone else's.
func TestConsoleDashboard(t *testing.T) {
	pc := newPaymentsConsole(t)
	svc, c := pc.stack.Service, pc.demo.Caller
	var made []*payment.Charge
	for _, p := range []struct {
		card   string
		amount int64
	}{{"4000020000000000", 1000}, {"4000020000000000", 2500}, {"4111111111111111", 700}} {
		made = append(made, servicetest.Pay(t, svc, c, p.card, p.amount, "JPY", nil))
	}
	pc.authorized(t, 900)
	pc.liveCharge(t)
	other := pc.otherMerchantCharge(t)

	body := pc.page(t, "/console/", http.StatusOK)
	for status, want := range map[payment.ChargeStatus]string{
		payment.ChargeSuccessful: "2", payment.ChargeFailed: "1", payment.ChargeAuthorized: "1", payment.ChargePending: "0",
		payment.ChargeCanceled: "0",
	} {
		if got := statCount(t, body, status); got != want {
			t.Errorf("%s: %s, want %s", status, got, want)
		}
	}
	if !strings.Contains(body, `<b>4</b><span>`+message.Console.Get("stat_total", message.English)) {
		t.Error("the total is not 4")
	}
	if !strings.Contains(body, `<b>`+html.EscapeString(site.Amount(3500, "JPY"))+`</b>`) {
		t.Errorf("no volume of %s", site.Amount(3500, "JPY"))
	}
	if !strings.Contains(body, "cs-badge-test") || strings.Contains(body, "cs-badge-live") {
		t.Error("the page does not say it is in test mode")
	}
	ids := chargeIDs(body)
	if len(ids) != 4 || ids[1] != made[2].ID.String() || slices.Contains(ids, other.ID.String()) {
		t.Errorf("latest charges = %v", ids)
	}
	narrowed := pc.page(t, "/console/?store="+pc.demo.StoreID.String(), http.StatusOK)
	if got := statCount(t, narrowed, payment.ChargeSuccessful); got != "2" {
		t.Errorf("the demo store's successful charges: %s", got)
	}
	pc.page(t, "/console/?store="+other.StoreID.String(), http.StatusNotFound)
	pc.page(t, "/console/?store=nonsense", http.StatusNotFound)
}

// TestConsoleChargesFilters: the API's filters as query parameters, and
// bad input named on the page, never a 500.
func TestConsoleChargesFilters(t *testing.T) {
	pc := newPaymentsConsole(t)
	svc, c := pc.stack.Service, pc.demo.Caller
	small := servicetest.Pay(t, svc, c, "4000020000000000", 600, "JPY", payment.Metadata{"order_id": "A-1"})
	big := servicetest.Pay(t, svc, c, "4000020000000000", 5000, "JPY", payment.Metadata{"order_id": "B-2"})
	failed := servicetest.Pay(t, svc, c, "4111111111111111", 800, "JPY", nil)
	dollars := servicetest.Pay(t, svc, c, "4000020000000000", 1250, "USD", nil)
	pc.liveCharge(t)
	other := pc.otherMerchantCharge(t)
	today := time.Now().UTC().Format(time.DateOnly)
	yesterday := time.Now().UTC().Add(-24 * time.Hour).Format(time.DateOnly)
	id := func(ch *payment.Charge) string { return ch.ID.String() }

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{id(dollars), id(failed), id(big), id(small)}},
		{"status=failed", []string{id(failed)}},
		{"status=successful&currency=jpy", []string{id(big), id(small)}},
		{"currency=USD&amount_from=12.50&amount_to=12.5", []string{id(dollars)}},
		{"currency=JPY&amount_from=1,000", []string{id(big)}},
		{"amount_to=700", []string{id(small)}},
		{"metadata=order_id:B-2", []string{id(big)}},
		{"last_four=1111", []string{id(failed)}},
		{"last_four=0000&currency=JPY", []string{id(big), id(small)}},
		{"email=shopper@example.com&status=failed", []string{id(failed)}},
		{"email=nobody@example.com", nil},
		{"from=" + today + "&to=" + today, []string{id(dollars), id(failed), id(big), id(small)}},
		{"to=" + yesterday, nil},
		{"store=" + pc.demo.StoreID.String() + "&status=failed", []string{id(failed)}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			if got := chargeIDs(pc.page(t, "/console/charges?"+tc.query, http.StatusOK)); !slices.Equal(got, tc.want) {
				t.Errorf("charges = %v\nwant %v", got, tc.want)
			}
		})
	}

	t.Run("OtherMerchantsStore", func(t *testing.T) {
		pc.page(t, "/console/charges?store="+other.StoreID.String(), http.StatusNotFound)
	})
	en := message.Console.In(message.English)
	for _, tc := range []struct {
		query string
		field string
	}{
		{"status=paid", "field_status"},
		{"currency=XYZ", "field_currency"},
		{"from=24/11/2026", "field_from"},
		{"to=2026-13-01", "field_to"},
		{"currency=JPY&amount_from=10.5", "field_amount_from"},
		{"amount_to=lots", "field_amount_to"},
		{"last_four=12a4", "field_last_four"},
		{"metadata=no-colon", "field_metadata"},
		{"store=not-a-store", "field_store"},
		{"cursor=xyz", "field_cursor"},
		{"cursor_direction=sideways", "field_cursor_direction"},
	} {
		t.Run("Bad/"+tc.query, func(t *testing.T) {
			body := pc.page(t, "/console/charges?"+tc.query+"&lang=en", http.StatusBadRequest)
			if !strings.Contains(body, `class="cs-errors"`) || !strings.Contains(body, html.EscapeString(en[tc.field])+": ") {
				t.Errorf("the page does not name %q", en[tc.field])
			}
			if len(chargeIDs(body)) != 0 {
				t.Error("a refused filter listed charges")
			}
		})
	}
}

var (
	nextLink     = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	previousLink = regexp.MustCompile(`<a href="([^"]+)" rel="prev">`)
)

func link(re *regexp.Regexp, body string) string {
	m := re.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestConsoleChargesPaging: 25 a page, newest first, walked forth and
// back by cursor as the API pages, with the filters kept.
func TestConsoleChargesPaging(t *testing.T) {
	pc := newPaymentsConsole(t)
	svc, c := pc.stack.Service, pc.demo.Caller
	var want []string
	for i := range 56 {
		card := "4000020000000000"
		if i == 3 {
			card = "4111111111111111" // one failed charge, filtered out
		}
		ch := servicetest.Pay(t, svc, c, card, int64(1000+i), "JPY", nil)
		if i != 3 {
			want = append(want, ch.ID.String())
		}
	}
	slices.Reverse(want)

	path := "/console/charges?status=successful"
	var pages [][]string
	var paths []string
	for path != "" && len(pages) < 5 {
		body := pc.page(t, path, http.StatusOK)
		paths = append(paths, path)
		pages = append(pages, chargeIDs(body))
		if len(pages) == 1 && link(previousLink, body) != "" {
			t.Error("the first page links to a previous one")
		}
		path = link(nextLink, body)
		if path != "" && !strings.Contains(path, "status=successful") {
			t.Errorf("the next link %s lost the filter", path)
		}
	}
	if len(pages) != 3 || len(pages[0]) != 25 || len(pages[1]) != 25 || len(pages[2]) != 5 {
		t.Fatalf("pages of %d, %d, %d… (%d pages)", len(pages[0]), len(pages[1]), len(pages[2]), len(pages))
	}
	if got := slices.Concat(pages...); !slices.Equal(got, want) {
		t.Fatalf("the pages list\n%v\nwant\n%v", got, want)
	}
	// Back from the last page: the second, then the first.
	back := link(previousLink, pc.page(t, paths[2], http.StatusOK))
	body := pc.page(t, back, http.StatusOK)
	if got := chargeIDs(body); !slices.Equal(got, pages[1]) {
		t.Errorf("back from the last page: %v\nwant %v", got, pages[1])
	}
	if next := link(nextLink, body); chargeIDs(pc.page(t, next, http.StatusOK))[0] != pages[2][0] {
		t.Error("forth again from the second page does not reach the third")
	}
	body = pc.page(t, link(previousLink, body), http.StatusOK)
	if got := chargeIDs(body); !slices.Equal(got, pages[0]) {
		t.Errorf("back to the first page: %v\nwant %v", got, pages[0])
	}
	if link(previousLink, body) != "" {
		t.Error("the first page, reached backwards, links to a previous one")
	}
}

// TestConsoleRefund: the charge page shows what the charge allows; a
// refund is confirmed before it is made, then shows on the page with its
// event; one that exceeds the charge shows the service's reason.
func TestConsoleRefund(t *testing.T) {
	pc := newPaymentsConsole(t)
	ctx := context.Background()
	svc := pc.stack.Service
	ch := servicetest.Pay(t, svc, pc.demo.Caller, "4000020000000000", 1000, "JPY", payment.Metadata{"order_id": "R-1"})
	path := consolePathOf(ch)
	en := message.Console.In(message.English)

	body := pc.page(t, path+"?lang=en", http.StatusOK)
	for _, want := range []string{ch.ID.String(), "R-1", `action="` + path + `/refund"`, "charge_finished", en["no_refunds"]} {
		if !strings.Contains(body, want) {
			t.Errorf("the charge page lacks %q", want)
		}
	}
	for _, absent := range []string{"/capture\"", "/cancel\""} {
		if strings.Contains(body, absent) {
			t.Errorf("a successful charge offers %s", absent)
		}
	}
	csrf := pc.csrf(t, path)
	form := url.Values{"csrf": {csrf}, "amount": {"400"}, "currency": {"JPY"}, "reason": {"customer_request"}, "message": {"sorry"}}

	a := pc.send(t, http.MethodPost, path+"/refund", form)
	if a.status != http.StatusOK || !strings.Contains(a.body, `name="confirm" value="yes"`) || !strings.Contains(a.body, "cs-confirm") ||
		!strings.Contains(a.body, `name="amount" value="400"`) || !strings.Contains(a.body, `href="`+path+`"`) {
		t.Fatalf("the first POST: %d, want the confirmation\n%s", a.status, a.body)
	}
	if got := pc.refunds(t, ch); len(got) != 0 {
		t.Fatalf("the confirmation step made %d refunds", len(got))
	}

	form.Set("confirm", "yes")
	a = pc.send(t, http.MethodPost, path+"/refund", form)
	if a.status != http.StatusSeeOther || a.location != path {
		t.Fatalf("the confirmed POST: %d to %q\n%s", a.status, a.location, a.body)
	}
	_, sess, err := svc.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: pc.demo.ConsolePassword, ClientIP: "192.0.2.7"})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := svc.Console.ConsoleCaller(ctx, sess, ch.StoreID)
	if err != nil {
		t.Fatal(err)
	}
	refunds, err := svc.Refunds.Refunds(ctx, caller, ch.StoreID, ch.ID, payment.ListParams{Limit: 10})
	if err != nil || len(refunds.Items) != 1 {
		t.Fatalf("refunds = %v, %v", refunds.Items, err)
	}
	if r := refunds.Items[0]; r.Amount != 400 || r.Currency != "JPY" || r.Reason != "customer_request" || r.Message != "sorry" {
		t.Errorf("refund = %+v", r)
	}
	if _, err := svc.Work.ProcessPending(ctx, 50); err != nil {
		t.Fatal(err)
	}
	body = pc.page(t, path+"?lang=en", http.StatusOK)
	for _, want := range []string{en["n_refund_created"], refunds.Items[0].ID.String(), "refund_finished", html.EscapeString(site.Amount(600, "JPY"))} {
		if !strings.Contains(body, want) {
			t.Errorf("after the refund the page lacks %q", want)
		}
	}

	// More than is left: the service's reason, the form kept, nothing made.
	form.Set("amount", "700")
	a = pc.send(t, http.MethodPost, path+"/refund?lang=en", form)
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, html.EscapeString(en["code_REFUND_EXCEEDS_CHARGE_AMOUNT"])) ||
		!strings.Contains(a.body, `name="amount" value="700"`) {
		t.Errorf("an excessive refund: %d\n%s", a.status, a.body)
	}
	// An amount that is no amount: the field named, nothing asked.
	form.Set("amount", "4.5")
	a = pc.send(t, http.MethodPost, path+"/refund?lang=en", form)
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, html.EscapeString(en["field_amount"])+": ") {
		t.Errorf("a refund of 4.5 yen: %d", a.status)
	}
	if got := pc.refunds(t, ch); len(got) != 1 {
		t.Errorf("%d refunds, want the one", len(got))
	}
}

// TestConsoleCaptureAndCancel: an authorised charge offers capture and
// cancel; a partial capture and a cancel go through their confirmation.
func TestConsoleCaptureAndCancel(t *testing.T) {
	pc := newPaymentsConsole(t)
	ctx := context.Background()
	toCapture, toCancel := pc.authorized(t, 1000), pc.authorized(t, 2000)
	path := consolePathOf(toCapture)
	body := pc.page(t, path, http.StatusOK)
	for _, want := range []string{path + `/capture"`, path + `/cancel"`} {
		if !strings.Contains(body, want) {
			t.Errorf("an authorised charge does not offer %s", want)
		}
	}
	if strings.Contains(body, path+`/refund"`) {
		t.Error("an authorised charge offers a refund")
	}
	csrf := pc.csrf(t, path)

	form := url.Values{"csrf": {csrf}, "amount": {"600"}, "currency": {"JPY"}}
	if a := pc.send(t, http.MethodPost, path+"/capture", form); a.status != http.StatusOK || !strings.Contains(a.body, "cs-confirm") {
		t.Fatalf("capture without confirmation: %d", a.status)
	}
	if got := pc.stored(t, toCapture); got != "authorized  0 0 0" {
		t.Fatalf("the confirmation step changed the charge: %s", got)
	}
	form.Set("confirm", "yes")
	if a := pc.send(t, http.MethodPost, path+"/capture", form); a.status != http.StatusSeeOther || a.location != path {
		t.Fatalf("confirmed capture: %d to %s\n%s", a.status, a.location, a.body)
	}
	if got := pc.stored(t, toCapture); got != "authorized requested 600 0 0" {
		t.Errorf("after the capture: %s", got)
	}
	// Captured already: the service says no, the page says why.
	a := pc.send(t, http.MethodPost, path+"/capture?lang=en", form)
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, message.Console.Get("code_ALREADY_CAPTURED", message.English)) {
		t.Errorf("a second capture: %d", a.status)
	}

	cancelPath := consolePathOf(toCancel)
	if a := pc.send(t, http.MethodPost, cancelPath+"/cancel", url.Values{"csrf": {csrf}}); a.status != http.StatusOK ||
		!strings.Contains(a.body, "cs-confirm") {
		t.Fatalf("cancel without confirmation: %d", a.status)
	}
	if a := pc.send(t, http.MethodPost, cancelPath+"/cancel", url.Values{"csrf": {csrf}, "confirm": {"yes"}}); a.status != http.StatusSeeOther {
		t.Fatalf("confirmed cancel: %d\n%s", a.status, a.body)
	}
	if _, err := pc.stack.Service.Work.ProcessPending(ctx, 50); err != nil {
		t.Fatal(err)
	}
	if got := pc.stored(t, toCancel); got != "canceled  0 0 1" {
		t.Errorf("after the cancel: %s", got)
	}
	if body := pc.page(t, cancelPath, http.StatusOK); !strings.Contains(body, "cs-cancel") || strings.Contains(body, cancelPath+`/cancel"`) {
		t.Error("the canceled charge's page does not list its cancel, or still offers one")
	}
}

// TestConsoleChargeNotFound: another merchant's charge, a live charge
// while the session is in test mode, a charge under another store's path
// and ids that are no ids are NOT_FOUND on the page and on every action,
// confirmed or not, and nothing changes.
func TestConsoleChargeNotFound(t *testing.T) {
	pc := newPaymentsConsole(t)
	own := servicetest.Pay(t, pc.stack.Service, pc.demo.Caller, "4000020000000000", 1000, "JPY", nil)
	other, live := pc.otherMerchantCharge(t), pc.liveCharge(t)
	csrf := pc.csrf(t, "/console/")
	before := []string{pc.stored(t, own), pc.stored(t, other), pc.stored(t, live)}
	for _, tc := range []struct {
		name string
		path string
	}{
		{"OtherMerchant", consolePathOf(other)},
		{"OtherMerchantUnderOwnStore", "/console/stores/" + pc.demo.StoreID.String() + "/charges/" + other.ID.String()},
		{"OwnUnderOtherStore", "/console/stores/" + other.StoreID.String() + "/charges/" + own.ID.String()},
		{"LiveInTestMode", consolePathOf(live)},
		{"NotAnID", "/console/stores/" + pc.demo.StoreID.String() + "/charges/nonsense"},
		{"UnknownStore", "/console/stores/" + uuid.NewString() + "/charges/" + own.ID.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc.page(t, tc.path, http.StatusNotFound)
			for _, action := range []string{"refund", "capture", "cancel"} {
				for _, confirm := range []string{"", "yes"} {
					form := url.Values{"csrf": {csrf}, "amount": {"100"}, "currency": {"JPY"}, "confirm": {confirm}}
					if a := pc.send(t, http.MethodPost, tc.path+"/"+action, form); a.status != http.StatusNotFound {
						t.Errorf("%s (confirm=%q): %d, want 404", action, confirm, a.status)
					}
				}
			}
		})
	}
	if after := []string{pc.stored(t, own), pc.stored(t, other), pc.stored(t, live)}; !slices.Equal(after, before) {
		t.Errorf("refused actions changed charges: %v, was %v", after, before)
	}
}

// TestConsoleChargeActionsNeedCSRF: an action without the session's
// token is refused, confirmed or not, and nothing changes.
func TestConsoleChargeActionsNeedCSRF(t *testing.T) {
	pc := newPaymentsConsole(t)
	paid, authorized := servicetest.Pay(t, pc.stack.Service, pc.demo.Caller, "4000020000000000", 1000, "JPY", nil), pc.authorized(t, 800)
	before := []string{pc.stored(t, paid), pc.stored(t, authorized)}
	for _, tc := range []struct {
		action string
		ch     *payment.Charge
	}{{"refund", paid}, {"capture", authorized}, {"cancel", authorized}} {
		for name, token := range map[string]string{"none": "", "forged": "forged-token"} {
			form := url.Values{"amount": {"100"}, "currency": {"JPY"}, "confirm": {"yes"}}
			if token != "" {
				form.Set("csrf", token)
			}
			if a := pc.send(t, http.MethodPost, consolePathOf(tc.ch)+"/"+tc.action, form); a.status != http.StatusForbidden {
				t.Errorf("%s with %s token: %d, want 403", tc.action, name, a.status)
			}
		}
	}
	if after := []string{pc.stored(t, paid), pc.stored(t, authorized)}; !slices.Equal(after, before) {
		t.Errorf("refused actions changed charges: %v, was %v", after, before)
	}
}

// TestParseAmount: amounts as people type them, in the currency's major
// unit.
func TestParseAmount(t *testing.T) {
	jpy, _ := payment.LookupCurrency("JPY")
	usd, _ := payment.LookupCurrency("USD")
	for _, tc := range []struct {
		in   string
		cur  payment.Currency
		want int64
		ok   bool
	}{
		{"1000", jpy, 1000, true},
		{"1,000", jpy, 1000, true},
		{" 50 ", jpy, 50, true},
		{"12.5", usd, 1250, true},
		{"12.50", usd, 1250, true},
		{".5", usd, 50, true},
		{"12", usd, 1200, true},
		{"12.505", usd, 0, false},
		{"12.5", jpy, 0, false},
		{"12.", usd, 0, false},
		{"", jpy, 0, false},
		{".", usd, 0, false},
		{"-5", jpy, 0, false},
		{"1e3", jpy, 0, false},
		{"１０００", jpy, 0, false},
		{"9999999999999999", jpy, 0, false},
	} {
		got, ok := parseAmount(tc.in, tc.cur)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseAmount(%q, %s) = %d, %v; want %d, %v", tc.in, tc.cur.Code, got, ok, tc.want, tc.ok)
		}
	}
}
