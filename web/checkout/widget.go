package checkout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/wasm/widget/field"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// The widget frame, GET /widget/frame, is the card form that the loader
// (static/checkout.js) puts in an iframe on a merchant's page, and that the
// hosted link form uses on the gateway's own origin. Card data exists only
// here, in the request to POST /tokens, and in the processor call.
//
// Query: appId (the store's app-token JWT, no secret), origin (the
// embedding page's origin, e.g. https://shop.example; the gateway's own
// origin for its own pages), instance (the loader's id for this widget,
// echoed in every message), checkout (token | payment; qr is taken as
// payment), amount (minor units), currency, tokenType (one_time | recurring
// | subscription), capture (false = authorise only), email, metadata (a
// JSON object), phoneNumber (the shopper's, given to the card token as its
// billing phone number: payment.ParsePhone; one the token would refuse is
// left off, and the frame says so in its console, rather than stopping a
// payment over a field the shopper cannot see to correct), locale (message.Negotiate: ja,
// en, ja-JP, … or auto for the browser's), inline (true = fields only; the
// embedding page submits), inlineItemStyle (CSS declarations for each field
// of an inline form: parseItemStyle),
// paymentTypes (what the shopper may pay with, comma-separated:
// parsePaymentTypes), and for a subscription checkout (payment with
// tokenType subscription) its terms (subscription.go: subscriptionPeriod,
// subscriptionCyclicalPeriod, subscriptionInitialAmount, subscriptionStart,
// subscriptionZoneId, subscriptionPlan, subscriptionQty). A subscription
// checkout makes the subscription token, then the subscription, and
// follows its first charge, when one is due now, as a payment's (3-D
// Secure included).
//
// The server checks the token (signature, not revoked, a store token) and
// that origin is one of its domains or the gateway itself; it answers with
// Content-Security-Policy frame-ancestors naming those domains, so browsers
// refuse to show the frame anywhere else, and the frame's script only ever
// talks to origin. Anything wrong gives an error page instead; when the
// token or origin is what is wrong, that page may only be framed by the
// gateway itself.
//
// The page is complete as HTML: the fields show and take typing before any
// script runs. static/widget.js then adds the protocol with the loader and
// the API calls, and formats and validates the fields by the card rules of
// the Go WebAssembly (wasm/widget) once it is ready, by their plain
// JavaScript port (static/cardrules.js) until then.
//
// Payments the shopper approves elsewhere happen inside the frame too: a
// card charge whose issuer asks for a 3-D Secure challenge shows the
// issuer's page (the sandbox's, on this origin) in an inner frame, and an
// online wallet shows the wallet page's QR code and a link to it, while the
// frame polls the charge. Only the hosted link form, a page of the
// gateway's own, sends the whole tab to the challenge and back
// (returnURL).
//
// A konbini payment or a bank transfer (paymentTypes konbini,
// bank_transfer, or stores and banks by name) has a form of its own beside
// the card's, chosen with a method switch, offered where the API takes it
// (checkoutOffer) and the store has it on (storeOffer). It is paid later,
// away from any screen: the frame makes its one-time token and its charge,
// and once the charge awaits the shopper shows its instructions (the
// store's numbers, or the account, and the deadline in Japan's time, from
// the charge's issuer token), then tells the loader of its success with
// the charge, status awaiting; the modal stays open on the instructions
// until the shopper closes it.

// maxFrameQuery bounds the frame's query string: a JWT, a few numbers and
// the merchant's metadata.
const maxFrameQuery = 16 << 10

// widgetPage renders the frame.
type widgetPage struct {
	svc    Service
	log    *slog.Logger
	tmpl   *template.Template
	origin string // the gateway's own origin
}

// newWidgetPage makes the frame's page; the router serves its frame and
// theme.
func newWidgetPage(cfg Config, log *slog.Logger) (*widgetPage, error) {
	tmpl, err := template.New("widget").Funcs(site.Funcs()).ParseFS(templates.FS, "widget.html", "widget_error.html")
	if err != nil {
		return nil, err
	}
	return &widgetPage{svc: cfg.Service, log: log, tmpl: tmpl, origin: site.Origin(cfg.PublicURL)}, nil
}

