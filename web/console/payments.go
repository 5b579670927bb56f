package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/site"
)

// The dashboard and the payment pages: a day at a glance, the charge list
// with the API's filters, a charge with its refunds, cancels and events,
// and the refund, capture and cancel actions, each confirmed before it is
// done. Every page reads and acts through the service as the merchant in
// the session's mode; what a charge allows is the service's to decide,
// the buttons are only what it would allow.

// Payments is what the dashboard and the payment pages ask: the day's
// figures, charges and what happened to them, and the merchant's refunds,
// captures and cancels.
type Payments interface {
	Dashboard(ctx context.Context, c *payment.Caller, day time.Time) (*payment.Dashboard, error)
	Charges(ctx context.Context, c *payment.Caller, storeID uuid.UUID, f payment.ChargeFilter, p payment.ListParams) (payment.Page[*payment.Charge], error)
	Charge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.Charge, error)
	Refunds(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Refund], error)
	Cancels(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Cancel], error)
	ChargeEvents(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, limit int) ([]*payment.Event, error)
	CreateRefund(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.NewRefund) (*payment.Refund, error)
	CaptureCharge(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ChargeCapture) error
	CreateCancel(ctx context.Context, c *payment.Caller, storeID, chargeID uuid.UUID, p payment.NewCancel) (*payment.Cancel, error)
}

// paymentRoutes serves the dashboard and the payment pages.
func (c *console) paymentRoutes(r *mux.Router) {
	c.handle(r, http.MethodGet, "/console/", c.signedIn(c.dashboard))
	c.handle(r, http.MethodGet, "/console/charges", c.signedIn(c.chargesPage))
	c.handle(r, http.MethodGet, "/console/stores/{store}/charges/{charge}", c.signedIn(c.chargePage))
	c.handle(r, http.MethodPost, "/console/stores/{store}/charges/{charge}/refund", c.signedIn(c.refund))
	c.handle(r, http.MethodPost, "/console/stores/{store}/charges/{charge}/capture", c.signedIn(c.capture))
	c.handle(r, http.MethodPost, "/console/stores/{store}/charges/{charge}/cancel", c.signedIn(c.cancel))
}

// chargesPageSize is how many charges a page of the list shows.
const chargesPageSize = 25

// statusCount is one status's card on the dashboard.
type statusCount struct {
	Status payment.ChargeStatus
	Count  int
}

// currencyAmount is an amount in one currency.
type currencyAmount struct {
	Currency string
	Amount   int64
}

// dashboardView is the dashboard's content.
type dashboardView struct {
	Day    string
	Store  uuid.UUID
	Counts []statusCount
	Volume []currencyAmount
	Total  int
	// Rows are the latest charges.
	Rows []chargeRow
}

// chargeRow is a charge in a table, with its store's name.
type chargeRow struct {
	*payment.Charge
	StoreName string
	Path      string
}

// storeName is the name of one of the merchant's stores.
func (cr *consoleRequest) storeName(id uuid.UUID) string {
	for _, st := range cr.stores {
		if st.ID == id {
			return st.Name
		}
	}
	return id.String()[:8]
}

// chargePath is a charge's page.
func chargePath(ch *payment.Charge) string {
	return consoleRoot + "stores/" + ch.StoreID.String() + "/charges/" + ch.ID.String()
}

func (cr *consoleRequest) rows(charges []*payment.Charge) []chargeRow {
	out := make([]chargeRow, len(charges))
	for i, ch := range charges {
		out[i] = chargeRow{Charge: ch, StoreName: cr.storeName(ch.StoreID), Path: chargePath(ch)}
	}
	return out
}

// queryStore is the ?store= of a page: none, or one of the merchant's
// stores (anything else is NOT_FOUND, as the caller for it is).
func (c *console) queryStore(cr *consoleRequest) (uuid.UUID, *payment.Caller, error) {
	storeID := uuid.Nil
	if s := strings.TrimSpace(cr.r.URL.Query().Get("store")); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return uuid.Nil, nil, payment.NotFound("store")
		}
		storeID = id
	}
	caller, err := c.caller(cr, storeID)
	return storeID, caller, err
}

