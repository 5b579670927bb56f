// Package console serves the merchant console (/console/): the merchant's
// own door to the service the API serves. Every page acts through
// payment.ConsoleCaller, so tenancy, modes and limits are the API's own
// rules; what is here is only the browser's side: the session cookie,
// forms and their CSRF tokens, confirmations, and the texts.
//
// The cookie (gorilla/sessions, authenticated and encrypted) holds the
// session's token once signed in, a random token for the forms shown
// before sign-in, the chosen language and one-shot notices. The session
// itself lives in storage (payment.ConsoleSession), so that signing out,
// timeouts and "sign out everywhere" hold on every process.
package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"

	"github.com/kessai/kessai/server/mail"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/templates"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// Service is what the console asks of the payment service: the signed-in
// session every page stands on (Sessions, here), and what the pages of
// each file do (Accounts, Payments, StoreKeys), each declared beside them.
type Service interface {
	Sessions
	Accounts
	Payments
	Slips
	StoreKeys
}

// Sessions is what every signed-in page asks first: the session of the
// cookie's token, its form token, who it is, the caller it acts as, and
// the merchant's stores for the page's menu.
type Sessions interface {
	ConsoleSession(ctx context.Context, token string) (*payment.ConsoleSession, error)
	ConsoleCSRFToken(sessionToken string) string
	ConsoleUser(ctx context.Context, sess *payment.ConsoleSession) (*payment.User, *payment.Merchant, error)
	ConsoleCaller(ctx context.Context, sess *payment.ConsoleSession, storeID uuid.UUID) (*payment.Caller, error)
	Stores(ctx context.Context, c *payment.Caller, p payment.ListParams) (payment.Page[*payment.Store], error)
}

// Config is what the console needs.
type Config struct {
	Service Service
	// PublicURL is the gateway's external base URL (scheme://host[:port]):
	// its scheme says whether the cookie is Secure.
	PublicURL string
	Logger    *slog.Logger
	// SessionKey authenticates and encrypts the console's cookie (at least
	// 32 bytes); without one, a random key lasts as long as the process.
	SessionKey []byte
	// ClientIP is a request's client address, as the API's rate limits
	// see it (the trusted proxies' rule); nil takes the TCP peer.
	ClientIP func(*http.Request) string
	// Mailbox is the local mailbox the console shows when mail has no
	// SMTP server to go to; nil when it has.
	Mailbox Mailbox
}

// Paths are the path prefixes New serves; the gateway routes them here.
var Paths = []string{"/console", consoleRoot}

// New returns the console's handler.
func New(cfg Config) (http.Handler, error) {
	c, err := newConsole(cfg)
	if err != nil {
		return nil, err
	}
	return c.handler, nil
}

// consoleRoot is the console's path prefix.
const consoleRoot = "/console/"

// consoleCookie is the console's cookie; it is sent to /console/ only.
const consoleCookie = "kessai_console"

// Cookie values.
const (
	cookieSession = "t" // the console session's token
	cookieForm    = "f" // the CSRF token of the forms shown before sign-in
	cookieLocale  = "l" // "ja" or "en", when chosen on a page
	cookieNotice  = "n" // a notice for the next page (a text key)
)

// maxConsoleForm bounds a console form's body: the largest, a store's
// settings, is well under a kilobyte.
const maxConsoleForm = 64 << 10

// Mailbox is where mail goes when no SMTP server is configured: the
// console shows it at /console/mailbox, to the machine's own user only
// (loopback), so that a reset can be completed on a laptop.
type Mailbox interface {
	Messages() []mail.Message
}

// console serves /console/.
type console struct {
	svc      Service
	log      *slog.Logger
	cookies  *sessions.CookieStore
	tmpl     *template.Template
	secure   bool
	clientIP func(*http.Request) string
	mailbox  Mailbox
	// crossOrigin refuses unsafe requests that browsers mark as sent
	// from another site, before any token is looked at.
	crossOrigin *http.CrossOriginProtection
	// routes are the patterns handle registered.
	routes []string
	// handler routes a request to its page.
	handler http.Handler
}

