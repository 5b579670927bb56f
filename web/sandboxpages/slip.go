package sandboxpages

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// The sandbox's instructions page of a konbini payment or a bank transfer
// (payment.SlipPagePath + key), which the issuer token of such a charge
// points to: what to pay, with which numbers or to which account, by when,
// and how; then, once the payment has moved, where it is. A real
// acquirer's page would stop there; in test mode the sandbox's page also
// stands for the store's counter and the bank, with buttons that pay, let
// the deadline pass, or deposit an amount. A live payment's page shows
// the instructions only and refuses those actions.
//
//	GET|POST {page}/{key}        the page (POST changes nothing)
//	POST     {page}/{key}/act    a simulation button (a form with a CSRF
//	                             token); on success it redirects to the
//	                             page (POST-redirect-GET)
//	GET      {page}/{key}/status {"status": …[, "deposited": n]}, polled
//	                             by the page's script
//
// Unlike the challenge and wallet pages, an ended payment's page does not
// send the shopper on to the merchant: a shopper comes back to an
// instructions page days later, from a bookmark or a printout, and must
// read there what became of it. It links back to the shop instead.

// japanTime is the zone every deadline is written in: the stores and the
// banks keep Japan's clock, whatever the shopper's.
var japanTime = time.FixedZone("JST", 9*60*60)

// isSlip reports whether an approval is one the instructions page shows.
func isSlip(kind payment.ApprovalKind) bool {
	return kind == payment.ApprovalKonbini || kind == payment.ApprovalBankTransfer
}

// konbiniStore is how the page speaks of a store: the catalogue keys of
// its name, of the steps to pay there and of its numbers' names, and the
// letter of its mark. Stores that share a terminal share its steps.
type konbiniStore struct {
	mark  string
	steps string // step_<steps>_1 …
	// payment and confirmation are the num_ keys of the numbers' names;
	// confirmationFirst puts the confirmation number first, as the
	// store's terminal asks for it (FamilyMart's company code).
	payment, confirmation string
	confirmationFirst     bool
}

// konbiniStores are the stores of payment.ConvenienceStores. Circle K and
// Sunkus became FamilyMart stores, whose terminal they now use.
var konbiniStores = map[string]konbiniStore{
	"seven_eleven":         {mark: "7", steps: "seven", payment: "num_slip"},
	"family_mart":          {mark: "F", steps: "famima", payment: "num_order", confirmation: "num_company", confirmationFirst: true},
	"circle_k":             {mark: "K", steps: "famima", payment: "num_order", confirmation: "num_company", confirmationFirst: true},
	"sunkus":               {mark: "S", steps: "famima", payment: "num_order", confirmation: "num_company", confirmationFirst: true},
	"lawson":               {mark: "L", steps: "loppi", payment: "num_customer", confirmation: "num_confirmation"},
	"mini_stop":            {mark: "M", steps: "loppi", payment: "num_customer", confirmation: "num_confirmation"},
	"seico_mart":           {mark: "S", steps: "counter", payment: "num_receipt", confirmation: "num_confirmation"},
	"daily_yamazaki":       {mark: "D", steps: "counter", payment: "num_receipt", confirmation: "num_confirmation"},
	"yamazaki_daily_store": {mark: "Y", steps: "counter", payment: "num_receipt", confirmation: "num_confirmation"},
	"pay_easy":             {mark: "P", steps: "payeasy", payment: "num_customer", confirmation: "num_confirmation"},
}

// slipSteps is how many steps each kind of store's how-to has.
const slipSteps = 4

// storeOf is how the page shows a konbini store, with the catalogue key
// of its name and its look's CSS class; a store the page does not know
// (one the domain adds later) is paid at the counter.
func storeOf(store string) (k konbiniStore, name, look string) {
	if k, ok := konbiniStores[store]; ok {
		return k, "cvs_" + store, "cvs-" + strings.ReplaceAll(store, "_", "-")
	}
	return konbiniStore{mark: "¥", steps: "counter", payment: "num_payment", confirmation: "num_confirmation"}, "cvs_other", "cvs-other"
}

// accountTypes are the names of a virtual account's types.
var accountTypes = map[string]string{"ordinary": "acct_ordinary", "checking": "acct_checking", "savings": "acct_savings"}

// slipRow is one line of the numbers or the account: a label, the value
// (and a time's zone, kept on one line with it), a line under it (a
// bank's code), and whether it gets a copy button (its ID names the
// value's element for the script).
type slipRow struct {
	ID, Label, Value, Zone, Sub string
	Copy, Big                   bool
}