func (c *console) dashboard(cr *consoleRequest) error {
	storeID, caller, err := c.queryStore(cr)
	if err != nil {
		return err
	}
	ctx := cr.r.Context()
	d, err := c.svc.Dashboard(ctx, caller, time.Now())
	if err != nil {
		return err
	}
	recent, err := c.svc.Charges(ctx, caller, storeID, payment.ChargeFilter{}, payment.ListParams{Limit: 10, Direction: payment.Desc})
	if err != nil {
		return err
	}
	v := dashboardView{Day: d.From.Format(time.DateOnly), Store: storeID, Total: d.Total, Rows: cr.rows(recent.Items)}
	for _, st := range payment.ChargeStatuses() {
		v.Counts = append(v.Counts, statusCount{Status: st, Count: d.Counts[st]})
	}
	for cur, amount := range d.Volume {
		v.Volume = append(v.Volume, currencyAmount{Currency: cur, Amount: amount})
	}
	slices.SortFunc(v.Volume, func(a, b currencyAmount) int { return strings.Compare(a.Currency, b.Currency) })
	c.render(cr, http.StatusOK, "console_dashboard", "dashboard", v)
	return nil
}

// chargesView is the charge list's content: the filters as typed, a
// page of charges, and the links to the pages around it.
type chargesView struct {
	Filter   url.Values
	Statuses []payment.ChargeStatus
	Rows     []chargeRow
	Next     string
	Previous string
	First    string
}

// chargeListFilter reads the charge list's filters from the query, as
// the API's GET /charges names them; dates are UTC days, amounts are in
// the currency's major unit when a currency is chosen (minor units
// otherwise). Each field it cannot read is named in the validation error.
func chargeListFilter(q url.Values) (uuid.UUID, payment.ChargeFilter, payment.ListParams, error) {
	var v payment.Validation
	var f payment.ChargeFilter
	p := payment.ListParams{Limit: chargesPageSize, Direction: payment.Desc}
	get := func(name string) string { return strings.TrimSpace(q.Get(name)) }
	storeID := uuid.Nil
	if s := get("store"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			v.Add("store", payment.ReasonInvalidUUID)
		}
		storeID = id
	}
	if s := get("status"); s != "" {
		if !slices.Contains(payment.ChargeStatuses(), payment.ChargeStatus(s)) {
			v.Add("status", payment.ReasonInvalidFormat)
		}
		f.Status = payment.ChargeStatus(s)
	}
	var cur *payment.Currency
	if s := get("currency"); s != "" {
		c, ok := payment.LookupCurrency(s)
		if !ok {
			v.Add("currency", "INVALID_CURRENCY")
		} else {
			cur, f.Currency = &c, c.Code
		}
	}
	day := func(name string, end bool) *time.Time {
		s := get(name)
		if s == "" {
			return nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			v.Add(name, payment.ReasonInvalidFormat)
			return nil
		}
		if end {
			// The API's to is inclusive: the day's last microsecond.
			t = t.Add(24*time.Hour - time.Microsecond)
		}
		return &t
	}
	f.From, f.To = day("from", false), day("to", true)
	amount := func(name string) *int64 {
		s := get(name)
		if s == "" {
			return nil
		}
		minor := payment.Currency{}
		if cur != nil {
			minor = *cur
		}
		n, ok := parseAmount(s, minor)
		if !ok {
			v.Add(name, payment.ReasonInvalidFormat)
			return nil
		}
		return &n
	}
	f.AmountFrom, f.AmountTo = amount("amount_from"), amount("amount_to")
	f.Email = get("email")
	if s := get("last_four"); s != "" {
		if len(s) != 4 || strings.Trim(s, "0123456789") != "" {
			v.Add("last_four", payment.ReasonInvalidFormat)
		}
		f.LastFour = s
	}
	if s := get("metadata"); s != "" {
		key, value, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(key) == "" {
			v.Add("metadata", payment.ReasonInvalidFormat)
		}
		f.MetadataKey, f.MetadataValue = strings.TrimSpace(key), strings.TrimSpace(value)
	}
	if s := get("cursor"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			v.Add("cursor", payment.ReasonInvalidUUID)
		}
		p.Cursor = id
	}
	switch get("cursor_direction") {
	case "", "desc":
	case "asc":
		p.Direction = payment.Asc
	default:
		v.Add("cursor_direction", payment.ReasonInvalidFormat)
	}
	return storeID, f, p, v.Err()
}