func newConsole(cfg Config) (*console, error) {
	if cfg.Service == nil {
		return nil, errors.New("console: the console needs the payment service")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	key, err := site.SessionKey(cfg.SessionKey, log)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("").Funcs(consoleFuncs()).ParseFS(templates.FS, "console*.html")
	if err != nil {
		return nil, err
	}
	pub, err := url.Parse(strings.TrimRight(cfg.PublicURL, "/"))
	if err != nil || pub.Host == "" {
		return nil, errors.New("console: bad public URL for the console")
	}
	enc := sha256.Sum256(append([]byte("kessai console cookie encryption\x00"), key...))
	auth := sha256.Sum256(append([]byte("kessai console cookie authentication\x00"), key...))
	store := sessions.NewCookieStore(auth[:], enc[:])
	store.Options = &sessions.Options{
		Path:     consoleRoot,
		HttpOnly: true,
		Secure:   pub.Scheme == "https",
		SameSite: http.SameSiteLaxMode,
		// The cookie outlives no session: the absolute timeout ends both.
		MaxAge: int(payment.ConsoleAbsoluteTimeout / time.Second),
	}
	clientIP := cfg.ClientIP
	if clientIP == nil {
		clientIP = peerIP
	}
	c := &console{
		svc: cfg.Service, log: log, cookies: store, tmpl: tmpl, secure: pub.Scheme == "https",
		clientIP: clientIP, mailbox: cfg.Mailbox, crossOrigin: http.NewCrossOriginProtection(),
	}
	r := site.NewRouter()
	c.addRoutes(r)
	c.handler = r
	return c, nil
}

// peerIP is the TCP peer's address, for a console with no proxy in front.
func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// japan is Japan's time zone (no daylight saving).
var japan = time.FixedZone("JST", 9*60*60)

// consoleFuncs are the console templates' functions besides static.
func consoleFuncs() template.FuncMap {
	f := site.Funcs()
	f["amount"] = site.Amount
	f["when"] = func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }
	// A payment deadline also in Japan's time, where konbini customers
	// and banks keep it.
	f["jst"] = func(t time.Time) string { return t.In(japan).Format("2006-01-02 15:04") + " JST" }
	// An id's last characters: its first ones are a time (UUIDv7) and
	// repeat for everything made in the same minute.
	f["short"] = func(id uuid.UUID) string { s := id.String(); return s[len(s)-8:] }
	return f
}

// consoleRequest is one request to the console, as its handlers see it.
type consoleRequest struct {
	w      http.ResponseWriter
	r      *http.Request
	loc    message.Locale
	cookie *sessions.Session
	// token, sess, user and merchant are the signed-in session's (nil
	// before sign-in).
	token    string
	sess     *payment.ConsoleSession
	user     *payment.User
	merchant *payment.Merchant
	stores   []*payment.Store
}

// consoleView is what every console page shows around its own content.
type consoleView struct {
	Lang       message.Locale
	T          map[string]string
	Title      string
	CSRF       string
	Notice     string
	Errors     []string
	SignedIn   bool
	Email      string
	Merchant   string
	Mode       payment.Mode
	Live       bool
	Stores     []*payment.Store
	Nav        string
	OtherLang  message.Locale
	LangSwitch string
	Path       string
	// Page is the page's own data.
	Page any
}

// consoleHandler is a console page's handler; an error it returns is shown
// on the error page (a *payment.Error in words, anything else as an
// internal error with the request's id).
type consoleHandler func(cr *consoleRequest) error

