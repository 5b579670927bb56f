package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
)

// The console's pages for a store's keys and settings: its app tokens,
// webhooks, settings and test charges. Each handler reads its form, calls
// one method of the service with the store's console caller and shows
// the outcome; tenancy, modes, limits and every check are the service's.
// Secrets (an app token's, a webhook's signing secret) are shown once, on
// the page that answers their creation, and nowhere else: never in a
// redirect, a cookie or the log.

// StoreKeys is what the pages of a store's keys and settings ask: the
// store and its limits, its app tokens and webhooks, its settings, and a
// test charge made as a merchant's server would make it.
type StoreKeys interface {
	Store(ctx context.Context, c *payment.Caller, id uuid.UUID) (*payment.Store, error)
	UpdateStore(ctx context.Context, c *payment.Caller, storeID uuid.UUID, u payment.StoreUpdate) (*payment.Store, error)
	Limits() payment.ResourceLimits
	AppTokens(ctx context.Context, c *payment.Caller, storeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.AppToken], error)
	CreateAppToken(ctx context.Context, c *payment.Caller, storeID uuid.UUID, p payment.NewAppToken) (*payment.IssuedAppToken, error)
	RevokeAppToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) error
	Webhooks(ctx context.Context, c *payment.Caller, storeID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Webhook], error)
	Webhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.Webhook, error)
	CreateWebhook(ctx context.Context, c *payment.Caller, storeID uuid.UUID, in payment.WebhookInput) (*payment.CreatedWebhook, error)
	UpdateWebhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, in payment.WebhookInput) (*payment.Webhook, error)
	DeleteWebhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) error
	WebhookDeliveries(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ListParams) (payment.Page[payment.DeliveryLogEntry], error)
	PingWebhook(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (payment.WebhookPingResult, error)
	RedeliverEvent(ctx context.Context, c *payment.Caller, storeID, webhookID, eventID uuid.UUID) (payment.DeliveryLogEntry, error)
	Clock() payment.Clock
	CreateToken(ctx context.Context, c *payment.Caller, p payment.NewToken) (*payment.TransactionToken, error)
	CreateCharge(ctx context.Context, c *payment.Caller, p payment.NewCharge) (*payment.Charge, error)
}

// keyRoutes serves a store's app tokens, webhooks, settings and test
// charges.
func (c *console) keyRoutes(r *mux.Router) {
	c.handle(r, http.MethodGet, "/console/stores", c.signedIn(c.storesPage))
	c.handle(r, http.MethodGet, "/console/stores/{store}/app_tokens", c.signedIn(c.appTokensPage))
	c.handle(r, http.MethodPost, "/console/stores/{store}/app_tokens", c.signedIn(c.createAppToken))
	c.handle(r, http.MethodPost, "/console/stores/{store}/app_tokens/{apptoken}/revoke", c.signedIn(c.revokeAppToken))
	c.handle(r, http.MethodGet, "/console/stores/{store}/webhooks", c.signedIn(c.webhooksPage))
	c.handle(r, http.MethodPost, "/console/stores/{store}/webhooks", c.signedIn(c.createWebhook))
	c.handle(r, http.MethodGet, "/console/stores/{store}/webhooks/{webhook}", c.signedIn(c.webhookPage))
	c.handle(r, http.MethodPost, "/console/stores/{store}/webhooks/{webhook}/active", c.signedIn(c.setWebhookActive))
	c.handle(r, http.MethodPost, "/console/stores/{store}/webhooks/{webhook}/delete", c.signedIn(c.deleteWebhook))
	c.handle(r, http.MethodPost, "/console/stores/{store}/webhooks/{webhook}/test", c.signedIn(c.testWebhook))
	c.handle(r, http.MethodPost, "/console/stores/{store}/webhooks/{webhook}/events/{event}/redeliver", c.signedIn(c.redeliverEvent))
	c.handle(r, http.MethodGet, "/console/stores/{store}/settings", c.signedIn(c.settingsPage))
	c.handle(r, http.MethodPost, "/console/stores/{store}/settings", c.signedIn(c.saveSettings))
	c.handle(r, http.MethodPost, "/console/stores/{store}/test_charge", c.signedIn(c.testCharge))
}