// parseAmount reads an amount as a person types it in cur's major unit
// ("1,000", "12.50") and returns it in minor units.
func parseAmount(s string, cur payment.Currency) (int64, bool) {
	s = strings.NewReplacer(",", "", " ", "", "_", "").Replace(strings.TrimSpace(s))
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && frac == "" || dot && frac == "" || len(frac) > cur.MinorUnits ||
		strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" || len(whole)+len(frac) > 15 {
		return 0, false
	}
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", cur.MinorUnits-len(frac)), 10, 64)
	return n, err == nil
}

// majorAmount writes an amount in minor units in cur's major unit, as
// parseAmount reads it back (no grouping, no symbol).
func majorAmount(amount int64, currency string) string {
	cur, ok := payment.LookupCurrency(currency)
	if !ok {
		return strconv.FormatInt(amount, 10)
	}
	s := strconv.FormatInt(amount, 10)
	if cur.MinorUnits == 0 {
		return s
	}
	for len(s) <= cur.MinorUnits {
		s = "0" + s
	}
	return s[:len(s)-cur.MinorUnits] + "." + s[len(s)-cur.MinorUnits:]
}

func (c *console) chargesPage(cr *consoleRequest) error {
	q := cr.r.URL.Query()
	v := chargesView{Filter: q, Statuses: payment.ChargeStatuses(), First: consoleRoot + "charges?" + pageQuery(q, uuid.Nil, "")}
	storeID, f, p, err := chargeListFilter(q)
	if err != nil {
		return c.chargesError(cr, v, err)
	}
	caller, err := c.caller(cr, storeID)
	if err != nil {
		return err
	}
	page, err := c.svc.Charges(cr.r.Context(), caller, storeID, f, p)
	if payment.ErrorCode(err) == payment.CodeValidation {
		return c.chargesError(cr, v, err)
	}
	if err != nil {
		return err
	}
	items := page.Items
	if p.Direction == payment.Asc {
		// Going back: the page came oldest first; it is shown newest first.
		items = slices.Clone(items)
		slices.Reverse(items)
	}
	v.Rows = cr.rows(items)
	if len(items) > 0 {
		newest, oldest := items[0].ID, items[len(items)-1].ID
		// As the API pages: the cursor is the last item seen, exclusive,
		// and has_more says whether the list goes on that way.
		if p.Direction == payment.Desc && page.HasMore || p.Direction == payment.Asc {
			v.Next = consoleRoot + "charges?" + pageQuery(q, oldest, "")
		}
		if p.Direction == payment.Asc && page.HasMore || p.Direction == payment.Desc && p.Cursor != uuid.Nil {
			v.Previous = consoleRoot + "charges?" + pageQuery(q, newest, "asc")
		}
	}
	if p.Cursor == uuid.Nil {
		v.First = ""
	}
	c.render(cr, http.StatusOK, "console_charges", "charges", v)
	return nil
}

// chargesError shows the list's filters with what is wrong with them.
func (c *console) chargesError(cr *consoleRequest, v chargesView, err error) error {
	var pe *payment.Error
	if !errors.As(err, &pe) {
		return err
	}
	view := c.view(cr, "title_charges", "charges", v)
	view.Errors = c.errorTexts(cr.loc, err)
	c.renderView(cr, http.StatusBadRequest, "console_charges", view)
	return nil
}