// load reads the cookie and picks the language: ?lang= (remembered),
// then the remembered one, then Accept-Language.
func (c *console) load(w http.ResponseWriter, r *http.Request) *consoleRequest {
	sess, err := c.cookies.Get(r, consoleCookie)
	if err != nil || sess == nil {
		// Not ours (another key, tampered, expired): start afresh.
		sess = sessions.NewSession(c.cookies, consoleCookie)
		opts := *c.cookies.Options
		sess.Options = &opts
	}
	cr := &consoleRequest{w: w, r: r, cookie: sess}
	explicit, _ := sess.Values[cookieLocale].(string)
	if q := r.URL.Query().Get("lang"); q != "" {
		if l, ok := message.Parse(q); ok {
			explicit = string(l)
			sess.Values[cookieLocale] = explicit
		}
	}
	cr.loc = message.Negotiate(explicit, r.Header.Get("Accept-Language"))
	return cr
}

func (c *console) save(cr *consoleRequest) error {
	return c.cookies.Save(cr.r, cr.w, cr.cookie)
}

// public serves a page that needs no sign-in (sign-in, reset). Its
// forms carry the cookie's form token.
func (c *console) public(h consoleHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.headers(w)
		cr := c.load(w, r)
		if r.Method == http.MethodPost && !c.formAllowed(cr, c.formToken(cr)) {
			return
		}
		c.finish(cr, h(cr))
	}
}

// signedIn serves a page that needs a session: without one, GETs go to
// the sign-in page (and come back after it), anything else is refused.
func (c *console) signedIn(h consoleHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.headers(w)
		cr := c.load(w, r)
		token, _ := cr.cookie.Values[cookieSession].(string)
		sess, err := c.svc.ConsoleSession(r.Context(), token)
		if err != nil {
			if payment.ErrorCode(err) != payment.CodeExpiredLoginToken {
				c.finish(cr, err)
				return
			}
			if token != "" {
				delete(cr.cookie.Values, cookieSession)
				cr.cookie.Values[cookieNotice] = "n_session_ended"
			}
			c.toSignIn(cr)
			return
		}
		cr.token, cr.sess = token, sess
		if r.Method == http.MethodPost && !c.formAllowed(cr, c.svc.ConsoleCSRFToken(token)) {
			return
		}
		if cr.user, cr.merchant, err = c.svc.ConsoleUser(r.Context(), sess); err != nil {
			c.finish(cr, err)
			return
		}
		caller, err := c.svc.ConsoleCaller(r.Context(), sess, uuid.Nil)
		if err != nil {
			c.finish(cr, err)
			return
		}
		stores, err := c.svc.Stores(r.Context(), caller, payment.ListParams{Limit: 100, Direction: payment.Asc})
		if err != nil {
			c.finish(cr, err)
			return
		}
		cr.stores = stores.Items
		c.finish(cr, h(cr))
	}
}

// toSignIn sends a browser without a session to the sign-in page; a GET
// comes back to where it was going afterwards.
func (c *console) toSignIn(cr *consoleRequest) {
	target := consoleRoot + "signin"
	if cr.r.Method == http.MethodGet {
		target += "?next=" + url.QueryEscape(cr.r.URL.RequestURI())
	}
	c.redirect(cr, target)
}

// formToken is the token the forms shown before sign-in carry: random,
// kept in the cookie, made when a page first needs it.
func (c *console) formToken(cr *consoleRequest) string {
	t, _ := cr.cookie.Values[cookieForm].(string)
	if t == "" {
		t = rand.Text()
		cr.cookie.Values[cookieForm] = t
	}
	return t
}

// formAllowed checks a POST: not from another site, a body of a sane
// size, and the form's CSRF token. It answers the request itself when
// it refuses.
func (c *console) formAllowed(cr *consoleRequest, want string) bool {
	if err := c.crossOrigin.Check(cr.r); err != nil {
		c.fail(cr, http.StatusForbidden, "e_csrf")
		return false
	}
	cr.r.Body = http.MaxBytesReader(cr.w, cr.r.Body, maxConsoleForm)
	if err := cr.r.ParseForm(); err != nil {
		c.fail(cr, http.StatusRequestEntityTooLarge, "e_form")
		return false
	}
	got := cr.r.PostForm.Get("csrf")
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		c.fail(cr, http.StatusForbidden, "e_csrf")
		return false
	}
	return true
}