// storePath is a page of a store in the console.
func storePath(storeID uuid.UUID, rest string) string {
	return consoleRoot + "stores/" + storeID.String() + rest
}

// keysStore reads {store} and returns the store, as the session's caller
// for it sees it (another merchant's: NOT_FOUND).
func (c *console) keysStore(cr *consoleRequest) (*payment.Store, *payment.Caller, error) {
	storeID, caller, err := c.storeCaller(cr)
	if err != nil {
		return nil, nil, err
	}
	st, err := c.svc.Store(cr.r.Context(), caller, storeID)
	return st, caller, err
}

// formProblem reports whether a service error belongs above the form
// that caused it (what was entered, a limit, a refusal of the rules), and
// with which status; NOT_FOUND and errors that are not the service's go
// to the error page.
func formProblem(err error) (int, bool) {
	var pe *payment.Error
	if !errors.As(err, &pe) {
		return 0, false
	}
	switch pe.Code {
	case payment.CodeNotFound, payment.CodeServiceUnavailable, payment.CodeInternal:
		return 0, false
	case payment.CodeTooManyRequests:
		return http.StatusTooManyRequests, true
	case payment.CodeInvalidPermissions:
		return http.StatusForbidden, true
	}
	return http.StatusBadRequest, true
}

// keyErrors says what a service error means on these pages: a resource
// limit names the limit and its number, anything else is errorTexts'.
func (c *console) keyErrors(cr *consoleRequest, err error) []string {
	var pe *payment.Error
	if errors.As(err, &pe) && pe.Code == payment.CodeResourceLimit && len(pe.Fields) > 0 {
		limits := c.svc.Limits()
		n := map[string]int{"app_token": limits.AppTokens, "webhook": limits.Webhooks, "test_charge": limits.TestChargesPerDay}
		if text := message.Console.Get("e_limit_"+pe.Fields[0].Field, cr.loc); text != "" {
			return []string{fmt.Sprintf(text, n[pe.Fields[0].Field])}
		}
	}
	return c.errorTexts(cr.loc, err)
}

// showForm renders a form page again with a service error above it, or
// returns the error for the error page.
func (c *console) showForm(cr *consoleRequest, err error, name string, page any) error {
	status, ok := formProblem(err)
	if !ok {
		return err
	}
	v := c.view(cr, "title_"+strings.TrimPrefix(name, "console_"), "stores", page)
	v.Errors = c.keyErrors(cr, err)
	c.renderView(cr, status, name, v)
	return nil
}

// confirmView is a confirmation step: what is about to happen, and a form
// that posts the same request again with confirm=yes.
type confirmView struct {
	Store    *payment.Store
	Question string
	Detail   string
	Form     confirmForm
}

func (c *console) confirm(cr *consoleRequest, v confirmView) error {
	v.Question = message.Console.Get(v.Question, cr.loc)
	v.Form.Danger = true
	c.render(cr, http.StatusOK, "console_confirm", "stores", v)
	return nil
}

func (c *console) storesPage(cr *consoleRequest) error {
	c.render(cr, http.StatusOK, "console_stores", "stores", nil)
	return nil
}

// appTokensView is a store's app tokens page.
type appTokensView struct {
	Store   *payment.Store
	Tokens  []*payment.AppToken
	HasMore bool
	Limit   int
	Domains string
}

func (c *console) appTokensView(cr *consoleRequest, st *payment.Store, caller *payment.Caller, domains string) (appTokensView, error) {
	page, err := c.svc.AppTokens(cr.r.Context(), caller, st.ID, payment.ListParams{Limit: payment.MaxLimit})
	if err != nil {
		return appTokensView{}, err
	}
	return appTokensView{Store: st, Tokens: page.Items, HasMore: page.HasMore, Limit: c.svc.Limits().AppTokens, Domains: domains}, nil
}