// pageQuery is the list's query with another cursor (none: the first
// page).
func pageQuery(q url.Values, cursor uuid.UUID, direction string) string {
	out := url.Values{}
	for k, vs := range q {
		if k == "cursor" || k == "cursor_direction" || k == "lang" || len(vs) == 0 || vs[0] == "" {
			continue
		}
		out.Set(k, vs[0])
	}
	if cursor != uuid.Nil {
		out.Set("cursor", cursor.String())
	}
	if direction != "" {
		out.Set("cursor_direction", direction)
	}
	return out.Encode()
}

// chargeView is a charge's page.
type chargeView struct {
	Charge    *payment.Charge
	StoreName string
	Path      string
	Refunds   []*payment.Refund
	Cancels   []*payment.Cancel
	Events    []*payment.Event
	// Charged is the charged amount in words ("" before the acquirer
	// answered).
	Charged string
	// Refundable is what refunds that did not fail leave of the charged
	// amount; CanRefund, CanCapture and CanCancel are the actions the
	// charge's state would allow (the service decides).
	Refundable int64
	CanRefund  bool
	CanCapture bool
	CanCancel  bool
	// RefundAmount, Reason, Message and CaptureAmount are the forms'
	// values, kept when an action fails.
	RefundAmount  string
	Reason        string
	Message       string
	CaptureAmount string
	Reasons       []string
	// Slip is a konbini payment's or bank transfer's (nil for other
	// methods).
	Slip *slipView
}

// refundReasons are the reasons a merchant may give a refund (the API's
// others are Kessai's own).
var refundReasons = []string{"duplicate", "fraud", "customer_request"}

// chargeEventsShown is how many events the charge page lists.
const chargeEventsShown = 50

func (c *console) chargePage(cr *consoleRequest) error {
	return c.showCharge(cr, http.StatusOK, nil, nil)
}

// showCharge reads and shows a charge's page; keep has the forms' values
// to show again, errs what went wrong with the last action.
func (c *console) showCharge(cr *consoleRequest, status int, keep url.Values, errs []string) error {
	storeID, caller, err := c.storeCaller(cr)
	if err != nil {
		return err
	}
	chargeID, err := pathID(cr.r, "charge")
	if err != nil {
		return err
	}
	ctx := cr.r.Context()
	ch, err := c.svc.Charge(ctx, caller, storeID, chargeID, 0)
	if err != nil {
		return err
	}
	all := payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc}
	refunds, err := c.svc.Refunds(ctx, caller, storeID, chargeID, all)
	if err != nil {
		return err
	}
	cancels, err := c.svc.Cancels(ctx, caller, storeID, chargeID, all)
	if err != nil {
		return err
	}
	events, err := c.svc.ChargeEvents(ctx, caller, storeID, chargeID, chargeEventsShown)
	if err != nil {
		return err
	}
	v := chargeView{Charge: ch, StoreName: cr.storeName(ch.StoreID), Path: chargePath(ch), Refunds: refunds.Items,
		Cancels: cancels.Items, Events: events, Reasons: refundReasons}
	if ch.ChargedAmount != nil {
		v.Charged = site.Amount(*ch.ChargedAmount, ch.Currency)
		v.Refundable = *ch.ChargedAmount
		for _, r := range refunds.Items {
			if r.Status == payment.OperationPending || r.Status == payment.OperationSuccessful {
				v.Refundable -= r.Amount
			}
		}
	}
	pendingCancel := slices.ContainsFunc(cancels.Items, func(cn *payment.Cancel) bool { return cn.Status == payment.OperationPending })
	v.RefundAmount = majorAmount(v.Refundable, ch.Currency)
	v.CanRefund = ch.Status == payment.ChargeSuccessful && v.Refundable > 0
	v.CanCapture = ch.Status == payment.ChargeAuthorized && ch.CaptureState == payment.CaptureNone && !pendingCancel
	v.CanCancel = ch.Status == payment.ChargeAuthorized && ch.CaptureState == payment.CaptureNone && !pendingCancel ||
		ch.Status == payment.ChargeAwaiting
	if paidAway(ch) {
		if v.Slip, err = c.slipFor(cr, caller, ch); err != nil {
			return err
		}
	}
	if keep != nil {
		switch path := cr.r.URL.Path; {
		case strings.HasSuffix(path, "/capture"):
			v.CaptureAmount = keep.Get("amount")
		case strings.HasSuffix(path, "/refund"):
			v.RefundAmount, v.Reason, v.Message = keep.Get("amount"), keep.Get("reason"), keep.Get("message")
		case v.Slip != nil:
			keepSlipForm(v.Slip, path, keep)
		}
	}
	view := c.view(cr, "title_charge", "charges", v)
	view.Errors = errs
	c.renderView(cr, status, "console_charge", view)
	return nil
}