// jstTime is a time as the page writes it: the date and the words saying
// it is Japan's, which a narrow screen must not break apart.
type jstTime struct{ Date, Zone string }

// slipView is what the instructions page's template gets, beside what
// every sandbox page does.
type slipView struct {
	*sbView
	// S is the page's own texts (message.Slip).
	S map[string]string
	// Method is "konbini" or "bank"; Look the bar's CSS class; Test
	// whether the simulation panel is shown.
	Method   string
	Look     string
	Mark     string
	BarName  string
	Test     bool
	Awaiting bool
	Lead     string
	// Rows are the numbers to pay with, or the account; Facts the rest.
	Rows  []slipRow
	Facts []slipRow
	Steps []string
	// Deadline is the deadline in Japan time, DeadlineText the same in a
	// sentence; TimeLeft how far off it is.
	Deadline     jstTime
	DeadlineText string
	TimeLeft     string
	// Due is what the big figure shows: the amount, or once part of it
	// has been transferred, the rest (DueLabel says which); TotalText
	// then gives the whole.
	Due       string
	DueLabel  string
	TotalText string
	// A bank transfer's deposits: their state's class and text, and a
	// note when they exceed the amount while the charge still waits.
	PaymentStatus     string
	PaymentStatusText string
	ExceededNote      bool
	Deposited         int64
	// SimLead, SimPay and SimPayHint are the konbini panel's words: a
	// store's counter, or Pay-easy's ATM.
	SimLead, SimPay, SimPayHint string
	// The deposit form: its value, and what was wrong with the last one.
	DepositValue string
	AmountError  string
	// Notice says why an action did nothing (the payment had ended).
	Notice string
	// StatusText names the state; Title (the sbView's), Result and
	// ResultText describe an ended payment.
	StatusText string
	BackText   string
	// LangJA and LangEN are the page in each language.
	LangJA, LangEN string
}

// slipApproval reads the approval of the request's key for the
// instructions page: an approval of another kind is not there.
func (sp *sandboxPages) slipApproval(r *http.Request) (*payment.ApprovalPage, error) {
	page, err := sp.svc.Approval(r.Context(), site.PathValue(r, "key"))
	if err != nil {
		return nil, err
	}
	if !isSlip(page.Kind) {
		return nil, payment.NotFound("approval")
	}
	return page, nil
}

// showSlip renders the instructions page, whatever the payment's state.
func (sp *sandboxPages) showSlip(w http.ResponseWriter, r *http.Request) {
	loc := sp.locale(r, "")
	page, err := sp.slipApproval(r)
	if err != nil {
		sp.failErr(w, r, loc, err)
		return
	}
	sp.renderSlip(w, http.StatusOK, sp.slipView(loc, localeParam(r, ""), page))
}

// slipView fills the instructions page of an approval as it is now.
func (sp *sandboxPages) slipView(loc message.Locale, locParam string, page *payment.ApprovalPage) *slipView {
	s := message.Slip.In(loc)
	v := &slipView{
		sbView: sp.baseView(loc, locParam, page), S: s,
		Test: page.Mode == payment.ModeTest, Awaiting: page.Status == payment.ApprovalAwaiting,
		Deadline: japanTimeOf(page.ExpiresOn, s), DeadlineText: deadlineText(page.ExpiresOn, s),
		StatusText: s["st_"+string(page.Status)], DueLabel: s["amount"],
	}
	v.Due = v.AmountText
	if v.StatusText == "" {
		v.StatusText = s["st_failed"]
	}
	base := payment.SlipPagePath + page.Key
	v.LangJA, v.LangEN = base+"?locale=ja", base+"?locale=en"
	if v.Awaiting {
		v.CSRF = sp.csrfToken(page.Kind, page.Key)
		v.TimeLeft = timeLeft(page.ExpiresOn.Sub(sp.now()), s)
	}
	if target, ok := returnURL(page); ok {
		v.ReturnURL, v.BackText = target, fmt.Sprintf(s["back"], page.StoreName)
	}
	if page.Kind == payment.ApprovalKonbini {
		fillKonbini(v, page)
	} else {
		fillBank(v, page)
	}
	if !v.Awaiting {
		sp.fillResult(v, page)
	}
	return v
}