func (c *console) appTokensPage(cr *consoleRequest) error {
	st, caller, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	v, err := c.appTokensView(cr, st, caller, "")
	if err != nil {
		return err
	}
	c.render(cr, http.StatusOK, "console_app_tokens", "stores", v)
	return nil
}

// lines are a textarea's non-blank lines, trimmed.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// appTokenCreatedView shows a new token and its secret, once.
type appTokenCreatedView struct {
	Store  *payment.Store
	Token  *payment.AppToken
	Secret string
}

// createAppToken makes a token of the session's mode for the store.
func (c *console) createAppToken(cr *consoleRequest) error {
	st, caller, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	domains := cr.r.PostForm.Get("domains")
	issued, err := c.svc.CreateAppToken(cr.r.Context(), caller, st.ID, payment.NewAppToken{Mode: cr.sess.Mode, Domains: lines(domains)})
	if err != nil {
		v, verr := c.appTokensView(cr, st, caller, domains)
		if verr != nil {
			return verr
		}
		return c.showForm(cr, err, "console_app_tokens", v)
	}
	c.render(cr, http.StatusOK, "console_app_token_created", "stores", appTokenCreatedView{Store: st, Token: issued.AppToken, Secret: issued.Secret})
	return nil
}

// revokeAppToken asks first, then revokes.
func (c *console) revokeAppToken(cr *consoleRequest) error {
	storeID, caller, err := c.storeCaller(cr)
	if err != nil {
		return err
	}
	id, err := pathID(cr.r, "apptoken")
	if err != nil {
		return err
	}
	if !confirmed(cr) {
		st, err := c.svc.Store(cr.r.Context(), caller, storeID)
		if err != nil {
			return err
		}
		return c.confirm(cr, confirmView{Store: st, Question: "revoke_question", Detail: id.String(), Form: confirmForm{
			Action: storePath(storeID, "/app_tokens/"+id.String()+"/revoke"), Button: "revoke", Back: storePath(storeID, "/app_tokens")}})
	}
	if err := c.svc.RevokeAppToken(cr.r.Context(), caller, storeID, id); err != nil {
		return err
	}
	return c.notice(cr, storePath(storeID, "/app_tokens"), "n_app_token_revoked")
}

// webhookForm is what the webhook form holds.
type webhookForm struct {
	URL       string
	AuthToken string
	Triggers  []string
	Active    bool
}

// Has reports whether the form names a trigger.
func (f webhookForm) Has(trigger string) bool { return slices.Contains(f.Triggers, trigger) }

// webhooksView is a store's webhooks page.
type webhooksView struct {
	Store    *payment.Store
	Webhooks []*payment.Webhook
	HasMore  bool
	Events   []string
	Limit    int
	Form     webhookForm
}

func (c *console) webhooksView(cr *consoleRequest, st *payment.Store, caller *payment.Caller, f webhookForm) (webhooksView, error) {
	page, err := c.svc.Webhooks(cr.r.Context(), caller, st.ID, payment.ListParams{Limit: payment.MaxLimit})
	if err != nil {
		return webhooksView{}, err
	}
	return webhooksView{Store: st, Webhooks: page.Items, HasMore: page.HasMore, Events: payment.WebhookEvents(),
		Limit: c.svc.Limits().Webhooks, Form: f}, nil
}

func (c *console) webhooksPage(cr *consoleRequest) error {
	st, caller, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	v, err := c.webhooksView(cr, st, caller, webhookForm{Active: true})
	if err != nil {
		return err
	}
	c.render(cr, http.StatusOK, "console_webhooks", "stores", v)
	return nil
}