// embedderOrigin checks the origin parameter: a serialised origin and
// nothing more.
func embedderOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, " \t\r\n\"';,") {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// frameParams is the frame's query, checked.
type frameParams struct {
	AppID     string
	Origin    string
	Instance  string
	Checkout  string // "token" or "payment"
	Amount    int64
	HasAmount bool
	Currency  string // upper case, "" when absent
	TokenType string
	Capture   bool
	Email     string
	// Phone is the shopper's phone number, nil when none was given;
	// PhoneRefused says one was given that a token would refuse.
	Phone        *payment.Phone
	PhoneRefused bool
	Metadata     json.RawMessage // a JSON object, or nil
	Inline       bool
	// ItemStyle is what an inline form's fields are styled with.
	ItemStyle [][2]string
	// Offer is what the shopper may pay with, as the shop asked for it
	// and this checkout allows; the frame takes away what the store has
	// turned off.
	Offer offer
	// Sub is a subscription checkout's terms, nil for any other.
	Sub *subscriptionTerms
}

// problem is why the frame cannot be shown, for the error page.
type problem struct {
	status int
	code   string // sent to the loader as the error code
	key    string // the text in message.Frame
}

func (p *problem) Error() string { return p.code }

var (
	errBadToken  = &problem{http.StatusUnauthorized, "INVALID_APP_TOKEN", "errToken"}
	errBadOrigin = &problem{http.StatusForbidden, "INVALID_DOMAIN", "errOrigin"}
	errBadParams = &problem{http.StatusBadRequest, "INVALID_PARAMETERS", "errParams"}
	errNoCards   = &problem{http.StatusForbidden, "PAYMENT_TYPE_NOT_SUPPORTED", "errCards"}
)

// parseFrameParams checks the frame's query; now is the service's clock,
// for a subscription's start date.
func parseFrameParams(q url.Values, now time.Time) (*frameParams, *problem) {
	fp := &frameParams{
		AppID:     strings.TrimSpace(q.Get("appId")),
		Instance:  q.Get("instance"),
		Checkout:  strings.ToLower(strings.TrimSpace(q.Get("checkout"))),
		TokenType: strings.ToLower(strings.TrimSpace(q.Get("tokenType"))),
		Email:     strings.TrimSpace(q.Get("email")),
		Capture:   true,
		Inline:    q.Get("inline") == "true" || q.Get("inline") == "1",
	}
	if fp.AppID == "" {
		return nil, errBadToken
	}
	if len(fp.Instance) > 64 || strings.Trim(fp.Instance, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return nil, errBadParams
	}
	switch fp.Checkout {
	case "", "payment", "qr":
		fp.Checkout = "payment"
	case "token":
	default:
		return nil, errBadParams
	}
	switch fp.TokenType {
	case "":
		fp.TokenType = "one_time"
	case "one_time", "recurring", "subscription":
	default:
		return nil, errBadParams
	}
	switch strings.ToLower(q.Get("capture")) {
	case "", "true", "1":
	case "false", "0":
		fp.Capture = false
	default:
		return nil, errBadParams
	}
	if s := strings.TrimSpace(q.Get("amount")); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, errBadParams
		}
		fp.Amount, fp.HasAmount = n, true
	}
	if s := strings.TrimSpace(q.Get("currency")); s != "" {
		c, ok := payment.LookupCurrency(s)
		if !ok {
			return nil, errBadParams
		}
		fp.Currency = c.Code
	}
	if fp.Checkout == "payment" && (!fp.HasAmount || fp.Amount == 0 || fp.Currency == "") {
		return nil, errBadParams
	}
	if fp.HasAmount && fp.Currency == "" {
		return nil, errBadParams
	}
	// A subscription checkout's terms; anywhere else they would be
	// ignored, which a shop should hear of.
	if fp.Checkout == "payment" && fp.TokenType == "subscription" {
		cur, _ := payment.LookupCurrency(fp.Currency)
		sub, problems := parseSubscription(q, cur, now)
		if len(problems) > 0 {
			return nil, errBadParams
		}
		fp.Sub = sub
	} else if hasSubscriptionParams(q) {
		return nil, errBadParams
	}
	if len(fp.Email) > 254 {
		return nil, errBadParams
	}
	if s := q.Get("phoneNumber"); strings.TrimSpace(s) != "" {
		if p, ok := payment.ParsePhone(s); ok {
			fp.Phone = &p
		} else {
			fp.PhoneRefused = true
		}
	}
	if fp.Inline {
		fp.ItemStyle = parseItemStyle(q.Get("inlineItemStyle"))
	}
	if s := strings.TrimSpace(q.Get("metadata")); s != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
			return nil, errBadParams
		}
		b, _ := json.Marshal(m)
		fp.Metadata = b
	}
	var ok bool
	if fp.Offer, ok = parsePaymentTypes(q.Get("paymentTypes")); !ok {
		return nil, errBadParams
	}
	fp.Offer = checkoutOffer(fp.Offer, fp.Checkout, fp.TokenType, fp.Capture, fp.Currency)
	return fp, nil
}

