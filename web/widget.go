package web

import (
	"bytes"
	"encoding/json"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/wasm/card"
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
// JSON object), locale (ja | en | auto), inline (true = fields only; the
// embedding page submits).
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
// the API calls, and a fallback formatting and validation, until the Go
// WebAssembly (wasm/widget) takes the fields over.

// maxFrameQuery bounds the frame's query string: a JWT, a few numbers and
// the merchant's metadata.
const maxFrameQuery = 16 << 10

// widgetPage renders the frame.
type widgetPage struct {
	p      *pages
	tmpl   *template.Template
	origin string // the gateway's own origin
}

// widgetRoutes serves the widget frame.
func (p *pages) widgetRoutes(mux *http.ServeMux) error {
	tmpl, err := template.New("widget").Funcs(templateFuncs()).ParseFS(templates.FS, "widget.html", "widget_error.html")
	if err != nil {
		return err
	}
	wp := &widgetPage{p: p, tmpl: tmpl, origin: originOf(p.cfg.PublicURL)}
	mux.HandleFunc("GET /widget/frame", wp.frame)
	mux.HandleFunc("GET /widget/theme.css", wp.theme)
	return nil
}

// originOf returns scheme://host[:port] of a URL, lower-cased, or "".
func originOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
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
	Metadata  json.RawMessage // a JSON object, or nil
	Inline    bool
}

// problem is why the frame cannot be shown, for the error page.
type problem struct {
	status int
	code   string // sent to the loader as the error code
	key    string // the text in widgetText
}

func (p *problem) Error() string { return p.code }

var (
	errBadToken    = &problem{http.StatusUnauthorized, "INVALID_APP_TOKEN", "errToken"}
	errBadOrigin   = &problem{http.StatusForbidden, "INVALID_DOMAIN", "errOrigin"}
	errBadParams   = &problem{http.StatusBadRequest, "INVALID_PARAMETERS", "errParams"}
	errNoCards     = &problem{http.StatusForbidden, "PAYMENT_TYPE_NOT_SUPPORTED", "errCards"}
	errUnsupported = &problem{http.StatusBadRequest, "NOT_SUPPORTED", "errSubscription"}
)

func parseFrameParams(q url.Values) (*frameParams, *problem) {
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
	if fp.Checkout == "payment" && fp.TokenType == "subscription" {
		// POST /subscriptions is not built yet; a subscription token can
		// still be collected with checkout "token".
		return nil, errUnsupported
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
	if len(fp.Email) > 254 {
		return nil, errBadParams
	}
	if s := strings.TrimSpace(q.Get("metadata")); s != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
			return nil, errBadParams
		}
		b, _ := json.Marshal(m)
		fp.Metadata = b
	}
	return fp, nil
}

// frameAncestors is the CSP frame-ancestors value for a token's domains:
// each domain on http and https, any port when the domain names none (as
// payment.OriginAllowed does), plus the gateway itself.
func frameAncestors(domains []string) string {
	srcs := make([]string, 0, 2*len(domains)+1)
	for _, d := range domains {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "" || strings.Trim(d, "abcdefghijklmnopqrstuvwxyz0123456789.-:*") != "" ||
			strings.Contains(d[1:], "*") || (strings.HasPrefix(d, "*") && !strings.HasPrefix(d, "*.")) {
			continue // not a host[:port]; NormalizeDomain never lets one through
		}
		if !strings.Contains(d, ":") {
			d += ":*"
		}
		srcs = append(srcs, "http://"+d, "https://"+d)
	}
	srcs = append(srcs, "'self'")
	return strings.Join(srcs, " ")
}

// framePolicy is the frame's Content-Security-Policy: nothing inline,
// everything from the gateway, WebAssembly allowed, framed only by
// ancestors.
func framePolicy(ancestors string) string {
	return "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; " +
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

// frameLang picks the frame's language: the locale parameter, else the
// browser's Accept-Language, Japanese or English.
func frameLang(locale, acceptLanguage string) string {
	switch l := strings.ToLower(strings.TrimSpace(locale)); {
	case l == "ja" || strings.HasPrefix(l, "ja-") || strings.HasPrefix(l, "ja_"):
		return "ja"
	case l == "en" || strings.HasPrefix(l, "en-") || strings.HasPrefix(l, "en_"):
		return "en"
	}
	best, bestQ := "en", -1.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if primary != "ja" && primary != "en" {
			continue
		}
		q, _ := qValue(params)
		if q > bestQ {
			best, bestQ = primary, q
		}
	}
	return best
}