// webhookCreatedView shows a new webhook and its signing secret, once.
type webhookCreatedView struct {
	Store   *payment.Store
	Webhook *payment.Webhook
	Secret  string
}

func (c *console) createWebhook(cr *consoleRequest) error {
	st, caller, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	form := cr.r.PostForm
	f := webhookForm{URL: strings.TrimSpace(form.Get("url")), AuthToken: form.Get("auth_token"), Triggers: form["triggers"],
		Active: form.Get("active") != ""}
	in := payment.WebhookInput{Triggers: f.Triggers, URL: &f.URL, Active: &f.Active}
	if f.AuthToken != "" {
		in.AuthToken = &f.AuthToken
	}
	if in.Triggers == nil {
		in.Triggers = []string{}
	}
	created, err := c.svc.CreateWebhook(cr.r.Context(), caller, st.ID, in)
	if err != nil {
		v, verr := c.webhooksView(cr, st, caller, f)
		if verr != nil {
			return verr
		}
		return c.showForm(cr, err, "console_webhooks", v)
	}
	c.render(cr, http.StatusOK, "console_webhook_created", "stores", webhookCreatedView{Store: st, Webhook: created.Webhook, Secret: created.Secret})
	return nil
}

// webhookView is one webhook and a page of its delivery log.
type webhookView struct {
	Store      *payment.Store
	Webhook    *payment.Webhook
	Deliveries []payment.DeliveryLogEntry
	// Next is the cursor of the log's next page, if HasNext.
	Next    uuid.UUID
	HasNext bool
	// Test is the outcome of a test event just sent.
	Test *payment.WebhookPingResult
}

// deliveriesPerPage is how many lines of the delivery log a page shows.
const deliveriesPerPage = 20

// webhookPath reads {store} and {webhook}, with the store's caller.
func (c *console) webhookPath(cr *consoleRequest) (uuid.UUID, uuid.UUID, *payment.Caller, error) {
	storeID, caller, err := c.storeCaller(cr)
	if err != nil {
		return uuid.Nil, uuid.Nil, nil, err
	}
	id, err := pathID(cr.r, "webhook")
	return storeID, id, caller, err
}

func (c *console) webhookView(cr *consoleRequest, storeID, id uuid.UUID, caller *payment.Caller, cursor uuid.UUID) (webhookView, error) {
	ctx := cr.r.Context()
	st, err := c.svc.Store(ctx, caller, storeID)
	if err != nil {
		return webhookView{}, err
	}
	w, err := c.svc.Webhook(ctx, caller, storeID, id)
	if err != nil {
		return webhookView{}, err
	}
	log, err := c.svc.WebhookDeliveries(ctx, caller, storeID, id, payment.ListParams{Limit: deliveriesPerPage, Cursor: cursor})
	if err != nil {
		return webhookView{}, err
	}
	v := webhookView{Store: st, Webhook: w, Deliveries: log.Items}
	if log.HasMore && len(log.Items) > 0 {
		v.Next, v.HasNext = log.Items[len(log.Items)-1].Event.ID, true
	}
	return v, nil
}

func (c *console) webhookPage(cr *consoleRequest) error {
	storeID, id, caller, err := c.webhookPath(cr)
	if err != nil {
		return err
	}
	cursor, _ := uuid.Parse(cr.r.URL.Query().Get("cursor"))
	v, err := c.webhookView(cr, storeID, id, caller, cursor)
	if err != nil {
		return err
	}
	c.render(cr, http.StatusOK, "console_webhook", "stores", v)
	return nil
}