// walletBrands are the online wallets (payment_type "online") the widget
// offers, in the order of its buttons, with the names they go by. WeChat
// Pay (we_chat_online) is not among them: paid from a browser, the API
// wants the shopper's IP address with its token, which a page cannot know.
var walletBrands = []struct{ brand, name string }{
	{"pay_pay_online", "PayPay"}, {"alipay_online", "Alipay"}, {"alipay_plus_online", "Alipay+"},
	{"d_barai_online", "d払い"},
}

// cardNames are the paymentTypes that mean the card form: "card", and the
// card brands UnivaPay's widget filters on.
var cardNames = []string{"card", "visa", "mastercard", "jcb", "american_express", "diners_club", "discover", "unionpay", "maestro"}

// maxPaymentTypes bounds the paymentTypes list.
const maxPaymentTypes = 32

// offer is what a frame offers its shopper to pay with: the card form,
// the online wallets' buttons (walletBrands' brands, in that order), and
// the forms of a konbini payment, at the stores listed
// (payment.ConvenienceStores' values, in that order), and of a bank
// transfer, to the banks listed (payment.BankTransferBrands').
type offer struct {
	Card    bool
	Wallets []string
	Stores  []string
	Banks   []string
}

// none reports whether o offers nothing at all.
func (o offer) none() bool {
	return !o.Card && len(o.Wallets) == 0 && len(o.Stores) == 0 && len(o.Banks) == 0
}

// methods are the payment types of o's forms, in the order of the method
// switch: those the shopper fills in before paying (wallets are buttons
// that pay at once).
func (o offer) methods() []string {
	var m []string
	if o.Card {
		m = append(m, payment.PaymentTypeCard)
	}
	if len(o.Stores) > 0 {
		m = append(m, payment.PaymentTypeKonbini)
	}
	if len(o.Banks) > 0 {
		m = append(m, payment.PaymentTypeBankTransfer)
	}
	return m
}

// parsePaymentTypes reads the loader's paymentTypes: UnivaPay's
// paymentType ("card", "online", "konbini", "bank_transfer") or
// paymentTypes (those, card brands, online brands, convenience stores and
// banks), comma-separated. "online" is every wallet the widget offers,
// "konbini" every store and "bank_transfer" every bank. What the widget
// cannot take (paidy, WeChat Pay, merchant QR codes) is left out, as it
// was before wallets were offered; a caller shows the card form when
// nothing else is left. ok is false for a list no loader sends (too long,
// or not names).
func parsePaymentTypes(raw string) (o offer, ok bool) {
	if strings.TrimSpace(raw) == "" {
		return offer{Card: true}, true
	}
	items := strings.Split(raw, ",")
	if len(items) > maxPaymentTypes {
		return offer{}, false
	}
	want := map[string]bool{}
	for _, it := range items {
		it = strings.ToLower(strings.TrimSpace(it))
		if it == "" {
			continue
		}
		if len(it) > 40 || strings.Trim(it, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
			return offer{}, false
		}
		switch {
		case slices.Contains(cardNames, it):
			o.Card = true
		case it == payment.PaymentTypeOnline:
			for _, b := range walletBrands {
				want[b.brand] = true
			}
		case it == payment.PaymentTypeKonbini:
			for _, b := range payment.ConvenienceStores {
				want[b] = true
			}
		case it == payment.PaymentTypeBankTransfer:
			for _, b := range payment.BankTransferBrands {
				want[b] = true
			}
		default:
			want[it] = true
		}
	}
	for _, b := range walletBrands {
		if want[b.brand] {
			o.Wallets = append(o.Wallets, b.brand)
		}
	}
	for _, b := range payment.ConvenienceStores {
		if want[b] {
			o.Stores = append(o.Stores, b)
		}
	}
	for _, b := range payment.BankTransferBrands {
		if want[b] {
			o.Banks = append(o.Banks, b)
		}
	}
	return o, true
}