// headers are every console answer's: no script but the gateway's own
// files, no framing, no caching, and no Referer (reset links carry their
// token in the path).
func (c *console) headers(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
}

// finish shows a handler's error, if any.
func (c *console) finish(cr *consoleRequest, err error) {
	if err == nil {
		return
	}
	var pe *payment.Error
	if errors.As(err, &pe) {
		status := http.StatusBadRequest
		switch pe.Code {
		case payment.CodeNotFound:
			status = http.StatusNotFound
		case payment.CodeInvalidPermissions:
			status = http.StatusForbidden
		case payment.CodeTooManyRequests:
			status = http.StatusTooManyRequests
		case payment.CodeServiceUnavailable:
			status = http.StatusServiceUnavailable
		}
		c.render(cr, status, "console_error", "", consoleErrorPage{Messages: c.errorTexts(cr.loc, err)})
		return
	}
	c.log.Error("console", "path", cr.r.URL.Path, "request_id", cr.w.Header().Get("X-Request-Id"), "error", err)
	c.render(cr, http.StatusInternalServerError, "console_error", "",
		consoleErrorPage{Messages: []string{message.Console.Get("e_internal", cr.loc)}, RequestID: cr.w.Header().Get("X-Request-Id")})
}

// consoleErrorPage is the error page's content.
type consoleErrorPage struct {
	Messages  []string
	RequestID string
}

// fail shows the error page with one text of the catalogue.
func (c *console) fail(cr *consoleRequest, status int, key string) {
	c.render(cr, status, "console_error", "", consoleErrorPage{Messages: []string{message.Console.Get(key, cr.loc)}})
}

// errorTexts says what a service error means, in the page's language:
// the code's own text where the catalogue has one, and each field at
// fault.
func (c *console) errorTexts(loc message.Locale, err error) []string {
	t := message.Console.In(loc)
	var pe *payment.Error
	if !errors.As(err, &pe) {
		return []string{t["e_internal"]}
	}
	head, ok := t["code_"+string(pe.Code)]
	if !ok {
		head = t["e_generic"] + " (" + string(pe.Code) + ")"
	}
	out := []string{head}
	for _, f := range pe.Fields {
		if f.Reason == string(pe.Code) {
			continue
		}
		reason, ok := t["reason_"+f.Reason]
		if !ok {
			reason = f.Reason
		}
		field, ok := t["field_"+f.Field]
		if !ok {
			field = f.Field
		}
		out = append(out, field+": "+reason)
	}
	return out
}

// view is the frame of a page for cr.
func (c *console) view(cr *consoleRequest, title, nav string, page any) consoleView {
	t := message.Console.In(cr.loc)
	v := consoleView{Lang: cr.loc, T: t, Title: t[title], Nav: nav, Page: page, Path: cr.r.URL.Path}
	if v.Title == "" {
		v.Title = t["console"]
	}
	v.OtherLang = message.English
	if cr.loc == message.English {
		v.OtherLang = message.Japanese
	}
	q := cr.r.URL.Query()
	q.Set("lang", string(v.OtherLang))
	v.LangSwitch = cr.r.URL.Path + "?" + q.Encode()
	if cr.r.Method != http.MethodGet {
		v.LangSwitch = consoleRoot + "?lang=" + string(v.OtherLang)
	}
	if key, ok := cr.cookie.Values[cookieNotice].(string); ok {
		v.Notice = t[key]
		delete(cr.cookie.Values, cookieNotice)
	}
	if cr.sess != nil {
		v.SignedIn, v.CSRF = true, c.svc.ConsoleCSRFToken(cr.token)
		v.Mode, v.Live = cr.sess.Mode, cr.sess.Mode == payment.ModeLive
		v.Stores = cr.stores
		if cr.user != nil {
			v.Email = cr.user.Email
		}
		if cr.merchant != nil {
			v.Merchant = cr.merchant.Name
		}
	} else {
		v.CSRF = c.formToken(cr)
	}
	return v
}