// setWebhookActive activates or deactivates a webhook (active=yes|no);
// activating counts against the limit of active webhooks again.
func (c *console) setWebhookActive(cr *consoleRequest) error {
	storeID, id, caller, err := c.webhookPath(cr)
	if err != nil {
		return err
	}
	active := cr.r.PostForm.Get("active") == "yes"
	_, err = c.svc.UpdateWebhook(cr.r.Context(), caller, storeID, id, payment.WebhookInput{Active: &active})
	if err != nil {
		v, verr := c.webhookView(cr, storeID, id, caller, uuid.Nil)
		if verr != nil {
			return verr
		}
		return c.showForm(cr, err, "console_webhook", v)
	}
	key := "n_webhook_deactivated"
	if active {
		key = "n_webhook_activated"
	}
	return c.notice(cr, storePath(storeID, "/webhooks/"+id.String()), key)
}

// deleteWebhook asks first, then deletes.
func (c *console) deleteWebhook(cr *consoleRequest) error {
	storeID, id, caller, err := c.webhookPath(cr)
	if err != nil {
		return err
	}
	if !confirmed(cr) {
		ctx := cr.r.Context()
		w, err := c.svc.Webhook(ctx, caller, storeID, id)
		if err != nil {
			return err
		}
		st, err := c.svc.Store(ctx, caller, storeID)
		if err != nil {
			return err
		}
		return c.confirm(cr, confirmView{Store: st, Question: "delete_webhook_question", Detail: w.URL, Form: confirmForm{
			Action: storePath(storeID, "/webhooks/"+id.String()+"/delete"), Button: "delete", Back: storePath(storeID, "/webhooks/"+id.String())}})
	}
	if err := c.svc.DeleteWebhook(cr.r.Context(), caller, storeID, id); err != nil {
		return err
	}
	return c.notice(cr, storePath(storeID, "/webhooks"), "n_webhook_deleted")
}

// testWebhook sends a test event and shows the webhook with the outcome.
func (c *console) testWebhook(cr *consoleRequest) error {
	storeID, id, caller, err := c.webhookPath(cr)
	if err != nil {
		return err
	}
	res, err := c.svc.PingWebhook(cr.r.Context(), caller, storeID, id)
	if err != nil {
		return err
	}
	v, err := c.webhookView(cr, storeID, id, caller, uuid.Nil)
	if err != nil {
		return err
	}
	v.Test = &res
	c.render(cr, http.StatusOK, "console_webhook", "stores", v)
	return nil
}

// redeliverEvent sends an event of the log to the webhook again.
func (c *console) redeliverEvent(cr *consoleRequest) error {
	storeID, id, caller, err := c.webhookPath(cr)
	if err != nil {
		return err
	}
	eventID, err := pathID(cr.r, "event")
	if err != nil {
		return err
	}
	if _, err := c.svc.RedeliverEvent(cr.r.Context(), caller, storeID, id, eventID); err != nil {
		return err
	}
	return c.notice(cr, storePath(storeID, "/webhooks/"+id.String()), "n_event_redelivered")
}

// themeField is one colour of a store's theme: its form name (the
// service's field name) and value.
type themeField struct{ Name, Value string }

// Input is the colour as <input type="color"> takes it: #rrggbb in lower
// case (a stored #rgb is spelt out; anything else shows as black).
func (f themeField) Input() string {
	v := strings.ToLower(f.Value)
	if len(v) == 4 && v[0] == '#' {
		v = string([]byte{'#', v[1], v[1], v[2], v[2], v[3], v[3]})
	}
	if len(v) != 7 || v[0] != '#' || strings.Trim(v[1:], "0123456789abcdef") != "" {
		return "#000000"
	}
	return v
}

// settingsForm is what the settings form holds.
type settingsForm struct {
	Name            string
	PCICompliant    bool
	CardEnabled     bool
	ThreeDSRequired bool
	Forbidden       []string
	Recurring       payment.RecurringPrivilege
	Theme           []themeField
	// KonbiniEnabled, BankTransferEnabled and MatchAmount are the
	// payments made away from any page, and when a bank transfer's
	// deposits pay.
	KonbiniEnabled      bool
	BankTransferEnabled bool
	MatchAmount         payment.MatchAmount
}

// Forbids reports whether the form forbids a brand.
func (f settingsForm) Forbids(brand string) bool { return slices.Contains(f.Forbidden, brand) }