// checkoutOffer is what o leaves of itself for a checkout (token or
// payment) of a token of tokenType, captured or not, in currency ("" for
// a token alone without one). A wallet pays at once, once: no token to
// keep, nothing to authorise now and capture later. A konbini payment or
// a bank transfer is one payment in yen, captured when the shopper pays
// (the API refuses anything else): a one-time token, made alone or with
// its charge; a token alone may leave the currency to its charge. The
// card form is left when nothing else is.
func checkoutOffer(o offer, checkout, tokenType string, capture bool, currency string) offer {
	if checkout != "payment" || tokenType != "one_time" || !capture {
		o.Wallets = nil
	}
	yen := currency == "JPY" || checkout == "token" && currency == ""
	if tokenType != "one_time" || checkout == "payment" && !capture || !yen {
		o.Stores, o.Banks = nil, nil
	}
	if o.none() {
		o.Card = true
	}
	return o
}

// testBank is the sandbox's bank: a live payment has a real bank's
// account.
const testBank = "bank_test_brand"

// storeOffer is what o leaves of itself at a store with settings st, in
// mode: the card form unless cards are off, konbini and bank transfers
// unless turned off, the sandbox's bank in test mode only. Asked only for
// what the store has turned off, the shopper gets the card form, as
// parsePaymentTypes' callers give it when nothing else is left.
func storeOffer(o offer, st payment.StoreSettings, mode payment.Mode) offer {
	asked := o
	o.Card = o.Card && st.CardEnabled
	if st.KonbiniOff {
		o.Stores = nil
	}
	if st.BankTransferOff {
		o.Banks = nil
	}
	if mode != payment.ModeTest {
		o.Banks = slices.DeleteFunc(slices.Clone(o.Banks), func(b string) bool { return b == testBank })
	}
	if o.none() && !asked.none() && st.CardEnabled {
		o.Card = true
	}
	return o
}

// walletName is the name a wallet brand goes by.
func walletName(brand string) string {
	for _, b := range walletBrands {
		if b.brand == brand {
			return b.name
		}
	}
	return brand
}

// returnURL is where the hosted link form wants the shopper's tab sent
// back after a 3-D Secure challenge: its /forms/{id}/return, when the
// frame is on the gateway's own page (origin) and its metadata names the
// form (the link form puts metaFormID there). "" otherwise: merchants'
// pages keep the challenge inside the frame.
func (wp *widgetPage) returnURL(origin string, metadata json.RawMessage) string {
	if origin != wp.origin || wp.origin == "" || metadata == nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(metadata, &m) != nil {
		return ""
	}
	id, _ := m[metaFormID].(string)
	if !linkformIDPattern.MatchString(id) {
		return ""
	}
	return wp.origin + "/forms/" + id + "/return"
}

// framePolicy is the frame's Content-Security-Policy: nothing inline,
// everything from the gateway, WebAssembly allowed, framed only by
// ancestors. frame-src and form-action 'self' let it post a 3-D Secure
// challenge's payload to the sandbox's page in an inner frame: the page is
// on the gateway's origin. (A real issuer's page would be another origin,
// to be listed here.)
func framePolicy(ancestors string) string {
	return "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; " +
		"frame-ancestors " + ancestors
}