// fillKonbini adds a konbini payment's store, numbers and steps.
func fillKonbini(v *slipView, page *payment.ApprovalPage) {
	s, sl := v.S, page.Slip
	store, nameKey, look := storeOf(sl.ConvenienceStore)
	name := s[nameKey]
	v.Method, v.Look, v.Mark, v.BarName = "konbini", look, store.mark, name
	title, lead := "title_konbini", "lead_konbini"
	v.SimLead, v.SimPay, v.SimPayHint = s["sim_lead_konbini"], s["sim_pay"], s["sim_pay_hint"]
	if store.steps == "payeasy" {
		title, lead = "title_pay_easy", "lead_pay_easy"
		v.SimLead, v.SimPay, v.SimPayHint = s["sim_lead_pay_easy"], s["sim_pay_pay_easy"], s["sim_pay_hint_pay_easy"]
	}
	v.Title, v.Lead = fmt.Sprintf(s[title], name), fmt.Sprintf(s[lead], name)
	pay := slipRow{ID: "sb-payment-number", Label: s[store.payment], Value: sl.PaymentNumber, Copy: true, Big: true}
	v.Rows = []slipRow{pay}
	if sl.ConfirmationNumber != "" {
		conf := slipRow{ID: "sb-confirmation-number", Label: s[store.confirmation], Value: sl.ConfirmationNumber, Copy: true, Big: true}
		if store.confirmationFirst {
			v.Rows = []slipRow{conf, pay}
		} else {
			v.Rows = append(v.Rows, conf)
		}
	}
	v.Facts = []slipRow{
		{Label: s["pay_at"], Value: name},
		{Label: s["customer"], Value: sl.CustomerName},
		{Label: s["payee"], Value: page.StoreName},
	}
	for i := 1; i <= slipSteps; i++ {
		v.Steps = append(v.Steps, s[fmt.Sprintf("step_%s_%d", store.steps, i)])
	}
}

// fillBank adds a bank transfer's account, deposits and steps.
func fillBank(v *slipView, page *payment.ApprovalPage) {
	s, sl := v.S, page.Slip
	v.Method, v.Look, v.Mark = "bank", "bank", "¥"
	v.Title, v.Lead, v.DueLabel = s["title_bank"], s["lead_bank"], s["to_transfer"]
	if va := sl.VirtualAccount; va != nil {
		v.BarName = va.BankName
		acctType := va.AccountType
		if k, ok := accountTypes[va.AccountType]; ok {
			acctType = s[k]
		}
		v.Rows = []slipRow{
			{Label: s["bank"], Value: va.BankName, Sub: fmt.Sprintf(s["bank_code"], va.BankCode)},
			{Label: s["branch"], Value: va.BranchName, Sub: fmt.Sprintf(s["branch_code"], va.BranchCode)},
			{Label: s["account_type"], Value: acctType},
			{ID: "sb-account-number", Label: s["account_number"], Value: va.AccountNumber, Copy: true, Big: true},
			{ID: "sb-account-holder", Label: s["account_holder"], Value: va.AccountHolderName, Copy: true},
		}
	}
	v.Deposited = sl.Deposited
	due := max(0, page.Amount-sl.Deposited)
	st := payment.TransferStatusOf(sl.Deposited, page.Amount)
	v.PaymentStatus = string(st)
	switch {
	case st == payment.TransferInsufficient && !v.Awaiting:
		// Nothing is due any more; what was short is said as such.
		v.PaymentStatusText = fmt.Sprintf(s["pay_short"], site.Amount(due, page.Currency))
	case st == payment.TransferInsufficient:
		v.PaymentStatusText = fmt.Sprintf(s["pay_insufficient"], site.Amount(due, page.Currency))
		v.DueLabel, v.Due = s["due"], site.Amount(due, page.Currency)
		v.TotalText = fmt.Sprintf(s["of_total"], v.AmountText)
	case st == payment.TransferExceeded:
		v.PaymentStatusText = fmt.Sprintf(s["pay_exceeded"], site.Amount(sl.Deposited-page.Amount, page.Currency))
		v.ExceededNote = v.Awaiting
	default:
		v.PaymentStatusText = s["pay_"+string(st)]
	}
	v.Facts = []slipRow{{Label: s["payee"], Value: page.StoreName}}
	if sl.Deposited > 0 {
		v.Facts = append(v.Facts, slipRow{ID: "sb-deposited", Label: s["deposited"], Value: site.Amount(sl.Deposited, page.Currency)})
	}
	if due > 0 {
		v.DepositValue = strconv.FormatInt(due, 10)
	}
	for i := 1; i <= slipSteps; i++ {
		v.Steps = append(v.Steps, s[fmt.Sprintf("step_bank_%d", i)])
	}
}