// themeFields are a theme's colours in the order the form shows them.
func themeFields(t payment.Theme) []themeField {
	return []themeField{
		{"main_background", t.MainBackground}, {"secondary_background", t.SecondaryBackground},
		{"main_color", t.MainColor}, {"main_text", t.MainText}, {"primary_text", t.PrimaryText},
		{"secondary_text", t.SecondaryText}, {"base_text", t.BaseText}, {"body_background", t.BodyBackground},
	}
}

// formTheme reads the theme's colours from the form, as sent.
func formTheme(get func(string) string) (payment.Theme, []themeField) {
	v := func(name string) string { return strings.TrimSpace(get("theme." + name)) }
	t := payment.Theme{
		MainBackground: v("main_background"), SecondaryBackground: v("secondary_background"),
		MainColor: v("main_color"), MainText: v("main_text"), PrimaryText: v("primary_text"),
		SecondaryText: v("secondary_text"), BaseText: v("base_text"), BodyBackground: v("body_background"),
	}
	return t, themeFields(t)
}

// testCard is a sandbox card the test charge form offers, by a key: the
// form never carries a card number, so none is ever echoed back.
type testCard struct {
	Key    string
	number string
}

// testCards are the sandbox cards of the test charge form (the sandbox
// acquirer's, server/sandbox).
var testCards = []testCard{
	{"success", "4000020000000000"},
	{"decline", "4000000000000002"},
	{"insufficient_funds", "4000000000009995"},
	{"three_ds", "4000000000003220"},
}

// settingsView is a store's settings page, with the test charge form.
type settingsView struct {
	Store      *payment.Store
	Form       settingsForm
	Brands     []string
	Recurring  []payment.RecurringPrivilege
	MatchRules []payment.MatchAmount
	Cards      []testCard
	Charge     testChargeForm
	ChargeErrs []string
}

// testChargeForm is what the test charge form holds.
type testChargeForm struct {
	Amount   string
	Currency string
	Card     string
}

func (c *console) settingsView(st *payment.Store, f settingsForm, charge testChargeForm) settingsView {
	if charge.Card == "" {
		charge.Card = testCards[0].Key
	}
	return settingsView{Store: st, Form: f, Brands: payment.CardBrands(), Cards: testCards, Charge: charge,
		Recurring:  []payment.RecurringPrivilege{payment.RecurringNone, payment.RecurringBounded, payment.RecurringInfinite},
		MatchRules: []payment.MatchAmount{payment.MatchMinimum, payment.MatchExact, payment.MatchMaximum, payment.MatchDisabled}}
}

// storeForm is a store's settings as the form shows them.
func storeForm(st *payment.Store) settingsForm {
	return settingsForm{Name: st.Name, PCICompliant: st.PCICompliant, CardEnabled: st.Settings.CardEnabled,
		ThreeDSRequired: st.Settings.ThreeDSRequired, Forbidden: st.Settings.ForbiddenCardBrands,
		Recurring: st.Settings.Recurring(), Theme: themeFields(st.Settings.Theme),
		KonbiniEnabled: !st.Settings.KonbiniOff, BankTransferEnabled: !st.Settings.BankTransferOff,
		MatchAmount: st.Settings.TransferMatch()}
}

func (c *console) settingsPage(cr *consoleRequest) error {
	st, _, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	c.render(cr, http.StatusOK, "console_settings", "stores", c.settingsView(st, storeForm(st), testChargeForm{}))
	return nil
}