// chargeConfirmView is an action's confirmation: what is about to be done to
// which charge, with the form's values to send again.
type chargeConfirmView struct {
	// Action names the confirmation's texts (confirm_<Action> and
	// confirm_<Action>_lead, or Lead's key); Route is the action's path
	// under the charge's, when it is not Action.
	Action string
	Route  string
	Lead   string
	Charge *payment.Charge
	Path   string
	// Deadline and NewDeadline are an extension's, by Days; it is the
	// deadline's ExtensionNumber-th of MaxExtensions.
	Deadline        time.Time
	NewDeadline     time.Time
	Days            int
	ExtensionNumber int
	MaxExtensions   int
	// Amount is the amount as typed, AmountText in words; Fields are the
	// hidden fields that carry the form's values.
	Amount     string
	AmountText string
	Reason     string
	Message    string
	Form       confirmForm
}

// actionRequest is what every action reads first: the store caller, the
// charge's id and, before the confirmation, the charge itself (a charge
// the caller may not see is NOT_FOUND at every step).
type actionRequest struct {
	storeID, chargeID uuid.UUID
	caller            *payment.Caller
}

func (c *console) actionRequest(cr *consoleRequest) (actionRequest, error) {
	storeID, caller, err := c.storeCaller(cr)
	if err != nil {
		return actionRequest{}, err
	}
	chargeID, err := pathID(cr.r, "charge")
	if err != nil {
		return actionRequest{}, err
	}
	return actionRequest{storeID: storeID, chargeID: chargeID, caller: caller}, nil
}

// confirmCharge shows the confirmation of an action, unless the form says it
// is confirmed: it reports whether the action is to be done now.
func (c *console) confirmCharge(cr *consoleRequest, a actionRequest, cv chargeConfirmView) (bool, error) {
	if confirmed(cr) {
		return true, nil
	}
	ch, err := c.svc.Charge(cr.r.Context(), a.caller, a.storeID, a.chargeID, 0)
	if err != nil {
		return false, err
	}
	cv.Charge, cv.Path = ch, chargePath(ch)
	route := cv.Route
	if route == "" {
		route = cv.Action
	}
	if cv.Lead == "" {
		cv.Lead = "confirm_" + cv.Action + "_lead"
	}
	cv.Form = confirmForm{Action: cv.Path + "/" + route, Back: cv.Path, Button: "confirm", Danger: cv.Action == "refund" || cv.Action == "cancel",
		Fields: carried(cr.r.PostForm, "amount", "currency", "reason", "message", "days", "action")}
	c.render(cr, http.StatusOK, "console_charge_confirm", "charges", cv)
	return false, nil
}