// frameView is what widget.html renders.
type frameView struct {
	Lang       string
	T          map[string]string
	StoreName  string
	TestMode   bool
	AmountText string
	PayLabel   string
	Inline     bool
	AskEmail   bool
	ThemeURL   string
	Config     template.JS
	BrandAttrs template.HTMLAttr
	Brands     []brandMark
	WasmURL    string
	WasmExec   string
}

type brandMark struct{ Name, Label, URL string }

// brandLabels name the marks shown; the order is the accepted-cards row.
var brandLabels = []struct{ name, label string }{
	{"visa", "Visa"}, {"mastercard", "Mastercard"}, {"jcb", "JCB"}, {"american_express", "American Express"},
	{"diners_club", "Diners Club"}, {"discover", "Discover"}, {"unionpay", "UnionPay"}, {"maestro", "Maestro"},
}

// errorView is what widget_error.html renders.
type errorView struct {
	Lang    string
	T       map[string]string
	Message string
	Config  template.JS
}

func (wp *widgetPage) frame(w http.ResponseWriter, r *http.Request) {
	lang := frameLang(r.URL.Query().Get("locale"), r.Header.Get("Accept-Language"))
	if len(r.URL.RawQuery) > maxFrameQuery {
		wp.fail(w, lang, errBadParams, "", "", "'self'")
		return
	}
	q := r.URL.Query()
	origin, ok := embedderOrigin(q.Get("origin"))
	instance := q.Get("instance")
	fp, prob := parseFrameParams(q)
	if prob == errBadToken || !ok {
		if prob != errBadToken {
			prob = errBadOrigin
		}
		wp.fail(w, lang, prob, "", "", "'self'")
		return
	}
	caller, err := wp.p.cfg.Service.BrowserCaller(r.Context(), q.Get("appId"), origin)
	if err != nil {
		switch payment.ErrorCode(err) {
		case payment.CodeInvalidDomain:
			wp.fail(w, lang, errBadOrigin, "", "", "'self'")
			return
		case payment.CodeInvalidAppToken:
		default:
			wp.p.log.Error("widget frame: app token", "error", err)
		}
		wp.fail(w, lang, errBadToken, "", "", "'self'")
		return
	}
	tok := caller.Token()
	ancestors := frameAncestors(tok.Domains)
	if prob != nil {
		wp.fail(w, lang, prob, origin, instance, ancestors)
		return
	}
	info, err := wp.p.cfg.Service.CheckoutInfo(r.Context(), caller)
	if err != nil {
		wp.p.log.Error("widget frame: checkout info", "error", err)
		wp.fail(w, lang, errBadToken, origin, instance, ancestors)
		return
	}
	if !info.Store.Settings.CardEnabled {
		wp.fail(w, lang, errNoCards, origin, instance, ancestors)
		return
	}
	t := widgetText[lang]
	v := frameView{
		Lang: lang, T: t, StoreName: info.Store.Name, TestMode: info.Mode == payment.ModeTest,
		Inline: fp.Inline, AskEmail: fp.Email == "", ThemeURL: themeURL(info.Store.Settings.Theme),
	}
	if fp.HasAmount && fp.Currency != "" {
		c, _ := payment.LookupCurrency(fp.Currency)
		v.AmountText = amountText(fp.Amount, c)
	}
	switch {
	case v.AmountText != "":
		v.PayLabel = strings.ReplaceAll(t["payAmount"], "{amount}", v.AmountText)
	case fp.Checkout == "token":
		v.PayLabel = t["saveCard"]
	default:
		v.PayLabel = t["pay"]
	}
	t2, _ := loadAssets()
	var attrs strings.Builder
	for _, b := range append(brandLabels, struct{ name, label string }{"unknown", ""}) {
		u := t2.url("img/brands/" + b.name + ".svg")
		attrs.WriteString(` data-src-` + b.name + `="` + html.EscapeString(u) + `"`)
		if b.label != "" {
			attrs.WriteString(` data-label-` + b.name + `="` + html.EscapeString(b.label) + `"`)
			if b.name != "maestro" {
				v.Brands = append(v.Brands, brandMark{Name: b.name, Label: b.label, URL: u})
			}
		}
	}
	v.BrandAttrs = template.HTMLAttr(attrs.String())
	if t2.has("build/widget.wasm") && t2.has("build/wasm_exec.js") {
		v.WasmURL, v.WasmExec = t2.url("build/widget.wasm"), t2.url("build/wasm_exec.js")
	}
	cfg := map[string]any{
		"v": 1, "instance": instance, "origin": origin, "self": origin == wp.origin,
		"appId": fp.AppID, "storeId": tok.StoreID.String(), "mode": string(info.Mode),
		"checkout": fp.Checkout, "tokenType": fp.TokenType, "capture": fp.Capture,
		"currency": fp.Currency, "email": fp.Email, "inline": fp.Inline, "locale": lang,
		"wasm": v.WasmURL, "wasmExec": v.WasmExec, "messages": frameMessages(lang),
		"amountText": v.AmountText,
	}
	if fp.HasAmount {
		cfg["amount"] = fp.Amount
	}
	if fp.Metadata != nil {
		cfg["metadata"] = fp.Metadata
	}
	v.Config = jsonJS(cfg)
	var buf bytes.Buffer
	if err := wp.tmpl.ExecuteTemplate(&buf, "widget.html", v); err != nil {
		wp.p.log.Error("widget frame: template", "error", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	setFrameHeaders(w, ancestors)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the error page. origin and instance are set only when the
// embedding page is known to be allowed: the page then tells the loader
// too, so that the merchant's onError hears of it.
func (wp *widgetPage) fail(w http.ResponseWriter, lang string, prob *problem, origin, instance, ancestors string) {
	t := widgetText[lang]
	v := errorView{Lang: lang, T: t, Message: t[prob.key]}
	cfg := map[string]any{"v": 1, "error": map[string]any{"code": prob.code, "message": v.Message}}
	if origin != "" {
		cfg["origin"], cfg["instance"] = origin, instance
	}
	v.Config = jsonJS(cfg)
	var buf bytes.Buffer
	if err := wp.tmpl.ExecuteTemplate(&buf, "widget_error.html", v); err != nil {
		wp.p.log.Error("widget frame: template", "error", err)
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

// themeVars are the theme's colours in the order of theme.css's "c"
// parameter, with the CSS custom property each sets.
var themeVars = []struct {
	prop string
	get  func(payment.Theme) string
}{
	{"--kw-panel", func(t payment.Theme) string { return t.MainBackground }},
	{"--kw-panel-2", func(t payment.Theme) string { return t.SecondaryBackground }},
	{"--kw-accent", func(t payment.Theme) string { return t.MainColor }},
	{"--kw-on-accent", func(t payment.Theme) string { return t.MainText }},
	{"--kw-text", func(t payment.Theme) string { return t.PrimaryText }},
	{"--kw-muted", func(t payment.Theme) string { return t.SecondaryText }},
	{"--kw-field-text", func(t payment.Theme) string { return t.BaseText }},
	{"--kw-page", func(t payment.Theme) string { return t.BodyBackground }},
}

// hexColour returns c without its "#" when it is a #rgb, #rgba, #rrggbb
// or #rrggbbaa colour, else "".
func hexColour(c string) string {
	c = strings.TrimPrefix(strings.TrimSpace(c), "#")
	switch len(c) {
	case 3, 4, 6, 8:
	default:
		return ""
	}
	if strings.Trim(strings.ToLower(c), "0123456789abcdef") != "" {
		return ""
	}
	return strings.ToLower(c)
}

// themeURL is the stylesheet carrying a store's colours. The colours are
// the URL, so it needs no lookup, is the same on every gateway instance and
// can be cached for good.
func themeURL(t payment.Theme) string {
	parts := make([]string, len(themeVars))
	for i, v := range themeVars {
		parts[i] = hexColour(v.get(t))
	}
	return "/widget/theme.css?c=" + strings.Join(parts, "-")
}

// theme serves GET /widget/theme.css?c=rrggbb-rrggbb-…: the store's colours
// as CSS custom properties (no inline style is allowed in the frame).
func (wp *widgetPage) theme(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(r.URL.Query().Get("c"), "-")
	var b strings.Builder
	b.WriteString(":root{")
	for i, v := range themeVars {
		if i < len(parts) {
			if c := hexColour(parts[i]); c != "" {
				b.WriteString(v.prop + ":#" + c + ";")
			}
		}
	}
	b.WriteString("}\n")
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", immutableCache)
	_, _ = w.Write([]byte(b.String()))
}

// frameMessages are the texts widget.js shows itself: field messages while
// the WebAssembly (which has its own, from the same card package) is not
// running, and the outcomes of API calls.
func frameMessages(lang string) map[string]string {
	msg := func(field, reason string) string {
		return card.Problem{Field: field, Reason: reason}.Message(lang)
	}
	m := map[string]string{
		"number.required":   msg(card.FieldCardNumber, card.ReasonRequired),
		"number.invalid":    card.Message(card.ReasonInvalidCardNumber, lang),
		"number.incomplete": card.Message(card.StateIncompleteNumber, lang),
		"exp.required":      card.Message(card.StateIncompleteExpiry, lang),
		"exp.incomplete":    card.Message(card.StateIncompleteExpiry, lang),
		"exp.invalid":       card.Message(card.ReasonInvalidExpiration, lang),
		"exp.expired":       card.Message(card.StateExpired, lang),
		"cvc.required":      msg(card.FieldCVV, card.ReasonRequired),
		"cvc.incomplete":    card.Message(card.StateIncompleteCVV, lang),
		"cvc.invalid":       card.Message(card.ReasonInvalidCVV, lang),
		"name.required":     msg(card.FieldCardholder, card.ReasonRequired),
		"name.invalid":      msg(card.FieldCardholder, card.ReasonInvalidFormat),
		"field.generic":     card.Message("", lang),
	}
	for _, k := range []string{
		"email.required", "email.invalid", "declined", "expiredCard", "incorrectCvc", "contactBank",
		"threeDS", "processing", "tooQuick", "tooMany", "network", "config", "generic", "awaiting",
		"amount", "testCardLive", "expired", "unavailable",
		"busy", "paid", "authorized", "saved", "doneHint", "working", "timeout",
	} {
		m[k] = widgetText[lang]["m."+k]
	}
	return m
}

// widgetText is every text of the frame, in the two languages.
var widgetText = map[string]map[string]string{
	"en": {
		"title":           "Card payment",
		"close":           "Close",
		"test":            "Test mode",
		"testHint":        "No real charge is made. Try 4000\u00a00200\u00a00000\u00a00000 with any future date and any CVC.",
		"accepted":        "Accepted cards",
		"email":           "Email",
		"emailPh":         "you@example.com",
		"number":          "Card number",
		"exp":             "Expiry date",
		"expPh":           "MM / YY",
		"cvc":             "Security code",
		"cvcHint":         "3 digits on the back, or 4 on the front for American Express",
		"name":            "Cardholder name",
		"namePh":          "TARO YAMADA",
		"payAmount":       "Pay {amount}",
		"pay":             "Pay",
		"saveCard":        "Save card",
		"secured":         "Payments secured by Kessai",
		"noscript":        "Please turn on JavaScript to pay by card.",
		"errTitle":        "This payment form cannot be shown",
		"errToken":        "The shop's payment settings are not valid (app token). Please contact the shop.",
		"errOrigin":       "This page is not allowed to show the shop's payment form. Please contact the shop.",
		"errParams":       "The payment details sent by the shop are incomplete or not valid. Please contact the shop.",
		"errCards":        "Card payments are not available for this shop.",
		"errSubscription": "Subscriptions cannot be paid with this form yet. Please contact the shop.",

		"m.email.required": "Enter your email address.",
		"m.email.invalid":  "Enter a valid email address.",
		"m.declined":       "Your card was declined. Please try another card or contact your card issuer.",
		"m.expiredCard":    "This card has expired. Please use another card.",
		"m.incorrectCvc":   "The security code is incorrect. Please check it and try again.",
		"m.contactBank":    "Your card issuer declined the payment. Please contact them or use another card.",
		"m.threeDS":        "Card authentication (3-D Secure) failed. Please try again or use another card.",
		"m.processing":     "The payment could not be processed. Please try again in a moment.",
		"m.tooQuick":       "This card was just used. Please wait a moment before trying it again.",
		"m.tooMany":        "Too many attempts. Please wait a minute and try again.",
		"m.network":        "Could not reach the payment server. Check your connection and try again.",
		"m.config":         "This payment form is not set up correctly. Please contact the shop.",
		"m.amount":         "This amount cannot be paid by card here. Please contact the shop.",
		"m.testCardLive":   "Test cards cannot be used for real payments. Please use your own card.",
		"m.expired":        "This payment session has expired. Please try again.",
		"m.unavailable":    "Card payments are not available right now. Please try again later.",
		"m.generic":        "Something went wrong. Please try again.",
		"m.awaiting":       "Waiting for confirmation from your card issuer…",
		"m.busy":           "A payment is already in progress.",
		"m.paid":           "Payment complete",
		"m.authorized":     "Payment authorised",
		"m.saved":          "Card saved",
		"m.doneHint":       "Thank you.",
		"m.working":        "Processing…",
		"m.timeout":        "The payment is taking longer than expected. Please check with the shop before trying again.",
	},
	"ja": {
		"title":           "カード決済",
		"close":           "閉じる",
		"test":            "テストモード",
		"testHint":        "実際の請求は発生しません。テストカード 4000\u00a00200\u00a00000\u00a00000 と、未来の有効期限、任意のセキュリティコードでお試しください。",
		"accepted":        "ご利用いただけるカード",
		"email":           "メールアドレス",
		"emailPh":         "you@example.com",
		"number":          "カード番号",
		"exp":             "有効期限",
		"expPh":           "MM / YY",
		"cvc":             "セキュリティコード",
		"cvcHint":         "カード裏面の3桁（American Express は表面の4桁）",
		"name":            "カード名義人",
		"namePh":          "TARO YAMADA",
		"payAmount":       "{amount} を支払う",
		"pay":             "支払う",
		"saveCard":        "カードを登録する",
		"secured":         "Kessai による安全な決済",
		"noscript":        "カードでお支払いいただくには JavaScript を有効にしてください。",
		"errTitle":        "決済フォームを表示できません",
		"errToken":        "ショップの決済設定（アプリトークン）が正しくありません。ショップにお問い合わせください。",
		"errOrigin":       "このページではショップの決済フォームを表示できません。ショップにお問い合わせください。",
		"errParams":       "ショップから送られたお支払い情報が不足しているか正しくありません。ショップにお問い合わせください。",
		"errCards":        "このショップではカード決済をご利用いただけません。",
		"errSubscription": "このフォームでは定期課金をまだご利用いただけません。ショップにお問い合わせください。",

		"m.email.required": "メールアドレスを入力してください",
		"m.email.invalid":  "正しいメールアドレスを入力してください",
		"m.declined":       "カードが承認されませんでした。別のカードをお試しいただくか、カード会社にお問い合わせください。",
		"m.expiredCard":    "このカードは有効期限が切れています。別のカードをご利用ください。",
		"m.incorrectCvc":   "セキュリティコードが正しくありません。ご確認のうえ、もう一度お試しください。",
		"m.contactBank":    "カード会社によりお支払いが承認されませんでした。カード会社にお問い合わせいただくか、別のカードをご利用ください。",
		"m.threeDS":        "本人認証（3Dセキュア）に失敗しました。もう一度お試しいただくか、別のカードをご利用ください。",
		"m.processing":     "決済を処理できませんでした。しばらくしてからもう一度お試しください。",
		"m.tooQuick":       "このカードは直前に使用されています。少し時間をおいてからもう一度お試しください。",
		"m.tooMany":        "試行回数が多すぎます。1分ほどおいてからもう一度お試しください。",
		"m.network":        "決済サーバーに接続できませんでした。通信環境をご確認のうえ、もう一度お試しください。",
		"m.config":         "決済フォームの設定に問題があります。ショップにお問い合わせください。",
		"m.amount":         "この金額はカードでお支払いいただけません。ショップにお問い合わせください。",
		"m.testCardLive":   "テストカードは実際のお支払いにはご利用いただけません。お手持ちのカードをご利用ください。",
		"m.expired":        "お支払いの有効期限が切れました。もう一度お試しください。",
		"m.unavailable":    "現在カード決済をご利用いただけません。しばらくしてからもう一度お試しください。",
		"m.generic":        "エラーが発生しました。もう一度お試しください。",
		"m.awaiting":       "カード会社の確認を待っています…",
		"m.busy":           "お支払いの処理中です。",
		"m.paid":           "お支払いが完了しました",
		"m.authorized":     "与信が完了しました",
		"m.saved":          "カード情報を登録しました",
		"m.doneHint":       "ありがとうございました。",
		"m.working":        "処理中…",
		"m.timeout":        "お支払いの処理に時間がかかっています。再度お試しになる前にショップにご確認ください。",
	},
}