// saveSettings sets every setting the form holds at once.
func (c *console) saveSettings(cr *consoleRequest) error {
	st, caller, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	form := cr.r.PostForm
	theme, fields := formTheme(form.Get)
	f := settingsForm{Name: form.Get("name"), PCICompliant: form.Get("pci_compliant") != "",
		CardEnabled: form.Get("card_enabled") != "", ThreeDSRequired: form.Get("three_ds_required") != "",
		Forbidden: form["forbidden_card_brands"], Recurring: payment.RecurringPrivilege(form.Get("recurring_type")), Theme: fields,
		KonbiniEnabled: form.Get("konbini_enabled") != "", BankTransferEnabled: form.Get("bank_transfer_enabled") != "",
		MatchAmount: payment.MatchAmount(form.Get("match_amount"))}
	forbidden := slices.Clone(f.Forbidden)
	if forbidden == nil {
		forbidden = []string{}
	}
	u := payment.StoreUpdate{
		Name: &f.Name, PCICompliant: &f.PCICompliant, CardEnabled: &f.CardEnabled, ThreeDSRequired: &f.ThreeDSRequired,
		ForbiddenCardBrands: &forbidden, RecurringType: &f.Recurring, Theme: &theme,
		KonbiniEnabled: &f.KonbiniEnabled, BankTransferEnabled: &f.BankTransferEnabled,
	}
	// The rule is a choice the form always makes; a form without it (a
	// script's) leaves the rule as it is.
	if f.MatchAmount != "" {
		u.MatchAmount = &f.MatchAmount
	} else {
		f.MatchAmount = st.Settings.TransferMatch()
	}
	_, err = c.svc.UpdateStore(cr.r.Context(), caller, st.ID, u)
	if err != nil {
		return c.showForm(cr, err, "console_settings", c.settingsView(st, f, testChargeForm{}))
	}
	return c.notice(cr, storePath(st.ID, "/settings"), "n_settings_saved")
}

// testCharge makes a test card token and a charge on it, through the
// service as any server would, and shows the charge.
func (c *console) testCharge(cr *consoleRequest) error {
	st, caller, err := c.keysStore(cr)
	if err != nil {
		return err
	}
	form := cr.r.PostForm
	f := testChargeForm{Amount: strings.TrimSpace(form.Get("amount")), Currency: form.Get("currency"), Card: form.Get("card")}
	i := slices.IndexFunc(testCards, func(tc testCard) bool { return tc.Key == f.Card })
	var ch *payment.Charge
	amount, currency, aerr := formAmount(form)
	switch {
	case aerr != nil:
		err = aerr
	case amount == nil:
		err = payment.Invalid("amount", payment.ReasonRequired)
	case i < 0:
		err = payment.Invalid("card", payment.ReasonInvalidFormat)
	default:
		ctx := cr.r.Context()
		var tok *payment.TransactionToken
		tok, err = c.svc.CreateToken(ctx, caller, payment.NewToken{
			PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "console-test@kessai.test",
			IPAddress: tokenIP(c.clientIP(cr.r)),
			Card: &payment.CardInput{Cardholder: "KESSAI TEST", Number: testCards[i].number, ExpMonth: 12,
				ExpYear: c.svc.Clock().Now().Year() + 3, CVV: "123"},
		})
		if err == nil {
			ch, err = c.svc.CreateCharge(ctx, caller, payment.NewCharge{TokenID: tok.ID, Amount: *amount, Currency: currency})
		}
	}
	if err != nil {
		status, ok := formProblem(err)
		if !ok {
			return err
		}
		v := c.view(cr, "title_settings", "stores", c.settingsView(st, storeForm(st), f))
		page := v.Page.(settingsView)
		page.ChargeErrs = c.keyErrors(cr, err)
		v.Page = page
		c.renderView(cr, status, "console_settings", v)
		return nil
	}
	return c.notice(cr, storePath(st.ID, "/charges/"+ch.ID.String()), "n_test_charge")
}

// tokenIP is the client address a token records: none when the client is
// unknown (a trusted proxy's chain named none that could be read) or only
// an address with a zone, which is this machine's own business.
func tokenIP(client string) string {
	if a, err := netip.ParseAddr(client); err == nil && a.Zone() == "" {
		return client
	}
	return ""
}