// actionDone ends an action: to the charge's page with a notice, or back
// to it with what the service said was wrong.
func (c *console) actionDone(cr *consoleRequest, a actionRequest, err error, notice string) error {
	path := consoleRoot + "stores/" + a.storeID.String() + "/charges/" + a.chargeID.String()
	var pe *payment.Error
	switch {
	case err == nil:
		return c.notice(cr, path, notice)
	case errors.As(err, &pe) && pe.Code != payment.CodeNotFound && pe.Code != payment.CodeServiceUnavailable:
		return c.showCharge(cr, http.StatusBadRequest, cr.r.PostForm, c.errorTexts(cr.loc, err))
	}
	return err
}

// formAmount reads the form's amount in the form's currency; a missing
// amount is nil, an unreadable one an error naming the field.
func formAmount(form url.Values) (*int64, string, error) {
	s := strings.TrimSpace(form.Get("amount"))
	currency := strings.ToUpper(strings.TrimSpace(form.Get("currency")))
	if s == "" {
		return nil, currency, nil
	}
	cur, ok := payment.LookupCurrency(currency)
	if !ok {
		return nil, currency, payment.Invalid("currency", "INVALID_CURRENCY")
	}
	n, ok := parseAmount(s, cur)
	if !ok {
		return nil, currency, payment.Invalid("amount", payment.ReasonInvalidFormat)
	}
	return &n, cur.Code, nil
}

func (c *console) refund(cr *consoleRequest) error {
	a, err := c.actionRequest(cr)
	if err != nil {
		return err
	}
	form := cr.r.PostForm
	amount, currency, err := formAmount(form)
	if err == nil && amount == nil {
		err = payment.Invalid("amount", payment.ReasonRequired)
	}
	if err != nil {
		return c.actionDone(cr, a, err, "")
	}
	cv := chargeConfirmView{Action: "refund", Amount: form.Get("amount"), AmountText: site.Amount(*amount, currency),
		Reason: form.Get("reason"), Message: form.Get("message")}
	if ok, err := c.confirmCharge(cr, a, cv); !ok || err != nil {
		return err
	}
	_, err = c.svc.CreateRefund(cr.r.Context(), a.caller, a.storeID, a.chargeID, payment.NewRefund{
		Amount: *amount, Currency: currency, Reason: form.Get("reason"), Message: form.Get("message"),
	})
	return c.actionDone(cr, a, err, "n_refund_created")
}

func (c *console) capture(cr *consoleRequest) error {
	a, err := c.actionRequest(cr)
	if err != nil {
		return err
	}
	form := cr.r.PostForm
	amount, currency, err := formAmount(form)
	if err != nil {
		return c.actionDone(cr, a, err, "")
	}
	cv := chargeConfirmView{Action: "capture", Amount: form.Get("amount")}
	if amount != nil {
		cv.AmountText = site.Amount(*amount, currency)
	}
	if ok, err := c.confirmCharge(cr, a, cv); !ok || err != nil {
		return err
	}
	err = c.svc.CaptureCharge(cr.r.Context(), a.caller, a.storeID, a.chargeID, payment.ChargeCapture{Amount: amount, Currency: currency})
	return c.actionDone(cr, a, err, "n_capture_requested")
}

func (c *console) cancel(cr *consoleRequest) error {
	a, err := c.actionRequest(cr)
	if err != nil {
		return err
	}
	cv := chargeConfirmView{Action: "cancel"}
	if !confirmed(cr) {
		// A konbini payment or bank transfer is withdrawn before it is
		// paid: the confirmation says so rather than speak of an
		// authorization.
		ch, err := c.svc.Charge(cr.r.Context(), a.caller, a.storeID, a.chargeID, 0)
		if err != nil {
			return err
		}
		if paidAway(ch) {
			cv.Lead = "confirm_cancel_slip_lead"
		}
	}
	if ok, err := c.confirmCharge(cr, a, cv); !ok || err != nil {
		return err
	}
	_, err = c.svc.CreateCancel(cr.r.Context(), a.caller, a.storeID, a.chargeID, payment.NewCancel{})
	return c.actionDone(cr, a, err, "n_cancel_created")
}
