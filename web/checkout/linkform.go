package checkout

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// The hosted link form: GET /forms/{id}?appId=…&amount=…
// renders a first-party page on the gateway's origin that embeds the same
// widget frame as merchant pages, in inline mode. When the widget reports a
// payment, the page posts its id to POST /forms/{id}/complete; the gateway
// reads the charge (or token) itself and sends the shopper back to the
// merchant's URL for the outcome, with univapayTokenId/univapayChargeId
// appended.
//
// {id} is an opaque label chosen by whoever builds the URL (WooCommerce
// builds it from a configurable base); it is recorded in the charge's
// metadata as "univapay-form-id", beside "order_id".
//
// Payments the shopper approves elsewhere end the same way:
//
//   - A 3-D Secure challenge takes the whole tab, as a hosted page's
//     does: the widget makes the charge with three_ds.redirect_endpoint
//     set to GET /forms/{id}/return (the frame learns the address from
//     the form's id in its metadata, see widgetPage.returnURL) and sends
//     the tab to the issuer's page, which sends it back there with the
//     charge's id once the shopper is done; return then finishes the form
//     as complete does, from the session, with the same checks.
//   - An online wallet (paymentTypes) is paid on the wallet's page, which
//     the shopper may well open on another device from its QR code. So
//     the tab stays on the form: the widget shows the code and a link,
//     polls the charge, and the form completes when it succeeds. The
//     wallet's page is given no redirect endpoint: the tab that started
//     the payment is the one that goes back to the shop.
//   - A konbini payment or a bank transfer (paymentTypes konbini,
//     bank_transfer) is paid later, at a store or from a bank: the form
//     completes as soon as its charge awaits the shopper, and its result
//     page shows what to pay with (the store's numbers, the account) and
//     the deadline, with the instructions page to print, and the way back
//     to the shop (the pending URL). The shopper needs those numbers, so
//     the page stays, autoRedirect or not.

const (
	// linkformCookie is the session cookie of the link form, scoped to
	// /forms/.
	linkformCookie = "kessai_form"
	// linkformMaxAge is how long a shopper may take between opening the
	// form and finishing it.
	linkformMaxAge = 2 * time.Hour
	// linkformMaxPending bounds the forms one session remembers (several
	// tabs): a cookie holds about 4 KB.
	linkformMaxPending = 3
	// linkformChargeWait is how long completion waits for a charge still
	// being processed before calling it pending.
	linkformChargeWait = 5 * time.Second
	// Metadata keys the link form records on the charge.
	metaFormID  = "univapay-form-id"
	metaOrderID = "order_id"
)

// linkformIDPattern is what a form label may look like.
var linkformIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// linkform serves /forms/.
type linkform struct {
	svc    Service
	log    *slog.Logger
	store  *sessions.CookieStore
	tmpl   *template.Template
	origin string // the gateway's public origin
	secure bool
	// now is the service's clock: the form compares when it was opened
	// with when the service made the charge or token it is handed.
	now func() time.Time
}

// newLinkform makes the link form; the router serves its routes.
func newLinkform(cfg Config, log *slog.Logger) (*linkform, error) {
	if cfg.Service == nil {
		return nil, errors.New("checkout: the link form needs the payment service")
	}
	tmpl, err := template.New("").Funcs(site.Funcs()).ParseFS(templates.FS, "linkform*.html")
	if err != nil {
		return nil, err
	}
	key, err := site.SessionKey(cfg.SessionKey, log)
	if err != nil {
		return nil, err
	}
	pub, err := url.Parse(strings.TrimRight(cfg.PublicURL, "/"))
	if err != nil || pub.Host == "" {
		return nil, fmt.Errorf("checkout: bad public URL %q", cfg.PublicURL)
	}
	// The cookie is authenticated with the session key and encrypted with
	// a key derived from it: the form's parameters stay private.
	enc := sha256.Sum256(append([]byte("kessai link form session encryption\x00"), key...))
	store := sessions.NewCookieStore(key, enc[:])
	store.Options = &sessions.Options{
		Path:     "/forms/",
		HttpOnly: true,
		Secure:   pub.Scheme == "https",
		SameSite: http.SameSiteLaxMode,
	}
	store.MaxAge(int(linkformMaxAge / time.Second))
	return &linkform{
		svc: cfg.Service, log: log, store: store, tmpl: tmpl,
		origin: pub.Scheme + "://" + pub.Host, secure: pub.Scheme == "https", now: cfg.Service.Clock().Now,
	}, nil
}