// fillResult describes an ended payment: what became of it, and when.
func (sp *sandboxPages) fillResult(v *slipView, page *payment.ApprovalPage) {
	s := v.S
	v.Result = string(page.Status)
	method := v.Method
	when := japanTimeOf(page.UpdatedOn, s)
	switch page.Status {
	case payment.ApprovalSuccessful:
		v.ResultText = fmt.Sprintf(s["r_successful_bank"], v.AmountText)
		if method == "konbini" {
			v.ResultText = fmt.Sprintf(s["r_successful_konbini"], v.AmountText, v.BarName)
		}
		v.Facts = append(v.Facts, slipRow{Label: s["paid_on"], Value: when.Date, Zone: when.Zone})
	case payment.ApprovalExpired:
		// The deadline, or, when the sandbox's button let it pass
		// before its time, when it was pressed.
		ended := page.ExpiresOn
		if sp.now().Before(ended) {
			ended = page.UpdatedOn
		}
		v.ResultText = fmt.Sprintf(s["r_expired_"+method], deadlineText(ended, s))
	case payment.ApprovalCanceled:
		v.ResultText = s["r_canceled_"+method]
		v.Facts = append(v.Facts, slipRow{Label: s["canceled_on"], Value: when.Date, Zone: when.Zone})
	default:
		v.Result = "failed"
		v.ResultText = s["r_failed_text"]
	}
	v.Title = s["r_"+v.Result+"_title"]
}

// deadlineText is t in Japan time, saying so: "Thu 9 Jan 2031, 23:59
// Japan time (UTC+9)", "2031年1月9日（木）23:59（日本時間）".
func deadlineText(t time.Time, s map[string]string) string {
	return fmt.Sprintf(s["deadline_at"], fmtDate(t, s))
}

// japanTimeOf is t in Japan time as the page writes it apart from a
// sentence: the date, then the zone.
func japanTimeOf(t time.Time, s map[string]string) jstTime {
	before, after, _ := strings.Cut(s["deadline_at"], "%s")
	return jstTime{Date: before + fmtDate(t, s), Zone: after}
}

// fmtDate writes t in Japan time with the language's layout, its weekday
// in the language's words.
func fmtDate(t time.Time, s map[string]string) string {
	j := t.In(japanTime)
	out := j.Format(s["date"])
	if days := strings.Fields(s["weekdays"]); len(days) == 7 {
		out = strings.Replace(out, j.Weekday().String()[:3], days[j.Weekday()], 1)
	}
	return out
}

// timeLeft says how long until the deadline, in the largest whole unit.
func timeLeft(d time.Duration, s map[string]string) string {
	count := func(n int64, one, many string) string {
		if n == 1 {
			return s[one]
		}
		return fmt.Sprintf(s[many], n)
	}
	switch {
	case d >= 24*time.Hour:
		return count(int64(d/(24*time.Hour)), "left_day", "left_days")
	case d >= time.Hour:
		return count(int64(d/time.Hour), "left_hour", "left_hours")
	}
	return count(max(1, int64(d/time.Minute)), "left_minute", "left_minutes")
}

// renderSlip writes the instructions page.
func (sp *sandboxPages) renderSlip(w http.ResponseWriter, status int, v *slipView) {
	sp.renderPage(w, status, "sandbox_slip.html", v, v.sbView)
}

// slipActions are the simulation buttons of each kind of payment.
var slipActions = map[payment.ApprovalKind][]payment.ApprovalAction{
	payment.ApprovalKonbini:      {payment.ActionPay, payment.ActionExpire},
	payment.ApprovalBankTransfer: {payment.ActionDeposit, payment.ActionExpire},
}