func setFrameHeaders(w http.ResponseWriter, ancestors string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", framePolicy(ancestors))
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	// Safari and old browsers that ignore frame-ancestors still honour
	// this for the gateway-only case; for merchants the CSP decides.
	if ancestors == "'self'" {
		h.Set("X-Frame-Options", "SAMEORIGIN")
	}
}

// frameView is what widget.html renders.
type frameView struct {
	Lang       message.Locale
	T          map[string]string
	Title      string
	StoreName  string
	TestMode   bool
	AmountText string
	PayLabel   string
	// Subscription: AmountText is a subscription's (per period).
	Subscription bool
	Inline       bool
	AskEmail     bool
	Card         bool
	Wallets      []walletView
	// Konbini and Bank: the forms of a konbini payment at Stores and of a
	// bank transfer to Banks. Methods are the forms to switch between,
	// Method the one shown first, with its PayLabel and TestHint.
	Konbini, Bank bool
	Stores        []walletView
	Banks         []walletView
	Methods       []methodView
	Method        string
	TestHint      string
	EmailLabel    string
	KonbiniNote   string
	BankNote      string
	KonbiniPhone  string
	Slip          map[string]string
	ThemeURL      string
	Config        template.JS
	BrandAttrs    template.HTMLAttr
	Brands        []brandMark
	WasmURL       string
	WasmExec      string
}

type brandMark struct{ Name, Label, URL string }

// walletView is a wallet's button, a store's or a bank's choice.
type walletView struct{ Brand, Name string }

// methodView is a choice of the method switch: a payment type and its
// name.
type methodView struct{ Type, Label string }

// methodLabels are the keys of the method switch's names, in
// message.Frame.
var methodLabels = map[string]string{
	payment.PaymentTypeCard: "methodCard", payment.PaymentTypeKonbini: "methodKonbini",
	payment.PaymentTypeBankTransfer: "methodBank",
}

// brandLabels name the marks shown; the order is the accepted-cards row.
var brandLabels = []struct{ name, label string }{
	{"visa", "Visa"}, {"mastercard", "Mastercard"}, {"jcb", "JCB"}, {"american_express", "American Express"},
	{"diners_club", "Diners Club"}, {"discover", "Discover"}, {"unionpay", "UnionPay"}, {"maestro", "Maestro"},
}

// errorView is what widget_error.html renders.
type errorView struct {
	Lang    message.Locale
	T       map[string]string
	Message string
	Config  template.JS
}