// formParams are a link form's validated parameters.
type formParams struct {
	FormID    string `json:"i"`
	TokenID   string `json:"k"` // the app token's id; its JWT is in formState.Tokens
	Checkout  string `json:"c"` // payment | token
	Amount    int64  `json:"a,omitempty"`
	Currency  string `json:"u"`
	TokenType string `json:"t"`
	Capture   bool   `json:"p"`
	Email     string `json:"e,omitempty"`
	Name      string `json:"n,omitempty"`
	Phone     string `json:"h,omitempty"`
	OrderID   string `json:"o,omitempty"`
	Success   string `json:"s,omitempty"`
	Failure   string `json:"f,omitempty"`
	Pending   string `json:"d,omitempty"`
	AutoRedir bool   `json:"r,omitempty"`
	Locale    string `json:"l,omitempty"` // ja | en | "" (the browser's)
	// PaymentTypes is what the widget offers (its paymentTypes), "" for
	// cards only.
	PaymentTypes string `json:"y,omitempty"`
	// Sub is a subscription form's terms (checkout payment, tokenType
	// subscription), nil for any other form.
	Sub *subscriptionTerms `json:"b,omitempty"`
}

// pendingForm is one form the session's shopper has open.
type pendingForm struct {
	Nonce   string     `json:"n"`
	Created int64      `json:"t"` // unix seconds
	Params  formParams `json:"p"`
	// Done is the id the form was completed with; completing it again
	// with the same id answers the same, with another id is refused.
	Done string `json:"x,omitempty"`
}

// formState is the session: a CSRF token, the app tokens of the open
// forms (usually one: they come from the same shop), and the forms.
type formState struct {
	CSRF   string            `json:"c"`
	Tokens map[string]string `json:"k"`
	Forms  []pendingForm     `json:"f"`
}

// errBadSession means the cookie is there but not ours (tampered, signed
// with another key, expired).
var errBadSession = errors.New("bad session")

func (lf *linkform) load(r *http.Request) (*sessions.Session, *formState, error) {
	sess, err := lf.store.New(r, linkformCookie)
	if sess == nil {
		sess = sessions.NewSession(lf.store, linkformCookie)
		opts := *lf.store.Options
		sess.Options = &opts
	}
	st := &formState{}
	if err != nil {
		return sess, st, errBadSession
	}
	if raw, ok := sess.Values["s"].(string); ok {
		if json.Unmarshal([]byte(raw), st) != nil {
			return sess, &formState{}, errBadSession
		}
	}
	return sess, st, nil
}