// render writes a page: the cookie first (it may have changed), then the
// template.
func (c *console) render(cr *consoleRequest, status int, name, nav string, page any) {
	c.renderView(cr, status, name, c.view(cr, "title_"+strings.TrimPrefix(name, "console_"), nav, page))
}

// renderView writes a page whose frame the handler adjusted.
func (c *console) renderView(cr *consoleRequest, status int, name string, v consoleView) {
	var buf bytes.Buffer
	if err := c.tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		c.log.Error("console: template", "template", name, "error", err)
		http.Error(cr.w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	if err := c.save(cr); err != nil {
		c.log.Error("console: cookie", "error", err)
	}
	cr.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	cr.w.WriteHeader(status)
	cr.w.Write(buf.Bytes())
}

// redirect saves the cookie and answers 303 See Other to a path of the
// console (after a POST, the browser GETs the result).
func (c *console) redirect(cr *consoleRequest, path string) {
	if err := c.save(cr); err != nil {
		c.log.Error("console: cookie", "error", err)
	}
	http.Redirect(cr.w, cr.r, path, http.StatusSeeOther)
}

// notice redirects with a notice (a text key) for the next page.
func (c *console) notice(cr *consoleRequest, path, key string) error {
	cr.cookie.Values[cookieNotice] = key
	c.redirect(cr, path)
	return nil
}

// localPath is next if it is a path of the console, else the dashboard:
// the sign-in page never sends a browser elsewhere.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.Contains(next, "\\") || strings.HasPrefix(next, "//") {
		return consoleRoot
	}
	clean := path.Clean(u.Path)
	if clean+"/" == consoleRoot || !strings.HasPrefix(clean, consoleRoot) {
		return consoleRoot
	}
	u.Path, u.RawPath = clean, ""
	return u.RequestURI()
}

// caller is the payment caller for a console request: the merchant in
// the session's mode, for all its stores or, given a store's id from the
// path, for that one (another merchant's: NOT_FOUND).
func (c *console) caller(cr *consoleRequest, storeID uuid.UUID) (*payment.Caller, error) {
	return c.svc.ConsoleCaller(cr.r.Context(), cr.sess, storeID)
}

// pathID is a UUID from the path; anything else is NOT_FOUND, as an id
// that exists nowhere would be.
func pathID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(site.PathValue(r, name))
	if err != nil {
		return uuid.Nil, payment.NotFound(name)
	}
	return id, nil
}

// confirmForm is a confirmation page's form: the same POST again, with
// confirm=yes and the values the first one carried, or the way back.
// Every action that moves money or ends a credential goes through one,
// with no script (templates/console.html, console-confirm-form).
type confirmForm struct {
	Action, Back string
	// Button is the text key of the confirm button; Danger paints it red.
	Button string
	Danger bool
	Fields []confirmField
}

// confirmField is one value a confirmation posts again.
type confirmField struct{ Name, Value string }

// confirmed reports whether a POST comes from a confirmation page.
func confirmed(cr *consoleRequest) bool { return cr.r.PostForm.Get("confirm") == "yes" }

// carried are the named values of a form that were sent, for its
// confirmation to send again.
func carried(form url.Values, names ...string) []confirmField {
	var out []confirmField
	for _, n := range names {
		if form.Has(n) {
			out = append(out, confirmField{n, form.Get(n)})
		}
	}
	return out
}

// storeCaller reads {store} from the path and returns the store caller.
func (c *console) storeCaller(cr *consoleRequest) (uuid.UUID, *payment.Caller, error) {
	storeID, err := pathID(cr.r, "store")
	if err != nil {
		return uuid.Nil, nil, err
	}
	caller, err := c.caller(cr, storeID)
	return storeID, caller, err
}

// loopback reports whether a request came from this machine, by the TCP
// peer alone: the local mailbox is for the person at the machine, never
// for anyone a proxy forwards.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