func (wp *widgetPage) frame(w http.ResponseWriter, r *http.Request) {
	lang := message.Negotiate(r.URL.Query().Get("locale"), r.Header.Get("Accept-Language"))
	if len(r.URL.RawQuery) > maxFrameQuery {
		wp.fail(w, lang, errBadParams, "", "", "'self'")
		return
	}
	q := r.URL.Query()
	origin, ok := embedderOrigin(q.Get("origin"))
	instance := q.Get("instance")
	fp, prob := parseFrameParams(q, wp.svc.Clock().Now())
	if prob == errBadToken || !ok {
		if prob != errBadToken {
			prob = errBadOrigin
		}
		wp.fail(w, lang, prob, "", "", "'self'")
		return
	}
	caller, err := wp.svc.BrowserCaller(r.Context(), q.Get("appId"), origin)
	if err != nil {
		switch payment.ErrorCode(err) {
		case payment.CodeInvalidDomain:
			wp.fail(w, lang, errBadOrigin, "", "", "'self'")
			return
		case payment.CodeInvalidAppToken:
		default:
			wp.log.Error("widget frame: app token", "error", err)
		}
		wp.fail(w, lang, errBadToken, "", "", "'self'")
		return
	}
	tok := caller.Token()
	ancestors := site.FrameAncestors(tok.Domains)
	if prob != nil {
		wp.fail(w, lang, prob, origin, instance, ancestors)
		return
	}
	info, err := wp.svc.CheckoutInfo(r.Context(), caller)
	if err != nil {
		wp.log.Error("widget frame: checkout info", "error", err)
		wp.fail(w, lang, errBadToken, origin, instance, ancestors)
		return
	}
	o := storeOffer(fp.Offer, info.Store.Settings, info.Mode)
	if o.none() {
		wp.fail(w, lang, errNoCards, origin, instance, ancestors)
		return
	}
	t := message.Frame.In(lang)
	v := frameView{
		Lang: lang, T: t, Title: t["title"], StoreName: info.Store.Name, TestMode: info.Mode == payment.ModeTest,
		Inline: fp.Inline, AskEmail: fp.Email == "" && len(o.methods()) > 0, ThemeURL: themeURL(info.Store.Settings.Theme),
		Card: o.Card, Konbini: len(o.Stores) > 0, Bank: len(o.Banks) > 0,
	}
	wallets := []map[string]string{}
	for _, b := range o.Wallets {
		v.Wallets = append(v.Wallets, walletView{Brand: b, Name: walletName(b)})
		wallets = append(wallets, map[string]string{"brand": b, "name": walletName(b)})
	}
	if fp.HasAmount && fp.Currency != "" {
		v.AmountText = site.Amount(fp.Amount, fp.Currency)
	}
	switch {
	case fp.Sub != nil:
		v.AmountText = fp.Sub.amountText(lang, fp.Amount, fp.Currency)
		v.Subscription = true
		v.PayLabel = fmt.Sprintf(message.Periods.Get("subscribe", lang), v.AmountText)
	case v.AmountText != "":
		v.PayLabel = fmt.Sprintf(t["payAmount"], v.AmountText)
	case fp.Checkout == "token":
		v.PayLabel = t["saveCard"]
	default:
		v.PayLabel = t["pay"]
	}
	// The forms, each with the pay button's label and the test-mode hint
	// it shows while chosen; the first is chosen until the shopper
	// chooses another.
	slip := message.CheckoutSlip.In(lang)
	v.Slip = slip
	labels := map[string]string{payment.PaymentTypeCard: v.PayLabel}
	hints := map[string]string{payment.PaymentTypeCard: t["testHint"]}
	for _, m := range []struct{ typ, pay, hint string }{
		{payment.PaymentTypeKonbini, "payKonbini", "testHintKonbini"},
		{payment.PaymentTypeBankTransfer, "payBank", "testHintBank"},
	} {
		labels[m.typ], hints[m.typ] = t["continue"], t[m.hint]
		if fp.Checkout == "payment" {
			labels[m.typ] = fmt.Sprintf(t[m.pay], v.AmountText)
		}
	}
	for _, m := range o.methods() {
		v.Methods = append(v.Methods, methodView{Type: m, Label: t[methodLabels[m]]})
	}
	if len(v.Methods) > 0 {
		first := v.Methods[0].Type
		v.Method, v.PayLabel, v.TestHint = first, labels[first], hints[first]
	} else {
		v.TestHint = t["testHintWallet"]
	}
	if len(v.Methods) > 1 || !o.Card && len(v.Methods) > 0 {
		v.Title = t["titleAny"]
	}
	v.EmailLabel = t["email"]
	if !o.Card {
		v.EmailLabel = t["emailOptional"]
	}
	stores, banks := []map[string]string{}, []map[string]string{}
	for _, b := range o.Stores {
		v.Stores = append(v.Stores, walletView{Brand: b, Name: slip["store_"+b]})
		stores = append(stores, map[string]string{"brand": b, "name": slip["store_"+b]})
	}
	for _, b := range o.Banks {
		v.Banks = append(v.Banks, walletView{Brand: b, Name: slip["bank_"+b]})
		banks = append(banks, map[string]string{"brand": b, "name": slip["bank_"+b]})
	}
	v.KonbiniNote = fmt.Sprintf(t["konbiniNote"], int(payment.DefaultKonbiniPeriod/(24*time.Hour)))
	v.BankNote = fmt.Sprintf(t["bankNote"], int(payment.DefaultTransferPeriod/(24*time.Hour)))
	// A Japanese phone number the shop passed is the konbini form's, as
	// the shopper would type it.
	if fp.Phone != nil && fp.Phone.CountryCode == field.JapanCallingCode {
		if local, state := field.JapanesePhone("+81 " + fp.Phone.LocalNumber); state == "" {
			v.KonbiniPhone = local
		}
	}
	var attrs strings.Builder
	for _, b := range append(brandLabels, struct{ name, label string }{"unknown", ""}) {
		u := site.StaticURL("img/brands/" + b.name + ".svg")
		attrs.WriteString(` data-src-` + b.name + `="` + html.EscapeString(u) + `"`)
		if b.label != "" {
			attrs.WriteString(` data-label-` + b.name + `="` + html.EscapeString(b.label) + `"`)
			if b.name != "maestro" {
				v.Brands = append(v.Brands, brandMark{Name: b.name, Label: b.label, URL: u})
			}
		}
	}
	v.BrandAttrs = template.HTMLAttr(attrs.String())
	if files, err := site.Assets(); err == nil && files.Has("build/widget.wasm") && files.Has("build/wasm_exec.js") {
		v.WasmURL, v.WasmExec = files.URL("build/widget.wasm"), files.URL("build/wasm_exec.js")
	}
	cfg := map[string]any{
		"v": 1, "instance": instance, "origin": origin, "self": origin == wp.origin,
		"appId": fp.AppID, "storeId": tok.StoreID.String(), "mode": string(info.Mode),
		"checkout": fp.Checkout, "tokenType": fp.TokenType, "capture": fp.Capture,
		"currency": fp.Currency, "email": fp.Email, "inline": fp.Inline, "locale": lang,
		"wasm": v.WasmURL, "wasmExec": v.WasmExec, "messages": message.FrameScript.In(lang),
		"amountText": v.AmountText, "card": o.Card, "wallets": wallets,
		"methods": o.methods(), "stores": stores, "banks": banks, "slip": slip, "payLabels": labels, "testHints": hints,
		"labels":  map[string]string{"email": t["email"], "emailOptional": t["emailOptional"]},
		"threeDS": "normal", "returnUrl": wp.returnURL(origin, fp.Metadata),
	}
	// Card charges ask for 3-D Secure where the issuer wants it (normal);
	// a store that requires it for every card gets require, which a
	// charge's own mode would otherwise override.
	if info.Store.Settings.ThreeDSRequired {
		cfg["threeDS"] = "require"
	}
	if fp.HasAmount {
		cfg["amount"] = fp.Amount
	}
	if fp.Metadata != nil {
		cfg["metadata"] = fp.Metadata
	}
	if fp.Phone != nil {
		cfg["phoneNumber"] = map[string]any{"country_code": fp.Phone.CountryCode, "local_number": fp.Phone.LocalNumber}
	}
	if fp.PhoneRefused {
		cfg["phoneNumberRefused"] = true
	}
	if len(fp.ItemStyle) > 0 {
		cfg["itemStyle"] = fp.ItemStyle
	}
	if fp.Sub != nil {
		cfg["subscription"] = fp.Sub.config()
	}
	v.Config = jsonJS(cfg)
	var buf bytes.Buffer
	if err := wp.tmpl.ExecuteTemplate(&buf, "widget.html", v); err != nil {
		wp.log.Error("widget frame: template", "error", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	setFrameHeaders(w, ancestors)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the error page. origin and instance are set only when the
// embedding page is known to be allowed: the page then tells the loader
// too, so that the merchant's onError hears of it.
func (wp *widgetPage) fail(w http.ResponseWriter, lang message.Locale, prob *problem, origin, instance, ancestors string) {
	t := message.Frame.In(lang)
	v := errorView{Lang: lang, T: t, Message: t[prob.key]}
	cfg := map[string]any{"v": 1, "error": map[string]any{"code": prob.code, "message": v.Message}}
	if origin != "" {
		cfg["origin"], cfg["instance"] = origin, instance
	}
	v.Config = jsonJS(cfg)
	var buf bytes.Buffer
	if err := wp.tmpl.ExecuteTemplate(&buf, "widget_error.html", v); err != nil {
		wp.log.Error("widget frame: template", "error", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	setFrameHeaders(w, ancestors)
	w.WriteHeader(prob.status)
	_, _ = w.Write(buf.Bytes())
}

// jsonJS is a value as JSON for a <script type="application/json"> block.
// encoding/json escapes <, > and &, so the block cannot be closed early.
func jsonJS(v any) template.JS {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return template.JS(b)
}