// actSlip carries out a simulation button: POST {page}/{key}/act, a form
// with the page's CSRF token. It acts only on a test-mode payment that
// still awaits its shopper, then sends the browser back to the page.
func (sp *sandboxPages) actSlip(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSandboxBody)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		// The page's forms are urlencoded; a JSON body has no CSRF token.
		sp.fail(w, sp.locale(r, ""), http.StatusForbidden, "forbidden")
		return
	}
	if !sp.parseForm(w, r) {
		return
	}
	posted := r.PostForm.Get("locale")
	loc, locParam := sp.locale(r, posted), localeParam(r, posted)
	if !sp.sameOrigin(r) {
		sp.fail(w, loc, http.StatusForbidden, "forbidden")
		return
	}
	// The approval's kind is part of the token, so it is read first; an
	// unknown key is not there, whatever the token.
	page, err := sp.slipApproval(r)
	if err != nil {
		sp.failErr(w, r, loc, err)
		return
	}
	if !sp.validToken(page.Kind, page.Key, r.PostForm.Get("csrf")) {
		sp.fail(w, loc, http.StatusForbidden, "forbidden")
		return
	}
	if page.Mode != payment.ModeTest {
		sp.fail(w, loc, http.StatusForbidden, "live")
		return
	}
	action := payment.ApprovalAction(r.PostForm.Get("action"))
	if !slices.Contains(slipActions[page.Kind], action) {
		sp.fail(w, loc, http.StatusBadRequest, "invalid")
		return
	}
	if page.Status != payment.ApprovalAwaiting {
		v := sp.slipView(loc, locParam, page)
		v.Notice = fmt.Sprintf(v.S["err_ended"], v.StatusText)
		sp.renderSlip(w, http.StatusConflict, v)
		return
	}
	if action == payment.ActionDeposit {
		raw := r.PostForm.Get("amount")
		amount, problem := parseDeposit(raw, page.Currency)
		if problem == "" {
			_, err = sp.svc.DepositOnApproval(r.Context(), page.Key, amount)
		}
		if problem != "" {
			v := sp.slipView(loc, locParam, page)
			v.DepositValue = raw
			v.AmountError = v.S[problem]
			if problem == "err_amount_max" {
				v.AmountError = fmt.Sprintf(v.AmountError, site.Amount(maxDeposit(page.Currency), page.Currency))
			}
			sp.renderSlip(w, http.StatusBadRequest, v)
			return
		}
	} else {
		_, err = sp.svc.ActOnApproval(r.Context(), page.Key, action, "")
	}
	if err != nil {
		sp.failErr(w, r, loc, err)
		return
	}
	target := payment.SlipPagePath + page.Key
	if locParam != "" {
		target += "?locale=" + locParam
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// maxDeposit is the largest deposit the page takes: the currency's
// largest amount, as for any payment.
func maxDeposit(currency string) int64 {
	c, ok := payment.LookupCurrency(currency)
	if !ok {
		return 0
	}
	return c.MaxAmount
}

// depositDigits turns the digits a Japanese keyboard may type full-width
// into ASCII, and drops what people write around an amount of yen:
// spaces, thousands separators, a leading yen sign and a trailing 円.
var depositDigits = strings.NewReplacer(
	"０", "0", "１", "1", "２", "2", "３", "3", "４", "4", "５", "5", "６", "6", "７", "7", "８", "8", "９", "9",
	"－", "-", "\u2212", "-", "，", "", ",", "", " ", "", "\u3000", "", "¥", "", "￥", "", "円", "",
)

// parseDeposit reads the deposit form's amount in currency's whole units;
// problem is the catalogue key of what is wrong with it, or "".
func parseDeposit(raw, currency string) (amount int64, problem string) {
	s := depositDigits.Replace(strings.TrimSpace(raw))
	if s == "" {
		return 0, "err_amount_empty"
	}
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, "err_amount_nan"
	}
	digits = strings.TrimLeft(digits, "0")
	switch {
	case digits == "" || neg:
		return 0, "err_amount_min"
	case len(digits) > 18:
		return 0, "err_amount_max"
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, "err_amount_nan"
	}
	if n > maxDeposit(currency) {
		return 0, "err_amount_max"
	}
	return n, ""
}

// slipStatus answers the payment's state: GET {page}/{key}/status, which
// the page's script polls so that a page left open follows a payment made
// elsewhere (the API's test helpers, another tab): its status, and for a
// bank transfer what has been deposited.
func (sp *sandboxPages) slipStatus(w http.ResponseWriter, r *http.Request) {
	page, err := sp.slipApproval(r)
	if err != nil {
		sp.failJSON(w, r, err)
		return
	}
	body := map[string]any{"status": string(page.Status)}
	if page.Kind == payment.ApprovalBankTransfer {
		body["deposited"] = page.Slip.Deposited
	}
	writeSandboxJSON(w, http.StatusOK, body)
}