func (lf *linkform) save(w http.ResponseWriter, r *http.Request, sess *sessions.Session, st *formState) error {
	for {
		// Forget tokens no form refers to.
		used := map[string]string{}
		for _, f := range st.Forms {
			if jwt, ok := st.Tokens[f.Params.TokenID]; ok {
				used[f.Params.TokenID] = jwt
			}
		}
		st.Tokens = used
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		sess.Values = map[any]any{"s": string(b)}
		err = lf.store.Save(r, w, sess)
		if err == nil || len(st.Forms) <= 1 {
			return err
		}
		// Too big for a cookie: forget the oldest form and try again.
		st.Forms = st.Forms[1:]
	}
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// show renders the form: GET /forms/{id}.
func (lf *linkform) show(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	loc := message.Negotiate(q.Get("locale"), r.Header.Get("Accept-Language"))
	formID := site.PathValue(r, "id")
	if !linkformIDPattern.MatchString(formID) {
		lf.fail(w, r, http.StatusNotFound, loc, "not_found", nil)
		return
	}
	caller, params, problems := lf.validate(r.Context(), loc, formID, q)
	if len(problems) > 0 {
		lf.fail(w, r, http.StatusBadRequest, loc, "invalid", problems)
		return
	}
	info, err := lf.svc.CheckoutInfo(r.Context(), caller)
	if err != nil {
		lf.log.Error("link form: checkout info", "error", err)
		lf.fail(w, r, http.StatusInternalServerError, loc, "internal", nil)
		return
	}
	if params.Checkout == "payment" && !slices.Contains(info.Store.Settings.Currencies, params.Currency) {
		lf.fail(w, r, http.StatusBadRequest, loc, "invalid", []string{
			formText(loc, "p_currency_store", params.Currency)})
		return
	}

	sess, st, err := lf.load(r)
	if err != nil {
		// A cookie we cannot read is replaced by a fresh session.
		st = &formState{}
	}
	if st.CSRF == "" {
		st.CSRF = randomString(32)
	}
	if st.Tokens == nil {
		st.Tokens = map[string]string{}
	}
	pf := pendingForm{Nonce: randomString(16), Created: lf.now().Unix(), Params: params}
	st.Tokens[params.TokenID] = strings.TrimSpace(q.Get("appId"))
	st.Forms = append(st.Forms, pf)
	if len(st.Forms) > linkformMaxPending {
		st.Forms = st.Forms[len(st.Forms)-linkformMaxPending:]
	}
	if err := lf.save(w, r, sess, st); err != nil {
		// Even alone the form does not fit in a cookie: its URLs and
		// texts are too long.
		lf.log.Warn("link form: session too large", "error", err)
		w.Header().Del("Set-Cookie")
		lf.fail(w, r, http.StatusBadRequest, loc, "invalid", []string{formText(loc, "p_too_long")})
		return
	}

	meta := map[string]string{metaFormID: formID}
	if params.OrderID != "" {
		meta[metaOrderID] = params.OrderID
	}
	metaJSON, _ := json.Marshal(meta)
	widgetLocale := params.Locale
	if widgetLocale == "" {
		widgetLocale = string(loc)
	}
	nonce := randomString(16)
	data := lfPage{
		Lang: loc, T: message.LinkForm.In(loc), Title: formText(loc, "title_pay", info.Store.Name),
		StyleNonce: nonce, Accent: cssColour(info.Store.Settings.Theme.MainColor),
		StoreName: info.Store.Name, StoreInitial: initial(info.Store.Name), TestMode: info.Mode == payment.ModeTest,
		FormID: formID, Params: params, Nonce: pf.Nonce, CSRF: st.CSRF,
		AppID: st.Tokens[params.TokenID], Metadata: string(metaJSON), WidgetLocale: widgetLocale,
		CaptureAttr: strconv.FormatBool(params.Capture), Heading: formText(loc, "card_details"),
	}
	// The heading and the hints say what the frame offers: the card's
	// only when it offers the card alone, or with it.
	o, _ := parsePaymentTypes(params.PaymentTypes)
	o = storeOffer(checkoutOffer(o, params.Checkout, params.TokenType, params.Capture, params.Currency), info.Store.Settings, info.Mode)
	if len(o.Wallets) > 0 || len(o.Stores) > 0 || len(o.Banks) > 0 {
		data.Heading = formText(loc, "pay_method")
	}
	data.NoCard = !o.Card
	switch {
	case params.Sub != nil:
		data.AmountText = params.Sub.amountText(loc, params.Amount, params.Currency)
		data.AmountAttr = strconv.FormatInt(params.Amount, 10)
		data.PayLabel = fmt.Sprintf(message.Periods.Get("subscribe", loc), data.AmountText)
		q := url.Values{}
		params.Sub.query(q)
		opts := map[string]string{}
		for k := range q {
			opts[k] = q.Get(k)
		}
		b, _ := json.Marshal(opts)
		data.SubscriptionAttr = string(b)
	case params.Checkout == "payment":
		data.AmountText = site.Amount(params.Amount, params.Currency)
		data.AmountAttr = strconv.FormatInt(params.Amount, 10)
		data.PayLabel = formText(loc, "pay_amount", data.AmountText)
		if !params.Capture {
			data.AuthNote = formText(loc, "auth_note")
		}
	default:
		data.PayLabel = formText(loc, "save_card")
	}
	data.CancelURL = params.Failure
	lf.render(w, http.StatusOK, "linkform.html", data, formActionOrigins(params), nonce)
}

// validate checks the link's parameters (UnivaPay's, so that links made
// for it work here).
func (lf *linkform) validate(ctx context.Context, loc message.Locale, formID string, q url.Values) (*payment.Caller, formParams, []string) {
	var problems []string
	bad := func(key string, args ...any) { problems = append(problems, formText(loc, key, args...)) }
	p := formParams{FormID: formID}

	appID := strings.TrimSpace(q.Get("appId"))
	var caller *payment.Caller
	var tok *payment.AppToken
	if appID == "" {
		bad("p_appid_missing")
	} else {
		c, err := lf.svc.BrowserCaller(ctx, appID, lf.origin)
		if err != nil {
			var perr *payment.Error
			if !errors.As(err, &perr) {
				lf.log.Error("link form: app token", "error", err)
			}
			bad("p_appid_invalid")
		} else {
			caller, tok = c, c.Token()
			p.TokenID = tok.ID.String()
		}
	}

	switch c := q.Get("checkout"); c {
	case "", "payment":
		p.Checkout = "payment"
	case "token":
		p.Checkout = "token"
	default:
		bad("p_checkout")
	}
	switch t := q.Get("tokenType"); t {
	case "", "one_time":
		p.TokenType = "one_time"
	case "recurring", "subscription":
		p.TokenType = t
	default:
		bad("p_token_type")
	}

	p.Currency = strings.ToUpper(strings.TrimSpace(q.Get("currency")))
	if p.Currency == "" {
		p.Currency = "JPY"
	}
	cur, curOK := payment.LookupCurrency(p.Currency)
	if !curOK {
		bad("p_currency", p.Currency)
	}
	if a := strings.TrimSpace(q.Get("amount")); a != "" || p.Checkout == "payment" {
		n, err := strconv.ParseInt(a, 10, 64)
		switch {
		case a == "":
			bad("p_amount_missing")
		case err != nil || n <= 0:
			bad("p_amount")
		case curOK && (n < cur.MinAmount || n > cur.MaxAmount):
			bad("p_amount_range", site.Amount(cur.MinAmount, cur.Code), site.Amount(cur.MaxAmount, cur.Code))
		default:
			p.Amount = n
		}
	}

	if p.Checkout == "payment" && p.TokenType == "subscription" {
		if curOK {
			sub, subProblems := parseSubscription(q, cur, lf.now())
			for _, k := range subProblems {
				bad(k)
			}
			p.Sub = sub
		}
	} else if hasSubscriptionParams(q) {
		bad("p_sub_token")
	}

	switch a := q.Get("auth"); a {
	case "", "false":
		p.Capture = true
	case "true":
		p.Capture = false
	default:
		bad("p_bool", "auth")
	}
	switch a := q.Get("autoRedirect"); a {
	case "", "false":
	case "true":
		p.AutoRedir = true
	default:
		bad("p_bool", "autoRedirect")
	}

	if e := strings.TrimSpace(q.Get("emailAddress")); e != "" {
		if !plausibleEmail(e) {
			bad("p_email")
		} else {
			p.Email = e
		}
	}
	if n := strings.TrimSpace(q.Get("name")); n != "" {
		if utf8.RuneCountInString(n) > 100 || !printable(n) {
			bad("p_text", "name")
		} else {
			p.Name = n
		}
	}
	if ph := strings.TrimSpace(q.Get("phoneNumber")); ph != "" {
		if len(ph) > 32 || !phonePattern.MatchString(ph) {
			bad("p_text", "phoneNumber")
		} else {
			p.Phone = ph
		}
	}
	if o := strings.TrimSpace(q.Get("order_id")); o != "" {
		if utf8.RuneCountInString(o) > 100 || !printable(o) {
			bad("p_text", "order_id")
		} else {
			p.OrderID = o
		}
	}
	if pt := strings.TrimSpace(q.Get("paymentTypes")); pt != "" {
		if _, ok := parsePaymentTypes(pt); !ok || len(pt) > 512 {
			bad("p_payment_types")
		} else {
			p.PaymentTypes = strings.ToLower(strings.Join(strings.Fields(pt), ""))
		}
	}
	if l := strings.TrimSpace(q.Get("locale")); l != "" && !strings.EqualFold(l, "auto") {
		if loc, ok := message.Parse(l); ok {
			p.Locale = string(loc)
		} else {
			bad("p_locale")
		}
	}

	for _, rp := range []struct {
		name string
		dst  *string
	}{{"successRedirectUrl", &p.Success}, {"failureRedirectUrl", &p.Failure}, {"pendingRedirectUrl", &p.Pending}} {
		raw := strings.TrimSpace(q.Get(rp.name))
		if raw == "" {
			continue
		}
		if tok == nil {
			continue // nothing to check it against; the app id is reported
		}
		u, ok := payment.RedirectAllowed(raw, maxRedirectURL, tok.Domains)
		if !ok {
			bad("p_redirect", rp.name)
			continue
		}
		*rp.dst = u
	}
	if len(problems) > 0 {
		return nil, formParams{}, problems
	}
	return caller, p, nil
}

// maxRedirectURL bounds a redirect URL, as given and as normalised. The
// URL is checked by payment.RedirectAllowed, the rule the API holds a
// browser's redirects to; its origin can be written into the form-action
// CSP as it is (payment.ParseWebURL).
const maxRedirectURL = 1024

var phonePattern = regexp.MustCompile(`^\+?[0-9][0-9 ()-]*$`)

func plausibleEmail(e string) bool {
	if len(e) > 254 || strings.ContainsAny(e, " \t\r\n<>\"") {
		return false
	}
	at := strings.LastIndexByte(e, '@')
	return at > 0 && at < len(e)-1 && strings.Contains(e[at:], ".")
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// complete finishes a form: POST /forms/{id}/complete.
func (lf *linkform) complete(w http.ResponseWriter, r *http.Request) {
	loc := message.Negotiate("", r.Header.Get("Accept-Language"))
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		lf.fail(w, r, http.StatusBadRequest, loc, "invalid", nil)
		return
	}
	// The page posts from the gateway's own origin; a browser that says
	// otherwise is being used by another site.
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, lf.origin) {
		lf.fail(w, r, http.StatusForbidden, loc, "csrf", nil)
		return
	}
	sess, st, err := lf.load(r)
	if err != nil || st.CSRF == "" {
		lf.fail(w, r, http.StatusForbidden, loc, "expired", nil)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(st.CSRF)) != 1 {
		lf.fail(w, r, http.StatusForbidden, loc, "csrf", nil)
		return
	}
	formID, nonce := site.PathValue(r, "id"), r.PostForm.Get("form")
	idx := slices.IndexFunc(st.Forms, func(f pendingForm) bool {
		return f.Nonce != "" && subtle.ConstantTimeCompare([]byte(f.Nonce), []byte(nonce)) == 1
	})
	if idx < 0 || st.Forms[idx].Params.FormID != formID ||
		lf.now().Sub(time.Unix(st.Forms[idx].Created, 0)) > linkformMaxAge {
		lf.fail(w, r, http.StatusForbidden, loc, "expired", nil)
		return
	}
	pf := &st.Forms[idx]
	params := pf.Params
	if params.Locale != "" {
		loc = message.Locale(params.Locale)
	}

	if r.PostForm.Get("outcome") == "cancel" {
		if pf.Done != "" {
			lf.fail(w, r, http.StatusConflict, loc, "already_done", nil)
			return
		}
		lf.finish(w, r, loc, params, outcomeCanceled, "", "", "", false)
		return
	}

	// The app token may have been revoked since the form was opened.
	caller, err := lf.svc.BrowserCaller(r.Context(), st.Tokens[params.TokenID], lf.origin)
	if err != nil || caller.Token().ID.String() != params.TokenID {
		lf.fail(w, r, http.StatusForbidden, loc, "expired", nil)
		return
	}
	// The form reads back what its widget made as the gateway page it is,
	// acting only on the token's store: the charge as any browser may, the
	// token through a receipt without the shopper's details.
	storeID := caller.Token().StoreID
	opened := time.Unix(pf.Created, 0).Add(-time.Minute)

	var out outcome
	var tokenID, chargeID, subID string
	var slip *slipView
	switch {
	case params.Sub != nil:
		id, err := uuid.Parse(r.PostForm.Get("subscriptionId"))
		if err != nil {
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		if pf.Done != "" && pf.Done != id.String() {
			lf.fail(w, r, http.StatusConflict, loc, "already_done", nil)
			return
		}
		sub, err := lf.svc.Subscription(r.Context(), caller, storeID, id, linkformChargeWait)
		if err != nil {
			if !payment.IsNotFound(err) && payment.ErrorCode(err) != payment.CodeInvalidPermissions {
				lf.log.Error("link form: reading the subscription", "error", err)
				lf.fail(w, r, http.StatusInternalServerError, loc, "internal", nil)
				return
			}
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		if !subscriptionOfForm(sub, pf) {
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		subID, tokenID = sub.ID.String(), sub.TokenID.String()
		chargeID = lf.firstCharge(r.Context(), caller, storeID, sub.ID)
		out = subscriptionOutcome(sub.Status)
	case params.Checkout == "payment":
		id, err := uuid.Parse(r.PostForm.Get("chargeId"))
		if err != nil {
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		if pf.Done != "" && pf.Done != id.String() {
			lf.fail(w, r, http.StatusConflict, loc, "already_done", nil)
			return
		}
		ch, err := lf.svc.Charge(r.Context(), caller, storeID, id, linkformChargeWait)
		if err != nil {
			if !payment.IsNotFound(err) {
				lf.log.Error("link form: reading the charge", "error", err)
				lf.fail(w, r, http.StatusInternalServerError, loc, "internal", nil)
				return
			}
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		if !chargeOfForm(ch, pf) {
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		chargeID, tokenID = ch.ID.String(), ch.TokenID.String()
		out = chargeOutcome(ch.Status)
		slip = lf.slip(r.Context(), caller, ch, loc)
	default:
		id, err := uuid.Parse(r.PostForm.Get("tokenId"))
		if err != nil {
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		if pf.Done != "" && pf.Done != id.String() {
			lf.fail(w, r, http.StatusConflict, loc, "already_done", nil)
			return
		}
		t, err := lf.svc.TokenReceipt(r.Context(), caller, id)
		if err != nil {
			if !payment.IsNotFound(err) {
				lf.log.Error("link form: reading the token", "error", err)
				lf.fail(w, r, http.StatusInternalServerError, loc, "internal", nil)
				return
			}
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		if t.CreatedOn.Before(opened) || string(t.Type) != params.TokenType {
			lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
			return
		}
		tokenID = t.ID.String()
		out = outcomeSuccess
	}
	// A failed charge does not use the form up: the shopper may still pay
	// with another card.
	if pf.Done == "" && out != outcomeFailure {
		switch {
		case subID != "":
			pf.Done = subID
		case chargeID != "":
			pf.Done = chargeID
		default:
			pf.Done = tokenID
		}
		if err := lf.save(w, r, sess, st); err != nil {
			lf.log.Error("link form: saving the session", "error", err)
		}
	}
	lf.finishWith(w, r, loc, params, out, tokenID, chargeID, subID, false, slip)
}

// slip is the instructions of a charge that awaits a konbini payment or a
// bank transfer, nil for any other (or when they cannot be read: the
// result page then says the payment is pending, as for any other).
func (lf *linkform) slip(ctx context.Context, caller *payment.Caller, ch *payment.Charge, loc message.Locale) *slipView {
	if ch.Status != payment.ChargeAwaiting ||
		ch.PaymentType != payment.PaymentTypeKonbini && ch.PaymentType != payment.PaymentTypeBankTransfer {
		return nil
	}
	it, err := lf.svc.ChargeIssuerToken(ctx, caller, ch.StoreID, ch.ID)
	if err != nil {
		lf.log.Warn("link form: reading the instructions of an awaiting charge", "error", err)
		return nil
	}
	return slipOf(it, loc)
}

// subscriptionOfForm reports whether sub is the subscription pf's widget
// made: on the form's terms, amount and currency, with the form's labels,
// made while the form was open (a minute's leeway for clocks).
func subscriptionOfForm(sub *payment.Subscription, pf *pendingForm) bool {
	p := pf.Params
	opened := time.Unix(pf.Created, 0).Add(-time.Minute)
	return p.Sub != nil && p.Sub.matches(sub, p.Amount, p.Currency) &&
		metaString(sub.Metadata, metaFormID) == p.FormID &&
		metaString(sub.Metadata, metaOrderID) == p.OrderID &&
		!sub.CreatedOn.Before(opened)
}

// subscriptionOutcome is where a subscription sends the shopper: it has
// started once its first payment is paid (or nothing is due yet), is
// pending while its first charge is under way, and failed otherwise.
func subscriptionOutcome(s payment.SubscriptionStatus) outcome {
	switch s {
	case payment.SubscriptionCurrent, payment.SubscriptionCompleted:
		return outcomeSuccess
	case payment.SubscriptionUnverified:
		return outcomePending
	}
	return outcomeFailure
}

// firstCharge is the id of a new subscription's charge, "" when it has
// none (nothing was due when it was made) or it cannot be read.
func (lf *linkform) firstCharge(ctx context.Context, caller *payment.Caller, storeID, subID uuid.UUID) string {
	ch, err := lf.svc.LatestSubscriptionCharge(ctx, caller, storeID, subID)
	if err != nil {
		if !payment.IsNotFound(err) {
			lf.log.Warn("link form: reading a subscription's charge", "error", err)
		}
		return ""
	}
	return ch.ID.String()
}

// chargeOfForm reports whether ch is the charge pf's widget took: a
// payment's (not a subscription's), same amount and currency, the form's
// labels, made while the form was open (a minute's leeway for clocks).
func chargeOfForm(ch *payment.Charge, pf *pendingForm) bool {
	p := pf.Params
	opened := time.Unix(pf.Created, 0).Add(-time.Minute)
	return ch.SubscriptionID == uuid.Nil && ch.RequestedAmount == p.Amount && strings.EqualFold(ch.Currency, p.Currency) &&
		metaString(ch.Metadata, metaFormID) == p.FormID &&
		metaString(ch.Metadata, metaOrderID) == p.OrderID &&
		!ch.CreatedOn.Before(opened)
}

// returned finishes a form whose tab went to a 3-D Secure challenge:
// GET /forms/{id}/return?resource_id={charge id}&resource_type=charge,
// where the issuer's page sends the tab back (the charge's
// three_ds.redirect_endpoint). Any page could link here, so it does no
// more than complete would with the same charge: it reads the charge as
// the form's own app token, takes it only for an open form of this
// session that it was made for (chargeOfForm; the newest such form, when
// the shopper has several tabs open), and finishes that form as complete
// does. The form's parameters are in the session, so a browser without
// it (another device) is only told that the form has expired.
func (lf *linkform) returned(w http.ResponseWriter, r *http.Request) {
	loc := message.Negotiate("", r.Header.Get("Accept-Language"))
	q := r.URL.Query()
	formID := site.PathValue(r, "id")
	id, err := uuid.Parse(q.Get("resource_id"))
	if !linkformIDPattern.MatchString(formID) || err != nil ||
		(q.Get("resource_type") != "" && q.Get("resource_type") != payment.ResourceCharge) {
		lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
		return
	}
	sess, st, err := lf.load(r)
	if err != nil || len(st.Forms) == 0 {
		lf.fail(w, r, http.StatusForbidden, loc, "expired", nil)
		return
	}
	found := false // an open form of this label, whatever the charge
	for i := len(st.Forms) - 1; i >= 0; i-- {
		pf := &st.Forms[i]
		if pf.Params.FormID != formID || pf.Params.Checkout != "payment" ||
			lf.now().Sub(time.Unix(pf.Created, 0)) > linkformMaxAge {
			continue
		}
		found = true
		caller, err := lf.svc.BrowserCaller(r.Context(), st.Tokens[pf.Params.TokenID], lf.origin)
		if err != nil || caller.Token().ID.String() != pf.Params.TokenID {
			continue // revoked since the form was opened
		}
		ch, err := lf.svc.Charge(r.Context(), caller, caller.Token().StoreID, id, linkformChargeWait)
		if err != nil {
			if payment.IsNotFound(err) {
				continue
			}
			lf.log.Error("link form: reading the charge", "error", err)
			lf.fail(w, r, http.StatusInternalServerError, loc, "internal", nil)
			return
		}
		// A subscription form's charge is its subscription's first: the
		// form is done with the subscription, which says how it went.
		done, out, subID := ch.ID.String(), chargeOutcome(ch.Status), ""
		if pf.Params.Sub != nil {
			if ch.SubscriptionID == uuid.Nil {
				continue
			}
			sub, err := lf.svc.Subscription(r.Context(), caller, caller.Token().StoreID, ch.SubscriptionID, linkformChargeWait)
			if err != nil {
				if payment.IsNotFound(err) || payment.ErrorCode(err) == payment.CodeInvalidPermissions {
					continue
				}
				lf.log.Error("link form: reading the subscription", "error", err)
				lf.fail(w, r, http.StatusInternalServerError, loc, "internal", nil)
				return
			}
			if !subscriptionOfForm(sub, pf) {
				continue
			}
			subID = sub.ID.String()
			done, out = subID, subscriptionOutcome(sub.Status)
		} else if !chargeOfForm(ch, pf) {
			continue
		}
		params := pf.Params
		if params.Locale != "" {
			loc = message.Locale(params.Locale)
		}
		if pf.Done != "" && pf.Done != done {
			lf.fail(w, r, http.StatusConflict, loc, "already_done", nil)
			return
		}
		if pf.Done == "" && out != outcomeFailure {
			pf.Done = done
			if err := lf.save(w, r, sess, st); err != nil {
				lf.log.Error("link form: saving the session", "error", err)
			}
		}
		lf.finish(w, r, loc, params, out, ch.TokenID.String(), ch.ID.String(), subID, true)
		return
	}
	if !found {
		lf.fail(w, r, http.StatusForbidden, loc, "expired", nil)
		return
	}
	lf.fail(w, r, http.StatusBadRequest, loc, "no_payment", nil)
}

// outcome is where a finished form sends the shopper.
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomePending
	outcomeFailure
	outcomeCanceled
)

func chargeOutcome(s payment.ChargeStatus) outcome {
	switch s {
	case payment.ChargeSuccessful, payment.ChargeAuthorized:
		return outcomeSuccess
	case payment.ChargePending, payment.ChargeAwaiting:
		return outcomePending
	}
	return outcomeFailure
}

func metaString(m payment.Metadata, key string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// finish redirects to the merchant's URL for the outcome, or shows the
// result. returned says the shopper came back from the issuer's page: a
// redirect to another origin at the end of the redirects its form's
// submission started would be checked against that page's form-action,
// which knows only the gateway, so the result page moves on by itself
// (a refresh) instead.
func (lf *linkform) finish(w http.ResponseWriter, r *http.Request, loc message.Locale, p formParams, out outcome, tokenID, chargeID, subID string, returned bool) {
	lf.finishWith(w, r, loc, p, out, tokenID, chargeID, subID, returned, nil)
}

// finishWith is finish for a charge that may have instructions for its
// shopper (slip, an awaiting konbini payment's or bank transfer's): the
// result page shows them, and stays to be read.
func (lf *linkform) finishWith(w http.ResponseWriter, r *http.Request, loc message.Locale, p formParams, out outcome, tokenID, chargeID, subID string, returned bool, slip *slipView) {
	target := ""
	switch out {
	case outcomeSuccess:
		target = p.Success
	case outcomePending:
		target = p.Pending
		if target == "" {
			target = p.Success // the merchant checks the status anyway
		}
	case outcomeFailure, outcomeCanceled:
		target = p.Failure
	}
	if target != "" {
		target = withIDs(target, tokenID, chargeID)
		if subID != "" {
			target = withSubscriptionID(target, subID)
		}
		if p.AutoRedir && !returned && slip == nil {
			http.Redirect(w, r, target, http.StatusSeeOther)
			return
		}
	}
	key := map[outcome]string{outcomeSuccess: "ok", outcomePending: "pending",
		outcomeFailure: "failed", outcomeCanceled: "canceled"}[out]
	if out == outcomeSuccess && p.Checkout == "token" {
		key = "saved"
	}
	// A subscription that started looks as a payment's success does.
	texts := key
	if out == outcomeSuccess && p.Sub != nil {
		texts = "subscribed"
	}
	data := lfPage{
		Lang: loc, T: message.LinkForm.In(loc), Title: formText(loc, "r_"+texts+"_title"),
		Result: key, ResultText: formText(loc, "r_"+texts+"_text"), ReturnURL: target,
		Params: p, ChargeID: chargeID, TokenID: tokenID, SubscriptionID: subID, Refresh: p.AutoRedir && target != "" && slip == nil,
		Slip: slip,
	}
	if slip != nil {
		data.Title, data.Result, data.ResultText = slip.Title, "slip", slip.Text
	}
	switch {
	case p.Sub != nil:
		data.AmountText = p.Sub.amountText(loc, p.Amount, p.Currency)
	case p.Checkout == "payment" && p.Amount > 0:
		data.AmountText = site.Amount(p.Amount, p.Currency)
	}
	lf.render(w, http.StatusOK, "linkform_result.html", data, nil, "")
}

// withSubscriptionID appends a subscription's id to a merchant URL,
// keeping its own query.
func withSubscriptionID(target, id string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set("univapaySubscriptionId", id)
	u.RawQuery = q.Encode()
	return u.String()
}

// withIDs appends the ids to a merchant URL, keeping its own query.
func withIDs(target, tokenID, chargeID string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	if tokenID != "" {
		q.Set("univapayTokenId", tokenID)
	}
	if chargeID != "" {
		q.Set("univapayChargeId", chargeID)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func formActionOrigins(p formParams) []string {
	var out []string
	for _, raw := range []string{p.Success, p.Failure, p.Pending} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			o := u.Scheme + "://" + u.Host
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

func (lf *linkform) notFound(w http.ResponseWriter, r *http.Request) {
	lf.fail(w, r, http.StatusNotFound, message.Negotiate("", r.Header.Get("Accept-Language")), "not_found", nil)
}

// fail shows an error page.
func (lf *linkform) fail(w http.ResponseWriter, r *http.Request, status int, loc message.Locale, key string, details []string) {
	t := message.LinkForm.In(loc)
	data := lfPage{Lang: loc, T: t, Title: t["e_"+key+"_title"], ErrorKey: key,
		ErrorText: t["e_"+key+"_text"], Problems: details, Status: status}
	lf.render(w, status, "linkform_error.html", data, nil, "")
}

// render writes a page with the link form's security headers.
func (lf *linkform) render(w http.ResponseWriter, status int, name string, data lfPage, formActions []string, styleNonce string) {
	var buf bytes.Buffer
	if err := lf.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		lf.log.Error("link form: template", "template", name, "error", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	style := "'self'"
	if styleNonce != "" {
		style += " 'nonce-" + styleNonce + "'"
	}
	// Chromium applies form-action to the redirects that follow a form
	// submission: the merchant's redirect origins must be listed.
	action := "'self'"
	for _, o := range formActions {
		action += " " + o
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src "+style+
		"; img-src 'self' data:; frame-src 'self'; connect-src 'self'; form-action "+action+
		"; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// lfPage is what the link form's templates get.
type lfPage struct {
	Lang       message.Locale
	T          map[string]string
	Title      string
	StyleNonce string
	Accent     string

	StoreName    string
	StoreInitial string
	TestMode     bool
	FormID       string
	Params       formParams
	Nonce        string
	CSRF         string
	AppID        string
	Metadata     string
	WidgetLocale string
	CaptureAttr  string
	Heading      string
	AmountText   string
	AmountAttr   string
	PayLabel     string
	AuthNote     string
	CancelURL    string
	// NoCard: the frame offers no card form (konbini, bank transfers or
	// wallets only), so the page says nothing of cards.
	NoCard bool

	Result     string
	ResultText string
	ReturnURL  string
	// Refresh: the result page goes on to ReturnURL by itself.
	Refresh        bool
	ChargeID       string
	TokenID        string
	SubscriptionID string
	// SubscriptionAttr is a subscription form's terms as the widget's
	// options (subscriptionPeriod …), JSON.
	SubscriptionAttr string

	// Slip is an awaiting konbini payment's or bank transfer's
	// instructions, on the result page.
	Slip *slipView

	ErrorKey  string
	ErrorText string
	Problems  []string
	Status    int
}

func initial(name string) string {
	for _, r := range strings.TrimSpace(name) {
		return strings.ToUpper(string(r))
	}
	return "K"
}

// formText is a text of the link form in l's language, its blanks filled
// with args.
func formText(l message.Locale, key string, args ...any) string {
	f := message.LinkForm.Get(key, l)
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}
